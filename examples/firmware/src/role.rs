//! Which kernel this image runs, set once at start-up (by `kernel_main`) before anything can
//! panic or log; read by the panic handler and the defmt logger.

use komorebi_hal::Role;

static mut ROLE: Role = Role::Reader;

/// Records the kernel's role.
pub fn set(role: Role) {
    // SAFETY: one hart, no interrupts; written once before anything reads it.
    unsafe { ROLE = role };
}

/// The kernel's role.
pub fn get() -> Role {
    // SAFETY: one hart, no interrupts; only `set` writes it, at start-up.
    unsafe { ROLE }
}
