//! Golden values: the binary layout of the broadcast specification (as `komorebi_broadcast`'s
//! `area` and `args` module docs restate it), pinned with numbers written here by hand.
//!
//! Every expected value in this file is a literal taken from the specification or worked out
//! by hand (the check words with an implementation of `check_word` written outside this crate, in Python), never computed by the
//! code under test: a layout change that the code makes consistently on both sides (host and
//! device) still fails here, as a card, a second implementation or another team's host tooling
//! would.

mod common;

use komorebi_broadcast::area::{self, GiveUpRecord, Where, marker, marker_count, padding_blocks};
use komorebi_broadcast::args::{self, Along, BroadcastArgs, check_word};
use komorebi_broadcast::layout::{BroadcastParams, broadcast_args};
use komorebi_hal::{LogicalRect, NocId};

// ---- control block -------------------------------------------------------------------------

#[test]
fn two_broadcast_areas_of_0x140_bytes_start_at_control_offset_0xa00() {
    assert_eq!(area::CONTROL_BROADCAST, 0xA00);
    assert_eq!(area::AREA_BYTES, 0x140);
    assert_eq!(area::SLOT_BYTES, 16);
    assert_eq!(area::MAX_BROADCASTS, 2);
    assert_eq!(area::MAX_RECEIVERS, 15);
    assert_eq!(area::area(0), 0xA00);
    assert_eq!(area::area(1), 0xB40);
}

#[test]
fn slots_are_valid_marker_source_give_up_statistics_then_done_by_ranks_1_to_15() {
    // Offsets in an area, in the order the specification lists the slots.
    assert_eq!(area::VALID, 0x00);
    assert_eq!(area::MARKER_SOURCE, 0x10);
    assert_eq!(area::GIVE_UP_WHERE, 0x20);
    assert_eq!(area::GIVE_UP_BLOCK, 0x24);
    assert_eq!(area::GIVE_UP_SEQUENCE, 0x28);
    assert_eq!(area::STATS_BLOCKS, 0x30);
    assert_eq!(area::STATS_WAIT_CYCLES, 0x34);
    assert_eq!(area::DONE_BY_FIRST, 0x40);
    // Control-block offsets of the DONE-BY words: one 16-byte slot per rank 1..=15.
    assert_eq!(area::done_by(0, 1), 0xA40);
    assert_eq!(area::done_by(0, 2), 0xA50);
    assert_eq!(area::done_by(0, 15), 0xB20);
    assert_eq!(area::done_by(1, 1), 0xB80);
    assert_eq!(area::done_by(1, 15), 0xC60);
}

// ---- markers -------------------------------------------------------------------------------

#[test]
fn markers_carry_the_sequence_number_in_the_high_half_and_the_count_in_the_low_half() {
    assert_eq!(marker(7, 1), 0x0007_0001);
    assert_eq!(marker(0x1234, 0x00FF), 0x1234_00FF);
    assert_eq!(marker(0xFFFF, 0x7FFF), 0xFFFF_7FFF);
    assert_eq!(marker(0, 0), 0);
    assert_eq!(marker_count(0x0007_0003, 7), Some(3));
    assert_eq!(marker_count(0x1234_00FF, 0x1234), Some(0xFF));
    // A word an earlier command left does not count, nor one with the halves the other way.
    assert_eq!(marker_count(0x0006_0003, 7), None);
    assert_eq!(marker_count(0x0003_0007, 7), None);
}

// ---- the first give-up ---------------------------------------------------------------------

#[test]
fn give_up_words_are_where_with_the_broadcast_in_bits_8_to_15_and_the_sequence_above_then_block_then_sequence()
 {
    assert_eq!(Where::BroadcastDone.code(), 1);
    assert_eq!(Where::BroadcastValid.code(), 2);
    assert_eq!(Where::BroadcastFree.code(), 3);
    assert_eq!(Where::BroadcastBegin.code(), 4);
    let record = GiveUpRecord {
        place: Where::BroadcastValid,
        broadcast: 1,
        block: 5,
        sequence: 0x0001_0007,
    };
    // The where word's upper half is the sequence's low half (two records' where words differ,
    // so a host reading a record being written can tell: `GiveUpRecord::read`).
    assert_eq!(record.words(), [0x0007_0102, 5, 0x0001_0007]);
    assert_eq!(GiveUpRecord::from_words(record.words()), Some(record));
    assert_eq!(
        GiveUpRecord::from_words([0x0000_0003, 0x0000_0009, 0x00AB_CDEF]),
        Some(GiveUpRecord {
            place: Where::BroadcastFree,
            broadcast: 0,
            block: 9,
            sequence: 0x00AB_CDEF,
        })
    );
    assert_eq!(GiveUpRecord::from_words([0x0000_0100, 9, 9]), None);
}

