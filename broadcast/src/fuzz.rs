//! Fuzz entry points (for `fuzz/` and the corpus replay test): decoding arbitrary bytes as
//! broadcast words, and the layout functions on arbitrary requests. Each must never panic;
//! whatever succeeds must be consistent.

use crate::args::{ARGS_WORDS, Along, BroadcastArgs, RANK_NONE};
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
    let Ok(all) = layout::broadcasts(&geometry, rect, along, noc) else {
        return;
    };
    // Every core of the rectangle in exactly one broadcast, and no other core.
    let mut seen = [[0u8; 12]; 17];
    for bc in &all {
        for &(x, y) in bc.cores() {
            assert!(rect.contains(x, y), "({x},{y}) is outside {rect:?}");
            seen[x as usize][y as usize] += 1;
        }
    }
    for x in rect.x0..rect.x0 + rect.columns {
        for y in rect.y0..rect.y0 + rect.rows {
            assert_eq!(
                seen[x as usize][y as usize], 1,
                "({x},{y}) in one broadcast"
            );
        }
    }
    // Each broadcast's cores are consecutive on the NoC from its sender: its multicast corners
    // are its first receiver's and its last core's.
    for bc in &all {
        let corners = layout::broadcast_rect(&geometry, bc, noc)
            .expect("broadcasts() makes lines of consecutive cores");
        let raw = |c| geometry.noc_xy(c, noc).expect("a core of the grid");
        let cores = bc.cores();
        let expected = match cores.len() {
            1 => None,
            n => Some((raw(cores[1]), raw(cores[n - 1]))),
        };
        assert_eq!(corners, expected);
    }
    // Every core's words encode back to themselves and say its rank in its broadcast, that
    // broadcast's sender and receivers; a core of the group outside the rectangle has none.
    if let Ok(words) = layout::broadcast_args(&geometry, group, rect, along, noc, params) {
        assert_eq!(words.len(), group.len());
        for w in &words {
            let a = BroadcastArgs::decode(&w.words).expect("broadcast_args' words decode");
            assert_eq!(a.encode(), w.words);
            match all.iter().find_map(|bc| Some((bc, bc.rank_of(w.core)?))) {
                Some((bc, rank)) => {
                    assert_eq!((a.rank, a.receivers), (rank, bc.receivers()));
                    assert_eq!(Some(a.sender), geometry.noc_xy(bc.sender(), noc));
                }
                None => assert_eq!(a.rank, RANK_NONE),
            }
        }
    }
}
