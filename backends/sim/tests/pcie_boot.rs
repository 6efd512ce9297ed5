//! Booting cores through soft reset, and the ordering of the host's posted writes, all through
//! `Sim::bar_read` / `Sim::bar_write` as the PCIe backend drives a card.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use blackhole_pac::tensix::{self, SOFT_RESET_ALL_CORES};
use blackhole_pac::tlb::TlbOrdering::{self, Posted, Relaxed, Strict};
use common::bar::*;
use common::{CTRL, log, set_limit, wait, word};
use komorebi_hal::{ControlBlock, Role};
use komorebi_kernel::image::{BOOT_UP, ImageHeader, boot_word, header_addr};
use komorebi_sim::*;

/// Register window base (2 MiB windows reach `0xFFA0_0000..0xFFC0_0000`).
const REGS: u64 = 0xFFA0_0000;
/// The tile the boot tests use: translated (7, 3), raw NoC0 (11, 3) (P100_P150).
const T: (u8, u8) = (7, 3);
const RAW: (u8, u8) = (11, 3);
const BRISC: u32 = 1 << 11;
const TRISC0: u32 = 1 << 12;
const TRISC1: u32 = 1 << 13;
const NCRISC: u32 = 1 << 18;

type Calls = Rc<RefCell<Vec<((u8, u8), Role)>>>;

/// A hook that logs its calls and spawns a kernel that reports up, then waits for the stop flag.
fn hook(calls: Calls) -> BootHook {
    Box::new(move |sim: &mut Sim, tile, role| {
        calls.borrow_mut().push((tile, role));
        sim.spawn(tile, role, move |env| async move {
            let (mut ctrl, mut pause) = (env.ctrl(), env.pause());
            ctrl.store(boot_word(role), BOOT_UP).unwrap();
            let _ = wait(&mut ctrl, &mut pause, |c| {
                Ok(word(c, CTRL.stop_offset)? != 0)
            })
            .await;
        })?;
        Ok(())
    })
}

/// A card after reset with a logging hook, and windows onto `T`'s L1 (Strict) and registers.
struct Card {
    s: Sim,
    calls: Calls,
    l1: At,
    regs: At,
}

/// A chip held in reset, with reordering as `reorder`.
fn after_reset(reorder: bool) -> SimConfig {
    SimConfig {
        boot: Boot::HeldInReset,
        reorder_posted_writes: reorder,
        ..SimConfig::default()
    }
}

impl Card {
    fn new() -> Self {
        let calls: Calls = Rc::default();
        Self::with(after_reset(false), Some(hook(calls.clone())), calls)
    }

    /// A chip of `cfg` with `hook` registered; `calls` is what the test looks at.
    fn with(cfg: SimConfig, hook: Option<BootHook>, calls: Calls) -> Self {
        let mut s = Sim::new(cfg);
        if let Some(h) = hook {
            s.set_boot_hook(h);
        }
        set_limit(&mut s, RAW, 1 << 30);
        let l1 = window(&mut s, 0, uni(T, 0, Strict), 0);
        let regs = window(&mut s, 1, uni(T, 0, Strict), REGS);
        Self { s, calls, l1, regs }
    }

    fn reg(&self, addr: u32) -> At {
        plus(self.regs, addr as u64 - REGS)
    }

    /// Writes `role`'s image header with `entry` at its L1 address.
    fn load(&mut self, at_role: Role, role: Role, entry: u32) {
        let h = ImageHeader {
            role,
            entry,
            code_start: entry,
            code_bytes: 1024,
            device_id: 0,
            handler: 0,
        };
        let at = plus(self.l1, header_addr(at_role) as u64);
        self.s.bar_write(at.0, at.1, &h.to_bytes()).unwrap();
    }

    /// Writes the register at `addr`.
    fn set(&mut self, addr: u32, v: u32) {
        let r = self.reg(addr);
        w32(&mut self.s, r, v).unwrap();
    }

    fn soft_reset(&mut self) -> u32 {
        let r = self.reg(tensix::SOFT_RESET_ADDR);
        r32(&mut self.s, r).unwrap()
    }

    /// Read-modify-write: clears `clear`, sets `set`.
    fn rmw(&mut self, clear: u32, set: u32) {
        let v = self.soft_reset();
        let r = self.reg(tensix::SOFT_RESET_ADDR);
        w32(&mut self.s, r, (v & !clear) | set).unwrap();
    }

