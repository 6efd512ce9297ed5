//! The tile control block ABI ([`ABI_VERSION`]): one place for every offset and encoding that the
//! device kernels and the host share.
//!
//! The control block is [`CONTROL_BYTES`] of L1 at [`CONTROL_BASE`] on every Tensix tile (the
//! same address everywhere, so a core can write a word of another tile's block over the NoC).
//! Offsets below are from its start.
//!
//! | offset | words | who writes | what |
//! |---|---|---|---|
//! | 0x000 | magic `KMRB`, ABI version, tile (logical `x \| y << 8`), harvest mask (die order) | host, once | header |
//! | 0x010 | stop | host, a sender giving up; cleared by the reporter | nonzero: every kernel of the tile gives up its waits |
//! | 0x014 | chip word ([`ChipWord`]) | host, once | the coordinate system the host found (translated or raw) and the fused DRAM bank |
//! | 0x018 | wait limit (u64) | host, once | the limit of waits outside a command; the loader writes `u64::MAX`, and komorebi's kernels wait for a command without a limit whatever it says (a command's waits take the command's own limit) |
//! | 0x020 | panic word of reader, writer, compute | firmware's panic handler | `0xDEAD_0000 \| line` of the panic, 0 if none |
//! | 0x030 | boot word of reader, writer, compute | the loader zeroes them; each kernel at boot | `BOOT_UP` or a boot failure ([`crate::image`]) |
//! | 0x040 | done index of reader, writer, compute | each kernel | the per-tile index of the last command the kernel finished |
//! | 0x050 | recovering index of reader, writer, compute | each kernel | the index of a command the kernel gave up and is recovering from: pages it pushes from then on are padding, not data |
//! | 0x060 | set-up index of reader, writer, compute | each data-movement kernel with words (compute's word unused) | the index of the last command whose broadcast the kernel set up or refused (its refusal recorded first): pages in its buffer before then are not this command's |
//! | 0x080 | reported index | the reporter (reader) | the index of the last command the tile reported |
//! | 0x0C0 | report record 0 ([`RECORD_BYTES`]) | kernels, then the reporter | the report of the command in slot 0 |
//! | 0x100 | report record 1 | | the report of the command in slot 1 |
//! | 0x200 | command slot 0 ([`SLOT_BYTES`]) | host | |
//! | 0x400 | command slot 1 | host | |
//! | 0x600 | circular-buffer table: 64 entries of 16 bytes (base, page size, pages, 0) | host | the buffers each kernel builds its handles from |
//! | 0xA00 | broadcast areas 0 and 1 (0x140 bytes each) | broadcast calls | see `komorebi_broadcast::area` |
//!
//! # Commands
//! The host posts a tile's commands into its slots in turn (the tile's `k`-th command into slot
//! `(k - 1) % SLOTS`) and never overwrites a slot whose command the tile has not reported.
//! A slot's words:
//!
//! | word | what |
//! |---|---|
//! | 0 | the tile's command index `k` (1, 2, ...; written **last**: a nonzero new index publishes the command) |
//! | 1 | the command's sequence number (global; its low half tags VALID and DONE words) |
//! | 2 | handler id (bits 0..15) and flags (bits 16..31: [`FLAG_EXCLUSIVE`]) |
//! | 3 | the group it was built for (logical `x0 \| y0 << 8 \| columns << 16 \| rows << 24`) |
//! | 4, 5 | the wait limit (u64, low word first) |
//! | 6 | program word counts: reader (bits 0..7), writer (8..15), compute (16..23) |
//! | 7 | 0 |
//! | 8.. | program words: reader's, then writer's, then compute's (at most [`MAX_PROGRAM_WORDS`]) |
//!
//! # Reports
//! Each slot has a report record, so the host can read a command's report after the tile has
//! already reported the next one. Record words: 0 index, 1 sequence, 2 status, 3 the reader's
//! cycle clock (low 32 bits) when it took the command, 4..6 the give-up word of reader, writer,
//! compute ([`KernelGiveUp`]), 7 the reader's cycle clock when it wrote the report, 8..10 their
//! give-up blocks, 12..14 their statistics (bytes moved or checked). The two clock words give
//! the host a command's run time on the device. A kernel writes its three words, then its done index;
//! once all three are done, the reader kernel writes status, sequence, index, then the reported
//! index (last). Status bits: [`STATUS_GAVE_UP`], [`STATUS_REFUSED`],
//! [`STATUS_MISMATCH`]; 0 is success. The first give-up of each broadcast stays in the
//! broadcast areas, tagged with the sequence number.

