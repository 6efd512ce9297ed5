//! A Wormhole B0 card's open sequence against a fake card at the register level: BAR0's
//! reset-unit scratch registers carrying ARC's messages, its CSM holding telemetry, the ARC
//! NIU's registers, and ten 2 MiB windows over an L1 per tile. Each test checks the messages
//! the host sent, in order, and what the open made of the answers; no card was at hand.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::time::Duration;

use blackhole_pac::tlb::{TlbConfig, TlbSize};
use komorebi_hal::Xy;
use komorebi_pcie::arc::wormhole::{ArcStart, arc_start};
use komorebi_pcie::arc::{self, OpenTimeouts};
use komorebi_pcie::pool::{PoolWindow, WindowPool};
use komorebi_pcie::{Bar, Card, CardOptions, DeviceIdentity, Mapping, PcieError, WindowHandle};
use wormhole_pac::arc::{self as wh, msg, tag};

const TABLE: u32 = wh::CSM_BASE + 0x7_0000;
const DATA: u32 = wh::CSM_BASE + 0x7_1000;
const LEGACY: u32 = wh::CSM_BASE + 0x7_8D60;

/// What the fake's ARC firmware does.
#[derive(Clone, Debug)]
struct Firmware {
    /// Scratch 5 and the post code for the first `starting` polls, then `ready`.
    starting: (u32, u32),
    starting_polls: u32,
    ready: (u32, u32),
    /// The harvested rows in ARC's order (bit i: NoC0 row `HARVESTING_NOC_LOCATIONS[i]`).
    arc_rows: u32,
    /// The tagged table (bundle 18.4 and later) or the legacy flat one.
    tagged: bool,
    /// DRAM status word for the first `training_polls` telemetry reads, then `trained`.
    training: u32,
    training_polls: u32,
    trained: u32,
    /// AICLK before `ARC_GO_BUSY`, the clock it reaches, after how many `GET_AICLK`.
    idle_mhz: u32,
    busy_mhz: u32,
    ramp: u32,
    /// The highest clock telemetry gives.
    max_mhz: u32,
    translation: bool,
    /// The firmware clears `ARC_MISC_CNTL`'s IRQ bit once it took a message.
    clears_irq: bool,
    /// The tagged table lacks `AICLK_LIMIT_MAX` (bundles 18.4 to 18.7).
    omit_limit: bool,
}

impl Default for Firmware {
    fn default() -> Self {
        Self {
            starting: (0x60, 0x1111_0000),
            starting_polls: 0,
            ready: (wh::boot::INIT_DONE_1, wh::boot::POST_CODE_INIT_DONE),
            arc_rows: 0,
            tagged: true,
            training: 0,
            training_polls: 0,
            trained: 0x555,
            idle_mhz: 500,
            busy_mhz: 1000,
            ramp: 0,
            max_mhz: 1000,
            translation: true,
            clears_irq: true,
            omit_limit: false,
        }
    }
}

struct FakeWormhole {
    identity: DeviceIdentity,
    fw: Firmware,
    regs: RefCell<BTreeMap<u32, u32>>,
    /// Messages served, in order: (code, argument).
    messages: Vec<(u8, u32)>,
    polls: Cell<u32>,
    telemetry_reads: Cell<u32>,
    clock_reads: u32,
    busy: bool,
    pool: WindowPool,
    configs: BTreeMap<u32, TlbConfig>,
    memory: BTreeMap<((u8, u8), u64), u32>,
    hung: bool,
}

impl FakeWormhole {
    fn new(fw: Firmware) -> Self {
        let identity = DeviceIdentity {
            path: "fake-wormhole".into(),
            pci_address: "0000:01:00.0".into(),
            vendor_id: 0x1E52,
            device_id: 0x401E,
            api_version: 2,
            driver_version: (2, 4, 0),
            clock_raised: false,
            clock_note: None,
            firmware_bundle: None,
        };
        Self {
            identity,
            fw,
            regs: RefCell::new(BTreeMap::new()),
            messages: Vec::new(),
            polls: Cell::new(0),
            telemetry_reads: Cell::new(0),
            clock_reads: 0,
            busy: false,
            // Wormhole's ten 2 MiB windows; no 4 GiB ones.
            pool: WindowPool::new(10, 0),
            configs: BTreeMap::new(),
            memory: BTreeMap::new(),
            hung: false,
        }
    }

    fn dram_status(&self) -> u32 {
        if self.telemetry_reads.get() <= self.fw.training_polls {
            self.fw.training
        } else {
            self.fw.trained
        }
    }

