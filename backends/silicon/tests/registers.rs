//! Exact register writes of every operation, over a fake register region (plain host memory).

use blackhole_pac::addr::{multicast_coord, unicast_coord};
use blackhole_pac::harvest::HarvestMask;
use blackhole_pac::niu::{self, Counter, NIU_BLOCK_BYTES, Niu, cmd};
use blackhole_pac::stream::{self, CbIndex, Streams};
use blackhole_pac::translate::Translation;
use komorebi_hal::ControlLayout;
use komorebi_hal::noc::{ErrorKind, NocMulticast, WriteMode};
use komorebi_hal::{CircularBuffer, ControlBlock, L1Addr, NocAddr, NocId, Rect, Xy};
use komorebi_silicon::{Blackhole, SiliconCb, SiliconCtrl, SiliconNoc, Why};

fn xy(x: u8, y: u8) -> Xy {
    Xy::new(x, y).unwrap()
}

fn l1(a: u32) -> L1Addr {
    L1Addr::new(a).unwrap()
}

/// A fake NIU block and a handle over it.
struct Fake {
    regs: Box<[u32]>,
}

impl Fake {
    fn new() -> Self {
        Self {
            regs: vec![0u32; NIU_BLOCK_BYTES / 4].into_boxed_slice(),
        }
    }

    fn niu(&mut self) -> Niu {
        // SAFETY: the box outlives every handle in these tests and covers the whole block.
        unsafe { Niu::from_ptr(self.regs.as_mut_ptr().cast()) }
    }

    fn reg(&self, buf: usize, offset: usize) -> u32 {
        self.regs[(buf * niu::NOC_CMD_BUF_OFFSET + offset) / 4]
    }

    fn set_status(&mut self, c: Counter, v: u32) {
        self.regs[(niu::NOC_STATUS_OFFSET + 4 * c as usize) / 4] = v;
    }

    /// `NIU_MST_WRITE_REQS_OUTGOING_ID(0)`: writes whose source bytes are not read yet.
    fn set_outgoing(&mut self, v: u32) {
        self.regs[(niu::NOC_STATUS_OFFSET + 4 * niu::WRITE_REQS_OUTGOING_ID_BASE) / 4] = v;
    }

    fn set_cfg(&mut self, n: usize, v: u32) {
        self.regs[(niu::NOC_CFG_OFFSET + 4 * n) / 4] = v;
    }

    fn set_reg(&mut self, buf: usize, offset: usize, v: u32) {
        self.regs[(buf * niu::NOC_CMD_BUF_OFFSET + offset) / 4] = v;
    }

    fn clear(&mut self, buf: usize) {
        self.regs[(buf * niu::NOC_CMD_BUF_OFFSET + cmd::NOC_CMD_CTRL) / 4] = 0;
    }

    /// The ten words a command writes into command buffer `buf`.
    fn command(&self, buf: usize) -> [u32; 9] {
        [
            self.reg(buf, cmd::NOC_TARG_ADDR_LO),
            self.reg(buf, cmd::NOC_TARG_ADDR_MID),
            self.reg(buf, cmd::NOC_TARG_ADDR_HI),
            self.reg(buf, cmd::NOC_RET_ADDR_LO),
            self.reg(buf, cmd::NOC_RET_ADDR_MID),
            self.reg(buf, cmd::NOC_RET_ADDR_HI),
            self.reg(buf, cmd::NOC_AT_LEN_BE),
            self.reg(buf, cmd::NOC_CTRL),
            self.reg(buf, cmd::NOC_CMD_CTRL),
        ]
    }
}

const WRITE: u32 = 0x2;
const RESP_MARKED: u32 = 1 << 4;
const BRCST: u32 = 1 << 5;
const VC_STATIC: u32 = 1 << 7;
const PATH_RESERVE: u32 = 1 << 8;
/// tt-metal `tt_metal/hw/inc/blackhole/noc/noc_parameters.h`: `NOC_CMD_VC_LINKED (0x1 << 6)`.
const VC_LINKED: u32 = 1 << 6;
/// The same header: `NOC_CMD_BRCST_SRC_INCLUDE (0x1 << 17)`.
const BRCST_SRC_INCLUDE: u32 = 1 << 17;

#[test]
fn a_noc0_write_programs_command_buffer_0_with_the_unicast_vc() {
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    n.write(
        l1(0x8000),
        NocAddr::l1(xy(2, 3), l1(0x9000)),
        64,
        WriteMode::ORDERED,
    )
    .unwrap();
    let ctrl = WRITE | RESP_MARKED | VC_STATIC | (niu::UNICAST_VC as u32) << 13;
    assert_eq!(
        f.command(0),
        [
            0x8000,
            0,
            unicast_coord(1, 2).unwrap(),
            0x9000,
            0,
            unicast_coord(2, 3).unwrap(),
            64,
            ctrl,
            1
        ]
    );
    assert_eq!(f.command(1), [0; 9]);
    assert_eq!(f.command(2), [0; 9]);
    // Acked when WR_ACK_RECEIVED has caught up. Sent when the source bytes are read:
    // WRITE_REQS_OUTGOING_ID(0) back at 0, whatever NONPOSTED_WR_REQ_SENT says (it counts before
    // the NIU has read the source).
    f.set_outgoing(1);
    assert!(!n.writes_acked().unwrap() && !n.writes_sent().unwrap());
    f.set_status(Counter::MstNonpostedWrReqSent, 1);
    assert!(
        !n.writes_sent().unwrap(),
        "REQ_SENT advanced, source not read yet"
    );
    f.set_outgoing(0);
    f.set_status(Counter::MstWrAckReceived, 1);
    assert!(n.writes_acked().unwrap() && n.writes_sent().unwrap());
}

#[test]
fn no_write_is_issued_while_255_wait_for_their_source_bytes() {
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    f.set_outgoing(255);
    let w = n.write(
        l1(0x8000),
        NocAddr::l1(xy(2, 3), l1(0x9000)),
        64,
        WriteMode::ORDERED,
    );
    assert_eq!(w.unwrap_err().kind, ErrorKind::Busy, "8-bit counter full");
    assert_eq!(f.command(0), [0; 9]);
    // Reads do not count there.
    n.read(NocAddr::l1(xy(2, 3), l1(0x9000)), l1(0x8000), 64)
        .unwrap();
    f.set_outgoing(254);
    n.write(
        l1(0x8000),
        NocAddr::l1(xy(2, 3), l1(0x9000)),
        64,
        WriteMode::ORDERED,
    )
    .unwrap();
    // Bits above the counter's 8 say nothing (`writes_sent` masks them too): 3 outgoing.
    f.clear(0);
    f.set_outgoing(0xFFFF_FF03);
    n.write(
        l1(0x8000),
        NocAddr::l1(xy(2, 3), l1(0x9000)),
        64,
        WriteMode::ORDERED,
    )
    .expect("3 writes outgoing: room");
}

#[test]
fn a_new_handle_clears_the_packet_tags_and_broadcast_excludes_and_leaves_the_second_lengths() {
    let mut f = Fake::new();
    for buf in 0..4 {
        f.set_reg(buf, cmd::NOC_PACKET_TAG, 0x3C7F);
        f.set_reg(buf, cmd::NOC_BRCST_EXCLUDE, 0xFFFF_FFFF);
        f.set_reg(buf, cmd::NOC_AT_LEN_BE_1, 0x1234);
    }
    let _n = SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc1, xy(15, 9), HarvestMask::NONE, None);
    for buf in 0..4 {
        assert_eq!(f.reg(buf, cmd::NOC_PACKET_TAG), 0, "buffer {buf}");
        assert_eq!(f.reg(buf, cmd::NOC_BRCST_EXCLUDE), 0, "buffer {buf}");
        // Never written, as by tt-metal's Tensix firmware (ttsim models no such register).
        assert_eq!(f.reg(buf, cmd::NOC_AT_LEN_BE_1), 0x1234, "buffer {buf}");
    }
}

#[test]
fn a_marker_goes_through_command_buffer_2_as_a_normal_write_never_inline() {
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    n.write(
        l1(0x4A10),
        NocAddr::l1(xy(1, 9), l1(0x4A40)),
        4,
        WriteMode::ORDERED,
    )
    .unwrap();
    let words = f.command(2);
    assert_eq!(words[6], 4);
    assert_eq!(words[7] & (1 << 3), 0, "no NOC_CMD_WR_INLINE");
    assert_eq!(words[7] & 0x3, WRITE);
    assert_eq!(f.command(0), [0; 9]);
}

