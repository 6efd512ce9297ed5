use blackhole_pac::harvest::HarvestMask;
use clap::{CommandFactory, Parser};
use komorebi_hal::{LogicalRect, LogicalXy, NocId, Rect, Xy};

use super::error::NocBenchError;
use super::flags::NocBenchFlags;
use super::plan::{NocBench, Transfers, dram_port};

#[derive(Parser, Debug)]
struct Args {
    #[command(flatten)]
    flags: NocBenchFlags,
}

fn flags(args: &str) -> NocBenchFlags {
    let argv = std::iter::once("bench").chain(args.split_whitespace());
    Args::try_parse_from(argv).expect("flags parse").flags
}

fn bench(args: &str) -> Result<NocBench, NocBenchError> {
    NocBench::new(&flags(args))
}

fn xy(x: u8, y: u8) -> Xy {
    Xy::new(x, y).unwrap()
}

#[test]
fn the_default_harvest_is_the_p150_mask() {
    assert_eq!(
        flags("--pattern unicast --to 0,1 --size 64").harvest,
        HarvestMask::P100_P150
    );
}

#[test]
fn bank_help_names_every_port_it_uses() {
    let help = Args::command().render_long_help().to_string();
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for noc in [NocId::Noc0, NocId::Noc1] {
        let ports: Vec<String> = (0..8)
            .map(|b| dram_port(b, noc).unwrap())
            .map(|(x, y)| format!("({x},{y})"))
            .collect();
        assert!(help.contains(&ports.join(" ")), "{noc:?}: {help}");
    }
}

#[test]
fn dram_read_on_noc1_reads_the_mirrored_noc1_port() {
    let b = bench("--pattern dram-read --size 64 --noc 1").unwrap();
    // Bank 0's NoC 1 endpoint is NoC0 (0,1): NoC1 (16,10).
    assert_eq!(b.job.transfers, Transfers::DramRead(xy(16, 10)));
    let b = bench("--pattern dram-read --size 64 --bank 3").unwrap();
    assert_eq!(b.job.transfers, Transfers::DramRead(xy(0, 5)));
}

#[test]
fn dram_read_refuses_the_fused_bank_and_reads_the_others() {
    let e = bench("--pattern dram-read --size 64 --bank 3 --fused-dram 3").unwrap_err();
    assert_eq!(
        e.to_string(),
        "--bank 3 is the fused DRAM bank (--fused-dram 3): nothing answers at its ports \
         (allowed: banks 0, 1, 2, 4, 5, 6, 7)"
    );
    assert_eq!(e.exit_code(), 2);
    // Without --bank, the first working bank: bank 1 when bank 0 is fused.
    let b = bench("--pattern dram-read --size 64 --fused-dram 0").unwrap();
    assert_eq!(b.job.transfers, Transfers::DramRead(xy(0, 2)));
    // A working bank of a chip with a fused one runs as before.
    let r = bench("--pattern dram-read --size 2048 --count 4 --bank 4 --fused-dram 3")
        .unwrap()
        .run()
        .unwrap();
    assert_eq!(r.bytes, 8192);
    // The parser refuses a bank that does not exist.
    let argv = "bench --pattern dram-read --size 64 --fused-dram 8".split_whitespace();
    assert!(Args::try_parse_from(argv).is_err());
}

#[test]
fn multicast_rectangles_are_raw_corners_of_the_noc_in_use() {
    // Logical (0,0)..(1,1) is NoC0 (1,2)..(2,3) on the p150 mask.
    let b = bench("--pattern multicast --rect 0,0,2,2 --size 64").unwrap();
    assert_eq!(
        b.job.transfers,
        Transfers::Multicast(Rect::new(xy(1, 2), xy(2, 3)).unwrap())
    );
    // On NoC 1 the corners are mirrored (16 - x, 11 - y) and swapped.
    let b = bench("--pattern multicast --rect 0,0,2,2 --size 64 --noc 1").unwrap();
    assert_eq!(
        b.job.transfers,
        Transfers::Multicast(Rect::new(xy(14, 8), xy(15, 9)).unwrap())
    );
    // Across the harvested columns: logical 5..=6 is NoC0 x 6 and 11.
    let b = bench("--pattern multicast --rect 5,0,2,1 --size 64 --sender 0,5").unwrap();
    assert_eq!(
        b.job.transfers,
        Transfers::Multicast(Rect::new(xy(6, 2), xy(11, 2)).unwrap())
    );
}

