//! # tt-reg
//!
//! Typed register access in the chiptool style, for the register crates of Tenstorrent chips
//! (`blackhole-pac`, `wormhole-pac`): one definition of a register and a field set, so the two
//! chips' blocks are built the same way. `#![no_std]`, no dependencies.
//!
//! A register is a [`Reg<T, A>`]: a raw pointer to a `T` plus an access marker (`R`, `W`, `RW`).
//! Register blocks are `Copy` structs that wrap a base pointer and compute register addresses by
//! pointer arithmetic, so the same layout can sit over MMIO on the chip or over a plain host
//! buffer in a test.
//!
//! Every access is a single `read_volatile` / `write_volatile` of the whole register. No
//! reference to MMIO is ever created: a `&T` to device memory is `dereferenceable` to the
//! compiler, which may then insert reads of its own (rust-embedded/volatile-register#10). This is
//! why the crate does not use `volatile-register`'s `RW<T>` cells (decisions D1 of komorebi-rs).
//!
//! Safety lives at construction: `from_ptr` is `unsafe` and its caller promises the pointer is
//! valid for volatile access for as long as the value is used. After that, reads and writes are
//! safe, as in chiptool-generated PACs.

#![no_std]

use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// Marker trait of the access kinds. Sealed: only [`R`], [`W`] and [`RW`] implement it.
pub trait Access: sealed::Sealed + Copy {}
/// Access kinds that may be read.
pub trait Read: Access {}
/// Access kinds that may be written.
pub trait Write: Access {}

/// Read-only access.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct R;
/// Write-only access.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct W;
/// Read-write access.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RW;

impl sealed::Sealed for R {}
impl sealed::Sealed for W {}
impl sealed::Sealed for RW {}
impl Access for R {}
impl Access for W {}
impl Access for RW {}
impl Read for R {}
impl Read for RW {}
impl Write for W {}
impl Write for RW {}

/// One memory-mapped register holding a `T` (a `u32` or a 32-bit fieldset), with access `A`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Reg<T: Copy, A: Access> {
    ptr: *mut T,
    access: PhantomData<A>,
}

// SAFETY: a `Reg` is an address; moving it between threads moves no data. Whoever made it with
// `from_ptr` has promised the address stays valid and that threads do not race on it (a
// register's accesses are the hardware's to order), and every access is one volatile operation
// of a `T` that may itself cross threads (`T: Send + Sync`).
unsafe impl<T: Copy + Send + Sync, A: Access> Send for Reg<T, A> {}
// SAFETY: as for `Send`: shared `Reg`s only perform single volatile accesses.
unsafe impl<T: Copy + Send + Sync, A: Access> Sync for Reg<T, A> {}

impl<T: Copy, A: Access> Reg<T, A> {
    /// Makes a register at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be aligned for `T` and valid for volatile reads and writes of `T` for as long as
    /// the returned `Reg` (or any copy of it) is used. If it is ordinary memory (a host buffer
    /// standing in for registers in a test), no two threads may access it at once with one of
    /// them writing: volatile accesses are not atomic, and that would be a data race. A device
    /// register's concurrent accesses are the hardware's to order.
    #[inline(always)]
    pub const unsafe fn from_ptr(ptr: *mut T) -> Self {
        Self {
            ptr,
            access: PhantomData,
        }
    }

    /// The register's address.
    #[inline(always)]
    pub const fn as_ptr(&self) -> *mut T {
        self.ptr
    }
}

impl<T: Copy, A: Read> Reg<T, A> {
    /// Reads the register with one volatile load.
    #[inline(always)]
    pub fn read(&self) -> T {
        // SAFETY: `from_ptr`'s contract makes `ptr` valid and aligned for volatile reads.
        unsafe { self.ptr.read_volatile() }
    }
}

impl<T: Copy, A: Write> Reg<T, A> {
    /// Writes `value` with one volatile store.
    #[inline(always)]
    pub fn write_value(&self, value: T) {
        // SAFETY: `from_ptr`'s contract makes `ptr` valid and aligned for volatile writes.
        unsafe { self.ptr.write_volatile(value) }
    }
}

impl<T: Default + Copy, A: Write> Reg<T, A> {
    /// Builds a value from `T::default()` with `f`, then writes it; returns what `f` returned.
    #[inline(always)]
    pub fn write<Out>(&self, f: impl FnOnce(&mut T) -> Out) -> Out {
        let mut value = T::default();
        let out = f(&mut value);
        self.write_value(value);
        out
    }
}

impl<T: Copy, A: Read + Write> Reg<T, A> {
    /// Reads the register, lets `f` change the value, writes it back; returns what `f` returned.
    #[inline(always)]
    pub fn modify<Out>(&self, f: impl FnOnce(&mut T) -> Out) -> Out {
        let mut value = self.read();
        let out = f(&mut value);
        self.write_value(value);
        out
    }
}