use komorebi_hal::{ControlLayout, Role};

/// L1 address of the control block on every tile.
pub const CONTROL_BASE: u32 = 0x4000;
/// Bytes of the control block.
pub const CONTROL_BYTES: u32 = 0x1000;
/// `KMRB`.
pub const MAGIC: u32 = 0x4B4D_5242;
/// This ABI's version (2: the chip word at [`HEADER_CHIP`]; 3: the images' check word a word
/// at a time, decisions D32; 4: the data-movement kernels' set-up indices at
/// [`KERNEL_SET_UP`], which compute waits for before it takes a command's first block,
/// decisions D56).
pub const ABI_VERSION: u32 = 4;

/// Offset of the magic word.
pub const HEADER_MAGIC: u32 = 0x000;
/// Offset of the ABI version.
pub const HEADER_VERSION: u32 = 0x004;
/// Offset of the tile's logical coordinates.
pub const HEADER_TILE: u32 = 0x008;
/// Offset of the chip's harvest mask (die order).
pub const HEADER_HARVEST: u32 = 0x00C;
/// Offset of the chip word ([`ChipWord`]).
pub const HEADER_CHIP: u32 = 0x014;
/// Offset of the kernels' panic words (reader, writer, compute).
pub const PANIC: u32 = 0x020;
/// A panic word: this tag with the source line in the low half.
pub const PANIC_TAG: u32 = 0xDEAD_0000;
/// Offset of the circular-buffer table.
pub const CB_TABLE: u32 = 0x600;
/// Bytes per circular-buffer table entry (base, page size, pages, 0).
pub const CB_ENTRY_BYTES: u32 = 16;
/// Entries in the table.
pub const CB_ENTRIES: u32 = 64;

/// Offset of the stop word.
pub const STOP: u32 = 0x010;
/// Offset of the idle wait limit (u64).
pub const IDLE_WAIT_LIMIT: u32 = 0x018;
/// Offset of the kernels' done indices (reader, writer, compute).
pub const KERNEL_DONE: u32 = 0x040;
/// Offset of the kernels' recovering indices (reader, writer, compute).
pub const KERNEL_RECOVERING: u32 = 0x050;
/// Offset of the kernels' set-up indices (reader, writer, compute): a data-movement kernel
/// with words for a command stores the command's index once its broadcast is set up or refused
/// (the refusal recorded first, whether its words, its buffer or its program were refused),
/// before it pushes any page; compute takes no page as a command's first block before its
/// producer's word says this command. Compute's own word is not written.
pub const KERNEL_SET_UP: u32 = 0x060;
/// Offset of the index of the last command the tile reported.
pub const REPORT_INDEX: u32 = 0x080;
/// Offset of report record 0.
pub const RECORDS_BASE: u32 = 0x0C0;
/// Bytes of one report record.
pub const RECORD_BYTES: u32 = 0x40;
/// Offset in a record of the command index.
pub const RECORD_INDEX: u32 = 0x00;
/// Offset in a record of the sequence number.
pub const RECORD_SEQUENCE: u32 = 0x04;
/// Offset in a record of the status.
pub const RECORD_STATUS: u32 = 0x08;
/// Offset in a record of the low 32 bits of the reader's cycle clock when it took the command
/// (the host extends it against the cycle it posted at).
pub const RECORD_STARTED: u32 = 0x0C;
/// Offset in a record of the kernels' give-up words (reader, writer, compute).
pub const RECORD_GIVE_UP: u32 = 0x10;
/// Offset in a record of the low 32 bits of the reader's cycle clock when it wrote the report.
pub const RECORD_FINISHED: u32 = 0x1C;
/// Offset in a record of the kernels' give-up blocks.
pub const RECORD_GIVE_UP_BLOCK: u32 = 0x20;
/// Offset in a record of the kernels' statistics.
pub const RECORD_STAT: u32 = 0x30;
/// Offset of command slot 0.
pub const SLOTS_BASE: u32 = 0x200;
/// Bytes of one command slot.
pub const SLOT_BYTES: u32 = 0x200;
/// Command slots per tile.
pub const SLOTS: u32 = 2;
/// Header words of a slot.
pub const SLOT_HEADER_WORDS: usize = 8;
/// Program words a command may carry (all kernels together).
pub const MAX_PROGRAM_WORDS: usize = (SLOT_BYTES as usize / 4) - SLOT_HEADER_WORDS;