#[test]
fn padding_fills_the_last_window() {
    // The 03 shape: 16 blocks in a window of 2 need none; 15 need one.
    assert_eq!(padding_blocks(2, 16), 0);
    assert_eq!(padding_blocks(2, 15), 1);
    assert_eq!(padding_blocks(8, 3), 5);
    assert_eq!(padding_blocks(1, 5), 0);
}

// ---- broadcast words -----------------------------------------------------------------------

#[test]
fn check_word_is_fnv_1a_a_word_at_a_time_with_an_xorshift() {
    // Known answers from an implementation of the documented steps written outside this crate
    // (Python): hash = (hash ^ word) * 0x0100_0193, hash ^= hash >> 15, from 0x811C_9DC5.
    assert_eq!(check_word(&[]), 0x811C_9DC5);
    assert_eq!(check_word(&[u32::from_le_bytes(*b"abcd")]), 0xEC7E_B7D2);
    assert_eq!(check_word(&[0x1234_5678, 0x9ABC_DEF0]), 0x8AD5_94DB);
    // Every bit of every word reaches the low 24 bits a program's check keeps.
    let words = [0x1234_5678, 0x9ABC_DEF0, 0x0F0F_0F0F];
    for i in 0..words.len() {
        for bit in 0..32 {
            let mut w = words;
            w[i] ^= 1 << bit;
            assert_ne!(
                check_word(&w) & 0x00FF_FFFF,
                check_word(&words) & 0x00FF_FFFF,
                "word {i} bit {bit}"
            );
        }
    }
}

#[test]
fn args_constants_are_the_specified_ones() {
    assert_eq!(args::ARGS_WORDS, 11);
    assert_eq!(args::ARGS_VERSION, 2);
    assert_eq!(args::ARGS_MAGIC, 0x4B42);
    assert_eq!(args::RANK_NONE, 0xFF);
    assert_eq!(args::MAX_WINDOW, 8);
    assert_eq!(args::MAX_BUFFER_PAGES, 65_535);
    assert_eq!(args::MAX_BLOCKS, 32_767);
}

/// The 03 shape (`--rect 0,0,12,10 --blocks 16 --pages 4 --window 2`, page size 2048) on a
/// p100/p150 part (NoC0 x 7 and 10 harvested: logical columns 0..=5 at NoC0 x 1..=6, 6..=11
/// at 11..=16, rows 0..=9 at NoC0 y 2..=11), with the broadcasts `BroadcastPlan` makes: A,
/// id 0, along rows on NoC0 in CB 0; W, id 1, along columns on NoC1 in CB 1.
fn shape_03(id: u8) -> Vec<([u32; 11], (u8, u8))> {
    let geometry = common::blackhole(0x3000);
    let rect = LogicalRect::new(0, 0, 12, 10);
    let (along, noc) = if id == 0 {
        (Along::Row, NocId::Noc0)
    } else {
        (Along::Column, NocId::Noc1)
    };
    let params = BroadcastParams {
        broadcast: id,
        cb: id,
        window: 2,
        pages: 4,
    };
    broadcast_args(&geometry, rect, rect, along, noc, params)
        .unwrap()
        .iter()
        .map(|c| (c.words, c.core))
        .collect()
}

fn words_of(all: &[([u32; 11], (u8, u8))], core: (u8, u8)) -> [u32; 11] {
    all.iter().find(|(_, c)| *c == core).unwrap().0
}

