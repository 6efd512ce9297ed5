//! A Wormhole B0 card's open sequence over BAR0, as tt-umd's `WormholeTTDevice` and
//! `TTDevice::init_tt_device` run it: the bus alive, ARC started, its telemetry, DRAM trained,
//! AICLK raised. Everything goes through BAR0 (ARC's reset unit, CSM and NIU registers,
//! [`wormhole_pac::arc`]); no window is needed, so it runs before the window plan.
//!
//! # Sources
//! * Alive: the ARC NIU's `NOC_NODE_ID` (tt-umd `WormholeHangDetector::read_hang_check_reg_via_bar`).
//! * ARC started: tt-umd `WormholeTTDevice::wait_arc_core_start` (scratch 5, the post code in
//!   scratch 0 and CSM's PCIe DMA request word; [`wormhole_pac::arc::boot`]); luwen's
//!   `check_arc_msg_safe` reads the same table.
//! * Telemetry: from bundle 18.4 the table the reset unit's `NOC_NODEID_X_0`/`Y_0` point at
//!   (tt-umd `WormholeArcTelemetryReader`, tt-kmd `wormhole_populate_telemetry_cache`, which
//!   takes it when both pointers lie in CSM); before it the flat table message 0x2C locates
//!   (tt-umd `SmBusArcTelemetryReader`, luwen `Wormhole::get_telemetry`).
//! * DRAM: tt-umd `Chip::wait_dram_cores_training` and `get_dram_training_status` (6 channels,
//!   none harvested on Wormhole; `GDDR_STATUS` 2 bits a channel, the legacy `DDR_STATUS` 4).
//! * AICLK: tt-umd `WormholeTTDevice::set_clock_state` (`ARC_GO_BUSY`) and
//!   `TTDevice::wait_for_aiclk_value` (`GET_AICLK` within 5 % of the highest clock telemetry
//!   gives, 200 ms; on timeout it logs and goes on).
//! * Translation: tt-umd `WormholeTTDevice::get_noc_translation_enabled` (the ARC NIU's
//!   `NIU_CFG_0` bit 14).

use std::collections::BTreeMap;
use std::time::Duration;

use wormhole_pac::arc::{self as wh, boot, msg, tag};
use wormhole_pac::grid::DRAM_BANKS;
use wormhole_pac::tensix::{AICLK_BUSY_MHZ, AICLK_IDLE_MHZ};

use wormhole_pac::harvest::HarvestMask;

use super::port::Bound;
use super::scratch::wormhole_message;
use super::wait::{Clock, ClockOutcome, DramChannel, OpenTimeouts, settle_dram};
use crate::bar::Bar;
use crate::chip::ChipKind;
use crate::error::PcieError;
use crate::telemetry::{MAX_ENTRIES, Telemetry};

/// What a Wormhole's open found, for the card to be built on.
#[derive(Clone, Debug)]
pub struct Found {
    /// The harvested Tensix rows, in tt-umd's order.
    pub harvest: HarvestMask,
    /// The AICLK to count device time at, MHz.
    pub aiclk_mhz: u32,
    /// The telemetry values (empty when not read).
    pub telemetry: Telemetry,
    /// What raising AICLK came to.
    pub clock: ClockOutcome,
    /// What the open found worth saying that did not fail it.
    pub notes: Vec<String>,
}

