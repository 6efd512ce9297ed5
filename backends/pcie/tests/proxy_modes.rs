//! The host proxy's NoC keeps the HAL's write-mode rules: a loopback multicast reaches the
//! proxy tile itself, a linked run keeps its rectangle and refuses reads and unicast writes until
//! it is closed, and a unicast write takes neither mode.

#![cfg(feature = "sim")]

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
    card.read_l1(Xy::new(tile.0, tile.1).unwrap(), addr, &mut b)
        .unwrap();
    u32::from_le_bytes(b)
}

#[test]
fn a_loopback_multicast_reaches_the_proxy_tile_and_a_plain_one_does_not() {
    let card = card();
    let me = Xy::new(2, 4).unwrap();
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
    let me = Xy::new(2, 4).unwrap();
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

#[test]
fn a_linked_run_refuses_reads_and_unicast_writes_until_it_is_closed() {
    use komorebi_hal::noc::ReadTag;
    let card = card();
    let (me, other) = ((2, 4), (3, 5));
    let me0 = Xy::new(me.0, me.1).unwrap();
    card.write_l1(me0, 0x2_0000, &0x1234_5678u32.to_le_bytes())
        .unwrap();
    card.write_l1(
        Xy::new(other.0, other.1).unwrap(),
        0x5_0000,
        &0x9ABC_DEF0u32.to_le_bytes(),
    )
    .unwrap();
    let mut noc = HostNoc::new(&card, NocId::Noc0, me0);
    let column = Rect::new(xy(2, 5), xy(2, 11)).unwrap();
    let from = NocAddr::l1(xy(other.0, other.1), l1(0x5_0000));
    let to = NocAddr::l1(xy(other.0, other.1), l1(0x6_0000));
    let tag = ReadTag::new(0).unwrap();
    noc.multicast(
        l1(0x2_0000),
        column,
        l1(0x3_0000),
        16,
        WriteMode::ORDERED.linked(),
    )
    .unwrap();
    let refused = [
        noc.read(from, l1(0x4_0000), 16),
        noc.read_tagged(from, l1(0x4_0000), 16, tag),
        noc.write(l1(0x2_0000), to, 16, WriteMode::ORDERED),
    ];
    for (i, r) in refused.into_iter().enumerate() {
        let e = r.unwrap_err();
        assert_eq!(
            (e.kind, e.cause),
            (ErrorKind::InvalidMode, None),
            "call {i}"
        );
    }
    assert_eq!(word(&card, me, 0x4_0000), 0, "nothing read");
    assert_eq!(word(&card, other, 0x6_0000), 0, "nothing written");
    // The unlinked multicast to the run's rectangle closes it; the same calls then go.
    noc.multicast(l1(0x2_0000), column, l1(0x3_0000), 16, WriteMode::ORDERED)
        .unwrap();
    noc.read(from, l1(0x4_0000), 16).unwrap();
    assert_eq!(word(&card, me, 0x4_0000), 0x9ABC_DEF0);
    noc.read_tagged(from, l1(0x4_1000), 16, tag).unwrap();
    assert_eq!(word(&card, me, 0x4_1000), 0x9ABC_DEF0);
    noc.write(l1(0x2_0000), to, 16, WriteMode::ORDERED).unwrap();
    assert_eq!(word(&card, other, 0x6_0000), 0x1234_5678);
    assert!(noc.writes_acked().unwrap());
}

#[test]
fn a_multicast_with_no_receivers_cannot_end_an_open_run() {
    // A run to the proxy tile's own rectangle opened with loopback: without loopback the same
    // multicast reaches no one, so it neither continues nor closes the run (the HAL's rule).
    let card = card();
    let me = Xy::new(2, 4).unwrap();
    let mut noc = HostNoc::new(&card, NocId::Noc0, me);
    let own = Rect::new(me, me).unwrap();
    let looped = WriteMode::ORDERED.with_loopback();
    noc.multicast(l1(0x2_0000), own, l1(0x3_0000), 16, looped.linked())
        .unwrap();
    let e = noc
        .multicast(l1(0x2_0000), own, l1(0x3_0000), 16, WriteMode::ORDERED)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidMode);
    let src = NocAddr::new(xy(3, 5), 0x4_0000).unwrap();
    assert!(
        noc.read(src, l1(0x5_0000), 16).is_err(),
        "the run is still open"
    );
    noc.multicast(l1(0x2_0000), own, l1(0x3_0000), 16, looped)
        .unwrap();
    noc.read(src, l1(0x5_0000), 16).unwrap();
    // Closed: an empty multicast completes at once again.
    noc.multicast(l1(0x2_0000), own, l1(0x3_0000), 16, WriteMode::ORDERED)
        .unwrap();
}