#[test]
fn shape_03_row_broadcast_words_are_the_hand_computed_ones() {
    let all = shape_03(0);
    assert_eq!(all.len(), 120);
    // The sender of the first panel's row 0: NoC0 (1,2), receivers (2,2)..(6,2).
    assert_eq!(
        words_of(&all, (0, 0)),
        [
            0x4B42_0200,
            0x0002_0500,
            0x0004_0000,
            0x0000_0201,
            0x0000_0201,
            0x0000_0202,
            0x0000_0206,
            0x0A0C_0000,
            0x0A0C_0000,
            0x0000_0000,
            0xA109_6691,
        ]
    );
    // Rank 3 of row 4: NoC0 (4,6), sender (1,6).
    assert_eq!(
        words_of(&all, (3, 4)),
        [
            0x4B42_0200,
            0x0002_0503,
            0x0004_0000,
            0x0000_0604,
            0x0000_0601,
            0x0000_0602,
            0x0000_0606,
            0x0A0C_0000,
            0x0A0C_0000,
            0x0000_0000,
            0x8B06_8112,
        ]
    );
    // The second panel's row 0 starts at NoC0 x 11: its own sender.
    assert_eq!(
        words_of(&all, (6, 0)),
        [
            0x4B42_0200,
            0x0002_0500,
            0x0004_0000,
            0x0000_020B,
            0x0000_020B,
            0x0000_020C,
            0x0000_0210,
            0x0A0C_0000,
            0x0A0C_0000,
            0x0000_0000,
            0xB296_903D,
        ]
    );
    // The last core: rank 5 of the second panel's row 9.
    assert_eq!(
        words_of(&all, (11, 9)),
        [
            0x4B42_0200,
            0x0002_0505,
            0x0004_0000,
            0x0000_0B10,
            0x0000_0B0B,
            0x0000_0B0C,
            0x0000_0B10,
            0x0A0C_0000,
            0x0A0C_0000,
            0x0000_0000,
            0xF0D8_9346,
        ]
    );
}

#[test]
fn shape_03_column_broadcast_words_are_the_hand_computed_ones() {
    let all = shape_03(1);
    assert_eq!(all.len(), 120);
    // NoC1 numbers the grid from NoC0's far corner: (16 - x, 11 - y). Column 0's sender is at
    // its bottom (row 9, NoC1 (15,0)), its receivers NoC1 (15,1)..(15,9).
    assert_eq!(
        words_of(&all, (0, 9)),
        [
            0x4B42_0201,
            0x0102_0900,
            0x0004_0001,
            0x0000_000F,
            0x0000_000F,
            0x0000_010F,
            0x0000_090F,
            0x0A0C_0000,
            0x0A0C_0000,
            0x0000_0001,
            0x172E_7CC0,
        ]
    );
    // The top of column 0 is its last receiver, rank 9.
    assert_eq!(
        words_of(&all, (0, 0)),
        [
            0x4B42_0201,
            0x0102_0909,
            0x0004_0001,
            0x0000_090F,
            0x0000_000F,
            0x0000_010F,
            0x0000_090F,
            0x0A0C_0000,
            0x0A0C_0000,
            0x0000_0001,
            0x8BD3_D89D,
        ]
    );
    // Column 11 (NoC0 x 16, NoC1 x 0), row 4 (NoC1 y 5): rank 5.
    assert_eq!(
        words_of(&all, (11, 4)),
        [
            0x4B42_0201,
            0x0102_0905,
            0x0004_0001,
            0x0000_0500,
            0x0000_0000,
            0x0000_0100,
            0x0000_0900,
            0x0A0C_0000,
            0x0A0C_0000,
            0x0000_0001,
            0x9F1A_14BF,
        ]
    );
}

#[test]
fn the_hand_computed_words_decode_to_the_03_shape() {
    let a = BroadcastArgs::decode(&[
        0x4B42_0200,
        0x0002_0503,
        0x0004_0000,
        0x0000_0604,
        0x0000_0601,
        0x0000_0602,
        0x0000_0606,
        0x0A0C_0000,
        0x0A0C_0000,
        0x0000_0000,
        0x8B06_8112,
    ])
    .unwrap();
    assert_eq!(
        a,
        BroadcastArgs {
            broadcast: 0,
            rank: 3,
            receivers: 5,
            window: 2,
            noc: 0,
            cb: 0,
            pages: 4,
            core: (4, 6),
            sender: (1, 6),
            start: (2, 6),
            end: (6, 6),
            group: LogicalRect::new(0, 0, 12, 10),
            rect: LogicalRect::new(0, 0, 12, 10),
            along: Along::Row,
        }
    );
    // One bit of the rank flipped and the check word kept: refused.
    assert!(
        BroadcastArgs::decode(&[
            0x4B42_0200,
            0x0002_0502,
            0x0004_0000,
            0x0000_0604,
            0x0000_0601,
            0x0000_0602,
            0x0000_0606,
            0x0A0C_0000,
            0x0A0C_0000,
            0x0000_0000,
            0x8B06_8112,
        ])
        .is_err()
    );
}

