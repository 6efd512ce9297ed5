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

use std::time::{Duration, Instant};

use blackhole_pac::arc::{self, msg, tag};
use blackhole_pac::tensix::{AICLK_BUSY_MHZ, AICLK_IDLE_MHZ};

use crate::error::PcieError;
use crate::telemetry::{ArcRead, Telemetry};

/// The device access the open sequence needs: ARC reads and writes, and letting time pass.
pub trait ArcPort: ArcRead {
    /// Writes the word at ARC NoC address `addr`.
    fn arc_write32(&self, addr: u64, value: u32) -> Result<(), PcieError>;
    /// Lets the device run while the host waits once; the device cycles that passed (as
    /// [`Bar::pass_time`](crate::Bar::pass_time)).
    fn arc_wait(&self) -> u64;
}

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
}

impl Default for OpenTimeouts {
    fn default() -> Self {
        Self {
            arc_ready: Duration::from_secs(300),
            dram_training: Duration::from_secs(300),
            arc_message: Duration::from_secs(1),
            aiclk: Duration::from_millis(200),
        }
    }
}

/// The least real time a wait is allowed before its cap ends it, whatever its device-time
/// budget: a slow host must not time out a simulated card whose clock moves.
pub const MIN_REAL_TIME_CAP: Duration = Duration::from_secs(1);

/// The AICLK tolerance, in percent, within which the clock counts as settled (tt-umd
/// `AICLK_TOLERANCE_PERCENT`).
pub const AICLK_TOLERANCE_PERCENT: u32 = 5;

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
        self.cycles = self.cycles.saturating_add(port.arc_wait());
    }

    /// How long the wait took, in milliseconds: device time, or real time if that is longer.
    pub fn waited_ms(&self) -> u64 {
        let device = self.cycles / (AICLK_BUSY_MHZ as u64 * 1000);
        device.max(self.start.elapsed().as_millis() as u64)
    }
}

/// Reads `addr` and refuses the all-ones word of a hung device.
fn read_alive(port: &impl ArcPort, addr: u64, what: &str) -> Result<u32, PcieError> {
    let v = port.arc_read32(addr)?;
    if v == arc::HUNG_READ {
        return Err(PcieError::Hung {
            what: format!("{what} (ARC {addr:#x})"),
        });
    }
    Ok(v)
}

