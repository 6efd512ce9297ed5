//! The broadcast handler's program, version 4: the words the host writes into a command for each
//! kernel of a tile, and the one place that encodes and decodes them.
//!
//! A tile's program is a [`BroadcastProgram`]: up to two [`MoverProgram`]s (the reader's
//! broadcast on NoC0, the writer's on NoC1) and one [`ComputeProgram`], which names, for each
//! broadcast it consumes, the same buffer and shape again (compute has no other way to learn
//! them). The host builds the typed program and encodes it; every kernel of the tile decodes the
//! whole program from the command and checks it, so a host bug that makes the copies disagree is
//! refused on the device (a `broadcast_begin` give-up) and, before that, on the host
//! ([`BroadcastProgram::check`] runs inside [`BroadcastProgram::encode`]).
//!
//! # Data-movement kernel: [`MOVER_WORDS`] words (0 words: the kernel runs no broadcast)
//!
//! | word | what |
//! |---|---|
//! | 0..11 | the broadcast's arguments (`komorebi_broadcast::args`, with their own check word) |
//! | 11 | blocks (bits 0..15); injected stall: 0 none, else `block + 1` (bits 16..31) |
//! | 12 | page size in bytes |
//! | 13 | DRAM address (bank-local) of the broadcast's page 0 |
//! | 14..18 | the DRAM port of page stream `i` (pages `g` with `g % 8 == i`) on this kernel's NoC: stream `2j` in bits 0..15 and `2j + 1` in 16..31 of word `14 + j`, each `x \| y << 8` |
//! | 18 | check: [`PROGRAM_VERSION`] in bits 24..31, the low 24 bits of `check_word` over words 0..18 in bits 0..23 |
//!
//! Page `g = block * pages + page` of a broadcast is read through the DRAM port of stream
//! `g % 8` at `base + g * page_size`: every page has its own address, so the host may place the
//! eight streams of each sender on any ports of any banks, a bank more than once (the host's
//! DRAM placement, `komorebi`'s `app::broadcast::placement`, chooses them so that no link
//! carries more than it must).
//!
//! There are [`STREAMS`] (8) streams whatever the chip's DRAM: on a chip with a fused DRAM bank
//! (7 banks) the host puts them on the working banks only, so some bank serves two streams of a
//! sender. The words name ports, not banks, and the kernels read whatever port a stream names:
//! keeping the fused bank out of them is the host placement's promise (a card would never
//! answer such a read; the simulator refuses it as a fault).
//!
//! Version 2 (issue 18): version 1 read page `g` from bank `g % 8` at `base + (g / 8) *
//! page_size`, which allowed only a permutation of the eight banks per sender.
//!
//! Version 3 (issue 28): the same words; the data pattern compute checks became affine in the
//! word (`pattern_word`), so that compute follows it with one add a word. The version is what
//! tells the two patterns apart: a version-2 host's pages would fail every check, so a
//! version-3 kernel refuses its program instead.
//!
//! Version 4 (issue 28): the same words; the check word is computed a word at a time
//! (`komorebi_broadcast::args::check_word`, decisions D32) instead of FNV-1a's byte at a time.
//!
//! # Compute kernel: `2 + 7 n + 1` words for `n` broadcasts ([`compute_words`])
//!
//! | word | what |
//! |---|---|
//! | 0 | `n` (bits 0..7, at most 2); check: bit 8 set for [`Check::None`], clear for [`Check::Full`]; bits 9..15 zero (else refused); injected stall: 0 none, else `block + 1` (bits 16..31) |
//! | 1 | the job (the data pattern's seed) |
//! | 2 + 7 i .. | broadcast `i`: buffer, pages, window, blocks, page size, broadcast id, producer (0 reader, 1 writer) |
//! | 2 + 7 n | check, as the data-movement kernel's |
//!
//! Bit 8 of word 0 came with `--check none` (issue 18); programs written before it have the bit
//! clear and mean what they meant (every word checked); it did not change the version.
//!
//! Every copy must agree with the producer's words: buffer, pages, window and broadcast id with
//! its arguments, blocks and page size with its program, and each data-movement program must be
//! consumed by exactly one of compute's broadcasts.
//!
//! # Injected stalls
//! `stall_before` makes a kernel stop making its calls before that block, as a hung core would
//! (the handler's docs say what then happens). It exists for the fault tests; 0 words of it are
//! spent on a run without faults.

