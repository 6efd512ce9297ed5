//! `BroadcastArgs`: encode/decode round trip, every constraint refused with its error, and
//! decoding arbitrary words never panics.

use komorebi_broadcast::args::*;
use komorebi_hal::LogicalRect;
use proptest::prelude::*;

fn sample() -> BroadcastArgs {
    BroadcastArgs {
        broadcast: 1,
        rank: 2,
        receivers: 4,
        window: 2,
        noc: 1,
        cb: 7,
        pages: 4,
        core: (15, 7),
        sender: (15, 5),
        start: (15, 6),
        end: (15, 9),
        group: LogicalRect::new(0, 0, 12, 10),
        rect: LogicalRect::new(0, 0, 12, 10),
        along: Along::Column,
    }
}

fn reencode(mut w: [u32; ARGS_WORDS]) -> [u32; ARGS_WORDS] {
    w[10] = check_word(&w[..10]);
    w
}

#[test]
fn the_layout_is_the_documented_one() {
    let w = sample().encode();
    assert_eq!(w[0], 0x4B42_0201);
    assert_eq!(w[1], 2 | 4 << 8 | 2 << 16 | 1 << 24);
    assert_eq!(w[2], 7 | 4 << 16);
    assert_eq!(
        &w[3..7],
        &[15 | 7 << 8, 15 | 5 << 8, 15 | 6 << 8, 15 | 9 << 8]
    );
    assert_eq!(w[7], 12 << 16 | 10 << 24);
    assert_eq!(w[9], 1);
    assert_eq!(w[10], check_word(&w[..10]));
    assert_eq!(BroadcastArgs::decode(&w), Ok(sample()));
}

#[test]
fn decoding_refuses_each_broken_constraint() {
    let ok = sample().encode();
    let with = |i: usize, v: u32| {
        let mut w = ok;
        w[i] = v;
        BroadcastArgs::decode(&reencode(w))
    };
    assert_eq!(
        BroadcastArgs::decode(&ok[..10]),
        Err(ArgsError::TooShort { available: 10 })
    );
    let mut bad_check = ok;
    bad_check[10] ^= 1;
    assert!(matches!(
        BroadcastArgs::decode(&bad_check),
        Err(ArgsError::Check { .. })
    ));
    assert_eq!(with(0, 0x4B42_0101), Err(ArgsError::Header(0x4B42_0101)));
    assert_eq!(with(0, 0x4B42_0202), Err(ArgsError::BroadcastId(2)));
    assert_eq!(
        with(1, 2 | 4 << 8 | 2 << 16 | 2 << 24),
        Err(ArgsError::Noc(2))
    );
    assert_eq!(
        with(1, 2 | 4 << 8 | 9 << 16 | 1 << 24),
        Err(ArgsError::Window(9))
    );
    assert_eq!(with(1, 2 | 4 << 8 | 1 << 24), Err(ArgsError::Window(0)));
    assert_eq!(with(2, 7), Err(ArgsError::Pages));
    assert_eq!(
        with(2, 7 | 0xFFFF << 16),
        Err(ArgsError::BufferTooLarge(2 * 0xFFFF))
    );
    assert_eq!(
        with(1, 2 | 16 << 8 | 2 << 16 | 1 << 24),
        Err(ArgsError::Receivers(16))
    );
    assert_eq!(
        with(1, 5 | 4 << 8 | 2 << 16 | 1 << 24),
        Err(ArgsError::Rank {
            rank: 5,
            receivers: 4
        })
    );
    assert_eq!(with(4, 15 | 7 << 8), Err(ArgsError::SenderMismatch));
    assert_eq!(with(5, 15 | 10 << 8), Err(ArgsError::Reversed));
    assert_eq!(
        with(2, 7 | 1 << 8 | 4 << 16),
        Err(ArgsError::Reserved { word: 2 })
    );
    assert_eq!(
        with(3, 15 | 7 << 8 | 1 << 16),
        Err(ArgsError::Reserved { word: 3 })
    );
    assert_eq!(with(9, 2), Err(ArgsError::Reserved { word: 9 }));
    // A core outside the broadcast: rank 0xFF, coordinates not checked.
    let mut none = sample();
    none.rank = RANK_NONE;
    none.core = (0, 0);
    none.sender = (0, 0);
    assert_eq!(BroadcastArgs::decode(&none.encode()), Ok(none));
}

