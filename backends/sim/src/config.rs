//! What a simulated chip is made of, and how the simulation behaves.
//!
//! Leaf module: imports only the leaves `timing`, `boot`, `riscv` and `route`.

use blackhole_pac::harvest::{DramBanks, HarvestMask};
use blackhole_pac::translate::Translation;
use komorebi_hal::ControlLayout;
use komorebi_kernel::abi::CONTROL_LAYOUT;

use crate::boot::Boot;
use crate::error::SimError;
use crate::riscv::Cost;
use crate::route::Grid;
use crate::timing::MAX_DELAY;
use crate::timing::Timing;

/// The configuration of one simulated chip.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Harvested Tensix columns (die order). Default: two columns (NoC0 x = 7 and 10), 120
    /// Tensix, as p100 and p150 parts present with current firmware.
    pub harvest: HarvestMask,
    /// Model a Wormhole B0 with these harvested Tensix rows instead of a Blackhole
    /// ([`ChipModel`]): its grid, DRAM banks, L1 and circular buffers, for the native kernels,
    /// directly or as a card (its own TLB windows and an ARC in BAR0, `arc_wormhole`). The
    /// firmware cores are Blackhole's only and refuse it; `harvest`, `fused_dram` and
    /// `translation` describe a Blackhole and are not used. Give it
    /// [`Timing::wormhole`]'s timing. Default: none (a Blackhole).
    pub wormhole: Option<wormhole_pac::harvest::HarvestMask>,
    /// The fused DRAM bank (0..=7), or none (the default: all 8 banks work). ARC telemetry
    /// reports it (`ENABLED_GDDR`), translated DRAM coordinates follow the ARC firmware's table
    /// for it, and any access to one of its ports is refused as a fault, never served: its
    /// clock is off on a card. A bank above 7 counts as none, as
    /// `blackhole_pac::translate::Translation::with_dram` takes it.
    pub fused_dram: Option<u8>,
    /// Seed of every random choice (adversarial delays and schedule tie-breaks).
    pub seed: u64,
    /// Reorder, within `jitter_cycles`, everything the hardware does not order, and break
    /// scheduling ties at random.
    pub adversarial: bool,
    /// Largest extra delay the adversary adds to one delivery.
    pub jitter_cycles: u64,
    /// The timing model.
    pub timing: Timing,
    /// The control block's place and words (default: the runtime ABI's).
    pub control: ControlLayout,
    /// Record a Chrome/Perfetto trace of every NoC transfer and kernel wait, held in memory
    /// (`Sim::trace_json`) until `Sim::trace_to` streams it to a writer.
    pub trace: bool,
    /// NoC coordinate translation for the host's TLB windows: the PCIe NIU's `NIU_CFG_0` bit 14
    /// (BAR0 `PCIE_NIU_CFG_0_BAR0`), on in production. When on, a window's coordinates are
    /// translated coordinates (`blackhole_pac::translate`), the same on both NoCs; when off,
    /// raw coordinates of the window's NoC. Default: on. The native kernels' NoC (the HAL)
    /// always takes raw coordinates; firmware cores read the setting in their NIUs'
    /// `NIU_CFG_0` bit 14 and then write translated coordinates, as on a card.
    pub translation: bool,
    /// How the cores stand at cycle 0 (default [`Boot::Running`]: not held in reset).
    pub boot: Boot,
    /// Hold host writes through TLB windows that are not `Strict` and deliver them per
    /// destination tile in a seeded random order, as dynamic-VC host writes can land on
    /// Blackhole (tt-umd #2735). They all land when the host reads through a window targeting
    /// the same tile, before a Strict write to it, or (spread over the next cycles) when the
    /// simulation runs. Default: off (every host write lands at once, in order).
    pub reorder_posted_writes: bool,
    /// Hold every L1 store of a firmware core in its store queue as long as the hardware may:
    /// until a load that overlaps it, a fifth store, or 256 cycles, and a core that stops at an
    /// `ecall`, `ebreak` or fault still drains it (one a stall fault stops does not) (ISA `BabyRISCV/MemoryOrdering.md`: four entries, drained independently of
    /// retirement, only an overlapping load ordered after a store). An NIU command issued meanwhile reads the
    /// old bytes when its packet leaves, as a card's would. Default: off (stores land at once).
    pub late_core_stores: bool,
    /// When a NoC write or multicast reads its source bytes, and whether the simulator checks
    /// that the source stayed unchanged until the packet left (default
    /// [`SourceRead::Departure`]: read when the packet leaves, unchecked).
    pub source_read: SourceRead,
    /// The firmware cores' cost rule (`Sim::spawn_firmware`): cycles per instruction and per
    /// access, from the Blackhole ISA documentation (`riscv::Cost`).
    pub core_cost: Cost,
    /// Profile every firmware core (`Sim::core_profiles`): cycles by instruction and call
    /// stack. Default: off, and then the cores run the loop without a profiler.
    pub profile_cores: bool,
    /// Make chosen firmware code faster (`riscv::SpeedUp`: its address ranges and factor), a
    /// what-if run: the cycles the cost rule charges that code's instructions are divided by
    /// the factor. Default: none, and then the cores run the loop without it.
    pub speed_up: Option<crate::riscv::SpeedUp>,
    /// Keep what the native kernels log at this level or more severe (`Sim::kernel_logs`).
    /// Default: `Off`, and then no record is kept and polling a kernel sets nothing up for one.
    /// Records below the level are dropped as they are logged, as a firmware image built at
    /// that level never writes them: a long run keeps only the lines it reports.
    pub kernel_logs: log::LevelFilter,
    /// Cycles from the ARC message `AICLK_GO_BUSY` until ARC telemetry reports the busy clock
    /// (`arc`). Default 0: at once, so a host's open lets no device time pass and a run's
    /// figures do not depend on it. A card's ramp is not modelled; a test sets one to make the
    /// host wait for the clock.
    pub aiclk_ramp_cycles: u64,
}