use core::fmt;

use heapless::Vec as BoundedVec;
use komorebi_broadcast::args::{
    ARGS_WORDS, BroadcastArgs, CopiedFields, MAX_BLOCKS, RANK_NONE, check_word,
};
use komorebi_hal::{NocId, Role, Xy};

use crate::command::Command;

/// Version of the program words; in the top byte of every check word (4: the check word a word
/// at a time, `komorebi_broadcast::args::check_word`, decisions D32).
pub const PROGRAM_VERSION: u8 = 4;
/// Words of a data-movement kernel's program.
pub const MOVER_WORDS: usize = 19;
/// Words of each broadcast in the compute program.
pub const COMPUTE_INPUT_WORDS: usize = 7;
/// Most broadcasts of one tile (one per data-movement kernel).
pub const MAX_INPUTS: usize = 2;
/// Most words of a compute program.
pub const MAX_COMPUTE_WORDS: usize = compute_words(MAX_INPUTS);
/// Page streams of a broadcast: page `g` is in stream `g % STREAMS`, each read through one DRAM
/// port. Eight, as many as a chip with every DRAM bank has banks (one stream a bank is the
/// plain interleave there); a chip with a fused bank has 7, and the host places the 8 streams
/// on those.
pub const STREAMS: usize = 8;

/// Words of the compute program with `n` broadcasts.
pub const fn compute_words(n: usize) -> usize {
    2 + COMPUTE_INPUT_WORDS * n + 1
}

/// A field of a program, as errors name it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// `blocks`.
    Blocks,
    /// `DRAM bank coordinates`.
    BankCoordinates,
    /// `producer`.
    Producer,
    /// `buffer`.
    Buffer,
    /// `pages`.
    Pages,
    /// `window`.
    Window,
    /// `broadcast id`.
    BroadcastId,
    /// `page size`.
    PageSize,
    /// `NoC`.
    Noc,
    /// `stall before` (an injected fault's block).
    StallBefore,
}

impl Field {
    /// The field's name in words.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Blocks => "blocks",
            Self::BankCoordinates => "DRAM bank coordinates",
            Self::Producer => "producer",
            Self::Buffer => "buffer",
            Self::Pages => "pages",
            Self::Window => "window",
            Self::BroadcastId => "broadcast id",
            Self::PageSize => "page size",
            Self::Noc => "NoC",
            Self::StallBefore => "stall before",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is wrong with a program, and what is allowed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProgramError {
    /// A kernel's words are not the length its program has.
    Length {
        /// The kernel.
        role: Role,
        /// Words found.
        found: usize,
        /// Words allowed (the compute length follows from its first word).
        expected: usize,
    },
    /// A check word that does not match the words before it, or another version.
    Check {
        /// The kernel.
        role: Role,
        /// The word found.
        found: u32,
        /// The word the program's words give.
        expected: u32,
    },
    /// More than [`MAX_INPUTS`] broadcasts in the compute program, or a reserved bit (9..15)
    /// of its word 0 set: the value is bits 0..15 of word 0 without the check bit.
    Inputs(u32),
    /// A field out of its range: which, and the value.
    Field {
        /// The kernel.
        role: Role,
        /// The field.
        field: Field,
        /// The value found.
        value: u32,
    },
    /// A copy in the compute program that disagrees with the producer's words.
    Disagree {
        /// Broadcast id of compute's entry.
        broadcast: u8,
        /// The field that differs.
        field: Field,
    },
    /// A data-movement program that no compute broadcast consumes, or that two consume, or
    /// one consumed whose core is outside its broadcast (rank 0xFF).
    Unconsumed(Role),
    /// The reader's and the writer's broadcasts name the same broadcast id or the same buffer:
    /// each broadcast has its own (its VALID word, DONE-BY table and buffer).
    Shared(Field),
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Length {
                role,
                found,
                expected,
            } => write!(
                f,
                "{role} program of {found} words (allowed: 0 or {expected})"
            ),
            Self::Check {
                role,
                found,
                expected,
            } => write!(
                f,
                "{role} program check word {found:#010x}, expected {expected:#010x} (version {PROGRAM_VERSION})"
            ),
            Self::Inputs(n) if n > 0xFF => write!(
                f,
                "compute program word 0 has reserved bits {:#x} set (bits 9..15; allowed: 0)",
                n & 0xFE00
            ),
            Self::Inputs(n) => write!(
                f,
                "compute program of {n} broadcasts (allowed: 0..={MAX_INPUTS})"
            ),
            Self::Field { role, field, value } => {
                write!(f, "{role} program: {field} {value} is out of range")?;
                match field {
                    Field::Blocks => write!(f, " (allowed: at most {MAX_BLOCKS})"),
                    Field::StallBefore => write!(f, " (allowed: below {})", u16::MAX),
                    _ => Ok(()),
                }
            }
            Self::Disagree { broadcast, field } => write!(
                f,
                "compute's copy of broadcast {broadcast} disagrees with its producer on {field}"
            ),
            Self::Unconsumed(role) => write!(
                f,
                "the {role}'s broadcast is not consumed by exactly one compute broadcast (by none when the core is outside it, rank 0xFF)"
            ),
            Self::Shared(field) => write!(
                f,
                "the reader's and the writer's broadcasts share their {field} (each needs its own)"
            ),
        }
    }
}