#[test]
fn a_noc1_multicast_writes_the_raw_rectangle_and_counts_one_ack_per_tensix() {
    let mut f = Fake::new();
    // NoC0 (1, 9) is NoC1 (15, 2); the column above it is NoC1 (15, 3) ..= (15, 9).
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc1, xy(15, 2), HarvestMask::NONE, None);
    let rect = Rect::new(xy(15, 3), xy(15, 9)).unwrap();
    n.multicast(l1(0x2_0000), rect, l1(0x2_0000), 8192, WriteMode::ORDERED)
        .unwrap();
    let ctrl =
        WRITE | RESP_MARKED | BRCST | VC_STATIC | PATH_RESERVE | (niu::MULTICAST_VC as u32) << 13;
    let words = f.command(0);
    assert_eq!(words[5], multicast_coord((15, 3), (15, 9)).unwrap());
    assert_eq!(words[7], ctrl);
    assert_eq!(
        words[7] & (1 << 17),
        0,
        "sender excluded: no NOC_CMD_BRCST_SRC_INCLUDE"
    );
    f.set_status(Counter::MstWrAckReceived, 6);
    assert!(!n.writes_acked().unwrap());
    f.set_status(Counter::MstWrAckReceived, 7);
    assert!(
        n.writes_acked().unwrap(),
        "7 Tensix receivers, one ack each"
    );
}

#[test]
fn a_linked_run_sets_vc_linked_on_all_but_its_last_multicast_and_keeps_its_rectangle() {
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    let rect = Rect::new(xy(1, 3), xy(1, 11)).unwrap();
    let other = Rect::new(xy(2, 3), xy(2, 11)).unwrap();
    let unlinked =
        WRITE | RESP_MARKED | BRCST | VC_STATIC | PATH_RESERVE | (niu::MULTICAST_VC as u32) << 13;
    let linked = WriteMode::ORDERED.linked();
    n.multicast(l1(0x2_0000), rect, l1(0x2_0000), 64, linked)
        .unwrap();
    assert_eq!(f.command(0)[7], unlinked | VC_LINKED);
    f.clear(0);
    // While the run is open, a multicast elsewhere is refused and nothing is programmed.
    let e = n
        .multicast(l1(0x2_0000), other, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidMode);
    assert_eq!(
        e.to_string(),
        "InvalidMode: a linked run is open to another rectangle: \
         close it with an unlinked multicast there first"
    );
    assert_eq!(f.command(0)[7], unlinked | VC_LINKED, "untouched");
    n.multicast(l1(0x2_0040), rect, l1(0x2_0040), 64, linked)
        .unwrap();
    f.clear(0);
    n.multicast(l1(0x2_0080), rect, l1(0x2_0080), 64, WriteMode::ORDERED)
        .unwrap();
    assert_eq!(
        f.command(0)[7],
        unlinked,
        "the last of the run releases the path"
    );
    f.clear(0);
    n.multicast(l1(0x2_0000), other, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap();
    assert_eq!(f.command(0)[5], multicast_coord((2, 3), (2, 11)).unwrap());
    f.set_status(Counter::MstWrAckReceived, 4 * 9 - 1);
    assert!(!n.writes_acked().unwrap());
    f.set_status(Counter::MstWrAckReceived, 4 * 9);
    assert!(n.writes_acked().unwrap(), "four multicasts of 9 receivers");
}

#[test]
fn a_linked_run_refuses_reads_and_unicast_writes_until_it_is_closed() {
    // ISA `MemoryMap.md`, `NOC_CMD_VC_LINKED`: during a run the NIU can initiate nothing on
    // another VC; a read or unicast write (VC 1) would hang it. Refused, nothing written.
    use komorebi_hal::noc::ReadTag;
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    let rect = Rect::new(xy(1, 3), xy(1, 11)).unwrap();
    let src = NocAddr::new(xy(2, 5), 0x1_0000).unwrap();
    let (dst, marker) = (
        NocAddr::l1(xy(2, 3), l1(0x9000)),
        NocAddr::l1(xy(2, 3), l1(0x9100)),
    );
    let tag = ReadTag::new(3).unwrap();
    let unlinked =
        WRITE | RESP_MARKED | BRCST | VC_STATIC | PATH_RESERVE | (niu::MULTICAST_VC as u32) << 13;
    n.multicast(
        l1(0x2_0000),
        rect,
        l1(0x2_0000),
        64,
        WriteMode::ORDERED.linked(),
    )
    .unwrap();
    assert_eq!(f.command(0)[7], unlinked | VC_LINKED);
    f.clear(0);
    let before = f.regs.clone();
    let read = "InvalidMode: a linked run holds the NIU on the multicast VC: \
                close it with an unlinked multicast before reading";
    let write = "InvalidMode: a linked run holds the NIU on the multicast VC: \
                 close it with an unlinked multicast before a unicast write";
    let refused = [
        (n.read(src, l1(0x3_0000), 64), read),
        (n.read_tagged(src, l1(0x3_0000), 64, tag), read),
        (n.write(l1(0x8000), dst, 64, WriteMode::ORDERED), write),
        (n.write(l1(0x8000), marker, 16, WriteMode::RELAXED), write),
    ];
    for (i, (r, text)) in refused.into_iter().enumerate() {
        let e = r.unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidMode, "call {i}");
        assert_eq!(e.to_string(), text, "call {i}");
    }
    assert!(f.regs == before, "no register written");
    // The run's next multicast is still taken; the unlinked one closes it.
    n.multicast(
        l1(0x2_0040),
        rect,
        l1(0x2_0040),
        64,
        WriteMode::ORDERED.linked(),
    )
    .unwrap();
    f.clear(0);
    n.multicast(l1(0x2_0080), rect, l1(0x2_0080), 64, WriteMode::ORDERED)
        .unwrap();
    assert_eq!(f.command(0)[7], unlinked, "closed");
    f.clear(0);
    // The same calls go once the run is closed.
    n.read(src, l1(0x3_0000), 64).unwrap();
    assert_eq!((f.command(1)[0], f.command(1)[3]), (0x1_0000, 0x3_0000));
    f.clear(1);
    n.read_tagged(src, l1(0x3_0000), 64, tag).unwrap();
    assert_eq!(f.reg(1, cmd::NOC_PACKET_TAG) >> 10 & 0xF, 4, "id tag + 1");
    n.write(l1(0x8000), dst, 64, WriteMode::ORDERED).unwrap();
    assert_eq!((f.command(0)[0], f.command(0)[3]), (0x8000, 0x9000));
    n.write(l1(0x8000), marker, 16, WriteMode::RELAXED).unwrap();
    assert_eq!((f.command(2)[0], f.command(2)[3]), (0x8000, 0x9100));
}

#[test]
fn a_loopback_multicast_sets_brcst_src_include_and_expects_the_sender_s_ack_too() {
    let mut f = Fake::new();
    // The sender (3, 4) lies inside the 2 x 2 rectangle (3, 4) ..= (4, 5).
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(3, 4), HarvestMask::NONE, None);
    let rect = Rect::new(xy(3, 4), xy(4, 5)).unwrap();
    n.multicast(
        l1(0x2_0000),
        rect,
        l1(0x2_0000),
        2048,
        WriteMode::RELAXED.with_loopback(),
    )
    .unwrap();
    assert_eq!(
        f.command(0)[7],
        WRITE
            | RESP_MARKED
            | BRCST
            | PATH_RESERVE
            | BRCST_SRC_INCLUDE
            | VC_STATIC
            | (niu::MULTICAST_VC as u32) << 13,
        "relaxed, yet on the static multicast VC as every multicast"
    );
    f.set_status(Counter::MstWrAckReceived, 3);
    assert!(
        !n.writes_acked().unwrap(),
        "3 acks: the sender's own is missing"
    );
    f.set_status(Counter::MstWrAckReceived, 4);
    assert!(n.writes_acked().unwrap());
    // Without loopback the same rectangle has three receivers.
    f.clear(0);
    n.multicast(l1(0x2_0000), rect, l1(0x2_0000), 2048, WriteMode::RELAXED)
        .unwrap();
    assert_eq!(f.command(0)[7] & BRCST_SRC_INCLUDE, 0);
    f.set_status(Counter::MstWrAckReceived, 6);
    assert!(!n.writes_acked().unwrap());
    f.set_status(Counter::MstWrAckReceived, 7);
    assert!(n.writes_acked().unwrap());
}

