//! Every trait method called through `&mut T` reaches `T` with its arguments and brings back
//! `T`'s answer, and the provided methods compute from the required ones: a recording fake
//! behind each HAL trait, with distinct answers per method so that no forwarding can be
//! swapped or dropped unnoticed.

use std::convert::Infallible;

use komorebi_hal::noc::{self, NocMulticast, WriteMode};
use komorebi_hal::{CircularBuffer, ControlBlock, L1Addr, NocAddr, NocId, Rect, Xy, cb, control};

#[derive(Default)]
struct Fake {
    calls: Vec<String>,
    pushed: u16,
    popped: u16,
}

impl noc::ErrorType for Fake {
    type Error = Infallible;
}
impl cb::ErrorType for Fake {
    type Error = Infallible;
}
impl control::ErrorType for Fake {
    type Error = Infallible;
}

impl NocMulticast for Fake {
    fn noc(&self) -> NocId {
        NocId::Noc1
    }
    fn node(&self) -> Xy {
        Xy::new(5, 6).unwrap()
    }
    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), Infallible> {
        self.calls.push(format!("read {src} {dst} {len}"));
        Ok(())
    }
    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), Infallible> {
        self.calls.push(format!("write {src} {dst} {len} {mode:?}"));
        Ok(())
    }
    fn multicast(
        &mut self,
        src: L1Addr,
        rect: Rect,
        dst: L1Addr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), Infallible> {
        self.calls
            .push(format!("multicast {src} {rect} {dst} {len} {mode:?}"));
        Ok(())
    }
    fn reads_done(&mut self) -> Result<bool, Infallible> {
        self.calls.push("reads_done".into());
        Ok(true)
    }
    fn writes_sent(&mut self) -> Result<bool, Infallible> {
        self.calls.push("writes_sent".into());
        Ok(false)
    }
    fn writes_acked(&mut self) -> Result<bool, Infallible> {
        self.calls.push("writes_acked".into());
        Ok(true)
    }
    fn resync(&mut self) -> Result<(), Infallible> {
        self.calls.push("resync".into());
        Ok(())
    }
}

impl CircularBuffer for Fake {
    fn capacity(&self) -> u16 {
        12
    }
    fn page_size(&self) -> u32 {
        2048
    }
    fn base(&self) -> L1Addr {
        L1Addr::new(0x4_0000).unwrap()
    }
    fn pushed(&mut self) -> Result<u16, Infallible> {
        Ok(self.pushed)
    }
    fn popped(&mut self) -> Result<u16, Infallible> {
        Ok(self.popped)
    }
    fn write_ptr(&self) -> L1Addr {
        L1Addr::new(0x4_0800).unwrap()
    }
    fn push(&mut self, pages: u16) -> Result<(), Infallible> {
        self.calls.push(format!("push {pages}"));
        self.pushed = self.pushed.wrapping_add(pages);
        Ok(())
    }
    fn read_ptr(&self) -> L1Addr {
        L1Addr::new(0x4_1000).unwrap()
    }
    fn pop(&mut self, pages: u16) -> Result<(), Infallible> {
        self.calls.push(format!("pop {pages}"));
        self.popped = self.popped.wrapping_add(pages);
        Ok(())
    }
    fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), Infallible> {
        self.calls
            .push(format!("read_page {page} {offset} {}", buf.len()));
        buf.fill(0xAB);
        Ok(())
    }
}

impl ControlBlock for Fake {
    fn len(&self) -> u32 {
        0x1000
    }
    fn addr(&self, offset: u32) -> Result<L1Addr, Infallible> {
        Ok(L1Addr::new(0x4000 + offset).unwrap())
    }
    fn load(&mut self, offset: u32) -> Result<u32, Infallible> {
        Ok(offset * 3)
    }
    fn store(&mut self, offset: u32, value: u32) -> Result<(), Infallible> {
        self.calls.push(format!("store {offset:#x} {value}"));
        Ok(())
    }
    fn stop_requested(&mut self) -> Result<bool, Infallible> {
        Ok(true)
    }
    fn request_stop(&mut self) -> Result<(), Infallible> {
        self.calls.push("request_stop".into());
        Ok(())
    }
    fn wait_limit(&mut self) -> Result<u64, Infallible> {
        Ok(77)
    }
    fn now(&mut self) -> u64 {
        1234
    }
}