/// The command is exclusive: no overlapping group's command may be in flight with it. Rule 3
/// of the broadcast: a command with broadcasts must carry it.
pub const FLAG_EXCLUSIVE: u16 = 1;

/// Report status: some kernel gave up.
pub const STATUS_GAVE_UP: u32 = 1;
/// Report status: the command was refused (unknown handler, rule 3, malformed).
pub const STATUS_REFUSED: u32 = 2;
/// Report status: a compute kernel found bytes that were not the ones sent.
pub const STATUS_MISMATCH: u32 = 4;

/// Handler id that ends the kernels' loops (the kernels return).
pub const HANDLER_EXIT: u16 = 0;

/// Offset of slot `slot`.
pub const fn slot(slot: u32) -> u32 {
    SLOTS_BASE + (slot % SLOTS) * SLOT_BYTES
}

/// The slot of a tile's command with index `index` (1-based).
pub const fn slot_of(index: u32) -> u32 {
    slot(index.wrapping_sub(1))
}

/// Offset of the report record of the command with index `index`.
pub const fn record_of(index: u32) -> u32 {
    RECORDS_BASE + (index.wrapping_sub(1) % SLOTS) * RECORD_BYTES
}

/// The control block's place and the words `ControlBlock` names, for the backends' handles.
pub const CONTROL_LAYOUT: ControlLayout = ControlLayout {
    base: CONTROL_BASE,
    len: CONTROL_BYTES,
    stop_offset: STOP,
    wait_limit_offset: IDLE_WAIT_LIMIT,
};

/// What the host found about the chip that every kernel's NoC addresses depend on, written into
/// each tile's header before the kernels start.
///
/// The host is the one source of truth, as tt-metal's host is (its kernels get translated
/// coordinates from it): it reads the PCIe NIU's `NIU_CFG_0` bit 14 for its own windows, and
/// ARC telemetry for the harvest. A kernel checks its own NIU's `NOC_ID_LOGICAL` against it at
/// boot rather than deciding from its NIU's `NIU_CFG_0` (ttsim translates every coordinate but
/// leaves the Tensix NIUs' `NIU_CFG_0` at 0). Bits: 0 translated; 8..11 the fused DRAM bank
/// plus one (0: every bank works); the rest 0.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ChipWord {
    /// Coordinates on the NoC are translated coordinates (the chip register crate's `translate`).
    pub translated: bool,
    /// The DRAM bank (0..8) whose clock is off, if one is.
    pub fused_dram: Option<u8>,
}

impl ChipWord {
    /// The word; `None` for a fused bank above 7, which the word cannot name (a bank of 16
    /// once came out as bank 0).
    pub const fn encode(self) -> Option<u32> {
        let fused = match self.fused_dram {
            Some(b) if b > 7 => return None,
            Some(b) => b as u32 + 1,
            None => 0,
        };
        Some(self.translated as u32 | fused << 8)
    }

    /// The chip word `word` encodes; `None` if a reserved bit is set or the bank is above 7.
    pub const fn decode(word: u32) -> Option<Self> {
        if word & !0xF01 != 0 {
            return None;
        }
        let fused = (word >> 8) & 0xF;
        if fused > 8 {
            return None;
        }
        Some(Self {
            translated: word & 1 != 0,
            fused_dram: if fused == 0 {
                None
            } else {
                Some(fused as u8 - 1)
            },
        })
    }
}

