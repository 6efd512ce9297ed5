//! # komorebi-mock
//!
//! [mockall] mocks of every `komorebi-hal` trait, for tests that check *interactions*: which
//! HAL calls a protocol makes, in which order, with which arguments. (State contracts, such as
//! "every receiver got these bytes", belong to the simulator.)
//!
//! The mocks are written with `mock!` rather than `#[automock]`: the traits have an `ErrorType`
//! supertrait, which `#[automock]` cannot express (E0223, ambiguous associated type). They live
//! in this std crate so that no `no_std` crate ever depends on mockall, and so other crates'
//! tests and the workspace's `tests/` can use them (mocks behind `cfg(test)` are invisible
//! outside their crate).
//!
//! Each mock's error type is the trait module's own `ErrorKind`, so a test makes a call fail
//! with e.g. `Err(noc::ErrorKind::Busy)`.
//!
//! **Provided methods that are not mocked** run the HAL's default, so a test expects the calls
//! they make:
//!
//! | method | becomes |
//! |---|---|
//! | `NocMulticast::read_pages` | one `read_tagged` a page, in order, from `from`; it stops at the first `Busy` (returning that page's number), at a page without an address (likewise), or at any other error (returning it) |
//! | `CircularBuffer::push_padding` | `push` (a test cannot tell padding from data here) |
//! | `CircularBuffer::scan_page` | `page_size` first, then `read_page` calls of up to 256 bytes each, at least one (of 0 bytes for an empty page) |
//! | `ControlBlock::load_words` | one `load` a word, in order |
//! | `ControlBlock::is_empty` | `len` |
//!
//! They are left out because their arguments (a `PageReads` borrowing its ports, a `dyn FnMut`)
//! do not make usable mockall matchers, and because the protocol's interaction tests state
//! the calls the hardware sees (each page's read, each word's load). `pages_ready` and
//! `pages_free`, also provided, are mocked: the protocol's waits are written against them.
//!
//! ```
//! use komorebi_hal::{ControlBlock, Pause, block_on, wait_until, control, wait::WaitError};
//! use komorebi_mock::{MockControlBlock, MockPause};
//! use mockall::{Sequence, predicate::eq};
//!
//! // A wait whose condition never holds, with a wait limit of 10 cycles: it polls, reads the
//! // clock and the limit (only now: a condition that holds at once reads no clock), checks the
//! // stop flag, sees the clock at the deadline and gives up, without pausing.
//! let mut ctrl = MockControlBlock::new();
//! let mut seq = Sequence::new();
//! ctrl.expect_load().with(eq(0xA00)).times(1).in_sequence(&mut seq).returning(|_| Ok(0));
//! ctrl.expect_now().times(1).in_sequence(&mut seq).return_const(100u64);
//! ctrl.expect_wait_limit().times(1).in_sequence(&mut seq).returning(|| Ok(10));
//! ctrl.expect_stop_requested().times(1).in_sequence(&mut seq).returning(|| Ok(false));
//! ctrl.expect_now().times(1).in_sequence(&mut seq).return_const(110u64);
//! let mut pause = MockPause::new();
//! pause.expect_pause().never();
//!
//! let out = block_on(wait_until(&mut ctrl, &mut pause, |c: &mut MockControlBlock| {
//!     Ok::<_, control::ErrorKind>(c.load(0xA00)? != 0)
//! }));
//! assert_eq!(out, Err(WaitError::TimedOut { waited: 10 }));
//! ```
//!
//! `MockPause::pause` is an `async fn`; its expectation returns the value directly
//! (`.returning(|_| ())`), as for any mockall `async fn`.
//!
//! [mockall]: https://docs.rs/mockall
#![allow(missing_docs)] // the `mock!` expansions carry no docs of their own

use komorebi_hal::{L1Addr, NocAddr, NocId, Rect, Xy, cb, control, noc};
use mockall::mock;

