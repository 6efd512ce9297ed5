//! `BroadcastArgs`: the 11 program words that tell one core its part in one broadcast.
//!
//! The host computes them ([`crate::layout::broadcast_args`]) and puts them into the reader's or
//! writer's program words; the device decodes and checks them in `Broadcast::new`. Every core of
//! a command's group gets words for each broadcast of the command; a core outside the
//! broadcast's rectangle gets rank [`RANK_NONE`].
//!
//! # Layout, version 2 ([`ARGS_VERSION`])
//!
//! | word | bits | field |
//! |---|---|---|
//! | 0 | 31..16 `0x4B42` ("KB"), 15..8 version (2), 7..0 broadcast id (0, 1) | header |
//! | 1 | 7..0 rank (0 = sender, 1..=15 receivers, 0xFF = not in this broadcast), 15..8 receivers (0..=15), 23..16 window (1..=8), 31..24 NoC (0, 1) | shape |
//! | 2 | 7..0 circular buffer index, 15..8 reserved (0), 31..16 pages per block (1..) | buffer |
//! | 3 | 7..0 x, 15..8 y, rest 0 | this core, raw coordinates of the broadcast's NoC |
//! | 4 | same | the sender |
//! | 5 | same | multicast rectangle start (receivers' corner nearest the sender) |
//! | 6 | same | multicast rectangle end |
//! | 7 | 7..0 x0, 15..8 y0, 23..16 columns, 31..24 rows (logical) | the group the words were built for |
//! | 8 | same | the rectangle the broadcasts were cut from |
//! | 9 | 0: along (0 row, 1 column), rest 0 | direction |
//! | 10 | [`check_word`] of words 0..=9 | check |
//!
//! A core with rank 0xFF carries only the header, shape (rank, window, NoC), buffer, group,
//! rectangle, direction and check; the layout writes its receivers and coordinate words as 0,
//! and decoding neither checks nor reads them (such a core takes no part in the broadcast; a
//! check of them cost the reader image 52 bytes and compute's 124, of the 294 and 360 left).
//!
//! Constraints checked on decode: header magic and version; id <= 1; NoC <= 1; window 1..=8;
//! pages >= 1; window * pages <= 65 535; and for a core in the broadcast (rank not 0xFF):
//! receivers <= 15; rank <= receivers; a sender
//! (rank 0) is at the sender's coordinates and a receiver is not; no receivers means rank 0;
//! start <= end; the receivers one step after another from the sender on one line along x or
//! y, in the NoC's + direction, as the layout places them (start one step from the sender, end
//! `receivers` steps, a receiver `rank` steps; without receivers start and end are the sender),
//! every coordinate at most 63; reserved bits 0; the check word. Decoding arbitrary words never
//! panics.

use core::fmt;

use komorebi_hal::LogicalRect;
use komorebi_hal::types::COORD_MAX;

/// Words of `BroadcastArgs`.
pub const ARGS_WORDS: usize = 11;
/// Version of the layout this crate writes and reads (2: the check word a word at a time,
/// decisions D32).
pub const ARGS_VERSION: u8 = 2;
/// Header magic ("KB").
pub const ARGS_MAGIC: u16 = 0x4B42;
/// Rank of a core of the group that is not in this broadcast.
pub const RANK_NONE: u8 = 0xFF;
/// Largest window.
pub const MAX_WINDOW: u8 = 8;
/// Largest buffer, in pages (`window * pages`).
pub const MAX_BUFFER_PAGES: u32 = 65_535;
/// Largest number of blocks in one command.
pub const MAX_BLOCKS: u32 = 32_767;

/// Which way the broadcasts of a rectangle run.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Along {
    /// One broadcast per row (inside one panel).
    Row = 0,
    /// One broadcast per column.
    Column = 1,
}

impl Along {
    /// `row` or `column`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Row => "row",
            Self::Column => "column",
        }
    }
}

/// A raw NoC coordinate pair as the words carry it.
pub type RawXy = (u8, u8);

/// The fields of a broadcast's words that compute's program copies (its id, window, NoC,
/// buffer and pages), as the words hold them, unchecked: what [`BroadcastArgs::decode`] takes out
/// of words 0 to 2. A kernel compares compute's copies with these without decoding the words
/// (`decode` checks all eleven), and decodes only when one differs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CopiedFields {
    /// The broadcast id (word 0, bits 0..8).
    pub broadcast: u8,
    /// This core's rank (word 1, bits 0..8): [`RANK_NONE`] outside the broadcast.
    pub rank: u8,
    /// Blocks the buffer holds (word 1, bits 16..24).
    pub window: u8,
    /// The NoC (word 1, bits 24..32).
    pub noc: u8,
    /// The circular buffer (word 2, bits 0..8).
    pub cb: u8,
    /// Pages per block (word 2, bits 16..32).
    pub pages: u16,
}

