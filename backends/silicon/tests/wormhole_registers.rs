//! The same backend on Wormhole B0: exact register writes over a fake Wormhole NIU block (plain
//! host memory laid out as `wormhole-pac` says: command buffers 0x400 apart, `NOC_CMD_CTRL` at
//! 0x28, the coordinates in `*_ADDR_MID`, no `*_HI` and no `NOC_BRCST_EXCLUDE`).

use komorebi_hal::noc::{ErrorKind, NocMulticast, WriteMode};
use komorebi_hal::{CircularBuffer, L1Addr, LogicalXy, NocAddr, NocId, Rect, Xy};
use komorebi_silicon::{IdentityError, SiliconCb, SiliconNoc, TileIdentity, Why, Wormhole};
use wormhole_pac::addr::{multicast_coord, unicast_coord};
use wormhole_pac::harvest::HarvestMask;
use wormhole_pac::niu::{self, NIU_BLOCK_BYTES, Niu, cfg, cmd, counter};
use wormhole_pac::stream::{self, Streams};
use wormhole_pac::translate::Translation;

fn xy(x: u8, y: u8) -> Xy {
    Xy::new(x, y).unwrap()
}

fn l1(a: u32) -> L1Addr {
    L1Addr::new(a).unwrap()
}

/// The 1 KiB of the NoC register block a command buffer and the counters live in, per buffer.
struct Fake {
    regs: Box<[u32]>,
}

impl Fake {
    fn new() -> Self {
        // The block's counters (0x200..0x300) lie inside buffer 0's 0x400 bytes.
        Self {
            regs: vec![0u32; NIU_BLOCK_BYTES / 4].into_boxed_slice(),
        }
    }

    fn niu(&mut self) -> Niu {
        // SAFETY: the box outlives every handle in these tests and covers the whole block.
        unsafe { Niu::from_ptr(self.regs.as_mut_ptr().cast()) }
    }

    fn word(&self, offset: usize) -> u32 {
        self.regs[offset / 4]
    }

    fn set(&mut self, offset: usize, v: u32) {
        self.regs[offset / 4] = v;
    }

    fn reg(&self, buf: usize, offset: usize) -> u32 {
        self.word(buf * niu::NOC_CMD_BUF_OFFSET + offset)
    }

    fn counter(&mut self, index: usize, v: u32) {
        self.set(niu::NOC_STATUS_OFFSET + 4 * index, v);
    }

    fn clear(&mut self, buf: usize) {
        self.set(buf * niu::NOC_CMD_BUF_OFFSET + cmd::NOC_CMD_CTRL, 0);
    }

    /// The words a command writes into command buffer `buf`: target LO and MID, return LO and
    /// MID, length, `NOC_CTRL`, `NOC_CMD_CTRL`.
    fn command(&self, buf: usize) -> [u32; 7] {
        [
            self.reg(buf, cmd::NOC_TARG_ADDR_LO),
            self.reg(buf, cmd::NOC_TARG_ADDR_MID),
            self.reg(buf, cmd::NOC_RET_ADDR_LO),
            self.reg(buf, cmd::NOC_RET_ADDR_MID),
            self.reg(buf, cmd::NOC_AT_LEN_BE),
            self.reg(buf, cmd::NOC_CTRL),
            self.reg(buf, cmd::NOC_CMD_CTRL),
        ]
    }
}

const ORDERED_WRITE: u32 =
    niu::ctrl::WR | niu::ctrl::RESP_MARKED | niu::ctrl::VC_STATIC | niu::ctrl::static_vc(1);
const ORDERED_MULTICAST: u32 = niu::ctrl::WR
    | niu::ctrl::RESP_MARKED
    | niu::ctrl::BRCST_PACKET
    | niu::ctrl::PATH_RESERVE
    | niu::ctrl::VC_STATIC
    | niu::ctrl::static_vc(4);

