//! The ARC management tile as a host reaches it through a TLB window at (8, 0): boot status,
//! the telemetry pointers, the telemetry table and data in ARC CSM (tt-kmd `blackhole.c`,
//! tt-umd `blackhole_arc_telemetry_reader.cpp`; docs/blackhole.md, "ARC telemetry"; register
//! numbers from `blackhole_pac::arc`), and the message queues a host sends ARC
//! messages through (tt-umd `device/arc/blackhole_arc_message_queue.cpp`). The simulator runs
//! no ARC firmware: [`ArcState`] answers what a host reads and serves the queues when the host rings
//! the reset unit's IRQ bit.
//!
//! | NoC address at (8, 0) | Reads | Writes |
//! |---|---|---|
//! | `SCRATCH_RAM_2` (`0x8003_0408`) | [`ARC_BOOT_READY`](blackhole_pac::arc::ARC_BOOT_READY) (5): booted | refused |
//! | `SCRATCH_RAM_11` (`0x8003_042C`) | [`QUEUE_CONTROL`] | refused |
//! | `SCRATCH_RAM_12` (`0x8003_0430`) | [`DATA_ADDR`] | refused |
//! | `SCRATCH_RAM_13` (`0x8003_0434`) | [`TABLE_ADDR`] | refused |
//! | other `RESET_SCRATCH(n)`, n < 64 | 0 | refused |
//! | `ARC_MISC_CNTL` (`0x8003_0100`) | 0 | bit 16 (the IRQ): every queue's requests are answered at once |
//! | [`QUEUE_CONTROL`] | first queue's address, then [`QUEUE_ENTRIES`] \| [`QUEUES`] `<< 8` | refused |
//! | the queues ([`QUEUE_BASE`]..) | the queue words | the host's words only: request entries, the request write pointer, the response read pointer |
//! | [`TABLE_ADDR`].. | [`TABLE_VERSION`], the entry count, then `tag \| offset << 16` per entry | refused |
//! | [`DATA_ADDR`].. | the values, `data[offset]` at `DATA_ADDR + 4 offset` | refused |
//! | the rest of ARC CSM | 0 | refused |
//!
//! The entries (see [`telemetry`]) are not in tag order and an entry's data offset is not its
//! index, so a reader that skips the table's offsets reads wrong values, as it would on a card
//! whose firmware lays the data out differently.
//!
//! # AICLK
//! Telemetry reports the idle clock ([`AICLK_IDLE_MHZ`]) until the host sends
//! `AICLK_GO_BUSY`, and the busy clock (`Timing::aiclk_mhz`, also `AICLK_LIMIT_MAX`) from
//! `SimConfig::aiclk_ramp_cycles` after it (default 0: at once); `AICLK_GO_LONG_IDLE` reports idle again. Only the *reported*
//! clock changes: the timing model always runs at `Timing::aiclk_mhz`, the busy clock, because
//! every host raises the clock at open before it starts the firmware (as tt-umd does), so no
//! simulated run happens at the idle clock. `TIMER_HEARTBEAT` counts microseconds at the
//! timing model's clock.
//!
//! Messages: `AICLK_GO_BUSY` and `AICLK_GO_LONG_IDLE` succeed (status 0); any other code, `NOP`
//! included (the firmware registers no handler for it: tt-zephyr-platforms `smc_msg.h` listed
//! `TT_SMC_MSG_NOP` as "not supported" until 04e4e3b of 2026-04-07 dropped it), gets status
//! 0xFF, the firmware's "message code not recognized" (tt-umd `send_message`).
//!
//! Leaf module: imports only the leaf `config`.

use blackhole_pac::arc::{self, msg, tag};
use blackhole_pac::tensix::AICLK_IDLE_MHZ;

use crate::config::SimConfig;
use crate::error::SimError;

