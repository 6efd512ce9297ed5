//! `Card::open` reads every tile's `NOC_ID_LOGICAL` back through a window before using any:
//! a chip whose translation does not put a tile where the harvest mask says is refused, naming
//! the tile, instead of every later access landing on the wrong one.

#![cfg(feature = "sim")]

use std::collections::BTreeMap;

use blackhole_pac::tensix::NOC_ID_LOGICAL_ADDR;
use blackhole_pac::tlb::{TLB_2M_SIZE, TlbConfig, TlbSize};
use komorebi_pcie::PcieError;
use komorebi_pcie::bar::{Bar, DeviceIdentity, Mapping, WindowHandle};
use komorebi_pcie::card::{Card, CardOptions};
use komorebi_pcie::sim::{SimBar, SimBarOptions, SimWindow};
use komorebi_sim::{Sim, SimConfig};

/// The simulated card, except that the tile at translated `liar` answers `NOC_ID_LOGICAL` with
/// `says`, as a chip whose ARC firmware translated another harvest would.
struct Lying {
    bar: SimBar,
    configs: BTreeMap<u32, TlbConfig>,
    liar: (u8, u8),
    says: (u8, u8),
}

impl Bar for Lying {
    type Window = SimWindow;
    fn identity(&self) -> &DeviceIdentity {
        self.bar.identity()
    }
    fn allocate(&mut self, size: TlbSize, mapping: Mapping) -> Result<SimWindow, PcieError> {
        self.bar.allocate(size, mapping)
    }
    fn configure(&mut self, w: &mut SimWindow, config: &TlbConfig) -> Result<(), PcieError> {
        self.configs.insert(w.index(), *config);
        self.bar.configure(w, config)
    }
    fn free(&mut self, w: SimWindow) -> Result<(), PcieError> {
        self.bar.free(w)
    }
    fn read32(&self, w: &SimWindow, offset: u64) -> Result<u32, PcieError> {
        let c = self.configs.get(&w.index());
        let at = c.map(|c| c.addr + offset);
        if c.is_some_and(|c| c.end == self.liar) && at == Some(NOC_ID_LOGICAL_ADDR as u64) {
            return Ok(self.says.0 as u32 | (self.says.1 as u32) << 6);
        }
        self.bar.read32(w, offset)
    }
    fn write32(&mut self, w: &SimWindow, offset: u64, value: u32) -> Result<(), PcieError> {
        self.bar.write32(w, offset, value)
    }
    fn read(&self, w: &SimWindow, offset: u64, buf: &mut [u8]) -> Result<(), PcieError> {
        self.bar.read(w, offset, buf)
    }
    fn write(&mut self, w: &SimWindow, offset: u64, data: &[u8]) -> Result<(), PcieError> {
        self.bar.write(w, offset, data)
    }
    fn fence(&mut self) {
        self.bar.fence()
    }
    fn bar0_read32(&self, offset: u32) -> Result<u32, PcieError> {
        self.bar.bar0_read32(offset)
    }
    fn pass_time(&mut self) -> u64 {
        self.bar.pass_time()
    }
}

fn lying(liar: (u8, u8), says: (u8, u8)) -> Lying {
    Lying {
        bar: SimBar::new(Sim::new(SimConfig::default()), SimBarOptions::default()),
        configs: BTreeMap::new(),
        liar,
        says,
    }
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