    fn clock(&self) -> u32 {
        if self.busy && self.clock_reads > self.fw.ramp {
            self.fw.busy_mhz
        } else {
            self.fw.idle_mhz
        }
    }

    fn csm(addr: u32) -> u32 {
        wh::CSM_BAR0 + (addr - wh::CSM_BASE)
    }

    /// Serves the message scratch 5 holds, as the ARC firmware does on the IRQ.
    fn serve(&mut self) {
        let mut regs = self.regs.borrow_mut();
        let status = regs.get(&wh::scratch_bar0(wh::SCRATCH_STATUS)).copied();
        let arg = regs
            .get(&wh::scratch_bar0(wh::SCRATCH_RES0))
            .copied()
            .unwrap_or(0);
        let Some(code) = status.filter(|s| s & 0xFF00 == 0xAA00).map(|s| s as u8) else {
            return;
        };
        self.messages.push((code, arg));
        let (exit, result) = match code {
            msg::ARC_GET_HARVESTING => (0, self.fw.arc_rows),
            msg::GET_SMBUS_TELEMETRY_ADDR => (0, LEGACY),
            msg::ARC_GO_BUSY => {
                self.busy = true;
                (0, 0)
            }
            msg::GET_AICLK => {
                self.clock_reads += 1;
                drop(regs);
                let mhz = self.clock();
                regs = self.regs.borrow_mut();
                (0, mhz)
            }
            _ => (1, 0),
        };
        regs.insert(wh::scratch_bar0(wh::SCRATCH_RES0), result);
        regs.insert(
            wh::scratch_bar0(wh::SCRATCH_STATUS),
            (exit << 16) | code as u32,
        );
    }
}

impl Bar for FakeWormhole {
    type Window = PoolWindow;

    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    fn allocate(&mut self, size: TlbSize, mapping: Mapping) -> Result<PoolWindow, PcieError> {
        self.pool.allocate(size, mapping)
    }

    fn configure(&mut self, window: &mut PoolWindow, config: &TlbConfig) -> Result<(), PcieError> {
        self.configs.insert(window.index(), *config);
        Ok(())
    }

    fn free(&mut self, window: PoolWindow) -> Result<(), PcieError> {
        self.pool.free(window);
        Ok(())
    }

    fn read32(&self, window: &PoolWindow, offset: u64) -> Result<u32, PcieError> {
        let c = self.configs[&window.index()];
        Ok(*self.memory.get(&(c.end, c.addr + offset)).unwrap_or(&0))
    }

    fn write32(&mut self, window: &PoolWindow, offset: u64, value: u32) -> Result<(), PcieError> {
        let c = self.configs[&window.index()];
        self.memory.insert((c.end, c.addr + offset), value);
        Ok(())
    }

    fn read(&self, window: &PoolWindow, offset: u64, buf: &mut [u8]) -> Result<(), PcieError> {
        for (i, chunk) in buf.chunks_mut(4).enumerate() {
            let w = self.read32(window, offset + 4 * i as u64)?;
            chunk.copy_from_slice(&w.to_le_bytes()[..chunk.len()]);
        }
        Ok(())
    }

    fn write(&mut self, window: &PoolWindow, offset: u64, data: &[u8]) -> Result<(), PcieError> {
        for (i, chunk) in data.chunks(4).enumerate() {
            let mut w = [0; 4];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write32(window, offset + 4 * i as u64, u32::from_le_bytes(w))?;
        }
        Ok(())
    }

    fn fence(&mut self) {}