impl core::error::Error for ProgramError {}

/// The check word of `words` (every word before the check).
const fn program_check(words: &[u32]) -> u32 {
    (PROGRAM_VERSION as u32) << 24 | check_word(words) & 0x00FF_FFFF
}

/// Verifies the last word of `words` against the ones before it.
fn verify(role: Role, words: &[u32]) -> Result<(), ProgramError> {
    let (check, body) = words.split_last().ok_or(ProgramError::Length {
        role,
        found: 0,
        expected: 1,
    })?;
    let expected = program_check(body);
    if *check != expected {
        return Err(ProgramError::Check {
            role,
            found: *check,
            expected,
        });
    }
    Ok(())
}

/// `block + 1` in the top half of a word (0: no stall).
const fn stall_bits(stall_before: Option<u16>) -> u32 {
    match stall_before {
        Some(b) => (b as u32 + 1) << 16,
        None => 0,
    }
}

const fn stall_of(word: u32) -> Option<u16> {
    match (word >> 16) as u16 {
        0 => None,
        b => Some(b - 1),
    }
}

fn blocks_field(role: Role, value: u32) -> Result<u16, ProgramError> {
    if value > MAX_BLOCKS {
        return Err(ProgramError::Field {
            role,
            field: Field::Blocks,
            value,
        });
    }
    Ok(value as u16)
}

/// One data-movement kernel's part: the broadcast it runs and where its blocks are in DRAM.
///
/// `repr(C)`: the fields in this order put `stall_before`, whose tag is the niche an
/// `Option<MoverProgram>` keeps its own tag in, last. Left to the compiler it went first, and
/// filling a `None` (`BroadcastProgram::decode_into`) wrote the tag, then copied the other 72
/// bytes to an address two bytes into a word: byte by byte, some 600 cycles a kernel on the
/// baby cores at a tile's first command.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
#[repr(C)]
pub struct MoverProgram {
    /// The broadcast's argument words as the host layout made them (decoded and checked by the
    /// protocol's `Broadcast::new`, not here).
    pub args: [u32; ARGS_WORDS],
    /// Blocks of the broadcast (at most `MAX_BLOCKS`).
    pub blocks: u16,
    /// Bytes per page.
    pub page_size: u32,
    /// DRAM address, local to each bank, of the broadcast's page 0.
    pub dram_base: u32,
    /// The DRAM port (coordinates on this kernel's NoC) of each page stream: page `g` is read
    /// from `banks[g % STREAMS]` at `dram_base + g * page_size`.
    pub banks: [Xy; STREAMS],
    /// Injected fault: stop making broadcast calls before this block.
    pub stall_before: Option<u16>,
}