fn noc(f: &mut Fake, id: NocId, node: Xy, harvest: HarvestMask) -> SiliconNoc<Wormhole> {
    SiliconNoc::<Wormhole>::new(f.niu(), id, node, harvest, None)
}

#[test]
fn a_new_handle_clears_the_packet_tags_and_the_outstanding_counts_and_nothing_at_0x2c() {
    let mut f = Fake::new();
    for buf in 0..4 {
        f.set(buf * 0x400 + cmd::NOC_PACKET_TAG, 0x3C00);
        // NOC_NODE_ID, where Blackhole keeps NOC_BRCST_EXCLUDE: read only, never written.
        f.set(buf * 0x400 + cmd::NOC_NODE_ID, 0xABCD);
    }
    let _n = noc(&mut f, NocId::Noc0, xy(1, 1), HarvestMask::NONE);
    for buf in 0..4 {
        assert_eq!(f.reg(buf, cmd::NOC_PACKET_TAG), 0, "buffer {buf}");
        assert_eq!(f.reg(buf, cmd::NOC_NODE_ID), 0xABCD, "buffer {buf}");
    }
    assert_eq!(f.word(niu::NOC_CLEAR_OUTSTANDING_REQ_CNT), 0xFFFF);
}

#[test]
fn a_noc0_write_puts_the_coordinates_in_the_middle_words_of_buffer_0() {
    let mut f = Fake::new();
    let mut n = noc(&mut f, NocId::Noc0, xy(1, 1), HarvestMask::NONE);
    n.write(
        l1(0x8000),
        NocAddr::l1(xy(2, 3), l1(0x9000)),
        64,
        WriteMode::ORDERED,
    )
    .unwrap();
    assert_eq!(
        f.command(0),
        [
            0x8000,
            unicast_coord(1, 1).unwrap(),
            0x9000,
            unicast_coord(2, 3).unwrap(),
            64,
            ORDERED_WRITE,
            1
        ]
    );
    assert_eq!(unicast_coord(2, 3).unwrap(), 2 << 4 | 3 << 10);
    assert_eq!(f.command(1), [0; 7]);
    // Sent when WRITE_REQS_OUTGOING_ID(0) is back at 0, acked when WR_ACK_RECEIVED caught up.
    f.counter(counter::NIU_MST_WRITE_REQS_OUTGOING_ID, 1);
    assert!(!n.writes_sent().unwrap() && !n.writes_acked().unwrap());
    f.counter(counter::NIU_MST_WRITE_REQS_OUTGOING_ID, 0);
    f.counter(counter::NIU_MST_WR_ACK_RECEIVED, 1);
    assert!(n.writes_sent().unwrap() && n.writes_acked().unwrap());
}

#[test]
fn a_dram_read_needs_32_byte_alignment_and_splits_at_8_kib() {
    let mut f = Fake::new();
    let mut n = noc(&mut f, NocId::Noc0, xy(1, 1), HarvestMask::NONE);
    // DRAM bank 0 port 0 at NoC0 (0, 0); 32-byte aligned is enough (Blackhole asks 64).
    let dram = NocAddr::new(xy(0, 0), 0x1_0020).unwrap();
    n.read(dram, l1(0x2_0000), 20_000).unwrap();
    assert_eq!(
        f.command(1),
        [
            0x1_0020,
            unicast_coord(0, 0).unwrap(),
            0x2_0000,
            unicast_coord(1, 1).unwrap(),
            8192,
            niu::ctrl::RESP_MARKED | niu::ctrl::VC_STATIC | niu::ctrl::static_vc(1),
            1
        ]
    );
    f.clear(1);
    f.counter(counter::NIU_MST_RD_RESP_RECEIVED, 1);
    assert!(!n.reads_done().unwrap(), "issues packet 2");
    assert_eq!(f.command(1)[0], 0x1_0020 + 8192);
    f.clear(1);
    assert!(!n.reads_done().unwrap(), "issues packet 3");
    assert_eq!(
        (f.command(1)[0], f.command(1)[4]),
        (0x1_0020 + 16384, 20_000 - 16384)
    );
    f.counter(counter::NIU_MST_RD_RESP_RECEIVED, 3);
    assert!(n.reads_done().unwrap());
    let e = n
        .read(NocAddr::new(xy(0, 0), 0x1_0010).unwrap(), l1(0x2_0000), 64)
        .unwrap_err();
    assert_eq!(
        (e.kind, e.why),
        (ErrorKind::Misaligned, Why::ReadSourceMisaligned)
    );
    // The destination as DRAM too: 32-byte aligned here.
    let e = n
        .read(NocAddr::new(xy(0, 0), 0x1_0020).unwrap(), l1(0x2_0010), 64)
        .unwrap_err();
    assert_eq!(
        (e.kind, e.why),
        (ErrorKind::Misaligned, Why::ReadSourceMisaligned)
    );
}

