//! Helpers shared by the simulator's tests.
#![allow(dead_code)]

pub mod bar;

use std::cell::RefCell;
use std::rc::Rc;

use blackhole_pac::grid::Noc0Xy;
use komorebi_hal::ControlLayout;
use komorebi_hal::control::{self, ControlBlock, Error as _};
use komorebi_hal::wait::WaitError;
use komorebi_hal::{L1Addr, NocAddr, Xy, wait_until};
use komorebi_sim::{Sim, SimConfig, SimCtrl, SimPause};

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
