//! What goes through one window's aperture, whatever the card: bytes at any alignment over the
//! BAR's whole 4-byte words, and a window reprogrammed on demand (only after what was written
//! through it has landed). `Card` builds on these; they know nothing of tiles or chips.

use std::cell::RefCell;

use blackhole_pac::tlb::{TlbConfig, TlbSize};

use crate::bar::Bar;
use crate::error::PcieError;

/// A window that is reprogrammed on demand.
#[derive(Debug)]
pub(crate) struct Moving<W> {
    /// The window.
    pub(crate) window: W,
    /// What it is programmed as, if anything yet.
    pub(crate) config: Option<TlbConfig>,
    /// Offset of the last word written since it was last programmed.
    pub(crate) written: Option<u64>,
}

/// The start of the window of `size` holding `addr`, and `addr`'s offset in it.
pub(crate) fn base(addr: u64, size: TlbSize) -> (u64, u64) {
    let base = addr & !(size.bytes() - 1);
    (base, addr - base)
}

/// The 4-byte aligned words covering `addr..addr+len`: their start, the offset of `addr` in
/// the first, and their total length.
fn aligned(addr: u64, len: usize) -> (u64, usize, usize) {
    let start = addr & !3;
    let head = (addr - start) as usize;
    let total = (head + len).div_ceil(4) * 4;
    (start, head, total)
}

/// Runs `f` on the window in `slot` programmed as `config`, reprogramming it only when it
/// holds another configuration, and only after draining what was written through it.
pub(crate) fn on_moving<B: Bar, R>(
    bar: &RefCell<B>,
    slot: &RefCell<Option<Moving<B::Window>>>,
    config: TlbConfig,
    f: impl FnOnce(&mut B, &B::Window) -> Result<(R, Option<u64>), PcieError>,
) -> Result<R, PcieError> {
    let mut bar = bar.borrow_mut();
    let mut slot = slot.borrow_mut();
    let moving = slot.as_mut().ok_or(PcieError::WindowsExhausted {
        size: "2 MiB",
        available: 0,
    })?;
    if moving.config != Some(config) {
        bar.fence();
        if let Some(at) = moving.written {
            // The read returns only once the earlier writes through the window landed (the
            // record stays until it did: a failed read leaves the window to be drained again).
            bar.read32(&moving.window, at)?;
            moving.written = None;
        }
        bar.configure(&mut moving.window, &config)?;
        moving.config = Some(config);
    }
    let (r, written) = f(&mut bar, &moving.window)?;
    if written.is_some() {
        moving.written = written;
    }
    Ok(r)
}

/// Reads `buf.len()` bytes at `offset` of a window, whatever their alignment.
pub(crate) fn read_any<B: Bar>(
    bar: &B,
    w: &B::Window,
    offset: u64,
    buf: &mut [u8],
) -> Result<(), PcieError> {
    if buf.is_empty() {
        return Ok(());
    }
    let (start, head, total) = aligned(offset, buf.len());
    if head == 0 && total == buf.len() {
        return bar.read(w, offset, buf);
    }
    let mut tmp = vec![0; total];
    bar.read(w, start, &mut tmp)?;
    buf.copy_from_slice(&tmp[head..head + buf.len()]);
    Ok(())
}

/// Writes `data` at `offset` of a window, whatever its alignment: partial words at either
/// end are read, merged and written whole (the PCIe path moves 32-bit words only).
/// Returns the offset of the last word written.
pub(crate) fn write_any<B: Bar>(
    bar: &mut B,
    w: &B::Window,
    offset: u64,
    data: &[u8],
) -> Result<Option<u64>, PcieError> {
    if data.is_empty() {
        return Ok(None);
    }
    let (start, head, total) = aligned(offset, data.len());
    if head == 0 && total == data.len() {
        bar.write(w, offset, data)?;
    } else {
        let mut tmp = vec![0; total];
        bar.read(w, start, &mut tmp[..4])?;
        bar.read(w, start + total as u64 - 4, &mut tmp[total - 4..])?;
        tmp[head..head + data.len()].copy_from_slice(data);
        bar.write(w, start, &tmp)?;
    }
    Ok(Some(start + total as u64 - 4))
}
