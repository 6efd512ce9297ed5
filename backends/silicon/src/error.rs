//! The backend's one error type: a HAL kind and why, as a one-byte code whose words only the
//! host side formats (no strings are moved around on the device).

macro_rules! why {
    ($( $(#[$m:meta])* $name:ident => $text:literal, )*) => {
        /// Why an operation was refused: one code per check of this backend.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Why {
            $( $(#[$m])* #[doc = $text] $name, )*
        }

        impl Why {
            /// What was wrong, in words.
            pub const fn describe(self) -> &'static str {
                match self {
                    $( Self::$name => $text, )*
                }
            }
        }
    };
}

why! {
    NoTranslation => "target has no translated coordinates (Tensix, DRAM and ARC have)",
    NotL1OrDram => "target is neither a Tensix L1 nor a DRAM port",
    HarvestedTarget => "target is a harvested Tensix",
    ZeroLength => "transfer of 0 bytes",
    L1Misaligned => "L1 address not 16-byte aligned",
    BeyondL1 => "beyond L1",
    Splitting => "a transfer over 16 KiB is still being issued",
    CmdBufBusy => "command buffer busy",
    OutgoingFull => "255 writes are waiting for their source bytes (8-bit counter)",
    NotTranslatedRect => "the rectangle's enabled columns are not one rectangle in translated coordinates",
    ReadSourceMisaligned => "read source not aligned, or a DRAM read's destination not aligned as DRAM (DRAM 64 bytes, L1 16)",
    ReadSource => "read source address does not encode",
    WriteDestinationMisaligned => "write destination not 16-byte aligned",
    WriteDestination => "write destination address does not encode",
    MulticastRect => "multicast rectangle does not encode",
    PushOverflow => "push of more pages than are free",
    PopUnderflow => "pop of more pages than are ready",
    Wrap => "push or pop would cross the end of the buffer",
    PageNotReady => "read of a page that is not ready",
    BeyondPage => "read beyond the page",
    PageMisaligned => "page not word aligned where this core loads it (a scan lends it in place)",
    ControlMisaligned => "control offset not a multiple of 4",
    ControlBeyond => "control offset beyond the block",
    ControlBase => "control block base not word aligned",
    UnicastMode => "a unicast write is neither linked nor loopback (multicasts only)",
    RunElsewhere => "a linked run is open to another rectangle: close it with an unlinked multicast there first",
    ReadTag => "read tag outside 0..=14",
    ReadInRun => "a linked run holds the NIU on the multicast VC: close it with an unlinked multicast before reading",
    WriteInRun => "a linked run holds the NIU on the multicast VC: close it with an unlinked multicast before a unicast write",
    EmptyInRun => "a multicast with no receivers sends no packet, so it cannot continue or close the open linked run: close it with a multicast that reaches a receiver",
}

impl core::fmt::Display for Why {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.describe())
    }
}

/// A refused operation: its generic kind, and why.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Error<K> {
    /// The HAL kind.
    pub kind: K,
    /// What was wrong.
    pub why: Why,
}

impl<K> Error<K> {
    /// An error of `kind` for reason `why`.
    pub const fn new(kind: K, why: Why) -> Self {
        Self { kind, why }
    }
}

impl<K: core::fmt::Debug> core::fmt::Display for Error<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.why)
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
