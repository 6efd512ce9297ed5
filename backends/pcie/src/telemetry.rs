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
        let csm = arc::ARC_CSM_BASE as u64..(arc::ARC_CSM_BASE + arc::ARC_CSM_BYTES) as u64;
        // Every word read lies wholly in ARC CSM: the pointers, counts and offsets are the
        // card's, and a word past the table would be taken for a value (a harvest mask).
        // (`what` is named only for a refusal: no text is made for the words that are read.)
        let inside = |what: &dyn Fn() -> String, at: u64| -> Result<u64, PcieError> {
            if csm.contains(&at) && at + 4 <= csm.end {
                return Ok(at);
            }
            Err(PcieError::Telemetry(format!(
                "{} {at:#x} is outside ARC CSM ({:#x}..{:#x})",
                what(),
                csm.start,
                csm.end
            )))
        };
        let word = |what: &dyn Fn() -> String, at: u64| arc.arc_read32(inside(what, at)?);
        inside(&|| "the data pointer".into(), data as u64)?;
        let version = word(&|| "the table pointer".into(), table as u64)?;
        let major = (version >> 16) & 0xFF;
        if major > arc::TELEMETRY_MAJOR_MAX {
            return Err(PcieError::Telemetry(format!(
                "table version {version:#x} has major {major}; at most {} is understood",
                arc::TELEMETRY_MAJOR_MAX
            )));
        }
        let count = word(&|| "the table's entry count, at".into(), table as u64 + 4)?;
        if count > MAX_ENTRIES {
            return Err(PcieError::Telemetry(format!(
                "table claims {count} entries (at most {MAX_ENTRIES} are believed)"
            )));
        }
        let mut values = BTreeMap::new();
        for i in 0..count as u64 {
            let entry = word(
                &|| format!("the table's entry {i}, at"),
                table as u64 + 8 + 4 * i,
            )?;
            let (tag, offset) = (entry as u16, (entry >> 16) as u64);
            let value = word(
                &|| format!("the value of tag {tag}, at"),
                data as u64 + 4 * offset,
            )?;
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

    /// ARC's words by address; every other address reads 0.
    struct Arc(BTreeMap<u64, u32>);

    impl ArcRead for Arc {
        fn arc_read32(&self, addr: u64) -> Result<u32, PcieError> {
            Ok(self.0.get(&addr).copied().unwrap_or(0))
        }
    }

    /// A card whose table is at `table` and data at `data`, with one entry: tag 34 at value
    /// offset `offset`, worth 0x1234.
    fn card(table: u32, data: u32, offset: u32) -> Arc {
        let mut words = BTreeMap::new();
        words.insert(arc::SCRATCH_RAM_2, arc::ARC_BOOT_READY);
        words.insert(arc::SCRATCH_RAM_13, table);
        words.insert(arc::SCRATCH_RAM_12, data);
        words.insert(table as u64 + 4, 1);
        words.insert(
            table as u64 + 8,
            tag::ENABLED_TENSIX_COL as u32 | offset << 16,
        );
        words.insert(data as u64 + 4 * offset as u64, 0x1234);
        Arc(words)
    }

    #[test]
    fn every_word_of_the_table_is_read_inside_arc_csm() {
        let (base, end) = (arc::ARC_CSM_BASE, arc::ARC_CSM_BASE + arc::ARC_CSM_BYTES);
        let good = Telemetry::read(&card(base, base + 0x100, 2)).unwrap();
        assert_eq!(good.get(tag::ENABLED_TENSIX_COL), Some(0x1234));
        // The pointers inside CSM, the count, the entry or the value past it: each refused,
        // naming the word (a table at its last word once read its count, its entry and a
        // value from past CSM and took that for the harvest mask).
        for (table, data, offset, said) in [
            (end - 4, base, 0, "the table's entry count, at"),
            (end - 8, base, 0, "the table's entry 0, at"),
            (base, end - 4, 0xFFFF, "the value of tag 34, at"),
            (end, base, 0, "the table pointer 0x"),
            (base, end, 0, "the data pointer 0x"),
        ] {
            let e = Telemetry::read(&card(table, data, offset))
                .unwrap_err()
                .to_string();
            assert!(e.contains(said) && e.contains("outside ARC CSM"), "{e}");
        }
    }
}
