//! Firmware images from ELF files: what the loader takes from a RISC-V executable and every
//! refusal, on ELF files built byte by byte here.

use komorebi_hal::Role;
use komorebi_kernel::image::{ImageHeader, header_addr};
use komorebi_pcie::PcieError;
use komorebi_pcie::firmware::{Firmware, FirmwareImage, Segment};

const EM_RISCV: u16 = 243;

/// A 32-bit little-endian executable for `machine` with one PT_LOAD program header per
/// segment (load address = `paddr`, virtual address `vaddr` when given).
fn elf(machine: u16, entry: u32, segments: &[(u32, Option<u32>, &[u8])]) -> Vec<u8> {
    let sized: Vec<_> = segments
        .iter()
        .map(|&(paddr, vaddr, data)| (paddr, vaddr, data, data.len() as u32))
        .collect();
    elf_sized(machine, entry, &sized)
}

/// [`elf`] with each segment's size in memory (`p_memsz`) given beside its file bytes.
fn elf_sized(machine: u16, entry: u32, segments: &[(u32, Option<u32>, &[u8], u32)]) -> Vec<u8> {
    let phoff = 52u32;
    let data_at = phoff + 32 * segments.len() as u32;
    let mut out = Vec::new();
    out.extend_from_slice(&[0x7F, b'E', b'L', b'F', 1, 1, 1, 0]);
    out.extend_from_slice(&[0; 8]);
    for v in [2u16, machine] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [1u32, entry, phoff, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [52u16, 32, segments.len() as u16, 40, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let mut offset = data_at;
    for (paddr, vaddr, data, memory) in segments {
        let len = data.len() as u32;
        for v in [
            1u32,
            offset,
            vaddr.unwrap_or(*paddr),
            *paddr,
            len,
            *memory,
            5,
            4,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        offset += len;
    }
    for (_, _, data, _) in segments {
        out.extend_from_slice(data);
    }
    out
}

fn header(role: Role, entry: u32) -> Vec<u8> {
    ImageHeader {
        role,
        entry,
        code_start: entry,
        code_bytes: 8,
        device_id: 0,
        handler: 0,
    }
    .to_bytes()
    .to_vec()
}

const CODE: &[u8] = &[0x13, 0, 0, 0, 0x6f, 0, 0, 0];

#[test]
fn an_image_is_its_loadable_segments_with_the_header_found_in_them() {
    let h = header(Role::Writer, 0x1_2000);
    // .data is linked into local memory (VMA 0xFFB0_0000) and loaded in L1 (LMA): the load
    // address is what counts.
    let bytes = elf(
        EM_RISCV,
        0x1_2000,
        &[
            (header_addr(Role::Writer), None, &h),
            (0x1_2000, None, CODE),
            (0x1_3000, Some(0xFFB0_0000), &[1, 2, 3, 4]),
        ],
    );
    let image = FirmwareImage::from_elf("writer", &bytes).unwrap();
    assert_eq!(image.header.role, Role::Writer);
    assert_eq!(image.header.entry, 0x1_2000);
    assert!(!image.is_native());
    assert_eq!(
        image.segments,
        vec![
            Segment {
                addr: header_addr(Role::Writer),
                data: h
            },
            Segment {
                addr: 0x1_2000,
                data: CODE.to_vec()
            },
            Segment {
                addr: 0x1_3000,
                data: vec![1, 2, 3, 4]
            },
        ]
    );
}

fn refusal(bytes: &[u8]) -> String {
    match FirmwareImage::from_elf("x", bytes) {
        Err(PcieError::Firmware { image, why }) => {
            assert_eq!(image, "x");
            why
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn every_refusal_says_what_is_wrong() {
    let h = header(Role::Compute, 0x6000);
    let ok = [
        (header_addr(Role::Compute), None, &h[..]),
        (0x6000, None, CODE),
    ];
    assert!(refusal(b"not an elf").starts_with("not a 32-bit little-endian ELF"));
    assert!(refusal(&elf(62, 0x6000, &ok)).contains("is not RISC-V (243)"));
    let why = refusal(&elf(EM_RISCV, 0x6000, &[(0x17_FFFC, None, CODE)]));
    assert_eq!(
        why,
        "segment at 0x17fffc+8 does not load into L1 (0..0x180000)"
    );
    // L1 bytes 16..32 are the ARC firmware's; the control block is the loader's.
    let why = refusal(&elf(EM_RISCV, 0x6000, &[(0x0, None, &[0; 20])]));
    assert_eq!(
        why,
        "segment at 0x0+20 overlaps L1 bytes 16..32 (the ARC firmware's scratch)"
    );
    let why = refusal(&elf(EM_RISCV, 0x6000, &[(0x1C, None, CODE)]));
    assert!(why.contains("overlaps L1 bytes 16..32"), "{why}");
    assert!(
        refusal(&elf(EM_RISCV, 0x6000, &[(0x20, None, CODE)])).starts_with("no komorebi"),
        "0x20 is free"
    );
    let why = refusal(&elf(EM_RISCV, 0x6000, &[(0x4FFC, None, CODE)]));
    assert_eq!(
        why,
        "segment at 0x4ffc+8 overlaps the control block (0x4000..0x5000)"
    );
    let why = refusal(&elf(EM_RISCV, 0x6000, &[(0x6000, None, CODE)]));
    assert!(why.starts_with("no komorebi image header"), "{why}");
    let why = refusal(&elf(EM_RISCV, 0x6004, &ok));
    assert_eq!(why, "header entry 0x6000 is not the ELF entry 0x6004");
    // A header at another role's place is not this image's header.
    let misplaced = [
        (header_addr(Role::Reader), None, &h[..]),
        (0x6000, None, CODE),
    ];
    assert!(refusal(&elf(EM_RISCV, 0x6000, &misplaced)).starts_with("no komorebi image header"));
    // A header of another ABI (an earlier build's image) says so, not that there is none.
    let mut old = h.clone();
    old[4..8].copy_from_slice(&2u32.to_le_bytes());
    let stale = [
        (header_addr(Role::Compute), None, &old[..]),
        (0x6000, None, CODE),
    ];
    assert_eq!(
        refusal(&elf(EM_RISCV, 0x6000, &stale)),
        format!(
            "its image header at {:#x}: image built for ABI version 2, this is version {}",
            header_addr(Role::Compute),
            komorebi_kernel::abi::ABI_VERSION
        )
    );
}

#[test]
fn a_firmware_is_three_images_in_role_order() {
    let native = Firmware::native();
    assert!(native.images.iter().all(FirmwareImage::is_native));
    let [r, w, c] = native.images.clone();
    let e = Firmware::new([w.clone(), r.clone(), c.clone()]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "firmware image native writer: is the writer image, given as the reader"
    );
    assert_eq!(Firmware::new([r, w, c]).unwrap(), native);
    let e = Firmware::from_dir(std::path::Path::new("/nonexistent/firmware")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("firmware image /nonexistent/firmware/reader: cannot be read"),
        "{e}"
    );
}

#[test]
fn images_whose_segments_overlap_are_refused_naming_both() {
    let image = |role: Role, entry: u32, code: &[(u32, &[u8])]| {
        let h = header(role, entry);
        let mut segments = vec![(header_addr(role), None, &h[..])];
        segments.extend(code.iter().map(|&(at, bytes)| (at, None, bytes)));
        FirmwareImage::from_elf(role.name(), &elf(EM_RISCV, entry, &segments)).unwrap()
    };
    let reader = image(
        Role::Reader,
        0x1_C000,
        &[(0x0, &CODE[..4]), (0x1_C000, CODE)],
    );
    let writer = image(Role::Writer, 0x1_2000, &[(0x1_2000, CODE)]);
    let compute = image(Role::Compute, 0x6000, &[(0x6000, CODE)]);
    assert!(Firmware::new([reader.clone(), writer.clone(), compute]).is_ok());
    // Compute's code grown into the writer's: the later image would overwrite the earlier.
    let grown = image(Role::Compute, 0x6000, &[(0x6000, CODE), (0x1_2004, CODE)]);
    let e = Firmware::new([reader, writer, grown]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "firmware image compute: segment at 0x12004+8 overlaps writer's segment at 0x12000+8"
    );
}

#[test]
fn a_segment_larger_in_memory_than_in_the_file_loads_zeros_and_a_local_bss_is_left_out() {
    let h = header(Role::Compute, 0x6000);
    let bytes = elf_sized(
        EM_RISCV,
        0x6000,
        &[
            (header_addr(Role::Compute), None, &h, 32),
            // Code, then 4 bytes of L1 `.bss`: zeros the loader writes.
            (0x6000, None, CODE, 12),
            // The core's local `.bss` (its startup clears it): nothing to load.
            (0xFFB0_0000, None, &[], 0x18),
        ],
    );
    let image = FirmwareImage::from_elf("compute", &bytes).unwrap();
    let mut code = CODE.to_vec();
    code.extend_from_slice(&[0; 4]);
    assert_eq!(
        image.segments,
        vec![
            Segment {
                addr: header_addr(Role::Compute),
                data: h.clone()
            },
            Segment {
                addr: 0x6000,
                data: code
            },
        ]
    );
    // Loaded in L1 to run elsewhere (its startup copies it): no zeros here.
    let bytes = elf_sized(
        EM_RISCV,
        0x6000,
        &[
            (header_addr(Role::Compute), None, &h, 32),
            (0x6000, Some(0xFFB0_0000), CODE, 12),
        ],
    );
    let image = FirmwareImage::from_elf("compute", &bytes).unwrap();
    assert_eq!(image.segments[1].data, CODE);
    // Fewer bytes in memory than in the file is no segment.
    let why = refusal(&elf_sized(EM_RISCV, 0x6000, &[(0x6000, None, CODE, 4)]));
    assert_eq!(
        why,
        "segment at 0x6000 takes 4 bytes in memory, fewer than its 8 in the file"
    );
    // Its size in memory counts against L1 as its file bytes do.
    let why = refusal(&elf_sized(EM_RISCV, 0x6000, &[(0x17_FFF8, None, CODE, 16)]));
    assert_eq!(
        why,
        "segment at 0x17fff8+16 does not load into L1 (0..0x180000)"
    );
}

#[test]
fn a_reader_image_must_load_its_boot_stub_at_l1_0() {
    let entry = 0x1_C000;
    let h = header(Role::Reader, entry);
    let without = [
        (header_addr(Role::Reader), None, &h[..]),
        (entry, None, CODE),
    ];
    assert_eq!(
        refusal(&elf(EM_RISCV, entry, &without)),
        "a reader image must load code at L1 0x0, where BRISC always starts (its boot stub, \
         `reader.ld` BOOT); this one starts at 0x1c000 only"
    );
    let with = [
        (header_addr(Role::Reader), None, &h[..]),
        (0x0, None, CODE),
        (entry, None, CODE),
    ];
    let image = FirmwareImage::from_elf("reader", &elf(EM_RISCV, entry, &with)).unwrap();
    assert_eq!(image.segments[1].addr, 0);
}