fn l1(a: u32) -> L1Addr {
    L1Addr::new(a).unwrap()
}

#[test]
fn the_noc_through_mut_ref_forwards_every_call() {
    let mut f = Fake::default();
    let mut r = &mut f;
    let n = &mut r;
    assert_eq!((n.noc(), n.node()), (NocId::Noc1, Xy::new(5, 6).unwrap()));
    let at = NocAddr::new(Xy::new(1, 2).unwrap(), 0x40).unwrap();
    let rect = Rect::new(Xy::new(1, 2).unwrap(), Xy::new(3, 4).unwrap()).unwrap();
    n.read(at, l1(0x100), 64).unwrap();
    n.write(l1(0x200), at, 32, WriteMode::ORDERED).unwrap();
    n.multicast(l1(0x300), rect, l1(0x400), 16, WriteMode::ORDERED)
        .unwrap();
    assert_eq!(
        (n.reads_done(), n.writes_sent(), n.writes_acked()),
        (Ok(true), Ok(false), Ok(true))
    );
    n.resync().unwrap();
    assert_eq!(f.calls.len(), 7, "{:?}", f.calls);
    assert!(f.calls[0].starts_with("read ") && f.calls[0].ends_with(" 64"));
    assert!(f.calls[1].starts_with("write ") && f.calls[1].contains(" 32 "));
    assert!(f.calls[2].starts_with("multicast ") && f.calls[2].contains(" 16 "));
    assert_eq!(
        &f.calls[3..],
        ["reads_done", "writes_sent", "writes_acked", "resync"]
    );
}

#[test]
fn a_buffer_through_mut_ref_forwards_and_counts_its_pages() {
    let mut f = Fake {
        pushed: 65_530,
        popped: 65_528,
        ..Fake::default()
    };
    let b = &mut &mut f;
    assert_eq!((b.capacity(), b.page_size()), (12, 2048));
    assert_eq!(
        (b.base(), b.write_ptr(), b.read_ptr()),
        (l1(0x4_0000), l1(0x4_0800), l1(0x4_1000))
    );
    assert_eq!((b.pushed(), b.popped()), (Ok(65_530), Ok(65_528)));
    // Pages ready wrap with the counters; free pages are the rest of the capacity.
    assert_eq!((b.pages_ready(), b.pages_free()), (Ok(2), Ok(10)));
    b.push(7).unwrap();
    assert_eq!(
        (b.pages_ready(), b.pages_free()),
        (Ok(9), Ok(3)),
        "pushed wrapped past 65535"
    );
    b.push_padding(3).unwrap();
    assert_eq!(b.pages_free(), Ok(0));
    b.pop(4).unwrap();
    let mut buf = [0u8; 5];
    b.read_page(1, 8, &mut buf).unwrap();
    assert_eq!(buf, [0xAB; 5]);
    assert_eq!(
        f.calls,
        ["push 7", "push 3", "pop 4", "read_page 1 8 5"],
        "padding is a push by default"
    );
}

#[test]
fn a_default_scan_lends_the_page_in_runs_read_with_read_page() {
    let mut f = Fake {
        pushed: 3,
        ..Fake::default()
    };
    let b = &mut &mut f;
    // Every run: its first word's index, its length, and its words as read (0xAB bytes).
    let mut runs = Vec::new();
    let all = b
        .scan_page(2, &mut |first, run| {
            assert!(run.iter().all(|&w| w == 0xABAB_ABAB), "run at {first}");
            runs.push((first, run.len()));
            true
        })
        .unwrap();
    assert!(all);
    let expected: Vec<(u32, usize)> = (0..8).map(|i| (64 * i, 64)).collect();
    assert_eq!(runs, expected, "2048 bytes are 8 runs of 64 words");
    // A refused run ends the scan: no read after it.
    f.calls.clear();
    let b = &mut &mut f;
    let mut seen = 0;
    let all = b
        .scan_page(0, &mut |_, _| {
            seen += 1;
            seen < 3
        })
        .unwrap();
    assert!(!all);
    assert_eq!(
        f.calls,
        [
            "read_page 0 0 256",
            "read_page 0 256 256",
            "read_page 0 512 256"
        ]
    );
}

