//! The error skeleton shared by the three trait modules (the embedded-hal 1.0 pattern).
//!
//! Each trait module ([`crate::noc`], [`crate::cb`], [`crate::control`]) has its own `Error`
//! trait with `kind()`, its own `#[non_exhaustive] ErrorKind` and its own `ErrorType`, so one
//! backend type can implement all three traits with three different error types. Generic code
//! matches on `kind()` only; a backend's error may carry as much detail as it likes.

/// Generates, in a trait module, the parts of the pattern that do not differ between modules:
/// `Error` for `ErrorKind` and `Infallible`, `ErrorType`, and the blanket `&mut T` impl.
macro_rules! error_skeleton {
    ($what:literal) => {
        #[doc = concat!("An error of a ", $what, " operation. Generic code only looks at [`Error::kind`].")]
        pub trait Error: core::fmt::Debug {
            /// The generic kind of this error.
            fn kind(&self) -> ErrorKind;
        }

        impl Error for ErrorKind {
            #[inline]
            fn kind(&self) -> ErrorKind {
                *self
            }
        }

        impl Error for core::convert::Infallible {
            #[inline]
            fn kind(&self) -> ErrorKind {
                match *self {}
            }
        }

        impl core::error::Error for ErrorKind {}

        #[doc = concat!("The error type of a ", $what, " implementation.")]
        pub trait ErrorType {
            /// The error type every method of the trait returns.
            type Error: Error;
        }

        impl<T: ErrorType + ?Sized> ErrorType for &mut T {
            type Error = T::Error;
        }
    };
}
pub(crate) use error_skeleton;
