//! The host proxy's NoC keeps the HAL's write-mode rules: a loopback multicast reaches the
//! proxy tile itself, a linked run keeps its rectangle, and a unicast write takes neither mode.

#![cfg(feature = "sim")]

use blackhole_pac::grid::Noc0Xy;
use komorebi_hal::noc::{ErrorKind, NocMulticast, WriteMode};
use komorebi_hal::{L1Addr, NocAddr, NocId, Rect, Xy};
use komorebi_pcie::card::{Card, CardOptions};
use komorebi_pcie::proxy::HostNoc;
use komorebi_pcie::sim::{SimBar, SimBarOptions};
use komorebi_sim::{Sim, SimConfig};

fn xy(x: u8, y: u8) -> Xy {
    Xy::new(x, y).unwrap()
}

fn l1(a: u32) -> L1Addr {
    L1Addr::new(a).unwrap()
}

fn card() -> Card<SimBar> {
    let sim = Sim::new(SimConfig::default());
    Card::open(
        SimBar::new(sim, SimBarOptions::default()),
        CardOptions::default(),
    )
    .unwrap()
}

fn word(card: &Card<SimBar>, tile: (u8, u8), addr: u32) -> u32 {
    let mut b = [0; 4];
    card.read_l1(Noc0Xy::new(tile.0, tile.1).unwrap(), addr, &mut b)
        .unwrap();
    u32::from_le_bytes(b)
}

#[test]
fn a_loopback_multicast_reaches_the_proxy_tile_and_a_plain_one_does_not() {
    let card = card();
    let me = Noc0Xy::new(2, 4).unwrap();
    card.write_l1(me, 0x2_0000, &0x1234_5678u32.to_le_bytes())
        .unwrap();
    let mut noc = HostNoc::new(&card, NocId::Noc0, me);
    let rect = Rect::new(xy(2, 4), xy(3, 5)).unwrap();
    noc.multicast(l1(0x2_0000), rect, l1(0x3_0000), 16, WriteMode::ORDERED)
        .unwrap();
    assert_eq!(word(&card, (3, 5), 0x3_0000), 0x1234_5678);
    assert_eq!(word(&card, (2, 4), 0x3_0000), 0, "sender excluded");
    noc.multicast(
        l1(0x2_0000),
        rect,
        l1(0x3_0000),
        16,
        WriteMode::ORDERED.with_loopback(),
    )
    .unwrap();
    assert_eq!(
        word(&card, (2, 4), 0x3_0000),
        0x1234_5678,
        "sender included"
    );
    assert!(noc.writes_acked().unwrap());
}

#[test]
fn a_linked_run_keeps_its_rectangle_and_unicast_writes_take_no_multicast_mode() {
    let card = card();
    let me = Noc0Xy::new(2, 4).unwrap();
    let mut noc = HostNoc::new(&card, NocId::Noc0, me);
    let column = Rect::new(xy(2, 5), xy(2, 11)).unwrap();
    let other = Rect::new(xy(3, 5), xy(3, 11)).unwrap();
    let linked = WriteMode::ORDERED.linked();
    noc.multicast(l1(0x2_0000), column, l1(0x3_0000), 16, linked)
        .unwrap();
    let e = noc
        .multicast(l1(0x2_0000), other, l1(0x3_0000), 16, WriteMode::ORDERED)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidMode);
    noc.multicast(l1(0x2_0000), column, l1(0x3_0000), 16, WriteMode::ORDERED)
        .unwrap();
    noc.multicast(l1(0x2_0000), other, l1(0x3_0000), 16, WriteMode::ORDERED)
        .unwrap();
    for mode in [linked, WriteMode::ORDERED.with_loopback()] {
        let e = noc
            .write(l1(0x2_0000), NocAddr::l1(xy(3, 5), l1(0x3_0000)), 16, mode)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidMode);
    }
}
