//! [`SimCtrl`]: a tile's control block in L1 as one kernel sees it: words at the layout's
//! offsets, the stop flag, the wait limit, and the kernel's clock.
//!
//! Imports the world and leaf modules.

use komorebi_hal::{L1Addr, control};

use crate::hal::error::CtrlError;
use crate::packet::TileIx;
use crate::world::{Shared, World};

/// A tile's control block, as one kernel sees it.
#[derive(Clone)]
pub struct SimCtrl {
    pub(crate) world: Shared,
    pub(crate) task: usize,
    pub(crate) tile: TileIx,
}

impl std::fmt::Debug for SimCtrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimCtrl").field("task", &self.task).finish()
    }
}

impl SimCtrl {
    fn check(w: &World, offset: u32) -> Result<u32, CtrlError> {
        let layout = w.cfg.control;
        if offset % 4 != 0 {
            return Err(CtrlError::new(
                control::ErrorKind::Misaligned,
                format!("control offset {offset:#x} is not a multiple of 4"),
            ));
        }
        if offset >= layout.len {
            return Err(CtrlError::new(
                control::ErrorKind::OutOfRange,
                format!(
                    "control offset {offset:#x} is beyond the block ({:#x} bytes)",
                    layout.len
                ),
            ));
        }
        Ok(layout.base + offset)
    }
}

impl control::ErrorType for SimCtrl {
    type Error = CtrlError;
}

impl control::ControlBlock for SimCtrl {
    fn len(&self) -> u32 {
        self.world.borrow().cfg.control.len
    }

    fn addr(&self, offset: u32) -> Result<L1Addr, CtrlError> {
        let a = Self::check(&self.world.borrow(), offset)?;
        L1Addr::new(a).map_err(|e| CtrlError::new(control::ErrorKind::Misaligned, e.to_string()))
    }

    fn load(&mut self, offset: u32) -> Result<u32, CtrlError> {
        let mut w = self.world.borrow_mut();
        w.charge_call(self.task);
        let a = Self::check(&w, offset)?;
        Ok(w.tiles[self.tile as usize].l1.read_u32(a as u64))
    }

    fn store(&mut self, offset: u32, value: u32) -> Result<(), CtrlError> {
        let mut w = self.world.borrow_mut();
        let now = w.charge_call(self.task);
        let a = Self::check(&w, offset)?;
        if w.stalled(self.task) {
            return Ok(());
        }
        w.tiles[self.tile as usize].l1.write_u32(a as u64, value);
        w.touch(self.tile, now);
        Ok(())
    }

    fn stop_requested(&mut self) -> Result<bool, CtrlError> {
        let stop = self.world.borrow().cfg.control.stop_offset;
        let stalled = self.world.borrow().stalled(self.task);
        Ok(!stalled && self.load(stop)? != 0)
    }

    fn request_stop(&mut self) -> Result<(), CtrlError> {
        let stop = self.world.borrow().cfg.control.stop_offset;
        self.store(stop, 1)
    }

    fn wait_limit(&mut self) -> Result<u64, CtrlError> {
        let at = self.world.borrow().cfg.control.wait_limit_offset;
        let lo = self.load(at)? as u64;
        let hi = self.load(at + 4)? as u64;
        Ok(hi << 32 | lo)
    }

    fn now(&mut self) -> u64 {
        let mut w = self.world.borrow_mut();
        if w.stalled(self.task) {
            // A stalled kernel's clock stands still, so its waits never end.
            return w.sched.tasks[self.task].parked_at;
        }
        w.charge_call(self.task)
    }
}
