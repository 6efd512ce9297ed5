//! The broadcast handler's program words: literal layout, round trips, and every refusal.

use komorebi_broadcast::args::{self, Along, BroadcastArgs, CopiedFields};
use komorebi_hal::{LogicalRect, Role, Xy};
use komorebi_kernel::Command;
use komorebi_kernel::broadcast_handler::program::{
    BroadcastProgram, Check, ComputeInput, ComputeProgram, Field, MOVER_WORDS, MoverProgram,
    ProgramError, compute_words, fuzz_decode,
};
use proptest::prelude::*;

fn xy(x: u8, y: u8) -> Xy {
    Xy::new(x, y).unwrap()
}

fn args(broadcast: u8, noc: u8) -> BroadcastArgs {
    BroadcastArgs {
        broadcast,
        rank: 1,
        receivers: 3,
        window: 2,
        noc,
        cb: broadcast,
        pages: 4,
        core: (2, 2),
        sender: (1, 2),
        start: (2, 2),
        end: (4, 2),
        group: LogicalRect::new(0, 0, 4, 1),
        rect: LogicalRect::new(0, 0, 4, 1),
        along: Along::Row,
    }
}

fn mover(broadcast: u8, noc: u8) -> MoverProgram {
    MoverProgram {
        args: args(broadcast, noc).encode(),
        blocks: 16,
        page_size: 2048,
        dram_base: 0x100_0000,
        banks: core::array::from_fn(|b| xy(b as u8, 11 - b as u8)),
        stall_before: None,
    }
}

fn stream(broadcast: u8, producer: Role) -> ComputeInput {
    ComputeInput {
        cb: broadcast,
        pages: 4,
        window: 2,
        blocks: 16,
        page_size: 2048,
        broadcast,
        producer,
    }
}

fn program() -> BroadcastProgram {
    let mut compute = ComputeProgram {
        job: 7,
        ..ComputeProgram::default()
    };
    compute.inputs.push(stream(0, Role::Reader)).unwrap();
    compute.inputs.push(stream(1, Role::Writer)).unwrap();
    BroadcastProgram {
        reader: Some(mover(0, 0)),
        writer: Some(mover(1, 1)),
        compute,
    }
}

fn command(p: &BroadcastProgram) -> Command {
    let w = p.words();
    Command::new(1, 1, 1, 1, LogicalRect::new(0, 0, 4, 1), 1000)
        .with_words(&w.reader, &w.writer, &w.compute)
        .unwrap()
}

#[test]
fn mover_words_are_laid_out_as_the_module_docs_say() {
    let mut m = mover(0, 0);
    m.stall_before = Some(3);
    let w = m.encode();
    assert_eq!(w.len(), MOVER_WORDS);
    assert_eq!(&w[..11], &args(0, 0).encode());
    assert_eq!(w[11], 16 | 4 << 16, "blocks, then stall block + 1");
    assert_eq!(w[12], 2048);
    assert_eq!(w[13], 0x0100_0000);
    // Bank 0 at (0, 11) and bank 1 at (1, 10): x | y << 8, two to a word.
    assert_eq!(w[14], 0x0B00 | 0x0A01 << 16);
    assert_eq!(w[17], (6 | 5 << 8) | (7 | 4 << 8) << 16);
    assert_eq!(w[18] >> 24, 4, "version 4 in the check word's top byte");
}

#[test]
fn compute_words_are_laid_out_as_the_module_docs_say() {
    let mut p = program();
    p.compute.stall_before = Some(0);
    let w = p.compute.encode();
    assert_eq!(w.len(), compute_words(2));
    assert_eq!(w.len(), 17);
    assert_eq!(w[0], 2 | 1 << 16, "two broadcasts, stall before block 0");
    assert_eq!(w[1], 7);
    assert_eq!(&w[2..9], &[0, 4, 2, 16, 2048, 0, 0]);
    assert_eq!(&w[9..16], &[1, 4, 2, 16, 2048, 1, 1]);
    assert_eq!(w[16] >> 24, 4, "version 4");
}

