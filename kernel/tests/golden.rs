//! Golden values of the control-block ABI (version 1) and the firmware image header, written
//! here by hand: the offsets and words a loader, a card's firmware or another team's host
//! tooling reads, never computed by the code under test (the image's check word with an
//! implementation of `check_word` written outside this crate, in Python).

use komorebi_broadcast::Where;
use komorebi_broadcast::area;
use komorebi_hal::Role;
use komorebi_kernel::abi::{self, GiveUpCode, KernelGiveUp};
use komorebi_kernel::broadcast_handler::pattern_word;
use komorebi_kernel::image::{self, BootFailure, ImageHeader};

#[test]
fn the_control_block_is_4_kib_at_l1_0x4000_with_the_header_kmrb_version_tile_harvest() {
    assert_eq!(abi::CONTROL_BASE, 0x4000);
    assert_eq!(abi::CONTROL_BYTES, 0x1000);
    // "KMRB", K in the top byte.
    assert_eq!(abi::MAGIC, 0x4B4D_5242);
    assert_eq!(abi::ABI_VERSION, 4);
    assert_eq!(abi::HEADER_MAGIC, 0x000);
    assert_eq!(abi::HEADER_VERSION, 0x004);
    assert_eq!(abi::HEADER_TILE, 0x008);
    assert_eq!(abi::HEADER_HARVEST, 0x00C);
    assert_eq!(abi::HEADER_CHIP, 0x014);
    // The kernels' tables, a word each for reader, writer and compute.
    assert_eq!(abi::KERNEL_DONE, 0x040);
    assert_eq!(abi::KERNEL_RECOVERING, 0x050);
    assert_eq!(abi::KERNEL_SET_UP, 0x060);
    assert_eq!(abi::REPORT_INDEX, 0x080);
}

#[test]
fn the_chip_word_is_translated_in_bit_0_and_the_fused_bank_plus_one_in_bits_8_to_11() {
    use abi::ChipWord;
    let cases = [
        (ChipWord::default(), 0),
        (
            ChipWord {
                translated: true,
                fused_dram: None,
            },
            1,
        ),
        (
            ChipWord {
                translated: true,
                fused_dram: Some(0),
            },
            0x101,
        ),
        (
            ChipWord {
                translated: false,
                fused_dram: Some(7),
            },
            0x800,
        ),
    ];
    for (chip, word) in cases {
        assert_eq!(chip.encode(), Some(word));
        assert_eq!(ChipWord::decode(word), Some(chip));
    }
    for bad in [2, 0x900, 0xF00, 0x1000, 1 << 31] {
        assert_eq!(ChipWord::decode(bad), None, "{bad:#x}");
    }
    // A bank the word cannot name is refused, not masked (bank 16 came out as bank 0).
    for bank in [8, 15, 16, 23, 255] {
        let chip = ChipWord {
            translated: true,
            fused_dram: Some(bank),
        };
        assert_eq!(chip.encode(), None, "bank {bank}");
    }
}

#[test]
fn control_block_offsets_are_the_abi_table_s() {
    assert_eq!(abi::STOP, 0x010);
    assert_eq!(abi::IDLE_WAIT_LIMIT, 0x018);
    assert_eq!(abi::PANIC, 0x020);
    assert_eq!(abi::PANIC_TAG, 0xDEAD_0000);
    assert_eq!(image::BOOT, 0x030);
    assert_eq!(abi::KERNEL_DONE, 0x040);
    assert_eq!(abi::KERNEL_RECOVERING, 0x050);
    assert_eq!(abi::REPORT_INDEX, 0x080);
    assert_eq!(abi::RECORDS_BASE, 0x0C0);
    assert_eq!(abi::RECORD_BYTES, 0x40);
    assert_eq!(abi::SLOTS_BASE, 0x200);
    assert_eq!(abi::SLOT_BYTES, 0x200);
    assert_eq!(abi::SLOTS, 2);
    assert_eq!(abi::CB_TABLE, 0x600);
    assert_eq!(abi::CB_ENTRY_BYTES, 16);
    assert_eq!(abi::CB_ENTRIES, 64);
    // The table's 64 entries of 16 bytes end where the broadcast areas begin; the two areas of
    // 0x140 end at 0xC80, inside the 0x1000 bytes.
    assert_eq!(area::CONTROL_BROADCAST, 0xA00);
    assert_eq!(area::area(1) + area::AREA_BYTES, 0xC80);
    // Per-kernel words in reader, writer, compute order.
    assert_eq!(abi::kernel_word(abi::KERNEL_DONE, Role::Reader), 0x040);
    assert_eq!(abi::kernel_word(abi::KERNEL_DONE, Role::Writer), 0x044);
    assert_eq!(
        abi::kernel_word(abi::KERNEL_RECOVERING, Role::Compute),
        0x058
    );
    assert_eq!(abi::kernel_word(abi::PANIC, Role::Writer), 0x024);
    assert_eq!(image::boot_word(Role::Reader), 0x030);
    assert_eq!(image::boot_word(Role::Compute), 0x038);
}