#[test]
fn a_control_block_through_mut_ref_forwards_every_call() {
    let mut f = Fake::default();
    let c = &mut &mut f;
    assert_eq!((c.len(), c.is_empty()), (0x1000, false));
    assert_eq!(c.addr(0x10), Ok(l1(0x4010)));
    assert_eq!(c.load(7), Ok(21));
    c.store(0x20, 9).unwrap();
    assert_eq!(
        (c.stop_requested(), c.wait_limit(), c.now()),
        (Ok(true), Ok(77), 1234)
    );
    c.request_stop().unwrap();
    assert_eq!(f.calls, ["store 0x20 9", "request_stop"]);
}

#[test]
fn tagged_reads_fall_back_to_plain_reads_unless_a_backend_has_tags() {
    use komorebi_hal::noc::ReadTag;
    let at = NocAddr::new(Xy::new(1, 2).unwrap(), 0x40).unwrap();
    let tag = ReadTag::new(14).unwrap();
    assert_eq!(ReadTag::new(15), None, "15 tags: 0..=14");
    assert_eq!(tag.get(), 14);
    // Taken in turn: 0..=14, then 0 again.
    let cyclic: Vec<u8> = [0, 7, 14, 15, 16, 29, u32::MAX]
        .map(|n| ReadTag::cyclic(n).get())
        .to_vec();
    assert_eq!(cyclic, [0, 7, 14, 0, 1, 14, (u32::MAX % 15) as u8]);
    // The provided methods: an untagged read, and every read done.
    let mut f = Fake::default();
    let n = &mut &mut f;
    n.read_tagged(at, l1(0x100), 64, tag).unwrap();
    assert_eq!(n.tagged_reads_done(tag), Ok(true));
    assert_eq!(f.calls.len(), 2, "{:?}", f.calls);
    assert!(f.calls[0].starts_with("read ") && f.calls[0].ends_with(" 64"));
    assert_eq!(f.calls[1], "reads_done");

    // A backend with tags gets them through `&mut T`.
    #[derive(Default)]
    struct Tags(Vec<(String, u8)>);
    impl noc::ErrorType for Tags {
        type Error = Infallible;
    }
    impl NocMulticast for Tags {
        fn noc(&self) -> NocId {
            NocId::Noc0
        }
        fn node(&self) -> Xy {
            Xy::new(1, 2).unwrap()
        }
        fn read(&mut self, _: NocAddr, _: L1Addr, _: u32) -> Result<(), Infallible> {
            self.0.push(("read".into(), 0));
            Ok(())
        }
        fn write(&mut self, _: L1Addr, _: NocAddr, _: u32, _: WriteMode) -> Result<(), Infallible> {
            Ok(())
        }
        fn multicast(
            &mut self,
            _: L1Addr,
            _: Rect,
            _: L1Addr,
            _: u32,
            _: WriteMode,
        ) -> Result<(), Infallible> {
            Ok(())
        }
        fn reads_done(&mut self) -> Result<bool, Infallible> {
            self.0.push(("reads_done".into(), 0));
            Ok(false)
        }
        fn read_tagged(
            &mut self,
            _: NocAddr,
            _: L1Addr,
            _: u32,
            tag: ReadTag,
        ) -> Result<(), Infallible> {
            self.0.push(("read_tagged".into(), tag.get()));
            Ok(())
        }
        fn tagged_reads_done(&mut self, tag: ReadTag) -> Result<bool, Infallible> {
            self.0.push(("tagged_reads_done".into(), tag.get()));
            Ok(true)
        }
        fn writes_sent(&mut self) -> Result<bool, Infallible> {
            Ok(true)
        }
        fn writes_acked(&mut self) -> Result<bool, Infallible> {
            Ok(true)
        }
        fn resync(&mut self) -> Result<(), Infallible> {
            Ok(())
        }
    }
    let mut t = Tags::default();
    let n = &mut &mut t;
    n.read_tagged(at, l1(0x100), 64, ReadTag::new(3).unwrap())
        .unwrap();
    assert_eq!(n.tagged_reads_done(ReadTag::new(3).unwrap()), Ok(true));
    assert_eq!(
        t.0,
        [
            ("read_tagged".to_string(), 3),
            ("tagged_reads_done".to_string(), 3)
        ]
    );
}