#[test]
fn a_linked_run_keeps_one_static_vc_and_an_empty_multicast_cannot_end_it() {
    // ISA `NoC/MemoryMap.md`, `NOC_CMD_VC_LINKED`: while a run is open the NIU can initiate
    // nothing on another VC; a relaxed packet whose VC the NIU picked could differ from the
    // run's static one, so every multicast is on the static multicast VC.
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(3, 4), HarvestMask::NONE, None);
    let rect = Rect::new(xy(3, 5), xy(3, 8)).unwrap();
    let vc = VC_STATIC | (niu::MULTICAST_VC as u32) << 13;
    n.multicast(
        l1(0x2_0000),
        rect,
        l1(0x2_0000),
        64,
        WriteMode::RELAXED.linked(),
    )
    .unwrap();
    assert_eq!(
        f.command(0)[7] & (VC_STATIC | 7 << 13),
        vc,
        "opened relaxed"
    );
    f.clear(0);
    n.multicast(l1(0x2_0000), rect, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap();
    assert_eq!(
        f.command(0)[7] & (VC_STATIC | 7 << 13),
        vc,
        "closed ordered"
    );
    f.clear(0);
    // A run on the sender's own tile, opened with loopback (one receiver: the sender), cannot
    // be closed without it: no receiver, no packet, the run would stay open behind an `Ok`.
    let own = Rect::new(xy(3, 4), xy(3, 4)).unwrap();
    n.multicast(
        l1(0x2_0000),
        own,
        l1(0x2_0000),
        64,
        WriteMode::ORDERED.linked().with_loopback(),
    )
    .unwrap();
    assert_ne!(f.command(0)[7] & VC_LINKED, 0);
    f.clear(0);
    let before = f.regs.clone();
    let e = n
        .multicast(l1(0x2_0000), own, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidMode);
    assert_eq!(
        e.to_string(),
        "InvalidMode: a multicast with no receivers sends no packet, so it cannot continue or \
         close the open linked run: close it with a multicast that reaches a receiver"
    );
    assert!(f.regs == before, "nothing written");
    // The run is still open (a read is refused) until a multicast that reaches the sender ends it.
    let src = NocAddr::new(xy(2, 5), 0x1_0000).unwrap();
    assert!(n.read(src, l1(0x3_0000), 64).is_err());
    n.multicast(
        l1(0x2_0000),
        own,
        l1(0x2_0000),
        64,
        WriteMode::ORDERED.with_loopback(),
    )
    .unwrap();
    assert_eq!(f.command(0)[7] & VC_LINKED, 0);
    f.clear(0);
    n.read(src, l1(0x3_0000), 64).unwrap();
    f.clear(1);
    // With no run open, an empty multicast still completes at once, writing nothing.
    let before = f.regs.clone();
    n.multicast(l1(0x2_0000), own, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap();
    assert!(f.regs == before);
}

#[test]
fn a_tagged_read_carries_transaction_id_tag_plus_1_and_waits_on_that_id_s_counter() {
    use komorebi_hal::noc::ReadTag;
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    // `new` zeroes the outstanding counters of all 16 ids: one mask at the NIU's base + 0x60,
    // nothing at command buffer 1's offset 0x60.
    assert_eq!(f.reg(0, niu::NOC_CLEAR_OUTSTANDING_REQ_CNT), 0xFFFF);
    assert_eq!(f.reg(1, niu::NOC_CLEAR_OUTSTANDING_REQ_CNT), 0);
    let src = NocAddr::new(xy(0, 11), 0x1000).unwrap();
    n.read_tagged(src, l1(0x2_0000), 2048, ReadTag::new(2).unwrap())
        .unwrap();
    assert_eq!(f.reg(1, cmd::NOC_PACKET_TAG), 3 << 10, "transaction id 3");
    assert_eq!(f.command(1)[6], 2048);
    let outstanding = |f: &mut Fake, id: usize, v: u32| {
        f.regs[(niu::NOC_STATUS_OFFSET + 4 * (niu::REQS_OUTSTANDING_ID_BASE + id)) / 4] = v;
    };
    outstanding(&mut f, 3, 1);
    outstanding(&mut f, 4, 0);
    assert!(!n.tagged_reads_done(ReadTag::new(2).unwrap()).unwrap());
    assert!(
        n.tagged_reads_done(ReadTag::new(3).unwrap()).unwrap(),
        "id 4: none"
    );
    outstanding(&mut f, 3, 0x100);
    assert!(
        n.tagged_reads_done(ReadTag::new(2).unwrap()).unwrap(),
        "the counter is 8 bits wide"
    );
    // An untagged read puts id 0 back; a second tagged read with the same id writes nothing.
    f.clear(1);
    n.read(src, l1(0x2_0000), 64).unwrap();
    assert_eq!(f.reg(1, cmd::NOC_PACKET_TAG), 0);
    f.clear(1);
    f.set_reg(1, cmd::NOC_PACKET_TAG, 0xDEAD);
    n.read(src, l1(0x2_0000), 64).unwrap();
    assert_eq!(
        f.reg(1, cmd::NOC_PACKET_TAG),
        0xDEAD,
        "unchanged: already id 0"
    );
}

#[test]
fn a_unicast_write_refuses_linked_and_loopback_modes() {
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    for mode in [
        WriteMode::ORDERED.linked(),
        WriteMode::ORDERED.with_loopback(),
    ] {
        let e = n
            .write(l1(0x2_0000), NocAddr::l1(xy(1, 3), l1(0x2_0000)), 64, mode)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidMode);
        assert_eq!(
            e.to_string(),
            "InvalidMode: a unicast write is neither linked nor \
             loopback (multicasts only)"
        );
    }
    assert_eq!(f.command(0), [0; 9]);
}

#[test]
fn under_translation_a_noc1_multicast_writes_swapped_translated_corners() {
    let mut f = Fake::new();
    let mask = HarvestMask::P100_P150;
    let t = Translation::new(mask);
    // Enabled columns compact onto the first twelve Tensix x; the harvested 7 (die index 12)
    // and 10 (die index 13) take 16 and 15: the lowest die index gets the highest x (ARC
    // firmware `ComputeNocTranslation` in tt-system-firmware `lib/tenstorrent/bh_arc/
    // noc_init.c`; docs/blackhole.md, "Translated coordinates").
    assert_eq!(t.tensix(11, 5), Some((7, 5)));
    assert_eq!(t.tensix(16, 2), Some((14, 2)));
    assert_eq!(
        (t.tensix(7, 2), t.tensix(10, 2)),
        (Some((16, 2)), Some((15, 2)))
    );
    assert_eq!(t.tensix(0, 2), None);
    // Sender at NoC0 (11, 9) = NoC1 (5, 2); receivers NoC0 (11, 8) ..= (11, 2).
    let mut n = SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc1, xy(5, 2), mask, Some(t));
    let rect = Rect::new(xy(5, 3), xy(5, 9)).unwrap();
    n.multicast(l1(0x2_0000), rect, l1(0x2_0000), 2048, WriteMode::ORDERED)
        .unwrap();
    // Start is the NoC0-order maximum (the bottom), end the minimum: swapped, as for NoC1.
    assert_eq!(f.command(0)[5], multicast_coord((7, 8), (7, 2)).unwrap());
    assert_eq!(
        f.command(0)[2],
        unicast_coord(7, 9).unwrap(),
        "own coordinates translated too"
    );
    // DRAM under translation goes out in translated coordinates (as tt-metal addresses it;
    // ttsim refuses raw DRAM coordinates there): NoC1 (16, 6) = NoC0 (0, 5) is bank 3 port 0,
    // translated (17, 21).
    f.clear(0);
    n.read(NocAddr::new(xy(16, 6), 0x40).unwrap(), l1(0x3_0000), 64)
        .unwrap();
    assert_eq!(f.command(1)[2], unicast_coord(17, 21).unwrap());
    assert_eq!(
        f.command(1)[5],
        unicast_coord(7, 9).unwrap(),
        "returns to us, translated"
    );
    n.write(
        l1(0x3_0000),
        NocAddr::new(xy(7, 0), 0x80).unwrap(),
        64,
        WriteMode::ORDERED,
    )
    .unwrap();
    assert_eq!(
        f.command(0)[5],
        unicast_coord(18, 14).unwrap(),
        "NoC1 (7, 0) is NoC0 DRAM (9, 11), bank 4 port 2, translated (18, 14)"
    );
}

/// Columns 5 (die index 8) and 11 (die index 11) harvested: 5 translates to 16 and 11 to 15;
/// the enabled columns 1, 2, 3, 4, 6, 7, 10, 12.. to 1..7, 10...
fn mask_5_11() -> HarvestMask {
    HarvestMask::new((1 << 8) | (1 << 11)).unwrap()
}

