//! The layout functions on arbitrary requests: never panic; results hold together.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| komorebi_broadcast::fuzz::layout(data));
