//! The three kernels of a tile and the HAL handles each one runs with.
//!
//! A persistent kernel on a tile is three programs: two data-movement kernels, each owning one
//! NoC, and a compute kernel that owns no NoC. Every layer above the HAL (protocols, the
//! persistent kernel, backends, the host) names a kernel by [`Role`], and hands a kernel its
//! handles as a [`DataMovement`] or a [`Compute`].

use crate::types::NocId;

/// One of a tile's three kernels.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The first data-movement kernel, on NoC0 (Blackhole: RISCV_0, BRISC). Reads; the
    /// persistent kernel also has it write the tile's reports.
    Reader = 0,
    /// The second data-movement kernel, on NoC1 (Blackhole: RISCV_1, NCRISC). Writes.
    Writer = 1,
    /// The compute kernel (Blackhole: the TRISCs); it has no NoC of its own.
    Compute = 2,
}

impl Role {
    /// All three, in index order.
    pub const ALL: [Role; 3] = [Role::Reader, Role::Writer, Role::Compute];

    /// 0, 1 or 2: the order of per-kernel tables.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// `reader`, `writer` or `compute`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Reader => "reader",
            Self::Writer => "writer",
            Self::Compute => "compute",
        }
    }

    /// The NoC a data-movement kernel issues on; `None` for compute.
    pub const fn noc(self) -> Option<NocId> {
        match self {
            Self::Reader => Some(NocId::Noc0),
            Self::Writer => Some(NocId::Noc1),
            Self::Compute => None,
        }
    }

    /// The data-movement kernel that owns `noc`.
    pub const fn mover(noc: NocId) -> Self {
        match noc {
            NocId::Noc0 => Self::Reader,
            NocId::Noc1 => Self::Writer,
        }
    }
}

impl core::fmt::Display for Role {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a data-movement kernel runs with: its NoC, the tile's control block, and how its waits
/// pass time.
#[derive(Debug)]
pub struct DataMovement<N, K, P> {
    /// The kernel's NoC (NoC0 for the reader, NoC1 for the writer).
    pub noc: N,
    /// The tile's control block.
    pub ctrl: K,
    /// How waits pass time.
    pub pause: P,
}

/// What a compute kernel runs with: the tile's control block and how its waits pass time.
#[derive(Debug)]
pub struct Compute<K, P> {
    /// The tile's control block (stop flag, wait limit, clock).
    pub ctrl: K,
    /// How waits pass time.
    pub pause: P,
}
