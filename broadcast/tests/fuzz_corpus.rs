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