#[test]
fn lengths_and_buffers_beyond_l1_are_refused_before_any_buffer_is_made() {
    use komorebi_hal::cb::{self, CircularBuffer};
    use komorebi_pcie::proxy::HostCb;
    let card = card();
    let me = Xy::new(2, 4).unwrap();
    let mut noc = HostNoc::new(&card, NocId::Noc0, me);
    // 4 GiB - 1 bytes: refused by its length, not by an allocation that fails; it runs past
    // the end of L1, which the HAL says is `InvalidAddress` (`InvalidLength` is a zero length).
    let dram = NocAddr::new(xy(0, 11), 0).unwrap();
    let e = noc.read(dram, l1(0x2_0000), u32::MAX).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidAddress);
    let e = noc.read(dram, l1(0x2_0000), 0).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidLength);
    let rect = Rect::new(xy(3, 5), xy(3, 6)).unwrap();
    let e = noc
        .multicast(
            l1(0x2_0000),
            rect,
            l1(0x3_0000),
            u32::MAX,
            WriteMode::ORDERED,
        )
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidAddress);
    // Buffers whose page 0 does not fit L1 (a 4 GiB page, and a 2 GiB one).
    for (page_size, pages) in [(u32::MAX, 2), (0x8000_0000, 4)] {
        let mut cb = HostCb::new(&card, me, l1(0x2_0000), page_size, pages, |_, _| {});
        let e = cb.push(1).unwrap_err();
        assert_eq!(
            e.kind,
            cb::ErrorKind::OutOfRange,
            "{page_size:#x} x {pages}"
        );
    }
}

/// The host's buffer names its slots by a kept index, not by its 16-bit counters modulo the
/// capacity, which is wrong once they wrap unless the capacity divides 65,536: with 6 pages,
/// after 65,536 pushed the counter reads 0 (slot 0), and the next page belongs in slot 4
/// (65,536 = 6 x 10,922 + 4).
#[test]
fn the_host_buffer_keeps_its_slot_past_65536_pushed_pages() {
    use komorebi_hal::cb::CircularBuffer;
    use komorebi_pcie::proxy::HostCb;
    let card = card();
    let me = Xy::new(2, 4).unwrap();
    let (base, page_size, pages) = (0x2_0000u32, 16u32, 6u16);
    let mut cb = HostCb::new(&card, me, l1(base), page_size, pages, |_, _| {});
    let mut pushed: u32 = 0;
    for chunk in [60_000u32, 5_538, 1, 1] {
        let mut left = chunk;
        while left > 0 {
            let n = left.min(pages as u32) as u16;
            let free = pages as u32 - cb.pages_ready().unwrap() as u32;
            let n = n.min(free as u16);
            // Pushes never cross the buffer's end: at most to it.
            let to_end = pages as u32 - pushed % pages as u32;
            let n = n.min(to_end as u16);
            cb.push(n).unwrap();
            pushed += n as u32;
            left -= n as u32;
        }
        let slot = pushed % pages as u32;
        assert_eq!(
            cb.write_ptr(),
            l1(base + slot * page_size),
            "{pushed} pushed"
        );
        assert_eq!(
            cb.read_ptr(),
            cb.write_ptr(),
            "{pushed}: consumed as pushed"
        );
    }
    assert!(pushed > 65_536);
}
