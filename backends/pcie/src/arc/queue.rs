//! ARC's message queues: locating one through `SCRATCH_RAM_11`, sending a message and reading
//! its response (the protocol in the parent module's docs).

use std::time::Duration;

use blackhole_pac::arc::{self, msg};

use super::port::{ArcPort, Bound, read_alive, with_message_lock};
use crate::error::PcieError;

/// A response of ARC firmware to a message.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ArcResponse {
    /// The status (`word0 & 0xFF`): below 240 is success.
    pub status: u8,
    /// The value (`word0 >> 16`).
    pub value: u16,
    /// Response words 1..=7.
    pub words: [u32; 7],
}

/// One of ARC's message queues, located through `SCRATCH_RAM_11`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MessageQueue {
    /// ARC address of the queue's header.
    pub base: u64,
    /// Entries of each ring (`n`).
    pub entries: u32,
}

fn msg_error(code: u32, why: impl Into<String>) -> PcieError {
    PcieError::ArcMessage {
        code,
        why: why.into(),
    }
}

impl MessageQueue {
    /// Queue `index` (tt-umd's application queue is [`msg::APPLICATION_QUEUE`]) as the control
    /// block describes it. [`PcieError::ArcMessage`] when the control block is not in ARC CSM,
    /// has no entries, or has no queue `index`.
    pub fn locate(port: &impl ArcPort, index: u32) -> Result<Self, PcieError> {
        let bad = |why: String| msg_error(0, format!("the queue control block: {why}"));
        let qcb = read_alive(port, msg::SCRATCH_RAM_11, "SCRATCH_RAM_11")?;
        let csm = arc::ARC_CSM_BASE..arc::ARC_CSM_BASE + arc::ARC_CSM_BYTES;
        if !csm.contains(&qcb) || qcb % 4 != 0 {
            return Err(bad(format!(
                "SCRATCH_RAM_11 holds {qcb:#x}, not a word of ARC CSM ({:#x}..{:#x})",
                csm.start, csm.end
            )));
        }
        let first = read_alive(port, qcb as u64, "the queue control block")?;
        let sizes = read_alive(port, qcb as u64 + 4, "the queue control block")?;
        let (entries, queues) = (sizes & 0xFF, (sizes >> 8) & 0xFF);
        if entries == 0 {
            return Err(bad(format!("{sizes:#x} gives queues of 0 entries")));
        }
        if index >= queues {
            return Err(bad(format!(
                "it describes {queues} queue(s); queue {index} was asked for"
            )));
        }
        let base = first as u64
            + index as u64 * (msg::HEADER_BYTES + 2 * entries * msg::ENTRY_BYTES) as u64;
        let end = base + (msg::HEADER_BYTES + 2 * entries * msg::ENTRY_BYTES) as u64;
        if !csm.contains(&first) || end > csm.end as u64 || first % 4 != 0 {
            return Err(bad(format!(
                "queue {index} at {base:#x}..{end:#x} does not lie in ARC CSM"
            )));
        }
        Ok(Self { base, entries })
    }

    fn header(&self, word: u32) -> u64 {
        self.base + 4 * word as u64
    }

    /// Reads a ring pointer and refuses one outside `0..2n` (a garbage or hung read).
    fn pointer(&self, port: &impl ArcPort, word: u32, code: u32) -> Result<u32, PcieError> {
        let p = read_alive(port, self.header(word), "an ARC queue pointer")?;
        if p >= 2 * self.entries {
            return Err(msg_error(
                code,
                format!(
                    "queue pointer word {word} at {:#x} reads {p}, outside 0..{}",
                    self.header(word),
                    2 * self.entries
                ),
            ));
        }
        Ok(p)
    }

    /// Sends message `code` with `args` (at most 7) and waits for its response, each wait
    /// bounded by `timeout`. A response whose status is 240 or more is
    /// [`PcieError::ArcMessage`] (0xFF: the firmware does not know the code), as is a queue
    /// that stays full or a response that does not come.
    ///
    /// The exchange holds ARC's message lock ([`MESSAGE_LOCK`](super::MESSAGE_LOCK)), asked
    /// for within `timeout` too, so no other process's message interleaves with it.
    pub fn send(
        &self,
        port: &impl ArcPort,
        code: u32,
        args: &[u32],
        timeout: Duration,
    ) -> Result<ArcResponse, PcieError> {
        if args.len() > 7 {
            return Err(msg_error(
                code,
                format!(
                    "{} arguments given; a message carries at most 7",
                    args.len()
                ),
            ));
        }
        with_message_lock(
            &mut &*port,
            |p, op| p.message_lock(op),
            |p| p.arc_wait(),
            code,
            timeout,
            |p| self.exchange(*p, code, args, timeout),
        )
    }

