//! The komorebi firmware image header and the boot handshake.
//!
//! Every komorebi kernel image (reader on BRISC, writer on NCRISC, compute on TRISC0) carries an
//! [`ImageHeader`] in one of its loaded segments, at [`header_addr`] of its role in L1. A loader
//! finds it there after writing the segments; the simulator recognises a komorebi image by it
//! (never by a file name) when the core is released from reset.
//!
//! # Boot handshake
//! Before releasing a tile's cores the loader writes the control-block header (the magic word,
//! the ABI version, the tile's logical coordinates, the harvest mask and the chip word) and zeroes the three boot words at [`BOOT`]. Each
//! kernel, once its checks pass and it has set itself up, writes [`BOOT_UP`] into its own boot
//! word ([`boot_check`], then [`announce_up`]); a kernel whose checks fail writes
//! [`boot_failed`] of a [`BootFailure`] and does not run. The loader waits
//! (bounded) until every boot word of every tile is [`BOOT_UP`].
//!
//! Header words (8, little-endian):
//!
//! | word | what |
//! |---|---|
//! | 0 | [`IMAGE_MAGIC`] (`KMFW`) |
//! | 1 | [`crate::abi::ABI_VERSION`] the image was built for |
//! | 2 | role index (0 reader, 1 writer, 2 compute) |
//! | 3 | entry: the reset PC the core must start at |
//! | 4 | code start (L1) |
//! | 5 | code bytes |
//! | 6 | bits 0..15: the PCI device id of the chip the image was built for (0: any chip); bits 16..31: the id of the handler the image carries (0: any) |
//! | 7 | check: `komorebi_broadcast::args::check_word` over words 0..7 |

use komorebi_hal::{ControlBlock, LogicalXy, Role};

use komorebi_broadcast::args::check_word;

use crate::abi;

/// Word 0 of every komorebi image header: `KMFW` in little-endian byte order.
pub const IMAGE_MAGIC: u32 = u32::from_le_bytes(*b"KMFW");
/// L1 address of the reader's header; the writer's and compute's follow at
/// [`IMAGE_HEADER_BYTES`] steps. Below the control block (0x4000), above L1 bytes 16..31 that
/// ARC firmware reserves and the reader's boot stub at 0x0.
pub const IMAGE_HEADER_BASE: u32 = 0x3F00;
/// Bytes of one header.
pub const IMAGE_HEADER_BYTES: u32 = 32;
/// Words of one header.
pub const IMAGE_HEADER_WORDS: usize = 8;

/// Control-block offset of the three boot words (reader, writer, compute).
pub const BOOT: u32 = 0x030;
/// The boot word of a kernel that came up.
pub const BOOT_UP: u32 = abi::MAGIC;
/// Top half of a boot word that reports a failed check.
pub const BOOT_FAILED_TAG: u32 = 0xB0F0_0000;

/// L1 address of `role`'s image header.
pub const fn header_addr(role: Role) -> u32 {
    IMAGE_HEADER_BASE + IMAGE_HEADER_BYTES * role.index() as u32
}

/// Control-block offset of `role`'s boot word.
pub const fn boot_word(role: Role) -> u32 {
    abi::kernel_word(BOOT, role)
}

/// Why a kernel refused to run at boot.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BootFailure {
    /// The control-block header's ABI version is not the image's.
    AbiVersion = 1,
    /// The header's tile does not match the tile's own coordinates (`NOC_ID_LOGICAL`).
    WrongTile = 2,
    /// The header's harvest mask is not one the chip allows (the rule each kernel is given).
    BadHarvest = 3,
    /// The header's harvest mask disagrees with the chip: the NIU's coordinate translation
    /// puts this tile (`NOC_ID_LOGICAL`) elsewhere than the mask's translation does, or the
    /// mask harvests the tile's own column.
    HarvestMismatch = 4,
    /// The header's chip word ([`abi::ChipWord`]) has a reserved bit set or no such bank.
    BadChip = 5,
    /// The header's magic word is not [`abi::MAGIC`]: no host set this control block up (L1
    /// as reset or another program left it).
    BadMagic = 6,
}

impl BootFailure {
    /// Every failure, in code order.
    pub const ALL: [BootFailure; 6] = [
        Self::AbiVersion,
        Self::WrongTile,
        Self::BadHarvest,
        Self::HarvestMismatch,
        Self::BadChip,
        Self::BadMagic,
    ];