/// When the simulator reads a NoC write's source bytes. The hardware may read them at any time
/// between the issue and the packet's departure (when `writes_sent` counts it); a kernel may
/// change a source only once `writes_sent` says its write left. The two checked adversaries
/// read at either end of that interval and report a source changed in it as
/// `Violation::SourceChangedInFlight`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum SourceRead {
    /// When the packet leaves its NIU, unchecked (the default).
    #[default]
    Departure,
    /// At issue, as early as the hardware could; a source changed before the packet left is a
    /// violation (and the packet carries the bytes of the issue).
    IssueChecked,
    /// When the packet leaves, as late as the hardware could; a source changed since the issue
    /// is a violation (and the packet carries the changed bytes).
    DepartureChecked,
}

/// What the simulated chip is made of, from the chip it models ([`SimConfig::chip_model`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChipModel {
    /// The chip's name.
    pub name: &'static str,
    /// Its NoC grid.
    pub grid: Grid,
    /// The enabled Tensix tiles, NoC0, column by column.
    pub tensix: Vec<(u8, u8)>,
    /// The NoC0 ports of each DRAM bank.
    pub dram_ports: Vec<[(u8, u8); 3]>,
    /// Bytes of a tile's L1.
    pub l1_size: u32,
    /// Bytes of a DRAM bank.
    pub dram_bank_size: u64,
    /// Alignment of a DRAM read's source.
    pub dram_read_align: u32,
    /// Circular buffers a core has.
    pub circular_buffers: usize,
}

impl ChipModel {
    /// Whether this is a Blackhole (the chip the firmware cores, PCIe and ARC models model).
    pub fn is_blackhole(&self) -> bool {
        self.grid == Grid::BLACKHOLE
    }
}