#[test]
fn a_tagged_read_sets_the_transaction_id_in_bits_13_to_10() {
    let mut f = Fake::new();
    let mut n = noc(&mut f, NocId::Noc0, xy(1, 1), HarvestMask::NONE);
    let tag = komorebi_hal::noc::ReadTag::new(2).unwrap();
    n.read_tagged(NocAddr::l1(xy(2, 2), l1(0x1000)), l1(0x2_0000), 64, tag)
        .unwrap();
    assert_eq!(f.reg(1, cmd::NOC_PACKET_TAG), 3 << 10);
    f.counter(counter::NIU_MST_REQS_OUTSTANDING_ID + 3, 1);
    assert!(!n.tagged_reads_done(tag).unwrap());
    f.counter(counter::NIU_MST_REQS_OUTSTANDING_ID + 3, 0);
    assert!(n.tagged_reads_done(tag).unwrap());
}

#[test]
fn a_column_multicast_counts_tensix_rows_only_skipping_ethernet_row_6_and_harvested_rows() {
    let mut f = Fake::new();
    // Column x = 2 from y 1 to 11: rows 1..=5 and 7..=11, row 6 is Ethernet (it opts out);
    // rows 3 and 9 harvested; the sender (2, 1) excluded.
    let mask = HarvestMask::new(1 << 2 | 1 << 7).unwrap();
    assert!(mask.is_harvested(3) && mask.is_harvested(9));
    let mut n = noc(&mut f, NocId::Noc0, xy(2, 1), mask);
    let rect = Rect::new(xy(2, 1), xy(2, 11)).unwrap();
    n.multicast(l1(0x2_0000), rect, l1(0x2_0000), 4096, WriteMode::ORDERED)
        .unwrap();
    let words = f.command(0);
    assert_eq!(words[3], multicast_coord((2, 1), (2, 11)).unwrap());
    assert_eq!(words[5], ORDERED_MULTICAST);
    f.counter(counter::NIU_MST_WR_ACK_RECEIVED, 6);
    assert!(!n.writes_acked().unwrap());
    f.counter(counter::NIU_MST_WR_ACK_RECEIVED, 7);
    assert!(
        n.writes_acked().unwrap(),
        "10 rows - 2 harvested - the sender"
    );
}

