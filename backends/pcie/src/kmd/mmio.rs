//! The device's memory as the CPU reaches it: `MmioMap`, one owned shared mapping of the node,
//! read and written only with volatile 32-bit loads and stores at checked offsets; and
//! `store_fence`, which orders the stores to such mappings before what follows. Imports none of
//! the module's other files.

use std::ffi::c_void;
use std::os::fd::BorrowedFd;
use std::ptr::NonNull;

use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};

/// One mmap of the device, owned: unmapped on drop. Never exposed as a slice or reference
/// (it is MMIO); every access is a volatile 32-bit load or store at a checked offset.
pub(super) struct MmioMap {
    ptr: NonNull<c_void>,
    len: usize,
}

// SAFETY: the mapping is an address range of the whole process, not of a thread; this struct
// owns it alone and touches it only through volatile loads and stores, which are valid from
// any thread.
unsafe impl Send for MmioMap {}

impl MmioMap {
    /// Maps `len` bytes of `fd` at mmap offset `offset`, shared.
    pub(super) fn map(
        fd: BorrowedFd<'_>,
        offset: u64,
        len: usize,
        prot: ProtFlags,
    ) -> Result<Self, Errno> {
        // SAFETY: a null address hint lets the kernel choose a fresh range, so no existing
        // mapping (and no Rust object) is replaced or aliased; the result is owned by the
        // returned value and unmapped once, in unmap or Drop.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                MapFlags::SHARED,
                fd,
                offset,
            )
        }?;
        NonNull::new(ptr)
            .map(|ptr| Self { ptr, len })
            .ok_or(Errno::FAULT)
    }

    /// Length of the mapping, in bytes.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The word at `offset`, if `offset` is 4-byte aligned and the word inside the mapping.
    pub(super) fn read32(&self, offset: usize) -> Option<u32> {
        if !offset.is_multiple_of(4) || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: `offset + 4 <= len` and the mapping is page aligned, so the pointer is inside
        // the live mapping (unmapped only when self goes) and 4-byte aligned; volatile, because
        // it is device memory that no Rust reference covers.
        Some(unsafe {
            self.ptr
                .as_ptr()
                .cast::<u8>()
                .add(offset)
                .cast::<u32>()
                .read_volatile()
        })
    }

    /// Stores `value` at `offset` under the same conditions as [`read32`](Self::read32).
    pub(super) fn write32(&self, offset: usize, value: u32) -> Option<()> {
        if !offset.is_multiple_of(4) || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: as in read32; the mapping was made writable by whoever stores through it
        // (windows map PROT_READ | PROT_WRITE).
        unsafe {
            self.ptr
                .as_ptr()
                .cast::<u8>()
                .add(offset)
                .cast::<u32>()
                .write_volatile(value)
        };
        Some(())
    }

    /// Unmaps now, reporting the error.
    pub(super) fn unmap(self) -> Result<(), Errno> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: the range is the one mmap returned, owned by this value, which is not used
        // again (ManuallyDrop: Drop does not run a second munmap).
        unsafe { rustix::mm::munmap(this.ptr.as_ptr(), this.len) }
    }
}

impl Drop for MmioMap {
    fn drop(&mut self) {
        // SAFETY: the range is the one mmap returned, owned by this value and unmapped only
        // here; nothing can reach it after.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr(), self.len) };
    }
}

/// Orders every earlier store, including write-combined ones still in the CPU's buffers, before
/// every later access: an `sfence` on x86-64; on AArch64 a `dsb st`, what Linux's `wmb()` is
/// there (`arch/arm64/include/asm/barrier.h`): a window is Device or Normal non-cacheable
/// memory, which the inner-shareable `dmb ish` of a Rust fence does not order as the card
/// sees it. Then a sequentially consistent fence, for the compiler and every other access.
pub fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` belongs to SSE, which every x86-64 CPU has (it is in the target's
    // baseline); it has no operands and no other precondition.
    unsafe {
        core::arch::x86_64::_mm_sfence()
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `dsb st` waits for earlier stores to complete; it touches no register or memory
    // and has no precondition.
    unsafe {
        core::arch::asm!("dsb st", options(nostack, preserves_flags))
    };
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}
