//! The kernel crate's values at their edges and what they print: give-up codes and their names,
//! program fields, a command's slot words, the control block a handler body sees, boot words
//! and image errors. Every expected value is written here by hand.

use std::collections::BTreeMap;

use komorebi_broadcast::Where;
use komorebi_hal::{ControlBlock, L1Addr, LogicalRect, Role, control};
use komorebi_kernel::abi::{GiveUpCode, KernelGiveUp};
use komorebi_kernel::broadcast_handler::program::{
    BroadcastProgram, ComputeInput, ComputeProgram, Field, MoverProgram, ProgramError,
};
use komorebi_kernel::image::{self, BootFailure, BootState, ImageError};
use komorebi_kernel::{BroadcastHandler, Command, CommandCtrl};

// ---- give-up codes -------------------------------------------------------------------------

#[test]
fn give_up_codes_are_named_for_reports_and_the_four_refusals_are_the_0x2n_codes() {
    let codes = [
        (
            GiveUpCode::Broadcast(Where::BroadcastDone),
            "broadcast_done",
            false,
        ),
        (
            GiveUpCode::Broadcast(Where::BroadcastValid),
            "broadcast_valid",
            false,
        ),
        (
            GiveUpCode::Broadcast(Where::BroadcastFree),
            "broadcast_free",
            false,
        ),
        (
            GiveUpCode::Broadcast(Where::BroadcastBegin),
            "broadcast_begin",
            false,
        ),
        (GiveUpCode::ComputeTimedOut, "compute_timeout", false),
        (GiveUpCode::ComputeStopped, "compute_stopped", false),
        (GiveUpCode::ComputeFailed, "compute_failed", false),
        (GiveUpCode::DataMismatch, "data_mismatch", false),
        (GiveUpCode::UnknownHandler, "unknown_handler", true),
        (GiveUpCode::NotExclusive, "not_exclusive", true),
        (GiveUpCode::NotInGroup, "not_in_group", true),
        (GiveUpCode::BadCommand, "bad_command", true),
    ];
    for (code, name, refusal) in codes {
        assert_eq!(code.name(), name);
        assert_eq!(code.is_refusal(), refusal, "{name}");
    }
}

#[test]
fn a_kernel_give_up_word_carries_its_broadcast_in_bits_8_to_15() {
    assert_eq!(
        KernelGiveUp::from_words(0x0000_0113, 5),
        Some(KernelGiveUp {
            code: GiveUpCode::DataMismatch,
            broadcast: 1,
            block: 5,
        })
    );
    assert_eq!(
        KernelGiveUp::from_words(0x0000_0101, 0),
        Some(KernelGiveUp {
            code: GiveUpCode::Broadcast(Where::BroadcastDone),
            broadcast: 1,
            block: 0,
        })
    );
    let g = KernelGiveUp {
        code: GiveUpCode::ComputeStopped,
        broadcast: 1,
        block: 2,
    };
    assert_eq!(g.word(), 0x0000_0111);
    // Codes that are none of the ABI's: no give-up.
    for word in [
        0x0000_0000,
        0x0000_0105,
        0x0000_0014,
        0x0000_0124,
        0x0000_00FF,
    ] {
        assert_eq!(KernelGiveUp::from_words(word, 1), None, "{word:#x}");
    }
}

// ---- program fields ------------------------------------------------------------------------

#[test]
fn program_fields_are_named_in_words() {
    let names = [
        (Field::Blocks, "blocks"),
        (Field::BankCoordinates, "DRAM bank coordinates"),
        (Field::Producer, "producer"),
        (Field::Buffer, "buffer"),
        (Field::Pages, "pages"),
        (Field::Window, "window"),
        (Field::BroadcastId, "broadcast id"),
        (Field::PageSize, "page size"),
        (Field::Noc, "NoC"),
        (Field::StallBefore, "stall before"),
    ];
    for (field, name) in names {
        assert_eq!(field.name(), name);
        assert_eq!(field.to_string(), name);
    }
    let e = ProgramError::Disagree {
        broadcast: 1,
        field: Field::PageSize,
    };
    assert_eq!(
        e.to_string(),
        "compute's copy of broadcast 1 disagrees with its producer on page size"
    );
    // A stall block says what it must stay below; a field with no bound of its own says none.
    let e = ProgramError::Field {
        role: Role::Reader,
        field: Field::StallBefore,
        value: 65_535,
    };
    assert_eq!(
        e.to_string(),
        "reader program: stall before 65535 is out of range (allowed: below 65535)"
    );
    let e = ProgramError::Field {
        role: Role::Compute,
        field: Field::Producer,
        value: 2,
    };
    assert_eq!(e.to_string(), "compute program: producer 2 is out of range");
}

