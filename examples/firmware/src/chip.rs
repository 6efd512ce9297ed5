//! The chip these images are built for: Blackhole, or Wormhole B0 with the `wormhole` feature.
//! Nothing else in the firmware names a chip.

/// The chip these images are built for (Blackhole).
#[cfg(not(feature = "wormhole"))]
pub type Chip = komorebi_silicon::Blackhole;
/// The chip these images are built for (Wormhole B0: the `wormhole` feature).
#[cfg(feature = "wormhole")]
pub type Chip = komorebi_silicon::Wormhole;
