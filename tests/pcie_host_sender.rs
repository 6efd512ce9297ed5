//! The host as a participant of the generic broadcast protocol: the host proxy
//! (`komorebi_pcie::proxy`) is the sender of one column broadcast, reading its blocks from DRAM
//! and multicasting them through TLB windows of the simulated card; the simulated tiles are its
//! receivers, running the same `komorebi_broadcast` code as on a chip. Every byte each receiver
//! gets is checked, and so is every page the host's own buffer hands to the host.

use std::cell::RefCell;
use std::rc::Rc;

mod common;

use blackhole_pac::grid::DRAM_WORKER_PORT;
use blackhole_pac::harvest::HarvestMask;
use komorebi_broadcast::args::Along;
use komorebi_broadcast::compute;
use komorebi_broadcast::device::{Broadcast, Context};
use komorebi_broadcast::layout::{BroadcastParams, broadcast_args};
use komorebi_hal::{
    Compute, DataMovement, L1Addr, LogicalRect, NocAddr, NocId, Role, Xy, block_on,
};
use komorebi_kernel::abi;
use komorebi_kernel::broadcast_handler::pattern_word;
use komorebi_pcie::card::{Card, CardOptions};
use komorebi_pcie::proxy::{HostCb, HostCtrl, HostNoc, HostPause};
use komorebi_pcie::sim::{SimBar, SimBarOptions};
use komorebi_sim::{Sim, SimConfig};

const CB: u8 = 5;
const BASE: u32 = 0x4_0000;
const PAGE: u32 = 512;
const PAGES: u16 = 2;
const WINDOW: u8 = 2;
const BLOCKS: u32 = 7;
const SEQUENCE: u32 = 0x0003_0001;
const DRAM: u64 = 0x20_0000;
const BANK: u8 = 3;

fn page_bytes(block: u32, page: u32) -> Vec<u8> {
    (0..PAGE / 4)
        .flat_map(|w| pattern_word(0, 0, block, page, w).to_le_bytes())
        .collect()
}

/// Every receiver's (block, page, bytes right) in arrival order.
type Seen = Rc<RefCell<Vec<((u8, u8), u32, u32, bool)>>>;

#[test]
fn the_host_sends_a_broadcast_and_every_simulated_receiver_gets_every_byte() {
    for (seed, harvest) in [(0, HarvestMask::P100_P150), (7, HarvestMask::NONE)] {
        common::with_seed(seed, || run(seed, harvest));
    }
}