    fn boot_word(&mut self, role: Role) -> u32 {
        let at = plus(self.l1, (CTRL.base + boot_word(role)) as u64);
        r32(&mut self.s, at).unwrap()
    }

    fn states(&self) -> Vec<(Role, &'static str)> {
        self.s.tasks().iter().map(|t| (t.kernel, t.state)).collect()
    }

    fn whys(&self) -> Vec<(Core, String)> {
        self.s
            .boot_failures()
            .iter()
            .map(|f| (f.core, f.why.clone()))
            .collect()
    }
}

#[test]
fn releasing_cores_with_valid_images_calls_the_hook_once_per_release() {
    let mut c = Card::new();
    assert_eq!(c.soft_reset(), SOFT_RESET_ALL_CORES);
    assert!(c.s.tasks().is_empty(), "nothing runs after reset");
    c.load(Role::Reader, Role::Reader, 0x8000);
    c.load(Role::Writer, Role::Writer, tensix::NCRISC_RESET_PC);
    c.load(Role::Compute, Role::Compute, tensix::TRISC_RESET_PC[0]);
    // Three bits in one write: three boots, in bit order.
    c.rmw(BRISC | TRISC0 | NCRISC, 0);
    assert_eq!(
        *c.calls.borrow(),
        vec![
            (RAW, Role::Reader),
            (RAW, Role::Compute),
            (RAW, Role::Writer)
        ]
    );
    assert_eq!(c.whys(), vec![]);
    assert_eq!(
        c.soft_reset(),
        SOFT_RESET_ALL_CORES & !(BRISC | TRISC0 | NCRISC)
    );
    c.s.run(100_000);
    for role in Role::ALL {
        assert_eq!(c.boot_word(role), BOOT_UP, "{role:?}");
    }
    // Writing the same value again releases nothing.
    c.rmw(0, 0);
    assert_eq!(c.calls.borrow().len(), 3);
    assert_eq!(
        c.states(),
        vec![
            (Role::Reader, "waiting"),
            (Role::Compute, "waiting"),
            (Role::Writer, "waiting")
        ]
    );
}

#[test]
fn putting_a_core_back_into_reset_stops_its_task_and_a_release_boots_it_again() {
    let mut c = Card::new();
    c.load(Role::Reader, Role::Reader, 0x8000);
    c.load(Role::Writer, Role::Writer, tensix::NCRISC_RESET_PC);
    c.rmw(BRISC | NCRISC, 0);
    c.s.run(100_000);
    c.rmw(0, BRISC);
    assert_eq!(
        c.states(),
        vec![(Role::Reader, "reset"), (Role::Writer, "waiting")]
    );
    // Reload: a new image (another entry), the boot word cleared, released again.
    c.load(Role::Reader, Role::Reader, 0x9000);
    let bw = plus(c.l1, (CTRL.base + boot_word(Role::Reader)) as u64);
    w32(&mut c.s, bw, 0).unwrap();
    c.rmw(BRISC, 0);
    c.s.run(200_000);
    assert_eq!(
        *c.calls.borrow(),
        vec![
            (RAW, Role::Reader),
            (RAW, Role::Writer),
            (RAW, Role::Reader)
        ]
    );
    assert_eq!(c.boot_word(Role::Reader), BOOT_UP);
    assert_eq!(
        c.states(),
        vec![
            (Role::Reader, "reset"),
            (Role::Writer, "waiting"),
            (Role::Reader, "waiting")
        ]
    );
    // In the default boot (cores running), setting a bit stops host-spawned tasks too.
    let mut s = Sim::new(SimConfig::default());
    set_limit(&mut s, RAW, 1 << 30);
    s.spawn(RAW, Role::Compute, |env| async move {
        let (mut ctrl, mut pause) = (env.ctrl(), env.pause());
        let _ = wait(&mut ctrl, &mut pause, |_| Ok(false)).await;
    })
    .unwrap();
    let r = window(&mut s, 1, uni(T, 0, Strict), REGS);
    w32(
        &mut s,
        plus(r, tensix::SOFT_RESET_ADDR as u64 - REGS),
        TRISC0,
    )
    .unwrap();
    assert_eq!(s.tasks()[0].state, "reset");
    assert!(s.all_done());
}