/// A circular buffer fits between the firmware's end (0x3_0000) and L1's end, with at least one
/// page of at least one byte, its base and page size multiples of 16; the rules one at a time,
/// each at its edge (Blackhole's L1 is 0x18_0000 bytes).
#[test]
fn a_buffer_fits_above_the_firmware_inside_l1_on_16_byte_units_with_a_byte_in_it() {
    const L1: u32 = 0x18_0000;
    assert_eq!(abi::FIRMWARE_L1_END, 0x3_0000);
    assert_eq!(abi::BUFFER_ALIGN, 16);
    // At the firmware's end, and ending at L1's end exactly (0x100 pages of 0x1000 bytes
    // ending at 0x3_0000 + 0x10_0000 = 0x13_0000; 0x1_5000 pages of 0x10 end at 0x18_0000).
    assert!(abi::buffer_fits(0x3_0000, 0x1000, 0x100, L1));
    assert!(abi::buffer_fits(0x3_0000, 0x10, 0x1_5000, L1));
    // One unit lower: over the reader's image.
    assert!(!abi::buffer_fits(0x2_FFF0, 0x10, 1, L1));
    // One page more than L1 holds, and the pages' bytes (not their count plus their size)
    // against L1: 0x100 pages of 0x100 bytes end at 0x4_0000.
    assert!(!abi::buffer_fits(0x3_0000, 0x10, 0x1_5001, L1));
    assert!(abi::buffer_fits(0x3_0000, 0x100, 0x100, 0x4_0000));
    assert!(!abi::buffer_fits(0x3_0000, 0x100, 0x100, 0x3_FFF0));
    assert!(!abi::buffer_fits(0x3_0100, 0x100, 0x100, 0x4_0000));
    // Bytes that overflow 32 bits do not wrap into a fit.
    assert!(!abi::buffer_fits(0x3_0000, 0x1000_0000, 0x10, u32::MAX));
    // Off the 16-byte units: the base, the page size, or both by the same 8 bytes.
    assert!(!abi::buffer_fits(0x3_0008, 0x20, 1, L1));
    assert!(!abi::buffer_fits(0x3_0000, 0x18, 1, L1));
    assert!(!abi::buffer_fits(0x3_0000, 0x4, 4, L1));
    assert!(!abi::buffer_fits(0x3_0008, 0x8, 2, L1));
    // No page, or pages of no byte.
    assert!(!abi::buffer_fits(0x3_0000, 0x20, 0, L1));
    assert!(!abi::buffer_fits(0x3_0000, 0, 8, L1));
    assert!(abi::buffer_fits(0x3_0000, 0x10, 1, L1));
}

/// The kernels' log rings: 0x500 bytes each from 0x5000 in reader, writer, compute order, between
/// the control block's end (0x5000) and compute's reset PC (0x6000); a ring's 16-byte header,
/// then 0x4F0 bytes of frames.
#[test]
fn log_rings_are_0x500_bytes_each_from_0x5000_with_a_16_byte_header() {
    assert_eq!(abi::LOG_BASE, 0x5000);
    assert_eq!(abi::LOG_RING_BYTES, 0x500);
    assert_eq!(abi::log_ring(Role::Reader), 0x5000);
    assert_eq!(abi::log_ring(Role::Writer), 0x5500);
    assert_eq!(abi::log_ring(Role::Compute), 0x5A00);
    // "KLOG", K in the top byte.
    assert_eq!(abi::LOG_MAGIC, 0x4B4C_4F47);
    assert_eq!(abi::LOG_FRAMES, 0x4);
    assert_eq!(abi::LOG_BYTES, 0x8);
    assert_eq!(abi::LOG_LOST, 0xC);
    assert_eq!(abi::LOG_DATA, 0x10);
    assert_eq!(abi::LOG_DATA_BYTES, 0x4F0);
}

#[test]
fn commands_take_slots_in_turn_with_an_8_word_header_and_reports_their_records() {
    assert_eq!(abi::SLOT_HEADER_WORDS, 8);
    assert_eq!(abi::MAX_PROGRAM_WORDS, 120);
    assert_eq!(abi::slot_of(1), 0x200);
    assert_eq!(abi::slot_of(2), 0x400);
    assert_eq!(abi::slot_of(3), 0x200);
    assert_eq!(abi::record_of(1), 0x0C0);
    assert_eq!(abi::record_of(2), 0x100);
    assert_eq!(abi::record_of(3), 0x0C0);
    assert_eq!(abi::RECORD_INDEX, 0x00);
    assert_eq!(abi::RECORD_SEQUENCE, 0x04);
    assert_eq!(abi::RECORD_STATUS, 0x08);
    assert_eq!(abi::RECORD_STARTED, 0x0C);
    assert_eq!(abi::RECORD_GIVE_UP, 0x10);
    assert_eq!(abi::RECORD_FINISHED, 0x1C);
    assert_eq!(abi::RECORD_GIVE_UP_BLOCK, 0x20);
    assert_eq!(abi::RECORD_STAT, 0x30);
    assert_eq!(abi::FLAG_EXCLUSIVE, 1);
    assert_eq!(abi::STATUS_GAVE_UP, 1);
    assert_eq!(abi::STATUS_REFUSED, 2);
    assert_eq!(abi::STATUS_MISMATCH, 4);
    assert_eq!(abi::HANDLER_EXIT, 0);
}

