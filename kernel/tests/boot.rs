//! The boot check (`image::come_up`): the boot word each outcome writes, with the literal
//! values a loader reads (`0x4B4D_5242` up, `0xB0F0_00nn` refused), and which check wins.

use komorebi_hal::{LogicalXy, Role};
use komorebi_kernel::image::{BootFailure, come_up};
use komorebi_mock::MockControlBlock;
use mockall::predicate::eq;

/// A control block whose header holds `version`, `tile` and `harvest`, expecting exactly one
/// store: `word` at `offset`.
fn header(version: u32, tile: u32, harvest: u32, offset: u32, word: u32) -> MockControlBlock {
    let mut c = MockControlBlock::new();
    c.expect_load().returning(move |offset| {
        Ok(match offset {
            0x004 => version,
            0x008 => tile,
            0x00C => harvest,
            other => panic!("unexpected load of {other:#x}"),
        })
    });
    c.expect_store()
        .with(eq(offset), eq(word))
        .times(1)
        .returning(|_, _| Ok(()));
    c
}

const UP: u32 = 0x4B4D_5242;

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
            1,
            0x3000,
            Some(Ok(LogicalXy::new(3, 4))),
            Role::Reader,
            0x030,
            UP,
        ),
        // The largest valid mask: every one of the 14 harvestable columns' bits.
        (
            1,
            0x3FFF,
            Some(Ok(LogicalXy::new(3, 4))),
            Role::Reader,
            0x030,
            UP,
        ),
        (1, 0x3000, None, Role::Compute, 0x038, UP),
        (
            2,
            0x3000,
            Some(Ok(LogicalXy::new(3, 4))),
            Role::Reader,
            0x030,
            0xB0F0_0001,
        ),
        (
            1,
            0x3000,
            Some(Ok(LogicalXy::new(4, 3))),
            Role::Writer,
            0x034,
            0xB0F0_0002,
        ),
        (
            1,
            0x4000,
            Some(Ok(LogicalXy::new(3, 4))),
            Role::Reader,
            0x030,
            0xB0F0_0003,
        ),
        (
            1,
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
        let r = come_up(&mut c, role, own);
        assert_eq!(r.is_ok(), word == UP, "{version} {harvest:#x} {own:?}");
        c.checkpoint();
    }
}
