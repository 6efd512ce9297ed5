//! The device access the open sequence needs, and its bounded wait: the leaf the queue and the
//! waits share.

use std::time::{Duration, Instant};

use blackhole_pac::arc;
use blackhole_pac::tensix::AICLK_BUSY_MHZ;

use crate::bar::LockOp;
use crate::error::PcieError;
use crate::telemetry::ArcRead;

/// The device access the open sequence needs: ARC reads and writes, and letting time pass.
pub trait ArcPort: ArcRead {
    /// Writes the word at ARC NoC address `addr`.
    fn arc_write32(&self, addr: u64, value: u32) -> Result<(), PcieError>;
    /// Lets the device run while the host waits once; the device cycles that passed (as
    /// [`Bar::pass_time`](crate::Bar::pass_time)).
    fn arc_wait(&self) -> u64;
    /// Takes or gives back the lock other processes take around their ARC messages
    /// ([`MESSAGE_LOCK`]), as [`Bar::resource_lock`](crate::Bar::resource_lock) does; the
    /// default, for a device no other process reaches, always has it.
    fn message_lock(&self, op: LockOp) -> Result<bool, PcieError> {
        let _ = op;
        Ok(true)
    }
}

/// The device's resource lock that serialises ARC messages between processes: tt-umd's
/// `ARC_MSG` (`device/utils/lock_manager.cpp`, `MUTEX_TYPE_TO_KMD_LOCK_INDEX`, added by tt-umd
/// 07b7159 of 2026-08-22, after the 3ed9cb6 snapshot docs/blackhole.md names; 0 to 15 are the
/// Ethernet cores' locks). Two processes messaging ARC at once would interleave their entries
/// and pointers in the one queue.
pub const MESSAGE_LOCK: u8 = 16;

/// Runs `send` on `device` holding ARC's message lock: `lock` takes or gives it back
/// ([`LockOp`]), `wait` lets the device run between tries and says the cycles that passed. The
/// lock is asked for within `timeout` (message `code` fails naming the lock when another
/// process holds it longer), and given back whatever `send` returned, or if it panicked.
pub(crate) fn with_message_lock<T, R>(
    device: &mut T,
    lock: impl Fn(&T, LockOp) -> Result<bool, PcieError>,
    wait: impl Fn(&mut T) -> u64,
    code: u32,
    timeout: Duration,
    send: impl FnOnce(&mut T) -> Result<R, PcieError>,
) -> Result<R, PcieError> {
    let mut bound = Bound::new(timeout);
    while !lock(device, LockOp::Acquire)? {
        if bound.expired() {
            return Err(PcieError::ArcMessage {
                code,
                why: format!(
                    "another process held ARC's message lock (the device's resource lock \
                     {MESSAGE_LOCK}, tt-umd's ARC_MSG) for {} ms",
                    bound.waited_ms()
                ),
            });
        }
        bound.add(wait(device));
    }
    // Given back even when the exchange panics: tt-kmd's acquire is not reentrant, so a lock
    // left held would fail every later message, this process's and others', until the device
    // is closed. (The panic goes on once it is given back.)
    let sent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| send(device)));
    let released = lock(device, LockOp::Release);
    let response = sent.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
    released?;
    Ok(response)
}

/// The least real time a wait is allowed before its cap ends it, whatever its device-time
/// budget: a slow host must not time out a simulated card whose clock moves.
pub const MIN_REAL_TIME_CAP: Duration = Duration::from_secs(1);

/// A wait bounded in device time and capped in real time.
#[derive(Debug)]
pub struct Bound {
    start: Instant,
    budget: u64,
    cap: Duration,
    cycles: u64,
}

impl Bound {
    /// A bound of `timeout` in device cycles at the busy clock (the rate `pass_time` counts
    /// in), capped at `max(timeout, MIN_REAL_TIME_CAP)` of real time.
    pub fn new(timeout: Duration) -> Self {
        let budget = u64::try_from(timeout.as_micros())
            .unwrap_or(u64::MAX)
            .saturating_mul(AICLK_BUSY_MHZ as u64);
        Self {
            start: Instant::now(),
            budget,
            cap: timeout.max(MIN_REAL_TIME_CAP),
            cycles: 0,
        }
    }

    /// Whether the bound is spent.
    pub fn expired(&self) -> bool {
        self.cycles >= self.budget || self.start.elapsed() >= self.cap
    }

    /// Waits once through `port`.
    pub fn wait(&mut self, port: &impl ArcPort) {
        self.add(port.arc_wait());
    }

    /// Counts `cycles` of device time the host let pass (a wait made another way, such as
    /// [`Bar::pass_time`](crate::Bar::pass_time)).
    pub fn add(&mut self, cycles: u64) {
        self.cycles = self.cycles.saturating_add(cycles);
    }

    /// How long the wait took, in milliseconds: device time, or real time if that is longer.
    pub fn waited_ms(&self) -> u64 {
        let device = self.cycles / (AICLK_BUSY_MHZ as u64 * 1000);
        device.max(self.start.elapsed().as_millis() as u64)
    }
}

/// Reads `addr` and refuses the all-ones word of a hung device.
pub(super) fn read_alive(port: &impl ArcPort, addr: u64, what: &str) -> Result<u32, PcieError> {
    let v = port.arc_read32(addr)?;
    if v == arc::HUNG_READ {
        return Err(PcieError::Hung {
            what: format!("{what} (ARC {addr:#x})"),
        });
    }
    Ok(v)
}
