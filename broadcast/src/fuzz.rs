//! Fuzz entry points (for `fuzz/` and the corpus replay test): decoding arbitrary bytes as
//! broadcast words, and the layout functions on arbitrary requests. Each must never panic;
//! whatever succeeds must be consistent.

use crate::args::{ARGS_WORDS, Along, BroadcastArgs};
use crate::layout::{self, BroadcastParams, Geometry};
use komorebi_hal::{LogicalRect, NocId};

/// Decodes `data` as little-endian words; a decoded value must encode back to the same words.
pub fn args_decode(data: &[u8]) {
    let words: heapless::Vec<u32, 64> = data
        .chunks_exact(4)
        .take(64)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if let Ok(args) = BroadcastArgs::decode(&words) {
        assert_eq!(
            &args.encode()[..],
            &words[..ARGS_WORDS],
            "a decoded value encodes back to its words"
        );
    }
}

/// Reads a layout request from `data` (a chip's geometry, group, rect, direction, NoC,
/// parameters) and runs every layout function on it; whatever they return must hold together.
/// The geometry is any chip's: a grid of up to 17 x 12, its Tensix columns and rows the set bits
/// of two masks (a harvested chip has gaps in either).
pub fn layout(data: &[u8]) {
    let b = |i: usize| data.get(i).copied().unwrap_or(0);
    let columns_mask = u16::from_le_bytes([b(0), b(1)]) & 0x1FFF;
    let rows_mask = u16::from_le_bytes([b(16), b(17)]) & 0x7FF;
    let group = LogicalRect::new(b(2) % 16, b(3) % 12, b(4) % 17, b(5) % 12);
    let rect = LogicalRect::new(b(6) % 16, b(7) % 12, b(8) % 17, b(9) % 12);
    let along = if b(10) & 1 == 0 {
        Along::Row
    } else {
        Along::Column
    };
    let noc = if b(10) & 2 == 0 {
        NocId::Noc0
    } else {
        NocId::Noc1
    };
    let params = BroadcastParams {
        broadcast: b(11) % 3,
        cb: b(12),
        window: b(13) % 10,
        pages: u16::from_le_bytes([b(14), b(15)]),
    };
    // Columns 1..=13 and rows 1..=11 of a 17 x 12 grid, as the set bits say.
    let set = |mask: u16, bits: u8| -> heapless::Vec<u8, 16> {
        (0..bits)
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| i + 1)
            .collect()
    };
    let (xs, ys) = (set(columns_mask, 13), set(rows_mask, 11));
    let panels = layout::panels(&xs);
    assert_eq!(
        panels.iter().map(|p| p.columns as usize).sum::<usize>(),
        xs.len()
    );
    let Ok(geometry) = Geometry::new(&xs, &ys, (17, 12)) else {
        assert!(
            xs.is_empty() || ys.is_empty(),
            "ascending coordinates inside the grid"
        );
        return;
    };
    if let Ok(all) = layout::broadcasts(&geometry, rect, along, noc) {
        let cores: usize = all.iter().map(|b| b.cores().len()).sum();
        assert_eq!(
            cores,
            rect.len(),
            "every core of the rectangle in exactly one broadcast"
        );
        for bc in &all {
            if let Ok(Some((s, e))) = layout::broadcast_rect(&geometry, bc, noc) {
                assert!(s.0 <= e.0 && s.1 <= e.1);
            }
        }
    }
    if let Ok(words) = layout::broadcast_args(&geometry, group, rect, along, noc, params) {
        assert_eq!(words.len(), group.len());
        for w in &words {
            assert!(
                BroadcastArgs::decode(&w.words).is_ok(),
                "broadcast_args produces words that decode"
            );
        }
    }
}