#[test]
fn with_columns_5_and_11_harvested_a_multicast_next_to_them_reaches_only_its_columns() {
    let mask = mask_5_11();
    let t = Translation::new(mask);
    assert_eq!(
        (t.tensix(5, 2), t.tensix(11, 2)),
        (Some((16, 2)), Some((15, 2)))
    );
    // NoC0 sender at (1, 3); a row multicast over raw x 1..=5 (its corner on harvested 5)
    // reaches 2, 3, 4: translated 1..=4, never a corner at 16 or 15 (which would be raw 5 or
    // 11 and widen the rectangle to columns 6, 7 and 10).
    let mut f = Fake::new();
    let mut n = SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 3), mask, Some(t));
    let row = Rect::new(xy(1, 3), xy(5, 3)).unwrap();
    n.multicast(l1(0x2_0000), row, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap();
    assert_eq!(f.command(0)[5], multicast_coord((1, 3), (4, 3)).unwrap());
    f.set_status(Counter::MstWrAckReceived, 2);
    assert!(!n.writes_acked().unwrap());
    f.set_status(Counter::MstWrAckReceived, 3);
    assert!(n.writes_acked().unwrap(), "3 receivers: 2, 3, 4");
    // Raw 6..=12 (11 harvested in between) is translated 5..=10: raw 6, 7, 10, 12.
    f.clear(0);
    let right = Rect::new(xy(6, 2), xy(12, 4)).unwrap();
    n.multicast(l1(0x2_0000), right, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap();
    assert_eq!(f.command(0)[5], multicast_coord((5, 2), (10, 4)).unwrap());
    f.set_status(Counter::MstWrAckReceived, 3 + 11);
    assert!(!n.writes_acked().unwrap());
    f.set_status(Counter::MstWrAckReceived, 3 + 12);
    assert!(n.writes_acked().unwrap(), "4 columns x 3 rows");
    // NoC1: the same column block from NoC1's side, corners swapped.
    let mut f1 = Fake::new();
    // NoC0 (6, 9) is NoC1 (10, 2); NoC0 x 6..=12 is NoC1 x 4..=10, y 2..=4 is NoC1 7..=9.
    let mut n1 = SiliconNoc::<Blackhole>::new(f1.niu(), NocId::Noc1, xy(10, 2), mask, Some(t));
    let r1 = Rect::new(xy(4, 7), xy(10, 9)).unwrap();
    n1.multicast(l1(0x2_0000), r1, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap();
    assert_eq!(f1.command(0)[5], multicast_coord((10, 4), (5, 2)).unwrap());
    // A rectangle whose enabled columns are not contiguous in translated order is refused:
    // NoC0 x 15..=2 wraps to 15, 16, 1, 2 = translated 13, 14, 1, 2.
    let mut f2 = Fake::new();
    let mut n2 = SiliconNoc::<Blackhole>::new(f2.niu(), NocId::Noc0, xy(3, 3), mask, Some(t));
    let wrap = Rect::wrapping(xy(15, 3), xy(2, 3));
    let e = n2
        .multicast(l1(0x2_0000), wrap, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidAddress);
    assert_eq!(f2.command(0), [0; 9]);
}

#[test]
fn the_tile_s_identity_comes_from_its_niu_and_is_checked_against_the_mask() {
    use komorebi_hal::LogicalXy;
    use komorebi_silicon::{IdentityError, TileIdentity};
    let mut f = Fake::new();
    // Raw NoC0 (11, 5); translation on (the host's word; this NIU's `NIU_CFG_0` reads 0, as
    // ttsim's do, and does not matter); the chip (p150, columns 7 and 10 fused) says (7, 5).
    f.set_reg(0, cmd::NOC_NODE_ID, 11 | 5 << 6);
    f.set_cfg(niu::cfg::NIU_CFG_0, 0);
    f.set_cfg(niu::cfg::NOC_ID_LOGICAL, 7 | 5 << 6);
    let id = TileIdentity::<Blackhole>::read(f.niu(), true).unwrap();
    assert_eq!((id.raw, id.translated), ((11, 5), Some((7, 5))));
    // Logical x counts enabled columns 1..6 then 11: the 7th, index 6; y is 5 - 2.
    assert_eq!(id.logical(HarvestMask::P100_P150), Ok(LogicalXy::new(6, 3)));
    // A host that wrote "nothing harvested" would compute raw 11 -> translated 11.
    assert_eq!(
        id.logical(HarvestMask::NONE),
        Err(IdentityError::TranslationDisagrees {
            chip: (7, 5),
            mask: (11, 5)
        })
    );
    // Without translation only the mask can say, and it must not harvest our own column; an
    // NIU that says it translates does not change that.
    f.set_cfg(niu::cfg::NIU_CFG_0, 1 << 14);
    let id = TileIdentity::<Blackhole>::read(f.niu(), false).unwrap();
    assert_eq!(id.translated, None);
    assert_eq!(id.logical(HarvestMask::NONE), Ok(LogicalXy::new(8, 3)));
    assert_eq!(id.translation(HarvestMask::NONE, None), None);
    let fused_11 = HarvestMask::new(1 << 11).unwrap();
    assert_eq!(id.logical(fused_11), Err(IdentityError::HarvestedColumn));
    f.set_reg(0, cmd::NOC_NODE_ID, 9 | 5 << 6);
    let dram = TileIdentity::<Blackhole>::read(f.niu(), false).unwrap();
    assert_eq!(
        dram.logical(HarvestMask::NONE),
        Err(IdentityError::NotTensix)
    );
    f.set_reg(0, cmd::NOC_NODE_ID, 40);
    assert_eq!(
        TileIdentity::<Blackhole>::read(f.niu(), true),
        None,
        "x 40 is off the grid"
    );
}

#[test]
fn a_read_programs_command_buffer_1_and_completes_on_rd_resp_received() {
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(2, 5), HarvestMask::NONE, None);
    n.read(
        NocAddr::new(xy(0, 5), 0x1_0040).unwrap(),
        l1(0x2_0000),
        2048,
    )
    .unwrap();
    // A read is marked for its response, as tt-metal's are (the ISA ignores the bit on a
    // read; ttsim requires it).
    let ctrl = RESP_MARKED | VC_STATIC | (niu::UNICAST_VC as u32) << 13;
    assert_eq!(
        f.command(1),
        [
            0x1_0040,
            0,
            unicast_coord(0, 5).unwrap(),
            0x2_0000,
            0,
            unicast_coord(2, 5).unwrap(),
            2048,
            ctrl,
            1
        ]
    );
    assert!(!n.reads_done().unwrap());
    f.set_status(Counter::MstRdRespReceived, 1);
    assert!(n.reads_done().unwrap());
    // DRAM reads must be 64-byte aligned, on both sides (the NIU keeps the low bits).
    f.clear(1);
    assert_eq!(
        n.read(NocAddr::new(xy(0, 5), 0x10).unwrap(), l1(0x2_0000), 64)
            .unwrap_err()
            .kind,
        ErrorKind::Misaligned
    );
    assert_eq!(
        n.read(NocAddr::new(xy(0, 5), 0x40).unwrap(), l1(0x2_0010), 64)
            .unwrap_err()
            .kind,
        ErrorKind::Misaligned
    );
    assert_eq!(f.reg(1, cmd::NOC_CMD_CTRL), 0, "nothing was sent");
}

#[test]
fn read_pages_programs_each_page_as_a_tagged_read_from_its_port_and_stops_at_a_busy_buffer() {
    use komorebi_hal::noc::{PageReads, ReadTag};
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(2, 5), HarvestMask::NONE, None);
    let tag = ReadTag::new(2).unwrap();
    let banks = [xy(0, 5), xy(9, 11)];
    // Pages 3..8 of a buffer of 2 KiB pages at 0x1_0000 spread over the two banks: page
    // 3 + i from bank (3 + i) % 2 at 0x1_0000 + 2048 (3 + i), into L1 0x2_0000 + 2048 i.
    let reads = PageReads {
        ports: &banks,
        base: 0x1_0000,
        first: 3,
        count: 5,
        len: 2048,
        dst: l1(0x2_0000),
        tag,
    };
    let ctrl = RESP_MARKED | VC_STATIC | (niu::UNICAST_VC as u32) << 13;
    let command = |i: u32| {
        let bank = banks[(3 + i) as usize % 2];
        [
            0x1_0000 + 2048 * (3 + i),
            0,
            unicast_coord(bank.x(), bank.y()).unwrap(),
            0x2_0000 + 2048 * i,
            0,
            unicast_coord(2, 5).unwrap(),
            2048,
            ctrl,
            1,
        ]
    };
    // The fake's command buffer stays busy after a command until cleared: one page a call.
    assert_eq!(n.read_pages(0, &reads), Ok(1));
    assert_eq!(f.command(1), command(0));
    assert_eq!(f.reg(1, cmd::NOC_PACKET_TAG), 3 << 10, "transaction id 3");
    assert_eq!(n.read_pages(1, &reads), Ok(1), "busy");
    assert_eq!(f.command(1), command(0), "nothing written while busy");
    for i in 1..5 {
        f.clear(1);
        assert_eq!(n.read_pages(i, &reads), Ok(i + 1));
        assert_eq!(f.command(1), command(i), "page {i}");
    }
    assert_eq!(n.read_pages(5, &reads), Ok(5), "nothing left");
    // The five reads are counted: all land with RD_RESP_RECEIVED at 5.
    f.set_status(Counter::MstRdRespReceived, 4);
    assert!(!n.reads_done().unwrap());
    f.set_status(Counter::MstRdRespReceived, 5);
    assert!(n.reads_done().unwrap());
    // Other ports in the same places: each read from its own port again.
    f.clear(1);
    let other = [xy(0, 11), xy(9, 2)];
    assert_eq!(
        n.read_pages(
            0,
            &PageReads {
                ports: &other,
                ..reads
            }
        ),
        Ok(1)
    );
    assert_eq!(
        f.reg(1, cmd::NOC_TARG_ADDR_HI),
        unicast_coord(9, 2).unwrap()
    );
    // A page beyond 36 bits ends the reads there, the pages before it issued (page 4 would
    // start at 2^36).
    f.clear(1);
    let high = PageReads {
        base: 0xF_FFFF_E000,
        ..reads
    };
    assert_eq!(high.page(1), None);
    assert_eq!(n.read_pages(1, &high), Ok(1), "page 1 has no addresses");
    assert_eq!(f.reg(1, cmd::NOC_CMD_CTRL), 0, "and nothing was sent");
    // A misaligned DRAM source fails as `read_tagged` fails, nothing sent.
    let e = n
        .read_pages(
            0,
            &PageReads {
                base: 0x10,
                len: 64,
                ..reads
            },
        )
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Misaligned);
    assert_eq!(f.reg(1, cmd::NOC_CMD_CTRL), 0);
    // And pages landing at 16 mod 64 in L1.
    let e = n
        .read_pages(
            0,
            &PageReads {
                dst: l1(reads.dst.get() + 16),
                len: 64,
                ..reads
            },
        )
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Misaligned);
    assert_eq!(f.reg(1, cmd::NOC_CMD_CTRL), 0);
    // So does a zero length, and a port that is no tile's memory (the pages before it are
    // issued: here none).
    let e = n.read_pages(0, &PageReads { len: 0, ..reads }).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidLength);
    let nowhere = [xy(0, 5), xy(8, 0)];
    let e = n
        .read_pages(
            0,
            &PageReads {
                ports: &nowhere,
                first: 1,
                ..reads
            },
        )
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidAddress);
    assert_eq!(f.reg(1, cmd::NOC_CMD_CTRL), 0);
    // A destination range leaving L1 fails at its first page beyond L1, as `read_tagged`.
    let e = n
        .read_pages(
            0,
            &PageReads {
                dst: l1(0x17_F800),
                ..reads
            },
        )
        .map(|_| ())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidAddress);
}