#[test]
fn unicast_targets_are_raw_coordinates_and_the_sender_spawns_at_noc0() {
    let b = bench("--pattern unicast --sender 1,1 --to 0,1 --size 64 --noc 1").unwrap();
    assert_eq!(b.sender_noc0, (2, 3));
    // NoC0 (1,3) mirrored.
    assert_eq!(b.job.transfers, Transfers::Write(xy(15, 8)));
    let b = bench("--pattern unicast --to 7,0 --size 64 --harvest 0").unwrap();
    assert_eq!(b.job.transfers, Transfers::Write(xy(10, 2)));
}

#[test]
fn destinations_count_the_receivers_of_one_transaction() {
    let d = |a: &str| bench(a).unwrap().destinations();
    assert_eq!(d("--pattern multicast --rect 0,0,2,2 --size 64"), 3);
    assert_eq!(
        d("--pattern multicast --rect 0,0,2,2 --size 64 --loopback"),
        4
    );
    assert_eq!(d("--pattern multicast --rect 1,0,2,2 --size 64"), 4);
    // A sender outside the rectangle gets nothing back: --loopback is refused there.
    assert!(matches!(
        bench("--pattern multicast --rect 1,0,2,2 --size 64 --loopback"),
        Err(NocBenchError::LoopbackOutside { .. })
    ));
    assert_eq!(
        d("--pattern multicast --rect 0,0,1,1 --size 64 --loopback"),
        1
    );
    assert_eq!(d("--pattern one-to-all --rect 0,0,3,3 --size 64"), 1);
    assert_eq!(d("--pattern unicast --to 0,0 --size 64"), 1);
}

#[test]
fn transactions_and_bytes_follow_count_size_and_cores() {
    let b = bench("--pattern one-to-all --rect 0,0,3,3 --size 100 --count 4").unwrap();
    assert_eq!(b.transactions(), 4 * 8);
    assert_eq!(b.bytes(), 4 * 8 * 100);
    let Transfers::OneToAll(nodes) = &b.job.transfers else {
        panic!("{:?}", b.job.transfers)
    };
    // Column by column, the sender (logical (0,0) = NoC0 (1,2)) left out.
    assert_eq!(&nodes[..3], &[xy(1, 3), xy(1, 4), xy(2, 2)]);
    let b = bench("--pattern multicast --rect 0,0,4,4 --size 0x1000 --count 3").unwrap();
    assert_eq!((b.transactions(), b.bytes()), (3, 3 * 4096));
}

#[test]
fn flags_that_cannot_measure_are_refused_with_the_flag() {
    for (args, flag) in [
        ("--pattern unicast --size 64", "--to"),
        ("--pattern multicast --size 64", "--rect"),
        ("--pattern one-to-all --size 64", "--rect"),
        ("--pattern unicast --to 0,1 --size 64 --linked", "--linked"),
        (
            "--pattern multicast --rect 0,0,2,2 --size 64 --linked",
            "--linked",
        ),
        (
            "--pattern one-to-all --rect 0,0,2,2 --size 64 --loopback",
            "--loopback",
        ),
        ("--pattern dram-read --size 64 --to 1,1", "--to"),
        (
            "--pattern unicast --to 1,1 --size 64 --rect 0,0,2,2",
            "--rect",
        ),
        ("--pattern unicast --to 1,1 --size 64 --bank 1", "--bank"),
        ("--pattern unicast --to 12,0 --size 64", "--to"),
        ("--pattern unicast --to 12,0 --size 64 --harvest 0", ""),
        ("--pattern unicast --to 0,10 --size 64 --harvest 0", "--to"),
        ("--pattern dram-read --size 64 --sender 0,10", "--sender"),
        ("--pattern multicast --rect 0,0,13,1 --size 64", "--rect"),
        ("--pattern multicast --rect 0,0,0,1 --size 64", "--rect"),
        ("--pattern multicast --rect 0,0,1,1 --size 64", "--loopback"),
        ("--pattern one-to-all --rect 0,0,1,1 --size 64", "--sender"),
        (
            "--pattern one-to-all --rect 0,0,12,10 --size 0x10000 --count 5000",
            "--count",
        ),
    ] {
        match bench(args) {
            Ok(_) if flag.is_empty() => {}
            Ok(b) => panic!("{args}: accepted {b:?}"),
            Err(e) => {
                assert_eq!(e.exit_code(), 2, "{args}: {e}");
                assert!(
                    !flag.is_empty() && e.to_string().contains(flag),
                    "{args}: {e}"
                );
                assert!(
                    e.to_string().contains("allowed")
                        || e.to_string().contains("only for")
                        || e.to_string().contains("required"),
                    "{args}: {e}"
                );
            }
        }
    }
}

