//! `size_u32`, the helper the structs' `Default`s fill their size fields with. Imports none of the
//! crate's other files.

use core::mem::size_of;

/// `u32` size of `T`, for the size fields (every struct here is far below 4 GiB).
pub(crate) const fn size_u32<T>() -> u32 {
    size_of::<T>() as u32
}
