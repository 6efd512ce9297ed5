//! Loading the komorebi firmware onto every Tensix tile of a card and starting it.
//!
//! # Images
//! A [`Firmware`] is three [`FirmwareImage`]s, one per kernel (reader on BRISC, writer on
//! NCRISC, compute on TRISC0). An image comes from an ELF file ([`FirmwareImage::from_elf`],
//! parsed with the `object` crate): its loadable segments that land in L1, and the
//! [`ImageHeader`] one of them carries at [`image::header_addr`] of its role. Or it is a
//! [`FirmwareImage::native`] image: the header alone, which only a simulator can start (it
//! runs its native kernel for a core whose L1 holds a komorebi header when the core is
//! released, where with ELF images it may execute them instead). A card refuses native images.
//!
//! # Boot sequence ([`boot`]), after tt-metal's `risc_firmware_initializer.cpp`
//! 1. Every RISC of every tile is held in soft reset (read-modify-write of
//!    `RISCV_DEBUG_REG_SOFT_RESET_0`; nothing there updates bits atomically), and the writes
//!    read back ([`Card::landed`]) before anything is loaded.
//! 2. The control block is zeroed and every image segment written, by multicast, and read back
//!    on every tile until it reads what was written.
//! 3. Each tile's control-block header (ABI version, logical coordinates, harvest mask, the
//!    chip word with the coordinate system the host found and the fused DRAM bank, wait limit)
//!    is written, and its boot words cleared.
//! 4. Reset-PC overrides: for NCRISC and TRISC0, cleared when the image starts at the core's
//!    default reset PC, set to the image's entry otherwise (a tt-metal run leaves them set).
//!    TRISC1 and TRISC2 stay in reset, so their PCs do not matter. On a Wormhole the
//!    overrides are Tensix configuration words the host may not write: images must start at
//!    their cores' default PCs (komorebi's do), and BRISC's image clears the overrides.
//! 5. Every write read back on every tile ([`Card::landed`]: the multicast's last word and
//!    each tile's header), then BRISC, NCRISC and TRISC0 released; on a Wormhole BRISC
//!    only, whose image releases the other two once it cleared their overrides (tt-metal's
//!    BRISC firmware starts them the same way).
//! 6. A bounded wait until every tile's three boot words say the kernels came up; the error
//!    names every tile that did not, with what its boot words showed.
//! 7. The driver is asked to set the first tile's stop word when this process's device handle
//!    is released, however the process ends ([`Bar::arm_release_write`], tt-kmd's
//!    SET_NOC_CLEANUP: one 32-bit write). A command that tile is running then gives up at once
//!    and the tiles waiting on it within their wait limit, so a crashed host leaves no
//!    broadcast running; an idle tile ignores the flag, and the next boot clears it. A driver
//!    without it (before 2.2.0) is a note in [`Card::notes`], not an error (decisions D19).

use std::time::{Duration, Instant};

use blackhole_pac::tensix::{self, SOFT_RESET_ADDR, SOFT_RESET_ALL_CORES, SoftReset};
use komorebi_hal::{Role, Xy};
use komorebi_kernel::abi;
use komorebi_kernel::image::{self, BootState, ImageHeader};

use crate::bar::Bar;
use crate::card::Card;
use crate::error::PcieError;

/// One loadable piece of an image: bytes for L1 at `addr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// L1 address.
    pub addr: u32,
    /// The bytes.
    pub data: Vec<u8>,
}

impl Segment {
    /// The L1 bytes it loads, `addr..addr + len` (in 64 bits: no overflow).
    pub fn range(&self) -> core::ops::Range<u64> {
        self.addr as u64..self.addr as u64 + self.data.len() as u64
    }
}

/// One kernel's image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirmwareImage {
    /// Where it came from (a path, or `native reader`).
    pub name: String,
    /// Its header.
    pub header: ImageHeader,
    /// What is written to L1 (the header's segment among them).
    pub segments: Vec<Segment>,
    native: bool,
}

const EM_RISCV: u16 = 243;

/// A tile header's chip word ([`abi::ChipWord`]), or why it cannot be written: a fused bank the
/// word cannot name.
pub fn chip_word(translated: bool, fused_dram: Option<u8>) -> Result<u32, String> {
    abi::ChipWord {
        translated,
        fused_dram,
    }
    .encode()
    .ok_or_else(|| {
        let bank = fused_dram.map_or(String::new(), |b| b.to_string());
        format!("the chip word cannot name fused DRAM bank {bank} (allowed: 0 to 7)")
    })
}

