//! `Card::open` reads every tile's `NOC_ID_LOGICAL` back through a window before using any:
//! a chip whose translation does not put a tile where the harvest mask says is refused, naming
//! the tile, instead of every later access landing on the wrong one.

#![cfg(feature = "sim")]

use blackhole_pac::tensix::NOC_ID_LOGICAL_ADDR;
use blackhole_pac::tlb::TLB_2M_SIZE;
use komorebi_pcie::PcieError;
use komorebi_pcie::card::{Card, CardOptions};
use komorebi_pcie::sim::{SimBar, SimBarOptions};
use komorebi_sim::{Sim, SimConfig};

mod common;

use common::{Read, Tap, Tapped};

/// The simulated card, except that the tile at translated `liar` answers `NOC_ID_LOGICAL` with
/// `says`, as a chip whose ARC firmware translated another harvest would.
struct Lying {
    liar: (u8, u8),
    says: (u8, u8),
}

impl Tap for Lying {
    fn read32(&self, read: Read<'_>) -> Option<Result<u32, PcieError>> {
        let liar = read.config.is_some_and(|c| c.end == self.liar);
        (liar && read.at() == Some(NOC_ID_LOGICAL_ADDR as u64))
            .then_some(Ok(self.says.0 as u32 | (self.says.1 as u32) << 6))
    }
}

fn lying(liar: (u8, u8), says: (u8, u8)) -> Tapped<Lying> {
    Tapped::new(
        SimBar::new(Sim::new(SimConfig::default()), SimBarOptions::default()),
        Lying { liar, says },
    )
}

#[test]
fn a_tile_whose_noc_id_logical_disagrees_is_refused_at_open() {
    // p150 harvest (NoC0 x 7 and 10 fused): NoC0 (11, 5) is translated (7, 5).
    assert_eq!(
        TLB_2M_SIZE,
        2 << 20,
        "a register read goes through a window at 0xFFA0_0000"
    );
    let e = Card::open(lying((7, 5), (11, 5)), CardOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the window to NoC0 (11, 5) (translated (7, 5)): reached a tile whose NOC_ID_LOGICAL is \
         (11, 5): the harvest mask 0x3000 (columns) does not give this chip's translation"
    );
    // The same chip answering truthfully opens.
    assert!(Card::open(lying((7, 5), (7, 5)), CardOptions::default()).is_ok());
}
