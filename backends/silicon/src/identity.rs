//! Where a tile is, as the chip says: NIU0's raw `NOC_NODE_ID` and, when coordinates are
//! translated, the translated coordinates the ARC firmware programmed into `NOC_ID_LOGICAL`
//! (bits 0..5 x, 6..11 y; `NIU_BASE + 0x148` on Blackhole, `+ 0x138` on Wormhole; tt-metal
//! reads its own coordinates there).
//! [`TileIdentity::logical`] checks a harvest mask against them, so a host that wrote the wrong
//! mask gets a refusal at boot instead of kernels that compute wrong addresses.
//!
//! Whether coordinates are translated is the host's word (the control block's chip word, from
//! the PCIe NIU's `NIU_CFG_0` bit 14), not this NIU's `NIU_CFG_0`: on a card the ARC firmware
//! sets the bit on every NIU alike, and ttsim translates every coordinate while leaving the
//! Tensix NIUs' `NIU_CFG_0` at 0. A tile whose `NOC_ID_LOGICAL` disagrees with the host's
//! translation is refused either way.

use core::marker::PhantomData;

use komorebi_hal::LogicalXy;

use crate::chip::{Chip, Memory};

/// Why a harvest mask does not fit the tile the chip says this is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IdentityError {
    /// `NOC_NODE_ID` is not a Tensix tile.
    NotTensix,
    /// The mask harvests this tile's own column (Blackhole) or row (Wormhole).
    HarvestedColumn,
    /// Under translation, `NOC_ID_LOGICAL` holds `chip`; the mask's translation gives `mask`.
    TranslationDisagrees {
        /// `NOC_ID_LOGICAL`'s coordinates.
        chip: (u8, u8),
        /// The mask's translated coordinates of this tile.
        mask: (u8, u8),
    },
}

/// What a tile's NIU0 says about where the tile is, on chip `C`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TileIdentity<C: Chip> {
    /// Raw NoC0 coordinates (`NOC_NODE_ID`).
    pub raw: (u8, u8),
    /// `NOC_ID_LOGICAL` when translation is on; `None` when it is off.
    pub translated: Option<(u8, u8)>,
    chip: PhantomData<C>,
}

impl<C: Chip> TileIdentity<C> {
    /// Reads NIU0's `NOC_NODE_ID` and, when the host says coordinates are `translated`,
    /// `NOC_ID_LOGICAL`. `None` if `NOC_NODE_ID` is off the chip's grid.
    pub fn read(niu0: C::Niu, translated: bool) -> Option<Self> {
        let raw = C::niu_node(niu0);
        if raw.0 >= C::GRID.0 || raw.1 >= C::GRID.1 {
            return None;
        }
        let translated = translated.then(|| C::niu_id_logical(niu0));
        Some(Self {
            raw,
            translated,
            chip: PhantomData,
        })
    }

    /// The tile's logical coordinates on a chip with `harvest`, after checking that the mask
    /// fits what the chip says.
    pub fn logical(&self, harvest: C::Harvest) -> Result<LogicalXy, IdentityError> {
        let (x0, y0) = self.raw;
        if C::memory(x0, y0) != Some(Memory::Tensix) {
            return Err(IdentityError::NotTensix);
        }
        if let Some(chip) = self.translated {
            let mask = C::to_translated(&C::translation(harvest, None), x0, y0)
                .ok_or(IdentityError::NotTensix)?;
            if mask != chip {
                return Err(IdentityError::TranslationDisagrees { chip, mask });
            }
        }
        let (x, y) = C::logical(harvest, x0, y0).ok_or(IdentityError::HarvestedColumn)?;
        Ok(LogicalXy::new(x, y))
    }

    /// The translation the NIUs apply, for a mask that [`TileIdentity::logical`] accepted and
    /// the fused DRAM bank the host reported; `None` when translation is off.
    pub fn translation(
        &self,
        harvest: C::Harvest,
        fused_dram: Option<u8>,
    ) -> Option<C::Translation> {
        self.translated.map(|_| C::translation(harvest, fused_dram))
    }
}