// ---- names ---------------------------------------------------------------------------------

#[test]
fn the_places_of_a_give_up_are_named_as_the_specification_names_them() {
    // "where (broadcast_done: ..., broadcast_valid: ..., broadcast_free: ..., broadcast_begin:
    // bad words)".
    let names = [
        (Where::BroadcastDone, "broadcast_done"),
        (Where::BroadcastValid, "broadcast_valid"),
        (Where::BroadcastFree, "broadcast_free"),
        (Where::BroadcastBegin, "broadcast_begin"),
    ];
    for (place, name) in names {
        assert_eq!(place.name(), name);
        assert_eq!(place.to_string(), name);
    }
}

#[test]
fn the_directions_are_named_row_and_column() {
    // `broadcasts(..., along, ...)`: along "column" or "row".
    assert_eq!(Along::Row.name(), "row");
    assert_eq!(Along::Column.name(), "column");
    assert_eq!(Along::Row as u32, 0);
    assert_eq!(Along::Column as u32, 1);
}

// ---- the first give-up of broadcast 1 ------------------------------------------------------

#[test]
fn a_give_up_record_of_broadcast_1_reads_the_broadcast_from_bits_8_to_15() {
    assert_eq!(
        GiveUpRecord::from_words([0x0000_0104, 0, 0x0002_0003]),
        Some(GiveUpRecord {
            place: Where::BroadcastBegin,
            broadcast: 1,
            block: 0,
            sequence: 0x0002_0003,
        })
    );
    assert_eq!(
        GiveUpRecord::from_words([0x0000_0101, 17, 9]),
        Some(GiveUpRecord {
            place: Where::BroadcastDone,
            broadcast: 1,
            block: 17,
            sequence: 9,
        })
    );
    // Bad words may name any broadcast byte; bits above 15 are not part of the record.
    assert_eq!(
        GiveUpRecord::from_words([0xFFFF_AB04, 0, 1]).map(|r| (r.place, r.broadcast)),
        Some((Where::BroadcastBegin, 0xAB))
    );
}

// ---- reading a record while its core may be writing it ----------------------------------

/// `GiveUpRecord::read` of broadcast `id` over `script`: the `n`th load returns `script(n,
/// offset)`. Returns the result and the offsets loaded, in order.
fn read_with(
    id: u8,
    mut script: impl FnMut(usize, u32) -> Result<u32, &'static str>,
) -> (Result<Option<GiveUpRecord>, &'static str>, Vec<u32>) {
    let mut loads = Vec::new();
    let r = GiveUpRecord::read(id, |off| {
        loads.push(off);
        script(loads.len() - 1, off)
    });
    (r, loads)
}

#[test]
fn a_record_that_holds_still_is_read_where_block_sequence_then_where_again() {
    // Broadcast 1's area is at 0xB40: where 0xB60, block 0xB64, sequence 0xB68.
    let still = |_, off| match off {
        0xB60 => Ok(0x0007_0102),
        0xB64 => Ok(5),
        0xB68 => Ok(0x0001_0007),
        _ => Err("no such word"),
    };
    let (r, loads) = read_with(1, still);
    assert_eq!(
        r,
        Ok(Some(GiveUpRecord {
            place: Where::BroadcastValid,
            broadcast: 1,
            block: 5,
            sequence: 0x0001_0007,
        }))
    );
    assert_eq!(loads, [0xB60, 0xB64, 0xB68, 0xB60]);
    // Broadcast 0's at 0xA00; no give-up (where word 0) reads as none, at once.
    let (r, loads) = read_with(0, |_, off| match off {
        0xA20 | 0xA24 | 0xA28 => Ok(0),
        _ => Err("no such word"),
    });
    assert_eq!(r, Ok(None));
    assert_eq!(loads, [0xA20, 0xA24, 0xA28, 0xA20]);
}