/// Defines a 32-bit fieldset newtype with typed getters and setters.
///
/// Fields are either `flag getter, setter @ bit;` (a `bool`) or
/// `field getter, setter: u8|u16|u32 @ bit_offset, width;`. Setters mask the value to the
/// field's width, so a too-wide value never spills into a neighbouring field. A field that
/// does not lie within the 32-bit word, or is wider than its type, does not compile:
///
/// ```compile_fail,E0080
/// tt_reg::fieldset! {
///     /// A fieldset whose field is wider than its type.
///     pub struct Wide { field f, set_f: u8 @ 0, 12; }
/// }
/// let _ = Wide(0).f();
/// ```
#[macro_export]
macro_rules! fieldset {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($body:tt)* }
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Copy, Clone, Default, PartialEq, Eq, Hash)]
        pub struct $name(pub u32);

        impl $name {
            $crate::fieldset!(@fields $($body)*);
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, concat!(stringify!($name), "({:#010x})"), self.0)
            }
        }
    };
    (@fields) => {};
    (@fields $(#[$fmeta:meta])* flag $get:ident, $set:ident @ $bit:expr; $($rest:tt)*) => {
        $(#[$fmeta])*
        #[inline(always)]
        pub const fn $get(&self) -> bool {
            (self.0 >> $bit) & 1 != 0
        }
        #[doc = concat!("Sets the flag read by [`Self::", stringify!($get), "`].")]
        #[inline(always)]
        pub const fn $set(&mut self, value: bool) {
            self.0 = (self.0 & !(1u32 << $bit)) | ((value as u32) << $bit);
        }
        $crate::fieldset!(@fields $($rest)*);
    };
    (@fields $(#[$fmeta:meta])* field $get:ident, $set:ident : $ty:ident @ $off:expr, $width:expr; $($rest:tt)*) => {
        $(#[$fmeta])*
        #[inline(always)]
        pub const fn $get(&self) -> $ty {
            // The field lies in the word, and its type holds all of it.
            const { assert!($off + $width <= 32 && $width <= <$ty>::BITS) };
            ((self.0 >> $off) & $crate::field_mask($width)) as $ty
        }
        #[doc = concat!("Sets the field read by [`Self::", stringify!($get), "`]; bits beyond its width are dropped.")]
        #[inline(always)]
        pub const fn $set(&mut self, value: $ty) {
            let mask = $crate::field_mask($width);
            self.0 = (self.0 & !(mask << $off)) | (((value as u32) & mask) << $off);
        }
        $crate::fieldset!(@fields $($rest)*);
    };
}

/// The mask of a field `width` bits wide, in its lowest bits.
#[doc(hidden)]
pub const fn field_mask(width: u32) -> u32 {
    if width >= 32 {
        u32::MAX
    } else {
        (1u32 << width) - 1
    }
}

/// Defines a register block: a `Copy` type over a base pointer, `Send` and `Sync` (it is an
/// address; every access is one volatile operation of a [`Reg`]), made only through its
/// `unsafe` `from_ptr`, with `as_ptr` and a private `reg_at::<T, A>(offset)` that the block's own
/// register methods build on. `bytes` names how far the block reaches, for `from_ptr`'s safety
/// contract. The field is private, so no struct literal conjures a block:
///
/// ```compile_fail,E0451
/// mod pac {
///     tt_reg::block! {
///         /// A block.
///         pub struct Block; bytes = "16 bytes";
///     }
/// }
/// let b = pac::Block { ptr: core::ptr::null_mut() };
/// ```
#[macro_export]
macro_rules! block {
    ($(#[$meta:meta])* pub struct $name:ident; bytes = $bytes:literal;) => {
        $(#[$meta])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq)]
        pub struct $name {
            ptr: *mut u8,
        }

        // SAFETY: the block is an address; see `tt_reg::Reg`.
        unsafe impl Send for $name {}
        // SAFETY: as for `Send`: shared blocks only perform single volatile accesses.
        unsafe impl Sync for $name {}

        impl $name {
            #[doc = concat!("The block at `ptr`.\n\n# Safety\n`ptr` must be 4-byte aligned and valid for volatile 32-bit access over ", $bytes, " for as long as the block or any register taken from it is used.")]
            pub const unsafe fn from_ptr(ptr: *mut ()) -> Self {
                Self {
                    ptr: ptr as *mut u8,
                }
            }

            /// The block's base address.
            pub const fn as_ptr(&self) -> *mut () {
                self.ptr as *mut ()
            }

            #[allow(dead_code)]
            const fn reg_at<T: Copy, A: $crate::Access>(self, offset: usize) -> $crate::Reg<T, A> {
                // The block's contract is 32-bit access at 4-byte alignment: a wider or narrower
                // register would need another.
                const { assert!(core::mem::size_of::<T>() == 4 && core::mem::align_of::<T>() <= 4) };
                // SAFETY: `from_ptr`'s contract covers every offset the block's methods compute
                // (each a 4-byte-aligned offset within `bytes`, by the PAC's own definitions),
                // and `T` is a 32-bit value, as the contract's access is.
                unsafe { $crate::Reg::from_ptr(self.ptr.wrapping_add(offset) as *mut T) }
            }
        }
    };
}
