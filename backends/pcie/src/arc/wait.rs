//! The open's bounded waits (ARC ready, DRAM trained, AICLK raised) and the device access they
//! need.

use std::time::Duration;

use blackhole_pac::arc::{self, msg, tag};
use blackhole_pac::tensix::{AICLK_BUSY_MHZ, AICLK_IDLE_MHZ};

use crate::bar::DeviceIdentity;
use crate::error::PcieError;
use crate::telemetry::Telemetry;

use super::port::{ArcPort, Bound, read_alive};
use super::queue::MessageQueue;

/// How long each step of the open sequence may take (tt-umd's `timeout::*`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OpenTimeouts {
    /// ARC's boot status to say ready (tt-umd `ARC_STARTUP_TIMEOUT`, 300 s).
    pub arc_ready: Duration,
    /// Every enabled DRAM channel to finish training (tt-umd `DRAM_TRAINING_TIMEOUT`, 300 s).
    pub dram_training: Duration,
    /// One ARC message: room in the queue, then its response (tt-umd `ARC_MESSAGE_TIMEOUT`,
    /// 1 s).
    pub arc_message: Duration,
    /// AICLK to reach the busy clock after `AICLK_GO_BUSY` (tt-umd `AICLK_TIMEOUT`, 200 ms).
    pub aiclk: Duration,
    /// The telemetry pointers to be published once ARC is ready (tt-umd
    /// `TELEMETRY_INIT_TIMEOUT`, 1 s): the recovery firmware reports ready and publishes none.
    pub telemetry: Duration,
}

impl Default for OpenTimeouts {
    fn default() -> Self {
        Self {
            arc_ready: Duration::from_secs(300),
            dram_training: Duration::from_secs(300),
            arc_message: Duration::from_secs(1),
            aiclk: Duration::from_millis(200),
            telemetry: Duration::from_secs(1),
        }
    }
}

/// The AICLK tolerance, in percent, within which the clock counts as settled (tt-umd
/// `AICLK_TOLERANCE_PERCENT`).
pub const AICLK_TOLERANCE_PERCENT: u32 = 5;

/// Waits until ARC's boot status (`SCRATCH_RAM_2 & 7`) says ready (5).
/// [`PcieError::ArcNotReady`] with the last status when it does not within `timeout`, or at
/// once when its hardware init failed ([`arc::ARC_HW_INIT_ERROR`]: it stays so until a reset,
/// so waiting out the bound would gain nothing).
pub fn wait_arc_ready(port: &impl ArcPort, timeout: Duration) -> Result<(), PcieError> {
    let mut bound = Bound::new(timeout);
    loop {
        let status = read_alive(port, arc::SCRATCH_RAM_2, "ARC boot status (SCRATCH_RAM_2)")?;
        if status & 7 == arc::ARC_BOOT_READY {
            return Ok(());
        }
        if bound.expired() || (status >> 1) & 3 == arc::ARC_HW_INIT_ERROR {
            return Err(PcieError::ArcNotReady {
                status,
                waited_ms: bound.waited_ms(),
            });
        }
        bound.wait(port);
    }
}

/// ARC's telemetry once the firmware has published it: its message queue comes up (and the boot
/// status says ready) before it writes the table and data pointers (`SCRATCH_RAM_13`, `_12`),
/// which read 0 until then (tt-zephyr-platforms `main`: `init_msgqueue` before
/// `init_telemetry`; tt-umd `ArcTelemetryReader::wait_for_telemetry_initialized` polls the table
/// pointer the same way). Polls while either pointer reads 0, bounded by `timeout`; then
/// [`Telemetry::read`] with its checks.
pub fn wait_telemetry(port: &impl ArcPort, timeout: Duration) -> Result<Telemetry, PcieError> {
    let mut bound = Bound::new(timeout);
    loop {
        let table = read_alive(port, arc::SCRATCH_RAM_13, "the telemetry table pointer")?;
        let data = read_alive(port, arc::SCRATCH_RAM_12, "the telemetry data pointer")?;
        if (table != 0 && data != 0) || bound.expired() {
            return Telemetry::read(port);
        }
        bound.wait(port);
    }
}