#[test]
fn under_translation_a_noc1_row_multicast_writes_swapped_translated_corners() {
    let mut f = Fake::new();
    let mask = HarvestMask::new(1 << 2).unwrap(); // NoC0 row 3 harvested
    let t = Translation::new(mask);
    // NoC0 row 4 is the third row left: translated y 20; columns 1..=4 are x 18..=21.
    assert_eq!(t.from_noc0(1, 4), Some((18, 20)));
    assert_eq!(t.from_noc0(4, 4), Some((21, 20)));
    // NoC1 mirrors NoC0: (x, y) -> (9 - x, 11 - y); the sender NoC0 (1, 4) is NoC1 (8, 7).
    let mut n = SiliconNoc::<Wormhole>::new(f.niu(), NocId::Noc1, xy(8, 7), mask, Some(t));
    let rect = Rect::new(xy(5, 7), xy(8, 7)).unwrap(); // NoC0 x 4..=1, row 4
    n.multicast(l1(0x2_0000), rect, l1(0x2_0000), 64, WriteMode::ORDERED)
        .unwrap();
    let words = f.command(0);
    assert_eq!(words[1], unicast_coord(18, 20).unwrap(), "own, translated");
    assert_eq!(words[3], multicast_coord((21, 20), (18, 20)).unwrap());
    f.counter(counter::NIU_MST_WR_ACK_RECEIVED, 3);
    assert!(n.writes_acked().unwrap(), "4 columns - the sender");
    // A harvested row is not a target.
    let e = n
        .write(
            l1(0x2_0000),
            NocAddr::l1(xy(8, 8), l1(0x2_0000)),
            64,
            WriteMode::ORDERED,
        )
        .unwrap_err();
    assert_eq!(
        (e.kind, e.why),
        (ErrorKind::InvalidAddress, Why::HarvestedTarget)
    );
}

#[test]
fn under_translation_a_noc1_dram_read_names_dram_by_its_noc1_raw_coordinates() {
    // Translated entries 0..=15 are the identity on each NoC: DRAM (never translated on
    // Wormhole) is named by the raw coordinates of the NoC that carries the request. DRAM at
    // NoC0 (0, 0) is NoC1 (9, 11); NoC0's numbers (0, 0) on NoC1 would reach NoC0 (9, 11), a
    // Tensix tile.
    let mut f = Fake::new();
    let mask = HarvestMask::new(1 << 2).unwrap();
    let t = Translation::new(mask);
    assert_eq!(
        t.from_noc0(0, 0),
        Some((0, 0)),
        "DRAM keeps its coordinates"
    );
    let mut n = SiliconNoc::<Wormhole>::new(f.niu(), NocId::Noc1, xy(8, 7), mask, Some(t));
    let dram = NocAddr::new(xy(9, 11), 0x1_0020).unwrap();
    n.read(dram, l1(0x2_0000), 64).unwrap();
    let words = f.command(1);
    assert_eq!(words[1], unicast_coord(9, 11).unwrap(), "NoC1's raw DRAM");
    assert_eq!(words[3], unicast_coord(18, 20).unwrap(), "own, translated");
    // Without translation the raw coordinates go as they are, on either NoC.
    let mut f = Fake::new();
    let mut n = SiliconNoc::<Wormhole>::new(f.niu(), NocId::Noc1, xy(8, 7), mask, None);
    n.read(dram, l1(0x2_0000), 64).unwrap();
    assert_eq!(f.command(1)[1], unicast_coord(9, 11).unwrap());
    assert_eq!(f.command(1)[3], unicast_coord(8, 7).unwrap());
}

#[test]
fn targets_off_the_10_by_12_grid_and_non_memory_tiles_are_refused() {
    let mut f = Fake::new();
    let mut n = noc(&mut f, NocId::Noc0, xy(1, 1), HarvestMask::NONE);
    for (p, why) in [
        (xy(10, 1), Why::NotL1OrDram),
        (xy(1, 0), Why::NotL1OrDram),  // Ethernet
        (xy(0, 3), Why::NotL1OrDram),  // PCIe
        (xy(0, 10), Why::NotL1OrDram), // ARC
    ] {
        let e = n
            .write(
                l1(0x1000),
                NocAddr::l1(p, l1(0x1000)),
                64,
                WriteMode::ORDERED,
            )
            .unwrap_err();
        assert_eq!((e.kind, e.why), (ErrorKind::InvalidAddress, why), "{p:?}");
    }
    // L1 ends at 1,499,136 bytes.
    let e = n
        .write(
            l1(1_499_136 - 32),
            NocAddr::l1(xy(2, 2), l1(0x1000)),
            64,
            WriteMode::ORDERED,
        )
        .unwrap_err();
    assert_eq!(e.why, Why::BeyondL1);
    assert_eq!(f.command(0), [0; 7]);
}