#[test]
fn a_release_without_a_valid_image_or_at_the_wrong_pc_is_a_boot_failure() {
    let mut c = Card::new();
    // No header at all.
    c.rmw(BRISC, 0);
    // A writer image whose entry is not NCRISC's default reset PC.
    c.load(Role::Writer, Role::Writer, 0x1_3000);
    c.rmw(NCRISC, 0);
    // TRISC1 runs nothing of komorebi's.
    c.rmw(TRISC1, 0);
    // A compute image at TRISC0's address with the override pointing elsewhere.
    c.load(Role::Compute, Role::Compute, 0x6000);
    c.set(tensix::TRISC_RESET_PC_REGS[0], 0x7000);
    c.set(tensix::TRISC_RESET_PC_OVERRIDE, 1);
    c.rmw(TRISC0, 0);
    assert_eq!(
        c.whys(),
        vec![
            (
                Core::Brisc,
                "no valid komorebi image header at L1 0x3f00: no komorebi image header (word 0 \
                 is 0x00000000, not KMFW)"
                    .to_string()
            ),
            (
                Core::Ncrisc,
                "reset PC 0x12000 is not the image's entry 0x13000".to_string()
            ),
            (
                Core::Trisc1,
                "TRISC1 is not used by komorebi (only BRISC, NCRISC and TRISC0 run kernels)"
                    .to_string()
            ),
            (
                Core::Trisc0,
                "reset PC 0x7000 is not the image's entry 0x6000".to_string()
            ),
        ]
    );
    let f = &c.s.boot_failures()[0];
    assert_eq!((f.tile, f.at), (RAW, 0));
    assert_eq!(
        f.to_string(),
        "cycle 0: BRISC of tile (11, 3) did not start: no valid komorebi image header at L1 \
         0x3f00: no komorebi image header (word 0 is 0x00000000, not KMFW)"
    );
    assert!(c.calls.borrow().is_empty() && c.s.tasks().is_empty());
    // Fixed: NCRISC's override PC set to the entry, and released again.
    c.rmw(0, NCRISC);
    c.set(tensix::NCRISC_RESET_PC_REG, 0x1_3000);
    c.set(tensix::NCRISC_RESET_PC_OVERRIDE, 1);
    c.rmw(NCRISC, 0);
    assert_eq!(*c.calls.borrow(), vec![(RAW, Role::Writer)]);
    assert_eq!(c.s.boot_failures().len(), 4);
}

#[test]
fn a_wrong_role_no_hook_and_a_failing_hook_are_boot_failures() {
    // A compute image where the reader's header goes.
    let mut c = Card::new();
    c.load(Role::Reader, Role::Compute, 0x6000);
    c.rmw(BRISC, 0);
    assert_eq!(
        c.whys(),
        vec![(
            Core::Brisc,
            "the header at L1 0x3f00 is a Compute image, not the Reader image BRISC runs"
                .to_string()
        )]
    );
    // A hook that fails.
    let failing: BootHook = Box::new(|_, _, _| Err(SimError::NoTile((0, 0))));
    let mut c = Card::with(after_reset(false), Some(failing), Rc::default());
    c.load(Role::Writer, Role::Writer, tensix::NCRISC_RESET_PC);
    c.rmw(NCRISC, 0);
    assert_eq!(
        c.whys(),
        vec![(
            Core::Ncrisc,
            "boot hook: no enabled Tensix tile at NoC0 (0, 0)".to_string()
        )]
    );
    // No hook at all; every bit released in one write.
    let mut c = Card::with(after_reset(false), None, Rc::default());
    c.load(Role::Reader, Role::Reader, 0x8000);
    c.rmw(SOFT_RESET_ALL_CORES, 0);
    let no_header = |at: u32| {
        format!(
            "no valid komorebi image header at L1 {at:#x}: no komorebi image header (word 0 \
             is 0x00000000, not KMFW)"
        )
    };
    let unused = |core: &str| {
        format!("{core} is not used by komorebi (only BRISC, NCRISC and TRISC0 run kernels)")
    };
    assert_eq!(
        c.whys(),
        vec![
            (
                Core::Brisc,
                "no boot hook is registered (Sim::set_boot_hook)".to_string()
            ),
            (Core::Trisc0, no_header(0x3F40)),
            (Core::Trisc1, unused("TRISC1")),
            (Core::Trisc2, unused("TRISC2")),
            (Core::Ncrisc, no_header(0x3F20)),
        ]
    );
    assert!(c.s.tasks().is_empty());
}

// ---- ordering of posted writes ------------------------------------------------------------

/// Body words (64) and the index word, in the control block of the tile.
const BODY: u32 = 0x800;
const INDEX: u32 = 0xC00;
/// Translated (1, 2) is raw (1, 2).
const P: (u8, u8) = (1, 2);