/// Refuses a device that is not a Wormhole.
pub fn check_wormhole<B: Bar>(bar: &B) -> Result<(), PcieError> {
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
pub fn harvested_rows<B: Bar>(bar: &mut B, timeout: Duration) -> Result<HarvestMask, PcieError> {
    let arc_rows = wormhole_message(bar, msg::ARC_GET_HARVESTING, 0, timeout)?;
    HarvestMask::from_arc(arc_rows).map_err(|e| PcieError::ArcMessage {
        code: msg::ARC_GET_HARVESTING as u32,
        why: format!("answered {e}"),
    })
}

/// A card's whole sequence (module docs), in tt-umd's order: alive, ARC started, translation,
/// harvested rows, telemetry, DRAM trained, AICLK raised; with `raise_clock` false (an open
/// that only looks, [`crate::card::CardOptions::raise_clock`]) AICLK is read as it is, with
/// `GET_AICLK` only: another process may be running the card at its own clock.
pub fn open_card<B: Bar>(
    bar: &mut B,
    timeouts: &OpenTimeouts,
    raise_clock: bool,
) -> Result<Found, PcieError> {
    check_wormhole(bar)?;
    check_alive(bar)?;
    wait_arc_ready(bar, timeouts.arc_ready)?;
    let translated = translation_enabled(bar)?;
    let harvest = harvested_rows(bar, timeouts.arc_message)?;
    let dram_note = wait_dram_trained(bar, timeouts)?;
    // After the wait, so that the card's telemetry shows the trained DRAM.
    let (kind, telemetry) = read_telemetry(bar, timeouts.arc_message)?;
    let target = max_aiclk(bar, kind, &telemetry, timeouts.arc_message)?;
    let clock = if raise_clock {
        raise_aiclk(bar, target, timeouts)?
    } else {
        // A firmware that does not answer leaves the clock unknown (0), not the open failed.
        let asked = wormhole_message(bar, msg::GET_AICLK, wh::NO_ARGUMENT, timeouts.arc_message);
        ClockOutcome {
            raised: false,
            aiclk_mhz: match asked {
                Ok(mhz) => mhz,
                Err(PcieError::ArcMessage { .. }) => 0,
                Err(e) => return Err(e),
            },
            note: None,
        }
    };
    let mut notes = Vec::new();
    if kind == TableKind::Legacy {
        notes
            .push("Wormhole telemetry: the legacy flat table (firmware before bundle 18.4)".into());
    }
    notes.extend(dram_note);
    notes.push(format!(
        "Wormhole NoC translation is {} (the ARC NIU's NIU_CFG_0 bit 14); windows and kernels use \
         raw NoC0 coordinates, which translation maps to themselves",
        if translated { "on" } else { "off" }
    ));
    Ok(Found {
        harvest,
        aiclk_mhz: match clock.aiclk_mhz {
            0 => target,
            mhz => mhz,
        },
        telemetry,
        clock,
        notes,
    })
}

/// Reads BAR0 `offset`, refusing the all-ones word of a hung bus.
fn read_alive<B: Bar>(bar: &B, offset: u32, what: &str) -> Result<u32, PcieError> {
    let v = bar.bar0_read32(offset)?;
    if v == wh::HUNG_READ {
        return Err(PcieError::Hung {
            what: format!("{what} (BAR0 {offset:#x})"),
        });
    }
    Ok(v)
}

/// The BAR0 offset of ARC CSM address `addr`, if it lies in CSM.
pub fn csm_bar0(addr: u32) -> Option<u32> {
    let offset = addr.checked_sub(wh::CSM_BASE)?;
    (offset < wh::CSM_SIZE).then_some(wh::CSM_BAR0 + offset)
}

/// [`PcieError::Hung`] when the ARC NIU's `NOC_NODE_ID` reads all ones: the bus is hung or the
/// chip was reset under the host.
pub fn check_alive<B: Bar>(bar: &B) -> Result<(), PcieError> {
    read_alive(bar, wh::ARC_NOC_NODE_ID_BAR0, "the ARC NIU's NOC_NODE_ID").map(|_| ())
}

/// What scratch 5, the post code and the DMA request word say of ARC's start.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ArcStart {
    /// Started: messages are served.
    Ready,
    /// Still starting, or busy with a message: poll again.
    Starting,
    /// It will not serve a message without a reset or a wake-up: why.
    Stopped(&'static str),
}

/// The decision over one poll: tt-umd's `wait_arc_core_start` table, with luwen's
/// `check_arc_msg_safe` for the two statuses where tt-umd's switch lets them through to its
/// served-message rule (which would take 0x60 and 0x55 as served messages): a boot not yet
/// complete polls on, a sleeping ARC stops the wait at once.
pub fn arc_start(status: u32, post_code: u32, dma_request: u32) -> ArcStart {
    match status {
        boot::WATCHDOG => ArcStart::Stopped("its watchdog fired"),
        s if boot::ASLEEP.contains(&s) => ArcStart::Stopped("it is asleep"),
        boot::INIT_DONE_1 | boot::INIT_DONE_2 => ArcStart::Ready,
        s if boot::BOOT_INCOMPLETE.contains(&s) => ArcStart::Starting,
        boot::OLD_POST_CODE
            if post_code == boot::POST_CODE_INIT_DONE
                || boot::POST_CODE_IDLE.contains(&post_code) =>
        {
            ArcStart::Ready
        }
        // A message queued (0xAA00 | code) or being served (0xAA00_0000 | code << 16).
        s if s & 0xFFFF_FF00 == 0xAA00 || s & 0xFF00_FFFF == 0xAA00_0000 => ArcStart::Starting,
        // The last message served (its code in the low half) and no DMA under way.
        s if s & 0xFFFF > 1 && dma_request == 0 => ArcStart::Ready,
        _ => ArcStart::Starting,
    }
}

/// Waits, bounded by `timeout`, until ARC has started ([`arc_start`]).
pub fn wait_arc_ready<B: Bar>(bar: &mut B, timeout: Duration) -> Result<(), PcieError> {
    let mut bound = Bound::new(timeout);
    let dma = csm_bar0(wh::CSM_BASE + wh::CSM_PCIE_DMA_REQUEST).unwrap_or(wh::CSM_BAR0);
    loop {
        let status = read_alive(bar, wh::scratch_bar0(wh::SCRATCH_STATUS), "ARC's scratch 5")?;
        let post_code = read_alive(bar, wh::scratch_bar0(0), "ARC's post code (scratch 0)")?;
        let dma_request = bar.bar0_read32(dma)?;
        let not_ready = |why: &str, waited_ms| PcieError::WormholeArcNotReady {
            status,
            post_code,
            waited_ms,
            why: why.into(),
        };
        match arc_start(status, post_code, dma_request) {
            ArcStart::Ready => return Ok(()),
            ArcStart::Stopped(why) => return Err(not_ready(why, bound.waited_ms())),
            ArcStart::Starting if bound.expired() => {
                return Err(not_ready("still starting", bound.waited_ms()));
            }
            ArcStart::Starting => bound.add(bar.pass_time()),
        }
    }
}

/// Which table the telemetry came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TableKind {
    /// The tagged table of bundle 18.4 and later.
    Tagged,
    /// The flat table of older firmware, indexed by [`tag`]'s `LEGACY_*` tags.
    Legacy,
}