/// A table of ports whose learning failed half way is never taken for one: its places hold
/// some new ports beside old ones, and its alignment is still the old table's. Learnt from L1
/// ports (16-byte sources) and then failing at its second port after a DRAM bank, a table kept
/// with its old length would pass a DRAM read from a source 16 bytes but not 64 aligned.
#[test]
fn a_port_table_that_failed_half_way_is_never_taken_for_one() {
    use komorebi_hal::noc::{PageReads, ReadTag};
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(2, 5), HarvestMask::NONE, None);
    let l1_ports = [xy(3, 3), xy(4, 3)];
    let reads = PageReads {
        ports: &l1_ports,
        base: 0x1_0010,
        first: 0,
        count: 2,
        len: 64,
        dst: l1(0x2_0000),
        tag: ReadTag::new(2).unwrap(),
    };
    // L1 sources need 16-byte alignment only: both pages go.
    assert_eq!(n.read_pages(0, &reads), Ok(1));
    f.clear(1);
    assert_eq!(n.read_pages(1, &reads), Ok(2));
    f.clear(1);
    // A bank, then a node that is no memory: the learning fails at the second port.
    let half = [xy(0, 5), xy(8, 0)];
    assert!(
        n.read_pages(
            0,
            &PageReads {
                ports: &half,
                ..reads
            }
        )
        .is_err()
    );
    assert_eq!(f.reg(1, cmd::NOC_CMD_CTRL), 0, "nothing was sent");
    // The bank beside the old second port: DRAM wants 64-byte sources, so page 0 is refused.
    let mixed = [xy(0, 5), xy(4, 3)];
    let e = n
        .read_pages(
            0,
            &PageReads {
                ports: &mixed,
                ..reads
            },
        )
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Misaligned);
    assert_eq!(f.reg(1, cmd::NOC_CMD_CTRL), 0, "nothing was sent");
}

/// Pages the batch path does not take (here: more ports than the handle remembers, 9) go page
/// by page, as `read_tagged` reads them; a busy read command buffer stops them at the page it
/// would take, which is not an error.
#[test]
fn read_pages_over_more_ports_than_a_batch_goes_page_by_page_and_stops_at_a_busy_buffer() {
    use komorebi_hal::noc::{PageReads, ReadTag};
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(2, 5), HarvestMask::NONE, None);
    let banks = [xy(0, 5); 9];
    let reads = PageReads {
        ports: &banks,
        base: 0x1_0000,
        first: 3,
        count: 5,
        len: 2048,
        dst: l1(0x2_0000),
        tag: ReadTag::new(2).unwrap(),
    };
    assert_eq!(n.read_pages(0, &reads), Ok(1));
    assert_eq!(
        (f.command(1)[0], f.command(1)[3]),
        (0x1_0000 + 3 * 2048, 0x2_0000)
    );
    assert_eq!(n.read_pages(1, &reads), Ok(1), "busy");
    f.clear(1);
    assert_eq!(n.read_pages(1, &reads), Ok(2));
    assert_eq!(
        (f.command(1)[0], f.command(1)[3]),
        (0x1_0000 + 4 * 2048, 0x2_0000 + 2048)
    );
    assert_eq!(f.reg(1, cmd::NOC_PACKET_TAG), 3 << 10, "transaction id 3");
}

/// A batch whose first page's source is off its memory's alignment (16 bytes for L1, 64 for
/// DRAM, on both sides for DRAM) fails as `read_tagged` fails, nothing sent, however its
/// misaligned bits fall: 8 off, 15 off (into L1 address 0), or 16 off on both sides.
#[test]
fn read_pages_from_a_misaligned_source_fails_whatever_its_low_bits() {
    use komorebi_hal::noc::{PageReads, ReadTag};
    let l1_port = [xy(3, 3)];
    let dram_port = [xy(0, 5)];
    let cases = [
        (&l1_port, 0x1_0008, 0x2_0000),
        (&l1_port, 0xF, 0),
        (&dram_port, 0x1_0010, 0x2_0010),
    ];
    for (ports, base, dst) in cases {
        let mut f = Fake::new();
        let mut n =
            SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(2, 5), HarvestMask::NONE, None);
        let reads = PageReads {
            ports,
            base,
            first: 0,
            count: 1,
            len: 64,
            dst: l1(dst),
            tag: ReadTag::new(2).unwrap(),
        };
        let e = n.read_pages(0, &reads).unwrap_err();
        assert_eq!(
            (e.kind, e.why),
            (ErrorKind::Misaligned, Why::ReadSourceMisaligned),
            "{base:#x} into {dst:#x}"
        );
        assert_eq!(f.reg(1, cmd::NOC_CMD_CTRL), 0, "nothing was sent");
    }
}

/// A posted write awaits no acknowledgement: `writes_acked` holds at once after it; an
/// acknowledged write after it awaits its one.
#[test]
fn a_posted_write_awaits_no_acknowledgement() {
    use komorebi_hal::noc::Ack;
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(2, 5), HarvestMask::NONE, None);
    let dst = NocAddr::l1(xy(3, 5), l1(0x9000));
    let posted = WriteMode {
        ack: Ack::Posted,
        ..WriteMode::RELAXED
    };
    n.write(l1(0x8000), dst, 64, posted).unwrap();
    assert_eq!((f.command(0)[0], f.command(0)[3]), (0x8000, 0x9000));
    assert!(n.writes_acked().unwrap(), "nothing to await");
    f.clear(0);
    n.write(l1(0x8000), dst, 64, WriteMode::RELAXED).unwrap();
    assert!(!n.writes_acked().unwrap());
    f.set_status(Counter::MstWrAckReceived, 1);
    assert!(n.writes_acked().unwrap());
}

#[test]
fn a_busy_command_buffer_is_busy_and_nothing_is_written() {
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    n.write(
        l1(0x8000),
        NocAddr::l1(xy(2, 3), l1(0x9000)),
        64,
        WriteMode::ORDERED,
    )
    .unwrap();
    let before = f.command(0);
    let e = n
        .write(
            l1(0xA000),
            NocAddr::l1(xy(3, 3), l1(0xB000)),
            64,
            WriteMode::ORDERED,
        )
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Busy);
    assert_eq!(f.command(0), before);
    f.clear(0);
    n.write(
        l1(0xA000),
        NocAddr::l1(xy(3, 3), l1(0xB000)),
        64,
        WriteMode::ORDERED,
    )
    .unwrap();
    assert_eq!(f.command(0)[0], 0xA000);
}

#[test]
fn a_long_transfer_goes_as_16_kib_packets_issued_as_the_command_buffer_frees() {
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    n.write(
        l1(0x4_0010),
        NocAddr::l1(xy(2, 3), l1(0x8_0000)),
        40_000,
        WriteMode::ORDERED,
    )
    .unwrap();
    // Packet 1: 16 KiB from the start (16-byte alignment is enough: software splits).
    let first = f.command(0);
    assert_eq!((first[0], first[3], first[6]), (0x4_0010, 0x8_0000, 16384));
    // Nothing else goes, and nothing completes, until the last packet has gone.
    let marker = |n: &mut SiliconNoc<Blackhole>| {
        n.write(
            l1(0x4A10),
            NocAddr::l1(xy(1, 9), l1(0x4A40)),
            4,
            WriteMode::ORDERED,
        )
    };
    assert_eq!(marker(&mut n).unwrap_err().kind, ErrorKind::Busy);
    assert_eq!(f.command(2), [0; 9]);
    f.set_status(Counter::MstWrAckReceived, 1);
    assert!(!n.writes_acked().unwrap() && !n.writes_sent().unwrap());
    // Packet 2 goes on the next call once buffer 0 is free; packet 3 on the one after.
    f.clear(0);
    assert_eq!(marker(&mut n).unwrap_err().kind, ErrorKind::Busy);
    let second = f.command(0);
    assert_eq!(
        (second[0], second[3], second[6]),
        (0x4_4010, 0x8_4000, 16384)
    );
    f.clear(0);
    assert!(
        !n.writes_acked().unwrap(),
        "issues packet 3, 2 acks missing"
    );
    let third = f.command(0);
    assert_eq!(
        (third[0], third[3], third[6]),
        (0x4_8010, 0x8_8000, 40_000 - 2 * 16384)
    );
    assert_eq!(third[5], unicast_coord(2, 3).unwrap(), "same destination");
    f.set_status(Counter::MstWrAckReceived, 3);
    assert!(n.writes_acked().unwrap(), "one ack per packet");
    marker(&mut n).unwrap();
    assert_eq!(f.command(2)[6], 4);
    f.set_status(Counter::MstWrAckReceived, 4);
    assert!(n.writes_acked().unwrap());
    // A read splits the same way, each packet counted in RD_RESP_RECEIVED.
    f.clear(0);
    f.clear(2);
    n.read(
        NocAddr::new(xy(0, 5), 0x1_0000).unwrap(),
        l1(0x2_0000),
        32768,
    )
    .unwrap();
    assert_eq!(f.command(1)[6], 16384);
    f.clear(1);
    f.set_status(Counter::MstRdRespReceived, 1);
    assert!(!n.reads_done().unwrap(), "issues packet 2");
    assert_eq!(f.command(1)[0], 0x1_4000);
    f.set_status(Counter::MstRdRespReceived, 2);
    assert!(n.reads_done().unwrap());
}

