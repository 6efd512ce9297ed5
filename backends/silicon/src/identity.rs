//! Where a tile is, as the chip says: NIU0's raw `NOC_NODE_ID` and, when coordinates are
//! translated, the translated coordinates the ARC firmware programmed into `NOC_ID_LOGICAL`
//! (`NIU_BASE + 0x148`, bits 0..5 x, 6..11 y; tt-metal reads its own coordinates there).
//! [`TileIdentity::logical`] checks a harvest mask against them, so a host that wrote the wrong
//! mask gets a refusal at boot instead of kernels that compute wrong addresses.
//!
//! Whether coordinates are translated is the host's word (the control block's chip word, from
//! the PCIe NIU's `NIU_CFG_0` bit 14), not this NIU's `NIU_CFG_0`: on a card the ARC firmware
//! sets the bit on every NIU alike, and ttsim translates every coordinate while leaving the
//! Tensix NIUs' `NIU_CFG_0` at 0. A tile whose `NOC_ID_LOGICAL` disagrees with the host's
//! translation is refused either way.

use blackhole_pac::grid::{Noc0Xy, TileKind};
use blackhole_pac::harvest::HarvestMask;
use blackhole_pac::niu::{CmdBufId, Niu, cfg};
use blackhole_pac::translate::Translation;
use komorebi_hal::LogicalXy;

/// Why a harvest mask does not fit the tile the chip says this is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IdentityError {
    /// `NOC_NODE_ID` is not a Tensix tile.
    NotTensix,
    /// The mask harvests this tile's own column.
    HarvestedColumn,
    /// Under translation, `NOC_ID_LOGICAL` holds `chip`; the mask's translation gives `mask`.
    TranslationDisagrees {
        /// `NOC_ID_LOGICAL`'s coordinates.
        chip: (u8, u8),
        /// The mask's translated coordinates of this tile.
        mask: (u8, u8),
    },
}

/// What a tile's NIU0 says about where the tile is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TileIdentity {
    /// Raw NoC0 coordinates (`NOC_NODE_ID`).
    pub raw: Noc0Xy,
    /// `NOC_ID_LOGICAL` when translation is on; `None` when it is off.
    pub translated: Option<(u8, u8)>,
}

impl TileIdentity {
    /// Reads NIU0's `NOC_NODE_ID` and, when the host says coordinates are `translated`,
    /// `NOC_ID_LOGICAL`. `None` if `NOC_NODE_ID` is off the 17 x 12 grid.
    pub fn read(niu0: Niu, translated: bool) -> Option<Self> {
        let node = niu0.cmd_buf(CmdBufId::WRITE).node_id().read();
        let raw = Noc0Xy::new(node.x(), node.y())?;
        let translated = translated.then(|| {
            let w = niu0.cfg(cfg::NOC_ID_LOGICAL).read();
            ((w & 0x3F) as u8, (w >> 6 & 0x3F) as u8)
        });
        Some(Self { raw, translated })
    }

    /// The tile's logical coordinates on a chip with `harvest`, after checking that the mask
    /// fits what the chip says.
    pub fn logical(&self, harvest: HarvestMask) -> Result<LogicalXy, IdentityError> {
        if !matches!(self.raw.memory(), Some(TileKind::Tensix)) {
            return Err(IdentityError::NotTensix);
        }
        if let Some(chip) = self.translated {
            let mask = Translation::new(harvest)
                .tensix_at(self.raw)
                .ok_or(IdentityError::NotTensix)?;
            if mask != chip {
                return Err(IdentityError::TranslationDisagrees { chip, mask });
            }
        }
        let (x, y) = harvest
            .noc0_to_logical(self.raw.x(), self.raw.y())
            .ok_or(IdentityError::HarvestedColumn)?;
        Ok(LogicalXy::new(x, y))
    }

    /// The translation the NIUs apply, for a mask that [`TileIdentity::logical`] accepted and
    /// the fused DRAM bank the host reported; `None` when translation is off.
    pub fn translation(&self, harvest: HarvestMask, fused_dram: Option<u8>) -> Option<Translation> {
        self.translated
            .map(|_| Translation::with_dram(harvest, fused_dram))
    }
}