/// ARC CSM address of the telemetry table (what `SCRATCH_RAM_13` holds).
pub const TABLE_ADDR: u32 = arc::ARC_CSM_BASE + 0x7_0000;
/// ARC CSM address of the telemetry data (what `SCRATCH_RAM_12` holds).
pub const DATA_ADDR: u32 = arc::ARC_CSM_BASE + 0x7_1000;
/// ARC CSM address of the message queues' control block (what `SCRATCH_RAM_11` holds).
pub const QUEUE_CONTROL: u32 = arc::ARC_CSM_BASE + 0x6_0000;
/// ARC CSM address of the first message queue.
pub const QUEUE_BASE: u32 = QUEUE_CONTROL + 0x100;
/// Entries of each queue's request ring (and of its response ring): the firmware's
/// `MSG_QUEUE_SIZE` (tt-zephyr-platforms `msgqueue.h`).
pub const QUEUE_ENTRIES: u32 = 4;
/// Message queues (driver, monitoring, tools, application).
pub const QUEUES: u32 = 4;
/// Bytes of one queue: header, requests, responses.
pub const QUEUE_BYTES: u32 = msg::HEADER_BYTES + 2 * QUEUE_ENTRIES * msg::ENTRY_BYTES;
/// The table's version word: 1.0.0 (major in bits 23:16).
pub const TABLE_VERSION: u32 = 1 << 16;
/// AXICLK in MHz: a simulator constant (not measured on a card).
pub const AXICLK_MHZ: u32 = 960;
/// ARCCLK in MHz: a simulator constant (not measured on a card).
pub const ARCCLK_MHZ: u32 = 800;
/// The firmware bundle version the simulator reports: 19.5.0.0, one byte per part from the
/// top (a simulator constant; 19.5 is the first bundle whose p150 parts present two harvested
/// columns).
pub const FLASH_BUNDLE_VERSION: u32 = (19 << 24) | (5 << 16);
/// Enabled Ethernet channels: all 14 (the simulator models no Ethernet).
pub const ENABLED_ETH: u32 = 0x3FFF;
/// GDDR status: every one of the 8 channels trained (`0b01` each), as ttsim reports it.
pub const GDDR_TRAINED: u32 = 0x5555;

/// Words of `RESET_SCRATCH` the model answers (the others are not ARC scratch).
const SCRATCH_WORDS: u64 = 64;
/// Words of the queues' area, from [`QUEUE_CONTROL`].
const QUEUE_AREA_WORDS: usize = ((QUEUE_BASE - QUEUE_CONTROL + QUEUES * QUEUE_BYTES) / 4) as usize;

/// `(tag, value)` of every telemetry entry at cycle `now` with AICLK at `aiclk_mhz`, in table
/// order. `AICLK_LIMIT_MAX` is the timing model's clock; `TIMER_HEARTBEAT` counts microseconds
/// of virtual time (`now / Timing::aiclk_mhz`; the firmware's own rate is not modelled);
/// `ENABLED_TENSIX_COL` is the harvest mask's complement; `ENABLED_GDDR` has every bank's bit
/// but the fused DRAM bank's (`SimConfig::fused_dram`); `NOC_TRANSLATION` is 1 when
/// `SimConfig::translation` is on.
pub fn telemetry(cfg: &SimConfig, now: u64, aiclk_mhz: u32) -> [(u16, u32); 11] {
    let mhz = cfg.timing.aiclk_mhz.max(1);
    [
        (tag::TIMER_HEARTBEAT, (now / mhz as u64) as u32),
        (tag::AICLK, aiclk_mhz),
        (tag::AXICLK, AXICLK_MHZ),
        (tag::ARCCLK, ARCCLK_MHZ),
        (tag::ENABLED_TENSIX_COL, cfg.harvest.enabled_tensix_col()),
        (tag::FLASH_BUNDLE_VERSION, FLASH_BUNDLE_VERSION),
        (tag::ENABLED_ETH, ENABLED_ETH),
        (tag::ENABLED_GDDR, cfg.dram_banks().enabled_gddr()),
        (tag::NOC_TRANSLATION, u32::from(cfg.translation)),
        (tag::GDDR_STATUS, GDDR_TRAINED),
        (tag::AICLK_LIMIT_MAX, mhz),
    ]
}

