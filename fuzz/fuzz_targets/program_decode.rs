//! The broadcast handler's program decoding of arbitrary bytes: never panics; decoded programs
//! round-trip.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    komorebi_kernel::broadcast_handler::program::fuzz_decode(data)
});
