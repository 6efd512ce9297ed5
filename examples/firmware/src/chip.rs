//! The chip these images are built for: Blackhole, or Wormhole B0 with the `wormhole` feature.
//! Nothing else in the firmware names a chip.

/// The chip these images are built for (Blackhole).
#[cfg(not(feature = "wormhole"))]
pub type Chip = komorebi_silicon::Blackhole;
/// The chip these images are built for (Wormhole B0: the `wormhole` feature).
#[cfg(feature = "wormhole")]
pub type Chip = komorebi_silicon::Wormhole;

// `configure_core`, which `_start` calls before anything else: on Blackhole it turns the core's
// L0 data cache off (`cfg0` bit 3, after a `fence` writes back and drops what it holds), as
// tt-metal's firmware does at every boot by default (`set_l1_data_cache<false>`). With the cache
// off a load sees what the NoC wrote into L1, so komorebi-silicon issues no `fence` before its
// loads on Blackhole (`Chip::L0_DATA_CACHE`); the simulator flags an L1 load made with the cache
// on. A Wormhole core has no data cache and nothing to configure.
#[cfg(not(feature = "wormhole"))]
core::arch::global_asm!(
    ".section .text.configure_core, \"ax\"",
    ".global configure_core",
    "configure_core:",
    "fence",
    "li t0, {off}",
    "csrrs zero, {cfg0}, t0",
    "ret",
    off = const blackhole_pac::tensix::CFG0_L0_DATA_CACHE_OFF,
    cfg0 = const blackhole_pac::tensix::CSR_CFG0,
);
#[cfg(feature = "wormhole")]
core::arch::global_asm!(
    ".section .text.configure_core, \"ax\"",
    ".global configure_core",
    "configure_core:",
    "ret",
);

// The images carry the instructions of the chip they are built for and no other's: a Blackhole
// core runs Zba and Zbb, a Wormhole core faults on them (`.cargo/config.toml`, `wormhole.toml`).
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