#[test]
fn multicast_acks_exclude_the_sender_and_harvested_columns() {
    let mut f = Fake::new();
    // NoC0 row 2, x 1..=16 from x = 3: 14 Tensix columns, minus the two fused, minus the sender.
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(3, 2), HarvestMask::P100_P150, None);
    let rect = Rect::new(xy(1, 2), xy(16, 2)).unwrap();
    n.multicast(l1(0x2_0000), rect, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap();
    f.set_status(Counter::MstWrAckReceived, 10);
    assert!(!n.writes_acked().unwrap());
    f.set_status(Counter::MstWrAckReceived, 11);
    assert!(n.writes_acked().unwrap());
}

#[test]
fn targets_off_the_17_by_12_grid_are_refused_on_both_nocs() {
    for (noc, node) in [(NocId::Noc0, xy(1, 2)), (NocId::Noc1, xy(15, 9))] {
        let mut f = Fake::new();
        let mut n = SiliconNoc::<Blackhole>::new(f.niu(), noc, node, HarvestMask::NONE, None);
        for target in [xy(17, 3), xy(3, 12), xy(63, 63)] {
            let e = n
                .write(
                    l1(0x8000),
                    NocAddr::l1(target, l1(0x9000)),
                    64,
                    WriteMode::ORDERED,
                )
                .unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidAddress, "{noc:?} {target:?}");
        }
        assert_eq!(f.command(0), [0; 9], "nothing issued");
    }
}

#[test]
fn resync_takes_the_hardware_counters_as_the_new_baseline() {
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    n.write(
        l1(0x8000),
        NocAddr::l1(xy(2, 3), l1(0x9000)),
        64,
        WriteMode::ORDERED,
    )
    .unwrap();
    assert!(!n.writes_acked().unwrap());
    n.resync().unwrap();
    assert!(n.writes_acked().unwrap(), "the lost ack is forgotten");
}

#[test]
fn circular_buffers_count_in_the_stream_registers_with_tt_metal_s_wrap_rules() {
    let mut regs = vec![0u32; stream::STREAM_BLOCK_BYTES / 4].into_boxed_slice();
    let mut mem = vec![0u8; 0x3_0000].into_boxed_slice();
    for (i, b) in mem[0x2_0000..0x2_0000 + 256].iter_mut().enumerate() {
        *b = i as u8;
    }
    // SAFETY: both boxes outlive the handles.
    let streams = unsafe { Streams::from_ptr(regs.as_mut_ptr().cast()) };
    let cb3 = CbIndex::new(3).unwrap();
    // SAFETY: as above; the buffer lies inside `mem`.
    let mut producer = unsafe {
        SiliconCb::<Blackhole>::from_ptr(streams, cb3.get(), mem.as_ptr() as usize, 0x2_0000, 64, 4)
    }
    .unwrap();
    // SAFETY: as above.
    let mut consumer = unsafe {
        SiliconCb::<Blackhole>::from_ptr(streams, cb3.get(), mem.as_ptr() as usize, 0x2_0000, 64, 4)
    }
    .unwrap();
    producer.push(3).unwrap();
    assert_eq!(
        regs[(3 * stream::STREAM_STRIDE + 4 * stream::TILES_RECEIVED_REG) / 4],
        3
    );
    assert_eq!(producer.write_ptr(), l1(0x2_0000 + 3 * 64));
    assert_eq!(
        producer.push(2).unwrap_err().kind,
        komorebi_hal::cb::ErrorKind::Overflow
    );
    let mut page = [0u8; 4];
    consumer.read_page(1, 8, &mut page).unwrap();
    assert_eq!(page, [72, 73, 74, 75]);
    consumer.pop(2).unwrap();
    assert_eq!(
        regs[(3 * stream::STREAM_STRIDE + 4 * stream::TILES_ACKED_REG) / 4],
        2
    );
    assert_eq!(
        producer.push(2).unwrap_err().kind,
        komorebi_hal::cb::ErrorKind::Wrap,
        "would cross the end"
    );
    producer.push(1).unwrap();
    assert_eq!(producer.write_ptr(), l1(0x2_0000), "wrapped at the end");
    assert_eq!(consumer.pages_ready().unwrap(), 2);
    assert_eq!(
        consumer.read_page(2, 0, &mut page).unwrap_err().kind,
        komorebi_hal::cb::ErrorKind::Underflow
    );
}

#[test]
fn boot_zeroes_every_circular_buffer_s_stream_counters() {
    let mut regs = vec![0xABCDu32; stream::STREAM_BLOCK_BYTES / 4].into_boxed_slice();
    // SAFETY: the box outlives the handle.
    let streams = unsafe { Streams::from_ptr(regs.as_mut_ptr().cast()) };
    SiliconCb::<Blackhole>::clear_counters(streams);
    for cb in 0..stream::CIRCULAR_BUFFERS {
        for reg in [stream::TILES_RECEIVED_REG, stream::TILES_ACKED_REG] {
            assert_eq!(
                regs[(cb * stream::STREAM_STRIDE + 4 * reg) / 4],
                0,
                "cb {cb}"
            );
        }
    }
    // Other stream registers are left alone.
    assert_eq!(regs[0], 0xABCD);
}

#[test]
fn the_control_block_is_l1_words_with_the_abi_s_stop_flag_and_wait_limit() {
    let mut block = vec![0u32; 0x400].into_boxed_slice();
    let layout = ControlLayout {
        base: 0x4000,
        len: 0x1000,
        stop_offset: 0x10,
        wait_limit_offset: 0x18,
    };
    fn clock() -> u64 {
        1234
    }
    // SAFETY: the box outlives the handle and has `len` bytes.
    let mut c = unsafe { SiliconCtrl::<Blackhole>::from_ptr(block.as_mut_ptr(), layout, clock) };
    c.store(0x100, 7).unwrap();
    assert_eq!(c.load(0x100).unwrap(), 7);
    assert_eq!(c.addr(0xA10).unwrap(), l1(0x4A10));
    assert!(!c.stop_requested().unwrap());
    c.request_stop().unwrap();
    assert!(c.stop_requested().unwrap());
    c.store(0x18, 5).unwrap();
    c.store(0x1C, 1).unwrap();
    assert_eq!(c.wait_limit().unwrap(), (1 << 32) | 5);
    assert_eq!(c.now(), 1234);
    assert_eq!(
        c.load(0x1000).unwrap_err().kind,
        komorebi_hal::control::ErrorKind::OutOfRange
    );
    assert_eq!(
        c.load(0x102).unwrap_err().kind,
        komorebi_hal::control::ErrorKind::Misaligned
    );
    assert_eq!(block[0x40], 7);
    assert_eq!(block[4], 1, "stop word");
}