impl CopiedFields {
    /// The fields as `words` hold them.
    pub const fn of(w: &[u32; ARGS_WORDS]) -> Self {
        Self {
            broadcast: w[0] as u8,
            rank: w[1] as u8,
            window: (w[1] >> 16) as u8,
            noc: (w[1] >> 24) as u8,
            cb: w[2] as u8,
            pages: (w[2] >> 16) as u16,
        }
    }
}

/// One core's decoded `BroadcastArgs`.
///
/// Laid out as declared and word-aligned (`repr(C, align(4))`): the firmware builds and copies
/// it a word at a time rather than a byte at a time, which its code space feels (about 140
/// bytes of the reader's).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(C, align(4))]
pub struct BroadcastArgs {
    /// Broadcast id, 0 or 1.
    pub broadcast: u8,
    /// This core's rank: 0 sends, 1..=receivers receive, [`RANK_NONE`] is not in it.
    pub rank: u8,
    /// Receivers (cores of the broadcast minus the sender).
    pub receivers: u8,
    /// Window: slots in the buffer.
    pub window: u8,
    /// NoC index carrying the broadcast (0: reader kernel, 1: writer kernel).
    pub noc: u8,
    /// Circular buffer index of the broadcast buffer.
    pub cb: u8,
    /// Pages per block.
    pub pages: u16,
    /// This core, raw coordinates of the broadcast's NoC.
    pub core: RawXy,
    /// The sender.
    pub sender: RawXy,
    /// Multicast rectangle start.
    pub start: RawXy,
    /// Multicast rectangle end.
    pub end: RawXy,
    /// The group the words were built for.
    pub group: LogicalRect,
    /// The rectangle the broadcasts were cut from.
    pub rect: LogicalRect,
    /// Direction.
    pub along: Along,
}

/// Why words are not valid `BroadcastArgs`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ArgsError {
    /// Fewer than 11 words from the broadcast's first word.
    TooShort {
        /// Words there were.
        available: usize,
    },
    /// Header magic or version is not `0x4B42`, [`ARGS_VERSION`].
    Header(u32),
    /// A broadcast id other than 0 or 1.
    BroadcastId(u8),
    /// A NoC other than 0 or 1.
    Noc(u8),
    /// A window outside 1..=8.
    Window(u8),
    /// Zero pages per block.
    Pages,
    /// `window * pages` above 65 535.
    BufferTooLarge(u32),
    /// More than 15 receivers.
    Receivers(u8),
    /// A rank that is neither <= receivers nor 0xFF.
    Rank {
        /// The rank.
        rank: u8,
        /// Receivers.
        receivers: u8,
    },
    /// The sender is not at the sender's coordinates, or a receiver is.
    SenderMismatch,
    /// A multicast rectangle with start after end.
    Reversed,
    /// The sender, the rectangle and this core's rank disagree: the receivers are not the
    /// `receivers` cores one step after another from the sender along x or y (start one step
    /// from it, end `receivers` steps, this core `rank` steps), or a coordinate is above 63.
    /// Words that disagree would multicast to cores outside the broadcast, or let the sender
    /// reuse a slot some receiver has not popped.
    Line,
    /// Nonzero reserved bits, or an unknown direction.
    Reserved {
        /// Which word.
        word: usize,
    },
    /// The check word does not match.
    Check {
        /// Found.
        found: u32,
        /// Expected.
        expected: u32,
    },
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TooShort { available } => {
                write!(
                    f,
                    "broadcast words need {ARGS_WORDS} words from the broadcast's first word, \
                     the command has {available} from there"
                )
            }
            Self::Header(w) => write!(
                f,
                "broadcast header {w:#010x} is not magic {ARGS_MAGIC:#06x} version {ARGS_VERSION}"
            ),
            Self::BroadcastId(id) => write!(f, "broadcast id {id} (allowed: 0, 1)"),
            Self::Noc(n) => write!(f, "NoC {n} (allowed: 0, 1)"),
            Self::Window(w) => write!(f, "window {w} (allowed: 1..={MAX_WINDOW})"),
            Self::Pages => f.write_str("0 pages per block (allowed: 1..)"),
            Self::BufferTooLarge(p) => {
                write!(
                    f,
                    "buffer of {p} pages (allowed: window * pages <= {MAX_BUFFER_PAGES})"
                )
            }
            Self::Receivers(r) => write!(f, "{r} receivers (allowed: 0..=15)"),
            Self::Rank { rank, receivers } => {
                write!(
                    f,
                    "rank {rank} with {receivers} receivers (allowed: 0..={receivers} or 0xff)"
                )
            }
            Self::SenderMismatch => {
                f.write_str("rank 0 must sit at the sender's coordinates and no other rank may")
            }
            Self::Reversed => f.write_str(
                "multicast rectangle start lies after its end (allowed: start <= end in x and y)",
            ),
            Self::Line => f.write_str(
                "broadcast words disagree (allowed: the receivers one step after another from \
                 the sender along x or y, start one step from it, end `receivers` steps, this \
                 core `rank` steps, coordinates 0..=63; no receivers: start and end at the \
                 sender)",
            ),
            Self::Reserved { word } => write!(
                f,
                "reserved bits set in broadcast word {word} (allowed: 0; word 9 is 0 or 1)"
            ),
            Self::Check { found, expected } => {
                write!(
                    f,
                    "broadcast check word {found:#010x}, expected {expected:#010x}"
                )
            }
        }
    }
}