/// Reads the telemetry through BAR0: the tagged table when both reset-unit pointers lie in
/// CSM (tt-kmd's test), else the legacy flat table message 0x2C locates. The values are keyed
/// by the table's own tags.
pub fn read_telemetry<B: Bar>(
    bar: &mut B,
    message_timeout: Duration,
) -> Result<(TableKind, Telemetry), PcieError> {
    let table = bar.bar0_read32(wh::TELEMETRY_TABLE_PTR_BAR0)?;
    let data = bar.bar0_read32(wh::TELEMETRY_DATA_PTR_BAR0)?;
    if let (Some(table), Some(data)) = (csm_bar0(table), csm_bar0(data)) {
        let version = bar.bar0_read32(table)?;
        let major = (version >> 16) & 0xFF;
        if major > 1 {
            return Err(PcieError::Telemetry(format!(
                "table version {version:#x} has major {major}; at most 1 is understood"
            )));
        }
        let end = wh::CSM_BAR0 + wh::CSM_SIZE;
        if table + 8 > end {
            return Err(PcieError::Telemetry(format!(
                "the table at CSM {table:#x} has no room for its header"
            )));
        }
        let count = bar.bar0_read32(table + 4)?;
        if count > MAX_ENTRIES || table + 8 + 4 * count > end {
            return Err(PcieError::Telemetry(format!(
                "table claims {count} entries (at most {MAX_ENTRIES}, inside CSM, are believed)"
            )));
        }
        let mut values = BTreeMap::new();
        for i in 0..count {
            let entry = bar.bar0_read32(table + 8 + 4 * i)?;
            let at = data + 4 * (entry >> 16);
            if at + 4 > end {
                return Err(PcieError::Telemetry(format!(
                    "entry {i} (tag {}) points past CSM",
                    entry & 0xFFFF
                )));
            }
            values.insert(entry as u16, bar.bar0_read32(at)?);
        }
        return Ok((TableKind::Tagged, Telemetry { version, values }));
    }
    let legacy = read_legacy_table(bar, message_timeout).map_err(|e| match e {
        PcieError::Telemetry(why) => PcieError::Telemetry(format!(
            "{why}, and NOC_NODEID_X_0/Y_0 point at no tagged table ({table:#x}, {data:#x})"
        )),
        e => e,
    })?;
    Ok((TableKind::Legacy, legacy))
}

