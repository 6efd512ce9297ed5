//! Replays the fuzz corpus (`fuzz/corpus/<target>/*`) through the fuzz entry points, so every
//! input the fuzzers found interesting is checked on every test run.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        run(&std::fs::read(&path).unwrap());
        n += 1;
    }
    n
}

#[test]
fn the_args_decode_corpus_replays() {
    assert!(replay("args_decode", komorebi_broadcast::fuzz::args_decode) > 0);
}

#[test]
fn the_layout_corpus_replays() {
    assert!(replay("layout", komorebi_broadcast::fuzz::layout) > 0);
}

#[test]
fn the_seed_corpus_holds_valid_words() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/args_decode/receiver-noc1");
    let bytes = std::fs::read(dir).unwrap();
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert!(komorebi_broadcast::BroadcastArgs::decode(&words).is_ok());
}

/// A layout request in the target's byte form that its every function takes: Tensix columns
/// and rows any non-empty sets, the group the whole grid, the rectangle inside it, the
/// parameters valid.
fn valid_request() -> impl proptest::strategy::Strategy<Value = [u8; 18]> {
    use proptest::prelude::*;
    (1u16..0x2000, 1u16..0x800).prop_flat_map(|(columns_mask, rows_mask)| {
        let (columns, rows) = (
            columns_mask.count_ones() as u8,
            rows_mask.count_ones() as u8,
        );
        (
            (0..columns).prop_flat_map(move |x0| (Just(x0), 1..=columns - x0)),
            (0..rows).prop_flat_map(move |y0| (Just(y0), 1..=rows - y0)),
            any::<u8>(),
            0u8..2,
            1u8..=8,
            1u16..=16,
        )
            .prop_map(
                move |((x0, w), (y0, h), direction, broadcast, window, pages)| {
                    let [c0, c1] = columns_mask.to_le_bytes();
                    let [r0, r1] = rows_mask.to_le_bytes();
                    let [p0, p1] = pages.to_le_bytes();
                    [
                        c0, c1, 0, 0, columns, rows, x0, y0, w, h, direction, broadcast, 3, window,
                        p0, p1, r0, r1,
                    ]
                },
            )
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

    /// The layout target's checks over random requests besides the corpus (every core in one
    /// broadcast, the corners, each core's words), so they run on every test run.
    #[test]
    fn the_layout_checks_hold_on_random_requests(data in proptest::array::uniform18(0u8..)) {
        komorebi_broadcast::fuzz::layout(&data);
    }

    /// Requests every layout function takes, so the checks of each core's words run.
    #[test]
    fn the_layout_checks_hold_on_valid_requests(data in valid_request()) {
        komorebi_broadcast::fuzz::layout(&data);
    }
}