/// The data offset of table entry `i` of `n`: the entries' data is laid out backwards.
const fn offset(i: usize, n: usize) -> u16 {
    (n - 1 - i) as u16
}

/// Whether `addr` is one of the words the model answers (scratch, `ARC_MISC_CNTL`, CSM).
pub fn modelled(addr: u64) -> bool {
    let scratch = arc::RESET_SCRATCH_BASE..arc::RESET_SCRATCH_BASE + 4 * SCRATCH_WORDS;
    let csm = arc::ARC_CSM_BASE as u64..(arc::ARC_CSM_BASE + arc::ARC_CSM_BYTES) as u64;
    scratch.contains(&addr) || csm.contains(&addr) || addr == msg::ARC_MISC_CNTL
}

/// ARC as the host changes it: the message queues and the clock telemetry reports.
#[derive(Clone, Debug)]
pub struct ArcState {
    /// The words from [`QUEUE_CONTROL`] on: the control block, then the queues.
    queues: Vec<u32>,
    /// The cycle from which telemetry reports the busy clock; `None`: the idle clock.
    busy_from: Option<u64>,
    /// Requests answered so far.
    answered: u64,
}

impl Default for ArcState {
    fn default() -> Self {
        Self::new()
    }
}

impl ArcState {
    /// Booted, the queues empty, AICLK idle.
    pub fn new() -> Self {
        let mut queues = vec![0; QUEUE_AREA_WORDS];
        queues[0] = QUEUE_BASE;
        queues[1] = QUEUE_ENTRIES | QUEUES << 8;
        Self {
            queues,
            busy_from: None,
            answered: 0,
        }
    }

    /// Requests answered so far.
    pub fn answered(&self) -> u64 {
        self.answered
    }

    /// The AICLK telemetry reports at cycle `now`, in MHz.
    pub fn aiclk_mhz(&self, cfg: &SimConfig, now: u64) -> u32 {
        match self.busy_from {
            Some(t) if now >= t => cfg.timing.aiclk_mhz,
            _ => AICLK_IDLE_MHZ,
        }
    }

    /// Index into `queues` of the word at CSM `addr`, if it lies in the queues' area.
    fn queue_word(addr: u64) -> Option<usize> {
        let i = addr.checked_sub(QUEUE_CONTROL as u64)? / 4;
        (i < QUEUE_AREA_WORDS as u64).then_some(i as usize)
    }

    /// The 32-bit word at ARC NoC address `addr` (4-byte aligned) at cycle `now`; `None` for an
    /// address outside the modelled words ([`modelled`]).
    pub fn read(&self, cfg: &SimConfig, now: u64, addr: u64) -> Option<u32> {
        if !modelled(addr) {
            return None;
        }
        let scratch = arc::RESET_SCRATCH_BASE..arc::RESET_SCRATCH_BASE + 4 * SCRATCH_WORDS;
        if scratch.contains(&addr) {
            return Some(match addr {
                arc::SCRATCH_RAM_2 => arc::ARC_BOOT_READY,
                msg::SCRATCH_RAM_11 => QUEUE_CONTROL,
                arc::SCRATCH_RAM_12 => DATA_ADDR,
                arc::SCRATCH_RAM_13 => TABLE_ADDR,
                _ => 0,
            });
        }
        if addr == msg::ARC_MISC_CNTL {
            // The firmware clears the IRQ bit once it took the interrupt; here at once.
            return Some(0);
        }
        if let Some(i) = Self::queue_word(addr) {
            return Some(self.queues[i]);
        }
        let entries = telemetry(cfg, now, self.aiclk_mhz(cfg, now));
        let n = entries.len();
        let word = |base: u32| addr.checked_sub(base as u64).map(|d| (d / 4) as usize);
        if let Some(i) = word(DATA_ADDR).filter(|&i| i < n) {
            let entry = (0..n).find(|&e| offset(e, n) as usize == i)?;
            return Some(entries[entry].1);
        }
        Some(match word(TABLE_ADDR) {
            Some(0) => TABLE_VERSION,
            Some(1) => n as u32,
            Some(i) if i < 2 + n => arc::telemetry_entry(entries[i - 2].0, offset(i - 2, n)),
            _ => 0,
        })
    }

