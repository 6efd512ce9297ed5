//! The chip these images are built for: Blackhole, or Wormhole B0 with the `wormhole` feature.
//! Nothing else in the firmware names a chip.

/// The chip these images are built for (Blackhole).
#[cfg(not(feature = "wormhole"))]
pub type Chip = komorebi_silicon::Blackhole;
/// The chip these images are built for (Wormhole B0: the `wormhole` feature).
#[cfg(feature = "wormhole")]
pub type Chip = komorebi_silicon::Wormhole;

/// `_start`'s first call, before any load from L1: the core configured as komorebi-silicon
/// needs it ([`komorebi_silicon::Chip::configure_core`]: on Blackhole its L0 data cache off, so
/// that loads see what the NoC wrote without a `fence`; the simulator flags an L1 load made with
/// the cache on). It touches no memory: data and bss are not set up yet.
#[unsafe(no_mangle)]
extern "C" fn configure_core() {
    <Chip as komorebi_silicon::Chip>::configure_core();
}

// The images carry the instructions of the chip they are built for and no other's: a Blackhole
// core runs Zba and Zbb, a Wormhole core has neither (it would run them as other instructions) (`.cargo/config.toml`, `wormhole.toml`).
#[cfg(all(
    feature = "wormhole",
    any(target_feature = "zba", target_feature = "zbb")
))]
compile_error!(
    "Wormhole images with Zba/Zbb: a Wormhole baby core is RV32IM alone; build them with \
     `--config wormhole.toml`"
);
#[cfg(all(
    not(feature = "wormhole"),
    target_arch = "riscv32",
    not(all(target_feature = "zba", target_feature = "zbb"))
))]
compile_error!(
    "Blackhole images without Zba/Zbb: build them in examples/firmware, whose \
     .cargo/config.toml sets the flags (a RUSTFLAGS variable replaces that list)"
);
