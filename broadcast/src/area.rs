//! The broadcast areas of the control block: where VALID, the marker source, the first give-up,
//! the statistics and the DONE-BY table of each broadcast live, and how their words read.
//!
//! Two areas of [`AREA_BYTES`] from control-block offset [`CONTROL_BROADCAST`] (0xA00), one per
//! broadcast id, in 16-byte slots (one NoC L1 write unit each, so a marker write never shares
//! a unit with another word):
//!
//! | offset in the area | slot | words |
//! |---|---|---|
//! | 0x000 | VALID | `seq << 16 \| blocks cast so far` |
//! | 0x010 | marker source | this core's outgoing DONE marker, the source of its NoC write |
//! | 0x020 | first give-up | `where \| broadcast << 8`, block, command sequence number |
//! | 0x030 | statistics | blocks of this command, wait cycles (saturating `u32`) |
//! | 0x040 + 0x10 (r - 1) | DONE-BY rank r (1..=15) | `seq << 16 \| blocks rank r's compute popped` |
//! | 0x130 | (spare) | |
//!
//! `seq` is the low half of the command's sequence number, so a word an earlier command left
//! never counts for this one: a command that completes clears its words (`finish`), and the
//! host never gives a later command the low half of one that did not (`komorebi`'s
//! `Session`), whose words may stay.

/// Control-block offset of broadcast area 0 (`KM_CONTROL_BROADCAST`).
pub const CONTROL_BROADCAST: u32 = 0xA00;
/// Bytes per broadcast area.
pub const AREA_BYTES: u32 = 0x140;
/// Bytes per slot.
pub const SLOT_BYTES: u32 = 0x10;
/// Broadcasts a program may run at once.
pub const MAX_BROADCASTS: u8 = 2;
/// Receivers a broadcast may have (DONE-BY ranks 1..=15).
pub const MAX_RECEIVERS: u8 = 15;

/// Offset of the VALID word in an area.
pub const VALID: u32 = 0x00;
/// Offset of the marker source word.
pub const MARKER_SOURCE: u32 = 0x10;
/// Offset of the first give-up's `where | broadcast << 8 | (sequence & 0xFFFF) << 16` word (the
/// sequence's low half, so that the where words of two records differ: see
/// [`GiveUpRecord::read`]).
pub const GIVE_UP_WHERE: u32 = 0x20;
/// Offset of the first give-up's block.
pub const GIVE_UP_BLOCK: u32 = 0x24;
/// Offset of the first give-up's command sequence number.
pub const GIVE_UP_SEQUENCE: u32 = 0x28;
/// Offset of the statistics' block count.
pub const STATS_BLOCKS: u32 = 0x30;
/// Offset of the statistics' wait cycles.
pub const STATS_WAIT_CYCLES: u32 = 0x34;
/// Offset of DONE-BY rank 1.
pub const DONE_BY_FIRST: u32 = 0x40;

/// Control-block offset of broadcast `id`'s area (`id` 0 or 1).
pub const fn area(id: u8) -> u32 {
    CONTROL_BROADCAST + (id as u32 & 1) * AREA_BYTES
}

/// Control-block offset of DONE-BY rank `rank` (1..=15) of broadcast `id`.
pub const fn done_by(id: u8, rank: u8) -> u32 {
    area(id) + DONE_BY_FIRST + (rank as u32).saturating_sub(1) * SLOT_BYTES
}

/// Where a core gave up (the broadcast specification's names).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Where {
    /// The sender waiting for DONE markers or for its own NoC barriers.
    BroadcastDone = 1,
    /// A receiver waiting for a block (its VALID).
    BroadcastValid = 2,
    /// Waiting for its own compute, or for its last markers to leave.
    BroadcastFree = 3,
    /// Bad broadcast words.
    BroadcastBegin = 4,
}