    /// A host write of `value` to ARC NoC address `addr` at cycle `now`: a queue word the host
    /// owns, or `ARC_MISC_CNTL` (the IRQ bit serves every queue). Anything else is refused.
    pub fn write(
        &mut self,
        cfg: &SimConfig,
        now: u64,
        addr: u64,
        value: u32,
    ) -> Result<(), SimError> {
        if addr == msg::ARC_MISC_CNTL {
            if value & msg::ARC_MISC_CNTL_IRQ != 0 {
                for q in 0..QUEUES {
                    self.drain(now + cfg.aiclk_ramp_cycles, q);
                }
            }
            return Ok(());
        }
        let host_word = Self::queue_word(addr).and_then(|i| {
            let within = (i as u32 * 4 + QUEUE_CONTROL).checked_sub(QUEUE_BASE)?;
            let at = within % QUEUE_BYTES;
            let host = at == 4 * msg::REQUEST_WPTR
                || at == 4 * msg::RESPONSE_RPTR
                || (msg::HEADER_BYTES..msg::HEADER_BYTES + QUEUE_ENTRIES * msg::ENTRY_BYTES)
                    .contains(&at);
            host.then_some(i)
        });
        match host_word {
            Some(i) => {
                self.queues[i] = value;
                Ok(())
            }
            None => Err(SimError::BadBar(format!(
                "a write to ARC at {addr:#x}: the simulator's ARC takes a host's writes to a \
                 queue's request entries, its request write pointer and its response read \
                 pointer (queues at {QUEUE_BASE:#x}, {QUEUE_BYTES} bytes each), and the IRQ bit \
                 of ARC_MISC_CNTL ({:#x}); everything else of ARC is read-only here",
                msg::ARC_MISC_CNTL
            ))),
        }
    }