/// The host writes 64 body words, then (after a read-back through the same window when
/// `barrier`) the index word, through a window of `ordering`, with reordering on; a kernel on
/// the tile waits for the index and counts the body words it then sees. Returns that count.
fn publish(seed: u64, ordering: TlbOrdering, barrier: bool) -> u32 {
    let mut s = Sim::new(SimConfig {
        seed,
        reorder_posted_writes: true,
        ..SimConfig::default()
    });
    set_limit(&mut s, P, 1 << 30);
    let seen = log();
    let out = seen.clone();
    s.spawn(P, Role::Compute, move |env| async move {
        let (mut ctrl, mut pause) = (env.ctrl(), env.pause());
        wait(&mut ctrl, &mut pause, |c| Ok(word(c, INDEX)? != 0))
            .await
            .unwrap();
        let landed = (0..64)
            .filter(|&i| ctrl.load(BODY + 4 * i).unwrap() == i + 1)
            .count();
        out.borrow_mut().push(landed as u32);
    })
    .unwrap();
    let w = window(&mut s, 0, uni(P, 0, ordering), CTRL.base as u64);
    for i in 0..64 {
        w32(&mut s, plus(w, (BODY + 4 * i) as u64), i + 1).unwrap();
    }
    if barrier {
        r32(&mut s, plus(w, BODY as u64)).unwrap();
    }
    w32(&mut s, plus(w, INDEX as u64), 1).unwrap();
    s.run(1_000_000);
    // Everything lands in the end.
    for i in 0..64 {
        assert_eq!(
            s.read_l1_u32(P, CTRL.base + BODY + 4 * i).unwrap(),
            i + 1,
            "seed {seed}: body word {i}"
        );
    }
    let v = seen.borrow().clone();
    assert_eq!(v.len(), 1, "seed {seed}: the index seen once");
    v[0]
}

#[test]
fn an_index_published_without_a_barrier_can_land_before_its_body() {
    // Body words the kernel saw when the index came, per seed: only seed 0 got them all.
    let seen: Vec<u32> = (0..8).map(|seed| publish(seed, Relaxed, false)).collect();
    assert_eq!(seen, vec![64, 23, 53, 23, 11, 50, 41, 50]);
    assert_eq!(publish(3, Posted, false), 23, "Posted windows reorder too");
}

#[test]
fn held_writes_land_at_a_read_back_of_their_own_tile_only() {
    let mut s = Sim::new(SimConfig {
        seed: 5,
        reorder_posted_writes: true,
        ..SimConfig::default()
    });
    let a = window(&mut s, 0, uni((1, 2), 0, Relaxed), 0);
    let b = window(&mut s, 1, uni((2, 2), 0, Relaxed), 0);
    w32(&mut s, plus(a, 0x100), 1).unwrap();
    w32(&mut s, plus(a, 0x104), 2).unwrap();
    w32(&mut s, plus(b, 0x100), 3).unwrap();
    assert_eq!(s.read_l1_u32((1, 2), 0x100).unwrap(), 0, "held");
    // A read of tile b is a barrier for b's writes, not a's.
    assert_eq!(r32(&mut s, plus(b, 0x100)).unwrap(), 3);
    assert_eq!(s.read_l1_u32((1, 2), 0x100).unwrap(), 0);
    assert_eq!(r32(&mut s, plus(a, 0x104)).unwrap(), 2);
    assert_eq!(s.read_l1_u32((1, 2), 0x100).unwrap(), 1);
    // A Strict write to a tile lands its held writes first.
    w32(&mut s, plus(a, 0x200), 4).unwrap();
    let strict = window(&mut s, 2, uni((1, 2), 0, Strict), 0);
    w32(&mut s, plus(strict, 0x200), 5).unwrap();
    assert_eq!(s.read_l1_u32((1, 2), 0x200).unwrap(), 5);
    // A multicast is held per receiver; a read of one lands that one's copy.
    let m = window(&mut s, 3, mcast((1, 2), (3, 2), 0, Relaxed), 0x300);
    w32(&mut s, m, 6).unwrap();
    assert_eq!(holding(&s, 0x300, 6), vec![]);
    r32(&mut s, plus(b, 0x300)).unwrap();
    assert_eq!(holding(&s, 0x300, 6), vec![(2, 2)]);
    // DRAM is held per bank: a read through another port of the bank is the barrier.
    let port0 = window(&mut s, 202, uni((17, 12), 0, Relaxed), 0);
    let port1 = window(&mut s, 203, uni((17, 13), 0, Relaxed), 0);
    w32(&mut s, plus(port0, 0x40), 7).unwrap();
    let mut d = [0; 4];
    s.read_dram(0, 0x40, &mut d).unwrap();
    assert_eq!(d, [0; 4]);
    assert_eq!(r32(&mut s, plus(port1, 0x40)).unwrap(), 7);
    // Time passing lands the rest, one cycle apart from the next cycle on.
    let t = s.now();
    s.run(t + 1);
    assert_eq!(
        holding(&s, 0x300, 6).len(),
        2,
        "one landed at the next cycle"
    );
    s.run(t + 2);
    assert_eq!(holding(&s, 0x300, 6), vec![(1, 2), (2, 2), (3, 2)]);

    // Reordering off (the default): every write lands at once.
    let mut s = Sim::new(SimConfig::default());
    let a = window(&mut s, 0, uni((1, 2), 0, Relaxed), 0);
    w32(&mut s, plus(a, 0x100), 1).unwrap();
    assert_eq!(s.read_l1_u32((1, 2), 0x100).unwrap(), 1);
}

