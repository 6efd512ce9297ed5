//! The resource bound against runs: no run on the simulator (native kernels, both `--check`
//! modes) is faster than its bound, so `efficiency` = bound / cycles is never above 1.0. A run
//! that is would be a bug in the bound (it counted work the run does not do, or priced it
//! higher than the simulator does).

use blackhole_pac::harvest::HarvestMask;
use komorebi::app::broadcast::{self, BroadcastConfig, Check};
use komorebi::chip::ChipKind;
use komorebi_hal::LogicalRect;

fn shapes() -> Vec<BroadcastConfig> {
    let base = BroadcastConfig {
        jobs: 2,
        ..BroadcastConfig::default()
    };
    let rect = LogicalRect::new;
    vec![
        // The bound's own unit-test shapes: an NIU, a DRAM bank and a column's links bind.
        BroadcastConfig {
            rect: rect(0, 0, 2, 1),
            blocks: 1,
            pages: 1,
            page_size: 64,
            window: 1,
            columns: false,
            ..base.clone()
        },
        BroadcastConfig {
            rect: rect(0, 0, 1, 2),
            blocks: 1,
            pages: 1,
            page_size: 16384,
            window: 1,
            rows: false,
            ..base.clone()
        },
        BroadcastConfig {
            rect: rect(0, 0, 1, 2),
            blocks: 8,
            pages: 1,
            page_size: 16384,
            window: 1,
            columns: false,
            ..base.clone()
        },
        // Both broadcasts on small rectangles, pages and windows of every kind.
        BroadcastConfig {
            rect: rect(0, 0, 2, 2),
            blocks: 4,
            pages: 2,
            page_size: 256,
            window: 2,
            ..base.clone()
        },
        BroadcastConfig {
            rect: rect(2, 1, 4, 3),
            blocks: 6,
            pages: 3,
            page_size: 2048,
            window: 1,
            ..base.clone()
        },
        BroadcastConfig {
            rect: rect(4, 0, 4, 4),
            blocks: 5,
            pages: 1,
            page_size: 40960,
            window: 3,
            // Checking a 40 KiB page takes compute 645,120 cycles; a receiver waits for it.
            wait_limit: Some(100_000_000),
            ..base.clone()
        },
        // A whole row of both panels, and columns 5 and 11 harvested.
        BroadcastConfig {
            rect: rect(0, 0, 12, 2),
            blocks: 4,
            pages: 4,
            page_size: 2048,
            window: 2,
            ..base.clone()
        },
        BroadcastConfig {
            rect: rect(0, 0, 12, 10),
            blocks: 2,
            pages: 2,
            page_size: 1024,
            window: 8,
            harvest: HarvestMask::new(0x0201).unwrap(),
            jobs: 1,
            ..base.clone()
        },
        // Shapes whose run comes within 3% of the bound (a link of NoC1 binds, both checks).
        BroadcastConfig {
            rect: rect(0, 0, 12, 1),
            blocks: 32,
            pages: 2,
            page_size: 8192,
            window: 8,
            wait_limit: Some(100_000_000),
            jobs: 1,
            ..base.clone()
        },
        BroadcastConfig {
            blocks: 32,
            pages: 8,
            window: 4,
            rows: false,
            wait_limit: Some(100_000_000),
            jobs: 1,
            ..base.clone()
        },
        // The 03 default's shape, one job.
        BroadcastConfig {
            jobs: 1,
            ..base.clone()
        },
        // The simulated Wormhole B0 (its routes, 6 banks, assumed rates): the whole grid, a
        // row across its DRAM column, a column across its Ethernet row, and rows harvested.
        BroadcastConfig {
            chip: ChipKind::Wormhole,
            rect: rect(0, 0, 8, 10),
            blocks: 4,
            pages: 2,
            jobs: 1,
            ..base.clone()
        },
        BroadcastConfig {
            chip: ChipKind::Wormhole,
            rect: rect(0, 3, 8, 1),
            blocks: 16,
            pages: 2,
            page_size: 8192,
            window: 4,
            columns: false,
            wait_limit: Some(100_000_000),
            jobs: 1,
            ..base.clone()
        },
        BroadcastConfig {
            chip: ChipKind::Wormhole,
            rect: rect(5, 0, 1, 10),
            blocks: 16,
            pages: 4,
            window: 2,
            rows: false,
            jobs: 1,
            ..base.clone()
        },
        BroadcastConfig {
            chip: ChipKind::Wormhole,
            row_harvest: wormhole_pac::harvest::HarvestMask::new(0x84).unwrap(),
            rect: rect(0, 0, 8, 8),
            blocks: 6,
            pages: 3,
            page_size: 1024,
            window: 3,
            ..base.clone()
        },
    ]
}

#[test]
fn no_run_is_faster_than_its_bound() {
    for shape in shapes() {
        for check in [Check::Full, Check::None] {
            let cfg = BroadcastConfig {
                check,
                ..shape.clone()
            };
            let s = broadcast::run(&cfg, |_| {}).unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
            assert!(s.ok, "{cfg:?}\n{s}");
            let e = s.efficiency.unwrap_or_else(|| panic!("{cfg:?}\n{s}"));
            eprintln!(
                "{:?} {} {:?} blocks {} pages {} x {} window {}: {} cycles, bound {} ({}), efficiency {e:.3}",
                cfg.chip,
                cfg.rect,
                check,
                cfg.blocks,
                cfg.pages,
                cfg.page_size,
                cfg.window,
                s.cycles,
                s.bound_cycles,
                s.binding
            );
            assert!(e <= 1.0, "efficiency {e} > 1: {cfg:?}\n{s}");
            match check {
                Check::None => assert_eq!(s.checked_bytes, 0, "{s}"),
                Check::Full => assert!(s.checked_bytes > 0, "{s}"),
            }
        }
    }
}