fn bad(image: &str, why: impl Into<String>) -> PcieError {
    PcieError::Firmware {
        image: image.into(),
        why: why.into(),
    }
}

impl FirmwareImage {
    /// The header-only image of `role`, which a simulator starts as its native kernel.
    pub fn native(role: Role) -> Self {
        let entry = default_pc(role);
        let header = ImageHeader {
            role,
            entry,
            code_start: entry,
            code_bytes: 0,
            device_id: 0,
            handler: 0,
        };
        Self {
            name: format!("native {role}"),
            segments: vec![Segment {
                addr: image::header_addr(role),
                data: header.to_bytes().to_vec(),
            }],
            header,
            native: true,
        }
    }

    /// Whether this is a header-only image for the simulator.
    pub fn is_native(&self) -> bool {
        self.native
    }

    /// The image in ELF file `bytes` (a 32-bit little-endian RISC-V executable): every
    /// loadable segment at its load address, which must lie in L1, its file bytes followed,
    /// when it runs where it is loaded, by zeros up to its size in memory (`p_memsz`); a
    /// segment with no file bytes outside L1 (the core's local `.bss`, which the image's
    /// startup clears) is left out. One segment
    /// must hold a komorebi image header whose entry is the ELF's, and a reader image must
    /// load code at L1 0: BRISC always starts there (tt-metal's HAL: "BRISC is hardcoded to
    /// have reset PC of 0"), so a reader whose boot stub is missing would run whatever L1 0
    /// holds.
    pub fn from_elf(name: &str, bytes: &[u8]) -> Result<Self, PcieError> {
        use object::read::elf::{ElfFile32, FileHeader, ProgramHeader};
        let file = ElfFile32::<object::LittleEndian>::parse(bytes)
            .map_err(|e| bad(name, format!("not a 32-bit little-endian ELF: {e}")))?;
        let endian = file.endian();
        let header = file.elf_header();
        let machine = header.e_machine(endian);
        if machine != EM_RISCV {
            return Err(bad(
                name,
                format!("machine {machine} is not RISC-V ({EM_RISCV})"),
            ));
        }
        let entry = header.e_entry(endian);
        let mut segments = Vec::new();
        for ph in file.elf_program_headers() {
            let (addr, file_bytes) = (ph.p_paddr(endian), ph.p_filesz(endian));
            let local = addr >= tensix::L1_SIZE && file_bytes == 0;
            if ph.p_type(endian) != object::elf::PT_LOAD || local {
                continue;
            }
            let in_memory = ph.p_memsz(endian);
            if in_memory < file_bytes {
                return Err(bad(
                    name,
                    format!(
                        "segment at {addr:#x} takes {in_memory} bytes in memory, fewer than its \
                         {file_bytes} in the file"
                    ),
                ));
            }
            // The zeros beyond the file bytes belong where the segment runs: in L1 only if it
            // runs where it is loaded (a `.data` loaded in L1 for the core's startup to copy
            // elsewhere has its `.bss` there, not here).
            let runs_here = ph.p_vaddr(endian) == addr;
            let memory = if runs_here { in_memory } else { file_bytes };
            if memory == 0 {
                continue;
            }
            let file_data = ph
                .data(endian, bytes)
                .map_err(|()| bad(name, format!("segment at {addr:#x} lies outside the file")))?;
            if addr as u64 + memory as u64 > tensix::L1_SIZE as u64 {
                return Err(bad(
                    name,
                    format!(
                        "segment at {addr:#x}+{memory} does not load into L1 (0..{:#x})",
                        tensix::L1_SIZE
                    ),
                ));
            }
            // (Checked against L1 first: `memory` is at most L1's size here.)
            let mut data = file_data.to_vec();
            data.resize(memory as usize, 0);
            let segment = Segment { addr, data };
            let loads = segment.range();
            let overlaps =
                |r: core::ops::Range<u32>| loads.start < r.end as u64 && loads.end > r.start as u64;
            let control = abi::CONTROL_BASE..abi::CONTROL_BASE + abi::CONTROL_BYTES;
            let rings = abi::LOG_BASE..abi::LOG_BASE + 3 * abi::LOG_RING_BYTES;
            for (reserved, what) in [
                (
                    tensix::L1_ARC_SCRATCH,
                    "L1 bytes 16..32 (the ARC firmware's scratch)",
                ),
                (control, "the control block (0x4000..0x5000)"),
                (rings, "the kernels' log rings (0x5000..0x5F00)"),
            ] {
                if overlaps(reserved) {
                    return Err(bad(
                        name,
                        format!("segment at {addr:#x}+{memory} overlaps {what}"),
                    ));
                }
            }
            segments.push(segment);
        }
        // The first header-sized span at a header address that is not a header: kept, so an
        // image of another ABI or a corrupt one says so rather than that it has no header.
        let mut refused = None;
        let found = Role::ALL.into_iter().find_map(|role| {
            let at = image::header_addr(role);
            segments.iter().find_map(|s| {
                let off = at.checked_sub(s.addr)? as usize;
                match ImageHeader::from_bytes(s.data.get(off..)?) {
                    Ok(h) => (h.role == role).then_some(h),
                    Err(e) => {
                        if !matches!(e, image::ImageError::Magic(_)) {
                            refused.get_or_insert((at, e));
                        }
                        None
                    }
                }
            })
        });
        let header = found.ok_or_else(|| match refused {
            Some((at, e)) => bad(name, format!("its image header at {at:#x}: {e}")),
            None => bad(
                name,
                "no komorebi image header in its loaded segments (a komorebi firmware ELF \
                 carries one at 0x3F00 + 32 x role)",
            ),
        })?;
        let boot = tensix::BRISC_RESET_PC;
        let boots = segments
            .iter()
            .any(|s| s.addr <= boot && boot + 4 <= s.addr + s.data.len() as u32);
        if header.role == Role::Reader && !boots {
            return Err(bad(
                name,
                format!(
                    "a reader image must load code at L1 {boot:#x}, where BRISC always starts \
                     (its boot stub, `reader.ld` BOOT); this one starts at {entry:#x} only"
                ),
            ));
        }
        if header.entry != entry {
            return Err(bad(
                name,
                format!(
                    "header entry {:#x} is not the ELF entry {entry:#x}",
                    header.entry
                ),
            ));
        }
        Ok(Self {
            name: name.into(),
            header,
            segments,
            native: false,
        })
    }
}

