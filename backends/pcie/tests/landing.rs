//! The host's writes land where the next step needs them (`landing.rs`): a DRAM write is
//! read back before the next publish, the loader reads back its resets before it loads and
//! its multicast on every tile before it releases the cores, and a dropped card reads back its
//! last writes before it frees their windows; the host proxy acknowledges a DRAM write only
//! after reading it back, and on a hung card its stop word is an error and its clock stands.
//! The tests record every access the card makes through its windows and check the read-back
//! comes where it must.

#![cfg(feature = "sim")]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use blackhole_pac::tensix::SOFT_RESET_ADDR;
use blackhole_pac::tlb::TlbConfig;
use komorebi_pcie::PcieError;
use komorebi_pcie::card::{Card, CardOptions};
use komorebi_pcie::firmware::{BootOptions, Firmware, boot};
use komorebi_pcie::sim::{SimBar, SimBarOptions};
use komorebi_sim::{Boot, Sim, SimConfig};

mod common;

use common::{Access, Read, Tap, Tapped};

/// Every access, in order.
#[derive(Default)]
struct Recording {
    log: Rc<RefCell<Vec<Access>>>,
}

impl Tap for Recording {
    fn saw(&self, access: Access) {
        self.log.borrow_mut().push(access);
    }
}

/// The simulated card, every access recorded in the log returned.
fn recording(sim: Sim) -> (Card<Tapped<Recording>>, Rc<RefCell<Vec<Access>>>) {
    let tap = Recording::default();
    let log = tap.log.clone();
    let bar = Tapped::new(SimBar::new(sim, SimBarOptions::default()), tap);
    (Card::open(bar, CardOptions::default()).unwrap(), log)
}

/// The window and offset of the last access, a write, and the log cleared for what follows.
fn last_write(log: &RefCell<Vec<Access>>) -> (u32, u64) {
    let Some(&Access::Write(window, _, last)) = log.borrow().last() else {
        panic!("no write recorded: {:?}", log.borrow().last());
    };
    log.borrow_mut().clear();
    (window, last)
}

/// Whether the log holds a read of `window` at `at`.
fn read_back(log: &RefCell<Vec<Access>>, window: u32, at: u64) -> bool {
    log.borrow()
        .iter()
        .any(|a| matches!(a, &Access::Read(w, _, o) if w == window && o == at))
}

#[test]
fn a_dram_write_is_read_back_before_the_next_publish_and_only_then() {
    // A Blackhole writes DRAM through each bank's own 4 GiB window, a Wormhole through the
    // spare window: both are read back.
    for config in [SimConfig::default(), wormhole()] {
        let (card, log) = recording(Sim::new(config));
        let tile = card.tensix().next().unwrap();
        card.write_dram(0, 0x1000, &[7; 64]).unwrap();
        let (window, last) = last_write(&log);
        card.publish_barrier(tile).unwrap();
        assert!(
            read_back(&log, window, last),
            "the DRAM write's last word read back: {:?}",
            log.borrow()
        );
        log.borrow_mut().clear();
        card.publish_barrier(tile).unwrap();
        assert!(
            log.borrow()
                .iter()
                .all(|a| !matches!(a, &Access::Read(w, ..) if w == window)),
            "nothing written since: {:?}",
            log.borrow()
        );
    }
}

/// The simulator as an unharvested Wormhole B0.
fn wormhole() -> SimConfig {
    SimConfig {
        wormhole: Some(wormhole_pac::harvest::HarvestMask::NONE),
        timing: komorebi_sim::Timing::wormhole(),
        ..SimConfig::default()
    }
}

#[test]
fn a_dropped_card_reads_back_its_last_writes_before_it_frees_their_windows() {
    let (card, log) = recording(Sim::new(SimConfig::default()));
    let tiles: Vec<_> = card.tensix().take(3).collect();
    for &t in &tiles {
        card.write_l1(t, 0x8000, &[1; 16]).unwrap();
    }
    card.write_dram(1, 0x2000, &[2; 32]).unwrap();
    let writes: Vec<(u32, u64)> = log
        .borrow()
        .iter()
        .rev()
        .take(4)
        .map(|a| match a {
            &Access::Write(w, _, at) => (w, at),
            a => panic!("{a:?}"),
        })
        .collect();
    log.borrow_mut().clear();
    drop(card);
    let log = log.borrow();
    for (window, at) in writes {
        let read = log
            .iter()
            .position(|a| matches!(a, &Access::Read(w, _, o) if w == window && o == at));
        let freed = log
            .iter()
            .position(|a| matches!(a, &Access::Free(w) if w == window));
        assert!(
            matches!((read, freed), (Some(r), Some(f)) if r < f),
            "window {window}: read back at {read:?}, freed at {freed:?}: {log:?}"
        );
    }
}