impl MoverProgram {
    /// The words.
    pub fn encode(&self) -> [u32; MOVER_WORDS] {
        let mut w = [0u32; MOVER_WORDS];
        w[..ARGS_WORDS].copy_from_slice(&self.args);
        w[11] = self.blocks as u32 | stall_bits(self.stall_before);
        w[12] = self.page_size;
        w[13] = self.dram_base;
        let xy = |b: Xy| b.x() as u32 | (b.y() as u32) << 8;
        for j in 0..STREAMS / 2 {
            w[14 + j] = xy(self.banks[2 * j]) | xy(self.banks[2 * j + 1]) << 16;
        }
        w[MOVER_WORDS - 1] = program_check(&w[..MOVER_WORDS - 1]);
        w
    }

    /// Decodes and checks `role`'s words.
    pub fn decode(role: Role, words: &[u32]) -> Result<Self, ProgramError> {
        let mut m = Self::default();
        m.decode_into(role, words)?;
        Ok(m)
    }

    /// [`decode`](Self::decode) into `self`, without moving a program (some 100 bytes, a copy
    /// the baby cores pay for at every command). After an error `self` holds no meaningful
    /// program.
    pub fn decode_into(&mut self, role: Role, words: &[u32]) -> Result<(), ProgramError> {
        let w: &[u32; MOVER_WORDS] = words.try_into().map_err(|_| ProgramError::Length {
            role,
            found: words.len(),
            expected: MOVER_WORDS,
        })?;
        verify(role, w)?;
        self.page_size = w[12];
        self.dram_base = w[13];
        self.stall_before = stall_of(w[11]);
        self.args.copy_from_slice(&w[..ARGS_WORDS]);
        // The banks straight into place: a copy of `[Xy; 8]` (alignment 1) is byte by byte.
        for (i, bank) in self.banks.iter_mut().enumerate() {
            let half = (w[14 + i / 2] >> (16 * (i % 2))) as u16;
            *bank = Xy::new(half as u8, (half >> 8) as u8).map_err(|_| ProgramError::Field {
                role,
                field: Field::BankCoordinates,
                value: half as u32,
            })?;
        }
        self.blocks = blocks_field(role, w[11] & 0xFFFF)?;
        Ok(())
    }
}

/// One broadcast as compute takes it: copies of its producer's buffer and shape.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ComputeInput {
    /// The circular buffer the broadcast fills.
    pub cb: u8,
    /// Pages per block.
    pub pages: u16,
    /// Window (blocks the buffer holds).
    pub window: u8,
    /// Blocks of the broadcast.
    pub blocks: u16,
    /// Bytes per page.
    pub page_size: u32,
    /// The broadcast id (0 or 1): part of the data pattern.
    pub broadcast: u8,
    /// The data-movement kernel that fills the buffer.
    pub producer: Role,
}

/// What compute does with the words of the blocks it receives.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Check {
    /// Reads every word of every page and compares it with the pattern (the default, and what
    /// a program without the bit means).
    #[default]
    Full,
    /// Reads no word: takes and pops every block in protocol order only, so a run measures the
    /// protocol and the NoC, not the checking. Compute's `stat` (bytes checked) is 0.
    None,
}

/// Bit of compute's word 0 that says [`Check::None`].
pub const CHECK_NONE_BIT: u32 = 1 << 8;

/// The compute kernel's part: the broadcasts it checks and pops, in turn, block by block.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ComputeProgram {
    /// The job's number in the data pattern (with broadcast, block, page and word, what compute
    /// checks): the host's job, plus on a card a value drawn for the run.
    pub job: u32,
    /// Whether compute reads and checks every word, or only takes and pops the blocks.
    pub check: Check,
    /// The broadcasts, at most [`MAX_INPUTS`].
    pub inputs: BoundedVec<ComputeInput, MAX_INPUTS>,
    /// Injected fault: stop popping before this block.
    pub stall_before: Option<u16>,
}