/// The three kernels' images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Firmware {
    /// Reader, writer, compute, in [`Role`] order.
    pub images: [FirmwareImage; 3],
}

impl Firmware {
    /// The native images of all three kernels (simulator only).
    pub fn native() -> Self {
        Self {
            images: Role::ALL.map(FirmwareImage::native),
        }
    }

    /// The images in `reader`, `writer` and `compute`, checked to be those roles and to load
    /// into L1 bytes no other of them loads (the loader writes one image after another: a
    /// later one would overwrite an earlier one's code where they overlap).
    pub fn new(images: [FirmwareImage; 3]) -> Result<Self, PcieError> {
        for (image, role) in images.iter().zip(Role::ALL) {
            if image.header.role != role {
                return Err(bad(
                    &image.name,
                    format!("is the {} image, given as the {role}", image.header.role),
                ));
            }
        }
        for (i, a) in images.iter().enumerate() {
            for b in &images[i + 1..] {
                for sa in &a.segments {
                    let ra = sa.range();
                    if let Some(sb) = b.segments.iter().find(|sb| {
                        let rb = sb.range();
                        ra.start < rb.end && rb.start < ra.end
                    }) {
                        return Err(bad(
                            &b.name,
                            format!(
                                "segment at {:#x}+{} overlaps {}'s segment at {:#x}+{}",
                                sb.addr,
                                sb.data.len(),
                                a.name,
                                sa.addr,
                                sa.data.len()
                            ),
                        ));
                    }
                }
            }
        }
        Ok(Self { images })
    }

