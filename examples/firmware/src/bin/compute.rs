//! The compute kernel (TRISC0): the persistent loop with the broadcast handler.
#![no_std]
#![no_main]

use komorebi_firmware::{TileBuffers, ctrl};
use komorebi_kernel::persistent;
use komorebi_silicon::Poll;

komorebi_firmware::kernel_main!(Compute, (), |(), h| persistent::compute(
    ctrl(),
    Poll,
    TileBuffers,
    h
));
