//! Wormhole's ARC messages (`wormhole_pac::arc`): the code with its `0xAA00` prefix and the
//! argument into the reset unit's scratch registers 5 and 3, the `ARC_MISC_CNTL` interrupt,
//! then scratch 5 polled until it names the code again (its high half the exit code) and the
//! answer read from scratch 3: tt-umd's Wormhole `arc_msg`, under ARC's message lock. Over [`Bar`]
//! and `port`'s lock.

use std::time::{Duration, Instant};

use wormhole_pac::arc::{
    MISC_CNTL_BAR0, MISC_CNTL_IRQ0, MSG_PREFIX, SCRATCH_RES0, SCRATCH_STATUS, scratch_bar0, served,
};

use super::port::{MESSAGE_LOCK, with_message_lock};
use crate::bar::Bar;
use crate::error::PcieError;

/// Sends Wormhole ARC message `code` with `arg` through `bar`'s BAR0 and returns its answer,
/// waiting at most `timeout` of real time (and at least one poll) for ARC to serve it. The
/// exchange holds ARC's message lock ([`MESSAGE_LOCK`]), asked for within `timeout` too.
pub fn wormhole_message<B: Bar>(
    bar: &mut B,
    code: u8,
    arg: u32,
    timeout: Duration,
) -> Result<u32, PcieError> {
    with_message_lock(
        bar,
        |b, op| b.resource_lock(MESSAGE_LOCK, op),
        |b| b.pass_time(),
        code as u32,
        timeout,
        |b| exchange(b, code, arg, timeout),
    )
}

/// [`wormhole_message`] once the lock is held.
fn exchange<B: Bar>(bar: &mut B, code: u8, arg: u32, timeout: Duration) -> Result<u32, PcieError> {
    let failed = |why: String| PcieError::ArcMessage {
        code: code as u32,
        why,
    };
    bar.bar0_write32(scratch_bar0(SCRATCH_RES0), arg)?;
    bar.bar0_write32(scratch_bar0(SCRATCH_STATUS), MSG_PREFIX | code as u32)?;
    // ARC clears the IRQ bit when it takes a message; ringing again before would lose this
    // one. tt-umd waits for the bit to clear before it rings (`ARC_TRIGGER_CLEAR_TIMEOUT`,
    // 5 ms); here within the message's own timeout.
    let start = Instant::now();
    let misc = loop {
        let misc = bar.bar0_read32(MISC_CNTL_BAR0)?;
        if misc == u32::MAX {
            return Err(PcieError::Hung {
                what: format!("ARC_MISC_CNTL (BAR0 {MISC_CNTL_BAR0:#x})"),
            });
        }
        if misc & MISC_CNTL_IRQ0 == 0 {
            break misc;
        }
        if start.elapsed() >= timeout {
            return Err(failed(format!(
                "ARC_MISC_CNTL ({MISC_CNTL_BAR0:#x}) still has its IRQ bit set after {} ms: \
                 ARC took no earlier message",
                start.elapsed().as_millis()
            )));
        }
        bar.pass_time();
    };
    bar.bar0_write32(MISC_CNTL_BAR0, misc | MISC_CNTL_IRQ0)?;
    loop {
        let status = bar.bar0_read32(scratch_bar0(SCRATCH_STATUS))?;
        if status == u32::MAX {
            return Err(PcieError::Hung {
                what: "ARC's scratch register 5 (BAR0 0x1FF3_0074)".into(),
            });
        }
        match served(status, code) {
            Some(0) => return bar.bar0_read32(scratch_bar0(SCRATCH_RES0)),
            Some(exit) => return Err(failed(format!("ARC answered with exit code {exit}"))),
            None if start.elapsed() >= timeout => {
                return Err(failed(format!(
                    "not served within {} ms (scratch 5 reads {status:#010x})",
                    timeout.as_millis()
                )));
            }
            None => {
                bar.pass_time();
            }
        }
    }
}
