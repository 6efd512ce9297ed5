//! A Wormhole B0's ARC as a host reaches it through BAR0 (`wormhole_pac::arc`): the reset
//! unit's scratch registers that carry messages, `ARC_MISC_CNTL`'s IRQ, the telemetry pointers
//! and the tagged table in CSM, and the ARC NIU's `NOC_NODE_ID` and `NIU_CFG_0`. The simulator
//! runs no ARC firmware: [`WormholeArc`] answers as tt-umd expects a started ARC to (tt-umd
//! `WormholeTTDevice`, `WormholeArcMessenger`, `WormholeArcTelemetryReader`).
//!
//! | BAR0 | Reads | Writes |
//! |---|---|---|
//! | scratch 0 (post code) | `POST_CODE_INIT_DONE` | refused |
//! | scratch 3, 4 | the last message's argument, then its answer | the argument |
//! | scratch 5 | `INIT_DONE_1` until the first message, then `exit << 16 \| code` | the message code (`0xAA00 \| code`) |
//! | other scratch (1, 2, 6, 7) | 0 | refused |
//! | `ARC_MISC_CNTL` | its word (the IRQ bit clear once served) | bit 16 serves the message at once |
//! | `NOC_NODEID_X_0` / `Y_0` | the CSM addresses of the table and its data | refused |
//! | CSM: the table | version `1 << 16`, the entry count, `tag \| offset << 16` per entry | refused |
//! | CSM: the data | the values at their offsets | refused |
//! | CSM: the PCIe DMA request word | 0 (no DMA) | refused |
//! | the ARC NIU's `NOC_NODE_ID`, `NIU_CFG_0` | ARC at NoC0 (0, 10); translation off | refused |
//!
//! Messages: `ARC_GET_HARVESTING` (the harvested rows in ARC's order), `GET_AICLK`,
//! `ARC_GO_BUSY`, `ARC_GO_LONG_IDLE` and `NOP` succeed; any other code gets exit code 1.
//! Telemetry reports AICLK (idle 500 MHz until `ARC_GO_BUSY`, then the timing model's clock,
//! also its `AICLK_LIMIT_MAX`), every DRAM channel trained (`GDDR_STATUS`) and bundle 18.8.
//! As on the Blackhole model only the reported clock changes.
//!
//! Leaf module: imports only the leaf `config`.

use wormhole_pac::arc::{self as wh, boot, msg, tag};
use wormhole_pac::harvest::HARVESTING_NOC_LOCATIONS;

use crate::config::SimConfig;
use crate::error::SimError;

/// CSM address of the telemetry table (what `NOC_NODEID_X_0` holds).
pub const TABLE_ADDR: u32 = wh::CSM_BASE + 0x7_0000;
/// CSM address of the telemetry data (what `NOC_NODEID_Y_0` holds).
pub const DATA_ADDR: u32 = wh::CSM_BASE + 0x7_1000;
/// The bundle version telemetry reports (18.8.0: `AICLK_LIMIT_MAX` gives the highest clock).
pub const BUNDLE_VERSION: u32 = (18 << 24) | (8 << 16);
/// `NOP`'s code (tt-umd `arc_message_type::NOP`).
const NOP: u8 = 0x11;
/// ARC's NoC0 coordinates (tt-umd `wormhole_implementation.hpp` `ARC_CORES_NOC0`).
const ARC_XY: (u32, u32) = (0, 10);

/// The tags of the table, in table order (not tag order, as on a card), and their data offsets.
const ENTRIES: [(u16, u32); 4] = [
    (tag::GDDR_STATUS, 3),
    (tag::AICLK, 0),
    (tag::AICLK_LIMIT_MAX, 4),
    (tag::FLASH_BUNDLE_VERSION, 1),
];

/// The reset unit's and CSM's words a host may change, and the clock telemetry reports.
#[derive(Clone, Debug, Default)]
pub struct WormholeArc {
    /// Scratch 3, 4 and 5 (argument and answers, the code and status).
    res0: u32,
    res1: u32,
    status: Option<u32>,
    misc_cntl: u32,
    busy: bool,
}