impl Where {
    /// The code in the give-up word (0 means no give-up).
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The place of code `code`, if it is one.
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Self::BroadcastDone),
            2 => Some(Self::BroadcastValid),
            3 => Some(Self::BroadcastFree),
            4 => Some(Self::BroadcastBegin),
            _ => None,
        }
    }
}

/// `Where::name`, and the same names for defmt, from one list.
macro_rules! place_names {
    ($($place:ident => $name:literal,)*) => {
        impl Where {
            /// The specification's name: `broadcast_done`, `broadcast_valid`, `broadcast_free`,
            /// `broadcast_begin`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$place => $name,)*
                }
            }
        }

        /// Logged by its name in the specification (`broadcast_done`), as the host's records
        /// print it: an interned string, so the names stay in the ELF's defmt table, not in the
        /// image.
        #[cfg(feature = "defmt")]
        impl defmt::Format for Where {
            fn format(&self, f: defmt::Formatter<'_>) {
                let name = match self {
                    $(Self::$place => defmt::intern!($name),)*
                };
                defmt::write!(f, "{=istr}", name)
            }
        }
    };
}

place_names! {
    BroadcastDone => "broadcast_done",
    BroadcastValid => "broadcast_valid",
    BroadcastFree => "broadcast_free",
    BroadcastBegin => "broadcast_begin",
}

impl core::fmt::Display for Where {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A first give-up as its three words record it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct GiveUpRecord {
    /// Where.
    pub place: Where,
    /// The broadcast id as the words gave it (for `broadcast_begin`, possibly garbage).
    pub broadcast: u8,
    /// The block the call was about.
    pub block: u32,
    /// The command's sequence number.
    pub sequence: u32,
}

impl GiveUpRecord {
    /// The three words, in slot order.
    pub const fn words(&self) -> [u32; 3] {
        [
            self.place.code() as u32
                | (self.broadcast as u32) << 8
                | (self.sequence & 0xFFFF) << 16,
            self.block,
            self.sequence,
        ]
    }

    /// The record of area `id` as `word(offset)` reads the control block, read whole while its
    /// core may be writing it: the core clears the where word first and writes it last (its
    /// upper half the sequence's low half, so two records' where words differ), so a where word
    /// that reads the same before and after the block and sequence means they are its record's.
    /// Read again while it does not, at most three times; then `None`, as no record.
    pub fn read<E>(id: u8, mut word: impl FnMut(u32) -> Result<u32, E>) -> Result<Option<Self>, E> {
        let base = area(id);
        for _ in 0..3 {
            let w = [
                word(base + GIVE_UP_WHERE)?,
                word(base + GIVE_UP_BLOCK)?,
                word(base + GIVE_UP_SEQUENCE)?,
            ];
            if word(base + GIVE_UP_WHERE)? == w[0] {
                return Ok(Self::from_words(w));
            }
        }
        Ok(None)
    }

    /// The record three slot words hold, or `None` when the where-code is 0 (no give-up) or
    /// unknown.
    pub const fn from_words(words: [u32; 3]) -> Option<Self> {
        match Where::from_code(words[0] as u8) {
            Some(place) => Some(Self {
                place,
                broadcast: (words[0] >> 8) as u8,
                block: words[1],
                sequence: words[2],
            }),
            None => None,
        }
    }
}

/// A VALID or DONE word: `seq << 16 | count`.
pub const fn marker(seq: u16, count: u16) -> u32 {
    (seq as u32) << 16 | count as u32
}

/// The count of a VALID or DONE word if it carries `seq`, else `None` (a word an earlier command
/// left).
pub const fn marker_count(word: u32, seq: u16) -> Option<u16> {
    if (word >> 16) as u16 == seq {
        Some(word as u16)
    } else {
        None
    }
}

/// Empty blocks `finish` pushes so the next command starts at slot 0:
/// `(window - blocks % window) % window`.
pub const fn padding_blocks(window: u8, blocks: u32) -> u32 {
    if window == 0 {
        return 0;
    }
    let w = window as u32;
    (w - blocks % w) % w
}