#[test]
fn read_pages_reads_each_page_tagged_from_its_port_and_stops_where_the_noc_is_busy_or_a_page_has_no_addresses()
 {
    use komorebi_hal::noc::{ErrorKind, PageReads, ReadTag};
    /// Takes `room` reads, then is busy; a read of 3 bytes fails as `Other`.
    struct Busy {
        room: usize,
        reads: Vec<(u64, u32, u32, u8, Xy)>,
    }
    impl noc::ErrorType for Busy {
        type Error = ErrorKind;
    }
    impl NocMulticast for Busy {
        fn noc(&self) -> NocId {
            NocId::Noc0
        }
        fn node(&self) -> Xy {
            Xy::new(1, 2).unwrap()
        }
        fn read(&mut self, _: NocAddr, _: L1Addr, _: u32) -> Result<(), ErrorKind> {
            Err(ErrorKind::Other)
        }
        fn read_tagged(
            &mut self,
            src: NocAddr,
            dst: L1Addr,
            len: u32,
            tag: ReadTag,
        ) -> Result<(), ErrorKind> {
            if len == 3 {
                return Err(ErrorKind::Other);
            }
            if self.reads.len() == self.room {
                return Err(ErrorKind::Busy);
            }
            self.reads
                .push((src.local(), dst.get(), len, tag.get(), src.node()));
            Ok(())
        }
        fn write(&mut self, _: L1Addr, _: NocAddr, _: u32, _: WriteMode) -> Result<(), ErrorKind> {
            Ok(())
        }
        fn multicast(
            &mut self,
            _: L1Addr,
            _: Rect,
            _: L1Addr,
            _: u32,
            _: WriteMode,
        ) -> Result<(), ErrorKind> {
            Ok(())
        }
        fn reads_done(&mut self) -> Result<bool, ErrorKind> {
            Ok(true)
        }
        fn writes_sent(&mut self) -> Result<bool, ErrorKind> {
            Ok(true)
        }
        fn writes_acked(&mut self) -> Result<bool, ErrorKind> {
            Ok(true)
        }
        fn resync(&mut self) -> Result<(), ErrorKind> {
            Ok(())
        }
    }
    let ports = [Xy::new(0, 11).unwrap(), Xy::new(9, 11).unwrap()];
    let tag = ReadTag::new(4).unwrap();
    // Pages 3..9 of a buffer of 64-byte pages at 0xF_FFFF_FE00 (the last 512 bytes below
    // 2^36): page 3 + i from port (3 + i) % 2 at 0xF_FFFF_FE00 + 64 (3 + i), into L1
    // 0x2_0000 + 64 i; page 8 (i = 5) would start at 2^36, beyond 36 bits: it has none.
    let reads = PageReads {
        ports: &ports,
        base: 0xF_FFFF_FE00,
        first: 3,
        count: 6,
        len: 64,
        dst: l1(0x2_0000),
        tag,
    };
    assert_eq!(
        reads.page(1),
        Some((NocAddr::new(ports[0], 0xF_FFFF_FF00).unwrap(), l1(0x2_0040)))
    );
    assert_eq!(reads.page(5), None, "beyond 36 bits");
    assert_eq!(reads.page(6), None, "beyond the count");
    assert_eq!(
        PageReads {
            ports: &[],
            ..reads
        }
        .page(0),
        None,
        "no ports"
    );
    let odd = PageReads {
        len: 66,
        base: 0,
        ..reads
    };
    assert!(odd.page(0).is_some());
    assert_eq!(odd.page(1), None, "page 1 would land at a half word");
    let mut b = Busy {
        room: 2,
        reads: Vec::new(),
    };
    let n = &mut &mut b;
    assert_eq!(n.read_pages(0, &reads), Ok(2), "busy at 2");
    assert_eq!(n.read_pages(6, &reads), Ok(6), "nothing left");
    b.room = 10;
    let n = &mut &mut b;
    assert_eq!(n.read_pages(2, &reads), Ok(5), "page 5 has no addresses");
    let nodes: Vec<_> = b.reads.iter().map(|r| r.4).collect();
    assert_eq!(nodes, [ports[1], ports[0], ports[1], ports[0], ports[1]]);
    assert_eq!(
        b.reads
            .iter()
            .map(|r| (r.0, r.1, r.2, r.3))
            .collect::<Vec<_>>(),
        [
            (0xF_FFFF_FEC0, 0x2_0000, 64, 4),
            (0xF_FFFF_FF00, 0x2_0040, 64, 4),
            (0xF_FFFF_FF40, 0x2_0080, 64, 4),
            (0xF_FFFF_FF80, 0x2_00C0, 64, 4),
            (0xF_FFFF_FFC0, 0x2_0100, 64, 4),
        ]
    );
    let n = &mut &mut b;
    let three = PageReads { len: 3, ..reads };
    assert_eq!(
        n.read_pages(0, &three),
        Err(ErrorKind::Other),
        "another refusal is the call's error"
    );
}