#[test]
fn check_none_is_bit_8_of_compute_s_word_0_and_the_rest_of_the_words_stay() {
    // Golden words, written by hand: `--check none` is bit 8 of word 0; a program without it
    // (every program written before the bit existed) means `Check::Full`.
    let mut p = program();
    p.compute.stall_before = Some(0);
    let full = p.compute.encode();
    p.compute.check = Check::None;
    let none = p.compute.encode();
    assert_eq!(full[0], 0x0001_0002, "two broadcasts, stall before block 0");
    assert_eq!(none[0], 0x0001_0102, "the same with bit 8: check none");
    assert_eq!(&none[1..16], &full[1..16], "every other word as before");
    assert_ne!(none[16], full[16], "the check word covers the bit");
    assert_eq!(ComputeProgram::default().check, Check::Full);
    assert_eq!(ComputeProgram::decode(&none).unwrap().check, Check::None);
    assert_eq!(ComputeProgram::decode(&full).unwrap().check, Check::Full);
    assert_eq!(BroadcastProgram::decode(&command(&p)), Ok(p));
}

#[test]
fn a_reserved_bit_of_compute_s_word_0_is_refused() {
    for bit in 9..16 {
        let mut w = program().compute.encode();
        w[0] |= 1 << bit;
        let last = w.len() - 1;
        // A check word that matches, so only the reserved bit is wrong.
        let mut v: Vec<u32> = w[..last].to_vec();
        v.push(komorebi_broadcast::args::check_word(&v) & 0x00FF_FFFF | 4 << 24);
        let e = ComputeProgram::decode(&v).unwrap_err();
        assert_eq!(e, ProgramError::Inputs(2 | 1 << bit));
        assert_eq!(
            e.to_string(),
            format!(
                "compute program word 0 has reserved bits {:#x} set (bits 9..15; allowed: 0)",
                1 << bit
            )
        );
    }
}

#[test]
fn a_program_round_trips_through_a_command() {
    let p = program();
    assert_eq!(BroadcastProgram::decode(&command(&p)), Ok(p));
}

#[test]
fn decoding_in_place_over_another_program_gives_what_decode_gives() {
    // Over a program with both movers and two inputs: a program with the writer's part only
    // (the reader's slot must end empty, compute's inputs must not keep the old ones).
    let mut only_writer = program();
    only_writer.reader = None;
    only_writer.compute.inputs.clear();
    only_writer
        .compute
        .inputs
        .push(stream(1, Role::Writer))
        .unwrap();
    only_writer.compute.job = 9;
    let mut held = program();
    assert_eq!(held.decode_into(&command(&only_writer)), Ok(()));
    assert_eq!(held, only_writer);
    assert_eq!(
        BroadcastProgram::decode(&command(&only_writer)),
        Ok(only_writer.clone())
    );
    // And back: a reader's part into the empty slot.
    let full = program();
    assert_eq!(held.decode_into(&command(&full)), Ok(()));
    assert_eq!(held, full);
    // A refused program is refused in place too, with decode's error.
    let mut words = full.words();
    words.compute[1] ^= 1;
    let bad = Command::new(1, 1, 1, 1, LogicalRect::new(0, 0, 4, 1), 1000)
        .with_words(&words.reader, &words.writer, &words.compute)
        .unwrap();
    assert_eq!(
        held.decode_into(&bad),
        BroadcastProgram::decode(&bad).map(|_| ())
    );
    assert!(held.decode_into(&bad).is_err());
}

#[test]
fn a_changed_word_fails_its_check() {
    let p = program();
    let mut w = p.words();
    w.reader[13] ^= 0x40;
    let c = Command::new(1, 1, 1, 1, LogicalRect::new(0, 0, 4, 1), 1000)
        .with_words(&w.reader, &w.writer, &w.compute)
        .unwrap();
    assert!(matches!(
        BroadcastProgram::decode(&c),
        Err(ProgramError::Check {
            role: Role::Reader,
            ..
        })
    ));
}