impl ComputeProgram {
    /// The words.
    pub fn encode(&self) -> BoundedVec<u32, MAX_COMPUTE_WORDS> {
        let mut w: BoundedVec<u32, MAX_COMPUTE_WORDS> = BoundedVec::new();
        // Capacity is MAX_COMPUTE_WORDS and streams hold at most MAX_INPUTS: no push fails.
        let check = match self.check {
            Check::Full => 0,
            Check::None => CHECK_NONE_BIT,
        };
        let _ = w.push(self.inputs.len() as u32 | check | stall_bits(self.stall_before));
        let _ = w.push(self.job);
        for s in &self.inputs {
            let producer = (s.producer == Role::Writer) as u32;
            let _ = w.extend_from_slice(&[
                s.cb as u32,
                s.pages as u32,
                s.window as u32,
                s.blocks as u32,
                s.page_size,
                s.broadcast as u32,
                producer,
            ]);
        }
        let check = program_check(&w);
        let _ = w.push(check);
        w
    }

    /// Decodes and checks compute's words.
    pub fn decode(words: &[u32]) -> Result<Self, ProgramError> {
        let mut c = Self::default();
        c.decode_into(words)?;
        Ok(c)
    }

    /// [`decode`](Self::decode) into `self`, without moving a program. After an error `self`
    /// holds no meaningful program.
    pub fn decode_into(&mut self, words: &[u32]) -> Result<(), ProgramError> {
        let role = Role::Compute;
        // Bits 0..7 (`n`) and the reserved bits 9..15: one comparison refuses both.
        let n = words.first().map_or(0, |&w| w & 0xFFFF & !CHECK_NONE_BIT);
        if n as usize > MAX_INPUTS {
            return Err(ProgramError::Inputs(n));
        }
        let expected = compute_words(n as usize);
        if words.len() != expected {
            return Err(ProgramError::Length {
                role,
                found: words.len(),
                expected,
            });
        }
        verify(role, words)?;
        let field = |field, value| ProgramError::Field { role, field, value };
        let (&[head, job], body) = (
            words.first_chunk::<2>().ok_or(ProgramError::Inputs(n))?,
            words.get(2..expected - 1).unwrap_or(&[]),
        );
        self.job = job;
        self.check = if head & CHECK_NONE_BIT != 0 {
            Check::None
        } else {
            Check::Full
        };
        self.stall_before = stall_of(head);
        self.inputs.clear();
        let chunks = body.chunks_exact(COMPUTE_INPUT_WORDS);
        for w in chunks.filter_map(|c| <&[u32; COMPUTE_INPUT_WORDS]>::try_from(c).ok()) {
            let producer = match w[6] {
                0 => Role::Reader,
                1 => Role::Writer,
                v => return Err(field(Field::Producer, v)),
            };
            let stream = ComputeInput {
                cb: u8::try_from(w[0]).map_err(|_| field(Field::Buffer, w[0]))?,
                pages: u16::try_from(w[1]).map_err(|_| field(Field::Pages, w[1]))?,
                window: u8::try_from(w[2]).map_err(|_| field(Field::Window, w[2]))?,
                blocks: blocks_field(role, w[3])?,
                page_size: w[4],
                broadcast: u8::try_from(w[5]).map_err(|_| field(Field::BroadcastId, w[5]))?,
                producer,
            };
            // At most MAX_INPUTS chunks (n was checked).
            let _ = self.inputs.push(stream);
        }
        Ok(())
    }
}

/// A tile's whole broadcast program.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct BroadcastProgram {
    /// The reader's broadcast (NoC0), if it runs one.
    pub reader: Option<MoverProgram>,
    /// The writer's broadcast (NoC1), if it runs one.
    pub writer: Option<MoverProgram>,
    /// Compute's part.
    pub compute: ComputeProgram,
}

