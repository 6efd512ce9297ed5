//! ARC telemetry as the host reads it: the boot status, the table, the values by tag.
//!
//! The table pointer is `SCRATCH_RAM_13` and the data pointer `SCRATCH_RAM_12` in ARC's reset
//! scratch registers; both must lie in ARC CSM. The table is `version, count, entries`, each
//! entry a tag (low half) and a word offset into the data (high half) (tt-kmd
//! `blackhole_populate_telemetry_cache`, tt-umd `blackhole_arc_telemetry_reader.cpp`;
//! docs/blackhole.md, "ARC telemetry").

use std::collections::BTreeMap;

use blackhole_pac::arc::{self, tag};
use blackhole_pac::harvest::{DramBanks, HarvestMask};

use crate::error::PcieError;

/// Most entries a table may have (a guard against reading garbage as a count).
pub const MAX_ENTRIES: u32 = 256;

/// Reads one 32-bit word of ARC's NoC address space.
pub trait ArcRead {
    /// The word at ARC NoC address `addr`.
    fn arc_read32(&self, addr: u64) -> Result<u32, PcieError>;
}

/// The telemetry values of one card, by tag.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Telemetry {
    /// The table's version word.
    pub version: u32,
    /// Value of every tag the table lists.
    pub values: BTreeMap<u16, u32>,
}

impl Telemetry {
    /// Reads the table through `arc`: checks ARC's boot status, both pointers and the
    /// version, then every entry.
    pub fn read(arc: &impl ArcRead) -> Result<Self, PcieError> {
        let status = arc.arc_read32(arc::SCRATCH_RAM_2)?;
        if status == arc::HUNG_READ {
            return Err(PcieError::Hung {
                what: "ARC boot status (SCRATCH_RAM_2)".into(),
            });
        }
        if status & 7 != arc::ARC_BOOT_READY {
            return Err(PcieError::Telemetry(format!(
                "ARC is not ready: boot status {status:#x} (ready is {} in bits 0..2)",
                arc::ARC_BOOT_READY
            )));
        }
        let table = arc.arc_read32(arc::SCRATCH_RAM_13)?;
        let data = arc.arc_read32(arc::SCRATCH_RAM_12)?;
        for (name, p) in [("table", table), ("data", data)] {
            if !(arc::ARC_CSM_BASE..arc::ARC_CSM_BASE + arc::ARC_CSM_BYTES).contains(&p) {
                return Err(PcieError::Telemetry(format!(
                    "the {name} pointer {p:#x} is outside ARC CSM ({:#x}..{:#x})",
                    arc::ARC_CSM_BASE,
                    arc::ARC_CSM_BASE + arc::ARC_CSM_BYTES
                )));
            }
        }
        let version = arc.arc_read32(table as u64)?;
        let major = (version >> 16) & 0xFF;
        if major > arc::TELEMETRY_MAJOR_MAX {
            return Err(PcieError::Telemetry(format!(
                "table version {version:#x} has major {major}; at most {} is understood",
                arc::TELEMETRY_MAJOR_MAX
            )));
        }
        let count = arc.arc_read32(table as u64 + 4)?;
        if count > MAX_ENTRIES {
            return Err(PcieError::Telemetry(format!(
                "table claims {count} entries (at most {MAX_ENTRIES} are believed)"
            )));
        }
        let mut values = BTreeMap::new();
        for i in 0..count as u64 {
            let entry = arc.arc_read32(table as u64 + 8 + 4 * i)?;
            let (tag, offset) = (entry as u16, (entry >> 16) as u64);
            let value = arc.arc_read32(data as u64 + 4 * offset)?;
            values.insert(tag, value);
        }
        Ok(Self { version, values })
    }

    /// The value of `tag`, if the table lists it.
    pub fn get(&self, tag: u16) -> Option<u32> {
        self.values.get(&tag).copied()
    }

    /// The Tensix harvest mask the table reports: the columns `ENABLED_TENSIX_COL` (tag 34)
    /// does not enable. A table without the tag (firmware from before columns were harvested,
    /// and ttsim, which harvests nothing) enables every column, as tt-umd reads it
    /// (`BlackholeTTDevice::get_chip_info`).
    pub fn harvest(&self) -> HarvestMask {
        self.get(tag::ENABLED_TENSIX_COL)
            .map_or(HarvestMask::NONE, HarvestMask::from_enabled_tensix_col)
    }

    /// The DRAM banks the table says work: every bank when it has no `ENABLED_GDDR` (tag 36),
    /// refused when more than one is off, both as tt-umd reads it
    /// (`BlackholeTTDevice::get_chip_info`).
    pub fn dram_banks(&self) -> Result<DramBanks, PcieError> {
        DramBanks::from_enabled_gddr(self.get(tag::ENABLED_GDDR)).map_err(PcieError::DramHarvest)
    }

    /// The value of `tag`, or a telemetry error naming it.
    pub fn require(&self, tag: u16, name: &str) -> Result<u32, PcieError> {
        self.get(tag)
            .ok_or_else(|| PcieError::Telemetry(format!("the table has no tag {tag} ({name})")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harvest_is_tag_34_s_complement_and_none_without_the_tag() {
        let mut t = Telemetry::default();
        // ttsim's table has no tag 34; komorebi once refused such a card ("the table has no
        // tag 34"), where tt-umd takes every column as enabled.
        assert_eq!(t.harvest(), HarvestMask::NONE);
        t.values.insert(tag::ENABLED_TENSIX_COL, 0x0FFF);
        assert_eq!(t.harvest(), HarvestMask::P100_P150);
    }
}