impl SimConfig {
    /// Refuses a configuration the simulator cannot run ([`crate::Sim::try_new`]): its
    /// timing (no clock, flits or packets of no bytes, a DRAM bank of no bandwidth, a latency
    /// or cost above [`MAX_DELAY`]), an adversary's jitter or ARC's clock ramp above
    /// [`crate::timing::MAX_DELAY`], an instruction of no cycles (a loop of them never lets
    /// time pass), and a control block that does not lie in L1 or whose stop flag or wait
    /// limit words do not lie in it.
    pub fn check(&self) -> Result<(), SimError> {
        let bad = |field, why: String| Err(SimError::Config { field, why });
        check_timing(&self.timing)?;
        at_most_max_delay(&[
            ("jitter_cycles", self.jitter_cycles),
            ("aiclk_ramp_cycles", self.aiclk_ramp_cycles),
        ])?;
        if self.core_cost.base == 0 {
            return bad(
                "core_cost.base",
                "is 0: a loop of such instructions never lets time pass (allowed: at least 1)"
                    .into(),
            );
        }
        let l1 = self.chip_model().l1_size;
        let c = self.control;
        let in_l1 = c.base.checked_add(c.len).is_some_and(|end| end <= l1);
        if c.base % 16 != 0 || !in_l1 {
            return bad(
                "control",
                format!(
                    "{:#x}+{:#x} (allowed: a block at a multiple of 16, wholly in the {l1:#x} \
                     bytes of L1)",
                    c.base, c.len
                ),
            );
        }
        for (field, at, words) in [
            ("control.stop_offset", c.stop_offset, 1),
            ("control.wait_limit_offset", c.wait_limit_offset, 2),
        ] {
            let inside = at.checked_add(4 * words).is_some_and(|end| end <= c.len);
            if at % 4 != 0 || !inside {
                return bad(
                    field,
                    format!(
                        "{at:#x} (allowed: a multiple of 4 with its {words} word(s) in the block's \
                         {:#x} bytes)",
                        c.len
                    ),
                );
            }
        }
        Ok(())
    }

    /// The chip this configuration models: a Blackhole with `harvest`, or a Wormhole B0 with
    /// `wormhole`'s rows harvested.
    pub fn chip_model(&self) -> ChipModel {
        match self.wormhole {
            None => {
                use blackhole_pac::grid;
                let columns = self.harvest.columns();
                ChipModel {
                    name: "Blackhole",
                    grid: Grid::BLACKHOLE,
                    tensix: columns
                        .noc0_x()
                        .iter()
                        .flat_map(|&x| columns.noc0_y().iter().map(move |&y| (x, y)))
                        .collect(),
                    dram_ports: grid::DRAM_PORTS.to_vec(),
                    l1_size: blackhole_pac::tensix::L1_SIZE,
                    dram_bank_size: grid::DRAM_BANK_SIZE,
                    dram_read_align: blackhole_pac::addr::DRAM_READ_ALIGN,
                    circular_buffers: blackhole_pac::stream::CIRCULAR_BUFFERS,
                }
            }
            Some(rows) => {
                use wormhole_pac::grid;
                let rows = rows.rows();
                ChipModel {
                    name: "Wormhole B0",
                    grid: Grid::WORMHOLE,
                    tensix: grid::TENSIX_X
                        .iter()
                        .flat_map(|&x| rows.noc0_y().iter().map(move |&y| (x, y)))
                        .collect(),
                    dram_ports: grid::DRAM_PORTS.to_vec(),
                    l1_size: wormhole_pac::tensix::L1_SIZE,
                    dram_bank_size: grid::DRAM_BANK_SIZE,
                    dram_read_align: wormhole_pac::addr::DRAM_READ_ALIGNMENT,
                    circular_buffers: wormhole_pac::stream::CIRCULAR_BUFFERS,
                }
            }
        }
    }

    /// The DRAM banks that work ([`SimConfig::fused_dram`]; a bank above 7 counts as none; a
    /// Wormhole's all work: `fused_dram` describes a Blackhole).
    pub fn dram_banks(&self) -> DramBanks {
        match self.wormhole {
            Some(_) => DramBanks::ALL,
            None => DramBanks::with_fused(self.fused_dram).unwrap_or(DramBanks::ALL),
        }
    }

    /// The harvest mask as the control block's harvest word carries it: the Blackhole's
    /// columns, or the Wormhole's rows.
    pub fn harvest_word(&self) -> u32 {
        match self.wormhole {
            None => self.harvest.bits() as u32,
            Some(rows) => rows.bits() as u32,
        }
    }

    /// Whether the NIUs translate coordinates ([`SimConfig::translation`], a Blackhole's only).
    pub fn translated(&self) -> bool {
        self.translation && self.wormhole.is_none()
    }