#[test]
fn the_loader_reads_back_its_resets_before_it_loads_and_its_multicast_before_the_headers() {
    // No kernel comes up (nothing starts the released cores): the boot times out, after the
    // steps this test checks.
    let sim = Sim::new(SimConfig {
        boot: Boot::HeldInReset,
        control: komorebi_kernel::abi::CONTROL_LAYOUT,
        ..SimConfig::default()
    });
    let (mut card, log) = recording(sim);
    let tiles = card.tensix().count();
    let chip = card.chip().clone();
    let logical = move |t: komorebi_hal::Xy| chip.logical(t).unwrap_or((0xFF, 0xFF));
    let options = BootOptions {
        timeout: Duration::from_millis(1),
        native_allowed: true,
    };
    log.borrow_mut().clear();
    let e = boot(&mut card, &Firmware::native(), logical, options).unwrap_err();
    assert!(matches!(e, PcieError::FirmwareDidNotStart { .. }), "{e}");
    let log = log.borrow();
    let soft_reset = |c: &Option<TlbConfig>, at: u64| {
        c.is_some_and(|c| !c.multicast && c.addr + at == SOFT_RESET_ADDR as u64)
    };
    let multicast = |a: &Access| matches!(a, Access::Write(_, Some(c), _) if c.multicast);
    let first_mcast = log.iter().position(multicast).expect("a multicast load");
    let last_mcast = log.iter().rposition(multicast).unwrap();
    // Step 1: the last reset write, then a read of it, before the first multicast write.
    let last_reset = log[..first_mcast]
        .iter()
        .rposition(|a| matches!(a, Access::Write(_, c, at) if soft_reset(c, *at)))
        .expect("the resets come first");
    let Access::Write(reset_window, _, reset_at) = log[last_reset].clone() else {
        unreachable!()
    };
    assert!(
        log[last_reset..first_mcast]
            .iter()
            .any(|a| *a == Access::Read(reset_window, log_config(&log[last_reset]), reset_at)),
        "the last reset write read back before the load: {:?}",
        &log[last_reset..first_mcast]
    );
    // Step 2: every tile reads back the multicast's last word before the first header word is
    // written into the block it cleared (through another window).
    let Access::Write(_, _, mcast_at) = log[last_mcast].clone() else {
        unreachable!()
    };
    let header = komorebi_kernel::abi::CONTROL_BASE as u64;
    let first_header = log[last_mcast..]
        .iter()
        .position(
            |a| matches!(a, Access::Write(_, Some(c), at) if !c.multicast && c.addr + at == header),
        )
        .map(|i| i + last_mcast)
        .expect("the headers after the load");
    let first_release = log[last_mcast..]
        .iter()
        .position(|a| matches!(a, Access::Write(_, c, at) if soft_reset(c, *at)))
        .map(|i| i + last_mcast)
        .expect("a release after the load");
    assert!(first_header < first_release);
    let read_backs = log[last_mcast..first_header]
        .iter()
        .filter(|a| {
            matches!(a, Access::Read(_, Some(c), at) if !c.multicast && c.addr + at == mcast_at)
        })
        .count();
    assert_eq!(
        read_backs, tiles,
        "every tile reads back the multicast's last word before the headers"
    );
}

/// The configuration an access was recorded with.
fn log_config(a: &Access) -> Option<TlbConfig> {
    match a {
        Access::Read(_, c, _) | Access::Write(_, c, _) => *c,
        Access::Free(_) => None,
    }
}

