//! The backend's one error type: a HAL kind with a fixed description (no formatting on the
//! device).

/// A refused operation: its generic kind, with a fixed description.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Error<K> {
    /// The HAL kind.
    pub kind: K,
    /// What was wrong.
    pub what: &'static str,
}

impl<K: core::fmt::Debug> core::fmt::Display for Error<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.what)
    }
}

impl komorebi_hal::noc::Error for Error<komorebi_hal::noc::ErrorKind> {
    fn kind(&self) -> komorebi_hal::noc::ErrorKind {
        self.kind
    }
}

impl komorebi_hal::cb::Error for Error<komorebi_hal::cb::ErrorKind> {
    fn kind(&self) -> komorebi_hal::cb::ErrorKind {
        self.kind
    }
}

impl komorebi_hal::control::Error for Error<komorebi_hal::control::ErrorKind> {
    fn kind(&self) -> komorebi_hal::control::ErrorKind {
        self.kind
    }
}