#[test]
fn a_record_being_written_is_read_again_and_one_that_never_holds_still_reads_as_none() {
    // The core replaces an old record (command 6, broadcast_done block 9) with a new one
    // (command 7, broadcast_valid block 5) while the host reads: the first round sees the old
    // where word, then the new block and sequence, then the where word cleared (0). The where
    // words differ, so that round is read again, and the second sees the new record whole.
    let (old_where, new_where) = (0x0006_0001, 0x0007_0002);
    let script = |n: usize, off| match (n, off) {
        (0, 0xA20) => Ok(old_where),
        (3, 0xA20) => Ok(0),
        (_, 0xA20) => Ok(new_where),
        (_, 0xA24) => Ok(5),
        (_, 0xA28) => Ok(7),
        _ => Err("no such word"),
    };
    let (r, loads) = read_with(0, script);
    assert_eq!(
        r,
        Ok(Some(GiveUpRecord {
            place: Where::BroadcastValid,
            broadcast: 0,
            block: 5,
            sequence: 7,
        }))
    );
    assert_eq!(
        loads,
        [0xA20, 0xA24, 0xA28, 0xA20, 0xA20, 0xA24, 0xA28, 0xA20]
    );
    // A where word that changes between every two loads: three rounds, then none.
    let (r, loads) = read_with(0, |n, off| match off {
        0xA20 => Ok(0x0007_0001 + (n as u32 % 2)),
        0xA24 | 0xA28 => Ok(1),
        _ => Err("no such word"),
    });
    assert_eq!(r, Ok(None));
    assert_eq!(loads.len(), 12);
    assert_eq!(loads[8..], [0xA20, 0xA24, 0xA28, 0xA20]);
}

#[test]
fn a_record_whose_words_cannot_be_read_is_that_error() {
    for failing in [0xA20, 0xA24, 0xA28] {
        let (r, loads) = read_with(0, |_, off| {
            if off == failing {
                Err("refused")
            } else {
                Ok(0x0007_0003)
            }
        });
        assert_eq!(r, Err("refused"));
        assert_eq!(loads.last(), Some(&failing));
    }
    // The where word's second load refused.
    let (r, loads) = read_with(0, |n, _| if n == 3 { Err("refused") } else { Ok(3) });
    assert_eq!(r, Err("refused"));
    assert_eq!(loads.len(), 4);
}

// ---- stale words ---------------------------------------------------------------------------

#[test]
fn stale_words_are_the_new_words_with_the_old_check_word_and_the_device_refuses_them() {
    // The 03 shape's row sender (0,0) of the first panel, with the first receiver's y flipped
    // (start (2,2) -> (2,3)) after the check word was made: what `--fault bad-words` sends.
    let args = BroadcastArgs::decode(&[
        0x4B42_0200,
        0x0002_0500,
        0x0004_0000,
        0x0000_0201,
        0x0000_0201,
        0x0000_0202,
        0x0000_0206,
        0x0A0C_0000,
        0x0A0C_0000,
        0x0000_0000,
        0xA109_6691,
    ])
    .unwrap();
    let mut flipped = args;
    flipped.start.1 ^= 1;
    let stale = [
        0x4B42_0200,
        0x0002_0500,
        0x0004_0000,
        0x0000_0201,
        0x0000_0201,
        0x0000_0302,
        0x0000_0206,
        0x0A0C_0000,
        0x0A0C_0000,
        0x0000_0000,
        0xA109_6691,
    ];
    assert_eq!(flipped.encode_stale(&args), stale);
    // `check_word` of the flipped words 0..=9 (written outside this crate): 0xf3c849a2.
    assert_eq!(
        BroadcastArgs::decode(&stale),
        Err(args::ArgsError::Check {
            found: 0xA109_6691,
            expected: 0xF3C8_49A2,
        })
    );
    // Stale against itself is the plain encoding.
    assert_eq!(args.encode_stale(&args), args.encode());
}
