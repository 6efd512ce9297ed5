//! The writer kernel (NCRISC, NoC1): the persistent loop with the broadcast handler.
#![no_std]
#![no_main]

use komorebi_firmware::{TileBuffers, ctrl, noc};
use komorebi_hal::Role;
use komorebi_kernel::persistent;
use komorebi_silicon::Poll;

komorebi_firmware::kernel_main!(Writer, noc(Role::Writer), |noc, h| persistent::writer(
    noc,
    ctrl(),
    Poll,
    TileBuffers,
    h
));