#[test]
fn load_words_reads_a_strided_run_and_refuses_what_load_refuses() {
    use komorebi_hal::control::ErrorKind as CtrlKind;
    let mut block: Box<[u32]> = (0..0x400u32).map(|i| 0x100 + i).collect();
    let layout = ControlLayout {
        base: 0x4000,
        len: 0x1000,
        stop_offset: 0x10,
        wait_limit_offset: 0x18,
    };
    // SAFETY: the box outlives the handle and has `len` bytes.
    let mut c = unsafe { SiliconCtrl::<Blackhole>::from_ptr(block.as_mut_ptr(), layout, || 0) };
    // Consecutive words, then every fourth (a DONE-BY table's 16-byte slots).
    let mut w = [0u32; 3];
    c.load_words(0xA00, 4, &mut w).unwrap();
    assert_eq!(w, [0x380, 0x381, 0x382]);
    c.load_words(0xA40, 16, &mut w).unwrap();
    assert_eq!(w, [0x390, 0x394, 0x398]);
    // The same words `load` gives one at a time.
    for (i, &v) in w.iter().enumerate() {
        assert_eq!(c.load(0xA40 + 16 * i as u32).unwrap(), v);
    }
    // Every length across the loads' groups of four and their remainder, both strides.
    for stride in [4, 16] {
        for n in 0..=11usize {
            let mut w = vec![0u32; n];
            c.load_words(0x800, stride, &mut w).unwrap();
            let one_by_one: Vec<u32> = (0..n as u32)
                .map(|i| c.load(0x800 + stride * i).unwrap())
                .collect();
            assert_eq!(w, one_by_one, "{n} words, stride {stride}");
        }
    }
    // Nothing to load: nothing checked.
    c.load_words(0x2000, 4, &mut []).unwrap();
    // The last word past the block, a misaligned first word or stride, a span past 2^32.
    let kind = |c: &mut SiliconCtrl<Blackhole>, first, stride, n: usize| {
        let mut w = vec![0u32; n];
        c.load_words(first, stride, &mut w).unwrap_err().kind
    };
    assert_eq!(kind(&mut c, 0xFF8, 4, 3), CtrlKind::OutOfRange);
    let mut last = [0u32; 1];
    c.load_words(0xFFC, 4, &mut last).unwrap();
    assert_eq!(last, [0x4FF], "the block's last word");
    // One word has no stride to check: any stride loads it.
    last = [0];
    c.load_words(0xFFC, 3, &mut last).unwrap();
    assert_eq!(last, [0x4FF], "one word, stride 3");
    assert_eq!(kind(&mut c, 0x102, 4, 2), CtrlKind::Misaligned);
    assert_eq!(kind(&mut c, 0x100, 6, 2), CtrlKind::Misaligned);
    assert_eq!(kind(&mut c, 0x100, 0x8000_0000, 3), CtrlKind::OutOfRange);
}

/// A buffer of 4 pages of 64 bytes at L1 0x2_0000 over host memory whose page `p` holds bytes
/// `p * 64 + i`; the stream registers and the memory are returned to keep them alive.
fn buffer_over(mem: &mut [u8], regs: &mut [u32]) -> (SiliconCb<Blackhole>, SiliconCb<Blackhole>) {
    for (i, b) in mem[0x2_0000..0x2_0000 + 256].iter_mut().enumerate() {
        *b = i as u8;
    }
    // SAFETY: the caller keeps both slices alive as long as the handles.
    let streams = unsafe { Streams::from_ptr(regs.as_mut_ptr().cast()) };
    let cb = CbIndex::new(5).unwrap();
    let base = mem.as_ptr() as usize;
    // Two handles over one buffer: the producer's and the consumer's.
    // SAFETY: as above; the buffer lies inside `mem`.
    let open =
        || unsafe { SiliconCb::<Blackhole>::from_ptr(streams, cb.get(), base, 0x2_0000, 64, 4) };
    (open().unwrap(), open().unwrap())
}

#[test]
fn a_buffer_reads_whole_words_byte_tails_and_wrapped_pages_at_their_edges() {
    use komorebi_hal::cb::ErrorKind as CbKind;
    // Word-aligned backing memory, so the word path is the one taken.
    let mut words = vec![0u32; 0x3_0000 / 4].into_boxed_slice();
    // SAFETY: viewing the u32 box as bytes; it outlives the handles.
    let mem = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), 0x3_0000) };
    let mut regs = vec![0u32; stream::STREAM_BLOCK_BYTES / 4].into_boxed_slice();
    let (mut producer, mut consumer) = buffer_over(mem, &mut regs);
    assert_eq!((producer.capacity(), producer.page_size()), (4, 64));
    assert_eq!(producer.base(), l1(0x2_0000));
    // A push of exactly the free pages is allowed; one more is not.
    producer.push(4).unwrap();
    assert_eq!(
        producer.push(1).unwrap_err().kind,
        CbKind::Overflow,
        "4 of 4 pushed"
    );
    // A whole page through the word path, then a 7-byte read: one word and a 3-byte tail.
    let mut page = [0u8; 64];
    consumer.read_page(1, 0, &mut page).unwrap();
    assert_eq!(page.to_vec(), (64u8..128).collect::<Vec<_>>());
    let mut tail = [0u8; 7];
    consumer.read_page(2, 56, &mut tail).unwrap();
    assert_eq!(tail, [184, 185, 186, 187, 188, 189, 190]);
    // Exactly to the page's end is allowed; one byte more is not.
    consumer.read_page(3, 60, &mut [0u8; 4]).unwrap();
    assert_eq!(
        consumer.read_page(3, 61, &mut [0u8; 4]).unwrap_err().kind,
        CbKind::OutOfRange
    );
    // After popping 3 pages, page 0 of the consumer is slot 3, page 1 wraps to slot 0.
    consumer.pop(3).unwrap();
    assert_eq!(consumer.read_ptr(), l1(0x2_0000 + 3 * 64));
    producer.push(3).unwrap();
    let mut w = [0u8; 4];
    consumer.read_page(0, 8, &mut w).unwrap();
    assert_eq!(w, [200, 201, 202, 203]);
    consumer.read_page(1, 4, &mut w).unwrap();
    assert_eq!(w, [4, 5, 6, 7], "wrapped to slot 0");
    consumer.read_page(3, 0, &mut w).unwrap();
    assert_eq!(w, [128, 129, 130, 131], "page 3 is slot 2");
    assert_eq!(
        consumer.read_page(4, 0, &mut w).unwrap_err().kind,
        CbKind::Underflow,
        "4 ready, page 4 is not"
    );
    // A pop that would cross the buffer's end is refused even with the pages ready.
    assert_eq!(consumer.pop(2).unwrap_err().kind, CbKind::Wrap);
    consumer.pop(1).unwrap();
    assert_eq!(consumer.read_ptr(), l1(0x2_0000), "back at slot 0");
    // Every page free and the producer at slot 1: a push of 4 would cross the end, so it is
    // refused as a wrap although 4 pages are free.
    consumer.pop(3).unwrap();
    producer.push(1).unwrap();
    consumer.pop(1).unwrap();
    producer.push(1).unwrap();
    consumer.pop(1).unwrap();
    assert_eq!(producer.write_ptr(), l1(0x2_0000 + 64));
    assert_eq!(producer.pages_free().unwrap(), 4);
    assert_eq!(
        producer.push(4).unwrap_err().kind,
        CbKind::Wrap,
        "from slot 1 four pages cross the end"
    );
    producer.push(3).unwrap();
    assert_eq!(
        producer.write_ptr(),
        l1(0x2_0000),
        "up to the end, then slot 0"
    );
    drop(words);
}

#[test]
fn a_buffer_over_unaligned_memory_reads_byte_by_byte() {
    // A host buffer at an odd address: the byte path.
    let mut backing = vec![0u8; 0x3_0001].into_boxed_slice();
    let odd = (backing.as_ptr() as usize % 4 == 0) as usize;
    let mem = &mut backing[odd..odd + 0x3_0000];
    let mut regs = vec![0u32; stream::STREAM_BLOCK_BYTES / 4].into_boxed_slice();
    let (mut producer, mut consumer) = buffer_over(mem, &mut regs);
    producer.push(2).unwrap();
    let mut b = [0u8; 6];
    consumer.read_page(1, 10, &mut b).unwrap();
    assert_eq!(b, [74, 75, 76, 77, 78, 79]);
}

/// Every run `scan_page` lends for `page`: (first word, words as little-endian bytes).
fn scanned(cb: &mut SiliconCb<Blackhole>, page: u16) -> Vec<(u32, Vec<u8>)> {
    let mut runs = Vec::new();
    let all = cb
        .scan_page(page, &mut |first, run| {
            runs.push((first, run.iter().flat_map(|w| w.to_le_bytes()).collect()));
            true
        })
        .unwrap();
    assert!(all, "every run accepted");
    runs
}

#[test]
fn a_scan_lends_the_ready_page_in_place_and_refuses_unaligned_memory() {
    use komorebi_hal::cb::ErrorKind as CbKind;
    let mut words = vec![0u32; 0x3_0000 / 4].into_boxed_slice();
    // SAFETY: viewing the u32 box as bytes; it outlives the handles.
    let mem = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), 0x3_0000) };
    let mut regs = vec![0u32; stream::STREAM_BLOCK_BYTES / 4].into_boxed_slice();
    let (mut producer, mut consumer) = buffer_over(mem, &mut regs);
    producer.push(4).unwrap();
    consumer.pop(3).unwrap();
    producer.push(2).unwrap();
    // Aligned: one run, the whole page where it lies; page 1 of the consumer wraps to slot 0.
    assert_eq!(scanned(&mut consumer, 0), [(0, (192u8..=255).collect())]);
    assert_eq!(scanned(&mut consumer, 1), [(0, (0u8..64).collect())]);
    assert_eq!(
        consumer.scan_page(3, &mut |_, _| true).unwrap_err().kind,
        CbKind::Underflow,
        "3 ready, page 3 is not"
    );
    // In place: the run is the buffer's slot 3 itself, not a copy.
    let slot3 = mem.as_ptr() as usize + 0x2_0000 + 3 * 64;
    let mut at = 0;
    consumer
        .scan_page(0, &mut |_, run| {
            at = run.as_ptr() as usize;
            true
        })
        .unwrap();
    assert_eq!(at, slot3, "lent where it lies");
    // A refused run is the answer.
    assert_eq!(consumer.scan_page(0, &mut |_, _| false), Ok(false));
    drop(words);

    // Unaligned memory cannot be lent as words: refused, saying why (a card's buffers are
    // aligned; `read_page` still reads such a page).
    let mut backing = vec![0u8; 0x3_0001].into_boxed_slice();
    let odd = (backing.as_ptr() as usize % 4 == 0) as usize;
    let mem = &mut backing[odd..odd + 0x3_0000];
    let mut regs = vec![0u32; stream::STREAM_BLOCK_BYTES / 4].into_boxed_slice();
    let (mut producer, mut consumer) = buffer_over(mem, &mut regs);
    producer.push(2).unwrap();
    let e = consumer.scan_page(1, &mut |_, _| true).unwrap_err();
    assert_eq!((e.kind, e.why), (CbKind::Other, Why::PageMisaligned));
}

