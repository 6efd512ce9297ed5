//! How a broadcast run takes its jobs: the dispatcher or the test feeder (`RunFlags`), and over
//! how many chips and hosts (`ChipFlags`).

use crate::app::broadcast;
use crate::num::ranged;

/// How `komorebi broadcast`, the example and `bench broadcast` run their jobs: through the
/// dispatcher, or the test feeder. (`inspect` always runs the feeder and takes none of these.)
#[derive(clap::Args, Debug, Clone)]
pub struct RunFlags {
    /// Dispatcher worker threads (1..=64; not with --feeder).
    #[arg(long, value_parser = ranged::<usize>(1, 64), default_value_t = 2, conflicts_with = "feeder")]
    pub workers: usize,
    /// Dispatcher scheduling slots per group (1..=2; not with --feeder).
    #[arg(long, value_parser = ranged::<usize>(1, 2), default_value_t = 2, conflicts_with = "feeder")]
    pub depth: usize,
    /// Run the jobs through the test feeder (one at a time, no dispatcher) instead.
    #[arg(long)]
    pub feeder: bool,
}

/// Over how many chips and hosts `komorebi broadcast` and the example spread their jobs (a
/// bench row measures one chip, so `bench broadcast` takes none of these).
#[derive(clap::Args, Debug, Clone)]
pub struct ChipFlags {
    /// Chips to spread the jobs over (1..=32), each running the whole rectangle, one session a
    /// chip under one dispatcher: independent simulated chips on `sim` and `pcie-sim` (each
    /// with its own seed stream), the first chips of a ttsim multi-chip build (bh_x2, bh_x4),
    /// or the cards tt-kmd presents from --device's on. Job J's data lives on chip J mod N;
    /// the dispatcher's assigner runs it there unless another chip would idle.
    #[arg(long, value_parser = ranged::<u32>(1, broadcast::MAX_CHIPS as u64), default_value_t = 1)]
    pub chips: u32,
    /// Run as one rank of an MPI job, one rank a host (`mpirun -n R komorebi broadcast --mpi
    /// ...`; a build with the `mpi` feature): each rank runs the jobs of its own --chips chips,
    /// rank 0 assigns them and prints the report of the whole run, the same as one process
    /// with R x --chips chips.
    #[arg(long)]
    pub mpi: bool,
    /// With --mpi: seconds rank 0 waits, from the start, for another rank's results (1..=86400);
    /// a rank that has not answered by then has its jobs reported abandoned under its name.
    #[arg(long, value_name = "SECONDS", value_parser = ranged::<u64>(1, 86_400), default_value_t = DEFAULT_RANK_LIMIT, requires = "mpi")]
    pub rank_limit: u64,
}

/// `--rank-limit`'s default, seconds.
pub const DEFAULT_RANK_LIMIT: u64 = 600;

impl RunFlags {
    /// The dispatcher configuration these flags describe.
    pub fn dispatch(&self) -> crate::dispatch::DispatchConfig {
        crate::dispatch::DispatchConfig {
            workers: self.workers,
            depth: self.depth,
            ..crate::dispatch::DispatchConfig::default()
        }
    }
}
