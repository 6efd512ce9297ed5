//! The Blackhole NoC grid: size, what tile sits at each NoC0 coordinate, NoC0 <-> NoC1.
//!
//! All coordinates here are *raw* NoC coordinates (no hardware coordinate translation).
//! Sources: tt-umd `blackhole_implementation.hpp` (`GRID_SIZE`, `TENSIX_CORES_NOC0`,
//! `DRAM_CORES_NOC0`, `ETH_CORES_NOC0`, ...), tt-isa-documentation `BlackholeA0/NoC/MemoryMap.md`
//! and (in the `jasondavies` fork) `BlackholeA0/NoC/RoutingPaths.md`.

/// Grid width: NoC0 x runs 0..=16.
pub const GRID_X: u8 = 17;
/// Grid height: NoC0 y runs 0..=11.
pub const GRID_Y: u8 = 12;

/// NoC0 x of the 14 Tensix columns, ascending (tt-umd `T6_X_LOCATIONS`).
pub const TENSIX_X: [u8; 14] = [1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16];
/// NoC0 y of the first Tensix row; Tensix rows are `TENSIX_Y_FIRST..=TENSIX_Y_LAST`.
pub const TENSIX_Y_FIRST: u8 = 2;
/// NoC0 y of the last Tensix row.
pub const TENSIX_Y_LAST: u8 = 11;
/// NoC0 y of the 10 Tensix rows, ascending: logical row `r` is `TENSIX_Y[r]` = `r + 2`.
pub const TENSIX_Y: [u8; 10] = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
/// Tensix rows on every part (harvesting removes whole columns only).
pub const TENSIX_ROWS: u8 = 10;
/// Tensix tiles on the full die.
pub const TENSIX_COUNT_FULL: usize = 140;

/// DRAM banks.
pub const DRAM_BANKS: usize = 8;
/// NoC ports (tiles) per DRAM bank; each exposes the whole bank.
pub const DRAM_PORTS_PER_BANK: usize = 3;
/// Bytes per DRAM bank (4 GiB).
pub const DRAM_BANK_SIZE: u64 = 4 << 30;
/// Bytes per bank tt-metal uses (the top 16 MiB are reserved).
pub const DRAM_BANK_USABLE_SIZE: u64 = 4_278_190_080;
/// NoC0 (x, y) of every DRAM port, by bank then port (tt-umd `DRAM_CORES_NOC0`).
pub const DRAM_PORTS: [[(u8, u8); DRAM_PORTS_PER_BANK]; DRAM_BANKS] = [
    [(0, 0), (0, 1), (0, 11)],
    [(0, 2), (0, 10), (0, 3)],
    [(0, 9), (0, 4), (0, 8)],
    [(0, 5), (0, 7), (0, 6)],
    [(9, 0), (9, 1), (9, 11)],
    [(9, 2), (9, 10), (9, 3)],
    [(9, 9), (9, 4), (9, 8)],
    [(9, 5), (9, 7), (9, 6)],
];
/// The worker-facing port of each bank that tt-metal prefers (`blackhole_140_arch.yaml`).
pub const DRAM_WORKER_PORT: [(u8, u8); DRAM_BANKS] = [
    (0, 11),
    (0, 3),
    (0, 8),
    (0, 6),
    (9, 11),
    (9, 3),
    (9, 8),
    (9, 6),
];

/// Which of `DRAM_PORTS[bank]` tt-metal's kernels use, per NoC (`[NoC 0, NoC 1]`): tt-metal's
/// Blackhole DRAM metadata (`metal_soc_descriptor_data::BLACKHOLE_DRAM_METADATA`,
/// `worker_endpoint`): bank 0 `{2, 1}`, banks 1..=3 `{0, 1}`, banks 4..=7 `{2, 1}`. For banks
/// 1..=3 the NoC 0 port is not [`DRAM_WORKER_PORT`], the port of tt-metal's 4 GiB TLB windows
/// (`dram_preferred_worker_endpoint`, the last port of every bank).
pub const DRAM_ENDPOINT: [[usize; 2]; DRAM_BANKS] = [
    [2, 1],
    [0, 1],
    [0, 1],
    [0, 1],
    [2, 1],
    [2, 1],
    [2, 1],
    [2, 1],
];

/// NoC0 coordinates of the port of DRAM bank `bank` that tt-metal's kernels read and write
/// through on NoC `noc` (0 or 1; `None` for a bank above 7 or another NoC). NoC 0: banks 0..=7
/// at (0,11), (0,2), (0,9), (0,5), (9,11), (9,3), (9,8), (9,6); NoC 1: (0,1), (0,10), (0,4),
/// (0,7), (9,1), (9,10), (9,4), (9,7) ([`DRAM_ENDPOINT`] over [`DRAM_PORTS`]).
pub const fn dram_endpoint(bank: u8, noc: u8) -> Option<(u8, u8)> {
    if bank as usize >= DRAM_BANKS || noc > 1 {
        return None;
    }
    Some(DRAM_PORTS[bank as usize][DRAM_ENDPOINT[bank as usize][noc as usize]])
}