#[test]
fn requests_are_checked_before_anything_is_written() {
    let mut f = Fake::new();
    let mask = HarvestMask::P100_P150;
    let mut n = SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), mask, None);
    assert_eq!(n.node(), xy(1, 2));
    let dst = NocAddr::l1(xy(2, 3), l1(0x9000));
    let kinds = [
        (
            n.write(l1(0x8000), dst, 0, WriteMode::ORDERED),
            ErrorKind::InvalidLength,
        ),
        (
            n.write(l1(0x8008), dst, 64, WriteMode::ORDERED),
            ErrorKind::Misaligned,
        ),
        // L1 is 0x18_0000 bytes: up to its end is allowed, a byte past it is not.
        (
            n.write(l1(0x17_FFF0), dst, 17, WriteMode::ORDERED),
            ErrorKind::InvalidAddress,
        ),
        // x = 7 is harvested on a p150.
        (
            n.write(
                l1(0x8000),
                NocAddr::l1(xy(7, 3), l1(0x9000)),
                64,
                WriteMode::ORDERED,
            ),
            ErrorKind::InvalidAddress,
        ),
    ];
    for (i, (r, kind)) in kinds.into_iter().enumerate() {
        assert_eq!(r.unwrap_err().kind, kind, "request {i}");
    }
    assert_eq!(f.command(0), [0; 9], "nothing issued");
    assert_eq!(f.command(2), [0; 9], "nothing issued");
    n.write(l1(0x17_FFF0), dst, 16, WriteMode::ORDERED).unwrap();
    assert_eq!(f.command(2)[0], 0x17_FFF0, "the last 16 bytes of L1 go");
}

#[test]
fn errors_say_their_kind_and_why() {
    use komorebi_silicon::{Error, Why};
    let e = Error::new(ErrorKind::Busy, Why::CmdBufBusy);
    assert_eq!(e.to_string(), "Busy: command buffer busy");
    assert_eq!(
        Why::Wrap.to_string(),
        "push or pop would cross the end of the buffer"
    );
}

#[test]
fn a_tile_under_translation_has_the_mask_s_translation() {
    use komorebi_silicon::TileIdentity;
    let mut f = Fake::new();
    f.set_reg(0, cmd::NOC_NODE_ID, 11 | 5 << 6);
    f.set_cfg(niu::cfg::NOC_ID_LOGICAL, 7 | 5 << 6);
    let id = TileIdentity::<Blackhole>::read(f.niu(), true).unwrap();
    let t = id.translation(HarvestMask::P100_P150, None).unwrap();
    assert_eq!(t, Translation::new(HarvestMask::P100_P150));
    assert_eq!(t.tensix(11, 5), Some((7, 5)));
    // With DRAM bank 1 fused, the DRAM columns swap and bank 1's row goes last.
    let t = id.translation(HarvestMask::P100_P150, Some(1)).unwrap();
    assert_eq!(t, Translation::with_dram(HarvestMask::P100_P150, Some(1)));
    assert_eq!(t.tensix(11, 5), Some((7, 5)));
}

#[test]
fn the_control_block_knows_its_length() {
    let mut block = vec![0u32; 0x400].into_boxed_slice();
    let layout = ControlLayout {
        base: 0x4000,
        len: 0x1000,
        stop_offset: 0x10,
        wait_limit_offset: 0x18,
    };
    // SAFETY: the box outlives the handle and has `len` bytes.
    let c = unsafe { SiliconCtrl::<Blackhole>::from_ptr(block.as_mut_ptr(), layout, || 0) };
    assert_eq!(c.len(), 0x1000);
    assert!(!c.is_empty());
}

#[test]
fn a_buffer_off_the_noc_s_16_bytes_gets_no_handle() {
    let mut regs = vec![0u32; stream::STREAM_BLOCK_BYTES / 4].into_boxed_slice();
    let mem = vec![0u8; 0x3_0000].into_boxed_slice();
    // SAFETY: both boxes outlive the handles.
    let streams = unsafe { Streams::from_ptr(regs.as_mut_ptr().cast()) };
    let open = |base: u32, page_size: u32| {
        // SAFETY: as above; every buffer tried lies inside `mem`.
        unsafe {
            SiliconCb::<Blackhole>::from_ptr(streams, 1, mem.as_ptr() as usize, base, page_size, 4)
        }
    };
    // A base off a word would have `base()` and the pointers name L1 address 0 (the boot
    // stub) while the NoC filled the real pages.
    assert!(open(0x2_0002, 64).is_none(), "a base off a word");
    assert!(open(0x2_0008, 64).is_none(), "a base off 16 bytes");
    assert!(open(0x2_0000, 40).is_none(), "a page size off 16 bytes");
    let cb = open(0x2_0010, 48).expect("16-byte multiples");
    assert_eq!((cb.base(), cb.write_ptr()), (l1(0x2_0010), l1(0x2_0010)));
}

#[test]
fn a_buffer_of_more_than_32768_pages_names_its_slots_past_u16() {
    // 40,000 pages of 16 bytes: the oldest page at slot 30,000 and page 35,536 after it make
    // 65,536, past a u16; the slot is 25,536.
    const PAGES: u16 = 40_000;
    let base = 0x3_0000u32;
    let mut words = vec![0u32; (base as usize + PAGES as usize * 16) / 4].into_boxed_slice();
    for slot in 0..PAGES as usize {
        words[base as usize / 4 + slot * 4] = slot as u32;
    }
    let mut regs = vec![0u32; stream::STREAM_BLOCK_BYTES / 4].into_boxed_slice();
    // SAFETY: both boxes outlive the handles; the buffer lies inside `words`.
    let streams = unsafe { Streams::from_ptr(regs.as_mut_ptr().cast()) };
    let at = words.as_ptr() as usize;
    // SAFETY: as above: `words` holds the buffer and outlives both handles.
    let open = || unsafe { SiliconCb::<Blackhole>::from_ptr(streams, 2, at, base, 16, PAGES) };
    let (mut producer, mut consumer) = (open().unwrap(), open().unwrap());
    producer.push(PAGES).unwrap();
    consumer.pop(30_000).unwrap();
    producer.push(30_000).unwrap();
    assert_eq!(consumer.pages_ready().unwrap(), PAGES);
    let mut first = [0u8; 4];
    consumer.read_page(35_536, 0, &mut first).unwrap();
    assert_eq!(u32::from_le_bytes(first), 25_536);
    let scanned = scanned(&mut consumer, 35_536);
    assert_eq!(scanned[0].1[..4], 25_536u32.to_le_bytes());
}

/// Local address bits 35:32 (DRAM above 4 GiB) go into `MID`, the low 32 bits into `LO`: a
/// write's destination (the `RET` words), a read's source (the `TARG` words).
#[test]
fn a_local_address_above_4_gib_puts_its_bits_35_to_32_in_mid() {
    let mut f = Fake::new();
    let mut n =
        SiliconNoc::<Blackhole>::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    let far = NocAddr::new(xy(2, 3), 0x9_1234_5640).unwrap();
    n.write(l1(0x8000), far, 64, WriteMode::ORDERED).unwrap();
    assert_eq!(f.command(0)[3..5], [0x1234_5640, 9]);
    n.read(far, l1(0x8000), 64).unwrap();
    assert_eq!(f.command(1)[..2], [0x1234_5640, 9]);
    // And a batch's page: page 1 of 2 KiB pages at 0x9_0000_0000.
    use komorebi_hal::noc::{PageReads, ReadTag};
    f.clear(1);
    let reads = PageReads {
        ports: &[xy(2, 3)],
        base: 0x9_0000_0000,
        first: 1,
        count: 1,
        len: 2048,
        dst: l1(0x2_0000),
        tag: ReadTag::new(0).unwrap(),
    };
    assert_eq!(n.read_pages(0, &reads), Ok(1));
    assert_eq!(f.command(1)[..2], [0x800, 9]);
}

/// The control block's harvest word is the chip's harvest mask as `HarvestMask::new` reads it.
#[test]
fn the_harvest_word_is_read_as_a_harvest_mask() {
    use komorebi_silicon::Chip;
    for w in [0, 1, 2, 0x41, u32::MAX] {
        assert_eq!(Blackhole::harvest(w), HarvestMask::new(w).ok(), "{w:#x}");
    }
    assert!(Blackhole::harvest(1).is_some_and(|m| m != HarvestMask::NONE));
}