/// A tile's encoded program, one word list per kernel.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ProgramWords {
    /// The reader's words (empty: no broadcast).
    pub reader: BoundedVec<u32, MOVER_WORDS>,
    /// The writer's words (empty: no broadcast).
    pub writer: BoundedVec<u32, MOVER_WORDS>,
    /// Compute's words.
    pub compute: BoundedVec<u32, MAX_COMPUTE_WORDS>,
}

impl BroadcastProgram {
    /// The data-movement program of `role` (`None` for compute or a kernel without one).
    pub fn mover(&self, role: Role) -> Option<&MoverProgram> {
        match role {
            Role::Reader => self.reader.as_ref(),
            Role::Writer => self.writer.as_ref(),
            Role::Compute => None,
        }
    }

    /// Checks that compute's copies agree with the producers' words, that every
    /// data-movement program is consumed exactly once (not at all when its core is outside the
    /// broadcast, rank 0xFF: it pushes no block), and that the two broadcasts, when there
    /// are two, have ids and buffers of their own (as their words give them, decoded or not: a
    /// program that fails either way is refused). A producer whose arguments do not decode
    /// is not compared with compute's copies: its own kernel refuses them (`Broadcast::new`).
    pub fn check(&self) -> Result<(), ProgramError> {
        if let (Some(r), Some(w)) = (&self.reader, &self.writer) {
            let (r, w) = (CopiedFields::of(&r.args), CopiedFields::of(&w.args));
            if r.broadcast == w.broadcast {
                return Err(ProgramError::Shared(Field::BroadcastId));
            }
            if r.cb == w.cb {
                return Err(ProgramError::Shared(Field::Buffer));
            }
        }
        for role in [Role::Reader, Role::Writer] {
            let consumers = self
                .compute
                .inputs
                .iter()
                .filter(|s| s.producer == role)
                .count();
            // A mover whose core is outside its broadcast (rank 0xFF, a group larger than the
            // broadcast's rectangle) only checks its words and pushes no block: a compute that
            // took its blocks would wait for good.
            let pushes = self
                .mover(role)
                .is_some_and(|m| CopiedFields::of(&m.args).rank != RANK_NONE);
            if consumers != pushes as usize {
                return Err(ProgramError::Unconsumed(role));
            }
        }
        for s in &self.compute.inputs {
            let disagree = |field| ProgramError::Disagree {
                broadcast: s.broadcast,
                field,
            };
            let Some(m) = self.mover(s.producer) else {
                return Err(ProgramError::Unconsumed(s.producer));
            };
            if m.blocks != s.blocks {
                return Err(disagree(Field::Blocks));
            }
            if m.page_size != s.page_size {
                return Err(disagree(Field::PageSize));
            }
            // The fields as the words hold them: the words are decoded, some 300 cycles on the
            // baby cores, only when a field disagrees, to tell a bad copy from bad words.
            let w = CopiedFields::of(&m.args);
            let noc = s.producer.noc().map_or(u8::MAX, NocId::index);
            let fields = [
                (w.cb == s.cb, Field::Buffer),
                (w.pages == s.pages, Field::Pages),
                (w.window == s.window, Field::Window),
                (w.broadcast == s.broadcast, Field::BroadcastId),
                (w.noc == noc, Field::Noc),
            ];
            if fields.iter().all(|&(same, _)| same) || BroadcastArgs::decode(&m.args).is_err() {
                continue;
            }
            if let Some(&(_, field)) = fields.iter().find(|&&(same, _)| !same) {
                return Err(disagree(field));
            }
        }
        Ok(())
    }

    /// The words of every kernel, after [`check`](Self::check) and a check that the words
    /// hold every field as given (blocks at most `MAX_BLOCKS`, as decoding requires; a stall
    /// block below `u16::MAX`, which the words keep plus one).
    pub fn encode(&self) -> Result<ProgramWords, ProgramError> {
        self.encodable()?;
        self.check()?;
        Ok(self.words())
    }

