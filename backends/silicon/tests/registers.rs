//! Exact register writes of every operation, over a fake register region (plain host memory).

use blackhole_pac::addr::{multicast_coord, unicast_coord};
use blackhole_pac::harvest::HarvestMask;
use blackhole_pac::niu::{self, Counter, NIU_BLOCK_BYTES, Niu, cmd};
use blackhole_pac::stream::{self, CbIndex, Streams};
use komorebi_hal::ControlLayout;
use komorebi_hal::noc::{ErrorKind, NocMulticast, WriteMode};
use komorebi_hal::{CircularBuffer, ControlBlock, L1Addr, NocAddr, NocId, Rect, Xy};
use komorebi_silicon::{SiliconCb, SiliconCtrl, SiliconNoc, Translation};

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

#[test]
fn a_noc0_write_programs_command_buffer_0_with_the_unicast_vc() {
    let mut f = Fake::new();
    let mut n = SiliconNoc::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
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
    // Acked when WR_ACK_RECEIVED has caught up; sent when NONPOSTED_WR_REQ_SENT has.
    assert!(!n.writes_acked().unwrap() && !n.writes_sent().unwrap());
    f.set_status(Counter::MstWrAckReceived, 1);
    f.set_status(Counter::MstNonpostedWrReqSent, 1);
    assert!(n.writes_acked().unwrap() && n.writes_sent().unwrap());
}

#[test]
fn a_marker_goes_through_command_buffer_2_as_a_normal_write_never_inline() {
    let mut f = Fake::new();
    let mut n = SiliconNoc::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
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
    let mut n = SiliconNoc::new(f.niu(), NocId::Noc1, xy(15, 2), HarvestMask::NONE, None);
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
fn under_translation_a_noc1_multicast_writes_swapped_translated_corners() {
    let mut f = Fake::new();
    let mask = HarvestMask::P100_P150;
    let t = Translation::new(mask);
    // Enabled columns compact onto the first twelve Tensix x; the harvested 7 (die index 12)
    // and 10 (die index 13) take 16 and 15: the lowest die index gets the highest x (ARC
    // firmware `ComputeNocTranslation`, blackhole-facts.md §11).
    assert_eq!(t.tensix(11, 5), Some((7, 5)));
    assert_eq!(t.tensix(16, 2), Some((14, 2)));
    assert_eq!(
        (t.tensix(7, 2), t.tensix(10, 2)),
        (Some((16, 2)), Some((15, 2)))
    );
    assert_eq!(t.tensix(0, 2), None);
    // Sender at NoC0 (11, 9) = NoC1 (5, 2); receivers NoC0 (11, 8) ..= (11, 2).
    let mut n = SiliconNoc::new(f.niu(), NocId::Noc1, xy(5, 2), mask, Some(t));
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
    // DRAM is not translated (its mapping is unconfirmed): refused.
    let e = n
        .read(NocAddr::new(xy(16, 6), 0).unwrap(), l1(0x3_0000), 64)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidAddress);
}

#[test]
fn a_read_programs_command_buffer_1_and_completes_on_rd_resp_received() {
    let mut f = Fake::new();
    let mut n = SiliconNoc::new(f.niu(), NocId::Noc0, xy(2, 5), HarvestMask::NONE, None);
    n.read(
        NocAddr::new(xy(0, 5), 0x1_0040).unwrap(),
        l1(0x2_0000),
        2048,
    )
    .unwrap();
    let ctrl = VC_STATIC | (niu::UNICAST_VC as u32) << 13;
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
    // DRAM reads must be 64-byte aligned.
    f.clear(1);
    assert_eq!(
        n.read(NocAddr::new(xy(0, 5), 0x10).unwrap(), l1(0x2_0000), 64)
            .unwrap_err()
            .kind,
        ErrorKind::Misaligned
    );
}

#[test]
fn a_busy_command_buffer_is_busy_and_nothing_is_written() {
    let mut f = Fake::new();
    let mut n = SiliconNoc::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
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
fn a_long_transfer_is_one_command_the_niu_splits_and_holds_the_other_buffers() {
    let mut f = Fake::new();
    let mut n = SiliconNoc::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
    n.write(
        l1(0x4_0000),
        NocAddr::l1(xy(2, 3), l1(0x8_0000)),
        40_000,
        WriteMode::ORDERED,
    )
    .unwrap();
    assert_eq!(f.command(0)[6], 40_000);
    // While the NIU splits it, no other command buffer may be touched.
    let marker = n.write(
        l1(0x4A10),
        NocAddr::l1(xy(1, 9), l1(0x4A40)),
        4,
        WriteMode::ORDERED,
    );
    assert_eq!(marker.unwrap_err().kind, ErrorKind::Busy);
    assert_eq!(f.command(2), [0; 9]);
    f.clear(0);
    n.write(
        l1(0x4A10),
        NocAddr::l1(xy(1, 9), l1(0x4A40)),
        4,
        WriteMode::ORDERED,
    )
    .unwrap();
    // Three packets, each acknowledged.
    f.set_status(Counter::MstWrAckReceived, 3);
    assert!(!n.writes_acked().unwrap());
    f.set_status(Counter::MstWrAckReceived, 4);
    assert!(n.writes_acked().unwrap());
    f.clear(2);
    let odd = n.write(
        l1(0x4_0010),
        NocAddr::l1(xy(2, 3), l1(0x8_0000)),
        40_000,
        WriteMode::ORDERED,
    );
    assert_eq!(odd.unwrap_err().kind, ErrorKind::Misaligned);
}

#[test]
fn multicast_acks_exclude_the_sender_and_harvested_columns() {
    let mut f = Fake::new();
    // NoC0 row 2, x 1..=16 from x = 3: 14 Tensix columns, minus the two fused, minus the sender.
    let mut n = SiliconNoc::new(f.niu(), NocId::Noc0, xy(3, 2), HarvestMask::P100_P150, None);
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
        let mut n = SiliconNoc::new(f.niu(), noc, node, HarvestMask::NONE, None);
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
    let mut n = SiliconNoc::new(f.niu(), NocId::Noc0, xy(1, 2), HarvestMask::NONE, None);
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
    let mut producer =
        unsafe { SiliconCb::from_ptr(streams, cb3, mem.as_ptr() as usize, 0x2_0000, 64, 4) };
    // SAFETY: as above.
    let mut consumer =
        unsafe { SiliconCb::from_ptr(streams, cb3, mem.as_ptr() as usize, 0x2_0000, 64, 4) };
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
    let mut c = unsafe { SiliconCtrl::from_ptr(block.as_mut_ptr(), layout, clock) };
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