    /// What it means, in words.
    pub const fn describe(self) -> &'static str {
        match self {
            Self::AbiVersion => "control-block ABI version differs from the image's",
            Self::WrongTile => "header's tile is not this tile's own coordinates",
            Self::BadHarvest => "header's harvest mask is invalid",
            Self::HarvestMismatch => {
                "header's harvest mask disagrees with the chip's coordinate translation"
            }
            Self::BadChip => "header's chip word is invalid",
            Self::BadMagic => "control-block header has no magic word: no host set it up",
        }
    }
}

/// The boot word of a kernel whose check `why` failed.
pub const fn boot_failed(why: BootFailure) -> u32 {
    BOOT_FAILED_TAG | why as u32
}

/// What a boot word says.
pub fn boot_state(word: u32) -> BootState {
    match word {
        0 => BootState::NotUp,
        BOOT_UP => BootState::Up,
        w if w & 0xFFFF_0000 == BOOT_FAILED_TAG => BootFailure::ALL
            .into_iter()
            .find(|f| *f as u32 == w & 0xFFFF)
            .map_or(BootState::Garbage(w), BootState::Failed),
        w => BootState::Garbage(w),
    }
}

/// A boot word, decoded.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BootState {
    /// Still 0: the kernel has not come up (yet).
    NotUp,
    /// The kernel came up.
    Up,
    /// The kernel's check failed.
    Failed(BootFailure),
    /// Neither: something else wrote the word.
    Garbage(u32),
}

impl core::fmt::Display for BootState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotUp => f.write_str("not up"),
            Self::Up => f.write_str("up"),
            Self::Failed(why) => write!(f, "refused to run: {}", why.describe()),
            Self::Garbage(w) => write!(f, "boot word {w:#010x} (not written by komorebi)"),
        }
    }
}

/// A kernel's boot check, run once at its start before it takes any command: the control-block
/// header must carry the magic word, this build's ABI version, the tile's own logical coordinates and a harvest
/// mask `harvest_valid` accepts (the chip's rule: this crate knows no chip, and every kernel of
/// a tile applies the same one, so a mask one kernel refuses no other accepts). `own` is what the kernel learned of its tile from the chip (its NIU's
/// `NOC_NODE_ID`, `NIU_CFG_0` and `NOC_ID_LOGICAL`, checked against the header's harvest mask):
/// its logical coordinates, or the failure that check found; `None` for a kernel without an
/// NIU of its own (compute), which checks the rest. Writes the kernel's boot word: [`BOOT_UP`],
/// or the failure, which is then returned and the kernel must not run. `Err(None)`: the control
/// block itself could not be read or written.
///
/// [`boot_check`] then [`announce_up`]: a kernel with setup of its own between its check and its
/// first command calls the two apart, so that its boot word says it is ready.
pub fn come_up<K: ControlBlock>(
    ctrl: &mut K,
    role: Role,
    harvest_valid: fn(u32) -> bool,
    own: Option<Result<LogicalXy, BootFailure>>,
) -> Result<(), Option<BootFailure>> {
    boot_check(ctrl, role, harvest_valid, own)?;
    announce_up(ctrl, role).map_err(|_| None)
}