impl core::error::Error for ArgsError {}

/// The check word of `words`: from FNV-1a's offset basis, for each word `hash = (hash ^ word) *
/// FNV_PRIME`, then `hash ^= hash >> 15`.
///
/// A word at a time, not FNV-1a's byte at a time: every kernel checks the whole tile's program
/// and its broadcast's arguments at each command, some 90 words, and on the baby cores a word
/// cost 16 cycles byte by byte and costs 5 this way (decisions D32). Each step is a bijection of
/// the hash for a given word (xor, an odd multiplier, an xorshift), so words that differ in one
/// place always differ in the check word; the xorshift carries each word's top bits down into
/// the low 24 bits a program's check keeps (a multiply alone carries bits only upward).
pub const fn check_word(words: &[u32]) -> u32 {
    const PRIME: u32 = 0x0100_0193;
    let mut hash: u32 = 0x811C_9DC5;
    let mut i = 0;
    while i < words.len() {
        hash = (hash ^ words[i]).wrapping_mul(PRIME);
        hash ^= hash >> 15;
        i += 1;
    }
    hash
}

const fn xy_word(p: RawXy) -> u32 {
    p.0 as u32 | (p.1 as u32) << 8
}

const fn word_xy(w: u32) -> RawXy {
    (w as u8, (w >> 8) as u8)
}

impl BroadcastArgs {
    /// True when this core takes part (rank is not [`RANK_NONE`]).
    pub const fn included(&self) -> bool {
        self.rank != RANK_NONE
    }

    /// True for the sender.
    pub const fn is_sender(&self) -> bool {
        self.rank == 0
    }

    /// Pages of the broadcast buffer: `window * pages`.
    pub const fn buffer_pages(&self) -> u32 {
        self.window as u32 * self.pages as u32
    }

    /// The 11 words.
    pub const fn encode(&self) -> [u32; ARGS_WORDS] {
        let mut w = [0u32; ARGS_WORDS];
        w[0] = (ARGS_MAGIC as u32) << 16 | (ARGS_VERSION as u32) << 8 | self.broadcast as u32;
        w[1] = self.rank as u32
            | (self.receivers as u32) << 8
            | (self.window as u32) << 16
            | (self.noc as u32) << 24;
        w[2] = self.cb as u32 | (self.pages as u32) << 16;
        w[3] = xy_word(self.core);
        w[4] = xy_word(self.sender);
        w[5] = xy_word(self.start);
        w[6] = xy_word(self.end);
        w[7] = self.group.word();
        w[8] = self.rect.word();
        w[9] = self.along as u32;
        let (head, _) = w.split_at(ARGS_WORDS - 1);
        w[ARGS_WORDS - 1] = check_word(head);
        w
    }

    /// The words of `self` carrying the check word of `stale`: what a bit flipped after the
    /// words were checked looks like to the device, which must refuse them as bad words. For
    /// fault tests; a host that runs work uses [`encode`](Self::encode).
    pub const fn encode_stale(&self, stale: &BroadcastArgs) -> [u32; ARGS_WORDS] {
        let mut w = self.encode();
        w[ARGS_WORDS - 1] = stale.encode()[ARGS_WORDS - 1];
        w
    }