/// Words whose sender, rectangle, receivers and rank disagree are refused: each would multicast
/// to cores outside the broadcast, reuse a slot a receiver has not popped, or send DONE markers
/// to a core that is not the sender. The sample is a column: sender (15, 5), receivers (15, 6)
/// to (15, 9), this core (15, 7) at rank 2.
#[test]
fn words_whose_sender_rectangle_and_rank_disagree_are_refused() {
    let line = |_: BroadcastArgs| ArgsError::Line;
    let s = sample();
    for bad in [
        // Fewer receivers than the rectangle holds (the sender would wait for some only).
        BroadcastArgs { receivers: 3, ..s },
        // More receivers than the rectangle holds.
        BroadcastArgs { receivers: 5, ..s },
        // A rectangle that is not one line (a multicast to cores of other broadcasts).
        BroadcastArgs { end: (17, 9), ..s },
        // A start not next to the sender.
        BroadcastArgs {
            start: (15, 7),
            ..s
        },
        // A start off the sender's line, the end and this core on it: one column over for a
        // column, one row up for a row (each field of the line checked on its own).
        BroadcastArgs {
            start: (14, 6),
            ..s
        },
        BroadcastArgs {
            core: (17, 5),
            start: (16, 4),
            end: (19, 5),
            along: Along::Row,
            ..s
        },
        // This core not `rank` steps from the sender (its markers' slot would be another's).
        BroadcastArgs { core: (15, 8), ..s },
        BroadcastArgs { core: (16, 7), ..s },
        // The sender at the far end of its receivers, and inside them.
        BroadcastArgs {
            sender: (15, 10),
            core: (15, 12),
            ..s
        },
        BroadcastArgs {
            sender: (15, 7),
            core: (15, 9),
            ..s
        },
        // No receivers: start and end must be the sender.
        BroadcastArgs {
            receivers: 0,
            rank: 0,
            core: (15, 5),
            ..s
        },
        // A coordinate no NoC has.
        BroadcastArgs {
            start: (15, 61),
            end: (15, 64),
            core: (15, 62),
            sender: (15, 60),
            ..s
        },
    ] {
        assert_eq!(bad.validate(), Err(line(bad)), "{bad:?}");
        assert_eq!(
            BroadcastArgs::decode(&bad.encode()),
            Err(line(bad)),
            "{bad:?}"
        );
    }
    // The same shapes along x, and a broadcast without receivers, are taken.
    for good in [
        s,
        BroadcastArgs {
            core: (17, 5),
            sender: (15, 5),
            start: (16, 5),
            end: (19, 5),
            along: Along::Row,
            ..s
        },
        BroadcastArgs {
            receivers: 0,
            rank: 0,
            core: (15, 5),
            start: (15, 5),
            end: (15, 5),
            ..s
        },
        BroadcastArgs {
            receivers: 0,
            rank: 0,
            core: (63, 63),
            sender: (63, 63),
            start: (63, 63),
            end: (63, 63),
            ..s
        },
    ] {
        assert_eq!(BroadcastArgs::decode(&good.encode()), Ok(good), "{good:?}");
    }
    let msg = line(BroadcastArgs { end: (17, 9), ..s }).to_string();
    assert!(
        msg.contains("allowed: the receivers one step after another"),
        "{msg}"
    );
}

/// Words of another version are reported by their header, not by a check word that version
/// would compute differently.
#[test]
fn a_bad_header_is_reported_before_the_check_word() {
    let mut w = sample().encode();
    w[0] = 0x4B42_0101;
    assert_eq!(
        BroadcastArgs::decode(&w),
        Err(ArgsError::Header(0x4B42_0101))
    );
    assert_eq!(
        BroadcastArgs::decode(&[0; ARGS_WORDS]),
        Err(ArgsError::Header(0))
    );
}

#[test]
fn every_error_message_says_what_is_allowed() {
    let msg = ArgsError::Window(9).to_string();
    assert!(msg.contains("1..=8"), "{msg}");
    let msg = ArgsError::BufferTooLarge(70_000).to_string();
    assert!(msg.contains("65535"), "{msg}");
    // Every error: what was wrong, and what is allowed (or expected).
    for (e, wrong, allowed) in [
        (ArgsError::TooShort { available: 7 }, "7", "need 11"),
        (ArgsError::Header(0x4B42_0101), "0x4b420101", "version 2"),
        (ArgsError::BroadcastId(2), "2", "allowed: 0, 1"),
        (ArgsError::Noc(3), "3", "allowed: 0, 1"),
        (ArgsError::Window(0), "0", "allowed: 1..=8"),
        (ArgsError::Pages, "0 pages", "allowed: 1.."),
        (ArgsError::BufferTooLarge(70_000), "70000", "allowed"),
        (ArgsError::Receivers(16), "16", "allowed: 0..=15"),
        (
            ArgsError::Rank {
                rank: 5,
                receivers: 4,
            },
            "rank 5",
            "allowed: 0..=4 or 0xff",
        ),
        (ArgsError::SenderMismatch, "rank 0", "must sit"),
        (
            ArgsError::Reversed,
            "after its end",
            "allowed: start <= end",
        ),
        (ArgsError::Line, "disagree", "allowed: the receivers"),
        (ArgsError::Reserved { word: 2 }, "word 2", "allowed: 0"),
        (
            ArgsError::Check {
                found: 1,
                expected: 2,
            },
            "0x00000001",
            "expected 0x00000002",
        ),
    ] {
        let msg = e.to_string();
        assert!(msg.contains(wrong) && msg.contains(allowed), "{e:?}: {msg}");
    }
}

