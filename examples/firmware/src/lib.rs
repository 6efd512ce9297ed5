//! Shared parts of the three kernels: the entry point, the panic handler, and the HAL handles
//! built from the tile's control block (the runtime ABI).
//!
//! The device crates are compiled blocking here (`--cfg komorebi_blocking`, from
//! `.cargo/config.toml`; see `docs/decisions.md` D8): each core runs one kernel, so every wait spins where it is instead
//! of returning to an executor.
//!
//! Memory (L1): 0x0 the reader's boot stub (BRISC's reset PC), 0x3F00..0x3F60 the three
//! images' headers, 0x4000..0x5000 the control block, 0x5000..0x5F00 the log rings
//! (`abi::log_ring`), 0x6000..0x12000 compute (TRISC0's reset PC), 0x12000..0x1C000 writer
//! (NCRISC's reset PC), 0x1C000..0x30000 reader (`abi::FIRMWARE_L1_END`), buffers above (the
//! host's from 0x40000). Data, bss and stack live in each core's private local RAM at
//! 0xFFB0_0000 (8 KiB for the data-movement cores and 4 KiB for TRISC0 on Blackhole, 4 and 2
//! KiB on Wormhole: `build.rs`, which also sets the stack room the linker checks). `_start` sets the stack, configures the core (on
//! Blackhole its L0 data cache off: `chip.rs`), zeroes bss, copies data, and calls
//! `kernel_main`.
#![no_std]

// `.cargo/config.toml` sets the cfg; a RUSTFLAGS variable in the environment replaces that list.
#[cfg(not(komorebi_blocking))]
compile_error!(
    "the firmware builds the device crates blocking: build it with --cfg komorebi_blocking \
     (examples/firmware/.cargo/config.toml; a RUSTFLAGS variable replaces that setting)"
);

mod chip;
#[cfg(feature = "defmt")]
mod log;
mod role;

use komorebi_hal::Role;
use komorebi_hal::{ControlLayout, NocId, Xy};
use komorebi_kernel::abi;
use komorebi_kernel::handler::Buffers;
use komorebi_kernel::image::{self, BootFailure};
use komorebi_silicon::Chip as _;
use komorebi_silicon::{
    ControlPlace, IdentityError, SiliconCb, SiliconCtrl, SiliconNoc, TileIdentity,
};

pub use chip::Chip;

// The reader's boot stub: BRISC starts at 0x0; jump to `_start` wherever the image put it.
// (The other kernels start at `_start` directly; their images begin at their reset PCs.)
core::arch::global_asm!(
    ".section .text.boot, \"ax\"",
    ".global _boot",
    "_boot:",
    "lui t0, %hi(_start)",
    "jalr zero, %lo(_start)(t0)",
);

core::arch::global_asm!(
    ".section .text.start, \"ax\"",
    ".global _start",
    "_start:",
    "la sp, __stack_top",
    // The core's configuration first (src/chip.rs), before any load from L1.
    "call configure_core",
    "la t0, __bss_start",
    "la t1, __bss_end",
    "1: bgeu t0, t1, 2f",
    "sw zero, 0(t0)",
    "addi t0, t0, 4",
    "j 1b",
    "2: la t0, __data_start",
    "la t1, __data_end",
    "la t2, __data_load",
    "3: bgeu t0, t1, 4f",
    "lw t3, 0(t2)",
    "sw t3, 0(t0)",
    "addi t0, t0, 4",
    "addi t2, t2, 4",
    "j 3b",
    "4: call kernel_main",
    "5: j 5b",
);

