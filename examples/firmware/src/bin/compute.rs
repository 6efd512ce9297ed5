//! The compute kernel (TRISC0): the persistent loop with the broadcast handler.
#![no_std]
#![no_main]

use komorebi_firmware::{TileBuffers, ctrl};
use komorebi_hal::Spin;
use komorebi_kernel::persistent;

komorebi_firmware::kernel_main!(Compute, |h| persistent::compute(ctrl(), Spin, TileBuffers, h));