/// `ProgramError::Inputs` holds bits 0..15 of compute's word 0 without the check bit: up to
/// 0xFF it is a count of broadcasts (bits 0..7), above it a reserved bit (9..15) is set.
#[test]
fn too_many_broadcasts_and_a_reserved_bit_print_apart() {
    assert_eq!(
        ProgramError::Inputs(3).to_string(),
        "compute program of 3 broadcasts (allowed: 0..=2)"
    );
    assert_eq!(
        ProgramError::Inputs(0xFF).to_string(),
        "compute program of 255 broadcasts (allowed: 0..=2)"
    );
    assert_eq!(
        ProgramError::Inputs(0x200).to_string(),
        "compute program word 0 has reserved bits 0x200 set (bits 9..15; allowed: 0)"
    );
    assert_eq!(
        ProgramError::Inputs(0x8203).to_string(),
        "compute program word 0 has reserved bits 0x8200 set (bits 9..15; allowed: 0)"
    );
}

fn mover(blocks: u16) -> MoverProgram {
    MoverProgram {
        args: [0; 11],
        blocks,
        page_size: 64,
        dram_base: 0,
        banks: Default::default(),
        stall_before: None,
    }
}

#[test]
fn a_program_carries_32_767_blocks_and_refuses_32_768() {
    let m = mover(32_767);
    assert_eq!(MoverProgram::decode(Role::Reader, &m.encode()), Ok(m));
    assert_eq!(
        MoverProgram::decode(Role::Writer, &mover(32_768).encode()),
        Err(ProgramError::Field {
            role: Role::Writer,
            field: Field::Blocks,
            value: 32_768,
        })
    );
    let input = |blocks| ComputeInput {
        cb: 0,
        pages: 1,
        window: 1,
        blocks,
        page_size: 64,
        broadcast: 0,
        producer: Role::Reader,
    };
    let compute = |blocks| {
        let mut p = ComputeProgram::default();
        p.inputs.push(input(blocks)).unwrap();
        p
    };
    assert_eq!(
        ComputeProgram::decode(&compute(32_767).encode()),
        Ok(compute(32_767))
    );
    let e = ComputeProgram::decode(&compute(32_768).encode()).unwrap_err();
    assert_eq!(
        e,
        ProgramError::Field {
            role: Role::Compute,
            field: Field::Blocks,
            value: 32_768,
        }
    );
    assert_eq!(
        e.to_string(),
        "compute program: blocks 32768 is out of range (allowed: at most 32767)"
    );
}

/// A data-movement kernel's handler is made with both movers' places in it (its first command
/// decodes into them, decisions D57); compute's is a plain `BroadcastHandler::new()`. The
/// handler prints its program, so its `Debug` shows which places it holds.
#[test]
fn a_data_movement_kernel_s_handler_holds_both_movers_places_and_compute_s_none() {
    let with_places = BroadcastProgram {
        reader: Some(MoverProgram::default()),
        writer: Some(MoverProgram::default()),
        compute: ComputeProgram::default(),
    };
    let printed = |p: &BroadcastProgram| format!("BroadcastHandler {{ program: {p:?} }}");
    for role in [Role::Reader, Role::Writer] {
        assert_eq!(
            format!("{:?}", BroadcastHandler::for_kernel(role)),
            printed(&with_places),
            "{role:?}"
        );
    }
    assert_eq!(
        format!("{:?}", BroadcastHandler::for_kernel(Role::Compute)),
        printed(&BroadcastProgram::default())
    );
    assert_eq!(
        format!("{:?}", BroadcastHandler::new()),
        printed(&BroadcastProgram::default())
    );
}

// ---- commands ------------------------------------------------------------------------------

#[test]
fn a_command_carries_at_most_120_program_words_in_all() {
    let c = || Command::new(1, 1, 1, 1, LogicalRect::new(0, 0, 1, 1), 0);
    let w = [7u32; 121];
    assert!(c().with_words(&w[..120], &[], &[]).is_some());
    assert!(c().with_words(&w[..40], &w[..40], &w[..40]).is_some());
    assert!(c().with_words(&w[..121], &[], &[]).is_none());
    assert!(c().with_words(&w[..40], &w[..40], &w[..41]).is_none());
    assert!(c().with_words(&w[..1], &w[..119], &w[..1]).is_none());
}

#[test]
fn exclusive_is_bit_0_of_the_flags() {
    let c = |flags| Command::new(1, 1, 1, flags, LogicalRect::new(0, 0, 1, 1), 0);
    assert!(!c(0).exclusive());
    assert!(c(1).exclusive());
    assert!(!c(2).exclusive());
    assert!(c(3).exclusive());
    assert!(c(0xFFFF).exclusive());
}