/// [`come_up`]'s check without its [`BOOT_UP`]: writes the boot word only when the check fails
/// (the failure, which is then returned). A kernel whose check passes sets itself up (its NoC
/// handle, its command state) and then [`announce_up`]: the host posts no command before every
/// boot word is up, so a command never waits for a kernel's setup, and the first command's time
/// is a command's, not a boot's.
pub fn boot_check<K: ControlBlock>(
    ctrl: &mut K,
    role: Role,
    harvest_valid: fn(u32) -> bool,
    own: Option<Result<LogicalXy, BootFailure>>,
) -> Result<(), Option<BootFailure>> {
    let magic = ctrl.load(abi::HEADER_MAGIC).map_err(|_| None)?;
    let version = ctrl.load(abi::HEADER_VERSION).map_err(|_| None)?;
    let tile = ctrl.load(abi::HEADER_TILE).map_err(|_| None)?;
    let harvest = ctrl.load(abi::HEADER_HARVEST).map_err(|_| None)?;
    let chip = ctrl.load(abi::HEADER_CHIP).map_err(|_| None)?;
    let failure = if magic != abi::MAGIC {
        Some(BootFailure::BadMagic)
    } else if version != abi::ABI_VERSION {
        Some(BootFailure::AbiVersion)
    } else if !harvest_valid(harvest) {
        Some(BootFailure::BadHarvest)
    } else if abi::ChipWord::decode(chip).is_none() {
        Some(BootFailure::BadChip)
    } else {
        match own {
            Some(Err(f)) => Some(f),
            Some(Ok(own)) if tile != own.x as u32 | (own.y as u32) << 8 => {
                Some(BootFailure::WrongTile)
            }
            _ => None,
        }
    };
    match failure {
        None => Ok(()),
        Some(f) => {
            ctrl.store(boot_word(role), boot_failed(f))
                .map_err(|_| None)?;
            Err(Some(f))
        }
    }
}

/// Writes [`BOOT_UP`] into `role`'s boot word: the kernel passed its [`boot_check`] and is
/// ready for its first command. An error: the control block could not be written.
pub fn announce_up<K: ControlBlock>(ctrl: &mut K, role: Role) -> Result<(), K::Error> {
    ctrl.store(boot_word(role), BOOT_UP)
}

/// One kernel image's header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ImageHeader {
    /// The kernel this image is.
    pub role: Role,
    /// The reset PC the core must start at.
    pub entry: u32,
    /// First L1 address of the code. Informational: the loader takes the segments from the ELF
    /// file and checks none of these two.
    pub code_start: u32,
    /// Bytes of code; komorebi's images write 0 (informational, as `code_start`).
    pub code_bytes: u32,
    /// The PCI device id of the chip the image was built for, which a loader compares with the
    /// device's (an image's code drives one chip's registers); 0: any chip (the header-only
    /// images a simulator runs its native kernels for).
    pub device_id: u16,
    /// The id of the handler the image carries (an image has room for one: the broadcast
    /// handler's or the handshake's), which a host compares with the commands it will post;
    /// 0: any (the header-only images of the native kernels, which carry every handler).
    pub handler: u16,
}

/// Why header words are not a komorebi image header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ImageError {
    /// Word 0 is not [`IMAGE_MAGIC`].
    Magic(u32),
    /// Word 0 is [`IMAGE_MAGIC`] but the bytes end before the header does: how many there
    /// are.
    Short(u32),
    /// Built for another control-block ABI.
    Version {
        /// The image's.
        found: u32,
        /// This build's.
        expected: u32,
    },
    /// The role word is not 0, 1 or 2.
    Role(u32),
    /// The check word does not match.
    Check {
        /// Stored.
        found: u32,
        /// Computed.
        expected: u32,
    },
}

impl core::fmt::Display for ImageError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Magic(w) => write!(
                f,
                "no komorebi image header (word 0 is {w:#010x}, not KMFW)"
            ),
            Self::Version { found, expected } => {
                write!(
                    f,
                    "image built for ABI version {found}, this is version {expected}"
                )
            }
            Self::Role(r) => write!(
                f,
                "role word {r} is not 0 (reader), 1 (writer) or 2 (compute)"
            ),
            Self::Short(n) => write!(
                f,
                "the header ends after {n} bytes (a header has {IMAGE_HEADER_BYTES})"
            ),
            Self::Check { found, expected } => write!(
                f,
                "check word {found:#010x} does not match the header ({expected:#010x})"
            ),
        }
    }
}

impl core::error::Error for ImageError {}

impl ImageHeader {
    /// The header's words (a `const fn`, so firmware can place its header in a static).
    pub const fn encode(&self) -> [u32; IMAGE_HEADER_WORDS] {
        let mut w = [
            IMAGE_MAGIC,
            abi::ABI_VERSION,
            self.role.index() as u32,
            self.entry,
            self.code_start,
            self.code_bytes,
            self.device_id as u32 | (self.handler as u32) << 16,
            0,
        ];
        let (body, _) = w.split_at(7);
        w[7] = check_word(body);
        w
    }