    /// [`send`](Self::send) once the lock is held.
    fn exchange(
        &self,
        port: &impl ArcPort,
        code: u32,
        args: &[u32],
        timeout: Duration,
    ) -> Result<ArcResponse, PcieError> {
        let n = self.entries;
        // ARC answers requests in order, one response each, its response write pointer moving
        // with its request read pointer from the same start: the response to the request at
        // index `wptr` is the one at index `wptr`. Taking that one, rather than the next after
        // the response read pointer, keeps a late answer to a message that timed out (which
        // tt-umd's queue would take for this one's) from being read as this message's.
        let wptr = self.pointer(port, msg::REQUEST_WPTR, code)?;
        // Room first: the request ring not full, and fewer than `n` requests unanswered, so
        // that once this one is pushed the response write pointer is at most `n - 1` behind it
        // until it is answered and then just past it: never both ways.
        let mut bound = Bound::new(timeout);
        loop {
            let rptr = self.pointer(port, msg::REQUEST_RPTR, code)?;
            let written = self.pointer(port, msg::RESPONSE_WPTR, code)?;
            let taken = (wptr + 2 * n - rptr) % (2 * n) < n;
            if taken && (wptr + 2 * n - written) % (2 * n) < n {
                break;
            }
            if bound.expired() {
                return Err(msg_error(
                    code,
                    format!(
                        "ARC left {} requests untaken or unanswered for {} ms",
                        (wptr + 2 * n - written) % (2 * n),
                        bound.waited_ms()
                    ),
                ));
            }
            bound.wait(port);
        }
        // Answers to messages that timed out are dropped as they come: unread, they would fill
        // the response ring, and ARC takes no request while it is full.
        let drop_to = |to: u32| port.arc_write32(self.header(msg::RESPONSE_RPTR), to);
        drop_to(self.pointer(port, msg::RESPONSE_WPTR, code)?)?;
        let entry = self.base + (msg::HEADER_BYTES + (wptr % n) * msg::ENTRY_BYTES) as u64;
        let mut words = [0u32; 8];
        words[0] = code;
        words[1..=args.len()].copy_from_slice(args);
        for (i, w) in words.iter().enumerate() {
            port.arc_write32(entry + 4 * i as u64, *w)?;
        }
        port.arc_write32(self.header(msg::REQUEST_WPTR), (wptr + 1) % (2 * n))?;
        port.arc_write32(msg::ARC_MISC_CNTL, msg::ARC_MISC_CNTL_IRQ)?;

        let rptr = wptr;
        let mut bound = Bound::new(timeout);
        loop {
            let written = self.pointer(port, msg::RESPONSE_WPTR, code)?;
            if (1..=n).contains(&((written + 2 * n - rptr) % (2 * n))) {
                break;
            }
            drop_to(written)?;
            if bound.expired() {
                return Err(msg_error(
                    code,
                    format!("no response within {} ms", bound.waited_ms()),
                ));
            }
            bound.wait(port);
        }
        let entry = self.base + (msg::HEADER_BYTES + (n + rptr % n) * msg::ENTRY_BYTES) as u64;
        let mut resp = [0u32; 8];
        for (i, w) in resp.iter_mut().enumerate() {
            *w = port.arc_read32(entry + 4 * i as u64)?;
        }
        port.arc_write32(self.header(msg::RESPONSE_RPTR), (rptr + 1) % (2 * n))?;
        let status = resp[0] & 0xFF;
        if status == msg::STATUS_UNKNOWN_CODE {
            return Err(msg_error(
                code,
                "ARC firmware does not know this message code",
            ));
        }
        if status >= msg::RESPONSE_OK_LIMIT {
            return Err(msg_error(
                code,
                format!(
                    "ARC answered with error status {status:#x} (below {} is success)",
                    msg::RESPONSE_OK_LIMIT
                ),
            ));
        }
        let mut rest = [0; 7];
        rest.copy_from_slice(&resp[1..]);
        Ok(ArcResponse {
            status: status as u8,
            value: (resp[0] >> 16) as u16,
            words: rest,
        })
    }
}
