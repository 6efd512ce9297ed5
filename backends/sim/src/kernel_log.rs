//! The native kernels' log lines. komorebi-kernel logs through the `log` facade (its `log`
//! feature: the firmware's defmt lines, word for word); the simulator installs one process-wide
//! logger that files each record under the kernel task this thread is polling, with that task's
//! clock ([`Sim::kernel_logs`](crate::Sim::kernel_logs)), at the level `SimConfig::kernel_logs`
//! asks (a record below it is dropped at once).
//!
//! A record logged outside a kernel task is dropped; so is every record when another logger was
//! installed in the process first (the facade takes one): the lines are then missing, never
//! misfiled.

use std::cell::RefCell;
use std::rc::Weak;

pub use crate::report::KernelLogLine;
use crate::world::{Shared, World};

/// A kernel task being polled: its world, its task and the level of the records kept.
type Polled = (Weak<RefCell<World>>, usize, log::LevelFilter);

thread_local! {
    /// The task this thread is polling, if any.
    static POLLING: RefCell<Option<Polled>> = const { RefCell::new(None) };
}

struct Capture;

static CAPTURE: Capture = Capture;

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        POLLING.with(|p| {
            p.borrow()
                .as_ref()
                .is_some_and(|(_, _, level)| metadata.level() <= *level)
        })
    }

    fn log(&self, record: &log::Record<'_>) {
        POLLING.with(|p| {
            let Some((world, task, level)) = p.borrow().clone() else {
                return;
            };
            if record.level() > level {
                return;
            }
            let Some(world) = world.upgrade() else {
                return;
            };
            // A kernel logs between its HAL calls, when nothing holds the world; never wait.
            let Ok(mut w) = world.try_borrow_mut() else {
                return;
            };
            let Some(t) = w.sched.tasks.get(task) else {
                return;
            };
            let line = KernelLogLine {
                tile: w.tiles[t.tile as usize].xy0,
                kernel: t.kernel,
                cycle: t.local,
                level: record.level(),
                message: record.args().to_string(),
            };
            w.kernel_logs.push(line);
        });
    }

    fn flush(&self) {}
}

/// Installs the capturing logger, unless the process has one already.
pub(crate) fn install() {
    if log::set_logger(&CAPTURE).is_ok() {
        log::set_max_level(log::LevelFilter::Trace);
    }
}

/// While alive, records on this thread are filed under `task` of `world`.
pub(crate) struct Polling;

impl Polling {
    pub(crate) fn start(world: &Shared, task: usize, level: log::LevelFilter) -> Self {
        POLLING.with(|p| *p.borrow_mut() = Some((std::rc::Rc::downgrade(world), task, level)));
        Polling
    }
}

impl Drop for Polling {
    fn drop(&mut self) {
        POLLING.with(|p| *p.borrow_mut() = None);
    }
}
