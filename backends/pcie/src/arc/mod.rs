//! What a card needs from ARC before its first use, and the message queue that carries any ARC
//! message: ARC ready, DRAM trained, AICLK raised (the open sequence, decisions D19).
//!
//! # The message queue (tt-umd `device/arc/blackhole_arc_message_queue.cpp`)
//! `SCRATCH_RAM_11` points at the queue control block in ARC CSM: the first queue's address,
//! entries per queue `n` and the number of queues ([`blackhole_pac::arc::msg`]). A queue is a
//! 32-byte header, `n` request entries and `n` response entries of 32 bytes; its pointers wrap
//! at `2 n`. The host owns the request write pointer (header word 0) and the response read
//! pointer (word 1), ARC the request read pointer (word 4) and the response write pointer
//! (word 5). To send: wait until the request ring is not full, write the entry (code, then up
//! to 7 arguments), advance the write pointer, set the IRQ bit of the reset unit's
//! `ARC_MISC_CNTL`; then wait for a response, read it, advance the read pointer. A response
//! status (`word0 & 0xFF`) below 240 is success, its value `word0 >> 16`; 0xFF is an unknown
//! code. komorebi uses the application queue (3), as tt-umd does.
//!
//! # Waits
//! Every wait here is bounded in device time ([`Bound`]): the cycles [`ArcPort::arc_wait`]
//! reports (a card's real time at the busy clock, a simulator's virtual time), capped in real
//! time so that a device whose clock does not move (ttsim counts steps, not time) cannot hold
//! the host, as `firmware::boot` bounds its wait.
//!
//! # Sources
//! ARC ready: tt-umd `BlackholeTTDevice::wait_arc_core_start` (`SCRATCH_RAM_2 & 7 == 5`).
//! DRAM: tt-umd `Chip::wait_dram_cores_training` and
//! `FirmwareInfoProviderImplementation::get_dram_training_status` (telemetry `GDDR_STATUS`,
//! tag 22; harvested channels skipped). AICLK: tt-umd `BlackholeTTDevice::set_clock_state`
//! (`AICLK_GO_BUSY`) and `TTDevice::wait_for_aiclk_value` (telemetry AICLK within 5 % of
//! `AICLK_LIMIT_MAX`, 200 ms; when it does not settle tt-umd logs and goes on). Timeouts:
//! tt-umd `device/api/umd/device/utils/timeouts.hpp`.

// `wait` uses `queue` (raising AICLK sends a message) and `port`; `queue` uses `port`; `port`
// (the device access, the bounded wait, the message lock) is a leaf. The tests import all
// three. `scratch` (Wormhole's messages through BAR0) is over `Bar` and `port`'s lock;
// `wormhole` (a Wormhole card's open steps) uses `scratch`, `port`'s bound and `wait`'s
// outcomes.
mod port;
mod queue;
mod scratch;
mod wait;
pub mod wormhole;

pub use port::{ArcPort, Bound, MESSAGE_LOCK, MIN_REAL_TIME_CAP};
pub use queue::{ArcResponse, MessageQueue};
pub use scratch::wormhole_message;
pub use wait::{
    AICLK_TOLERANCE_PERCENT, ClockOutcome, DramChannel, OpenTimeouts, dram_channels, lower_aiclk,
    raise_aiclk, settled, wait_arc_ready, wait_dram_trained, wait_telemetry,
};

#[cfg(test)]
mod tests;
