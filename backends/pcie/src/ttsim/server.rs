//! The ttsim server: the process that loads `libttsim.so`, initializes it, and carries out the
//! host's requests ([`wire`](super::wire)) one at a time.
//!
//! ttsim is one process-wide, single-threaded instance that ends its process on any violation
//! (ttsim `docs/libttsim_api.md`, "Error and exit behavior"), so it gets a process of its own:
//! this one. Its standard input carries the requests; the replies go to a duplicate of its
//! standard output, and standard output itself is pointed at standard error before ttsim is
//! loaded, so everything ttsim prints (its error line above all) reaches the host on standard
//! error and never mixes into the replies.
//!
//! `TTSIM_SEMIHOSTING` is never set (the host removes it from the server's environment, and the
//! server refuses to start with it): with it a program on the simulated cores could end this
//! process or, in later versions, reach the host's files.

use std::ffi::c_void;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use super::wire::{HELLO, Request};

/// Exit status of a server that could not start (the library, its symbols, the streams).
pub const EXIT_CANNOT_START: u8 = 3;

type Init = unsafe extern "C" fn();
type ConfigRd32 = unsafe extern "C" fn(u32, u32) -> u32;
type MemRd = unsafe extern "C" fn(u64, *mut c_void, u32);
type MemWr = unsafe extern "C" fn(u64, *const c_void, u32);
type Clock = unsafe extern "C" fn(u32);

/// The library's entry points (ttsim `docs/libttsim_api.md`, "API reference").
struct Entries {
    init: Init,
    exit: Init,
    config_rd32: ConfigRd32,
    mem_rd: MemRd,
    mem_wr: MemWr,
    clock: Clock,
}

fn entries(lib: &libloading::Library) -> Result<Entries, String> {
    /// The symbol `name` of `lib` as a `T`.
    ///
    /// # Safety
    /// `T` must be the C signature the library gives `name`.
    unsafe fn get<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T, String> {
        // SAFETY: the caller names the symbol's C signature; the library outlives the copy
        // (the server keeps it loaded until it ends).
        unsafe { lib.get::<T>(name.as_bytes()) }
            .map(|s| *s)
            .map_err(|e| {
                format!(
                    "has no `{name}`, so it is not a libttsim: {}",
                    with_source(&e)
                )
            })
    }
    // SAFETY: each type is the signature ttsim's `libttsim.cpp` declares for the symbol.
    unsafe {
        Ok(Entries {
            init: get::<Init>(lib, "libttsim_init")?,
            exit: get::<Init>(lib, "libttsim_exit")?,
            config_rd32: get::<ConfigRd32>(lib, "libttsim_pci_config_rd32")?,
            mem_rd: get::<MemRd>(lib, "libttsim_pci_mem_rd_bytes")?,
            mem_wr: get::<MemWr>(lib, "libttsim_pci_mem_wr_bytes")?,
            clock: get::<Clock>(lib, "libttsim_clock")?,
        })
    }
}

/// `e` and its sources, as one line (libloading's own text is only "dlopen failed"; the
/// loader's reason is its source).
fn with_source(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        out.push_str(": ");
        out.push_str(&s.to_string());
        next = s.source();
    }
    out
}

/// Points standard output at standard error and returns a new descriptor for the replies
/// (the original standard output).
fn split_stdout() -> Result<std::fs::File, String> {
    let stdout = std::io::stdout();
    let replies = rustix::io::dup(&stdout).map_err(|e| format!("dup(stdout): {e}"))?;
    rustix::stdio::dup2_stdout(std::io::stderr()).map_err(|e| format!("dup2(stderr, 1): {e}"))?;
    Ok(std::fs::File::from(replies))
}

/// Serves the host over the standard streams with the library at `library`; returns the exit
/// status. What stops it before ttsim runs goes to standard error in one line,
/// `komorebi-ttsim-server: WHY` (the host adds the library's path).
pub fn serve(library: &Path) -> u8 {
    match serve_or_say(library) {
        Ok(()) => 0,
        Err(why) => {
            eprintln!("komorebi-ttsim-server: {why}");
            EXIT_CANNOT_START
        }
    }
}

fn serve_or_say(library: &Path) -> Result<(), String> {
    if std::env::var_os("TTSIM_SEMIHOSTING").is_some() {
        return Err(
            "TTSIM_SEMIHOSTING is set: the server runs ttsim without semihosting, \
                    which would let the simulated program end this process"
                .into(),
        );
    }
    let replies = split_stdout()?;
    // SAFETY: loading runs the library's initializers; ttsim's do not start threads or touch
    // the process beyond its own state (ttsim `docs/libttsim_api.md`, "Hidden API").
    let lib = unsafe { libloading::Library::new(library) }
        .map_err(|e| format!("cannot be loaded: {}", with_source(&e)))?;
    let f = entries(&lib)?;
    // SAFETY: called once per process, before any other entry point.
    unsafe { (f.init)() };
    let mut out = BufWriter::new(replies);
    let mut input = BufReader::with_capacity(1 << 20, std::io::stdin().lock());
    let io = |e: std::io::Error| format!("the host's stream: {e}");
    out.write_all(&HELLO).map_err(io)?;
    out.flush().map_err(io)?;
    let mut buf = Vec::new();
    while let Some(request) = Request::read_from(&mut input).map_err(io)? {
        match request {
            Request::ConfigRead { bdf, offset } => {
                // SAFETY: the library is initialized; ttsim checks the arguments itself and
                // ends the process on a bad one.
                let v = unsafe { (f.config_rd32)(bdf, offset) };
                out.write_all(&v.to_le_bytes()).map_err(io)?;
                out.flush().map_err(io)?;
            }
            Request::Read { paddr, len } => {
                buf.resize(len as usize, 0);
                if len > 0 {
                    // SAFETY: `buf` holds `len` writable bytes.
                    unsafe { (f.mem_rd)(paddr, buf.as_mut_ptr().cast(), len) };
                }
                out.write_all(&buf).map_err(io)?;
                out.flush().map_err(io)?;
            }
            Request::Write { paddr, data } => {
                if !data.is_empty() {
                    // SAFETY: `data` holds `data.len()` readable bytes (at most MAX_TRANSFER).
                    unsafe { (f.mem_wr)(paddr, data.as_ptr().cast(), data.len() as u32) };
                }
            }
            Request::Clock { steps } => {
                // SAFETY: the library is initialized.
                unsafe { (f.clock)(steps) };
                out.write_all(&[1]).map_err(io)?;
                out.flush().map_err(io)?;
            }
            Request::Exit => break,
        }
    }
    // SAFETY: initialized above and not exited yet.
    unsafe { (f.exit)() };
    let _ = std::io::stdout().flush();
    // The library stays loaded until the process ends: ttsim keeps DRAM mappings and static
    // state it never releases, and unloading would run its destructors for nothing.
    std::mem::forget(lib);
    Ok(())
}