/// ARC tile.
pub const ARC: (u8, u8) = (8, 0);
/// PCIe tiles: PCIe0 (host link on p150) and PCIe1 (host link on p100).
pub const PCIE: [(u8, u8); 2] = [(2, 0), (11, 0)];
/// Security tile.
pub const SECURITY: (u8, u8) = (8, 2);
/// L2CPU tiles (4 SiFive x280 each).
pub const L2CPU: [(u8, u8); 4] = [(8, 3), (8, 5), (8, 7), (8, 9)];
/// Ethernet tiles all sit on this NoC0 row.
pub const ETH_Y: u8 = 1;
/// NoC0 x of Ethernet channel 0..13 (the die order; tt-umd `ETH_CORES_NOC0`).
pub const ETH_CHANNEL_X: [u8; 14] = [1, 16, 2, 15, 3, 14, 4, 13, 5, 12, 6, 11, 7, 10];
/// Router-only tiles (tt-umd `ROUTER_CORES_NOC0`).
pub const ROUTER_ONLY: [(u8, u8); 18] = [
    (1, 0),
    (3, 0),
    (4, 0),
    (5, 0),
    (6, 0),
    (7, 0),
    (10, 0),
    (12, 0),
    (13, 0),
    (14, 0),
    (15, 0),
    (16, 0),
    (8, 1),
    (8, 4),
    (8, 6),
    (8, 8),
    (8, 10),
    (8, 11),
];

/// What sits at one NoC coordinate.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TileKind {
    /// A Tensix tile (5 baby RISC-V cores, 1536 KiB L1), harvested or not.
    Tensix,
    /// One NoC port of a DRAM bank.
    Dram {
        /// Bank 0..8.
        bank: u8,
        /// Port 0..3 within the bank.
        port: u8,
    },
    /// A PCIe tile (0 or 1).
    Pcie(u8),
    /// The ARC management tile.
    Arc,
    /// An Ethernet tile with its channel number 0..14.
    Ethernet(u8),
    /// One of the 4 L2CPU tiles.
    L2Cpu(u8),
    /// The security tile.
    Security,
    /// A router with no endpoint.
    RouterOnly,
}

/// True when NoC0 x is one of the Tensix columns.
pub const fn is_tensix_x(x: u8) -> bool {
    matches!(x, 1..=7 | 10..=16)
}

/// Not a DRAM port, in [`DRAM_AT`].
const NO_DRAM: u8 = 0xFF;

/// The DRAM port at NoC0 `(0, y)` (row 0) and `(9, y)` (row 1) as `bank << 2 | port`, or
/// [`NO_DRAM`]: [`DRAM_PORTS`] inverted at compile time, so [`tile_at`] answers a DRAM
/// coordinate with one lookup rather than a search of 24 ports (it runs on every DRAM read the
/// firmware issues).
const DRAM_AT: [[u8; GRID_Y as usize]; 2] = {
    let mut at = [[NO_DRAM; GRID_Y as usize]; 2];
    let mut bank = 0;
    while bank < DRAM_BANKS {
        let mut port = 0;
        while port < DRAM_PORTS_PER_BANK {
            let (x, y) = DRAM_PORTS[bank][port];
            at[(x == 9) as usize][y as usize] = (bank as u8) << 2 | port as u8;
            port += 1;
        }
        bank += 1;
    }
    at
};

/// What sits at NoC0 `(x, y)` if it is memory a kernel addresses: [`TileKind::Tensix`] or
/// [`TileKind::Dram`], as [`tile_at`] says; `None` for every other tile and outside the grid.
/// For code that tells only those two apart from the rest (the NIU driver, the translation),
/// which then carries none of the other kinds' tests.
pub const fn memory_at(x: u8, y: u8) -> Option<TileKind> {
    if x >= GRID_X || y >= GRID_Y {
        return None;
    }
    if is_tensix_x(x) && y >= TENSIX_Y_FIRST {
        return Some(TileKind::Tensix);
    }
    if x == 0 || x == 9 {
        let code = DRAM_AT[(x == 9) as usize][y as usize % GRID_Y as usize];
        if code != NO_DRAM {
            return Some(TileKind::Dram {
                bank: code >> 2,
                port: code & 3,
            });
        }
    }
    None
}

/// What sits at NoC0 `(x, y)`, or `None` outside the 17 x 12 grid.
pub const fn tile_at(x: u8, y: u8) -> Option<TileKind> {
    if x >= GRID_X || y >= GRID_Y {
        return None;
    }
    if let Some(kind) = memory_at(x, y) {
        return Some(kind);
    }
    if y == ETH_Y && is_tensix_x(x) {
        let mut channel = 0;
        while channel < ETH_CHANNEL_X.len() {
            if ETH_CHANNEL_X[channel] == x {
                return Some(TileKind::Ethernet(channel as u8));
            }
            channel += 1;
        }
    }
    if x == ARC.0 && y == ARC.1 {
        return Some(TileKind::Arc);
    }
    if y == PCIE[0].1 && x == PCIE[0].0 {
        return Some(TileKind::Pcie(0));
    }
    if y == PCIE[1].1 && x == PCIE[1].0 {
        return Some(TileKind::Pcie(1));
    }
    if x == SECURITY.0 && y == SECURITY.1 {
        return Some(TileKind::Security);
    }
    let mut i = 0;
    while i < L2CPU.len() {
        if L2CPU[i].0 == x && L2CPU[i].1 == y {
            return Some(TileKind::L2Cpu(i as u8));
        }
        i += 1;
    }
    Some(TileKind::RouterOnly)
}

