//! The open sequence over the simulated card: ARC ready, DRAM trained, AICLK raised through
//! the ARC message queue and seen in telemetry, before the window plan; and a later message
//! through the same queue.

#![cfg(feature = "sim")]

use blackhole_pac::arc::{msg, tag};
use komorebi_pcie::PcieError;
use komorebi_pcie::arc::{self, MessageQueue};
use komorebi_pcie::card::{Card, CardOptions};
use komorebi_pcie::sim::{SimBar, SimBarOptions};
use komorebi_sim::{Sim, SimConfig};

/// A simulated card whose AICLK reaches the busy clock 10 µs after `AICLK_GO_BUSY`.
fn open() -> Card<SimBar> {
    let sim = Sim::new(SimConfig {
        aiclk_ramp_cycles: 13_500,
        ..SimConfig::default()
    });
    Card::open(
        SimBar::new(sim, SimBarOptions::default()),
        CardOptions::default(),
    )
    .unwrap()
}

#[test]
fn open_raises_aiclk_with_one_message_and_waits_for_telemetry() {
    let mut card = open();
    let id = card.identity();
    assert!(id.clock_raised, "{id:?}");
    assert_eq!(id.clock_note, None);
    assert_eq!(card.aiclk_mhz(), 1350);
    assert!(card.notes().is_empty(), "{:?}", card.notes());
    // Telemetry read at open still shows the idle clock: it was read before the message.
    assert_eq!(card.telemetry().get(tag::AICLK), Some(800));
    let sim = card.bar_mut().sim();
    assert_eq!(sim.arc_answered(), 1, "exactly AICLK_GO_BUSY");
    // The host waited the ramp out in device time (a poll is 1350 cycles).
    assert!(sim.now() >= 13_500, "{}", sim.now());
}

#[test]
fn with_the_default_configuration_the_open_lets_no_device_time_pass() {
    // The clock shows busy at once, so a run's figures do not depend on the open.
    let sim = Sim::new(SimConfig::default());
    let mut card = Card::open(
        SimBar::new(sim, SimBarOptions::default()),
        CardOptions::default(),
    )
    .unwrap();
    assert!(card.identity().clock_raised);
    assert_eq!(card.bar_mut().sim().now(), 0);
}

#[test]
fn a_later_message_uses_the_same_queue_and_an_unknown_code_is_a_typed_error() {
    let card = open();
    let q = MessageQueue::locate(&card, msg::APPLICATION_QUEUE).unwrap();
    let timeout = CardOptions::default().open.arc_message;
    let r = q
        .send(&card, msg::code::AICLK_GO_BUSY, &[1, 2, 3], timeout)
        .unwrap();
    assert_eq!((r.status, r.value), (0, 0));
    // A NOP is answered as a card's firmware does: unsupported.
    let e = q.send(&card, msg::code::NOP, &[], timeout).unwrap_err();
    assert!(
        matches!(&e, PcieError::ArcMessage { code: 0x11, why } if why.contains("does not know")),
        "{e}"
    );
    let e = q.send(&card, 0x99, &[], timeout).unwrap_err();
    assert!(
        matches!(&e, PcieError::ArcMessage { code: 0x99, why } if why.contains("does not know")),
        "{e}"
    );
    // The idle message lowers the clock telemetry reports; busy brings it back.
    q.send(&card, msg::code::AICLK_GO_LONG_IDLE, &[], timeout)
        .unwrap();
    let t = komorebi_pcie::telemetry::Telemetry::read(&card).unwrap();
    assert_eq!(t.get(tag::AICLK), Some(800));
    let out = arc::raise_aiclk(&card, &CardOptions::default().open).unwrap();
    assert_eq!((out.raised, out.aiclk_mhz), (true, 1350));
}