/// The slot of command 5, sequence 0x0001_0009, handler 7 with flags 1, group (2,3,4,5), wait
/// limit 0x1_2345_6789, words reader [1, 2], writer [3], compute [4, 5, 6], as the module docs
/// lay it out.
const SLOT: [u32; 14] = [
    5,
    0x0001_0009,
    0x0001_0007,
    0x0504_0302,
    0x2345_6789,
    0x0000_0001,
    0x0003_0102,
    0,
    1,
    2,
    3,
    4,
    5,
    6,
];

fn slot_command() -> Command {
    Command::new(
        5,
        0x0001_0009,
        7,
        1,
        LogicalRect::new(2, 3, 4, 5),
        0x1_2345_6789,
    )
    .with_words(&[1, 2], &[3], &[4, 5, 6])
    .unwrap()
}

#[test]
fn a_command_s_slot_words_are_the_documented_header_then_the_program_words() {
    let c = slot_command();
    let (header, words) = c.slot_words();
    assert_eq!(header, SLOT[..8]);
    assert_eq!(words, &SLOT[8..]);
}

/// A control block of plain words that records its calls.
#[derive(Default)]
struct Words {
    words: BTreeMap<u32, u32>,
    calls: Vec<String>,
    stop: bool,
    fail_loads_from: Option<u32>,
}

impl control::ErrorType for Words {
    type Error = control::ErrorKind;
}

impl ControlBlock for Words {
    fn len(&self) -> u32 {
        0x1000
    }
    fn addr(&self, offset: u32) -> Result<L1Addr, control::ErrorKind> {
        L1Addr::new(0x4000 + offset).map_err(|_| control::ErrorKind::Misaligned)
    }
    fn load(&mut self, offset: u32) -> Result<u32, control::ErrorKind> {
        self.calls.push(format!("load {offset:#x}"));
        if self.fail_loads_from.is_some_and(|f| offset >= f) {
            return Err(control::ErrorKind::OutOfRange);
        }
        Ok(*self.words.get(&offset).unwrap_or(&0))
    }
    fn store(&mut self, offset: u32, value: u32) -> Result<(), control::ErrorKind> {
        self.calls.push(format!("store {offset:#x} {value:#x}"));
        self.words.insert(offset, value);
        Ok(())
    }
    fn stop_requested(&mut self) -> Result<bool, control::ErrorKind> {
        self.calls.push("stop_requested".into());
        Ok(self.stop)
    }
    fn request_stop(&mut self) -> Result<(), control::ErrorKind> {
        self.calls.push("request_stop".into());
        self.stop = true;
        Ok(())
    }
    fn wait_limit(&mut self) -> Result<u64, control::ErrorKind> {
        Ok(1_000)
    }
    fn now(&mut self) -> u64 {
        12_345
    }
}

#[test]
fn a_command_loads_from_its_slot_words_and_refuses_counts_beyond_the_slot() {
    let mut ctrl = Words::default();
    for (i, w) in SLOT.iter().enumerate() {
        ctrl.words.insert(0x400 + 4 * i as u32, *w);
    }
    let mut c = Command::new(0, 0, 0, 0, LogicalRect::new(0, 0, 0, 0), 0);
    assert_eq!(c.load(&mut ctrl, 0x400), Ok(()));
    assert_eq!(c, slot_command());
    assert_eq!(
        (c.index, c.sequence, c.handler, c.flags),
        (5, 0x0001_0009, 7, 1)
    );
    assert_eq!(c.group, LogicalRect::new(2, 3, 4, 5));
    assert_eq!(c.wait_limit, 0x1_2345_6789);
    assert_eq!(c.words(Role::Reader), &[1, 2]);
    assert_eq!(c.words(Role::Writer), &[3]);
    assert_eq!(c.words(Role::Compute), &[4, 5, 6]);
    // 14 loads, one a word, in order from the slot's start.
    let loads: Vec<String> = (0..14)
        .map(|i| format!("load {:#x}", 0x400 + 4 * i))
        .collect();
    assert_eq!(ctrl.calls, loads);
    // Counts of 100 + 21 words: one more than a slot holds. The header is taken, no word.
    ctrl.words.insert(0x418, 100 | 21 << 8);
    let mut c = Command::new(0, 0, 0, 0, LogicalRect::new(0, 0, 0, 0), 0);
    assert_eq!(c.load(&mut ctrl, 0x400), Err(None));
    assert_eq!((c.index, c.sequence), (5, 0x0001_0009));
    assert!(c.words(Role::Reader).is_empty());
    // 120 words in all fit.
    ctrl.words.insert(0x418, 100 | 20 << 8);
    assert_eq!(c.load(&mut ctrl, 0x400), Ok(()));
    assert_eq!(c.words(Role::Writer).len(), 20);
    // A control block that fails.
    ctrl.fail_loads_from = Some(0x420);
    assert_eq!(
        c.load(&mut ctrl, 0x400),
        Err(Some(control::ErrorKind::OutOfRange))
    );
}

