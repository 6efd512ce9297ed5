//! The Wormhole B0 NoC grid: size, what tile sits at each NoC0 coordinate, NoC0 <-> NoC1.
//!
//! All coordinates here are *raw* NoC0 coordinates. Sources: tt-umd
//! `wormhole_implementation.hpp` (`GRID_SIZE`, `TENSIX_CORES_NOC0`, `T6_X_LOCATIONS`,
//! `T6_Y_LOCATIONS`, `DRAM_CORES_NOC0`, `ETH_CORES_NOC0`, `PCIE_CORES_NOC0`, `ARC_CORES_NOC0`,
//! `ROUTER_CORES_NOC0`, `NOC0_X_TO_NOC1_X`), tt-isa-documentation `WormholeB0/NoC/Coordinates.md`.

/// Grid width: NoC0 x runs 0..=9.
pub const GRID_X: u8 = 10;
/// Grid height: NoC0 y runs 0..=11.
pub const GRID_Y: u8 = 12;

/// NoC0 x of the 8 Tensix columns, ascending (tt-umd `T6_X_LOCATIONS`). Wormhole harvests
/// rows, never columns: every part has all 8.
pub const TENSIX_X: [u8; 8] = [1, 2, 3, 4, 6, 7, 8, 9];
/// NoC0 y of the 10 Tensix rows, ascending (tt-umd `T6_Y_LOCATIONS`); row 6 is Ethernet.
pub const TENSIX_Y: [u8; 10] = [1, 2, 3, 4, 5, 7, 8, 9, 10, 11];
/// Tensix tiles on the full die.
pub const TENSIX_COUNT_FULL: usize = 80;

/// DRAM banks (tt-umd `NUM_DRAM_BANKS`): one GDDR6 controller with two 1 GiB channels each.
pub const DRAM_BANKS: usize = 6;
/// NoC ports (tiles) per DRAM bank; each exposes the whole bank.
pub const DRAM_PORTS_PER_BANK: usize = 3;
/// Bytes per DRAM bank (tt-umd `DRAM_BANK_SIZE`: 2 GiB).
pub const DRAM_BANK_SIZE: u64 = 2 << 30;
/// NoC0 (x, y) of every DRAM port, by bank then port (tt-umd `DRAM_CORES_NOC0`).
pub const DRAM_PORTS: [[(u8, u8); DRAM_PORTS_PER_BANK]; DRAM_BANKS] = [
    [(0, 0), (0, 1), (0, 11)],
    [(0, 5), (0, 6), (0, 7)],
    [(5, 0), (5, 1), (5, 11)],
    [(5, 2), (5, 9), (5, 10)],
    [(5, 3), (5, 4), (5, 8)],
    [(5, 5), (5, 6), (5, 7)],
];

/// The PCIe tile (tt-umd `PCIE_CORES_NOC0`; tt-kmd `PCIE_NOC_X`, `PCIE_NOC_Y`).
pub const PCIE: (u8, u8) = (0, 3);
/// The ARC tile (tt-umd `ARC_CORES_NOC0`).
pub const ARC: (u8, u8) = (0, 10);
/// Ethernet channels.
pub const ETH_CHANNELS: usize = 16;
/// NoC0 (x, y) of Ethernet channels 0..=15 (tt-umd `ETH_CORES_NOC0`).
pub const ETH: [(u8, u8); ETH_CHANNELS] = [
    (9, 0),
    (1, 0),
    (8, 0),
    (2, 0),
    (7, 0),
    (3, 0),
    (6, 0),
    (4, 0),
    (9, 6),
    (1, 6),
    (8, 6),
    (2, 6),
    (7, 6),
    (3, 6),
    (6, 6),
    (4, 6),
];
/// Tiles with a router and nothing else (tt-umd `ROUTER_CORES_NOC0`).
pub const ROUTER_ONLY: [(u8, u8); 4] = [(0, 2), (0, 4), (0, 8), (0, 9)];

/// What sits at a NoC0 coordinate.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tile {
    /// A Tensix tile (it may be harvested: see [`crate::harvest`]).
    Tensix,
    /// Port `port` of DRAM bank `bank`.
    Dram {
        /// The bank, `0..6`.
        bank: u8,
        /// The port, `0..3`.
        port: u8,
    },
    /// Ethernet channel `channel`, `0..16`.
    Eth {
        /// The channel.
        channel: u8,
    },
    /// The PCIe tile.
    Pcie,
    /// The ARC tile.
    Arc,
    /// A router without a tile.
    RouterOnly,
}

/// The tile at NoC0 `(x, y)`, or `None` outside the grid.
pub const fn tile_at(x: u8, y: u8) -> Option<Tile> {
    if x >= GRID_X || y >= GRID_Y {
        return None;
    }
    let mut bank = 0;
    while bank < DRAM_BANKS {
        let mut port = 0;
        while port < DRAM_PORTS_PER_BANK {
            let p = DRAM_PORTS[bank][port];
            if p.0 == x && p.1 == y {
                return Some(Tile::Dram {
                    bank: bank as u8,
                    port: port as u8,
                });
            }
            port += 1;
        }
        bank += 1;
    }
    let mut c = 0;
    while c < ETH_CHANNELS {
        if ETH[c].0 == x && ETH[c].1 == y {
            return Some(Tile::Eth { channel: c as u8 });
        }
        c += 1;
    }
    if x == PCIE.0 && y == PCIE.1 {
        return Some(Tile::Pcie);
    }
    if x == ARC.0 && y == ARC.1 {
        return Some(Tile::Arc);
    }
    if x == 0 {
        // Column 0 holds DRAM, PCIe, ARC and the router-only tiles.
        return Some(Tile::RouterOnly);
    }
    Some(Tile::Tensix)
}

/// NoC1 coordinates of NoC0 `(x, y)` (the NoCs run in opposite directions: tt-umd
/// `NOC0_X_TO_NOC1_X`, `NOC0_Y_TO_NOC1_Y`); `None` outside the grid. Its own inverse.
pub const fn noc0_to_noc1(x: u8, y: u8) -> Option<(u8, u8)> {
    if x >= GRID_X || y >= GRID_Y {
        return None;
    }
    Some((GRID_X - 1 - x, GRID_Y - 1 - y))
}