    fn bar0_read32(&self, offset: u32) -> Result<u32, PcieError> {
        if self.hung {
            return Ok(wh::HUNG_READ);
        }
        let fw = &self.fw;
        let status = wh::scratch_bar0(wh::SCRATCH_STATUS);
        if offset == status && self.messages.is_empty() {
            // Before the first message scratch 5 reports ARC's start; the post code with it.
            let n = self.polls.get();
            self.polls.set(n + 1);
            return Ok(if n < fw.starting_polls {
                fw.starting.0
            } else {
                fw.ready.0
            });
        }
        if offset == wh::scratch_bar0(0) {
            let n = self.polls.get();
            return Ok(if n <= fw.starting_polls {
                fw.starting.1
            } else {
                fw.ready.1
            });
        }
        let (table, data) = (Self::csm(TABLE), Self::csm(DATA));
        let limit = if fw.omit_limit {
            (tag::FLASH_BUNDLE_VERSION, 18 << 24 | 4 << 16)
        } else {
            (tag::AICLK_LIMIT_MAX, fw.max_mhz)
        };
        let tagged: [(u16, u32); 3] = [
            (tag::GDDR_STATUS, self.dram_status()),
            limit,
            (tag::AICLK, self.clock()),
        ];
        Ok(match offset {
            wh::ARC_NOC_NODE_ID_BAR0 => 10 << 6,
            wh::ARC_NIU_CFG_0_BAR0 => u32::from(fw.translation) << 14,
            wh::TELEMETRY_TABLE_PTR_BAR0 if fw.tagged => TABLE,
            wh::TELEMETRY_DATA_PTR_BAR0 if fw.tagged => DATA,
            wh::TELEMETRY_TABLE_PTR_BAR0 | wh::TELEMETRY_DATA_PTR_BAR0 => 0,
            o if o == table => {
                self.telemetry_reads.set(self.telemetry_reads.get() + 1);
                1 << 16
            }
            o if o == table + 4 => tagged.len() as u32,
            // Entries out of tag order, data at offsets 5, 6, 7.
            o if o > table + 4 && o < table + 8 + 4 * tagged.len() as u32 => {
                let i = (o - table - 8) / 4;
                tagged[i as usize].0 as u32 | (5 + i) << 16
            }
            o if o >= data + 20 && o < data + 20 + 4 * tagged.len() as u32 => {
                tagged[((o - data - 20) / 4) as usize].1
            }
            o if o >= Self::csm(LEGACY) && o < Self::csm(LEGACY) + 200 => {
                match ((o - Self::csm(LEGACY)) / 4) as u16 {
                    tag::LEGACY_DDR_STATUS => {
                        self.telemetry_reads.set(self.telemetry_reads.get() + 1);
                        self.dram_status()
                    }
                    tag::LEGACY_AICLK => fw.max_mhz << 16 | self.clock(),
                    _ => 0,
                }
            }
            o => self.regs.borrow().get(&o).copied().unwrap_or(0),
        })
    }

    fn bar0_write32(&mut self, offset: u32, value: u32) -> Result<(), PcieError> {
        self.regs.borrow_mut().insert(offset, value);
        if offset == wh::MISC_CNTL_BAR0 && value & wh::MISC_CNTL_IRQ0 != 0 {
            self.serve();
            if self.fw.clears_irq {
                self.regs
                    .borrow_mut()
                    .insert(offset, value & !wh::MISC_CNTL_IRQ0);
            }
        }
        Ok(())
    }

    fn pass_time(&mut self) -> u64 {
        1000
    }
}

fn options() -> CardOptions {
    CardOptions {
        open: OpenTimeouts {
            arc_ready: Duration::from_millis(2),
            dram_training: Duration::from_millis(2),
            arc_message: Duration::from_millis(100),
            aiclk: Duration::from_millis(2),
            telemetry: Duration::from_millis(2),
        },
        ..CardOptions::default()
    }
}

fn open(fw: Firmware) -> Result<Card<FakeWormhole>, PcieError> {
    Card::open(FakeWormhole::new(fw), options())
}

/// A host that only looks (`komorebi devices`, `komorebi log`) leaves a Wormhole's clock as it
/// found it: no `ARC_GO_BUSY`, one `GET_AICLK` to read it.
#[test]
fn a_looking_open_of_a_wormhole_reads_its_clock_and_raises_nothing() {
    let looking = CardOptions {
        raise_clock: false,
        idle_clock_at_drop: false,
        ..options()
    };
    let card = Card::open(FakeWormhole::new(Firmware::default()), looking).unwrap();
    assert_eq!(
        card.bar().messages,
        [
            (msg::ARC_GET_HARVESTING, 0),
            (msg::GET_AICLK, wh::NO_ARGUMENT),
        ]
    );
    assert!(!card.identity().clock_raised);
    assert_eq!(
        card.aiclk_reported(),
        Some(card.aiclk_mhz()),
        "GET_AICLK's answer"
    );
    // A clock read as 0: reported as none, though device time still has a rate.
    let silent = Firmware {
        idle_mhz: 0,
        ..Firmware::default()
    };
    let looking = CardOptions {
        raise_clock: false,
        idle_clock_at_drop: false,
        ..options()
    };
    let card = Card::open(FakeWormhole::new(silent), looking).unwrap();
    assert_eq!(card.aiclk_reported(), None);
    assert!(card.aiclk_mhz() > 0);
}

