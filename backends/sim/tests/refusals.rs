//! What the simulator refuses rather than panic, hang or wrap round on: a configuration it
//! cannot run, host accesses whose ranges wrap past 64 bits, a fault delay past the model's
//! largest, and time run to the end of 64 bits.

use komorebi_sim::timing::{MAX_DELAY, TIME_LIMIT};
use komorebi_sim::*;

/// `config` refused by `Sim::try_new`, the message naming `field`.
fn refused(config: SimConfig, field: &str) {
    match Sim::try_new(config) {
        Err(SimError::Config { field: f, why }) => {
            assert_eq!(f, field, "{why}");
            assert!(why.contains("allowed"), "{field}: {why}");
        }
        Err(e) => panic!("{field}: {e}"),
        Ok(_) => panic!("{field}: taken"),
    }
}

#[test]
fn a_configuration_the_simulator_cannot_run_is_refused_naming_its_field() {
    let timing = |t: Timing| SimConfig {
        timing: t,
        ..SimConfig::default()
    };
    let d = Timing::default();
    // A flit of no bytes divided by zero; a packet of no bytes split a write for good; a bank
    // of no bandwidth served in "infinite" cycles that wrapped round to fewer than a real one.
    refused(timing(Timing { flit_bytes: 0, ..d }), "timing.flit_bytes");
    refused(timing(Timing { aiclk_mhz: 0, ..d }), "timing.aiclk_mhz");
    refused(
        timing(Timing {
            max_packet_bytes: 0,
            ..d
        }),
        "timing.max_packet_bytes",
    );
    refused(
        timing(Timing {
            dram_bank_bytes_per_cycle: 0.0,
            ..d
        }),
        "timing.dram_bank_bytes_per_cycle",
    );
    refused(
        timing(Timing {
            reserve_base: f64::NAN,
            ..d
        }),
        "timing.reserve_base",
    );
    refused(
        timing(Timing {
            dram_write_latency: MAX_DELAY + 1,
            ..d
        }),
        "timing.dram_write_latency",
    );
    refused(
        SimConfig {
            adversarial: true,
            jitter_cycles: u64::MAX,
            ..SimConfig::default()
        },
        "jitter_cycles",
    );
    // An instruction of no cycles: a loop of them never let time pass.
    let mut cost = SimConfig::default().core_cost;
    cost.base = 0;
    refused(
        SimConfig {
            core_cost: cost,
            ..SimConfig::default()
        },
        "core_cost.base",
    );
    // A control block past L1, or one whose base wrapped round to L1's start.
    for base in [0xFFFF_FF00, 0x0200_0000] {
        let mut control = SimConfig::default().control;
        control.base = base;
        refused(
            SimConfig {
                control,
                ..SimConfig::default()
            },
            "control",
        );
    }
    let mut control = SimConfig::default().control;
    control.stop_offset = control.len;
    refused(
        SimConfig {
            control,
            ..SimConfig::default()
        },
        "control.stop_offset",
    );
    // The limits themselves are taken.
    Sim::try_new(timing(Timing {
        dram_write_latency: MAX_DELAY,
        ..d
    }))
    .unwrap();
}

#[test]
fn host_ranges_that_wrap_past_64_bits_are_refused_not_wrapped_round() {
    let mut s = Sim::try_new(SimConfig::default()).unwrap();
    s.write_dram(0, 0, &[9; 4]).unwrap();
    let e = s.write_dram(0, u64::MAX - 1, &[1, 2, 3, 4]).unwrap_err();
    assert!(matches!(e, SimError::OutOfRange(_)), "{e}");
    let mut back = [0; 4];
    s.read_dram(0, 0, &mut back).unwrap();
    assert_eq!(back, [9; 4], "bank bytes 0.. untouched");
    assert!(s.read_dram(0, u64::MAX, &mut back).is_err());
    // A BAR offset whose end wraps is no configuration register (it panicked slicing them).
    let e = s.bar_write(0, 0xFFFF_FFFF_FFFF_FFFC, &[0; 4]).unwrap_err();
    assert!(matches!(e, SimError::BadBar(_)), "{e}");
    assert!(matches!(
        s.bar_read(0, 0xFFFF_FFFF_FFFF_FFFC, &mut back),
        Err(SimError::BadBar(_))
    ));
}

#[test]
fn a_fault_delay_past_the_models_largest_is_refused_and_time_stops_at_its_limit() {
    let mut s = Sim::try_new(SimConfig::default()).unwrap();
    let delay = |d| Fault::Transaction {
        filter: TxFilter::default(),
        action: TxAction::Delay(d),
    };
    assert!(matches!(
        s.inject(delay(u64::MAX)),
        Err(SimError::OutOfRange(_))
    ));
    s.inject(delay(MAX_DELAY)).unwrap();
    // Time run to the end of 64 bits stops at the limit, where sums of a few latencies still
    // fit (a write issued at u64::MAX overflowed).
    s.advance(u64::MAX);
    assert_eq!(s.now(), TIME_LIMIT);
    s.advance(u64::MAX);
    assert_eq!(s.now(), TIME_LIMIT);
    let tile = s.tensix()[0];
    s.write_l1(tile, 0x2_0000, &[1; 16]).unwrap();
    assert_eq!(s.run(u64::MAX), RunOutcome::Quiescent);
}

/// A grid of no columns, and points off the ring, step and count hops without dividing by zero
/// or wrapping round (a point past the ring counts as its place on it).
#[test]
fn routes_off_the_grid_neither_divide_by_zero_nor_wrap() {
    use komorebi_sim::route::Grid;
    let none = Grid {
        width: 0,
        height: 0,
    };
    assert_eq!(none.step((0, 0), 0), (0, 0));
    assert_eq!(none.hops((3, 4), (5, 6)), 0);
    let bh = Grid::BLACKHOLE;
    assert_eq!(bh.step((255, 0), 0), ((256 % 17) as u8, 0));
    assert_eq!(bh.hops((20, 0), (3, 0)), 0, "20 is 3 on a ring of 17");
    assert_eq!(bh.hops((1, 0), (4, 0)), 3);
    assert_eq!(bh.hops((16, 0), (0, 0)), 1);
}