    /// The NoC translation the chip's tables hold for its harvest mask and fused DRAM bank,
    /// when [`SimConfig::translated`].
    pub fn noc_translation(&self) -> Option<Translation> {
        self.translated()
            .then(|| Translation::with_dram(self.harvest, self.dram_banks().fused()))
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            harvest: HarvestMask::P100_P150,
            wormhole: None,
            fused_dram: None,
            seed: 0,
            adversarial: false,
            jitter_cycles: 256,
            timing: Timing::default(),
            control: CONTROL_LAYOUT,
            trace: false,
            translation: true,
            boot: Boot::Running,
            reorder_posted_writes: false,
            late_core_stores: false,
            source_read: SourceRead::Departure,
            core_cost: Cost::default(),
            profile_cores: false,
            speed_up: None,
            kernel_logs: log::LevelFilter::Off,
            aiclk_ramp_cycles: 0,
        }
    }
}

/// Refuses timing the simulator cannot run ([`SimConfig::check`]): no clock, flits or packets
/// of no bytes, a DRAM bank of no (or no finite) bandwidth, a latency or cost above
/// [`MAX_DELAY`], a reservation figure that is negative or not finite. A flit of 0 bytes divided by zero, a
/// packet of 0 bytes split a transfer for good, and latencies near 2^64 wrapped round.
fn check_timing(t: &Timing) -> Result<(), SimError> {
    let bad = |field, why: String| Err(SimError::Config { field, why });
    for (field, v) in [
        ("timing.aiclk_mhz", t.aiclk_mhz),
        ("timing.flit_bytes", t.flit_bytes),
        ("timing.dram_row_bytes", t.dram_row_bytes),
    ] {
        if v == 0 {
            return bad(field, "is 0 (allowed: at least 1)".into());
        }
    }
    if t.max_packet_bytes < t.flit_bytes {
        return bad(
            "timing.max_packet_bytes",
            format!(
                "{} is below a flit's {} bytes (allowed: at least one flit)",
                t.max_packet_bytes, t.flit_bytes
            ),
        );
    }
    // Cycles of a reservation: finite, 0 or more, at most MAX_DELAY; a bank's rate: finite and
    // above 0 (a rate of 0 served in "infinite" cycles).
    for (field, v, above_zero, allowed) in [
        (
            "timing.reserve_base",
            t.reserve_base,
            false,
            "0 to 2^40 cycles",
        ),
        (
            "timing.reserve_per_hop",
            t.reserve_per_hop,
            false,
            "0 to 2^40 cycles",
        ),
        (
            "timing.dram_bank_bytes_per_cycle",
            t.dram_bank_bytes_per_cycle,
            true,
            "a finite rate above 0 bytes a cycle",
        ),
    ] {
        let in_range = if above_zero {
            v > 0.0
        } else {
            (0.0..=MAX_DELAY as f64).contains(&v)
        };
        if !(v.is_finite() && in_range) {
            return bad(field, format!("{v} (allowed: {allowed})"));
        }
    }
    at_most_max_delay(&[
        ("timing.router_hop", t.router_hop),
        ("timing.niu_hop", t.niu_hop),
        ("timing.issue_latency", t.issue_latency),
        ("timing.ack_turnaround", t.ack_turnaround),
        ("timing.read_turnaround", t.read_turnaround),
        ("timing.write_issue_floor", t.write_issue_floor),
        ("timing.read_issue_floor", t.read_issue_floor),
        ("timing.dram_read_latency", t.dram_read_latency),
        ("timing.dram_write_latency", t.dram_write_latency),
        ("timing.kernel_issue_cycles", t.kernel_issue_cycles),
        ("timing.kernel_call_cycles", t.kernel_call_cycles),
        ("timing.compute_call_cycles", t.compute_call_cycles),
        (
            "timing.compute_read_word_cycles",
            t.compute_read_word_cycles,
        ),
        (
            "timing.compute_scan_word_cycles",
            t.compute_scan_word_cycles,
        ),
    ])
}

/// Refuses the first of `fields` (name, cycles) above [`MAX_DELAY`].
fn at_most_max_delay(fields: &[(&'static str, u64)]) -> Result<(), SimError> {
    match fields.iter().find(|&&(_, v)| v > MAX_DELAY) {
        Some(&(field, v)) => Err(SimError::Config {
            field,
            why: format!("{v} (allowed: 0..={MAX_DELAY} cycles)"),
        }),
        None => Ok(()),
    }
}