mock! {
    /// A mock `NocMulticast` whose errors are `noc::ErrorKind`.
    pub NocMulticast {}

    impl noc::ErrorType for NocMulticast {
        type Error = noc::ErrorKind;
    }

    impl noc::NocMulticast for NocMulticast {
        fn noc(&self) -> NocId;
        fn node(&self) -> Xy;
        fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), noc::ErrorKind>;
        fn write(
            &mut self,
            src: L1Addr,
            dst: NocAddr,
            len: u32,
            mode: noc::WriteMode,
        ) -> Result<(), noc::ErrorKind>;
        fn multicast(
            &mut self,
            src: L1Addr,
            rect: Rect,
            dst: L1Addr,
            len: u32,
            mode: noc::WriteMode,
        ) -> Result<(), noc::ErrorKind>;
        fn reads_done(&mut self) -> Result<bool, noc::ErrorKind>;
        fn read_tagged(
            &mut self,
            src: NocAddr,
            dst: L1Addr,
            len: u32,
            tag: noc::ReadTag,
        ) -> Result<(), noc::ErrorKind>;
        fn tagged_reads_done(&mut self, tag: noc::ReadTag) -> Result<bool, noc::ErrorKind>;
        fn writes_sent(&mut self) -> Result<bool, noc::ErrorKind>;
        fn writes_acked(&mut self) -> Result<bool, noc::ErrorKind>;
        fn resync(&mut self) -> Result<(), noc::ErrorKind>;
    }
}

mock! {
    /// A mock `CircularBuffer` whose errors are `cb::ErrorKind`. `pages_ready` and
    /// `pages_free` are mocked too (rather than derived from `pushed`/`popped`), so a test
    /// states exactly what the protocol observes.
    pub CircularBuffer {}

    impl cb::ErrorType for CircularBuffer {
        type Error = cb::ErrorKind;
    }

    impl cb::CircularBuffer for CircularBuffer {
        fn capacity(&self) -> u16;
        fn page_size(&self) -> u32;
        fn base(&self) -> L1Addr;
        fn pushed(&mut self) -> Result<u16, cb::ErrorKind>;
        fn popped(&mut self) -> Result<u16, cb::ErrorKind>;
        fn pages_ready(&mut self) -> Result<u16, cb::ErrorKind>;
        fn pages_free(&mut self) -> Result<u16, cb::ErrorKind>;
        fn write_ptr(&self) -> L1Addr;
        fn push(&mut self, pages: u16) -> Result<(), cb::ErrorKind>;
        fn read_ptr(&self) -> L1Addr;
        fn pop(&mut self, pages: u16) -> Result<(), cb::ErrorKind>;
        fn read_page(&mut self, page: u16, offset: u32, buf: &mut [u8]) -> Result<(), cb::ErrorKind>;
    }
}

mock! {
    /// A mock `ControlBlock` whose errors are `control::ErrorKind`.
    pub ControlBlock {}

    impl control::ErrorType for ControlBlock {
        type Error = control::ErrorKind;
    }

    impl control::ControlBlock for ControlBlock {
        fn len(&self) -> u32;
        fn addr(&self, offset: u32) -> Result<L1Addr, control::ErrorKind>;
        fn load(&mut self, offset: u32) -> Result<u32, control::ErrorKind>;
        fn store(&mut self, offset: u32, value: u32) -> Result<(), control::ErrorKind>;
        fn stop_requested(&mut self) -> Result<bool, control::ErrorKind>;
        fn request_stop(&mut self) -> Result<(), control::ErrorKind>;
        fn wait_limit(&mut self) -> Result<u64, control::ErrorKind>;
        fn now(&mut self) -> u64;
    }
}

#[cfg(not(komorebi_blocking))]
mock! {
    /// A mock `Pause`.
    pub Pause {}

    impl komorebi_hal::Pause for Pause {
        async fn pause(&mut self, deadline: u64);
    }
}

#[cfg(komorebi_blocking)]
mock! {
    /// A mock `Pause` (blocking build).
    pub Pause {}

    impl komorebi_hal::Pause for Pause {
        fn pause(&mut self, deadline: u64);
    }
}
