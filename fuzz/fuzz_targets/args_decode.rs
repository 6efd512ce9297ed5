//! `BroadcastArgs` decoding of arbitrary bytes: never panics; decoded values round-trip.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| komorebi_broadcast::fuzz::args_decode(data));
