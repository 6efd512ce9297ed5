//! Each kernel links with its own memory layout (where its core fetches from, its local RAM).

/// Bytes of each core's private RAM (data, bss and stack): BRISC and NCRISC 8 KiB, TRISC 4 KiB
/// on Blackhole; 4 KiB and 2 KiB on Wormhole B0 (tt-isa-documentation
/// `BlackholeA0/TensixTile/BabyRISCV/README.md` and `WormholeB0/TensixTile/BabyRISCV/README.md`;
/// tt-metal `dev_mem_map.h` `MEM_*_LOCAL_SIZE` of each chip; ttsim `config.h`).
fn local_bytes(kernel: &str, wormhole: bool) -> u32 {
    match (kernel, wormhole) {
        ("compute", false) => 4 * 1024,
        ("compute", true) => 2 * 1024,
        (_, false) => 8 * 1024,
        (_, true) => 4 * 1024,
    }
}

/// Bytes of local RAM each kernel keeps for its stack beyond its data and bss (the linker
/// refuses an image that leaves less: `link/common.ld`). The deepest call chains of the images
/// (2026-12-06, `addi sp` frames along the call graph) take about 2.4 KiB on the data-movement
/// cores (`kernel_main`'s frame, which holds a command, is 2,048 bytes of it: `addi sp, sp,
/// -2032` then `-16`) and 1.1 KiB on compute (1,088).
fn stack_bytes(kernel: &str) -> u32 {
    match kernel {
        "compute" => 1536,
        _ => 3072,
    }
}

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let out = std::env::var("OUT_DIR").unwrap_or_default();
    let wormhole = std::env::var_os("CARGO_FEATURE_WORMHOLE").is_some();
    for kernel in ["reader", "writer", "compute"] {
        let script = format!(
            "MEMORY\n{{\n  LOCAL (rw)  : ORIGIN = 0xFFB00000, LENGTH = {}\n}}\n__stack_bytes = {};\n",
            local_bytes(kernel, wormhole),
            stack_bytes(kernel)
        );
        let path = format!("{out}/local-{kernel}.ld");
        if let Err(e) = std::fs::write(&path, script) {
            panic!("cannot write {path}: {e}");
        }
    }
    println!("cargo:rustc-link-search={out}");
    println!("cargo:rustc-link-search={dir}/link");
    for kernel in ["reader", "writer", "compute"] {
        println!("cargo:rustc-link-arg-bin={kernel}=-T{kernel}.ld");
        println!("cargo:rerun-if-changed=link/{kernel}.ld");
    }
    // No page alignment: otherwise the linker loads the ELF and program headers into L1 below
    // the first section (at 0x3000), where nothing of the image belongs.
    println!("cargo:rustc-link-arg=--nmagic");
    println!("cargo:rerun-if-changed=link/common.ld");
    if std::env::var_os("CARGO_FEATURE_DEFMT").is_some() {
        println!("cargo:rustc-link-arg=-Tdefmt.x");
    }
}