#[test]
fn give_up_codes_and_words_are_the_abi_s() {
    let codes = [
        (GiveUpCode::Broadcast(Where::BroadcastDone), 0x01),
        (GiveUpCode::Broadcast(Where::BroadcastValid), 0x02),
        (GiveUpCode::Broadcast(Where::BroadcastFree), 0x03),
        (GiveUpCode::Broadcast(Where::BroadcastBegin), 0x04),
        (GiveUpCode::ComputeTimedOut, 0x10),
        (GiveUpCode::ComputeStopped, 0x11),
        (GiveUpCode::ComputeFailed, 0x12),
        (GiveUpCode::DataMismatch, 0x13),
        (GiveUpCode::UnknownHandler, 0x20),
        (GiveUpCode::NotExclusive, 0x21),
        (GiveUpCode::NotInGroup, 0x22),
        (GiveUpCode::BadCommand, 0x23),
    ];
    for (code, byte) in codes {
        assert_eq!(code.code(), byte, "{code:?}");
        assert_eq!(GiveUpCode::from_code(byte), Some(code));
    }
    let g = KernelGiveUp {
        code: GiveUpCode::Broadcast(Where::BroadcastValid),
        broadcast: 1,
        block: 9,
    };
    assert_eq!(g.word(), 0x0000_0102);
    assert_eq!(KernelGiveUp::from_words(0x0000_0003, 4).unwrap().block, 4);
    assert_eq!(KernelGiveUp::from_words(0, 4), None);
}

#[test]
fn image_headers_sit_below_the_control_block_and_boot_words_are_kmrb_or_b0f0() {
    assert_eq!(image::IMAGE_HEADER_BASE, 0x3F00);
    assert_eq!(image::IMAGE_HEADER_BYTES, 32);
    assert_eq!(image::header_addr(Role::Reader), 0x3F00);
    assert_eq!(image::header_addr(Role::Writer), 0x3F20);
    assert_eq!(image::header_addr(Role::Compute), 0x3F40);
    assert_eq!(image::BOOT_UP, 0x4B4D_5242);
    assert_eq!(image::boot_failed(BootFailure::AbiVersion), 0xB0F0_0001);
    assert_eq!(
        image::boot_failed(BootFailure::HarvestMismatch),
        0xB0F0_0004
    );
}

#[test]
fn an_image_header_s_words_and_bytes_are_the_hand_computed_ones() {
    // "KMFW" as little-endian bytes.
    assert_eq!(image::IMAGE_MAGIC, 0x5746_4D4B);
    let h = ImageHeader {
        role: Role::Writer,
        entry: 0x1_2000,
        code_start: 0x1_2000,
        code_bytes: 24_000,
        device_id: 0,
        // The broadcast handler's id, in word 6's high half.
        handler: 1,
    };
    let words = [
        0x5746_4D4B,
        0x0000_0004,
        0x0000_0001,
        0x0001_2000,
        0x0001_2000,
        0x0000_5DC0,
        0x0001_0000,
        // `check_word` of words 0..=6 (ABI version 4), from an implementation of its documented
        // steps written outside this crate (Python).
        0xB3D7_A0A9,
    ];
    assert_eq!(h.encode(), words);
    assert_eq!(ImageHeader::decode(&words), Ok(h));
    let bytes = h.to_bytes();
    assert_eq!(&bytes[..4], b"KMFW");
    assert_eq!(&bytes[28..], &[0xA9, 0xA0, 0xD7, 0xB3]);
}

#[test]
fn the_data_pattern_words_are_the_known_answers() {
    // pattern_word(job, broadcast, block, page, word) of program version 3, from an
    // implementation of the handler's documented formula written outside this crate (Python): the words a host writes to DRAM and every
    // compute kernel checks, so another team's host writes the same bytes.
    let known = [
        ((0, 0, 0, 0, 0), 0x7BA9_71DF),
        ((1, 0, 0, 0, 0), 0xB350_C644),
        ((0, 1, 0, 0, 0), 0x2CC6_2DA5),
        ((0, 0, 1, 0, 0), 0x3462_25CB),
        ((0, 0, 0, 1, 0), 0x3406_D505),
        ((0, 0, 0, 0, 1), 0x19E0_EB98),
        ((7, 1, 15, 3, 511), 0x953A_9B54),
        ((0xFFFF_FFFF, 1, 32_766, 65_534, 0xFFFF), 0x7BC2_A53F),
    ];
    for ((job, broadcast, block, page, word), expected) in known {
        assert_eq!(
            pattern_word(job, broadcast, block, page, word),
            expected,
            "job {job} broadcast {broadcast} block {block} page {page} word {word}"
        );
    }
}