// `memcpy` and `memset` for the three images, replacing compiler-builtins' weak ones (640 bytes
// of unrolled copies; these are about 150): the images are size-bound (24 / 24 / 8 KiB) and copy
// little (a command's words and program, a few hundred bytes a command). Bytes up to the first
// word boundary, then words, then the last bytes: a struct whose size is not a multiple of four
// (a decoded program's `Option`) is copied by words too (it went byte by byte, seven cycles a
// byte, until 2026-12-05). A copy whose two pointers sit differently within their words goes
// byte by byte. Written in assembly, since a copy loop in Rust may be compiled back into a call
// to `memcpy` itself; `tests/firmware_routines.rs` runs both on the simulated core.
core::arch::global_asm!(
    ".section .text.memcpy, \"ax\"",
    ".global memcpy",
    "memcpy:",
    "mv t0, a0",
    "xor t1, a0, a1",
    "andi t1, t1, 3",
    "bnez t1, 4f",
    "1: andi t1, t0, 3",
    "beqz t1, 2f",
    "beqz a2, 5f",
    "lbu t1, 0(a1)",
    "sb t1, 0(t0)",
    "addi a1, a1, 1",
    "addi t0, t0, 1",
    "addi a2, a2, -1",
    "j 1b",
    // Four words at a time while 16 bytes are left, their loads together so that their
    // latencies overlap (a word alone waits for its load: ten cycles), then single words, up
    // to the source's last whole word (`t2`).
    "2: andi t2, a2, -16",
    "beqz t2, 6f",
    "add t2, t2, a1",
    "andi a2, a2, 15",
    "3: lw t1, 0(a1)",
    "lw t3, 4(a1)",
    "lw t4, 8(a1)",
    "lw t5, 12(a1)",
    "addi a1, a1, 16",
    "addi t0, t0, 16",
    "sw t1, -16(t0)",
    "sw t3, -12(t0)",
    "sw t4, -8(t0)",
    "sw t5, -4(t0)",
    "bne a1, t2, 3b",
    "6: andi t2, a2, -4",
    "beqz t2, 4f",
    "add t2, t2, a1",
    "andi a2, a2, 3",
    "7: lw t1, 0(a1)",
    "addi a1, a1, 4",
    "addi t0, t0, 4",
    "sw t1, -4(t0)",
    "bne a1, t2, 7b",
    "4: beqz a2, 5f",
    "lbu t1, 0(a1)",
    "sb t1, 0(t0)",
    "addi a1, a1, 1",
    "addi t0, t0, 1",
    "addi a2, a2, -1",
    "j 4b",
    "5: ret",
    ".section .text.memset, \"ax\"",
    ".global memset",
    "memset:",
    "mv t0, a0",
    "1: andi t1, t0, 3",
    "beqz t1, 2f",
    "beqz a2, 5f",
    "sb a1, 0(t0)",
    "addi t0, t0, 1",
    "addi a2, a2, -1",
    "j 1b",
    // The byte in all four lanes, a word a store, up to the last whole word (`t2`).
    "2: andi t2, a2, -4",
    "beqz t2, 4f",
    "add t2, t2, t0",
    "andi a2, a2, 3",
    "andi t1, a1, 255",
    "slli t3, t1, 8",
    "or t1, t1, t3",
    "slli t3, t1, 16",
    "or t1, t1, t3",
    "3: sw t1, 0(t0)",
    "addi t0, t0, 4",
    "bne t0, t2, 3b",
    "4: beqz a2, 5f",
    "sb a1, 0(t0)",
    "addi t0, t0, 1",
    "addi a2, a2, -1",
    "j 4b",
    "5: ret",
);

fn control_word(offset: u32) -> *mut u32 {
    (abi::CONTROL_BASE + offset) as usize as *mut u32
}

/// The tile's control block: the ABI's, at the same L1 address on every tile, read with the
/// tile's wall clock. Constants rather than `SiliconCtrl::from_ptr`'s run-time fields, so the
/// checks of every constant offset are made when the image is built (and no pointer or layout
/// is carried around).
#[derive(Debug, Clone, Copy)]
pub struct Tile;

// SAFETY: the control block is CONTROL_BYTES (the layout's `len`) of L1 at CONTROL_BASE on
// every Tensix tile, word aligned; both are constants.
unsafe impl ControlPlace for Tile {
    #[inline(always)]
    fn block(&self) -> *mut u32 {
        control_word(0)
    }
    #[inline(always)]
    fn layout(&self) -> ControlLayout {
        abi::CONTROL_LAYOUT
    }
    #[inline(always)]
    fn now(&self) -> u64 {
        komorebi_silicon::cycles()
    }
}

/// The tile's control block.
pub fn ctrl() -> SiliconCtrl<Chip, Tile> {
    SiliconCtrl::at(Tile)
}

/// This kernel's NoC: NIU0 for the reader, NIU1 for the writer.
pub fn noc(role: Role) -> SiliconNoc<Chip> {
    let id = if role == Role::Writer {
        NocId::Noc1
    } else {
        NocId::Noc0
    };
    // SAFETY: this image runs on a Tensix baby core of `Chip`, where both NIU blocks are
    // mapped, and each NIU is driven by one kernel only: the writer owns NIU1, the reader NIU0
    // (compute never calls this).
    let niu = unsafe { Chip::steal_niu(id) };
    let node = Chip::niu_node(niu);
    // SAFETY: the header words are written by the host before the kernels start.
    let (harvest, chip) = unsafe {
        (
            control_word(abi::HEADER_HARVEST).read_volatile(),
            control_word(abi::HEADER_CHIP).read_volatile(),
        )
    };
    // The boot check refused a harvest or chip word that does not decode.
    let harvest = Chip::harvest(harvest).unwrap_or(Chip::NO_HARVEST);
    let chip = abi::ChipWord::decode(chip).unwrap_or_default();
    let translation = chip
        .translated
        .then(|| Chip::translation(harvest, chip.fused_dram));
    SiliconNoc::new(
        niu,
        id,
        Xy::new(node.0, node.1).unwrap_or_default(),
        harvest,
        translation,
    )
}

