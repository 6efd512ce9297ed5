//! The ARC management tile as a host reads it through a TLB window at (8, 0): boot status,
//! the telemetry pointers and the telemetry table and data in ARC CSM (pcie-host-facts.md
//! §2.8; register numbers from `blackhole_pac::arc`). Read-only data computed from the
//! configuration and the cycle; the simulator models no ARC firmware (no message queue, no
//! writes).
//!
//! | NoC address at (8, 0) | Reads |
//! |---|---|
//! | `SCRATCH_RAM_2` (`0x8003_0408`) | [`ARC_BOOT_READY`](blackhole_pac::arc::ARC_BOOT_READY) (5): booted |
//! | `SCRATCH_RAM_12` (`0x8003_0430`) | [`DATA_ADDR`] |
//! | `SCRATCH_RAM_13` (`0x8003_0434`) | [`TABLE_ADDR`] |
//! | other `RESET_SCRATCH(n)`, n < 64 | 0 |
//! | [`TABLE_ADDR`].. | [`TABLE_VERSION`], the entry count, then `tag \| offset << 16` per entry |
//! | [`DATA_ADDR`].. | the values, `data[offset]` at `DATA_ADDR + 4 offset` |
//! | the rest of ARC CSM | 0 |
//!
//! The entries (see [`telemetry`]) are not in tag order and an entry's data offset is not its
//! index, so a reader that skips the table's offsets reads wrong values, as it would on a card
//! whose firmware lays the data out differently.
//!
//! Leaf module: imports only the leaf `config`.

use blackhole_pac::arc::{self, tag};

use crate::config::SimConfig;

/// ARC CSM address of the telemetry table (what `SCRATCH_RAM_13` holds).
pub const TABLE_ADDR: u32 = arc::ARC_CSM_BASE + 0x7_0000;
/// ARC CSM address of the telemetry data (what `SCRATCH_RAM_12` holds).
pub const DATA_ADDR: u32 = arc::ARC_CSM_BASE + 0x7_1000;
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

/// Words of `RESET_SCRATCH` the model answers (the others are not ARC scratch).
const SCRATCH_WORDS: u64 = 64;

/// `(tag, value)` of every telemetry entry at cycle `now`, in table order. AICLK is the timing
/// model's; `TIMER_HEARTBEAT` counts microseconds of virtual time (`now / aiclk_mhz`; the
/// firmware's own rate is not modelled); `ENABLED_TENSIX_COL` is the harvest mask's
/// complement; `ENABLED_GDDR` has every bank's bit but the fused DRAM bank's
/// (`SimConfig::fused_dram`); `NOC_TRANSLATION` is 1 when `SimConfig::translation` is on.
pub fn telemetry(cfg: &SimConfig, now: u64) -> [(u16, u32); 9] {
    let mhz = cfg.timing.aiclk_mhz.max(1);
    [
        (tag::TIMER_HEARTBEAT, (now / mhz as u64) as u32),
        (tag::AICLK, mhz),
        (tag::AXICLK, AXICLK_MHZ),
        (tag::ARCCLK, ARCCLK_MHZ),
        (tag::ENABLED_TENSIX_COL, cfg.harvest.enabled_tensix_col()),
        (tag::FLASH_BUNDLE_VERSION, FLASH_BUNDLE_VERSION),
        (tag::ENABLED_ETH, ENABLED_ETH),
        (tag::ENABLED_GDDR, cfg.dram_banks().enabled_gddr()),
        (tag::NOC_TRANSLATION, u32::from(cfg.translation)),
    ]
}

/// The data offset of table entry `i` of `n`: the entries' data is laid out backwards.
const fn offset(i: usize, n: usize) -> u16 {
    (n - 1 - i) as u16
}

/// The 32-bit word at ARC NoC address `addr` (4-byte aligned) at cycle `now`; `None` for an
/// address outside the modelled scratch registers and CSM.
pub fn read(cfg: &SimConfig, now: u64, addr: u64) -> Option<u32> {
    let scratch = arc::RESET_SCRATCH_BASE..arc::RESET_SCRATCH_BASE + 4 * SCRATCH_WORDS;
    if scratch.contains(&addr) {
        return Some(match addr {
            arc::SCRATCH_RAM_2 => arc::ARC_BOOT_READY,
            arc::SCRATCH_RAM_12 => DATA_ADDR,
            arc::SCRATCH_RAM_13 => TABLE_ADDR,
            _ => 0,
        });
    }
    let csm = arc::ARC_CSM_BASE as u64..(arc::ARC_CSM_BASE + arc::ARC_CSM_BYTES) as u64;
    if !csm.contains(&addr) {
        return None;
    }
    let entries = telemetry(cfg, now);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_walk_finds_every_value() {
        let cfg = SimConfig::default();
        let r = |a: u32| read(&cfg, 2700, a as u64).unwrap();
        let (table, data) = (
            read(&cfg, 0, arc::SCRATCH_RAM_13).unwrap(),
            read(&cfg, 0, arc::SCRATCH_RAM_12).unwrap(),
        );
        assert_eq!(r(table) >> 16 & 0xFF, 1);
        let n = r(table + 4);
        let mut found = std::collections::BTreeMap::new();
        for i in 0..n {
            let e = r(table + 8 + 4 * i);
            found.insert(e & 0xFFFF, r(data + 4 * (e >> 16)));
        }
        assert_eq!(found[&(tag::AICLK as u32)], 1350);
        assert_eq!(found[&(tag::TIMER_HEARTBEAT as u32)], 2);
        assert_eq!(found[&(tag::ENABLED_TENSIX_COL as u32)], 0x0FFF);
        assert_eq!(found[&(tag::NOC_TRANSLATION as u32)], 1);
        assert_eq!(found[&(tag::ENABLED_GDDR as u32)], 0xFF);
        assert_eq!(read(&cfg, 0, 0x8000_0000), None);
    }

    #[test]
    fn enabled_gddr_leaves_out_the_fused_bank() {
        for bank in 0..8u8 {
            let cfg = SimConfig {
                fused_dram: Some(bank),
                ..SimConfig::default()
            };
            let value = telemetry(&cfg, 0)
                .into_iter()
                .find(|&(t, _)| t == tag::ENABLED_GDDR)
                .map(|(_, v)| v);
            assert_eq!(value, Some(0xFF & !(1 << bank)));
        }
    }
}