#[test]
fn copies_that_disagree_are_refused_on_the_host_and_on_the_device() {
    for (field, change) in [
        (
            Field::Pages,
            &(|s: &mut ComputeInput| s.pages = 8) as &dyn Fn(&mut ComputeInput),
        ),
        (Field::Window, &|s| s.window = 1),
        (Field::Buffer, &|s| s.cb = 5),
        (Field::Blocks, &|s| s.blocks = 15),
        (Field::PageSize, &|s| s.page_size = 1024),
        (Field::BroadcastId, &|s| s.broadcast = 1),
    ] {
        let mut p = program();
        change(&mut p.compute.inputs[0]);
        let expected = Err(ProgramError::Disagree {
            broadcast: p.compute.inputs[0].broadcast,
            field,
        });
        assert_eq!(p.encode().map(|_| ()), expected, "host: {field}");
        assert_eq!(
            BroadcastProgram::decode(&command(&p)).map(|_| ()),
            expected,
            "device: {field}"
        );
    }
}

#[test]
fn two_broadcasts_with_one_id_or_one_buffer_are_refused_on_the_host_and_on_the_device() {
    // The writer's broadcast (and compute's copy of it) given the reader's id, then the
    // reader's buffer: they would share a VALID word and DONE-BY table, or a buffer.
    for (field, id, cb) in [(Field::BroadcastId, 0, 1), (Field::Buffer, 1, 0)] {
        let mut p = program();
        let writer = BroadcastArgs { cb, ..args(id, 1) };
        p.writer.as_mut().unwrap().args = writer.encode();
        (p.compute.inputs[1].broadcast, p.compute.inputs[1].cb) = (id, cb);
        let expected = Err(ProgramError::Shared(field));
        assert_eq!(p.encode().map(|_| ()), expected, "host: {field}");
        assert_eq!(
            BroadcastProgram::decode(&command(&p)).map(|_| ()),
            expected,
            "device: {field}"
        );
    }
    assert_eq!(
        ProgramError::Shared(Field::Buffer).to_string(),
        "the reader's and the writer's broadcasts share their buffer (each needs its own)"
    );
}

#[test]
fn every_broadcast_is_consumed_exactly_once() {
    let mut p = program();
    p.compute.inputs.pop();
    assert_eq!(p.check(), Err(ProgramError::Unconsumed(Role::Writer)));
    let mut p = program();
    p.writer = None;
    assert_eq!(p.check(), Err(ProgramError::Unconsumed(Role::Writer)));
    // A writer outside its broadcast (rank 0xFF: a group larger than the broadcast's
    // rectangle) pushes no block: no compute may take its blocks, and none needs to.
    let mut p = program();
    let w = p.writer.as_mut().unwrap();
    w.args[1] = w.args[1] & !0xFF | args::RANK_NONE as u32;
    assert_eq!(p.check(), Err(ProgramError::Unconsumed(Role::Writer)));
    p.compute.inputs.retain(|s| s.producer != Role::Writer);
    assert_eq!(p.check(), Ok(()));
}

#[test]
fn lengths_and_ranges_are_refused_with_what_is_allowed() {
    let p = program();
    let w = p.words();
    let c = Command::new(1, 1, 1, 1, LogicalRect::new(0, 0, 4, 1), 1000)
        .with_words(&w.reader[..18], &w.writer, &w.compute)
        .unwrap();
    let e = BroadcastProgram::decode(&c).unwrap_err();
    assert_eq!(
        e,
        ProgramError::Length {
            role: Role::Reader,
            found: 18,
            expected: 19
        }
    );
    assert_eq!(
        e.to_string(),
        "reader program of 18 words (allowed: 0 or 19)"
    );
    let mut bad = w.compute.clone();
    bad[0] = 3;
    assert_eq!(ComputeProgram::decode(&bad), Err(ProgramError::Inputs(3)));
}

