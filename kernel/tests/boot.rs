//! The boot check (`image::come_up`): the boot word each outcome writes, with the literal
//! values a loader reads (`0x4B4D_5242` up, `0xB0F0_00nn` refused), and which check wins; and
//! the check apart from the word up (`boot_check`, `announce_up`), as the firmware makes them
//! around its setup.

use komorebi_hal::{LogicalXy, Role};
use komorebi_kernel::image::{BootFailure, announce_up, boot_check, come_up};
use komorebi_mock::MockControlBlock;
use mockall::predicate::eq;

/// A control block whose header holds `version`, `tile`, `harvest` and the chip word `chip`
/// (and the magic word), expecting exactly one store: `word` at `offset`.
fn header_with(
    version: u32,
    tile: u32,
    harvest: u32,
    chip: u32,
    offset: u32,
    word: u32,
) -> MockControlBlock {
    header_magic(UP, version, tile, harvest, chip, offset, word)
}

/// [`header_with`] with the magic word `magic`.
fn header_magic(
    magic: u32,
    version: u32,
    tile: u32,
    harvest: u32,
    chip: u32,
    offset: u32,
    word: u32,
) -> MockControlBlock {
    let mut c = MockControlBlock::new();
    c.expect_load().returning(move |offset| {
        Ok(match offset {
            0x000 => magic,
            0x004 => version,
            0x008 => tile,
            0x00C => harvest,
            0x014 => chip,
            other => panic!("unexpected load of {other:#x}"),
        })
    });
    c.expect_store()
        .with(eq(offset), eq(word))
        .times(1)
        .returning(|_, _| Ok(()));
    c
}

/// [`header_with`] a translated chip with every DRAM bank.
fn header(version: u32, tile: u32, harvest: u32, offset: u32, word: u32) -> MockControlBlock {
    header_with(version, tile, harvest, 1, offset, word)
}

/// A harvest rule as a Blackhole's: a bit for each of 14 Tensix columns.
fn fourteen_columns(mask: u32) -> bool {
    mask <= 0x3FFF
}

/// A harvest rule as a Wormhole's: a bit for each of 10 Tensix rows, not all of them.
fn ten_rows(mask: u32) -> bool {
    mask < 0x3FF
}

const UP: u32 = 0x4B4D_5242;
/// The ABI version the kernels expect.
const V: u32 = komorebi_kernel::abi::ABI_VERSION;

/// Header version, header harvest word, what the chip said of the tile, the kernel, and the
/// boot word's offset and value expected.
type Case = (
    u32,
    u32,
    Option<Result<LogicalXy, BootFailure>>,
    Role,
    u32,
    u32,
);

#[test]
fn each_outcome_writes_its_boot_word_into_the_kernel_s_own_slot() {
    // Tile (3, 4) is the header word 3 | 4 << 8.
    let tile = 3 | 4 << 8;
    let cases: [Case; 8] = [
        (
            V,
            0x3000,
            Some(Ok(LogicalXy::new(3, 4))),
            Role::Reader,
            0x030,
            UP,
        ),
        // The largest valid mask: every one of the 14 harvestable columns' bits.
        (
            V,
            0x3FFF,
            Some(Ok(LogicalXy::new(3, 4))),
            Role::Reader,
            0x030,
            UP,
        ),
        (V, 0x3000, None, Role::Compute, 0x038, UP),
        (
            1,
            0x3000,
            Some(Ok(LogicalXy::new(3, 4))),
            Role::Reader,
            0x030,
            0xB0F0_0001,
        ),
        (
            V,
            0x3000,
            Some(Ok(LogicalXy::new(4, 3))),
            Role::Writer,
            0x034,
            0xB0F0_0002,
        ),
        (
            V,
            0x4000,
            Some(Ok(LogicalXy::new(3, 4))),
            Role::Reader,
            0x030,
            0xB0F0_0003,
        ),
        (
            V,
            0x3000,
            Some(Err(BootFailure::HarvestMismatch)),
            Role::Writer,
            0x034,
            0xB0F0_0004,
        ),
        // The version is checked first, then the mask, then the chip's word on the tile.
        (
            7,
            0x4000,
            Some(Err(BootFailure::HarvestMismatch)),
            Role::Reader,
            0x030,
            0xB0F0_0001,
        ),
    ];
    for (version, harvest, own, role, offset, word) in cases {
        let mut c = header(version, tile, harvest, offset, word);
        let r = come_up(&mut c, role, fourteen_columns, own);
        assert_eq!(r.is_ok(), word == UP, "{version} {harvest:#x} {own:?}");
        c.checkpoint();
    }
}

