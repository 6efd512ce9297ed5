//! The firmware images' own `memcpy` and `memset` (assembly in `examples/firmware/src/lib.rs`),
//! run on the simulated RISC-V core straight out of each built image: every length from 0 to
//! 40 bytes at every placement of the two pointers within their words copies or sets exactly
//! those bytes, touches nothing around them and returns its destination; and a long copy or
//! fill whose length is not a multiple of four still goes by words.
//!
//! The tests build the firmware first (`examples/firmware`, once per test binary), which needs
//! the `riscv32im-unknown-none-elf` target.

use std::path::PathBuf;
use std::sync::OnceLock;

use komorebi::host::backend::built_firmware;
use komorebi_sim::riscv::{Hart, HartConfig, RamBus, Stop};
use object::{Object, ObjectSection, ObjectSymbol};

/// The simulated memory: L1 from 0, enough for the images and the buffers below.
const RAM: u32 = 0x18_0000;
/// Where a call returns to: an `ecall` the run stops at.
const RETURN: u32 = 0x17_0000;
/// The source and destination buffers (word-aligned; the tests add 0..=3 to each).
const SRC: u32 = 0x10_0000;
const DST: u32 = 0x14_0000;
/// A byte the destination is filled with before each call, to see what was touched.
const GUARD: u8 = 0xEE;

fn firmware() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| built_firmware().unwrap()).clone()
}

/// One image loaded into RAM, with the addresses of its `memcpy` and `memset`.
struct Image {
    bus: RamBus,
    memcpy: u32,
    memset: u32,
}

fn image(kernel: &str) -> Image {
    let path = firmware().join(kernel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = object::File::parse(&*bytes).unwrap();
    let mut bus = RamBus::new(0, RAM);
    for section in file.sections() {
        let Ok(data) = section.data() else { continue };
        let at = section.address() as usize;
        if section.address() == 0 || data.is_empty() || at + data.len() > RETURN as usize {
            continue;
        }
        bus.bytes_mut()[at..at + data.len()].copy_from_slice(data);
    }
    bus.write_words(RETURN, &[0x0000_0073]); // ecall
    let symbol = |name: &str| {
        file.symbols()
            .find(|s| s.name() == Ok(name))
            .unwrap_or_else(|| panic!("{kernel} has no `{name}`"))
            .address() as u32
    };
    Image {
        memcpy: symbol("memcpy"),
        memset: symbol("memset"),
        bus,
    }
}

impl Image {
    /// Calls the routine at `pc` with `args` in a0..a2; returns a0 and the cycles it took.
    fn call(&mut self, pc: u32, args: [u32; 3]) -> (u32, u64) {
        let mut hart = Hart::new(HartConfig::data_movement(0, pc));
        hart.set_reg(1, RETURN);
        for (i, a) in args.into_iter().enumerate() {
            hart.set_reg(10 + i, a);
        }
        let stop = hart.run(&mut self.bus, 1_000_000);
        assert_eq!(stop, Stop::Ecall { pc: RETURN }, "the call did not return");
        (hart.reg(10), hart.cycle())
    }

    fn bytes(&mut self, at: u32, len: usize) -> &mut [u8] {
        &mut self.bus.bytes_mut()[at as usize..at as usize + len]
    }
}

const KERNELS: [&str; 3] = ["reader", "writer", "compute"];

#[test]
fn memcpy_copies_exactly_the_bytes_asked_at_every_alignment() {
    for kernel in KERNELS {
        let mut img = image(kernel);
        let source: Vec<u8> = (0..64u32).map(|i| (i * 37 + 11) as u8).collect();
        img.bytes(SRC, 64).copy_from_slice(&source);
        for len in 0..=40usize {
            for d in 0..4u32 {
                for s in 0..4u32 {
                    img.bytes(DST, 64).fill(GUARD);
                    let (ret, _) = img.call(img.memcpy, [DST + d, SRC + s, len as u32]);
                    let case = format!("{kernel}: memcpy(dst + {d}, src + {s}, {len})");
                    assert_eq!(ret, DST + d, "{case} returns its destination");
                    let out = img.bytes(DST, 64).to_vec();
                    let d = d as usize;
                    let s = s as usize;
                    assert!(out[..d].iter().all(|&b| b == GUARD), "{case}: before");
                    assert_eq!(out[d..d + len], source[s..s + len], "{case}: the bytes");
                    assert!(out[d + len..].iter().all(|&b| b == GUARD), "{case}: after");
                    assert_eq!(img.bytes(SRC, 64), &source[..], "{case}: the source");
                }
            }
        }
    }
}

#[test]
fn memset_fills_exactly_the_bytes_asked_at_every_alignment() {
    for kernel in KERNELS {
        let mut img = image(kernel);
        for len in 0..=40usize {
            for d in 0..4u32 {
                img.bytes(DST, 64).fill(GUARD);
                // Only the low byte of the value counts (C's `memset` takes an `int`).
                let (ret, _) = img.call(img.memset, [DST + d, 0x1234_565A, len as u32]);
                let case = format!("{kernel}: memset(dst + {d}, 0x5A, {len})");
                assert_eq!(ret, DST + d, "{case} returns its destination");
                let out = img.bytes(DST, 64).to_vec();
                let d = d as usize;
                assert!(out[..d].iter().all(|&b| b == GUARD), "{case}: before");
                assert!(
                    out[d..d + len].iter().all(|&b| b == 0x5A),
                    "{case}: the bytes"
                );
                assert!(out[d + len..].iter().all(|&b| b == GUARD), "{case}: after");
            }
        }
    }
}

/// A copy or fill of 1,027 bytes from a word boundary moves 256 words and three bytes: under
/// two cycles a byte (a byte at a time costs about seven), whether the length is a multiple of
/// four or not, and a copy from one byte into a word to another the same (its head goes byte by
/// byte, then words).
#[test]
fn long_copies_and_fills_go_by_words() {
    const LEN: u32 = 1027;
    let mut img = image("reader");
    for (d, s) in [(0, 0), (1, 1), (3, 3)] {
        let (_, cycles) = img.call(img.memcpy, [DST + d, SRC + s, LEN]);
        assert!(
            cycles < 2 * LEN as u64,
            "memcpy(dst + {d}, src + {s}, {LEN}): {cycles} cycles"
        );
        let (_, cycles) = img.call(img.memset, [DST + d, 0, LEN]);
        assert!(
            cycles < 2 * LEN as u64,
            "memset(dst + {d}, 0, {LEN}): {cycles} cycles"
        );
    }
    // Pointers placed differently within their words cannot share word accesses.
    let (_, cycles) = img.call(img.memcpy, [DST + 1, SRC, LEN]);
    assert!(
        cycles > 4 * LEN as u64,
        "memcpy(dst + 1, src, {LEN}): {cycles} cycles"
    );
}