/// What the words cannot hold as given is refused on the host, by `encode`: blocks past
/// `MAX_BLOCKS` (which the device's decode refuses) and a stall before block 65,535 (kept plus
/// one in 16 bits, it came out as no stall at all).
#[test]
fn encode_refuses_what_the_words_cannot_hold_as_given() {
    let blocks = args::MAX_BLOCKS + 1;
    let mut p = program();
    p.reader.as_mut().unwrap().blocks = blocks as u16;
    p.compute.inputs[0].blocks = blocks as u16;
    let field = |role, field, value| Err(ProgramError::Field { role, field, value });
    assert_eq!(p.encode(), field(Role::Reader, Field::Blocks, blocks));
    assert_eq!(
        p.encode().unwrap_err().to_string(),
        format!("reader program: blocks {blocks} is out of range (allowed: at most 32767)")
    );
    // The device refuses the same words.
    assert_eq!(
        BroadcastProgram::decode(&command(&p)).unwrap_err(),
        ProgramError::Field {
            role: Role::Reader,
            field: Field::Blocks,
            value: blocks
        }
    );
    let mut p = program();
    p.compute.inputs[1].blocks = blocks as u16;
    p.writer.as_mut().unwrap().blocks = 16;
    assert_eq!(p.encode(), field(Role::Compute, Field::Blocks, blocks));
    let set = |p: &mut BroadcastProgram, role, stall| match role {
        Role::Reader => p.reader.as_mut().unwrap().stall_before = stall,
        Role::Writer => p.writer.as_mut().unwrap().stall_before = stall,
        Role::Compute => p.compute.stall_before = stall,
    };
    for role in [Role::Reader, Role::Writer, Role::Compute] {
        let mut p = program();
        set(&mut p, role, Some(u16::MAX));
        assert_eq!(
            p.encode(),
            field(role, Field::StallBefore, 65_535),
            "{role:?}"
        );
        // One below is held: decoded as given.
        set(&mut p, role, Some(u16::MAX - 1));
        let back = BroadcastProgram::decode(&command(&p)).unwrap();
        assert_eq!(back, p, "{role:?}");
    }
}

#[test]
fn corrupted_arguments_still_decode_as_a_program_so_the_protocol_refuses_them() {
    // The bad-words fault: the arguments' check no longer matches, the program's does.
    let mut p = program();
    let a = BroadcastArgs::decode(&p.reader.unwrap().args).unwrap();
    let mut flipped = a;
    flipped.start.1 ^= 1;
    p.reader.as_mut().unwrap().args = flipped.encode_stale(&a);
    let decoded = BroadcastProgram::decode(&command(&p)).unwrap();
    assert!(BroadcastArgs::decode(&decoded.reader.unwrap().args).is_err());
}

proptest! {
    #[test]
    fn any_valid_program_round_trips(
        blocks in 0u16..=32_767,
        page_size in any::<u32>(),
        dram_base in any::<u32>(),
        job in any::<u32>(),
        stall in proptest::option::of(0u16..32_767),
        only_reader in any::<bool>(),
        unchecked in any::<bool>(),
    ) {
        let mut p = program();
        p.compute.job = job;
        p.compute.check = if unchecked { Check::None } else { Check::Full };
        p.compute.stall_before = stall;
        for m in [&mut p.reader, &mut p.writer].into_iter().flatten() {
            m.blocks = blocks;
            m.page_size = page_size;
            m.dram_base = dram_base;
            m.stall_before = stall;
        }
        for s in &mut p.compute.inputs {
            s.blocks = blocks;
            s.page_size = page_size;
        }
        if only_reader {
            p.writer = None;
            p.compute.inputs.pop();
        }
        prop_assert_eq!(BroadcastProgram::decode(&command(&p)), Ok(p));
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        fuzz_decode(&data);
    }

    #[test]
    fn valid_programs_with_noise_never_panic_the_decoder(bit in 0usize..(55 * 32)) {
        let w = program().words();
        let mut all: Vec<u32> = w.reader.iter().chain(&w.writer).chain(&w.compute).copied().collect();
        all[bit / 32] ^= 1 << (bit % 32);
        let mut bytes = vec![19u8, 19, 17];
        bytes.extend(all.iter().flat_map(|w| w.to_le_bytes()));
        fuzz_decode(&bytes);
    }
}