#[test]
fn the_proxy_acknowledges_a_dram_write_only_after_reading_it_back() {
    use blackhole_pac::grid::DRAM_WORKER_PORT;
    use komorebi_hal::noc::{NocMulticast, WriteMode};
    use komorebi_hal::{L1Addr, NocAddr, NocId};
    use komorebi_pcie::proxy::HostNoc;

    let (card, log) = recording(Sim::new(SimConfig::default()));
    let tile = card.tensix().next().unwrap();
    let mut noc = HostNoc::new(&card, NocId::Noc0, tile);
    let (bank, at) = (2u8, 0x4000u64);
    let port = DRAM_WORKER_PORT[bank as usize];
    let dst = NocAddr::new(komorebi_hal::Xy::new(port.0, port.1).unwrap(), at).unwrap();
    noc.write(L1Addr::new(0x8000).unwrap(), dst, 64, WriteMode::ORDERED)
        .unwrap();
    let (window, last) = last_write(&log);
    assert!(noc.writes_acked().unwrap());
    assert!(
        read_back(&log, window, last),
        "the DRAM write read back before the ack: {:?}",
        log.borrow()
    );
}

#[test]
fn on_a_hung_card_the_proxy_s_clock_stands_and_its_next_access_says_why() {
    use komorebi_hal::control::ControlBlock;
    use komorebi_pcie::proxy::HostCtrl;
    use komorebi_sim::Fault;

    let mut card = Card::open(
        SimBar::new(Sim::new(SimConfig::default()), SimBarOptions::default()),
        CardOptions::default(),
    )
    .unwrap();
    let tile = card.tensix().next().unwrap();
    let layout = komorebi_kernel::abi::CONTROL_LAYOUT;
    card.pass_time();
    let before = HostCtrl::new(&card, tile, layout).now();
    assert!(before > 0 && before < u64::MAX, "{before}");
    card.bar_mut().sim_mut().inject(Fault::Hung).unwrap();
    let mut ctrl = HostCtrl::new(&card, tile, layout);
    // The clock cannot be read: it stays where this handle last read it (never, so 0), never
    // jumping to the end of time (a wait's deadline would be past, or saturate and never come),
    // and the next access returns why (a wait on a clock that stands would never end).
    assert_eq!(ctrl.now(), 0);
    let e = ctrl.load(layout.stop_offset).unwrap_err();
    assert!(format!("{e:?}").contains("the wall clock"), "{e:?}");
    // Then the stop word itself: all ones on a hung card, not a stop.
    let e = ctrl.stop_requested().unwrap_err();
    assert!(format!("{e:?}").contains("stop word"), "{e:?}");
}

/// Answers a stale word at L1 `addr` of every tile the first `stale` times it is read there.
struct Late {
    addr: u64,
    stale: u32,
    reads: RefCell<BTreeMap<(u8, u8), u32>>,
}

impl Tap for Late {
    fn read32(&self, read: Read<'_>) -> Option<Result<u32, PcieError>> {
        let c = read.config.filter(|c| !c.multicast)?;
        if read.at() != Some(self.addr) {
            return None;
        }
        let mut reads = self.reads.borrow_mut();
        let n = reads.entry(c.end).or_default();
        *n += 1;
        (*n <= self.stale).then_some(Ok(0xDEAD_BEEF))
    }
}

fn late(stale: u32) -> (Card<Tapped<Late>>, u32) {
    let addr = 0x9000;
    let tap = Late {
        addr: addr as u64 + 60,
        stale,
        reads: RefCell::new(BTreeMap::new()),
    };
    let bar = Tapped::new(
        SimBar::new(Sim::new(SimConfig::default()), SimBarOptions::default()),
        tap,
    );
    (Card::open(bar, CardOptions::default()).unwrap(), addr)
}

#[test]
fn a_multicast_that_has_not_landed_is_read_again_until_it_has() {
    let (card, addr) = late(3);
    card.multicast_l1(addr, &[0x5A; 64]).unwrap();
    card.landed().unwrap();
    let reads = card.bar().tap.reads.borrow().clone();
    let with_window = card.tiles_with_window();
    assert_eq!(reads.len(), with_window, "every tile with a window read it");
    assert!(
        reads.values().all(|&n| n == 4),
        "three stale reads, then the word: {reads:?}"
    );
}

#[test]
fn a_multicast_that_never_lands_is_an_error_naming_the_word() {
    let (card, addr) = late(u32::MAX);
    card.multicast_l1(addr, &[0x5A; 64]).unwrap();
    let e = card.landed().unwrap_err().to_string();
    assert!(
        e.contains("the multicast's last word at 0x903c")
            && e.contains("reads 0xdeadbeef, not the 0x5a5a5a5a written, after 64 reads"),
        "{e}"
    );
}
