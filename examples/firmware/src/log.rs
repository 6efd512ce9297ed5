//! defmt's global logger for the firmware: frames go into a 2 KiB byte ring in L1 per kernel
//! (0x5000 + 0x800 * role), which the host can read over the NoC. Only built with the `defmt`
//! feature.

use core::sync::atomic::{Ordering, compiler_fence};

const RING: usize = 0x800;
static mut AT: usize = 0;

fn ring() -> *mut u8 {
    let role = crate::role::get().index();
    (0x5000 + RING * role) as *mut u8
}

#[defmt::global_logger]
struct Logger;

// SAFETY: one hart, no interrupts: acquire/release cannot interleave.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        compiler_fence(Ordering::SeqCst);
    }
    unsafe fn flush() {}
    unsafe fn release() {
        compiler_fence(Ordering::SeqCst);
    }
    unsafe fn write(bytes: &[u8]) {
        for &b in bytes {
            // SAFETY: the ring is reserved L1; AT is this hart's own.
            unsafe {
                ring().add(AT).write_volatile(b);
                AT = (AT + 1) % RING;
            }
        }
    }
}

defmt::timestamp!("{=u64}", komorebi_silicon::cycles());