#[test]
fn a_short_run_reports_consistent_figures() {
    let r = bench("--pattern unicast --to 1,1 --size 64 --count 4")
        .unwrap()
        .run()
        .unwrap();
    assert!(r.cycles > 0);
    assert_eq!((r.transactions, r.bytes, r.destinations), (4, 256, 1));
    assert_eq!(r.bytes_per_cycle, 256.0 / r.cycles as f64);
    assert_eq!(r.cycles_per_transaction, r.cycles as f64 / 4.0);
    let json = serde_json::to_value(&r).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys.len(), 13, "{keys:?}"); // `fused_dram` left out: none
    assert_eq!(json["pattern"], "unicast");
    assert_eq!(
        (json["noc"].as_u64(), json["size"].as_u64()),
        (Some(r.noc.into()), Some(64))
    );
}

#[test]
fn a_logical_rect_covers_exactly_its_cores() {
    // The 2 x 1 rectangle across the harvested columns holds 2 cores, so no more receivers.
    let b = bench("--pattern multicast --rect 5,0,2,1 --size 64 --sender 0,5").unwrap();
    assert_eq!(b.destinations(), 2);
    assert_eq!(LogicalRect::new(5, 0, 2, 1).len(), 2);
    assert!(LogicalRect::new(5, 0, 2, 1).contains_xy(LogicalXy::new(6, 0)));
}

/// NoC0 coordinates of every Tensix whose destination word holds `marker` after the run of
/// `args`, the sender's source (and DRAM bank `bank`'s address 0) holding it before.
fn delivered(args: &str, bank: u8) -> Vec<(u8, u8)> {
    const MARKER: u32 = 0x5EED_B0B0;
    let b = bench(args).unwrap();
    let sender = b.sender_noc0;
    let (sim, _) = b
        .simulate(|sim| {
            sim.write_l1_u32(sender, super::flags::SRC_ADDR, MARKER)?;
            sim.write_dram(bank, super::flags::DRAM_ADDR, &MARKER.to_le_bytes())
        })
        .unwrap();
    let mut got: Vec<(u8, u8)> = sim
        .tensix()
        .into_iter()
        .filter(|&t| sim.read_l1_u32(t, super::flags::DST_ADDR).unwrap() == MARKER)
        .collect();
    got.sort_unstable();
    got
}

#[test]
fn every_pattern_reaches_exactly_its_cores_on_either_noc() {
    for noc in ["0", "1"] {
        // Logical columns 5 and 6 are NoC0 x 6 and 11 on the p150 mask; rows 1, 2 are y 3, 4.
        assert_eq!(
            delivered(
                &format!("--pattern multicast --rect 5,1,2,2 --size 64 --noc {noc}"),
                0
            ),
            [(6, 3), (6, 4), (11, 3), (11, 4)],
            "NoC {noc}"
        );
        assert_eq!(
            delivered(
                &format!("--pattern multicast --rect 0,0,2,2 --sender 1,1 --size 64 --noc {noc}"),
                0
            ),
            [(1, 2), (1, 3), (2, 2)],
            "NoC {noc}"
        );
        assert_eq!(
            delivered(
                &format!("--pattern one-to-all --rect 5,1,2,2 --sender 5,1 --size 64 --noc {noc}"),
                0
            ),
            [(6, 4), (11, 3), (11, 4)],
            "NoC {noc}"
        );
        assert_eq!(
            delivered(
                &format!("--pattern unicast --to 6,0 --size 64 --noc {noc}"),
                0
            ),
            [(11, 2)],
            "NoC {noc}"
        );
        // The read lands in the sender's destination only when it read bank 3.
        assert_eq!(
            delivered(
                &format!("--pattern dram-read --bank 3 --sender 2,2 --size 64 --noc {noc}"),
                3
            ),
            [(3, 4)],
            "NoC {noc}"
        );
        assert_eq!(
            delivered(
                &format!("--pattern dram-read --bank 3 --sender 2,2 --size 64 --noc {noc}"),
                2
            ),
            [],
            "NoC {noc}"
        );
    }
}