#[test]
fn circular_buffers_count_in_stream_registers_4_and_3() {
    let mut regs = vec![0u32; stream::STREAM_BLOCK_BYTES / 4].into_boxed_slice();
    let mut mem = vec![0u8; 0x2_0000 + 256].into_boxed_slice();
    // SAFETY: both boxes outlive the handles; the buffer lies inside `mem`.
    let streams = unsafe { Streams::from_ptr(regs.as_mut_ptr().cast()) };
    // SAFETY: as above.
    let mut producer = unsafe {
        SiliconCb::<Wormhole>::from_ptr(streams, 5, mem.as_mut_ptr() as usize, 0x2_0000, 64, 4)
    }
    .unwrap();
    // SAFETY: as above.
    let mut consumer = unsafe {
        SiliconCb::<Wormhole>::from_ptr(streams, 5, mem.as_mut_ptr() as usize, 0x2_0000, 64, 4)
    }
    .unwrap();
    producer.push(3).unwrap();
    assert_eq!(
        regs[(5 * 0x1000 + 4 * 4) / 4],
        3,
        "tiles_received: register 4"
    );
    consumer.pop(2).unwrap();
    assert_eq!(regs[(5 * 0x1000 + 3 * 4) / 4], 2, "tiles_acked: register 3");
    // Wormhole has 32 circular buffers.
    // SAFETY: as above; buffer 32 is refused before any pointer is kept.
    let missing = unsafe { SiliconCb::<Wormhole>::from_ptr(streams, 32, 0, 0, 64, 4) };
    assert!(missing.is_none(), "buffer 32 does not exist");
    regs.fill(7);
    SiliconCb::<Wormhole>::clear_counters(streams);
    for cb in 0..32 {
        assert_eq!(regs[(cb * 0x1000 + 16) / 4], 0);
        assert_eq!(regs[(cb * 0x1000 + 12) / 4], 0);
    }
    assert_eq!(regs[(32 * 0x1000 + 16) / 4], 7, "stream 32 is no buffer's");
}

#[test]
fn the_tile_s_identity_reads_noc_id_logical_at_0x138_and_checks_the_row_mask() {
    let mut f = Fake::new();
    f.set(cmd::NOC_NODE_ID, niu::node_id(2, 4, 0));
    // Row 3 harvested: NoC0 row 4 is logical row 2, translated y 20.
    let mask = HarvestMask::new(1 << 2).unwrap();
    f.set(niu::NOC_CFG_OFFSET + 4 * cfg::NOC_ID_LOGICAL, 19 | 20 << 6);
    assert_eq!(niu::NOC_CFG_OFFSET + 4 * cfg::NOC_ID_LOGICAL, 0x138);
    let id = TileIdentity::<Wormhole>::read(f.niu(), true).unwrap();
    assert_eq!((id.raw, id.translated), ((2, 4), Some((19, 20))));
    assert_eq!(id.logical(mask), Ok(LogicalXy::new(1, 2)));
    assert_eq!(
        id.logical(HarvestMask::NONE),
        Err(IdentityError::TranslationDisagrees {
            chip: (19, 20),
            mask: (19, 21)
        })
    );
    let untranslated = TileIdentity::<Wormhole>::read(f.niu(), false).unwrap();
    let own_row = HarvestMask::new(1 << 3).unwrap();
    assert_eq!(
        untranslated.logical(own_row),
        Err(IdentityError::HarvestedColumn)
    );
    f.set(cmd::NOC_NODE_ID, niu::node_id(0, 0, 0));
    let dram = TileIdentity::<Wormhole>::read(f.niu(), false).unwrap();
    assert_eq!(
        dram.logical(HarvestMask::NONE),
        Err(IdentityError::NotTensix)
    );
}

