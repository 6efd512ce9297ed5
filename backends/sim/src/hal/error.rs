//! The HAL handles' error types: each carries the HAL's generic kind and a sentence saying
//! what was wrong and what is allowed.
//!
//! Leaf module: imports nothing of the crate.

use komorebi_hal::{cb, control, noc};

macro_rules! sim_error {
    ($(#[$m:meta])* $name:ident, $module:ident) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
        #[error("{what}")]
        pub struct $name {
            /// The generic kind.
            pub kind: $module::ErrorKind,
            /// What was wrong and what is allowed.
            pub what: String,
        }

        impl $module::Error for $name {
            fn kind(&self) -> $module::ErrorKind {
                self.kind
            }
        }

        impl $name {
            pub(crate) fn new(kind: $module::ErrorKind, what: impl Into<String>) -> Self {
                Self { kind, what: what.into() }
            }
        }
    };
}

sim_error!(
    /// A refused NoC request.
    NocError,
    noc
);
sim_error!(
    /// A refused circular-buffer call.
    CbError,
    cb
);
sim_error!(
    /// A refused control-block call.
    CtrlError,
    control
);