/// A raw coordinate of one NoC inside the 17 x 12 grid: the struct and what both NoCs' share.
macro_rules! raw_xy {
    ($(#[$doc:meta])* $name:ident, $noc:literal) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name {
            x: u8,
            y: u8,
        }

        impl $name {
            #[doc = concat!($noc, " `(x, y)`; `None` unless `x < 17` and `y < 12`.")]
            pub const fn new(x: u8, y: u8) -> Option<Self> {
                if x < GRID_X && y < GRID_Y {
                    Some(Self { x, y })
                } else {
                    None
                }
            }

            #[doc = concat!($noc, " x.")]
            pub const fn x(self) -> u8 {
                self.x
            }

            #[doc = concat!($noc, " y.")]
            pub const fn y(self) -> u8 {
                self.y
            }

            /// `(x, y)`.
            pub const fn get(self) -> (u8, u8) {
                (self.x, self.y)
            }
        }
    };
}

raw_xy!(
    /// A raw NoC0 coordinate inside the 17 x 12 grid.
    ///
    /// NoC0 and NoC1 number the same routers in opposite directions, so a bare `(x, y)` does not
    /// say which tile it names; [`Noc0Xy`] and [`Noc1Xy`] do, and converting between them is
    /// [`Noc0Xy::to_noc1`] / [`Noc1Xy::to_noc0`] (`x1 = 16 - x0`, `y1 = 11 - y0`), the one place the
    /// workspace spells that rule. Chip-neutral code (the HAL's `Xy`) holds raw coordinates of a
    /// NoC it names with `komorebi_hal::NocId`; a Blackhole backend matches on that id and builds
    /// the newtype of that NoC.
    Noc0Xy,
    "NoC0"
);
raw_xy!(
    /// A raw NoC1 coordinate inside the 17 x 12 grid (see [`Noc0Xy`]).
    Noc1Xy,
    "NoC1"
);

/// The grid mirror both ways: NoC0 <-> NoC1 is its own inverse.
const fn mirror(x: u8, y: u8) -> (u8, u8) {
    (GRID_X - 1 - x, GRID_Y - 1 - y)
}

impl Noc0Xy {
    /// The same router in NoC1 raw coordinates: `(16 - x, 11 - y)`.
    pub const fn to_noc1(self) -> Noc1Xy {
        let (x, y) = mirror(self.x, self.y);
        Noc1Xy { x, y }
    }

    /// What sits here.
    pub const fn tile(self) -> TileKind {
        match tile_at(self.x, self.y) {
            Some(kind) => kind,
            None => TileKind::RouterOnly, // unreachable: `new` keeps us inside the grid
        }
    }

    /// What sits here if it is a Tensix tile or a DRAM port (what [`tile`](Self::tile) says
    /// then), `None` for any other tile: [`memory_at`].
    pub const fn memory(self) -> Option<TileKind> {
        memory_at(self.x, self.y)
    }
}

impl Noc1Xy {
    /// The same router in NoC0 raw coordinates: `(16 - x, 11 - y)`.
    pub const fn to_noc0(self) -> Noc0Xy {
        let (x, y) = mirror(self.x, self.y);
        Noc0Xy { x, y }
    }
}

impl From<Noc0Xy> for Noc1Xy {
    fn from(p: Noc0Xy) -> Self {
        p.to_noc1()
    }
}

impl From<Noc1Xy> for Noc0Xy {
    fn from(p: Noc1Xy) -> Self {
        p.to_noc0()
    }
}

/// NoC1 raw coordinate of NoC0 `(x, y)` ([`Noc0Xy::to_noc1`] on bare pairs).
/// Returns `None` outside the grid.
pub const fn noc0_to_noc1(x: u8, y: u8) -> Option<(u8, u8)> {
    match Noc0Xy::new(x, y) {
        Some(p) => Some(p.to_noc1().get()),
        None => None,
    }
}

/// NoC0 raw coordinate of NoC1 `(x, y)` ([`Noc1Xy::to_noc0`] on bare pairs).
/// Returns `None` outside the grid.
pub const fn noc1_to_noc0(x: u8, y: u8) -> Option<(u8, u8)> {
    match Noc1Xy::new(x, y) {
        Some(p) => Some(p.to_noc0().get()),
        None => None,
    }
}

/// Routers a unicast packet passes on a one-directional torus axis from `from` to `to`
/// (`len` positions), moving in the + direction of that NoC's raw coordinates.
pub const fn forward_hops(from: u8, to: u8, len: u8) -> u8 {
    if len == 0 {
        return 0;
    }
    // Points off the ring count as their place on it (`% len`): the hops stay below `len`.
    let (from, to) = ((from % len) as u16, (to % len) as u16);
    ((to + len as u16 - from) % len as u16) as u8
}