    /// Decodes and checks the 11 words at the start of `words`.
    pub fn decode(words: &[u32]) -> Result<Self, ArgsError> {
        let Some(w) = words.first_chunk::<ARGS_WORDS>() else {
            return Err(ArgsError::TooShort {
                available: words.len(),
            });
        };
        // The header first: words of another version (or none at all) are reported as such,
        // not as a check word another version computes differently.
        if (w[0] >> 16) as u16 != ARGS_MAGIC || (w[0] >> 8) as u8 != ARGS_VERSION {
            return Err(ArgsError::Header(w[0]));
        }
        let expected = check_word(&w[..ARGS_WORDS - 1]);
        if w[10] != expected {
            return Err(ArgsError::Check {
                found: w[10],
                expected,
            });
        }
        let copied = CopiedFields::of(w);
        let args = Self {
            broadcast: copied.broadcast,
            rank: w[1] as u8,
            receivers: (w[1] >> 8) as u8,
            window: copied.window,
            noc: copied.noc,
            cb: copied.cb,
            pages: copied.pages,
            core: word_xy(w[3]),
            sender: word_xy(w[4]),
            start: word_xy(w[5]),
            end: word_xy(w[6]),
            group: LogicalRect::from_word(w[7]),
            rect: LogicalRect::from_word(w[8]),
            along: if w[9] == 1 { Along::Column } else { Along::Row },
        };
        if w[2] & 0xFF00 != 0 {
            return Err(ArgsError::Reserved { word: 2 });
        }
        for (i, &word) in w.iter().enumerate().take(7).skip(3) {
            if word >> 16 != 0 {
                return Err(ArgsError::Reserved { word: i });
            }
        }
        if w[9] > 1 {
            return Err(ArgsError::Reserved { word: 9 });
        }
        args.validate()?;
        Ok(args)
    }

    /// Checks the constraints of the module docs (all but the check word and reserved bits).
    pub const fn validate(&self) -> Result<(), ArgsError> {
        if self.broadcast > 1 {
            return Err(ArgsError::BroadcastId(self.broadcast));
        }
        if self.noc > 1 {
            return Err(ArgsError::Noc(self.noc));
        }
        if self.window == 0 || self.window > MAX_WINDOW {
            return Err(ArgsError::Window(self.window));
        }
        if self.pages == 0 {
            return Err(ArgsError::Pages);
        }
        if self.buffer_pages() > MAX_BUFFER_PAGES {
            return Err(ArgsError::BufferTooLarge(self.buffer_pages()));
        }
        if !self.included() {
            return Ok(());
        }
        if self.receivers > crate::area::MAX_RECEIVERS {
            return Err(ArgsError::Receivers(self.receivers));
        }
        if self.rank > self.receivers {
            return Err(ArgsError::Rank {
                rank: self.rank,
                receivers: self.receivers,
            });
        }
        let at_sender = self.core.0 == self.sender.0 && self.core.1 == self.sender.1;
        if at_sender != (self.rank == 0) {
            return Err(ArgsError::SenderMismatch);
        }
        if self.start.0 > self.end.0 || self.start.1 > self.end.1 {
            return Err(ArgsError::Reversed);
        }
        if !self.on_a_line() {
            return Err(ArgsError::Line);
        }
        Ok(())
    }

    /// Whether the receivers are the `receivers` cores one step after another from the sender,
    /// along x or y, with this core `rank` steps from it, and every coordinate at most
    /// [`COORD_MAX`] ([`ArgsError::Line`]). In 16 bits: no step overflows.
    const fn on_a_line(&self) -> bool {
        let (s, a, b, c) = (self.sender, self.start, self.end, self.core);
        // (On a line the sender's coordinates are at most the end's.)
        if b.0 > COORD_MAX || b.1 > COORD_MAX {
            return false;
        }
        let (n, r) = (self.receivers as u16, self.rank as u16);
        let (sx, sy) = (s.0 as u16, s.1 as u16);
        // (Without receivers the start and end are the sender, on either axis.)
        let along_x = a.1 == s.1
            && b.1 == s.1
            && c.1 == s.1
            && a.0 as u16 == sx + (n > 0) as u16
            && b.0 as u16 == sx + n
            && c.0 as u16 == sx + r;
        let along_y = a.0 == s.0
            && b.0 == s.0
            && c.0 == s.0
            && a.1 as u16 == sy + (n > 0) as u16
            && b.1 as u16 == sy + n
            && c.1 as u16 == sy + r;
        along_x || along_y
    }
}
