//! Cores, soft reset and boot: what the chip's five baby RISC-V cores per Tensix are, how a
//! chip starts ([`Boot`]), why a released core did not run ([`BootFailure`]), and the check a
//! released core's image must pass.
//!
//! A released core whose image is a valid komorebi image for its role runs what the host's boot
//! hook (`Sim::set_boot_hook`) starts: the *native* kernel of that role, or the image itself on
//! the core's RISC-V hart (`Sim::spawn_firmware`). What the simulator checks is what decides, on a card, whether
//! the core would start the image the loader meant: the image header at
//! `komorebi_kernel::image::header_addr(role)` in the tile's L1, and the core's reset PC.
//!
//! Leaf module: imports nothing of the crate.

use blackhole_pac::tensix;
use komorebi_hal::Role;
use komorebi_kernel::image::{ImageHeader, header_addr};

/// How the cores of every Tensix stand when the simulated chip starts.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Boot {
    /// No core is held in reset (every soft-reset bit clear) and nothing runs until the host
    /// spawns kernels with `Sim::spawn`: the simulator's behaviour before it had a boot model.
    #[default]
    Running,
    /// A card after reset: every core's soft-reset bit is set and nothing runs until the host
    /// loads images and clears bits through a TLB window (`Sim::spawn` still starts a task
    /// whenever it is called; the boot hook is the way a release calls it).
    HeldInReset,
}

impl Boot {
    /// The value of every tile's `RISCV_DEBUG_REG_SOFT_RESET_0` at cycle 0.
    pub const fn soft_reset(self) -> u32 {
        match self {
            Self::Running => 0,
            Self::HeldInReset => tensix::SOFT_RESET_ALL_CORES,
        }
    }
}

/// One of the five baby RISC-V cores of a Tensix tile.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Core {
    /// BRISC (RISCV_0): komorebi's reader ([`Role::Reader`]). Soft-reset bit 11.
    Brisc,
    /// TRISC0 (unpack): komorebi's compute kernel ([`Role::Compute`]). Bit 12.
    Trisc0,
    /// TRISC1 (math): unused by komorebi. Bit 13.
    Trisc1,
    /// TRISC2 (pack): unused by komorebi. Bit 14.
    Trisc2,
    /// NCRISC (RISCV_1): komorebi's writer ([`Role::Writer`]). Bit 18.
    Ncrisc,
}

impl Core {
    /// Every core, in soft-reset bit order.
    pub const ALL: [Core; 5] = [
        Self::Brisc,
        Self::Trisc0,
        Self::Trisc1,
        Self::Trisc2,
        Self::Ncrisc,
    ];

    /// The core's bit in `RISCV_DEBUG_REG_SOFT_RESET_0` (set: held in reset).
    pub const fn reset_bit(self) -> u32 {
        1 << match self {
            Self::Brisc => 11,
            Self::Trisc0 => 12,
            Self::Trisc1 => 13,
            Self::Trisc2 => 14,
            Self::Ncrisc => 18,
        }
    }

    /// The komorebi kernel this core runs; `None` for TRISC1 and TRISC2.
    pub const fn role(self) -> Option<Role> {
        match self {
            Self::Brisc => Some(Role::Reader),
            Self::Ncrisc => Some(Role::Writer),
            Self::Trisc0 => Some(Role::Compute),
            Self::Trisc1 | Self::Trisc2 => None,
        }
    }

    /// The core that runs `role`.
    pub const fn of_role(role: Role) -> Core {
        match role {
            Role::Reader => Self::Brisc,
            Role::Writer => Self::Ncrisc,
            Role::Compute => Self::Trisc0,
        }
    }

    /// The core's name as the ISA documentation spells it (`"BRISC"`, `"TRISC0"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Brisc => "BRISC",
            Self::Trisc0 => "TRISC0",
            Self::Trisc1 => "TRISC1",
            Self::Trisc2 => "TRISC2",
            Self::Ncrisc => "NCRISC",
        }
    }
}

impl std::fmt::Display for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A core the host released from soft reset that did not start: nothing runs on it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BootFailure {
    /// NoC0 coordinates of the tile.
    pub tile: (u8, u8),
    /// Which core.
    pub core: Core,
    /// Why, in words (the header's defect, the mismatched PC, or the hook's error).
    pub why: String,
    /// The cycle of the release.
    pub at: u64,
}

impl serde::Serialize for Core {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl std::fmt::Display for BootFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cycle {}: {} of tile {:?} did not start: {}",
            self.at, self.core, self.tile, self.why
        )
    }
}

/// Whether a released `core` starts a komorebi image: `header` is the 32 bytes at
/// `header_addr(role)` of the tile's L1 and `pc` the core's effective reset PC. The role it
/// runs, or why not.
///
/// BRISC's reset PC is fixed at 0x0, where the loader puts a boot stub that jumps to the
/// image's entry; the simulator cannot run the stub, so for BRISC only the header (and its
/// role) is checked. NCRISC and TRISC0 must start exactly at the header's entry.
pub(crate) fn check(core: Core, header: &[u8], pc: u32) -> Result<Role, String> {
    let Some(role) = core.role() else {
        return Err(format!(
            "{core} is not used by komorebi (only BRISC, NCRISC and TRISC0 run kernels)"
        ));
    };
    let at = header_addr(role);
    let h = ImageHeader::from_bytes(header)
        .map_err(|e| format!("no valid komorebi image header at L1 {at:#x}: {e}"))?;
    if h.role != role {
        return Err(format!(
            "the header at L1 {at:#x} is a {:?} image, not the {role:?} image {core} runs",
            h.role
        ));
    }
    if core != Core::Brisc && pc != h.entry {
        return Err(format!(
            "reset PC {pc:#x} is not the image's entry {:#x}",
            h.entry
        ));
    }
    Ok(role)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_roles_and_the_check() {
        let all: u32 = Core::ALL.iter().map(|c| c.reset_bit()).sum();
        assert_eq!(all, tensix::SOFT_RESET_ALL_CORES);
        for role in Role::ALL {
            assert_eq!(Core::of_role(role).role(), Some(role));
        }
        let h = ImageHeader {
            role: Role::Writer,
            entry: 0x1_2000,
            code_start: 0x1_2000,
            code_bytes: 64,
            device_id: 0,
            handler: 0,
        };
        let b = h.to_bytes();
        assert_eq!(check(Core::Ncrisc, &b, 0x1_2000), Ok(Role::Writer));
        assert!(
            check(Core::Ncrisc, &b, 0x1_3000)
                .unwrap_err()
                .contains("0x13000")
        );
        assert!(
            check(Core::Brisc, &b, 0)
                .unwrap_err()
                .contains("Writer image")
        );
        assert!(check(Core::Trisc1, &b, 0).unwrap_err().contains("not used"));
        assert!(
            check(Core::Trisc0, &[0; 32], 0x6000)
                .unwrap_err()
                .contains("KMFW")
        );
    }
}