    /// The header in `words`, checked.
    pub fn decode(words: &[u32; IMAGE_HEADER_WORDS]) -> Result<Self, ImageError> {
        if words[0] != IMAGE_MAGIC {
            return Err(ImageError::Magic(words[0]));
        }
        if words[1] != abi::ABI_VERSION {
            return Err(ImageError::Version {
                found: words[1],
                expected: abi::ABI_VERSION,
            });
        }
        let expected = check_word(&words[..7]);
        if words[7] != expected {
            return Err(ImageError::Check {
                found: words[7],
                expected,
            });
        }
        let role = *Role::ALL
            .get(words[2] as usize)
            .ok_or(ImageError::Role(words[2]))?;
        Ok(Self {
            role,
            entry: words[3],
            code_start: words[4],
            code_bytes: words[5],
            device_id: words[6] as u16,
            handler: (words[6] >> 16) as u16,
        })
    }

    /// The header's bytes, as a loader writes them.
    pub fn to_bytes(&self) -> [u8; IMAGE_HEADER_BYTES as usize] {
        let mut out = [0; IMAGE_HEADER_BYTES as usize];
        for (chunk, w) in out.chunks_exact_mut(4).zip(self.encode()) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// The header in `bytes` (at least [`IMAGE_HEADER_BYTES`]), checked.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ImageError> {
        let mut w = [0u32; IMAGE_HEADER_WORDS];
        for (i, word) in w.iter_mut().enumerate() {
            let Some(b) = bytes.get(4 * i..4 * i + 4) else {
                // Bytes that do not start like a header are none; a header cut short is one.
                // (Fewer than four bytes are no header: a loader looks at every role's place,
                // and a segment may end just past one.)
                return Err(match w[0] {
                    IMAGE_MAGIC if i > 0 => ImageError::Short(bytes.len() as u32),
                    first => ImageError::Magic(first),
                });
            };
            *word = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        Self::decode(&w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_refusal() {
        let h = ImageHeader {
            role: Role::Writer,
            entry: 0x1_2000,
            code_start: 0x1_2000,
            code_bytes: 24_000,
            device_id: 0x401E,
            handler: 2,
        };
        assert_eq!(ImageHeader::from_bytes(&h.to_bytes()), Ok(h));
        assert_eq!(h.encode()[6], 0x0002_401E);
        let mut w = h.encode();
        w[3] ^= 4;
        assert!(matches!(
            ImageHeader::decode(&w),
            Err(ImageError::Check { .. })
        ));
        let mut w = h.encode();
        w[0] = 0;
        assert_eq!(ImageHeader::decode(&w), Err(ImageError::Magic(0)));
        let mut w = h.encode();
        w[1] = 9;
        assert_eq!(
            ImageHeader::decode(&w),
            Err(ImageError::Version {
                found: 9,
                expected: abi::ABI_VERSION
            })
        );
        let mut w = h.encode();
        w[2] = 3;
        w[7] = check_word(&w[..7]);
        assert_eq!(ImageHeader::decode(&w), Err(ImageError::Role(3)));
        // Cut short: a header's start is one whose bytes end early; other bytes are none.
        let bytes = h.to_bytes();
        assert_eq!(
            ImageHeader::from_bytes(&bytes[..28]),
            Err(ImageError::Short(28))
        );
        assert_eq!(
            ImageHeader::from_bytes(&bytes[..2]),
            Err(ImageError::Magic(0))
        );
        assert_eq!(ImageHeader::from_bytes(&[]), Err(ImageError::Magic(0)));
        let mut other = bytes;
        other[0] = 0x13;
        assert!(matches!(
            ImageHeader::from_bytes(&other[..28]),
            Err(ImageError::Magic(_))
        ));
        assert_eq!(header_addr(Role::Compute), 0x3F40);
        assert_eq!(boot_word(Role::Writer), 0x034);
    }

    #[test]
    fn boot_words() {
        assert_eq!(boot_state(0), BootState::NotUp);
        assert_eq!(boot_state(BOOT_UP), BootState::Up);
        for f in BootFailure::ALL {
            assert_eq!(boot_state(boot_failed(f)), BootState::Failed(f));
        }
        assert_eq!(boot_state(7), BootState::Garbage(7));
        assert_eq!(
            boot_state(BOOT_FAILED_TAG | 99),
            BootState::Garbage(BOOT_FAILED_TAG | 99)
        );
    }
}