/// Waits until ARC's boot status (`SCRATCH_RAM_2 & 7`) says ready (5).
/// [`PcieError::ArcNotReady`] with the last status when it does not within `timeout`.
pub fn wait_arc_ready(port: &impl ArcPort, timeout: Duration) -> Result<(), PcieError> {
    let mut bound = Bound::new(timeout);
    loop {
        let status = read_alive(port, arc::SCRATCH_RAM_2, "ARC boot status (SCRATCH_RAM_2)")?;
        if status & 7 == arc::ARC_BOOT_READY {
            return Ok(());
        }
        if bound.expired() {
            return Err(PcieError::ArcNotReady {
                status,
                waited_ms: bound.waited_ms(),
            });
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
    let mut bound = Bound::new(timeout);
    loop {
        let telemetry = Telemetry::read(port)?;
        let Some(channels) = dram_channels(&telemetry) else {
            return Ok(Some(
                "telemetry has no GDDR_STATUS (tag 22): DRAM training was not checked".into(),
            ));
        };
        let list = |want: DramChannel| -> Vec<String> {
            (0..8)
                .filter(|&c| channels[c] == want)
                .map(|c| c.to_string())
                .collect()
        };
        let failed = list(DramChannel::Failed);
        if !failed.is_empty() {
            return Err(PcieError::DramTraining(format!(
                "channel(s) {} failed training (GDDR_STATUS {:#x}); reset the board (tt-smi -r)",
                failed.join(", "),
                telemetry.get(tag::GDDR_STATUS).unwrap_or(0)
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
        bound.wait(port);
    }
}

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
        let n = self.entries;
        // Room in the request ring: it is full when the write pointer is n ahead.
        let wptr = self.pointer(port, msg::REQUEST_WPTR, code)?;
        let mut bound = Bound::new(timeout);
        loop {
            let rptr = self.pointer(port, msg::REQUEST_RPTR, code)?;
            if (wptr + 2 * n - rptr) % (2 * n) != n {
                break;
            }
            if bound.expired() {
                return Err(msg_error(
                    code,
                    format!("the request queue stayed full for {} ms", bound.waited_ms()),
                ));
            }
            bound.wait(port);
        }
        let entry = self.base + (msg::HEADER_BYTES + (wptr % n) * msg::ENTRY_BYTES) as u64;
        let mut words = [0u32; 8];
        words[0] = code;
        words[1..=args.len()].copy_from_slice(args);
        for (i, w) in words.iter().enumerate() {
            port.arc_write32(entry + 4 * i as u64, *w)?;
        }
        port.arc_write32(self.header(msg::REQUEST_WPTR), (wptr + 1) % (2 * n))?;
        port.arc_write32(msg::ARC_MISC_CNTL, msg::ARC_MISC_CNTL_IRQ)?;

        let rptr = self.pointer(port, msg::RESPONSE_RPTR, code)?;
        let mut bound = Bound::new(timeout);
        loop {
            if self.pointer(port, msg::RESPONSE_WPTR, code)? != rptr {
                break;
            }
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

/// Whether `mhz` is within [`AICLK_TOLERANCE_PERCENT`] of `target` (tt-umd
/// `is_within_percentage`).
pub fn settled(mhz: u32, target: u32) -> bool {
    (mhz as u64).abs_diff(target as u64) * 100 <= target as u64 * AICLK_TOLERANCE_PERCENT as u64
}

/// Sends `AICLK_GO_BUSY` on the application queue, then waits, bounded by `timeouts.aiclk`,
/// until telemetry's AICLK is within 5 % of `AICLK_LIMIT_MAX` (or the busy 1350 MHz when the
/// table has no limit). When the message fails or the clock does not settle the outcome says
/// so and the open goes on, as tt-umd's `wait_for_aiclk_value` logs and goes on; errors of
/// the device itself (hung, gone, a simulator's refusal) are returned.
pub fn raise_aiclk(
    port: &impl ArcPort,
    timeouts: &OpenTimeouts,
) -> Result<ClockOutcome, PcieError> {
    let sent = MessageQueue::locate(port, msg::APPLICATION_QUEUE)
        .and_then(|q| q.send(port, msg::code::AICLK_GO_BUSY, &[], timeouts.arc_message));
    let last = |t: &Telemetry| t.get(tag::AICLK).unwrap_or(0);
    match sent {
        Ok(_) => {}
        Err(e @ PcieError::ArcMessage { .. }) => {
            let mhz = last(&Telemetry::read(port)?);
            return Ok(ClockOutcome {
                raised: false,
                aiclk_mhz: mhz,
                note: Some(format!("AICLK_GO_BUSY failed: {e}; AICLK is {mhz} MHz")),
            });
        }
        Err(e) => return Err(e),
    }
    let mut bound = Bound::new(timeouts.aiclk);
    loop {
        let t = Telemetry::read(port)?;
        let target = t.get(tag::AICLK_LIMIT_MAX).unwrap_or(AICLK_BUSY_MHZ);
        let mhz = last(&t);
        if settled(mhz, target) {
            return Ok(ClockOutcome {
                raised: true,
                aiclk_mhz: mhz,
                note: (mhz != target).then(|| {
                    format!(
                        "AICLK settled at {mhz} MHz, within {AICLK_TOLERANCE_PERCENT}% of the \
                         requested {target} MHz"
                    )
                }),
            });
        }
        if bound.expired() {
            return Ok(ClockOutcome {
                raised: false,
                aiclk_mhz: mhz,
                note: Some(format!(
                    "AICLK did not reach {target} MHz within {} ms of AICLK_GO_BUSY: telemetry \
                     says {mhz} MHz{}",
                    bound.waited_ms(),
                    if mhz <= AICLK_IDLE_MHZ {
                        " (idle); byte and half-word L1 stores by the cores may fail (tt-umd #2812)"
                    } else {
                        ""
                    }
                )),
            });
        }
        bound.wait(port);
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::collections::BTreeMap;

    use super::*;

    /// A fake ARC in memory: scratch, a queue control block with 4 queues of `n` entries,
    /// and a telemetry table whose AICLK and GDDR_STATUS a test sets. `serve` says how it
    /// answers the IRQ.
    struct FakeArc {
        words: RefCell<BTreeMap<u64, u32>>,
        serve: Serve,
        /// Cycles each wait passes; 0 models a device whose clock does not move.
        step: u64,
        waits: Cell<u64>,
        /// After this many waits following AICLK_GO_BUSY, AICLK reads `busy`.
        ramp: Option<u64>,
        busy: u32,
        go_busy_at: Cell<Option<u64>>,
    }

    #[derive(Copy, Clone, PartialEq)]
    enum Serve {
        /// Answer every request with status `.0`.
        Status(u32),
        /// Never answer.
        Silent,
    }

    const QCB: u32 = arc::ARC_CSM_BASE + 0x100;
    const Q0: u32 = arc::ARC_CSM_BASE + 0x200;
    const N: u32 = 2;
    const TABLE: u32 = arc::ARC_CSM_BASE + 0x4000;
    const DATA: u32 = arc::ARC_CSM_BASE + 0x5000;
    const TAGS: [u16; 5] = [
        tag::AICLK,
        tag::AICLK_LIMIT_MAX,
        tag::GDDR_STATUS,
        tag::ENABLED_GDDR,
        tag::FLASH_BUNDLE_VERSION,
    ];

    impl FakeArc {
        fn new(serve: Serve) -> Self {
            let mut w = BTreeMap::new();
            w.insert(arc::SCRATCH_RAM_2, arc::ARC_BOOT_READY);
            w.insert(msg::SCRATCH_RAM_11, QCB);
            w.insert(arc::SCRATCH_RAM_13, TABLE);
            w.insert(arc::SCRATCH_RAM_12, DATA);
            w.insert(QCB as u64, Q0);
            w.insert(QCB as u64 + 4, N | 4 << 8);
            w.insert(TABLE as u64, 1 << 16);
            w.insert(TABLE as u64 + 4, TAGS.len() as u32);
            for (i, t) in TAGS.iter().enumerate() {
                w.insert(
                    TABLE as u64 + 8 + 4 * i as u64,
                    arc::telemetry_entry(*t, i as u16),
                );
            }
            let arc = Self {
                words: RefCell::new(w),
                serve,
                step: 1350,
                waits: Cell::new(0),
                ramp: Some(3),
                busy: 1350,
                go_busy_at: Cell::new(None),
            };
            arc.set(tag::AICLK, 800);
            arc.set(tag::AICLK_LIMIT_MAX, 1350);
            arc.set(tag::GDDR_STATUS, 0x5555);
            arc.set(tag::ENABLED_GDDR, 0xFF);
            arc.set(tag::FLASH_BUNDLE_VERSION, 19 << 24 | 5 << 16);
            arc
        }

        fn set(&self, t: u16, v: u32) {
            let i = TAGS.iter().position(|&x| x == t).unwrap() as u64;
            self.words.borrow_mut().insert(DATA as u64 + 4 * i, v);
        }

        fn word(&self, a: u64) -> u32 {
            self.words.borrow().get(&a).copied().unwrap_or(0)
        }

        fn queue(q: u32) -> u64 {
            (Q0 + q * (msg::HEADER_BYTES + 2 * N * msg::ENTRY_BYTES)) as u64
        }

        fn irq(&self) {
            for q in 0..4 {
                let base = Self::queue(q);
                let (w, mut r) = (self.word(base), self.word(base + 16));
                let mut rw = self.word(base + 20);
                while r != w {
                    let req = base + (msg::HEADER_BYTES + (r % N) * msg::ENTRY_BYTES) as u64;
                    let code = self.word(req);
                    if code == msg::code::AICLK_GO_BUSY {
                        self.go_busy_at.set(Some(self.waits.get()));
                    }
                    let resp = base + (msg::HEADER_BYTES + (N + rw % N) * msg::ENTRY_BYTES) as u64;
                    let Serve::Status(s) = self.serve else { return };
                    self.words.borrow_mut().insert(resp, s | 7 << 16);
                    self.words.borrow_mut().insert(resp + 4, code);
                    r = (r + 1) % (2 * N);
                    rw = (rw + 1) % (2 * N);
                }
                self.words.borrow_mut().insert(base + 16, r);
                self.words.borrow_mut().insert(base + 20, rw);
            }
        }
    }

    impl ArcRead for FakeArc {
        fn arc_read32(&self, addr: u64) -> Result<u32, PcieError> {
            Ok(self.word(addr))
        }
    }

    impl ArcPort for FakeArc {
        fn arc_write32(&self, addr: u64, value: u32) -> Result<(), PcieError> {
            if addr == msg::ARC_MISC_CNTL {
                assert_eq!(value, msg::ARC_MISC_CNTL_IRQ);
                self.irq();
                return Ok(());
            }
            self.words.borrow_mut().insert(addr, value);
            Ok(())
        }
        fn arc_wait(&self) -> u64 {
            self.waits.set(self.waits.get() + 1);
            if let (Some(at), Some(ramp)) = (self.go_busy_at.get(), self.ramp) {
                if self.waits.get() >= at + ramp {
                    self.set(tag::AICLK, self.busy);
                }
            }
            self.step
        }
    }

    fn quick() -> OpenTimeouts {
        OpenTimeouts {
            arc_ready: Duration::from_millis(1),
            dram_training: Duration::from_millis(1),
            arc_message: Duration::from_millis(1),
            aiclk: Duration::from_millis(1),
        }
    }

    #[test]
    fn a_message_goes_through_the_application_queue_and_the_pointers_wrap_at_2n() {
        let arc = FakeArc::new(Serve::Status(0));
        let q = MessageQueue::locate(&arc, msg::APPLICATION_QUEUE).unwrap();
        assert_eq!(q.base, FakeArc::queue(3));
        assert_eq!(q.entries, N);
        for round in 0..9u32 {
            let r = q
                .send(&arc, 0x11, &[round, 2], Duration::from_millis(1))
                .unwrap();
            assert_eq!((r.status, r.value, r.words[0]), (0, 7, 0x11));
            let req = q.base + (msg::HEADER_BYTES + (round % N) * msg::ENTRY_BYTES) as u64;
            assert_eq!(
                arc.word(req + 4),
                round,
                "argument 0 in request slot {}",
                round % N
            );
            assert_eq!(
                arc.word(q.base),
                (round + 1) % (2 * N),
                "write pointer wraps at 2n"
            );
            assert_eq!(
                arc.word(q.base + 4),
                (round + 1) % (2 * N),
                "read pointer too"
            );
        }
        assert!(matches!(
            q.send(&arc, 0x11, &[0; 8], Duration::from_millis(1)),
            Err(PcieError::ArcMessage { why, .. }) if why.contains("at most 7")
        ));
    }

    #[test]
    fn error_statuses_full_queues_and_silence_are_typed_errors() {
        for (status, says) in [(0xFF, "does not know"), (0xF0, "error status 0xf0")] {
            let arc = FakeArc::new(Serve::Status(status));
            let q = MessageQueue::locate(&arc, 3).unwrap();
            let e = q
                .send(&arc, 0x99, &[], Duration::from_millis(1))
                .unwrap_err();
            assert!(
                matches!(&e, PcieError::ArcMessage { code: 0x99, why } if why.contains(says)),
                "{e}"
            );
        }
        let silent = FakeArc::new(Serve::Silent);
        let q = MessageQueue::locate(&silent, 3).unwrap();
        let e = q
            .send(&silent, 0x11, &[], Duration::from_millis(1))
            .unwrap_err();
        assert!(e.to_string().contains("no response within"), "{e}");
        // Two unanswered requests fill a ring of 2: the third finds no room.
        q.send(&silent, 0x11, &[], Duration::from_millis(1))
            .unwrap_err();
        let e = q
            .send(&silent, 0x11, &[], Duration::from_millis(1))
            .unwrap_err();
        assert!(e.to_string().contains("stayed full"), "{e}");
        // A device whose clock does not move is still bounded, by real time.
        let mut still = FakeArc::new(Serve::Silent);
        still.step = 0;
        let q = MessageQueue::locate(&still, 3).unwrap();
        q.send(&still, 0x11, &[], Duration::from_millis(1))
            .unwrap_err();
    }

    #[test]
    fn a_control_block_outside_csm_or_without_the_queue_is_refused() {
        let arc = FakeArc::new(Serve::Status(0));
        assert!(matches!(
            MessageQueue::locate(&arc, 4),
            Err(PcieError::ArcMessage { why, .. }) if why.contains("4 queue(s); queue 4")
        ));
        arc.words.borrow_mut().insert(msg::SCRATCH_RAM_11, 0x1234);
        assert!(matches!(
            MessageQueue::locate(&arc, 3),
            Err(PcieError::ArcMessage { why, .. }) if why.contains("not a word of ARC CSM")
        ));
        arc.words
            .borrow_mut()
            .insert(msg::SCRATCH_RAM_11, arc::HUNG_READ);
        assert!(matches!(
            MessageQueue::locate(&arc, 3),
            Err(PcieError::Hung { .. })
        ));
        arc.words.borrow_mut().insert(msg::SCRATCH_RAM_11, QCB);
        arc.words.borrow_mut().insert(QCB as u64 + 4, 4 << 8);
        assert!(matches!(
            MessageQueue::locate(&arc, 3),
            Err(PcieError::ArcMessage { why, .. }) if why.contains("0 entries")
        ));
    }

    #[test]
    fn aiclk_raised_waits_for_telemetry_and_a_clock_that_never_settles_is_a_note() {
        let arc = FakeArc::new(Serve::Status(0));
        let out = raise_aiclk(&arc, &OpenTimeouts::default()).unwrap();
        assert_eq!((out.raised, out.aiclk_mhz, out.note), (true, 1350, None));
        assert!(arc.waits.get() >= 3, "waited for the ramp");

        // ttsim: the message is served, AICLK stays at 1000 MHz.
        let mut stuck = FakeArc::new(Serve::Status(0));
        stuck.ramp = None;
        stuck.set(tag::AICLK, 1000);
        let out = raise_aiclk(&stuck, &quick()).unwrap();
        assert!(!out.raised);
        assert_eq!(out.aiclk_mhz, 1000);
        assert!(
            out.note
                .as_deref()
                .unwrap()
                .starts_with("AICLK did not reach 1350 MHz"),
            "{out:?}"
        );

        // Within 5 % is settled, with a note saying how.
        let mut near = FakeArc::new(Serve::Status(0));
        near.busy = 1300;
        let out = raise_aiclk(&near, &quick()).unwrap();
        assert!(out.raised && out.note.unwrap().contains("within 5%"));

        // A refused message is a note, not a failed open.
        let refused = FakeArc::new(Serve::Status(0xFF));
        let out = raise_aiclk(&refused, &quick()).unwrap();
        assert!(!out.raised && out.note.unwrap().contains("AICLK_GO_BUSY failed"));
        assert!(settled(1283, 1350) && !settled(1282, 1350) && settled(1417, 1350));
    }

    #[test]
    fn arc_ready_and_dram_training_are_bounded_waits() {
        let arc = FakeArc::new(Serve::Status(0));
        wait_arc_ready(&arc, Duration::from_millis(1)).unwrap();
        arc.words.borrow_mut().insert(arc::SCRATCH_RAM_2, 0x3);
        assert!(matches!(
            wait_arc_ready(&arc, Duration::from_millis(1)),
            Err(PcieError::ArcNotReady { status: 3, .. })
        ));
        arc.words.borrow_mut().insert(arc::SCRATCH_RAM_2, 0x15);
        wait_arc_ready(&arc, Duration::from_millis(1)).unwrap();

        assert_eq!(wait_dram_trained(&arc, Duration::from_millis(1)), Ok(None));
        // Channel 3 still training (0b00), then failed (0b10); a harvested one is skipped.
        arc.set(tag::GDDR_STATUS, 0x5515);
        let e = wait_dram_trained(&arc, Duration::from_millis(1)).unwrap_err();
        assert!(e.to_string().contains("channel(s) 3 still training"), "{e}");
        arc.set(tag::ENABLED_GDDR, 0xF7);
        assert_eq!(wait_dram_trained(&arc, Duration::from_millis(1)), Ok(None));
        arc.set(tag::ENABLED_GDDR, 0xFF);
        arc.set(tag::GDDR_STATUS, 0x5595);
        let e = wait_dram_trained(&arc, Duration::from_millis(1)).unwrap_err();
        assert!(e.to_string().contains("channel(s) 3 failed"), "{e}");
        // From bundle 19.7.0 the BIST half counts too.
        arc.set(tag::GDDR_STATUS, 0x5555);
        arc.set(tag::FLASH_BUNDLE_VERSION, 19 << 24 | 7 << 16);
        assert!(wait_dram_trained(&arc, Duration::from_millis(1)).is_err());
        arc.set(tag::GDDR_STATUS, 0x5555_5555);
        assert_eq!(wait_dram_trained(&arc, Duration::from_millis(1)), Ok(None));
        // A table without GDDR_STATUS is not waited on, and says so.
        let i = TAGS.iter().position(|&t| t == tag::GDDR_STATUS).unwrap() as u64;
        arc.words
            .borrow_mut()
            .insert(TABLE as u64 + 8 + 4 * i, arc::telemetry_entry(99, i as u16));
        let note = wait_dram_trained(&arc, Duration::from_millis(1)).unwrap();
        assert!(note.unwrap().contains("no GDDR_STATUS"));
    }
}