    /// The ELF files `reader`, `writer` and `compute` in `dir` (the firmware build's output,
    /// `examples/firmware/target/riscv32im-unknown-none-elf/release`).
    pub fn from_dir(dir: &std::path::Path) -> Result<Self, PcieError> {
        let images = Role::ALL.map(|role| {
            let path = dir.join(role.name());
            let name = path.display().to_string();
            std::fs::read(&path)
                .map_err(|e| bad(&name, format!("cannot be read: {e}")))
                .and_then(|bytes| FirmwareImage::from_elf(&name, &bytes))
        });
        let [r, w, c] = images;
        Self::new([r?, w?, c?])
    }
}

/// What [`boot`] writes into every tile's control-block header besides its coordinates.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BootOptions {
    /// How long to wait for every kernel to come up, in device time (the cycles
    /// [`Bar::pass_time`] reports, at the card's AICLK: real time on a card, virtual time on a
    /// simulator); real time caps it at no less than [`BOOT_REAL_TIME_CAP`].
    pub timeout: Duration,
    /// Whether the device may run native images (only a simulator can).
    pub native_allowed: bool,
}

/// The least real time the boot wait lasts before it gives up on a device whose clock does
/// not move.
pub const BOOT_REAL_TIME_CAP: Duration = Duration::from_secs(10);

/// The reset PC `role`'s core starts at without an override, on Blackhole (the simulated card,
/// the only one that runs native images, is a Blackhole; the loader takes each chip's from
/// [`CardChip::reset_pc_regs`](crate::chip::CardChip::reset_pc_regs)).
const fn default_pc(role: Role) -> u32 {
    match role {
        Role::Reader => tensix::BRISC_RESET_PC,
        Role::Writer => tensix::NCRISC_RESET_PC,
        Role::Compute => tensix::TRISC_RESET_PC[0],
    }
}

// The soft-reset register and its bits are at the same place on Wormhole.
const _: () = assert!(
    SOFT_RESET_ADDR as usize == wormhole_pac::tensix::SOFT_RESET_0
        && SOFT_RESET_ALL_CORES == wormhole_pac::tensix::SOFT_RESET_ALL
);

