//! The two ways a Wormhole B0 is opened: a card's whole sequence over BAR0
//! ([`Card::open_wormhole_card`], what [`Card::open`] does for device 0x401E), and ttsim's
//! `wh` build, whose ARC answers messages but models neither its start, its telemetry nor DRAM
//! training ([`Card::open_wormhole`]). Both end in the same window plan: Wormhole's ten 2 MiB
//! windows (the spare and nine tiles; the other tiles and every DRAM bank go through the
//! spare), raw NoC0 coordinates.

use std::time::Duration;

use wormhole_pac::arc::msg;

use super::{Card, CardOptions};
use crate::arc::wormhole as arc;
use crate::bar::Bar;
use crate::chip::{CardChip, ChipKind};
use crate::error::PcieError;

/// Refuses a device that is not a Wormhole.
fn check_wormhole<B: Bar>(bar: &B) -> Result<(), PcieError> {
    let device_id = bar.identity().device_id;
    if ChipKind::from_device_id(device_id) != Some(ChipKind::Wormhole) {
        return Err(PcieError::UnsupportedChip {
            device_id,
            why: "not a Wormhole (0x401E): open a Blackhole with Card::open".into(),
        });
    }
    Ok(())
}

/// The harvested Tensix rows ARC reports (`ARC_GET_HARVESTING`, in ARC's row order), in
/// tt-umd's order.
fn harvested_rows<B: Bar>(
    bar: &mut B,
    timeout: Duration,
) -> Result<wormhole_pac::harvest::HarvestMask, PcieError> {
    let arc_rows = crate::arc::wormhole_message(bar, msg::ARC_GET_HARVESTING, 0, timeout)?;
    wormhole_pac::harvest::HarvestMask::from_arc(arc_rows).map_err(|e| PcieError::ArcMessage {
        code: msg::ARC_GET_HARVESTING as u32,
        why: format!("answered {e}"),
    })
}

impl<B: Bar> Card<B> {
    /// Sets up the Wormhole B0 card behind `bar` as tt-umd does (`crate::arc::wormhole`): the
    /// bus alive (the ARC NIU's `NOC_NODE_ID`), ARC started (scratch 5 and the post code, within
    /// [`CardOptions::open`]'s ARC wait), whether translation is on, the harvested rows
    /// (`ARC_GET_HARVESTING`), telemetry (the tagged table, or the legacy flat one), every DRAM
    /// channel trained (within the training wait), AICLK raised with `ARC_GO_BUSY` and read back
    /// with `GET_AICLK` (a clock that does not settle is recorded in [`Card::identity`], not an
    /// error), then the window plan.
    ///
    /// Windows and kernels use raw NoC0 coordinates whether translation is on or not: the
    /// translation tables map entries 0..=15 to themselves (tt-isa-documentation
    /// `WormholeB0/NoC/Coordinates.md`), which every Wormhole tile's coordinates are; the open
    /// notes which it found.
    pub fn open_wormhole_card(bar: B, options: CardOptions) -> Result<Self, PcieError> {
        check_wormhole(&bar)?;
        let mut bar = bar;
        let timeouts = options.open;
        arc::check_alive(&bar)?;
        arc::wait_arc_ready(&mut bar, timeouts.arc_ready)?;
        let translated = arc::translation_enabled(&bar)?;
        let harvest = harvested_rows(&mut bar, timeouts.arc_message)?;
        let (kind, telemetry) = arc::read_telemetry(&mut bar, timeouts.arc_message)?;
        let dram_note = arc::wait_dram_trained(&mut bar, &timeouts)?;
        let target = arc::max_aiclk(kind, &telemetry);
        let clock = arc::raise_aiclk(&mut bar, target, &timeouts)?;
        let aiclk = match clock.aiclk_mhz {
            0 => target,
            mhz => mhz,
        };
        let mut card = Self::unplanned(bar, options, CardChip::Wormhole { harvest }, aiclk)?;
        card.telemetry = telemetry;
        clock.record(&mut card.identity);
        if kind == arc::TableKind::Legacy {
            card.notes.push(
                "Wormhole telemetry: the legacy flat table (firmware before bundle 18.4)".into(),
            );
        }
        card.notes.extend(dram_note);
        card.notes.push(format!(
            "Wormhole NoC translation is {} (the ARC NIU's NIU_CFG_0 bit 14); windows and kernels \
             use raw NoC0 coordinates, which translation maps to themselves",
            if translated { "on" } else { "off" }
        ));
        card.plan_windows()?;
        Ok(card)
    }

    /// Sets up a Wormhole B0 behind `bar` (ttsim's `wh` build): its harvested rows and AICLK
    /// from ARC's messages (`ARC_GET_HARVESTING`, `GET_AICLK`, through BAR0's scratch
    /// registers: [`crate::arc::wormhole_message`], each bounded by
    /// [`CardOptions::open`]'s ARC message wait), then the window plan over its enabled Tensix
    /// tiles (its ten 2 MiB windows: the spare and nine tiles; the other tiles and every DRAM
    /// bank go through the spare window, and no multicast window is left, nor needed: without
    /// translation the loader writes tile by tile) with raw coordinates (ttsim's Wormhole passes
    /// them through). Its ARC telemetry table is not read. Refuses any other
    /// chip.
    pub fn open_wormhole(bar: B, options: CardOptions) -> Result<Self, PcieError> {
        check_wormhole(&bar)?;
        let mut bar = bar;
        let timeout = options.open.arc_message;
        let harvest = harvested_rows(&mut bar, timeout)?;
        let aiclk = match crate::arc::wormhole_message(&mut bar, msg::GET_AICLK, 0, timeout)? {
            0 => wormhole_pac::tensix::AICLK_BUSY_MHZ,
            mhz => mhz,
        };
        let chip = CardChip::Wormhole { harvest };
        let mut card = Self::unplanned(bar, options, chip, aiclk)?;
        card.notes.push(
            "Wormhole: no ARC telemetry table read (its harvested rows and AICLK come from ARC \
             messages 0x57 and 0x34)"
                .into(),
        );
        card.plan_windows()?;
        Ok(card)
    }
}
