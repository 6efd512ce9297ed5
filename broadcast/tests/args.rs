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

#[test]
fn every_error_message_says_what_is_allowed() {
    let msg = ArgsError::Window(9).to_string();
    assert!(msg.contains("1..=8"), "{msg}");
    let msg = ArgsError::BufferTooLarge(70_000).to_string();
    assert!(msg.contains("65535"), "{msg}");
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
        any::<(u8, u8)>(),
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
                let core = if rank == 0 {
                    sender
                } else {
                    (sender.0.wrapping_add(rank), sender.1)
                };
                BroadcastArgs {
                    broadcast: id,
                    rank,
                    receivers,
                    window,
                    noc,
                    cb,
                    pages,
                    core,
                    sender,
                    start: (1, 2),
                    end: (1, 2 + receivers),
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
        .prop_filter("sender elsewhere", |a| a.rank == 0 || a.core != a.sender)
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

    #[test]
    fn decoding_words_with_a_valid_check_never_panics(mut words in proptest::array::uniform11(any::<u32>())) {
        words[0] = (words[0] & 0xFF) | 0x4B42_0200;
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