/// The legacy flat table message 0x2C locates, keyed by its tags (`tag::LEGACY_*`).
fn read_legacy_table<B: Bar>(bar: &mut B, timeout: Duration) -> Result<Telemetry, PcieError> {
    let addr = wormhole_message(bar, msg::GET_SMBUS_TELEMETRY_ADDR, wh::NO_ARGUMENT, timeout)?;
    let base = csm_bar0(addr)
        .filter(|&b| b + 4 * tag::LEGACY_TAGS as u32 <= wh::CSM_BAR0 + wh::CSM_SIZE)
        .ok_or_else(|| {
            PcieError::Telemetry(format!(
                "message {:#04x} answered {addr:#x}, not a table in CSM ({:#x}..{:#x})",
                msg::GET_SMBUS_TELEMETRY_ADDR,
                wh::CSM_BASE,
                wh::CSM_BASE + wh::CSM_SIZE
            ))
        })?;
    let mut values = BTreeMap::new();
    for t in 0..tag::LEGACY_TAGS {
        values.insert(t, bar.bar0_read32(base + 4 * t as u32)?);
    }
    Ok(Telemetry { version: 0, values })
}

/// Each of the 6 channels' training from `telemetry` of `kind`, or `None` when the table has
/// no training status (then tt-umd does not wait either).
pub fn dram_channels(kind: TableKind, telemetry: &Telemetry) -> Option<[DramChannel; DRAM_BANKS]> {
    Some(match kind {
        TableKind::Tagged => {
            let status = telemetry.get(tag::GDDR_STATUS)?;
            std::array::from_fn(|c| match (status >> (2 * c)) & 3 {
                0b01 => DramChannel::Trained,
                0b00 => DramChannel::Training,
                _ => DramChannel::Failed,
            })
        }
        TableKind::Legacy => {
            let status = telemetry.get(tag::LEGACY_DDR_STATUS)?;
            // 0 none yet, 2 passed, 3 skipped; 1 failed and 4..=7 debug states are failures.
            std::array::from_fn(|c| match (status >> (4 * c)) & 0xF {
                0 => DramChannel::Training,
                2 | 3 => DramChannel::Trained,
                _ => DramChannel::Failed,
            })
        }
    })
}