#[test]
fn a_handler_body_s_control_block_is_the_tile_s_with_the_command_s_wait_limit() {
    let mut tile = Words::default();
    tile.words.insert(0x40, 0xABCD);
    tile.stop = true;
    {
        let mut cc = CommandCtrl::new(&mut tile, 77);
        assert_eq!(cc.len(), 0x1000);
        assert_eq!(cc.addr(0x10), Ok(L1Addr::new(0x4010).unwrap()));
        assert_eq!(cc.load(0x40), Ok(0xABCD));
        assert_eq!(cc.store(0x44, 9), Ok(()));
        // Words a stride apart, as a command's slot is read: the tile's, through its loads.
        let mut words = [7; 2];
        assert_eq!(cc.load_words(0x40, 4, &mut words), Ok(()));
        assert_eq!(words, [0xABCD, 9]);
        assert_eq!(cc.stop_requested(), Ok(true));
        assert_eq!(cc.request_stop(), Ok(()));
        assert_eq!(cc.wait_limit(), Ok(77));
        assert_eq!(cc.now(), 12_345);
    }
    assert_eq!(tile.words[&0x44], 9);
    assert_eq!(
        tile.calls,
        [
            "load 0x40",
            "store 0x44 0x9",
            "load 0x40",
            "load 0x44",
            "stop_requested",
            "request_stop"
        ]
    );
    // The recovery's view: the stop flag reads false, everything else is the tile's.
    tile.calls.clear();
    let mut cc = CommandCtrl::recovery(&mut tile, u64::MAX);
    assert_eq!(cc.stop_requested(), Ok(false));
    assert_eq!(cc.wait_limit(), Ok(u64::MAX));
    assert_eq!(cc.load(0x44), Ok(9));
    assert_eq!(cc.request_stop(), Ok(()));
    assert_eq!(tile.calls, ["load 0x44", "request_stop"]);
}

// ---- boot words and image errors -----------------------------------------------------------

#[test]
fn boot_failures_and_boot_states_print_what_they_mean() {
    let describe = [
        (
            BootFailure::AbiVersion,
            "control-block ABI version differs from the image's",
        ),
        (
            BootFailure::WrongTile,
            "header's tile is not this tile's own coordinates",
        ),
        (BootFailure::BadHarvest, "header's harvest mask is invalid"),
        (
            BootFailure::HarvestMismatch,
            "header's harvest mask disagrees with the chip's coordinate translation",
        ),
        (BootFailure::BadChip, "header's chip word is invalid"),
        (
            BootFailure::BadMagic,
            "control-block header has no magic word: no host set it up",
        ),
    ];
    for (f, text) in describe {
        assert_eq!(f.describe(), text);
    }
    assert_eq!(BootState::NotUp.to_string(), "not up");
    assert_eq!(BootState::Up.to_string(), "up");
    assert_eq!(
        BootState::Failed(BootFailure::WrongTile).to_string(),
        "refused to run: header's tile is not this tile's own coordinates"
    );
    assert_eq!(
        BootState::Garbage(0x1234).to_string(),
        "boot word 0x00001234 (not written by komorebi)"
    );
}

#[test]
fn only_a_word_with_the_b0f0_tag_is_a_boot_failure() {
    // The failure codes without their tag are garbage, as is the tag with another code.
    for code in 1..=5u32 {
        assert_eq!(image::boot_state(code), BootState::Garbage(code));
        assert_eq!(
            image::boot_state(0xB0F1_0000 | code),
            BootState::Garbage(0xB0F1_0000 | code)
        );
    }
    assert_eq!(
        image::boot_state(0xB0F0_0003),
        BootState::Failed(BootFailure::BadHarvest)
    );
    assert_eq!(image::boot_state(0x4B4D_5242), BootState::Up);
    assert_eq!(image::boot_state(0), BootState::NotUp);
}

#[test]
fn image_errors_print_what_was_found_and_what_was_expected() {
    assert_eq!(
        ImageError::Magic(0x1234_5678).to_string(),
        "no komorebi image header (word 0 is 0x12345678, not KMFW)"
    );
    assert_eq!(
        ImageError::Version {
            found: 2,
            expected: 1
        }
        .to_string(),
        "image built for ABI version 2, this is version 1"
    );
    assert_eq!(
        ImageError::Role(3).to_string(),
        "role word 3 is not 0 (reader), 1 (writer) or 2 (compute)"
    );
    assert_eq!(
        ImageError::Check {
            found: 0xDEAD_BEEF,
            expected: 0x156F_2E51
        }
        .to_string(),
        "check word 0xdeadbeef does not match the header (0x156f2e51)"
    );
    assert_eq!(
        ImageError::Short(28).to_string(),
        "the header ends after 28 bytes (a header has 32)"
    );
}
