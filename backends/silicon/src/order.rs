//! Ordering of the core's own L1 accesses with the NIU's.

/// A memory fence: orders this core's L1 accesses with the NIU's (and flushes the L0 data
/// cache line state on the baby cores); a compiler fence on other targets.
#[inline(always)]
pub(crate) fn fence() {
    #[cfg(target_arch = "riscv32")]
    // SAFETY: `fence` has no operands and no effect but ordering.
    unsafe {
        core::arch::asm!("fence", options(nostack, preserves_flags));
    }
    #[cfg(not(target_arch = "riscv32"))]
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}
