//! Helpers shared by the simulator's tests.
#![allow(dead_code)]

pub mod bar;

use std::cell::RefCell;
use std::rc::Rc;

use blackhole_pac::grid::Noc0Xy;
use komorebi_hal::ControlLayout;
use komorebi_hal::Rect;
use komorebi_hal::control::{self, ControlBlock, Error as _};
use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::wait::WaitError;
use komorebi_hal::{L1Addr, NocAddr, Xy, wait_until};
use komorebi_sim::{Sim, SimConfig, SimCtrl, SimNoc, SimPause};

pub const CTRL: ControlLayout = komorebi_kernel::abi::CONTROL_LAYOUT;

pub fn sim_with(seed: u64, adversarial: bool) -> Sim {
    Sim::new(SimConfig {
        seed,
        adversarial,
        ..SimConfig::default()
    })
}

pub fn sim() -> Sim {
    sim_with(0, false)
}

/// Sets a tile's wait limit.
pub fn set_limit(sim: &mut Sim, tile: (u8, u8), cycles: u64) {
    sim.write_l1_u32(tile, CTRL.base + CTRL.wait_limit_offset, cycles as u32)
        .unwrap();
    sim.write_l1_u32(
        tile,
        CTRL.base + CTRL.wait_limit_offset + 4,
        (cycles >> 32) as u32,
    )
    .unwrap();
}

pub fn l1(a: u32) -> L1Addr {
    L1Addr::new(a).unwrap()
}

pub fn xy(p: (u8, u8)) -> Xy {
    Xy::new(p.0, p.1).unwrap()
}

pub fn at(p: (u8, u8), a: u32) -> NocAddr {
    NocAddr::l1(xy(p), l1(a))
}

/// NoC1 raw coordinates of NoC0 `p` (blackhole-pac's conversion); `p` must be on the grid.
pub fn n1(p: (u8, u8)) -> (u8, u8) {
    Noc0Xy::new(p.0, p.1)
        .expect("NoC0 coordinate on the 17 x 12 grid")
        .to_noc1()
        .get()
}

/// Waits until `ready` holds; the error is the wait's.
pub async fn wait<F>(
    ctrl: &mut SimCtrl,
    pause: &mut SimPause,
    mut ready: F,
) -> Result<u64, WaitError<String>>
where
    F: FnMut(&mut SimCtrl) -> Result<bool, String>,
{
    wait_until(ctrl, pause, |c| ready(c)).await
}

/// A shared log a kernel writes and the test reads.
pub type Log<T> = Rc<RefCell<Vec<T>>>;

pub fn log<T>() -> Log<T> {
    Rc::new(RefCell::new(Vec::new()))
}

pub fn word(ctrl: &mut SimCtrl, offset: u32) -> Result<u32, String> {
    ctrl.load(offset).map_err(|e| format!("{:?}", e.kind()))
}

pub fn kind<E: control::Error>(e: E) -> String {
    format!("{:?}", e.kind())
}

/// tt-metal's barrier after a burst: until every write is acknowledged (`acked`) or every read
/// has landed.
pub async fn barrier(noc: &mut SimNoc, ctrl: &mut SimCtrl, pause: &mut SimPause, acked: bool) {
    wait(ctrl, pause, |_| {
        let r = if acked {
            noc.writes_acked()
        } else {
            noc.reads_done()
        };
        r.map_err(|e| e.to_string())
    })
    .await
    .unwrap();
}

/// tt-metal's multicast pattern: `count` multicasts of `size` bytes from L1 0x2_0000 to the same
/// address over NoC0 `start ..= end` (delivered to the sender too when `loopback`), all but the
/// last linked when `linked`, then one barrier.
pub async fn multicast_burst(
    (noc, ctrl, pause): (&mut SimNoc, &mut SimCtrl, &mut SimPause),
    (start, end): ((u8, u8), (u8, u8)),
    size: u32,
    count: u32,
    loopback: bool,
    linked: bool,
) {
    let rect = Rect::new(xy(start), xy(end)).unwrap();
    let mut mode = WriteMode::ORDERED;
    if loopback {
        mode = mode.with_loopback();
    }
    for i in 0..count {
        let mode = if linked && i + 1 < count {
            mode.linked()
        } else {
            mode
        };
        noc.multicast(l1(0x2_0000), rect, l1(0x2_0000), size, mode)
            .unwrap();
    }
    barrier(noc, ctrl, pause, true).await;
}