#[test]
fn arc_start_follows_tt_umd_s_table_and_luwen_s_for_a_boot_not_done_or_asleep() {
    use wormhole_pac::arc::boot;
    let cases = [
        ((boot::INIT_DONE_1, 0, 0), ArcStart::Ready),
        ((boot::INIT_DONE_2, 0, 0), ArcStart::Ready),
        (
            (boot::WATCHDOG, 0, 0),
            ArcStart::Stopped("its watchdog fired"),
        ),
        ((0x55, 0, 0), ArcStart::Stopped("it is asleep")),
        ((0xAA00, 0, 0), ArcStart::Stopped("it is asleep")),
        ((0, boot::POST_CODE_INIT_DONE, 0), ArcStart::Ready),
        ((0, 0xC0DE_0040, 0), ArcStart::Ready),
        ((0, 0xC0DE_0080, 0), ArcStart::Starting),
        ((0x60, 0, 0), ArcStart::Starting),
        ((0x1111_0000, 0, 0), ArcStart::Starting),
        ((0xAA52, 0, 0), ArcStart::Starting),
        ((0xAA34_0000, 0, 0), ArcStart::Starting),
        // A served message (its code in the low half): ready unless a DMA is under way.
        ((0x0052, 0, 0), ArcStart::Ready),
        ((0x0052, 0, 1), ArcStart::Starting),
    ];
    for ((status, post, dma), want) in cases {
        assert_eq!(arc_start(status, post, dma), want, "{status:#x} {post:#x}");
    }
}

#[test]
fn a_healthy_card_opens_with_harvest_aiclk_and_busy_messages_in_that_order() {
    // ARC bit 1 is NoC0 row 1 (tt-umd's HARVESTING_NOC_LOCATIONS): row bit 0 in tt-umd's order.
    let card = open(Firmware {
        starting_polls: 3,
        arc_rows: 0b10,
        ramp: 2,
        ..Firmware::default()
    })
    .unwrap();
    let bar = card.bar();
    assert_eq!(
        bar.messages,
        [
            (msg::ARC_GET_HARVESTING, 0),
            (msg::ARC_GO_BUSY, 0),
            (msg::GET_AICLK, wh::NO_ARGUMENT),
            (msg::GET_AICLK, wh::NO_ARGUMENT),
            (msg::GET_AICLK, wh::NO_ARGUMENT),
        ]
    );
    assert_eq!(card.chip().harvest_word(), 0b1);
    assert_eq!(card.tensix().count(), 72);
    assert!(!card.tensix().any(|t| t.y() == 1), "row 1 is harvested");
    assert_eq!(card.aiclk_mhz(), 1000);
    let id = card.identity();
    assert!(id.clock_raised, "{id:?}");
    assert_eq!(card.telemetry().get(tag::GDDR_STATUS), Some(0x555));
    assert!(
        card.notes().iter().any(|n| n.contains("translation is on")),
        "{:?}",
        card.notes()
    );
    // Nine tiles get a window of their own and the spare takes the rest; no DRAM window.
    assert_eq!(card.tiles_with_window(), 9);
    assert_eq!(card.dram_windows(), 0);
    drop(bar);
    // Windows target raw NoC0 coordinates: a write to the first tile lands at (1, 2).
    let first = Xy::new(1, 2).unwrap();
    card.write_l1(first, 0x100, &[1, 2, 3, 4]).unwrap();
    assert_eq!(
        card.bar().memory.get(&((1, 2), 0x100)),
        Some(&0x0403_0201),
        "{:?}",
        card.bar().configs
    );
}

#[test]
fn the_legacy_table_is_found_by_message_0x2c_and_read_by_tag() {
    // Old firmware: no table pointers; DDR_STATUS 4 bits a channel (2 trained, 3 skipped), the
    // highest clock in the AICLK word's upper half.
    let card = open(Firmware {
        tagged: false,
        trained: 0x23_2222,
        max_mhz: 900,
        busy_mhz: 880,
        ..Firmware::default()
    })
    .unwrap();
    let bar = card.bar();
    assert_eq!(
        bar.messages[1],
        (msg::GET_SMBUS_TELEMETRY_ADDR, wh::NO_ARGUMENT)
    );
    assert_eq!(card.aiclk_mhz(), 880, "within 5% of 900");
    assert!(card.identity().clock_raised);
    assert!(
        card.notes().iter().any(|n| n.contains("legacy flat table")),
        "{:?}",
        card.notes()
    );
}