#[test]
fn load_words_loads_each_word_with_load_through_mut_ref() {
    /// Words are their offsets plus one; offset 0x40 is refused.
    #[derive(Default)]
    struct Words(Vec<u32>);
    impl control::ErrorType for Words {
        type Error = control::ErrorKind;
    }
    impl ControlBlock for Words {
        fn len(&self) -> u32 {
            0x100
        }
        fn addr(&self, offset: u32) -> Result<L1Addr, control::ErrorKind> {
            Ok(l1(offset))
        }
        fn load(&mut self, offset: u32) -> Result<u32, control::ErrorKind> {
            self.0.push(offset);
            if offset == 0x40 {
                return Err(control::ErrorKind::OutOfRange);
            }
            Ok(offset + 1)
        }
        fn store(&mut self, _: u32, _: u32) -> Result<(), control::ErrorKind> {
            Ok(())
        }
        fn stop_requested(&mut self) -> Result<bool, control::ErrorKind> {
            Ok(false)
        }
        fn request_stop(&mut self) -> Result<(), control::ErrorKind> {
            Ok(())
        }
        fn wait_limit(&mut self) -> Result<u64, control::ErrorKind> {
            Ok(0)
        }
        fn now(&mut self) -> u64 {
            0
        }
    }
    let mut c = Words::default();
    let mut w = [0u32; 3];
    let n = &mut &mut c;
    n.load_words(0x10, 8, &mut w).unwrap();
    assert_eq!(w, [0x11, 0x19, 0x21]);
    assert_eq!(c.0, [0x10, 0x18, 0x20]);
    c.0.clear();
    let e = (&mut &mut c).load_words(0x30, 0x10, &mut w);
    assert_eq!(e, Err(control::ErrorKind::OutOfRange));
    assert_eq!(c.0, [0x30, 0x40], "stops at the refused offset");
    assert_eq!(w[0], 0x31);
}

/// A tag's reads fit its 8-bit count when at most 255 requests are in flight, a read longer
/// than a packet (8 KiB on the smallest chip) counting as several.
#[test]
fn a_tag_counts_at_most_255_requests() {
    use komorebi_hal::noc::ReadTag;
    assert_eq!(ReadTag::MAX_IN_FLIGHT, 255);
    assert!(ReadTag::fits(255, 64));
    assert!(!ReadTag::fits(256, 64));
    assert!(ReadTag::fits(255, 8192));
    assert!(!ReadTag::fits(128, 8193), "two requests a read: 256");
    assert!(ReadTag::fits(127, 16384));
    assert!(ReadTag::fits(0, 1 << 20));
    assert!(ReadTag::fits(1, 0), "an empty read is one request");
    assert!(!ReadTag::fits(u32::MAX, u32::MAX), "no overflow");
}

