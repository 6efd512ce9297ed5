//! defmt's global logger for the firmware: each kernel's frames go into its log ring in L1
//! (`komorebi_kernel::abi::log_ring`), which the host reads over the NoC and decodes against this
//! image's defmt table (`komorebi broadcast --log`). Only built with the `defmt` feature.
//!
//! The ring: a header (`LOG_MAGIC`, frames kept, their bytes, frames lost) and `LOG_DATA_BYTES`
//! of frames in defmt's raw encoding, one after the other from the start. It keeps the first
//! frames: the first frame that does not fit is dropped whole and counted lost, and so is every
//! frame after it, even one short enough for the room left, so the frames kept are the first
//! ones with no hole among them (raw frames carry no marker to find the next one by, so a ring
//! written round could not be read past its wrap; and the first give-up is the one that
//! matters, as the protocol's own records keep).

use core::sync::atomic::{Ordering, compiler_fence};

use komorebi_kernel::abi::{
    LOG_BYTES, LOG_DATA, LOG_DATA_BYTES, LOG_FRAMES, LOG_LOST, LOG_MAGIC, log_ring,
};

/// The ring's state since boot (this hart's own: one kernel a core): bytes of whole frames kept,
/// frames kept, frames dropped; and the frame under way: where it started, whether it is dropped
/// (once set, `DROPPED` stays set: every later frame is dropped too).
static mut BYTES: u32 = 0;
static mut FRAMES: u32 = 0;
static mut LOST: u32 = 0;
static mut START: u32 = 0;
static mut DROPPED: bool = false;
/// This kernel's ring (`abi::log_ring` of its role), set by `reset`.
static mut RING: u32 = 0;

fn word(offset: u32) -> *mut u32 {
    // SAFETY: `RING` is written once, by `reset`, before any frame.
    (unsafe { RING } + offset) as usize as *mut u32
}

/// Empties this kernel's ring: called once at boot, before the first frame (`kernel_main` calls
/// it first thing; a frame before it would write at address 0).
pub fn reset() {
    // SAFETY: the ring is this kernel's reserved L1 (abi::log_ring); one hart, no interrupts.
    unsafe {
        RING = log_ring(crate::role::get());
        word(LOG_FRAMES).write_volatile(0);
        word(LOG_BYTES).write_volatile(0);
        word(LOG_LOST).write_volatile(0);
        word(0).write_volatile(LOG_MAGIC);
    }
}

#[defmt::global_logger]
struct Logger;

// SAFETY: one hart, no interrupts: acquire/release cannot interleave.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        // SAFETY: as in `reset`.
        unsafe {
            START = BYTES;
        }
        compiler_fence(Ordering::SeqCst);
    }
    unsafe fn flush() {}
    unsafe fn release() {
        // SAFETY: as in `reset`. A frame that did not fit is taken back whole and counted; the
        // counts are stored after the frame's bytes, so a reader that sees a frame counted sees
        // its bytes.
        unsafe {
            if DROPPED {
                BYTES = START;
                LOST += 1;
            } else {
                FRAMES += 1;
            }
            // The frame's bytes before the counts that cover them: stores to L1 leave in order
            // (the chip's fence adds nothing with no L0 data cache on, as on both chips).
            komorebi_silicon::fence::<crate::chip::Chip>();
            word(LOG_BYTES).write_volatile(BYTES);
            word(LOG_FRAMES).write_volatile(FRAMES);
            word(LOG_LOST).write_volatile(LOST);
        }
        compiler_fence(Ordering::SeqCst);
    }
    unsafe fn write(bytes: &[u8]) {
        let data = word(LOG_DATA) as *mut u8;
        // SAFETY: as in `reset`; every byte written lies inside the ring's data.
        unsafe {
            if DROPPED || bytes.len() as u32 > LOG_DATA_BYTES - BYTES {
                DROPPED = true;
                return;
            }
            for &b in bytes {
                data.add(BYTES as usize).write_volatile(b);
                BYTES += 1;
            }
        }
    }
}

defmt::timestamp!("{=u64}", komorebi_silicon::cycles());