/// The harvested rows of `cfg` in ARC's order (bit `i`: NoC0 row
/// `HARVESTING_NOC_LOCATIONS[i]`), what `ARC_GET_HARVESTING` answers.
fn arc_rows(cfg: &SimConfig) -> u32 {
    let rows = cfg.wormhole.unwrap_or_default();
    HARVESTING_NOC_LOCATIONS
        .iter()
        .enumerate()
        .filter(|&(_, &y)| rows.is_harvested(y))
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// The CSM address BAR0 `offset` reaches, if it lies in CSM.
fn csm(offset: u64) -> Option<u32> {
    let o = u32::try_from(offset).ok()?.checked_sub(wh::CSM_BAR0)?;
    (o < wh::CSM_SIZE).then_some(wh::CSM_BASE + o)
}

/// Whether BAR0 `offset` is one of the words this model answers.
pub fn modelled(offset: u64) -> bool {
    let scratch = wh::scratch_bar0(0) as u64..wh::scratch_bar0(8) as u64;
    scratch.contains(&offset)
        || csm(offset).is_some()
        || [
            wh::MISC_CNTL_BAR0,
            wh::TELEMETRY_TABLE_PTR_BAR0,
            wh::TELEMETRY_DATA_PTR_BAR0,
            wh::ARC_NOC_NODE_ID_BAR0,
            wh::ARC_NIU_CFG_0_BAR0,
        ]
        .contains(&(offset as u32))
}

impl WormholeArc {
    /// Started, no message sent, AICLK idle.
    pub fn new() -> Self {
        Self::default()
    }

    fn aiclk(&self, cfg: &SimConfig) -> u32 {
        if self.busy {
            cfg.timing.aiclk_mhz
        } else {
            wormhole_pac::tensix::AICLK_IDLE_MHZ
        }
    }

    fn data(&self, cfg: &SimConfig, offset: u32) -> u32 {
        match offset {
            0 => self.aiclk(cfg),
            1 => BUNDLE_VERSION,
            // Two bits a channel, 0b01 trained, for the 6 channels.
            3 => 0x555,
            4 => cfg.timing.aiclk_mhz,
            _ => 0,
        }
    }

    /// The word at BAR0 `offset`; `None` when the model has none there.
    pub fn read(&self, cfg: &SimConfig, offset: u64) -> Option<u32> {
        if let Some(addr) = csm(offset) {
            let table = |i: u32| TABLE_ADDR + 4 * i;
            return Some(match addr {
                a if a == table(0) => 1 << 16,
                a if a == table(1) => ENTRIES.len() as u32,
                a if (table(2)..table(2 + ENTRIES.len() as u32)).contains(&a) => {
                    let (t, o) = ENTRIES[((a - table(2)) / 4) as usize];
                    t as u32 | o << 16
                }
                a if (DATA_ADDR..DATA_ADDR + 64).contains(&a) => {
                    self.data(cfg, (a - DATA_ADDR) / 4)
                }
                _ => 0,
            });
        }
        let offset = u32::try_from(offset).ok()?;
        Some(match offset {
            o if o == wh::scratch_bar0(0) => boot::POST_CODE_INIT_DONE,
            o if o == wh::scratch_bar0(wh::SCRATCH_RES0) => self.res0,
            o if o == wh::scratch_bar0(wh::SCRATCH_RES1) => self.res1,
            o if o == wh::scratch_bar0(wh::SCRATCH_STATUS) => {
                self.status.unwrap_or(boot::INIT_DONE_1)
            }
            o if (wh::scratch_bar0(0)..wh::scratch_bar0(8)).contains(&o) => 0,
            wh::MISC_CNTL_BAR0 => self.misc_cntl,
            wh::TELEMETRY_TABLE_PTR_BAR0 => TABLE_ADDR,
            wh::TELEMETRY_DATA_PTR_BAR0 => DATA_ADDR,
            wh::ARC_NOC_NODE_ID_BAR0 => ARC_XY.0 | ARC_XY.1 << 6,
            wh::ARC_NIU_CFG_0_BAR0 => 0,
            _ => return None,
        })
    }

    /// The host writes `value` to BAR0 `offset`: a message's argument or code, or the IRQ
    /// that serves it. Any other word is refused.
    pub fn write(&mut self, cfg: &SimConfig, offset: u64, value: u32) -> Result<(), SimError> {
        let o = offset as u32;
        if o == wh::scratch_bar0(wh::SCRATCH_RES0) {
            self.res0 = value;
        } else if o == wh::scratch_bar0(wh::SCRATCH_STATUS) {
            self.status = Some(value);
        } else if o == wh::MISC_CNTL_BAR0 {
            self.misc_cntl = value;
            if value & wh::MISC_CNTL_IRQ0 != 0 {
                self.serve(cfg);
                self.misc_cntl &= !wh::MISC_CNTL_IRQ0;
            }
        } else {
            return Err(SimError::BadBar(format!(
                "BAR0 {offset:#x}: the simulated Wormhole's ARC takes writes to scratch 3 and 5 \
                 and ARC_MISC_CNTL only"
            )));
        }
        Ok(())
    }

    /// Serves the message scratch 5 holds, if it holds one.
    fn serve(&mut self, cfg: &SimConfig) {
        let Some(code) = self
            .status
            .filter(|s| s & 0xFFFF_FF00 == wh::MSG_PREFIX)
            .map(|s| s as u8)
        else {
            return;
        };
        let (exit, answer) = match code {
            msg::ARC_GET_HARVESTING => (0, arc_rows(cfg)),
            msg::GET_AICLK => (0, self.aiclk(cfg)),
            msg::ARC_GO_BUSY => {
                self.busy = true;
                (0, 0)
            }
            msg::ARC_GO_LONG_IDLE => {
                self.busy = false;
                (0, 0)
            }
            NOP => (0, 0),
            _ => (1, 0),
        };
        self.res0 = answer;
        self.res1 = 0;
        self.status = Some(exit << 16 | code as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harvesting_answers_in_arc_s_row_order() {
        // tt-umd's order bit 0 is NoC0 row 1, ARC's bit 1; bit 9 is row 11, ARC's bit 0.
        let cfg = SimConfig {
            wormhole: Some(wormhole_pac::harvest::HarvestMask::new(0x201).unwrap()),
            ..SimConfig::default()
        };
        assert_eq!(arc_rows(&cfg), 0b11);
        assert_eq!(
            wormhole_pac::harvest::HarvestMask::from_arc(arc_rows(&cfg)),
            Ok(cfg.wormhole.unwrap())
        );
    }

    #[test]
    fn a_message_is_served_on_the_irq_and_the_bit_cleared() {
        let cfg = SimConfig::default();
        let mut arc = WormholeArc::new();
        let status = wh::scratch_bar0(wh::SCRATCH_STATUS) as u64;
        assert_eq!(arc.read(&cfg, status), Some(boot::INIT_DONE_1));
        arc.write(&cfg, status, wh::MSG_PREFIX | msg::ARC_GO_BUSY as u32)
            .unwrap();
        arc.write(&cfg, wh::MISC_CNTL_BAR0 as u64, wh::MISC_CNTL_IRQ0)
            .unwrap();
        assert_eq!(arc.read(&cfg, status), Some(msg::ARC_GO_BUSY as u32));
        assert_eq!(arc.read(&cfg, wh::MISC_CNTL_BAR0 as u64), Some(0));
        arc.write(&cfg, status, wh::MSG_PREFIX | 0x99).unwrap();
        arc.write(&cfg, wh::MISC_CNTL_BAR0 as u64, wh::MISC_CNTL_IRQ0)
            .unwrap();
        assert_eq!(arc.read(&cfg, status), Some(1 << 16 | 0x99));
        assert!(arc.write(&cfg, wh::scratch_bar0(0) as u64, 1).is_err());
    }
}