fn run(seed: u64, harvest: HarvestMask) {
    let config = SimConfig {
        seed,
        harvest,
        adversarial: true,
        ..SimConfig::default()
    };
    let geometry = komorebi::chip::blackhole(harvest.bits() as u32).unwrap();
    let group = LogicalRect::new(2, 0, 1, 5);
    let params = BroadcastParams {
        broadcast: 0,
        cb: CB,
        window: WINDOW,
        pages: PAGES,
    };
    let args = broadcast_args(&geometry, group, group, Along::Column, NocId::Noc0, params).unwrap();
    let context = Context {
        sequence: SEQUENCE,
        group,
        exclusive: true,
    };
    let mut sim = Sim::new(config);
    let seen: Seen = Rc::default();
    let mut sender = None;
    for core in args.iter() {
        let (x, y) = geometry.noc0(core.core).unwrap();
        let tile = (x, y);
        for (offset, value) in [
            (abi::STOP, 0),
            (abi::IDLE_WAIT_LIMIT, 2_000_000),
            (abi::IDLE_WAIT_LIMIT + 4, 0),
        ] {
            sim.write_l1_u32(tile, abi::CONTROL_BASE + offset, value)
                .unwrap();
        }
        let a = komorebi_broadcast::args::BroadcastArgs::decode(&core.words).unwrap();
        if a.rank == 0 {
            sender = Some((komorebi_hal::Xy::new(x, y).unwrap(), core.words));
            continue;
        }
        let pages = WINDOW as u16 * PAGES;
        sim.configure_cb(tile, CB, BASE, PAGE, pages).unwrap();
        let words = core.words;
        sim.spawn(tile, Role::Reader, move |env| async move {
            let mut dm = DataMovement {
                noc: env.noc().unwrap(),
                ctrl: env.ctrl(),
                pause: env.pause(),
            };
            let mut b = Broadcast::new(&mut dm, env.cb(CB).unwrap(), &context, &words, 0);
            assert!(b.ok(), "receiver words");
            for block in 0..BLOCKS {
                b.arrive(&mut dm, block).await.unwrap();
            }
            b.finish(&mut dm).await.unwrap();
        })
        .unwrap();
        let seen = seen.clone();
        sim.spawn(tile, Role::Compute, move |env| async move {
            let mut c = Compute {
                ctrl: env.ctrl(),
                pause: env.pause(),
            };
            let mut cb = env.cb(CB).unwrap();
            for block in 0..BLOCKS {
                compute::receive(&mut c, &mut cb, PAGES).await.unwrap();
                for page in 0..PAGES {
                    let mut got = vec![0; PAGE as usize];
                    komorebi_hal::CircularBuffer::read_page(&mut cb, page, 0, &mut got).unwrap();
                    let ok = got == page_bytes(block, page as u32);
                    seen.borrow_mut().push((tile, block, page as u32, ok));
                }
                compute::done(&mut cb, PAGES).unwrap();
            }
            compute::end(&mut c, &mut cb, PAGES, WINDOW, BLOCKS)
                .await
                .unwrap();
        })
        .unwrap();
    }
    let (tile, words) = sender.expect("rank 0 in the column");
    let card = Card::open(
        SimBar::new(sim, SimBarOptions::default()),
        CardOptions::default(),
    )
    .unwrap();
    // The blocks in DRAM, page after page.
    for block in 0..BLOCKS {
        for page in 0..PAGES as u32 {
            let at = DRAM + (block * PAGES as u32 + page) as u64 * PAGE as u64;
            card.write_dram(BANK, at, &page_bytes(block, page)).unwrap();
        }
    }
    let mine = RefCell::new(Vec::new());
    let port = DRAM_WORKER_PORT[BANK as usize];
    block_on(async {
        let mut dm = DataMovement {
            noc: HostNoc::new(&card, NocId::Noc0, tile),
            ctrl: HostCtrl::new(&card, tile, abi::CONTROL_LAYOUT),
            pause: HostPause::new(&card),
        };
        let pages = WINDOW as u16 * PAGES;
        let cb = HostCb::new(
            &card,
            tile,
            L1Addr::new(BASE).unwrap(),
            PAGE,
            pages,
            |n, bytes| {
                mine.borrow_mut().push((n, bytes.to_vec()));
            },
        );
        let mut b = Broadcast::new(&mut dm, cb, &context, &words, 0);
        assert!(b.ok() && b.sender(), "the host is the sender");
        for block in 0..BLOCKS {
            let slot = b.reserve(&mut dm, block).await.unwrap();
            for page in 0..PAGES as u32 {
                let at = DRAM + (block * PAGES as u32 + page) as u64 * PAGE as u64;
                let src = NocAddr::new(Xy::new(port.0, port.1).unwrap(), at).unwrap();
                let dst = slot.offset(page * PAGE).unwrap();
                komorebi_hal::NocMulticast::read(&mut dm.noc, src, dst, PAGE).unwrap();
            }
            b.cast(&mut dm, block).await.unwrap();
        }
        b.finish(&mut dm).await.unwrap();
    });
    let seen = seen.borrow();
    let receivers = args.len() - 1;
    assert_eq!(
        seen.len(),
        receivers * (BLOCKS * PAGES as u32) as usize,
        "seed {seed}"
    );
    assert!(
        seen.iter().all(|s| s.3),
        "seed {seed}: wrong bytes at {:?}",
        seen.iter().find(|s| !s.3)
    );
    // The host's own buffer handed it every page of every block, then the padding.
    let mine = mine.borrow();
    for block in 0..BLOCKS {
        for page in 0..PAGES as u32 {
            let (n, bytes) = &mine[(block * PAGES as u32 + page) as usize];
            assert_eq!(*n as u32, block * PAGES as u32 + page);
            assert!(
                *bytes == page_bytes(block, page),
                "seed {seed}: host page {block}/{page}"
            );
        }
    }
}