/// A header without the magic word (L1 as reset left it, or another program's) is refused
/// first, whatever the rest holds: the host set nothing up there.
#[test]
fn a_header_without_the_magic_word_is_refused_before_anything_else() {
    let own = Some(Ok(LogicalXy::new(3, 4)));
    for (magic, version, harvest, word) in [
        (UP, V, 0x3000, UP),
        (0, V, 0x3000, 0xB0F0_0006),
        (UP ^ 1, V, 0x3000, 0xB0F0_0006),
        (0, 7, 0x4000, 0xB0F0_0006),
    ] {
        let mut c = header_magic(magic, version, 3 | 4 << 8, harvest, 1, 0x030, word);
        let r = come_up(&mut c, Role::Reader, fourteen_columns, own);
        assert_eq!(r.is_ok(), word == UP, "magic {magic:#x}");
        if word != UP {
            assert_eq!(r, Err(Some(BootFailure::BadMagic)));
        }
        c.checkpoint();
    }
}

#[test]
fn a_chip_word_with_a_reserved_bit_or_no_such_bank_is_refused_after_the_mask() {
    // 0xF01 is the widest valid pattern's bits; bank 7 (+1 = 8) is the last bank.
    for (chip, word) in [
        (0, UP),
        (1, UP),
        (1 | 8 << 8, UP),
        (2, 0xB0F0_0005),
        (9 << 8, 0xB0F0_0005),
        (1 << 31, 0xB0F0_0005),
    ] {
        let mut c = header_with(V, 3 | 4 << 8, 0x3000, chip, 0x030, word);
        let r = come_up(
            &mut c,
            Role::Reader,
            fourteen_columns,
            Some(Ok(LogicalXy::new(3, 4))),
        );
        assert_eq!(r.is_ok(), word == UP, "chip word {chip:#x}");
        c.checkpoint();
    }
    // A bad mask is reported before a bad chip word.
    let mut c = header_with(V, 3 | 4 << 8, 0x4000, 2, 0x030, 0xB0F0_0003);
    assert!(
        come_up(
            &mut c,
            Role::Reader,
            fourteen_columns,
            Some(Ok(LogicalXy::new(3, 4)))
        )
        .is_err()
    );
}

/// `boot_check` writes a failure and nothing else; a check that passes writes nothing until
/// `announce_up` writes the word up (the firmware builds its NoC handle in between).
#[test]
fn a_passed_check_writes_no_word_until_the_kernel_announces_itself_up() {
    let tile = 3 | 4 << 8;
    let own = Some(Ok(LogicalXy::new(3, 4)));
    // Failure: the word is written by the check itself, and the check says which.
    let mut c = header(V, tile, 0x4000, 0x030, 0xB0F0_0003);
    assert_eq!(
        boot_check(&mut c, Role::Reader, fourteen_columns, own),
        Err(Some(BootFailure::BadHarvest))
    );
    c.checkpoint();
    // Passed: no store at all (the mock refuses any) until the word up.
    for (role, offset) in [
        (Role::Reader, 0x030),
        (Role::Writer, 0x034),
        (Role::Compute, 0x038),
    ] {
        let mut c = MockControlBlock::new();
        c.expect_load().returning(move |offset| {
            Ok(match offset {
                0x000 => UP,
                0x004 => V,
                0x008 => tile,
                0x00C => 0x3000,
                0x014 => 1,
                other => panic!("unexpected load of {other:#x}"),
            })
        });
        let own = (role != Role::Compute).then_some(Ok(LogicalXy::new(3, 4)));
        assert_eq!(
            boot_check(&mut c, role, fourteen_columns, own),
            Ok(()),
            "{role:?}"
        );
        c.checkpoint();
        c.expect_store()
            .with(eq(offset), eq(UP))
            .times(1)
            .returning(|_, _| Ok(()));
        assert!(announce_up(&mut c, role).is_ok(), "{role:?}");
        c.checkpoint();
    }
}

/// The harvest rule is the caller's (the chip's), and every kernel applies it: a mask a
/// Wormhole's rule refuses is refused by compute too, which has no NIU of its own to check the
/// mask against, while a Blackhole's rule takes the same mask.
#[test]
fn the_chip_s_harvest_rule_refuses_a_mask_for_every_kernel_compute_included() {
    let tile = 3 | 4 << 8;
    for (role, offset) in [
        (Role::Reader, 0x030),
        (Role::Writer, 0x034),
        (Role::Compute, 0x038),
    ] {
        let own = (role != Role::Compute).then_some(Ok(LogicalXy::new(3, 4)));
        // Bit 10: a column on a Blackhole, no row on a Wormhole; 0x3FF: every Wormhole row.
        for mask in [0x400, 0x3FF] {
            let mut c = header(V, tile, mask, offset, 0xB0F0_0003);
            assert_eq!(
                come_up(&mut c, role, ten_rows, own),
                Err(Some(BootFailure::BadHarvest)),
                "{role:?} {mask:#x}"
            );
            c.checkpoint();
            let mut c = header(V, tile, mask, offset, UP);
            assert_eq!(
                come_up(&mut c, role, fourteen_columns, own),
                Ok(()),
                "{role:?} {mask:#x}"
            );
            c.checkpoint();
        }
    }
}