#[test]
fn dram_still_training_is_waited_for_and_a_failed_channel_is_named() {
    let card = open(Firmware {
        training: 0b01_01_00_00_01_01,
        training_polls: 2,
        ..Firmware::default()
    })
    .unwrap();
    assert!(card.bar().telemetry_reads.get() >= 3);
    let e = open(Firmware {
        trained: 0b01_10_01_01_01_01,
        ..Firmware::default()
    })
    .err()
    .unwrap();
    assert!(
        matches!(&e, PcieError::DramTraining(why) if why.contains("channel(s) 4 failed")),
        "{e}"
    );
    let e = open(Firmware {
        trained: 0b01_01_01_01_00_01,
        ..Firmware::default()
    })
    .err()
    .unwrap();
    assert!(
        matches!(&e, PcieError::DramTraining(why) if why.contains("1 still training")),
        "{e}"
    );
}

#[test]
fn an_arc_that_never_starts_or_whose_watchdog_fired_is_a_typed_error() {
    let e = open(Firmware {
        starting_polls: u32::MAX,
        ..Firmware::default()
    })
    .err()
    .unwrap();
    match &e {
        PcieError::WormholeArcNotReady {
            status: 0x60,
            post_code: 0x1111_0000,
            why,
            ..
        } => assert_eq!(why, "still starting"),
        other => panic!("{other}"),
    }
    let e = open(Firmware {
        ready: (wh::boot::WATCHDOG, 0),
        ..Firmware::default()
    })
    .err()
    .unwrap();
    assert!(
        matches!(&e, PcieError::WormholeArcNotReady { why, .. } if why.contains("watchdog")),
        "{e}"
    );
    assert!(e.to_string().contains("tt-smi -r"), "{e}");
}

#[test]
fn a_hung_bus_is_refused_before_any_message() {
    let mut bar = FakeWormhole::new(Firmware::default());
    bar.hung = true;
    let mut found = arc::wormhole::open_card(&mut bar, &options().open, true);
    assert!(
        matches!(&found, Err(PcieError::Hung { what }) if what.contains("0x1ff5002c")),
        "{:?}",
        found.as_ref().err()
    );
    assert!(bar.messages.is_empty(), "{:?}", bar.messages);
    // A bus that hangs between messages: ARC_MISC_CNTL reads all ones before the next rings.
    let mut bar = FakeWormhole::new(Firmware::default());
    found = arc::wormhole::open_card(&mut bar, &options().open, true);
    assert!(found.is_ok());
    bar.hung = true;
    let e =
        komorebi_pcie::arc::wormhole_message(&mut bar, msg::GET_AICLK, 0, Duration::from_millis(5))
            .unwrap_err();
    assert!(
        matches!(&e, PcieError::Hung { what } if what.contains("ARC_MISC_CNTL")),
        "{e}"
    );
}

#[test]
fn a_tagged_table_without_the_clock_limit_takes_it_from_the_legacy_table() {
    // Bundles 18.4 to 18.7: AICLK_LIMIT_MAX is missing, the legacy table's AICLK word has it.
    let card = open(Firmware {
        max_mhz: 950,
        busy_mhz: 950,
        omit_limit: true,
        ..Firmware::default()
    })
    .unwrap();
    assert_eq!(card.aiclk_mhz(), 950);
    assert!(card.identity().clock_raised);
    assert!(
        card.bar()
            .messages
            .contains(&(msg::GET_SMBUS_TELEMETRY_ADDR, wh::NO_ARGUMENT))
    );
}

#[test]
fn a_clock_that_does_not_settle_is_recorded_and_the_open_goes_on() {
    let card = open(Firmware {
        busy_mhz: 700,
        ..Firmware::default()
    })
    .unwrap();
    let id = card.identity();
    assert!(!id.clock_raised);
    let note = id.clock_note.unwrap();
    assert!(note.contains("did not reach 1000 MHz"), "{note}");
    assert_eq!(card.aiclk_mhz(), 700);
}

#[test]
fn a_message_waits_for_arc_to_take_the_last_and_says_so_when_it_never_does() {
    // The first message is served but its IRQ bit stays set: ARC_GO_BUSY is never rung (an
    // outcome, as a refused message is), and the GET_AICLK that reads the clock then fails.
    let e = open(Firmware {
        clears_irq: false,
        ..Firmware::default()
    })
    .err()
    .unwrap();
    match &e {
        PcieError::ArcMessage { code, why } => {
            assert_eq!(*code, msg::GET_AICLK as u32, "{e}");
            assert!(why.contains("IRQ bit set"), "{e}");
        }
        other => panic!("{other}"),
    }
}