/// Offset of `role`'s word in a per-kernel table at `table` (three words in [`Role`] order:
/// [`KERNEL_DONE`], [`KERNEL_RECOVERING`], [`KERNEL_SET_UP`], [`PANIC`]).
pub const fn kernel_word(table: u32, role: Role) -> u32 {
    table + 4 * role.index() as u32
}

/// What a kernel's give-up word says.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GiveUpCode {
    /// A broadcast call gave up at this place (the codes of `komorebi_broadcast::Where`).
    Broadcast(komorebi_broadcast::Where),
    /// Compute's wait for a block passed the wait limit.
    ComputeTimedOut,
    /// Compute saw the stop flag.
    ComputeStopped,
    /// A compute call failed otherwise (buffer misuse).
    ComputeFailed,
    /// Compute found bytes that were not the ones sent, or blocks out of order.
    DataMismatch,
    /// Refused: no handler with the command's id.
    UnknownHandler,
    /// Refused: the handler runs broadcasts and the command lacks `EXCLUSIVE` (rule 3).
    NotExclusive,
    /// Refused: this tile is not in the command's group.
    NotInGroup,
    /// Refused: the slot's word counts exceed the slot.
    BadCommand,
}

impl GiveUpCode {
    /// The code byte.
    pub const fn code(self) -> u8 {
        match self {
            Self::Broadcast(w) => w.code(),
            Self::ComputeTimedOut => 0x10,
            Self::ComputeStopped => 0x11,
            Self::ComputeFailed => 0x12,
            Self::DataMismatch => 0x13,
            Self::UnknownHandler => 0x20,
            Self::NotExclusive => 0x21,
            Self::NotInGroup => 0x22,
            Self::BadCommand => 0x23,
        }
    }

    /// The code of byte `c`; `None` for 0 (no give-up) or an unknown byte.
    pub const fn from_code(c: u8) -> Option<Self> {
        match c {
            0x10 => Some(Self::ComputeTimedOut),
            0x11 => Some(Self::ComputeStopped),
            0x12 => Some(Self::ComputeFailed),
            0x13 => Some(Self::DataMismatch),
            0x20 => Some(Self::UnknownHandler),
            0x21 => Some(Self::NotExclusive),
            0x22 => Some(Self::NotInGroup),
            0x23 => Some(Self::BadCommand),
            c => match komorebi_broadcast::Where::from_code(c) {
                Some(w) => Some(Self::Broadcast(w)),
                None => None,
            },
        }
    }

    /// True for the refusals.
    pub const fn is_refusal(self) -> bool {
        matches!(
            self,
            Self::UnknownHandler | Self::NotExclusive | Self::NotInGroup | Self::BadCommand
        )
    }
}

/// `GiveUpCode::name`, and the same names for defmt, from one list.
macro_rules! code_names {
    ($($code:ident => $name:literal,)*) => {
        impl GiveUpCode {
            /// The name the host prints: a broadcast give-up's place (`broadcast_done`, ...), or
            /// `compute_timeout`, `compute_stopped`, `compute_failed`, `data_mismatch`,
            /// `unknown_handler`, `not_exclusive`, `not_in_group`, `bad_command`.
            pub const fn name(self) -> &'static str {
                match self {
                    Self::Broadcast(w) => w.name(),
                    $(Self::$code => $name,)*
                }
            }
        }

        /// Logged by its name, as the host's records print it: an interned string, so the names
        /// stay in the ELF's defmt table, not in the image.
        #[cfg(feature = "defmt")]
        impl defmt::Format for GiveUpCode {
            fn format(&self, f: defmt::Formatter<'_>) {
                let name = match self {
                    Self::Broadcast(w) => return w.format(f),
                    $(Self::$code => defmt::intern!($name),)*
                };
                defmt::write!(f, "{=istr}", name)
            }
        }
    };
}

code_names! {
    ComputeTimedOut => "compute_timeout",
    ComputeStopped => "compute_stopped",
    ComputeFailed => "compute_failed",
    DataMismatch => "data_mismatch",
    UnknownHandler => "unknown_handler",
    NotExclusive => "not_exclusive",
    NotInGroup => "not_in_group",
    BadCommand => "bad_command",
}