    /// Answers the requests of queue `q`, as ARC firmware does on the interrupt, while its
    /// response ring has room (the firmware's `start_next_message`, `msgqueue.c`: a host that
    /// reads no response stalls the queue) and no pointer is past the ring (stricter than the
    /// firmware, which checks the request pointers only);
    /// a busy clock asked for shows from cycle `busy_at`.
    fn drain(&mut self, busy_at: u64, q: u32) {
        let base = ((QUEUE_BASE - QUEUE_CONTROL + q * QUEUE_BYTES) / 4) as usize;
        let n = QUEUE_ENTRIES;
        let word = |k: u32| base + k as usize;
        let entry = |first: u32, slot: u32| base + ((first + slot * msg::ENTRY_BYTES) / 4) as usize;
        let (wptr, mut rptr) = (
            self.queues[word(msg::REQUEST_WPTR)],
            self.queues[word(msg::REQUEST_RPTR)],
        );
        let mut resp_wptr = self.queues[word(msg::RESPONSE_WPTR)];
        let resp_rptr = self.queues[word(msg::RESPONSE_RPTR)];
        if [wptr, rptr, resp_wptr, resp_rptr]
            .iter()
            .any(|&p| p >= 2 * n)
        {
            return;
        }
        let pending = (wptr + 2 * n - rptr) % (2 * n);
        // Saturating: a host's read pointer that puts more than `n` responses unread answers
        // nothing (the firmware stops at exactly `n`).
        let room = n.saturating_sub((resp_wptr + 2 * n - resp_rptr) % (2 * n));
        for _ in 0..pending.min(room) {
            let request = entry(msg::HEADER_BYTES, rptr % n);
            let code = self.queues[request] & 0xFF;
            // NOP included: the firmware registers no handler for it (`smc_msg.h`).
            let status = match code {
                msg::code::AICLK_GO_BUSY => {
                    self.busy_from = Some(busy_at);
                    0
                }
                msg::code::AICLK_GO_LONG_IDLE => {
                    self.busy_from = None;
                    0
                }
                _ => msg::STATUS_UNKNOWN_CODE,
            };
            let response = entry(msg::HEADER_BYTES + n * msg::ENTRY_BYTES, resp_wptr % n);
            self.queues[response..response + 8].fill(0);
            self.queues[response] = status;
            rptr = (rptr + 1) % (2 * n);
            resp_wptr = (resp_wptr + 1) % (2 * n);
            self.answered += 1;
        }
        self.queues[word(msg::REQUEST_RPTR)] = rptr;
        self.queues[word(msg::RESPONSE_WPTR)] = resp_wptr;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_walk_finds_every_value() {
        let cfg = SimConfig::default();
        let a = ArcState::new();
        let r = |a_: u32| a.read(&cfg, 2700, a_ as u64).unwrap();
        let (table, data) = (
            a.read(&cfg, 0, arc::SCRATCH_RAM_13).unwrap(),
            a.read(&cfg, 0, arc::SCRATCH_RAM_12).unwrap(),
        );
        assert_eq!(r(table) >> 16 & 0xFF, 1);
        let n = r(table + 4);
        let mut found = std::collections::BTreeMap::new();
        for i in 0..n {
            let e = r(table + 8 + 4 * i);
            found.insert(e & 0xFFFF, r(data + 4 * (e >> 16)));
        }
        assert_eq!(found[&(tag::AICLK as u32)], 800);
        assert_eq!(found[&(tag::AICLK_LIMIT_MAX as u32)], 1350);
        assert_eq!(found[&(tag::GDDR_STATUS as u32)], 0x5555);
        assert_eq!(found[&(tag::TIMER_HEARTBEAT as u32)], 2);
        assert_eq!(found[&(tag::ENABLED_TENSIX_COL as u32)], 0x0FFF);
        assert_eq!(found[&(tag::NOC_TRANSLATION as u32)], 1);
        assert_eq!(found[&(tag::ENABLED_GDDR as u32)], 0xFF);
        assert_eq!(a.read(&cfg, 0, 0x8000_0000), None);
    }

    /// As the firmware's queue: a host that reads no response has at most four answered (the
    /// response ring's entries); the rest wait until it reads one.
    #[test]
    fn a_full_response_ring_stops_the_queue() {
        let cfg = SimConfig::default();
        let mut a = ArcState::new();
        let (q, n) = (3, QUEUE_ENTRIES);
        let base = (QUEUE_BASE + q * QUEUE_BYTES) as u64;
        let push = |a: &mut ArcState| {
            let wptr = a.read(&cfg, 0, base).unwrap();
            let slot = base + (msg::HEADER_BYTES + (wptr % n) * msg::ENTRY_BYTES) as u64;
            a.write(&cfg, 0, slot, msg::code::AICLK_GO_BUSY).unwrap();
            a.write(&cfg, 0, base, (wptr + 1) % (2 * n)).unwrap();
            a.write(&cfg, 0, msg::ARC_MISC_CNTL, msg::ARC_MISC_CNTL_IRQ)
                .unwrap();
        };
        for _ in 0..n {
            push(&mut a);
        }
        assert_eq!(a.answered(), 4);
        push(&mut a);
        assert_eq!(a.answered(), 4, "no room for a fifth response");
        // The host reads one response: the waiting request is answered at the next interrupt.
        a.write(&cfg, 0, base + 4, 1).unwrap();
        a.write(&cfg, 0, msg::ARC_MISC_CNTL, msg::ARC_MISC_CNTL_IRQ)
            .unwrap();
        assert_eq!(a.answered(), 5);
    }

    /// Pushes `code` into queue `q` as a host does and rings the IRQ; the response's word 0.
    fn send(a: &mut ArcState, cfg: &SimConfig, now: u64, q: u32, code: u32) -> u32 {
        let base = (QUEUE_BASE + q * QUEUE_BYTES) as u64;
        let n = QUEUE_ENTRIES;
        let wptr = a.read(cfg, now, base).unwrap();
        let slot = base + (msg::HEADER_BYTES + (wptr % n) * msg::ENTRY_BYTES) as u64;
        a.write(cfg, now, slot, code).unwrap();
        a.write(cfg, now, base, (wptr + 1) % (2 * n)).unwrap();
        a.write(cfg, now, msg::ARC_MISC_CNTL, msg::ARC_MISC_CNTL_IRQ)
            .unwrap();
        let rptr = a.read(cfg, now, base + 4).unwrap();
        assert_ne!(
            rptr,
            a.read(cfg, now, base + 20).unwrap(),
            "answered at once"
        );
        let resp = base + (msg::HEADER_BYTES + (n + rptr % n) * msg::ENTRY_BYTES) as u64;
        let word = a.read(cfg, now, resp).unwrap();
        a.write(cfg, now, base + 4, (rptr + 1) % (2 * n)).unwrap();
        word
    }

    #[test]
    fn the_queue_answers_messages_and_the_clock_follows_go_busy() {
        let cfg = SimConfig {
            aiclk_ramp_cycles: 13_500,
            ..SimConfig::default()
        };
        let mut a = ArcState::new();
        assert_eq!(a.read(&cfg, 0, msg::SCRATCH_RAM_11), Some(QUEUE_CONTROL));
        assert_eq!(a.read(&cfg, 0, QUEUE_CONTROL as u64), Some(QUEUE_BASE));
        assert_eq!(a.read(&cfg, 0, QUEUE_CONTROL as u64 + 4), Some(4 | 4 << 8));
        assert_eq!(a.aiclk_mhz(&cfg, 0), 800);
        let q = msg::APPLICATION_QUEUE;
        assert_eq!(
            send(&mut a, &cfg, 100, q, msg::code::AICLK_GO_BUSY) & 0xFF,
            0
        );
        assert_eq!(a.aiclk_mhz(&cfg, 100 + 13_500 - 1), 800);
        assert_eq!(a.aiclk_mhz(&cfg, 100 + 13_500), 1350);
        assert_eq!(send(&mut a, &cfg, 0, q, 0x99) & 0xFF, 0xFF, "unknown code");
        // Around the ring more than twice: the pointers wrap at 2n.
        for _ in 0..20 {
            assert_eq!(send(&mut a, &cfg, 0, q, msg::code::AICLK_GO_BUSY) & 0xFF, 0);
        }
        // A NOP, which the firmware does not support, as a card answers it.
        assert_eq!(send(&mut a, &cfg, 0, q, msg::code::NOP) & 0xFF, 0xFF);
        assert_eq!(send(&mut a, &cfg, 0, 0, msg::code::AICLK_GO_LONG_IDLE), 0);
        assert_eq!(a.aiclk_mhz(&cfg, u64::MAX), 800);
        assert_eq!(a.answered(), 24);
        // ARC's own words refuse the host.
        for addr in [
            arc::SCRATCH_RAM_2,
            QUEUE_CONTROL as u64,
            (QUEUE_BASE + 4 * msg::REQUEST_RPTR) as u64,
            (QUEUE_BASE + msg::HEADER_BYTES + QUEUE_ENTRIES * msg::ENTRY_BYTES) as u64,
            TABLE_ADDR as u64,
        ] {
            assert!(
                matches!(a.write(&cfg, 0, addr, 1), Err(SimError::BadBar(m)) if m.contains("read-only")),
                "{addr:#x}"
            );
        }
    }

    #[test]
    fn enabled_gddr_leaves_out_the_fused_bank() {
        for bank in 0..8u8 {
            let cfg = SimConfig {
                fused_dram: Some(bank),
                ..SimConfig::default()
            };
            let value = telemetry(&cfg, 0, 1350)
                .into_iter()
                .find(|&(t, _)| t == tag::ENABLED_GDDR)
                .map(|(_, v)| v);
            assert_eq!(value, Some(0xFF & !(1 << bank)));
        }
    }
}
