//! The writer kernel: the persistent loop with the broadcast handler.
#![no_std]
#![no_main]

use komorebi_firmware::{TileBuffers, ctrl, noc, set_role};
use komorebi_hal::{Spin, block_on};
use komorebi_kernel::abi::Role;
use komorebi_kernel::{BroadcastHandler, kernel};

/// Entered from `_start` with a stack and initialised data.
#[unsafe(no_mangle)]
extern "C" fn kernel_main() -> ! {
    set_role(Role::Writer);
    #[cfg(feature = "defmt")]
    defmt::info!("writer kernel up");
    let mut handlers = (BroadcastHandler,);
    let exit = block_on(kernel::writer(
        noc(Role::Writer),
        ctrl(),
        Spin,
        TileBuffers,
        &mut handlers,
    ));
    // An exit command (or a control block that failed): park.
    let _ = exit;
    loop {}
}