/// One kernel's give-up, as its two words hold it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct KernelGiveUp {
    /// What.
    pub code: GiveUpCode,
    /// The broadcast it concerned (0 when none).
    pub broadcast: u8,
    /// The block.
    pub block: u32,
}

impl KernelGiveUp {
    /// The give-up word.
    pub const fn word(&self) -> u32 {
        self.code.code() as u32 | (self.broadcast as u32) << 8
    }

    /// The give-up of a word and its block; `None` when the word says none.
    pub const fn from_words(word: u32, block: u32) -> Option<Self> {
        match GiveUpCode::from_code(word as u8) {
            Some(code) => Some(Self {
                code,
                broadcast: (word >> 8) as u8,
                block,
            }),
            None => None,
        }
    }
}

/// L1 address of the kernels' log rings (firmware built with logging; decisions D27): one ring
/// of [`LOG_RING_BYTES`] per kernel, in [`Role`] order, between the control block's end and
/// compute's reset PC (0x6000).
pub const LOG_BASE: u32 = 0x5000;

/// The end of the L1 the firmware holds: its three images (compute from 0x6000, the writer from
/// 0x12000, the reader from 0x1C000 to 0x30000), their headers, the control block and the log
/// rings all lie below it. A circular buffer lies above it, and within L1: the firmware refuses
/// a buffer table entry that does not (the NoC would write its pages over code or the control
/// block), and so does the host's `Session::configure_cb`.
pub const FIRMWARE_L1_END: u32 = 0x3_0000;

/// The alignment, in bytes, of a circular buffer's base and page size: the NoC reads and
/// writes L1 in 16-byte units (tt-metal `noc_parameters.h`, `NOC_L1_READ_ALIGNMENT_BYTES` and
/// `NOC_L1_WRITE_ALIGNMENT_BYTES`), so every page of such a buffer starts on one.
pub const BUFFER_ALIGN: u32 = 16;

/// Whether a circular buffer of `pages` pages of `page_size` bytes at L1 `base` lies between
/// [`FIRMWARE_L1_END`] and the end of an L1 of `l1_size` bytes, with at least one page of at
/// least one byte (without overflow), its base and page size multiples of [`BUFFER_ALIGN`].
/// A handle's pointers are L1 addresses, which are whole words: a base off a word would make
/// them disagree with the pages the NoC fills.
pub const fn buffer_fits(base: u32, page_size: u32, pages: u32, l1_size: u32) -> bool {
    let bytes = page_size as u64 * pages as u64;
    base >= FIRMWARE_L1_END
        && (base | page_size) % BUFFER_ALIGN == 0
        && bytes > 0
        && base as u64 + bytes <= l1_size as u64
}
/// Bytes of one kernel's log ring: its header, then [`LOG_DATA_BYTES`] of frames.
pub const LOG_RING_BYTES: u32 = 0x500;
/// The ring's first word once its kernel has booted: "KLOG".
pub const LOG_MAGIC: u32 = 0x4B4C_4F47;
/// Offset of the count of frames the ring holds (whole frames: counted as each ends).
pub const LOG_FRAMES: u32 = 0x4;
/// Offset of the count of bytes those frames take, from [`LOG_DATA`].
pub const LOG_BYTES: u32 = 0x8;
/// Offset of the count of frames dropped because they did not fit: the ring keeps the first
/// frames since boot (defmt's raw encoding marks no frame boundaries to resume after a wrap).
pub const LOG_LOST: u32 = 0xC;
/// Offset of the frames' bytes (defmt frames, raw encoding, one after the other).
pub const LOG_DATA: u32 = 0x10;
/// Bytes of frames a ring holds.
pub const LOG_DATA_BYTES: u32 = LOG_RING_BYTES - LOG_DATA;

/// L1 address of `role`'s log ring.
pub const fn log_ring(role: Role) -> u32 {
    LOG_BASE + LOG_RING_BYTES * role.index() as u32
}