#[test]
fn the_request_bits_are_the_same_on_both_chips() {
    use komorebi_silicon::chip::ctrl;
    let mut bh = blackhole_pac::niu::NocCtrl::default();
    bh.set_request_type(blackhole_pac::niu::request::WRITE);
    assert_eq!((ctrl::WRITE, niu::ctrl::WR), (bh.0, bh.0));
    type SetFlag = fn(&mut blackhole_pac::niu::NocCtrl);
    let flags: [(u32, u32, SetFlag); 6] = [
        (ctrl::RESP_MARKED, niu::ctrl::RESP_MARKED, |c| {
            c.set_resp_marked(true)
        }),
        (ctrl::BRCST_PACKET, niu::ctrl::BRCST_PACKET, |c| {
            c.set_brcst_packet(true)
        }),
        (ctrl::VC_LINKED, niu::ctrl::VC_LINKED, |c| {
            c.set_vc_linked(true)
        }),
        (ctrl::VC_STATIC, niu::ctrl::VC_STATIC, |c| {
            c.set_vc_static(true)
        }),
        (ctrl::PATH_RESERVE, niu::ctrl::PATH_RESERVE, |c| {
            c.set_path_reserve(true)
        }),
        (ctrl::BRCST_SRC_INCLUDE, niu::ctrl::BRCST_SRC_INCLUDE, |c| {
            c.set_brcst_src_include(true)
        }),
    ];
    for (ours, wormhole, set) in flags {
        let mut c = blackhole_pac::niu::NocCtrl::default();
        set(&mut c);
        assert_eq!((ours, wormhole), (c.0, c.0));
    }
    let mut c = blackhole_pac::niu::NocCtrl::default();
    c.set_static_vc(blackhole_pac::niu::MULTICAST_VC);
    assert_eq!(ctrl::static_vc(ctrl::MULTICAST_VC), c.0);
    assert_eq!(niu::ctrl::static_vc(ctrl::MULTICAST_VC), c.0);
    assert_eq!(ctrl::UNICAST_VC, blackhole_pac::niu::UNICAST_VC);
}

/// Local address bits 35:32 (DRAM above 4 GiB) go into `MID`'s low 4 bits, beside the
/// coordinates: a write's destination (the `RET` words), a read's source (the `TARG` words).
#[test]
fn a_local_address_above_4_gib_puts_its_bits_35_to_32_beside_the_coordinates() {
    let mut f = Fake::new();
    let mut n = noc(&mut f, NocId::Noc0, xy(1, 1), HarvestMask::NONE);
    let far = NocAddr::new(xy(2, 3), 0x9_1234_5640).unwrap();
    let coord = unicast_coord(2, 3).unwrap();
    n.write(l1(0x8000), far, 64, WriteMode::ORDERED).unwrap();
    assert_eq!(f.command(0)[2..4], [0x1234_5640, coord | 9]);
    n.read(far, l1(0x8000), 64).unwrap();
    assert_eq!(f.command(1)[..2], [0x1234_5640, coord | 9]);
    // And a batch's page: page 1 of 2 KiB pages at 0x9_0000_0000, into L1 0x2_0000, back to
    // this core, 2048 bytes.
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
    assert_eq!(
        f.command(1)[..5],
        [
            0x800,
            coord | 9,
            0x2_0000,
            unicast_coord(1, 1).unwrap(),
            2048
        ]
    );
}

/// The control block's harvest word is the chip's harvest mask as `HarvestMask::new` reads it.
#[test]
fn the_harvest_word_is_read_as_a_harvest_mask() {
    use komorebi_silicon::Chip;
    for w in [0, 1, 2, 0x41, u32::MAX] {
        assert_eq!(Wormhole::harvest(w), HarvestMask::new(w).ok(), "{w:#x}");
    }
    assert!(Wormhole::harvest(1).is_some_and(|m| m != HarvestMask::NONE));
}