/// One channel's training, as telemetry reports it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DramChannel {
    /// Trained (and, from firmware 19.7.0, its BIST passed).
    Trained,
    /// Still training.
    Training,
    /// Training (or BIST) failed.
    Failed,
    /// Harvested: not checked.
    Harvested,
}

/// The firmware bundle from which `GDDR_STATUS` reports BIST in its upper half (tt-umd
/// `get_dram_training_status`: 19.7.0).
const BIST_BUNDLE: u32 = (19 << 24) | (7 << 16);

/// Each of the 8 channels' training from `telemetry`, or `None` when it has no
/// `GDDR_STATUS` (then tt-umd does not wait either).
pub fn dram_channels(telemetry: &Telemetry) -> Option<[DramChannel; 8]> {
    let status = telemetry.get(tag::GDDR_STATUS)?;
    // A table without ENABLED_GDDR harvests nothing, as tt-umd reads it.
    let enabled = telemetry.get(tag::ENABLED_GDDR).unwrap_or(0xFF);
    let bist = telemetry
        .get(tag::FLASH_BUNDLE_VERSION)
        .is_some_and(|v| v >= BIST_BUNDLE);
    // 0b01 done, 0b10 or 0b11 failed, 0b00 in progress (tt-umd `decode_dram_status_bits`).
    let decode = |bits: u32| match bits & 3 {
        0b01 => DramChannel::Trained,
        0b00 => DramChannel::Training,
        _ => DramChannel::Failed,
    };
    Some(std::array::from_fn(|c| {
        if enabled & (1 << c) == 0 {
            return DramChannel::Harvested;
        }
        let training = decode(status >> (2 * c));
        if !bist {
            return training;
        }
        match (training, decode(status >> (16 + 2 * c))) {
            (DramChannel::Failed, _) | (_, DramChannel::Failed) => DramChannel::Failed,
            (DramChannel::Trained, DramChannel::Trained) => DramChannel::Trained,
            _ => DramChannel::Training,
        }
    }))
}

/// Waits until every enabled DRAM channel is trained. `Ok(Some(note))` when telemetry has no
/// `GDDR_STATUS` (nothing to wait for, as tt-umd); [`PcieError::DramTraining`] when a channel
/// failed (tt-umd retrains it with `TOGGLE_GDDR_RESET`; komorebi asks for a reset instead) or
/// is still training after `timeout`.
pub fn wait_dram_trained(
    port: &impl ArcPort,
    timeout: Duration,
) -> Result<Option<String>, PcieError> {
    let read = || {
        let telemetry = Telemetry::read(port)?;
        Ok(dram_channels(&telemetry).map(|c| {
            let status = telemetry.get(tag::GDDR_STATUS).unwrap_or(0);
            (c.to_vec(), format!("GDDR_STATUS {status:#x}"))
        }))
    };
    settle_dram(
        timeout,
        "telemetry has no GDDR_STATUS (tag 22): DRAM training was not checked",
        read,
        || port.arc_wait(),
    )
}