/// Loads `firmware` onto every enabled Tensix tile of `card` and starts it (the sequence in
/// the module docs). `logical(tile)` gives a tile's logical coordinates for its header.
pub fn boot<B: Bar>(
    card: &mut Card<B>,
    firmware: &Firmware,
    logical: impl Fn(Xy) -> (u8, u8),
    options: BootOptions,
) -> Result<(), PcieError> {
    if !options.native_allowed
        && let Some(native) = firmware.images.iter().find(|i| i.is_native())
    {
        return Err(bad(
            &native.name,
            "is a header-only image for the simulator; a card needs the firmware ELF \
                 files (--firmware DIR)",
        ));
    }
    // Each image drives one chip's registers: its header names the chip (0: any), and its
    // segments must lie in this chip's L1.
    let device_id = card.identity().device_id;
    let kind = card.chip().kind();
    for image in &firmware.images {
        let built_for = image.header.device_id;
        if built_for != 0 && built_for != device_id {
            let chip = crate::chip::ChipKind::from_device_id(built_for)
                .map_or_else(|| "another chip".to_string(), |k| k.to_string());
            return Err(bad(
                &image.name,
                format!(
                    "is built for PCI device {built_for:#06x} ({chip}); this device is \
                     {device_id:#06x} ({kind}): build the images for it (the firmware's \
                     `wormhole` feature for a Wormhole B0, none for a Blackhole)"
                ),
            ));
        }
        if let Some(s) = image
            .segments
            .iter()
            .find(|s| s.range().end > kind.l1_size() as u64)
        {
            return Err(bad(
                &image.name,
                format!(
                    "segment at {:#x}+{} does not load into a {kind}'s L1 (0..{:#x})",
                    s.addr,
                    s.data.len(),
                    kind.l1_size()
                ),
            ));
        }
    }
    let tiles: Vec<Xy> = card.tensix().collect();
    // 1. Hold every core in reset.
    for &t in &tiles {
        let v = card.read_reg(t, SOFT_RESET_ADDR)?;
        let v = card.check_alive(v, || format!("soft reset of NoC0 {t}"))?;
        card.write_reg(t, SOFT_RESET_ADDR, v | SOFT_RESET_ALL_CORES)?;
    }
    // Every core held before anything is loaded: the last tile's reset write went through the
    // spare window, which only a read back confirms (tt-metal asserts every reset, then runs
    // its L1 barrier).
    card.landed()?;
    // 2. A clean control block and log rings (a kernel that never gets to empty its ring must
    // not show the last boot's lines as this one's), then every segment.
    card.multicast_l1(abi::CONTROL_BASE, &vec![0; abi::CONTROL_BYTES as usize])?;
    card.multicast_l1(abi::LOG_BASE, &vec![0; 3 * abi::LOG_RING_BYTES as usize])?;
    for image in &firmware.images {
        for s in &image.segments {
            card.multicast_l1(s.addr, &s.data)?;
        }
    }
    // The load landed on every tile before the headers go into the block it cleared: they go
    // through each tile's own window, which nothing orders with the multicast window.
    card.landed()?;
    // 3. Each tile's header.
    let harvest = card.chip().harvest_word();
    let chip = chip_word(card.chip().translated(), card.fused_dram())
        .map_err(|why| bad("every image", why))?;
    for &t in &tiles {
        let (lx, ly) = logical(t);
        for (offset, value) in [
            (abi::HEADER_MAGIC, abi::MAGIC),
            (abi::HEADER_VERSION, abi::ABI_VERSION),
            (abi::HEADER_TILE, lx as u32 | (ly as u32) << 8),
            (abi::HEADER_HARVEST, harvest),
            (abi::HEADER_CHIP, chip),
            (abi::IDLE_WAIT_LIMIT, u32::MAX),
            (abi::IDLE_WAIT_LIMIT + 4, u32::MAX),
        ] {
            card.write_l1(t, abi::CONTROL_BASE + offset, &value.to_le_bytes())?;
        }
    }
    // 4. Reset PCs of the cores komorebi starts.
    let writer = &firmware.images[Role::Writer.index()].header;
    let compute = &firmware.images[Role::Compute.index()].header;
    let regs = card.chip().reset_pc_regs();
    if !regs.host_writable {
        // Images at their cores' default PCs need no override; one elsewhere cannot be started.
        for (image, default) in [
            (writer, regs.ncrisc_default),
            (compute, regs.trisc0_default),
        ] {
            if image.entry != default {
                return Err(bad(
                    &firmware.images[image.role.index()].name,
                    format!(
                        "starts at {:#x}; on a {} the host cannot set a reset PC (the tile's \
                         own cores write them), so an image must start at its core's default \
                         ({default:#x})",
                        image.entry,
                        card.chip().kind()
                    ),
                ));
            }
        }
    }
    for &t in tiles.iter().filter(|_| regs.host_writable) {
        let nc_override = writer.entry != regs.ncrisc_default;
        card.write_reg(t, regs.ncrisc_pc, writer.entry)?;
        card.write_reg(t, regs.ncrisc_override, nc_override as u32)?;
        let t0_override = compute.entry != regs.trisc0_default;
        card.write_reg(t, regs.trisc0_pc, compute.entry)?;
        // Bit i enables TRISCi's override; TRISC1 and TRISC2 stay in reset.
        card.write_reg(t, regs.trisc_override, t0_override as u32)?;
    }
    // 5. Everything landed, then release BRISC, NCRISC and TRISC0; where the host cannot set
    // the reset PCs (Wormhole), BRISC only: its image clears the overrides a program before it
    // may have left and releases the other two (komorebi_silicon's `Chip::start_other_cores`).
    let mut started = SoftReset(0);
    started.set_brisc(true);
    started.set_ncrisc(regs.host_writable);
    started.set_trisc0(regs.host_writable);
    let started = started.0;
    // Every word loaded, read back on every tile (the images and the cleared words came by
    // multicast, the headers through each tile's window), as tt-metal's L1 barrier before it
    // deasserts the resets.
    card.landed()?;
    for &t in &tiles {
        let v = card.read_reg(t, SOFT_RESET_ADDR)?;
        let v = card.check_alive(v, || format!("soft reset of NoC0 {t}"))?;
        card.write_reg(t, SOFT_RESET_ADDR, v & !started)?;
    }
    // 6. Wait for the boot words.
    wait_up(card, &tiles, &logical, options.timeout)?;
    // 7. A stop at release.
    arm_stop_on_release(card, &tiles)
}