#[test]
fn a_soft_reset_write_through_a_relaxed_window_is_held_like_any_other() {
    let calls: Calls = Rc::default();
    let mut c = Card::with(after_reset(true), Some(hook(calls.clone())), calls);
    c.regs = window(&mut c.s, 1, uni(T, 0, Relaxed), REGS);
    c.load(Role::Reader, Role::Reader, 0x8000);
    c.set(tensix::SOFT_RESET_ADDR, SOFT_RESET_ALL_CORES & !BRISC);
    assert!(c.calls.borrow().is_empty(), "held");
    c.s.run(10);
    assert_eq!(*c.calls.borrow(), vec![(RAW, Role::Reader)]);
    assert_eq!(c.s.boot_failures(), &[]);
}

#[test]
fn a_read_back_barrier_or_a_strict_window_lands_the_body_first() {
    for seed in 0..8 {
        assert_eq!(publish(seed, Relaxed, true), 64, "seed {seed}");
        assert_eq!(publish(seed, Posted, true), 64, "seed {seed}");
        assert_eq!(publish(seed, Strict, false), 64, "seed {seed}");
    }
}

#[test]
fn a_multicast_to_the_registers_releases_every_tile_of_the_rectangle() {
    let calls: Calls = Rc::default();
    let mut s = Sim::new(after_reset(false));
    s.set_boot_hook(hook(calls.clone()));
    // Translated (6, 3)..(7, 4): raw x 6 and 11, y 3 and 4.
    let tiles = [(6, 3), (6, 4), (11, 3), (11, 4)];
    for &t in &tiles {
        set_limit(&mut s, t, 1 << 30);
    }
    let h = ImageHeader {
        role: Role::Writer,
        entry: 0x2_0000,
        code_start: 0x2_0000,
        code_bytes: 64,
        device_id: 0,
        handler: 0,
    };
    let l1 = window(&mut s, 0, mcast((6, 3), (7, 4), 0, Strict), 0);
    let at = plus(l1, header_addr(Role::Writer) as u64);
    s.bar_write(at.0, at.1, &h.to_bytes()).unwrap();
    let regs = window(&mut s, 1, mcast((6, 3), (7, 4), 0, Strict), REGS);
    let reg = |a: u32| plus(regs, a as u64 - REGS);
    w32(&mut s, reg(tensix::NCRISC_RESET_PC_REG), 0x2_0000).unwrap();
    w32(&mut s, reg(tensix::NCRISC_RESET_PC_OVERRIDE), 1).unwrap();
    w32(
        &mut s,
        reg(tensix::SOFT_RESET_ADDR),
        SOFT_RESET_ALL_CORES & !NCRISC,
    )
    .unwrap();
    let want: Vec<_> = tiles.iter().map(|&t| (t, Role::Writer)).collect();
    assert_eq!(*calls.borrow(), want);
    assert_eq!(s.boot_failures(), &[]);
    // Each tile's own register reads what the multicast wrote.
    let one = window(&mut s, 2, uni((6, 4), 0, Strict), REGS);
    let r = plus(one, tensix::NCRISC_RESET_PC_REG as u64 - REGS);
    assert_eq!(r32(&mut s, r).unwrap(), 0x2_0000);
}
