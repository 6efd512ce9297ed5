//! The `--harvest` flag's parsers: a Blackhole's die-order columns, a Wormhole's rows, and the
//! harvest word of the chip a command names.

use blackhole_pac::harvest::HarvestMask;

/// `s` as a mask's number, decimal or `0x`-hex: one too large for 64 bits, or negative, has bits
/// outside any mask (`u64::MAX`); anything else is not a number.
fn mask_value(s: &str, allowed: &str) -> Result<u64, String> {
    crate::num::parse_in(s, 0, u64::MAX).or_else(|e| match e.starts_with("out of range") {
        true => Ok(u64::MAX),
        false => Err(format!("not a number ({allowed}, decimal or 0x-hex)")),
    })
}

/// Parses a die-order harvest mask, decimal or `0x`-hex: 0..=0x3fff with at least one Tensix
/// column left (the one check of every command that takes `--harvest`).
pub fn parse_harvest(s: &str) -> Result<HarvestMask, String> {
    const ALLOWED: &str = "allowed: 0..=0x3fff, at least one bit clear";
    let value = mask_value(s, ALLOWED)?;
    let mask = u32::try_from(value)
        .ok()
        .and_then(|v| HarvestMask::new(v).ok())
        .ok_or_else(|| format!("bits outside 0x3fff, the 14 Tensix columns ({ALLOWED})"))?;
    if mask.tensix_count() == 0 {
        return Err(format!(
            "every column harvested: no Tensix column left ({ALLOWED})"
        ));
    }
    Ok(mask)
}

/// Parses a Wormhole row harvest mask (tt-umd's order: bit `j` is the row at NoC0 y
/// `wormhole_pac::grid::TENSIX_Y[j]`), decimal or `0x`-hex: 0..=0x3ff with at least one row
/// left.
pub fn parse_row_harvest(s: &str) -> Result<wormhole_pac::harvest::HarvestMask, String> {
    const ALLOWED: &str =
        "allowed with --chip wormhole: 0..=0x3ff, the 10 Tensix rows, at least one bit clear";
    let value = mask_value(s, ALLOWED)?;
    match u32::try_from(value) {
        Ok(0x3FF) => Err(format!(
            "every row harvested: no Tensix row left ({ALLOWED})"
        )),
        Ok(v) => wormhole_pac::harvest::HarvestMask::new(v)
            .map_err(|_| format!("bits outside 0x3ff ({ALLOWED})")),
        Err(_) => Err(format!("bits outside 0x3ff ({ALLOWED})")),
    }
}

/// `--harvest` read for `--chip`: the Blackhole's column mask (default 0x3000) or the
/// Wormhole's row mask (default 0), parsed once; the other chip's stays at its default (a p150's
/// columns, no row). The error is the flag's one line.
pub fn chip_harvest(
    chip: crate::chip::ChipKind,
    given: Option<&str>,
) -> Result<(HarvestMask, wormhole_pac::harvest::HarvestMask), String> {
    let bad = |e: String| {
        format!(
            "invalid value '{}' for '--harvest': {e}",
            given.unwrap_or("")
        )
    };
    match chip {
        crate::chip::ChipKind::Blackhole => parse_harvest(given.unwrap_or("0x3000"))
            .map(|m| (m, wormhole_pac::harvest::HarvestMask::NONE))
            .map_err(bad),
        crate::chip::ChipKind::Wormhole => parse_row_harvest(given.unwrap_or("0"))
            .map(|m| (HarvestMask::P100_P150, m))
            .map_err(bad),
    }
}

/// `--harvest` of `komorebi grid` and `layout` ([`chip_harvest`]): the word the control block
/// carries.
pub fn harvest_word(chip: crate::chip::ChipKind, given: Option<&str>) -> Result<u32, String> {
    let (columns, rows) = chip_harvest(chip, given)?;
    Ok(match chip {
        crate::chip::ChipKind::Blackhole => columns.bits(),
        crate::chip::ChipKind::Wormhole => rows.bits(),
    } as u32)
}

/// Why `--fused-dram BANK` is refused with `--chip wormhole` (`grid`, `layout`).
pub fn no_wormhole_fused_dram(bank: u8) -> String {
    format!(
        "--fused-dram {bank}: --chip wormhole takes no fused DRAM bank (Wormhole's DRAM \
         harvesting is not modelled; allowed: --fused-dram with --chip blackhole)"
    )
}