/// The tile's circular buffers, built from the control block's buffer table.
#[derive(Debug, Clone, Copy)]
pub struct TileBuffers;

impl Buffers for TileBuffers {
    type Cb = SiliconCb<Chip>;
    fn cb(&self, index: u8) -> Option<SiliconCb<Chip>> {
        // Past the table's 64 entries lie the broadcast areas, not buffers.
        if index as u32 >= abi::CB_ENTRIES {
            return None;
        }
        let entry = abi::CB_TABLE + index as u32 * abi::CB_ENTRY_BYTES;
        // SAFETY: the table lies inside the control block.
        let (base, page_size, pages) = unsafe {
            (
                control_word(entry).read_volatile(),
                control_word(entry + 4).read_volatile(),
                control_word(entry + 8).read_volatile(),
            )
        };
        // Inside L1 and clear of the firmware (a buffer over code or the control block would
        // have the NoC write into them): else no buffer, which the broadcast refuses.
        if pages > u16::MAX as u32 || !abi::buffer_fits(base, page_size, pages, Chip::L1_SIZE) {
            return None;
        }
        // SAFETY: on a Tensix baby core the stream registers are mapped at STREAM_BASE, and the
        // kernels split the counters as tt-metal does (producer tiles_received, consumer
        // tiles_acked). L1 starts at address 0 of the core's address space, and the buffer
        // lies in it (checked above).
        unsafe {
            SiliconCb::<Chip>::from_ptr(
                Chip::steal_streams(),
                index,
                0,
                base,
                page_size,
                pages as u16,
            )
        }
    }
}

/// Records which kernel this is (for the panic handler and the log).
pub fn set_role(role: Role) {
    role::set(role);
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let role = role::get();
    let line = info.location().map_or(0, |l| l.line() & 0xFFFF);
    // SAFETY: the panic word lies inside the control block.
    unsafe {
        control_word(abi::kernel_word(abi::PANIC, role)).write_volatile(abi::PANIC_TAG | line)
    };
    loop {}
}

/// Where each kernel's code starts: its linker script's `CODE` origin, where `_start` (the
/// ELF entry) is placed first. NCRISC and TRISC0 start here through their reset PCs (the
/// loader sets or clears the overrides); BRISC starts at 0x0, whose boot stub jumps here.
pub const fn entry(role: Role) -> u32 {
    match role {
        Role::Reader => 0x1_C000,
        Role::Writer => 0x1_2000,
        Role::Compute => 0x6000,
    }
}

/// The komorebi image header of `role`'s image (`komorebi_kernel::image`), which the linker
/// places at its role's header address: the loader finds the image by it.
pub const fn image_header(role: Role) -> [u32; komorebi_kernel::image::IMAGE_HEADER_WORDS] {
    komorebi_kernel::image::ImageHeader {
        role,
        entry: entry(role),
        code_start: entry(role),
        code_bytes: 0,
        device_id: Chip::PCI_DEVICE_ID,
        handler: HANDLER,
    }
    .encode()
}

/// The id of the one handler this build's images carry (`image_header`'s `handler`): the
/// broadcast handler's, or with the `handshake` feature the handshake's.
#[cfg(not(feature = "handshake"))]
const HANDLER: u16 = komorebi_kernel::broadcast_handler::BROADCAST_HANDLER;
#[cfg(feature = "handshake")]
const HANDLER: u16 = komorebi_kernel::handshake_handler::HANDSHAKE_HANDLER;

