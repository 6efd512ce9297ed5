//! Each kernel links with its own memory layout (where its core fetches from, its local RAM).

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
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