#[test]
fn a_simulated_wormhole_card_opens_through_its_arc_in_bar0() {
    // The simulator's Wormhole ARC (`komorebi_sim::arc_wormhole`): started, the harvested rows
    // in ARC's order, the tagged telemetry table, AICLK raised by ARC_GO_BUSY; then Wormhole's
    // ten 2 MiB windows (nine tiles and the spare) and no 4 GiB ones.
    let rows = wormhole_pac::harvest::HarvestMask::new(0x201).unwrap();
    let sim = || {
        Sim::new(SimConfig {
            wormhole: Some(rows),
            timing: komorebi_sim::Timing::wormhole(),
            ..SimConfig::default()
        })
    };
    let bar = SimBar::new(sim(), SimBarOptions::default());
    assert_eq!(komorebi_pcie::Bar::identity(&bar).device_id, 0x401E);
    let mut card = Card::open(bar, CardOptions::default()).unwrap();
    assert_eq!(card.chip().harvest_word(), 0x201);
    assert_eq!(card.tensix().count(), 64);
    assert_eq!(card.aiclk_mhz(), 1000);
    assert!(card.identity().clock_raised);
    assert_eq!((card.tiles_with_window(), card.dram_windows()), (9, 0));
    assert_eq!(
        card.telemetry().get(wormhole_pac::arc::tag::GDDR_STATUS),
        Some(0x555)
    );
    assert!(
        card.notes()
            .iter()
            .any(|n| n.contains("translation is off")),
        "{:?}",
        card.notes()
    );
    // The windows are a Wormhole's: the spare is the chip's 2 MiB window 156 and the first
    // tile's is 157, whose 64-bit configuration word (at 0x1FC0_0000 + 8 * 157) names the
    // tile, and whose aperture at BAR0 0x09C0_0000 + 2 MiB reaches its L1.
    let tile = komorebi_hal::Xy::new(1, 2).unwrap();
    card.write_l1(tile, 0x40, &[9, 8, 7, 6]).unwrap();
    let chip = card.bar_mut().sim_mut();
    assert_eq!(chip.read_l1_u32((1, 2), 0x40).unwrap(), 0x0607_0809);
    let mut word = [0u8; 8];
    chip.bar_read(0, 0x1FC0_0000 + 8 * 157, &mut word).unwrap();
    let (addr, target) = wormhole_pac::tlb::decode(
        wormhole_pac::tlb::WindowSize::Mib2,
        u64::from_le_bytes(word),
    )
    .unwrap();
    assert_eq!((addr, target.end, target.multicast), (0, (1, 2), false));
    let mut l1 = [0u8; 4];
    chip.bar_read(0, 0x09C0_0000 + (2 << 20) + 0x40, &mut l1)
        .unwrap();
    assert_eq!(l1, [9, 8, 7, 6]);
    // The card's NoC ports to ARC are a Blackhole's (tile (8, 0)): on a Wormhole they refuse,
    // rather than reach whatever tile (8, 0) is there.
    use komorebi_pcie::arc::ArcPort;
    use komorebi_pcie::telemetry::ArcRead;
    for e in [
        card.arc_read32(0x8003_0000).unwrap_err(),
        card.arc_write32(0x8003_0000, 1).unwrap_err(),
    ] {
        assert!(
            e.to_string()
                .starts_with("PCI device id 401e: a Wormhole B0's ARC is not on the NoC"),
            "{e}"
        );
    }
}

#[test]
fn the_clock_the_open_raised_goes_back_to_idle_once() {
    // What the drop does (unless `idle_clock_at_drop` is off): one AICLK_GO_LONG_IDLE.
    let mut card = open();
    assert_eq!(card.aiclk_mhz(), 1350);
    assert_eq!(card.idle_clock(), Ok(true));
    assert_eq!(card.aiclk_mhz(), 800);
    assert_eq!(
        card.bar_mut().sim().arc_answered(),
        2,
        "AICLK_GO_BUSY, then idle"
    );
    let t = komorebi_pcie::telemetry::Telemetry::read(&card).unwrap();
    assert_eq!(t.get(tag::AICLK), Some(800));
    // At idle already: no message.
    assert_eq!(card.idle_clock(), Ok(false));
    assert_eq!(card.bar_mut().sim().arc_answered(), 2);
    assert!(CardOptions::default().idle_clock_at_drop);
}

/// A host that only looks at a card (`komorebi log`, `komorebi devices`) leaves its clock as it
/// found it: no `AICLK_GO_BUSY` at the open, no `AICLK_GO_LONG_IDLE` at the drop.
#[test]
fn a_looking_open_sends_arc_no_clock_message() {
    let sim = Sim::new(SimConfig::default());
    let looking = CardOptions {
        raise_clock: false,
        idle_clock_at_drop: false,
        ..CardOptions::default()
    };
    let mut card = Card::open(SimBar::new(sim, SimBarOptions::default()), looking).unwrap();
    assert!(!card.identity().clock_raised);
    assert_eq!(card.aiclk_mhz(), 800, "telemetry's clock, as found");
    assert_eq!(card.aiclk_reported(), Some(800), "reported, not assumed");
    assert_eq!(card.bar_mut().sim().arc_answered(), 0);
    let telemetry = komorebi_pcie::telemetry::Telemetry::read(&card).unwrap();
    assert_eq!(telemetry.get(tag::AICLK), Some(800));
}