    /// The fields a decoded program always has in range and a program built by hand may not:
    /// refused here, on the host, rather than by the device's decode (blocks) or not at all (a
    /// stall before block 65,535 came out as no stall).
    fn encodable(&self) -> Result<(), ProgramError> {
        let stall = |role, stall_before: Option<u16>| match stall_before {
            Some(u16::MAX) => Err(ProgramError::Field {
                role,
                field: Field::StallBefore,
                value: u16::MAX as u32,
            }),
            _ => Ok(()),
        };
        for (role, mover) in [(Role::Reader, &self.reader), (Role::Writer, &self.writer)] {
            if let Some(m) = mover {
                blocks_field(role, m.blocks as u32)?;
                stall(role, m.stall_before)?;
            }
        }
        for s in &self.compute.inputs {
            blocks_field(Role::Compute, s.blocks as u32)?;
        }
        stall(Role::Compute, self.compute.stall_before)
    }

    /// The words of every kernel, unchecked: for a host that has already checked programs of
    /// this shape (a run checks each core's program once, not once per job).
    pub fn words(&self) -> ProgramWords {
        let mover = |m: Option<&MoverProgram>| {
            m.map_or_else(BoundedVec::new, |m| {
                let mut v = BoundedVec::new();
                // MOVER_WORDS words into a Vec of that capacity.
                let _ = v.extend_from_slice(&m.encode());
                v
            })
        };
        ProgramWords {
            reader: mover(self.reader.as_ref()),
            writer: mover(self.writer.as_ref()),
            compute: self.compute.encode(),
        }
    }

    /// Decodes and checks the program of every kernel of `command`.
    pub fn decode(command: &Command) -> Result<Self, ProgramError> {
        let mut program = Self::default();
        program.decode_into(command)?;
        Ok(program)
    }

    /// [`decode`](Self::decode) into `self`: each part decoded where it goes, so no program
    /// (some 280 bytes) is moved; on the baby cores the moves cost more than 1,700 cycles at
    /// every command's start (decisions D31). After an error `self` holds no meaningful
    /// program.
    pub fn decode_into(&mut self, command: &Command) -> Result<(), ProgramError> {
        for (role, mover) in [
            (Role::Reader, &mut self.reader),
            (Role::Writer, &mut self.writer),
        ] {
            let words = command.words(role);
            if words.is_empty() {
                *mover = None;
            } else {
                // Over the last command's program when there is one: every field is rewritten.
                mover
                    .get_or_insert_with(MoverProgram::default)
                    .decode_into(role, words)?;
            }
        }
        self.compute.decode_into(command.words(Role::Compute))?;
        self.check()
    }
}

/// Fuzz entry point (`fuzz/`'s `program_decode` target and the replay test): the first three
/// bytes of `data` split the rest, read as little-endian words, into the reader's, writer's and
/// compute's words. Decoding never panics, and a program that decodes encodes back to the same
/// words.
pub fn fuzz_decode(data: &[u8]) {
    let (counts, rest) = data.split_at(data.len().min(3));
    let words: BoundedVec<u32, { crate::abi::MAX_PROGRAM_WORDS }> = rest
        .chunks_exact(4)
        .take(crate::abi::MAX_PROGRAM_WORDS)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let count = |i: usize| counts.get(i).map_or(0, |&c| c as usize);
    let (r, rest) = words.split_at(count(0).min(words.len()));
    let (w, c) = rest.split_at(count(1).min(rest.len()));
    let c = &c[..count(2).min(c.len())];
    let group = komorebi_hal::LogicalRect::new(0, 0, 1, 1);
    let Some(command) = Command::new(1, 1, 1, 0, group, 0).with_words(r, w, c) else {
        return;
    };
    if let Ok(program) = BroadcastProgram::decode(&command) {
        let again = program
            .encode()
            .expect("a decoded program passes its checks");
        assert_eq!(&again.reader[..], r, "reader words round-trip");
        assert_eq!(&again.writer[..], w, "writer words round-trip");
        assert_eq!(&again.compute[..], c, "compute words round-trip");
    }
}