/// `check` as it was written before it compared the argument words without decoding them
/// (every producer's words decoded; a producer whose words do not decode not compared): the
/// reference the property below holds it to.
fn check_by_decoding(p: &BroadcastProgram) -> Result<(), ProgramError> {
    // Two broadcasts sharing an id or a buffer, as their words give them, decoded or not.
    if let (Some(r), Some(w)) = (&p.reader, &p.writer) {
        let (r, w) = (CopiedFields::of(&r.args), CopiedFields::of(&w.args));
        if r.broadcast == w.broadcast {
            return Err(ProgramError::Shared(Field::BroadcastId));
        }
        if r.cb == w.cb {
            return Err(ProgramError::Shared(Field::Buffer));
        }
    }
    for role in [Role::Reader, Role::Writer] {
        let consumers = p.compute.inputs.iter().filter(|s| s.producer == role);
        let pushes = p
            .mover(role)
            .is_some_and(|m| CopiedFields::of(&m.args).rank != args::RANK_NONE);
        if consumers.count() != pushes as usize {
            return Err(ProgramError::Unconsumed(role));
        }
    }
    for s in &p.compute.inputs {
        let disagree = |field| ProgramError::Disagree {
            broadcast: s.broadcast,
            field,
        };
        let m = p
            .mover(s.producer)
            .ok_or(ProgramError::Unconsumed(s.producer))?;
        if m.blocks != s.blocks {
            return Err(disagree(Field::Blocks));
        }
        if m.page_size != s.page_size {
            return Err(disagree(Field::PageSize));
        }
        let Ok(a) = BroadcastArgs::decode(&m.args) else {
            continue;
        };
        let noc = s.producer.noc().map_or(u8::MAX, komorebi_hal::NocId::index);
        for (same, field) in [
            (a.cb == s.cb, Field::Buffer),
            (a.pages == s.pages, Field::Pages),
            (a.window == s.window, Field::Window),
            (a.broadcast == s.broadcast, Field::BroadcastId),
            (a.noc == noc, Field::Noc),
        ] {
            if !same {
                return Err(disagree(field));
            }
        }
    }
    Ok(())
}

proptest! {
    /// The check of compute's copies compares the producers' argument words field by field
    /// and decodes them only when a field disagrees: it refuses exactly what decoding every
    /// producer's words refuses, with the same error, whether the words decode or not (a
    /// changed word, with or without its check word made good again) and whatever the copies
    /// say.
    #[test]
    fn the_copies_check_refuses_what_decoding_every_producer_refuses(
        word in 0usize..11,
        value in any::<u32>(),
        reseal in any::<bool>(),
        input in 0usize..2,
        copy in (0u8..3, 0u16..6, 0u8..4, 0u8..3),
    ) {
        let mut p = program();
        let producer = p.compute.inputs[input].producer;
        let m = match producer {
            Role::Reader => p.reader.as_mut(),
            _ => p.writer.as_mut(),
        }
        .unwrap();
        m.args[word] = value;
        if reseal {
            m.args[10] = komorebi_broadcast::args::check_word(&m.args[..10]);
        }
        let (cb, pages, window, broadcast) = copy;
        let s = &mut p.compute.inputs[input];
        s.cb = cb;
        s.pages = pages;
        s.window = window;
        s.broadcast = broadcast;
        prop_assert_eq!(p.check(), check_by_decoding(&p));
    }
}