/// Reads (`read`: each channel's training and the raw status in words, or `None` when there is
/// none to read) until every channel is trained, waiting with `wait` between reads, for at most
/// `timeout`: both chips' DRAM wait. `Ok(Some(missing))` when there is no status;
/// [`PcieError::DramTraining`] at once when a channel failed, or when one still trains after
/// `timeout`.
pub(super) fn settle_dram(
    timeout: Duration,
    missing: &str,
    mut read: impl FnMut() -> Result<Option<(Vec<DramChannel>, String)>, PcieError>,
    mut wait: impl FnMut() -> u64,
) -> Result<Option<String>, PcieError> {
    let mut bound = Bound::new(timeout);
    loop {
        let Some((channels, status)) = read()? else {
            return Ok(Some(missing.into()));
        };
        let list = |want: DramChannel| -> Vec<String> {
            (0..channels.len())
                .filter(|&c| channels[c] == want)
                .map(|c| c.to_string())
                .collect()
        };
        let failed = list(DramChannel::Failed);
        if !failed.is_empty() {
            return Err(PcieError::DramTraining(format!(
                "channel(s) {} failed training ({status}); reset the board (tt-smi -r)",
                failed.join(", ")
            )));
        }
        let training = list(DramChannel::Training);
        if training.is_empty() {
            return Ok(None);
        }
        if bound.expired() {
            return Err(PcieError::DramTraining(format!(
                "channel(s) {} still training after {} ms",
                training.join(", "),
                bound.waited_ms()
            )));
        }
        bound.add(wait());
    }
}

/// What raising AICLK came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockOutcome {
    /// Telemetry showed the busy clock (within [`AICLK_TOLERANCE_PERCENT`] of the target).
    pub raised: bool,
    /// AICLK as telemetry last reported it, in MHz (0 if the table has no AICLK).
    pub aiclk_mhz: u32,
    /// Why not, or how it settled when not exactly at the target.
    pub note: Option<String>,
}

