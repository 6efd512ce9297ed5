//! A Tensix tile's NIU (one per NoC): Blackhole's wrapping counters (reads done; non-posted and
//! posted writes sent; acks, one per destination of a multicast; per transaction id the
//! requests outstanding and the writes outgoing), the issue counts a driver
//! keeps to compare them with, its two issue pipelines, its open linked run, and whether a
//! request on another virtual channel during that run has hung it.
//!
//! # Two issue pipelines
//! An NIU has four command buffers that issue independently (ISA `NoC/MemoryMap.md`:
//! "request initiators"); komorebi, as tt-metal's `noc_nonblocking_api.h`, issues reads from
//! one and writes from another. So a read waits only for the reads issued before it, never for
//! a multicast's path reservation or its data leaving: the [`Pipe::Read`] and [`Pipe::Write`]
//! pipelines each take one command at a time. Their packets still meet on the NoC's links,
//! where `link` arbitrates them.
//!
//! Leaf module: imports nothing of the crate. The world times the packets; this module only
//! keeps the NIU's own state.

use komorebi_hal::wrap::at_or_after;

/// One NIU's counters (wrapping, as the hardware's) and its issue pipeline.
#[derive(Clone, Debug, Default)]
pub(crate) struct Niu {
    pub reads_issued: u32,
    pub reads_done: u32,
    pub nonposted_issued: u32,
    pub nonposted_sent: u32,
    pub posted_issued: u32,
    pub posted_sent: u32,
    pub acks_expected: u32,
    pub acks_received: u32,
    /// When each pipeline ([`Pipe`]) can start its next command.
    pub free_at: [u64; 2],
    /// When each pipeline started (or will start) the last command it was given: a command
    /// buffer holds its command, `NOC_CMD_CTRL` reading 1, until then.
    pub started: [u64; 2],
    /// Commands the pipelines were given (a command that sends no packet gives them none).
    pub slots: u64,
    /// The earliest cycle the next write packet's head may leave the NIU: the last one's launch
    /// plus its flits.
    pub write_launch_free: u64,
    /// Write packets take their path, and leave, in the order they departed the write
    /// pipeline (`seq`), also when some waited for a held link and are asked again in one
    /// cycle, in any order, or a later one finds its path free first.
    pub write_turn: WriteTurn,
    /// The open linked run of multicasts, if any.
    pub run: Option<Run>,
    /// A read or unicast write was issued while `run` was open: its virtual channel assignment
    /// fails for ever and the NIU initiates no request any more (ISA `MemoryMap.md`,
    /// `NOC_CMD_VC_LINKED`), the run's own closing multicast included.
    pub hung: bool,
    /// Firmware cores: command buffers whose command was handed over after the NIU hung (bit
    /// `i`: command buffer `i`); their `NOC_CMD_CTRL` reads 1, as a request never initiated.
    pub stuck_bufs: u8,
    /// Per transaction id (`NOC_PACKET_TAG` bits 10..13), as `NIU_MST_REQS_OUTSTANDING_ID(id)`
    /// counts (ISA `NoC/Counters.md`): one for each read packet issued and not landed and each
    /// acknowledged write packet issued, less one for each acknowledgement received (a
    /// multicast's one packet gets one from each destination, so its id's count goes below
    /// zero, as on the chip). komorebi's own writes all carry id 0 and its tagged reads ids 1
    /// and up.
    pub outstanding: [u32; 16],
    /// Per transaction id: write packets issued that have not left (their source not read
    /// yet), as `NIU_MST_WRITE_REQS_OUTGOING_ID(id)` counts.
    pub writes_outgoing: [u32; 16],
}

/// The order an NIU's write packets take their path in: the next sequence number to give a
/// departing packet, the next allowed to ask for its path, and those that came early (by
/// sequence number: the packet's id).
#[derive(Clone, Debug, Default)]
pub(crate) struct WriteTurn {
    pub departed: u64,
    pub next: u64,
    pub early: std::collections::BTreeMap<u64, u32>,
}

/// A linked run of multicasts under way: where it goes and its number (world-wide, from 1).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    /// Raw corners of the rectangle, as issued.
    pub corners: ((u8, u8), (u8, u8)),
    pub id: u32,
}

/// An NIU's issue pipelines: the command buffer reads are issued from and the one writes
/// (multicasts included) are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pipe {
    Read = 0,
    Write = 1,
}

impl Niu {
    /// When pipeline `pipe` takes a command issued at `t` that occupies it `busy` cycles: it
    /// leaves `issue_latency` after the pipeline starts it.
    pub(crate) fn slot(&mut self, pipe: Pipe, t: u64, busy: u64, issue_latency: u64) -> u64 {
        let free_at = &mut self.free_at[pipe as usize];
        let start = t.max(*free_at);
        *free_at = start + busy;
        self.started[pipe as usize] = start;
        self.slots += 1;
        start + issue_latency
    }

    /// Counts a write packet with transaction id `id` issued to `dests` destinations.
    pub(crate) fn write_issued(&mut self, acked: bool, dests: u32, id: u8) {
        let id = id as usize & 0xF;
        self.writes_outgoing[id] = self.writes_outgoing[id].wrapping_add(1);
        if acked {
            self.outstanding[id] = self.outstanding[id].wrapping_add(1);
            self.nonposted_issued = self.nonposted_issued.wrapping_add(1);
            self.acks_expected = self.acks_expected.wrapping_add(dests);
        } else {
            self.posted_issued = self.posted_issued.wrapping_add(1);
        }
    }

    /// Counts a write packet with transaction id `id` that has left.
    pub(crate) fn write_sent(&mut self, acked: bool, id: u8) {
        let id = id as usize & 0xF;
        self.writes_outgoing[id] = self.writes_outgoing[id].wrapping_sub(1);
        if acked {
            self.nonposted_sent = self.nonposted_sent.wrapping_add(1);
        } else {
            self.posted_sent = self.posted_sent.wrapping_add(1);
        }
    }

    /// Counts an ack, for a write of transaction id `id`, taken from the NIU's ejection port.
    pub(crate) fn take_ack(&mut self, id: u8) {
        self.acks_received = self.acks_received.wrapping_add(1);
        let id = id as usize & 0xF;
        self.outstanding[id] = self.outstanding[id].wrapping_sub(1);
    }

    /// Every read issued has landed. The counts wrap: exact while fewer than 2^31 are
    /// outstanding, and a straggler completing after a `resync` makes them "ahead", never behind.
    pub(crate) fn reads_caught_up(&self) -> bool {
        at_or_after(self.reads_done, self.reads_issued)
    }

    /// Every write issued has left.
    pub(crate) fn writes_caught_up(&self) -> bool {
        at_or_after(self.nonposted_sent, self.nonposted_issued)
            && at_or_after(self.posted_sent, self.posted_issued)
    }

    /// Every ack expected has come.
    pub(crate) fn acks_caught_up(&self) -> bool {
        at_or_after(self.acks_received, self.acks_expected)
    }

    /// Sets the issue counts to the hardware's counters.
    pub(crate) fn resync(&mut self) {
        self.reads_issued = self.reads_done;
        self.nonposted_issued = self.nonposted_sent;
        self.posted_issued = self.posted_sent;
        self.acks_expected = self.acks_received;
    }
}