#[test]
fn a_buffer_of_exactly_65_535_pages_and_a_window_of_8_are_allowed_and_one_more_is_not() {
    // Rule 4: window 1 to 8; the buffer, window * pages pages, holds at most 65,535.
    let with = |window: u8, pages: u16| BroadcastArgs {
        window,
        pages,
        ..sample()
    };
    for (window, pages) in [(1, 65_535), (5, 13_107), (8, 8_191), (3, 21_845)] {
        let a = with(window, pages);
        assert_eq!(a.validate(), Ok(()), "window {window} pages {pages}");
        assert_eq!(BroadcastArgs::decode(&a.encode()), Ok(a));
    }
    assert_eq!(
        with(8, 8_192).validate(),
        Err(ArgsError::BufferTooLarge(65_536))
    );
    assert_eq!(
        with(2, 32_768).validate(),
        Err(ArgsError::BufferTooLarge(65_536))
    );
    assert_eq!(with(9, 1).validate(), Err(ArgsError::Window(9)));
    assert_eq!(with(0, 1).validate(), Err(ArgsError::Window(0)));
}

fn arb_args() -> impl Strategy<Value = BroadcastArgs> {
    (
        0u8..2,
        0u8..16,
        1u8..=8,
        0u8..2,
        any::<u8>(),
        1u16..=8191,
        (0u8..=48, 0u8..=48),
        0u8..2,
    )
        .prop_flat_map(|(id, receivers, window, noc, cb, pages, sender, along)| {
            (
                Just((id, receivers, window, noc, cb, pages, sender, along)),
                0..=receivers,
            )
        })
        .prop_map(
            |((id, receivers, window, noc, cb, pages, sender, along), rank)| {
                // The receivers one step after another from the sender, along x for a row and
                // y for a column, as the layout places them (`ArgsError::Line`).
                let step = |k: u8| match along {
                    0 => (sender.0 + k, sender.1),
                    _ => (sender.0, sender.1 + k),
                };
                BroadcastArgs {
                    broadcast: id,
                    rank,
                    receivers,
                    window,
                    noc,
                    cb,
                    pages,
                    core: step(rank),
                    sender,
                    start: step((receivers > 0) as u8),
                    end: step(receivers),
                    group: LogicalRect::new(0, 0, 14, 10),
                    rect: LogicalRect::new(1, 2, 3, 4),
                    along: if along == 0 {
                        Along::Row
                    } else {
                        Along::Column
                    },
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn encode_then_decode_is_the_identity(args in arb_args()) {
        prop_assert_eq!(BroadcastArgs::decode(&args.encode()), Ok(args));
    }

    #[test]
    fn decoding_arbitrary_words_never_panics(words in proptest::collection::vec(any::<u32>(), 0..16)) {
        let _ = BroadcastArgs::decode(&words);
    }

    /// Good words with one word replaced and the check word made again: some decode (a word
    /// whose every value is valid, such as the group), most do not; none panics, and words
    /// that decode encode back to themselves.
    #[test]
    fn decoding_words_with_a_valid_check_never_panics(
        args in arb_args(),
        (word, value) in (0usize..10, any::<u32>()),
    ) {
        let mut words = args.encode();
        words[word] = value;
        let words = reencode(words);
        if let Ok(a) = BroadcastArgs::decode(&words) {
            prop_assert_eq!(a.encode(), words);
        }
    }

    #[test]
    fn a_flipped_bit_is_always_caught(args in arb_args(), bit in 0u32..352) {
        let mut w = args.encode();
        w[(bit / 32) as usize] ^= 1 << (bit % 32);
        prop_assert!(BroadcastArgs::decode(&w).is_err());
    }
}
