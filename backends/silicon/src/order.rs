//! Ordering of the core's own L1 accesses with the NIU's.
//!
//! On the baby cores `fence` orders nothing between a store and a later NIU command (ISA
//! `BabyRISCV/MemoryOrdering.md`, "Enforcing stronger ordering": the store may still sit in the
//! four-entry store queue when the NIU reads L1). What does order them: a load from the *same*
//! address is processed after the store, and an instruction that consumes the load's register
//! cannot start before the load's response is back. [`publish`] is that sequence.

use crate::chip::Chip;

/// A memory fence: on a chip whose cores run with an L0 data cache on ([`Chip::L0_DATA_CACHE`])
/// a `fence`, which drops the cache's lines (tt-isa-documentation
/// `BlackholeA0/TensixTile/BabyRISCV/README.md`; docs/blackhole.md, "Tensix cores"), so a load
/// after it sees what the NoC wrote into L1. Otherwise a compiler fence, as on other targets:
/// a Blackhole core runs with the cache off ([`Chip::configure_core`]), and a Wormhole core has
/// none (and `fence` orders nothing there; ttsim refuses it: "fence instructions do not enforce
/// memory ordering on Wormhole and should not be used"). Its callers need nothing else of it:
/// their loads are to L1, which the core keeps in order, or depend on an earlier load's value
/// (a counter read before the pages it counts), and a store never needed it to go before a
/// later access elsewhere (a `fence` does not drain the store queue for another region either:
/// `BabyRISCV/MemoryOrdering.md`). It does not order a store before an NIU command (the control
/// block's `store` reads its word back for that).
#[inline(always)]
pub fn fence<C: Chip>() {
    #[cfg(target_arch = "riscv32")]
    if C::L0_DATA_CACHE {
        // SAFETY: `fence` has no operands and no effect but ordering.
        unsafe {
            core::arch::asm!("fence", options(nostack, preserves_flags));
        }
        return;
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// Stores `value` at `word` so that a later NIU command reads it from L1: store, [`fence`] (for
/// a chip with the L0 cache on), load the same address back, consume the loaded register
/// (`addi zero, reg, 0`, as the ISA's own example does). Returns the value read back.
///
/// # Safety
/// `word` must be valid for volatile reads and writes of a `u32` and 4-byte aligned.
#[inline(never)]
pub(crate) unsafe fn publish<C: Chip>(word: *mut u32, value: u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { word.write_volatile(value) };
    // With an L0 data cache on, the read-back must not hit a line that still holds the old word.
    fence::<C>();
    // SAFETY: the caller's contract.
    let back = unsafe { word.read_volatile() };
    #[cfg(target_arch = "riscv32")]
    // SAFETY: writes only x0; its one operand makes the core wait for the load's response.
    unsafe {
        core::arch::asm!("addi zero, {0}, 0", in(reg) back, options(nomem, nostack, preserves_flags));
    }
    back
}