/// A buffer of one page size whose `read_page` logs its reads and fills each byte with its
/// offset in the page (mod 256).
struct Sized(u32, Vec<(u32, usize)>);
impl cb::ErrorType for Sized {
    type Error = Infallible;
}
impl CircularBuffer for Sized {
    fn capacity(&self) -> u16 {
        1
    }
    fn page_size(&self) -> u32 {
        self.0
    }
    fn base(&self) -> L1Addr {
        l1(0)
    }
    fn pushed(&mut self) -> Result<u16, Infallible> {
        Ok(1)
    }
    fn popped(&mut self) -> Result<u16, Infallible> {
        Ok(0)
    }
    fn write_ptr(&self) -> L1Addr {
        l1(0)
    }
    fn push(&mut self, _: u16) -> Result<(), Infallible> {
        Ok(())
    }
    fn read_ptr(&self) -> L1Addr {
        l1(0)
    }
    fn pop(&mut self, _: u16) -> Result<(), Infallible> {
        Ok(())
    }
    fn read_page(&mut self, _: u16, offset: u32, buf: &mut [u8]) -> Result<(), Infallible> {
        self.1.push((offset, buf.len()));
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (offset as usize + i) as u8;
        }
        Ok(())
    }
}

#[test]
fn a_default_scan_reads_a_short_last_run_and_an_empty_page_once() {
    // 302 bytes: 75 whole words, a run of 64 then one of 11; the last 2 bytes left out.
    let mut b = Sized(302, Vec::new());
    let mut runs = Vec::new();
    let all = komorebi_hal::cb::scan_page_by_reads(&mut b, 0, &mut |first, run| {
        runs.push((first, run.len(), run[run.len() - 1]));
        true
    });
    assert_eq!(all, Ok(true));
    assert_eq!(b.1, [(0, 256), (256, 44)]);
    // Word 63 is bytes 252..=255; word 74 bytes 296..=299 (mod 256: 40..=43).
    assert_eq!(runs, [(0, 64, 0xFFFE_FDFC), (64, 11, 0x2B2A_2928)]);
    // A page of less than a word: one read of no byte (so that a page not ready is an
    // error), and no run to scan.
    let mut b = Sized(3, Vec::new());
    let mut scanned = 0;
    let all = komorebi_hal::cb::scan_page_by_reads(&mut b, 0, &mut |_, _| {
        scanned += 1;
        false
    });
    assert_eq!((all, scanned), (Ok(true), 0));
    assert_eq!(b.1, [(0, 0)]);
}

/// A control block of `len` bytes whose stop flag is set once `request_stop` is called.
struct Flag {
    len: u32,
    stop: bool,
}
impl control::ErrorType for Flag {
    type Error = Infallible;
}
impl ControlBlock for Flag {
    fn len(&self) -> u32 {
        self.len
    }
    fn addr(&self, offset: u32) -> Result<L1Addr, Infallible> {
        Ok(l1(offset))
    }
    fn load(&mut self, _: u32) -> Result<u32, Infallible> {
        Ok(0)
    }
    fn store(&mut self, _: u32, _: u32) -> Result<(), Infallible> {
        Ok(())
    }
    fn stop_requested(&mut self) -> Result<bool, Infallible> {
        Ok(self.stop)
    }
    fn request_stop(&mut self) -> Result<(), Infallible> {
        self.stop = true;
        Ok(())
    }
    fn wait_limit(&mut self) -> Result<u64, Infallible> {
        Ok(0)
    }
    fn now(&mut self) -> u64 {
        0
    }
}

#[test]
fn a_control_block_of_no_byte_is_empty_and_the_stop_flag_is_forwarded_as_it_changes() {
    let mut c = Flag {
        len: 0,
        stop: false,
    };
    let r = &mut &mut c;
    assert_eq!((r.len(), r.is_empty()), (0, true));
    assert_eq!(r.stop_requested(), Ok(false));
    r.request_stop().unwrap();
    assert_eq!(r.stop_requested(), Ok(true));
    let c = Flag {
        len: 4,
        stop: false,
    };
    assert_eq!((c.len(), c.is_empty()), (4, false));
}