impl ClockOutcome {
    /// Records the outcome in `identity`: `clock_raised`, and a `clock_note` that keeps what
    /// the driver said earlier (its own SET_POWER_STATE) only when the clock was not raised,
    /// because once it is, what the driver could not do no longer matters.
    pub fn record(self, identity: &mut DeviceIdentity) {
        let earlier = identity.clock_note.take();
        identity.clock_raised = self.raised;
        identity.clock_note = match (self.raised, earlier, self.note) {
            (true, _, note) => note,
            (false, Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (false, a, b) => a.or(b),
        };
    }
}

/// Whether `mhz` is within [`AICLK_TOLERANCE_PERCENT`] of `target` (tt-umd
/// `is_within_percentage`).
pub fn settled(mhz: u32, target: u32) -> bool {
    (mhz as u64).abs_diff(target as u64) * 100 <= target as u64 * AICLK_TOLERANCE_PERCENT as u64
}

/// Sends `AICLK_GO_BUSY` on the application queue, then waits, bounded by `timeouts.aiclk`,
/// until telemetry's AICLK is within 5 % of `AICLK_LIMIT_MAX` (or the busy 1350 MHz when the
/// table has no limit). When the message fails (an error status, or an exit code other than 0
/// in the response's value, as tt-umd's `BlackholeTTDevice::set_clock_state` checks) or the
/// clock does not settle the outcome says so and the open goes on, as tt-umd's
/// `wait_for_aiclk_value` logs and goes on; errors of the device itself (hung, gone, a
/// simulator's refusal) are returned.
pub fn raise_aiclk(
    port: &impl ArcPort,
    timeouts: &OpenTimeouts,
) -> Result<ClockOutcome, PcieError> {
    let sent = clock_message(port, msg::code::AICLK_GO_BUSY, timeouts.arc_message);
    let last = |t: &Telemetry| t.get(tag::AICLK).unwrap_or(0);
    match sent {
        Ok(_) => {}
        Err(e @ PcieError::ArcMessage { .. }) => {
            let mhz = last(&Telemetry::read(port)?);
            return Ok(CLOCK.refused(&e, mhz));
        }
        Err(e) => return Err(e),
    }
    let read = || {
        let t = Telemetry::read(port)?;
        Ok((
            last(&t),
            t.get(tag::AICLK_LIMIT_MAX).unwrap_or(AICLK_BUSY_MHZ),
        ))
    };
    CLOCK.settle(timeouts.aiclk, read, || port.arc_wait())
}

/// Sends `AICLK_GO_LONG_IDLE` on the application queue, bounded by `timeout`: AICLK back to its
/// idle clock once the host is done with the card, as tt-umd's `LocalChip::close_device` does
/// when the clock is above idle (`BlackholeTTDevice::set_clock_state`). An exit code other
/// than 0 is [`PcieError::ArcMessage`]. The clock is not waited for.
pub fn lower_aiclk(port: &impl ArcPort, timeout: Duration) -> Result<(), PcieError> {
    clock_message(port, msg::code::AICLK_GO_LONG_IDLE, timeout).map(|_| ())
}

/// Sends a clock message `code` and checks its exit code (the response's value), which
/// tt-umd's `set_clock_state` requires to be 0.
fn clock_message(port: &impl ArcPort, code: u32, timeout: Duration) -> Result<(), PcieError> {
    // A queue that cannot be found fails this message: its code in the error.
    let queue = MessageQueue::locate(port, msg::APPLICATION_QUEUE).map_err(|e| match e {
        PcieError::ArcMessage { code: 0, why } => PcieError::ArcMessage { code, why },
        e => e,
    })?;
    let r = queue.send(port, code, &[], timeout)?;
    match r.value {
        0 => Ok(()),
        exit => Err(PcieError::ArcMessage {
            code,
            why: format!("ARC answered exit code {exit} (0 is success)"),
        }),
    }
}

/// A Blackhole's clock: raised by `AICLK_GO_BUSY`, read in telemetry.
const CLOCK: Clock = Clock {
    message: "AICLK_GO_BUSY",
    source: "telemetry",
    idle_mhz: AICLK_IDLE_MHZ,
    idle_note: "; byte and half-word L1 stores by the cores may fail (tt-umd #2812)",
};

/// How a chip's clock is raised and read back, for [`Clock::settle`]'s outcome.
pub(super) struct Clock {
    /// The message that raised it.
    pub message: &'static str,
    /// What reports the clock.
    pub source: &'static str,
    /// The idle clock, MHz.
    pub idle_mhz: u32,
    /// What an idle clock means, after "(idle)".
    pub idle_note: &'static str,
}

impl Clock {
    /// Reads (`read`: the clock now and the clock asked for) until the clock is within
    /// [`AICLK_TOLERANCE_PERCENT`] of the target, waiting with `wait` (the device cycles it let
    /// pass) between reads, for at most `timeout`: a clock that does not settle is an outcome
    /// that says so.
    pub fn settle(
        &self,
        timeout: Duration,
        mut read: impl FnMut() -> Result<(u32, u32), PcieError>,
        mut wait: impl FnMut() -> u64,
    ) -> Result<ClockOutcome, PcieError> {
        let mut bound = Bound::new(timeout);
        loop {
            let (mhz, target) = read()?;
            if settled(mhz, target) {
                return Ok(ClockOutcome {
                    raised: true,
                    aiclk_mhz: mhz,
                    note: (mhz != target).then(|| {
                        format!(
                            "AICLK settled at {mhz} MHz, within {AICLK_TOLERANCE_PERCENT}% of \
                             the requested {target} MHz"
                        )
                    }),
                });
            }
            if bound.expired() {
                return Ok(ClockOutcome {
                    raised: false,
                    aiclk_mhz: mhz,
                    note: Some(format!(
                        "AICLK did not reach {target} MHz within {} ms of {}: {} says {mhz} \
                         MHz{}",
                        bound.waited_ms(),
                        self.message,
                        self.source,
                        if mhz <= self.idle_mhz {
                            format!(" (idle){}", self.idle_note)
                        } else {
                            String::new()
                        }
                    )),
                });
            }
            bound.add(wait());
        }
    }

    /// The outcome when the message itself failed with `e`; the clock reads `mhz`.
    pub fn refused(&self, e: &PcieError, mhz: u32) -> ClockOutcome {
        ClockOutcome {
            raised: false,
            aiclk_mhz: mhz,
            note: Some(format!("{} failed: {e}; AICLK is {mhz} MHz", self.message)),
        }
    }
}