/// Step 7 of [`boot`]: the first tile's stop word, written by the driver at release.
fn arm_stop_on_release<B: Bar>(card: &mut Card<B>, tiles: &[Xy]) -> Result<(), PcieError> {
    let Some(&first) = tiles.first() else {
        return Ok(());
    };
    let target = card.target(first)?;
    let addr = (abi::CONTROL_BASE + abi::STOP) as u64;
    match card.bar_mut().arm_release_write(target, addr, 1) {
        Ok(_) => Ok(()),
        Err(e @ (PcieError::Gone { .. } | PcieError::Hung { .. })) => Err(e),
        Err(e) => {
            card.note(format!("no stop of NoC0 {first} at release: {e}"));
            Ok(())
        }
    }
}

fn boot_states<B: Bar>(card: &Card<B>, tile: Xy) -> Result<[BootState; 3], PcieError> {
    let mut b = [0u8; 12];
    card.read_l1(tile, abi::CONTROL_BASE + image::BOOT, &mut b)?;
    Ok([0, 1, 2].map(|i| {
        image::boot_state(u32::from_le_bytes([
            b[4 * i],
            b[4 * i + 1],
            b[4 * i + 2],
            b[4 * i + 3],
        ]))
    }))
}

/// Each kernel's panic word ([`abi::PANIC`]): the source line of the panic it stopped at, if
/// its word carries [`abi::PANIC_TAG`] (the loader zeroed it, so it is this boot's). Release
/// images cannot panic (their size report refuses panicking code); a debug build can.
fn panic_lines<B: Bar>(card: &Card<B>, tile: Xy) -> Result<[Option<u32>; 3], PcieError> {
    let mut b = [0u8; 12];
    card.read_l1(tile, abi::CONTROL_BASE + abi::PANIC, &mut b)?;
    Ok([0, 1, 2].map(|i| {
        let word = u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
        (word & 0xFFFF_0000 == abi::PANIC_TAG).then_some(word & 0xFFFF)
    }))
}

fn wait_up<B: Bar>(
    card: &mut Card<B>,
    tiles: &[Xy],
    logical: &impl Fn(Xy) -> (u8, u8),
    timeout: Duration,
) -> Result<(), PcieError> {
    let start = Instant::now();
    // Device time bounds the wait (a card's `pass_time` reports real time, a simulator's its
    // virtual time); real time only caps a device whose clock does not move, and never below
    // `BOOT_REAL_TIME_CAP`, so a slow host cannot time out a simulated card that boots.
    let budget = (timeout.as_micros() as u64).saturating_mul(card.aiclk_mhz() as u64);
    let cap = timeout.max(BOOT_REAL_TIME_CAP);
    let mut device_cycles = 0u64;
    let mut pending: Vec<Xy> = tiles.to_vec();
    loop {
        let mut failed = Vec::new();
        let mut still = Vec::new();
        for &t in &pending {
            let states = boot_states(card, t)?;
            if states.iter().all(|s| *s == BootState::Up) {
                continue;
            }
            if states
                .iter()
                .any(|s| matches!(s, BootState::Failed(_) | BootState::Garbage(_)))
            {
                failed.push(t);
            } else {
                still.push(t);
            }
        }
        let timed_out = device_cycles >= budget || start.elapsed() >= cap;
        if still.is_empty() && failed.is_empty() {
            return Ok(());
        }
        if !failed.is_empty() || timed_out {
            let mut tiles = Vec::new();
            for t in failed
                .into_iter()
                .chain(if timed_out { still } else { Vec::new() })
            {
                let states = boot_states(card, t)?;
                let panics = panic_lines(card, t)?;
                let (lx, ly) = logical(t);
                let what: Vec<String> = Role::ALL
                    .iter()
                    .zip(states)
                    .zip(panics)
                    .filter(|((_, s), _)| *s != BootState::Up)
                    .map(|((r, s), panic)| match panic {
                        Some(line) => format!("{r} {s} (panicked at line {line})"),
                        None => format!("{r} {s}"),
                    })
                    .collect();
                tiles.push(format!("logical ({lx}, {ly}): {}", what.join(", ")));
            }
            return Err(PcieError::FirmwareDidNotStart {
                tiles,
                waited_ms: (start.elapsed().as_millis() as u64)
                    .max(device_cycles / (card.aiclk_mhz().max(1) as u64 * 1000)),
            });
        }
        pending = still;
        device_cycles = device_cycles.saturating_add(card.pass_time());
    }
}