/// Waits, bounded by `timeout`, until every channel is trained (the telemetry re-read each
/// poll). `Ok(Some(note))` when the table reports no training status.
pub fn wait_dram_trained<B: Bar>(
    bar: &mut B,
    timeouts: &OpenTimeouts,
) -> Result<Option<String>, PcieError> {
    // `read` and `wait` both need the bar: one cell lends it to each in turn.
    let bar = std::cell::RefCell::new(bar);
    let read = || {
        let (kind, telemetry) = read_telemetry(*bar.borrow_mut(), timeouts.arc_message)?;
        Ok(dram_channels(kind, &telemetry).map(|c| {
            let (tag, name) = match kind {
                TableKind::Tagged => (tag::GDDR_STATUS, "GDDR_STATUS"),
                TableKind::Legacy => (tag::LEGACY_DDR_STATUS, "DDR_STATUS"),
            };
            let status = telemetry.get(tag).unwrap_or(0);
            (c.to_vec(), format!("{name} {status:#x}"))
        }))
    };
    settle_dram(
        timeouts.dram_training,
        "telemetry has no DRAM training status: DRAM training was not checked",
        read,
        || bar.borrow_mut().pass_time(),
    )
}

/// The highest AICLK the firmware allows: `AICLK_LIMIT_MAX` of a tagged table (bundle 18.8 and
/// later), else the legacy table's AICLK word's upper half (bundles before 18.8, whose tagged
/// tables lack the limit: tt-umd's `create_wormhole_18_4_base` reads it there too), else
/// tt-umd's busy 1,000 MHz when neither says.
pub fn max_aiclk<B: Bar>(
    bar: &mut B,
    kind: TableKind,
    telemetry: &Telemetry,
    timeout: Duration,
) -> Result<u32, PcieError> {
    let legacy_max = |t: &Telemetry| t.get(tag::LEGACY_AICLK).map(|v| v >> 16);
    let given = match (kind, telemetry.get(tag::AICLK_LIMIT_MAX)) {
        (TableKind::Tagged, Some(mhz)) => Some(mhz),
        (TableKind::Tagged, None) => match read_legacy_table(bar, timeout) {
            Ok(legacy) => legacy_max(&legacy),
            // No legacy table to ask: tt-umd's busy clock.
            Err(PcieError::ArcMessage { .. } | PcieError::Telemetry(_)) => None,
            Err(e) => return Err(e),
        },
        (TableKind::Legacy, _) => legacy_max(telemetry),
    };
    Ok(given.filter(|&mhz| mhz != 0).unwrap_or(AICLK_BUSY_MHZ))
}

/// Sends `ARC_GO_BUSY`, then asks `GET_AICLK` until the clock is within 5 % of `target`,
/// bounded by `timeouts.aiclk`. As on Blackhole a message ARC refuses or a clock that does not
/// settle is an outcome, not an error; a hung device is an error.
pub fn raise_aiclk<B: Bar>(
    bar: &mut B,
    target: u32,
    timeouts: &OpenTimeouts,
) -> Result<ClockOutcome, PcieError> {
    const CLOCK: Clock = Clock {
        message: "ARC_GO_BUSY",
        source: "GET_AICLK",
        idle_mhz: AICLK_IDLE_MHZ,
        idle_note: "",
    };
    let timeout = timeouts.arc_message;
    if let Err(e) = wormhole_message(bar, msg::ARC_GO_BUSY, 0, timeout) {
        let PcieError::ArcMessage { .. } = e else {
            return Err(e);
        };
        let mhz = wormhole_message(bar, msg::GET_AICLK, wh::NO_ARGUMENT, timeout)?;
        return Ok(CLOCK.refused(&e, mhz));
    }
    // `read` and `wait` both need the bar: one cell lends it to each in turn.
    let bar = std::cell::RefCell::new(bar);
    let read = || {
        let mhz = wormhole_message(*bar.borrow_mut(), msg::GET_AICLK, wh::NO_ARGUMENT, timeout)?;
        Ok((mhz, target))
    };
    CLOCK.settle(timeouts.aiclk, read, || bar.borrow_mut().pass_time())
}

/// Whether the firmware turned NoC translation on (the ARC NIU's `NIU_CFG_0` bit 14).
pub fn translation_enabled<B: Bar>(bar: &B) -> Result<bool, PcieError> {
    let cfg = read_alive(bar, wh::ARC_NIU_CFG_0_BAR0, "the ARC NIU's NIU_CFG_0")?;
    Ok(cfg & wh::NIU_CFG_0_TRANSLATE != 0)
}