/// The boot check before the persistent loop: ABI version, harvest mask and chip word and, for
/// the data-movement kernels, the tile's identity from the chip (NIU0's `NOC_NODE_ID`, and
/// `NOC_ID_LOGICAL` when the chip word says coordinates are translated) checked against the
/// header's mask and tile; writes this kernel's boot word only if the check fails
/// ([`image::boot_check`]; [`announce_up`] writes it up once the kernel is set up). The reader
/// first zeroes the circular buffers' stream counters (the host posts no command before every
/// boot word is up) and, where the host cannot, starts the writer's and compute's cores
/// ([`Chip::start_other_cores`](komorebi_silicon::Chip::start_other_cores)). False: the
/// kernel must not run.
pub fn boot_check(role: Role) -> bool {
    if role == Role::Reader {
        // SAFETY: the stream registers are mapped on every baby core; no kernel of this tile
        // uses a circular buffer before the host sees every boot word up.
        SiliconCb::<Chip>::clear_counters(unsafe { Chip::steal_streams() });
        // SAFETY: this is BRISC at boot, the loader put the other images at their cores'
        // default reset PCs (it refuses any other on a chip whose host cannot set them).
        unsafe { Chip::start_other_cores() };
    }
    let own = (role != Role::Compute).then(|| {
        // SAFETY: the header word is written by the loader before the cores are released.
        let word = unsafe { control_word(abi::HEADER_HARVEST).read_volatile() };
        let harvest = Chip::harvest(word).ok_or(BootFailure::BadHarvest)?;
        // SAFETY: as above.
        let chip = unsafe { control_word(abi::HEADER_CHIP).read_volatile() };
        let chip = abi::ChipWord::decode(chip).ok_or(BootFailure::BadChip)?;
        // SAFETY: NIU0 is mapped on every baby core; this only reads its registers.
        let niu0 = unsafe { Chip::steal_niu(NocId::Noc0) };
        let id = TileIdentity::<Chip>::read(niu0, chip.translated).ok_or(BootFailure::WrongTile)?;
        id.logical(harvest).map_err(|e| match e {
            IdentityError::NotTensix => BootFailure::WrongTile,
            IdentityError::HarvestedColumn | IdentityError::TranslationDisagrees { .. } => {
                BootFailure::HarvestMismatch
            }
        })
    });
    image::boot_check(&mut ctrl(), role, harvest_valid, own).is_ok()
}

/// The chip's rule for the header's harvest mask, the same for every kernel: compute, with no
/// NIU of its own to check the mask against, refuses what the data-movement kernels refuse.
fn harvest_valid(word: u32) -> bool {
    Chip::harvest(word).is_some()
}

/// Writes this kernel's boot word up ([`image::announce_up`]): its check passed and it has built
/// what it runs with (its NoC handle: the chip's translation, some 4,000 cycles on a baby core),
/// so the host's first command finds it polling. A control block that cannot be written leaves
/// the word as the loader zeroed it, which the host reports as a kernel that never came up.
pub fn announce_up(role: Role) {
    let _ = image::announce_up(&mut ctrl(), role);
}

/// Empties this kernel's log ring and logs its boot (at info level): the tile, the kernel, the
/// harvest mask and the ABI version the image was built for. A failed boot check is not logged:
/// the kernel's boot word tells the host, which reports it.
#[cfg(feature = "defmt")]
pub fn log_boot(role: Role) {
    log::reset();
    // SAFETY: the header words are written by the loader before the cores are released.
    let (tile, harvest) = unsafe {
        (
            control_word(abi::HEADER_TILE).read_volatile(),
            control_word(abi::HEADER_HARVEST).read_volatile(),
        )
    };
    defmt::info!(
        "{=str} up on tile ({=u8},{=u8}): harvest mask {=u32:#x}, ABI version {=u32}",
        role.name(),
        tile as u8,
        (tile >> 8) as u8,
        harvest,
        abi::ABI_VERSION
    );
}

/// Defines `kernel_main` for one kernel: its image header, then at run time: set the role, log
/// its boot (with defmt), make the boot check, build what `$setup` builds (its NoC handle), write
/// its boot word up, run the persistent loop `$run` (given the setup and the broadcast handler),
/// park when it returns.
#[macro_export]
macro_rules! kernel_main {
    ($role:ident, $setup:expr, $run:expr) => {
        /// This image's komorebi header (placed by the linker at the role's header address).
        #[unsafe(link_section = ".komorebi_image")]
        #[used]
        static KOMOREBI_IMAGE: [u32; komorebi_kernel::image::IMAGE_HEADER_WORDS] =
            $crate::image_header(komorebi_hal::Role::$role);

        /// Entered from `_start` with a stack and initialised data.
        #[unsafe(no_mangle)]
        extern "C" fn kernel_main() -> ! {
            $crate::set_role(komorebi_hal::Role::$role);
            #[cfg(feature = "defmt")]
            $crate::log_boot(komorebi_hal::Role::$role);
            if !$crate::boot_check(komorebi_hal::Role::$role) {
                loop {}
            }
            // What the kernel runs with, built before its boot word says it is up.
            let ready = $setup;
            // One handler an image (code room): komorebi's, or the handshake baseline's.
            #[cfg(not(feature = "handshake"))]
            let mut handlers = (komorebi_kernel::BroadcastHandler::for_kernel(
                komorebi_hal::Role::$role,
            ),);
            #[cfg(feature = "handshake")]
            let mut handlers = (komorebi_kernel::HandshakeHandler,);
            $crate::announce_up(komorebi_hal::Role::$role);
            let run = $run;
            // An exit command (or a control block that failed): park.
            let _ = komorebi_hal::block_on(run(ready, &mut handlers));
            loop {}
        }
    };
}
