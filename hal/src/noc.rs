//! [`NocMulticast`]: one NoC as seen from one data-movement core.
//!
//! Every method either starts a transfer or observes progress; none waits. Waiting is done above
//! the HAL with [`crate::wait::wait_until`].
//!
//! # The contract a backend keeps
//!
//! * **Issue.** `read`, `write` and `multicast` return once the request is handed to the NoC.
//!   They may return [`ErrorKind::Busy`] when the backend cannot take a request right now
//!   (nothing was issued; call again later).
//! * **Any length.** They take any length the NoC's alignment allows (else
//!   [`ErrorKind::Misaligned`]) up to the local memory's size, whatever the NoC's largest
//!   packet: splitting a transfer into packets is
//!   the backend's job (the broadcast multicasts a whole slot, up to 65,535 pages, in one
//!   call). [`ErrorKind::InvalidLength`] is for a length no transfer can have (0); a transfer
//!   that runs past the end of its source's or destination's memory, however long, is
//!   [`ErrorKind::InvalidAddress`] (the silicon backend and the simulator refuse it so). A
//!   backend may hand the packets after the first to the NoC later, from its observers: until
//!   the last has gone, `reads_done`, `writes_sent` and `writes_acked` say false, and each call
//!   of them may issue more of it (the Blackhole backend does).
//! * **Reads.** [`NocMulticast::reads_done`] is true when every read this core issued on this NoC
//!   has landed in local L1 and is visible to the core's own loads.
//! * **Writes sent.** [`NocMulticast::writes_sent`] is true when every write and multicast this
//!   core issued on this NoC has been read out of its source: the source bytes may change.
//!   Changing them earlier delivers the changed bytes (on Blackhole the core can overwrite L1
//!   before the NIU has read it).
//! * **Writes acked.** [`NocMulticast::writes_acked`] is true when every [`Ack::Acked`] write this
//!   core issued on this NoC has been acknowledged by every destination: a multicast counts one
//!   acknowledgement per receiving node. Acked data is in the destination's memory.
//! * **Ordering.** Two writes this core issued with [`Order::Ordered`] on the same NoC to the same
//!   destination (the same node, or the same rectangle) arrive in the order they were issued,
//!   byte for byte. Nothing else is ordered: not writes on different NoCs, not a unicast with a
//!   multicast, not [`Order::Relaxed`] writes, not reads with writes, not acknowledgements.
//! * **Multicast.** A multicast to a [`Rect`] writes the same bytes to the same local address on
//!   every compute node (on Blackhole: Tensix) of the rectangle, in this NoC's raw coordinates,
//!   **except the sender**, even when the sender lies inside it, unless the mode asks for
//!   [`Loopback::Included`]: then a sender inside the rectangle receives too and acknowledges
//!   like any other receiver. Nodes of other kinds inside the rectangle receive nothing. A
//!   wrapping rectangle ([`Rect::wrapping`]) covers what it says. A multicast with no receiving
//!   node completes at once (sent and acked), and is refused ([`ErrorKind::InvalidMode`]) while
//!   a linked run is open: it sends no packet, so it can neither continue nor close the run.
//! * **Linked runs.** A multicast with [`Link::Linked`] keeps its path through the NoC reserved
//!   for this core's next multicast on this NoC, which must go to the same rectangle; the run
//!   ends with a [`Link::Unlinked`] multicast to that rectangle, which releases the path. Only the
//!   first multicast of a run pays for reserving the path, so a run of small multicasts costs
//!   about the issue time of each (tt-metal's `linked` flag). While a run is open, other
//!   multicasts that need its links wait, so close every run promptly.
//! * **A run holds the NIU.** While a run is open, its NIU can issue nothing but the run's next
//!   multicast. The ISA (tenstorrent/tt-isa-documentation, `BlackholeA0/NoC/MemoryMap.md`,
//!   `NOC_CTRL` bit 6 `NOC_CMD_VC_LINKED`): "the NIU will be unable to initiate requests on any
//!   virtual channel number other than the one used for the transaction. Attempting to initiate
//!   a request with an incompatible virtual channel number will cause virtual channel number
//!   assignment to continuously fail, leaving the NIU unable to initiate any requests." Reads
//!   and unicast writes travel on another virtual channel than multicasts (on Blackhole VC 1,
//!   class 0b00, against VC 4, class 0b10), so one issued during a run would hang the NIU for
//!   good, the run's closing multicast included. So while a run is open on a handle, a backend
//!   refuses with [`ErrorKind::InvalidMode`], issuing nothing, every `read`, `read_tagged`,
//!   `read_pages` and `write`, and a multicast to another rectangle; only a multicast to the run's rectangle
//!   (linked, to go on, or unlinked, to close it) is taken. A caller closes the run (an
//!   unlinked multicast to its rectangle) before it reads or writes unicast; the observers and
//!   `resync` start no new request and may be called during a run (an observer may only send
//!   on the remaining packets of a transfer already issued, see "Any length"). A backend also refuses, with
//!   [`ErrorKind::InvalidMode`], a linked or loopback unicast write at any time. The rule is
//!   kept per handle: a backend cannot see another handle on the same NIU (on Blackhole each
//!   kernel owns its NIU, so there is none).
//! * **Tagged reads.** [`NocMulticast::read_tagged`] starts a read like `read` and tags it with
//!   a [`ReadTag`]; [`NocMulticast::tagged_reads_done`] is true when every read issued with that
//!   tag has landed, whatever the other reads do, so a core can keep reads of later blocks in
//!   flight while it uses the earlier ones (tt-metal's transaction ids). `reads_done` still
//!   counts every read, tagged or not. A backend without tags may wait for every read instead
//!   (the provided methods do): stronger, never wrong.
//! * **Counters.** The observers are booleans. Hardware counters wrap (32-bit on Blackhole);
//!   a backend compares them with wrapping arithmetic, which is exact while fewer than 2^31
//!   transfers are outstanding. A tag's counter may be narrower: Blackhole counts each
//!   transaction id's outstanding reads in 8 bits, so `tagged_reads_done` there is exact only
//!   while at most [`ReadTag::MAX_IN_FLIGHT`] (255) reads of one tag are in flight; its backend
//!   does not hold a read back at that count, so a caller that could issue more with one tag
//!   (a block of 256 pages or more read under one tag: a core issues them faster than DRAM
//!   answers) must wait on `reads_done` instead.
//! * **Resync.** `resync` forgets every transfer issued so far: afterwards `reads_done` and
//!   `writes_acked` count only transfers issued after it. A runtime calls it where nothing it
//!   cares about can still be in flight (the start of a command), so an acknowledgement lost on
//!   the NoC in an earlier command does not keep `writes_acked` false for ever. A transfer of
//!   before that completes late never makes a later one look unfinished to those two, but can
//!   make it look finished early, so do not resync with transfers of interest in flight.
//!   `writes_sent` and `tagged_reads_done` may still wait for transfers issued before it: the
//!   silicon backend reads them from the NIU's counts of requests outstanding, which software
//!   cannot reset (the simulator does the same for `tagged_reads_done`), so a read of a tag
//!   lost on the NoC keeps that tag unfinished after a resync.
//! * **Stronger is allowed.** A backend may deliver a stronger mode than asked (an acked write
//!   where posted was asked; Blackhole must, since posted multicast is broken there), never a
//!   weaker one.
//!
//! `hal/README.md` says how Blackhole realizes each method.

use crate::types::{L1Addr, NocAddr, NocId, Rect, Xy};

/// Generic kinds of NoC errors.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ErrorKind {
    /// The backend cannot take a request now; nothing was issued. Try again.
    Busy,
    /// A coordinate or local address this NoC has no node or memory for, or a transfer that
    /// runs past the end of its source's or destination's memory.
    InvalidAddress,
    /// An address or length that is not a multiple of what the NoC needs.
    Misaligned,
    /// A zero length. (A length longer than the NoC's largest packet is not an error: the
    /// backend splits the transfer, see "Any length" in the module docs; one that runs past the
    /// end of a memory is [`InvalidAddress`](Self::InvalidAddress).)
    InvalidLength,
    /// A request the hardware would carry out wrongly (e.g. an inline write to L1 on Blackhole).
    HardwareHazard,
    /// A fault injected or detected by the backend (a simulator's dropped transaction, a bus
    /// error).
    Fault,
    /// A mode or a request this call does not take: a linked or loopback unicast write; or,
    /// while a linked run is open on the handle, a read, a unicast write, or a multicast to
    /// another rectangle (see "A run holds the NIU" in the module docs).
    InvalidMode,
    /// Anything else.
    Other,
}

impl core::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Busy => "the NoC cannot take a request now",
            Self::InvalidAddress => "no such node or local address on this NoC",
            Self::Misaligned => "address or length not aligned as the NoC requires",
            Self::InvalidLength => "transfer length is zero",
            Self::HardwareHazard => "request would trigger a known hardware bug",
            Self::Fault => "NoC fault",
            Self::InvalidMode => "mode not allowed for this request, or a linked run is open",
            Self::Other => "NoC error",
        })
    }
}

/// An error of an NoC operation. Generic code only looks at [`Error::kind`].
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

/// The error type of an NoC implementation.
pub trait ErrorType {
    /// The error type every method of the trait returns.
    type Error: Error;
}

impl<T: ErrorType + ?Sized> ErrorType for &mut T {
    type Error = T::Error;
}

/// Whether a write asks for acknowledgements.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ack {
    /// Non-posted: every destination acknowledges; counted by `writes_acked`.
    Acked,
    /// Posted: no acknowledgement.
    Posted,
}

/// Which writes a write is ordered with; see the module docs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Ordered with the other `Ordered` writes of this core to the same destination on this NoC.
    Ordered,
    /// No ordering promise.
    Relaxed,
}

/// Whether a multicast keeps its path reserved for the next one; see "Linked runs" in the module
/// docs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Link {
    /// Releases the path: a multicast on its own, or the last of a linked run.
    Unlinked,
    /// Keeps the path for this core's next multicast on this NoC, to the same rectangle, and
    /// holds the NIU: no read or unicast write until an unlinked multicast closes the run.
    Linked,
}

/// Whether a multicast also delivers to its sender when the sender lies inside the rectangle.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Loopback {
    /// The sender receives nothing (and no acknowledgement of its own is counted).
    Excluded,
    /// A sender inside the rectangle receives the bytes and acknowledges them too.
    Included,
}

/// A read tag: the reads issued with one tag can be waited for apart from the others
/// ([`NocMulticast::tagged_reads_done`]). Blackhole has 16 NoC transaction ids; id 0 carries
/// untagged requests, so there are [`ReadTag::COUNT`] tags, 0..=14.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReadTag(u8);

impl ReadTag {
    /// How many tags there are.
    pub const COUNT: u8 = 15;

    /// The most reads of one tag that may be in flight for
    /// [`tagged_reads_done`](NocMulticast::tagged_reads_done) to be exact: Blackhole counts
    /// each transaction id's outstanding requests in 8 bits (tt-isa-documentation
    /// `BlackholeA0/NoC/Counters.md`, `NIU_MST_REQS_OUTSTANDING_ID`), and the backend does not
    /// hold reads back at that count. A caller that may have more in flight waits on
    /// `reads_done` instead.
    pub const MAX_IN_FLIGHT: u32 = 255;

    /// Whether `reads` reads of `len` bytes each, all of one tag in flight at once, stay within
    /// [`MAX_IN_FLIGHT`](Self::MAX_IN_FLIGHT) requests on every chip: a backend sends a read
    /// longer than a packet as several requests, and a packet holds at least 8 KiB on every
    /// chip this HAL serves (Blackhole 16 KiB, Wormhole B0 8 KiB).
    pub const fn fits(reads: u32, len: u32) -> bool {
        let requests = if len == 0 { 1 } else { len.div_ceil(8192) };
        reads.saturating_mul(requests) <= Self::MAX_IN_FLIGHT
    }

    /// Tag `n`; `None` unless `n < ReadTag::COUNT`.
    pub const fn new(n: u8) -> Option<Self> {
        if n < Self::COUNT { Some(Self(n)) } else { None }
    }

    /// Tag `n % ReadTag::COUNT`: the tags taken in turn, for a ring of at most
    /// [`ReadTag::COUNT`] slots read ahead (tag `n` for slot `n`).
    pub const fn cyclic(n: u32) -> Self {
        Self((n % Self::COUNT as u32) as u8)
    }

    /// The tag's number, 0..=14.
    pub const fn get(self) -> u8 {
        self.0
    }
}

/// Reads of consecutive pages spread over memory ports in turn, as a host lays a buffer out
/// over DRAM banks (tt-metal's interleaved buffers): page `first + i`, for `i` in `0..count`,
/// is the `len` bytes at local address `base + (first + i) * len` of node
/// `ports[(first + i) % ports.len()]`, read into local L1 at `dst + i * len` and tagged with
/// `tag` ([`NocMulticast::read_pages`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PageReads<'a> {
    /// The nodes the pages are spread over, taken in turn (DRAM ports, or other cores' L1).
    pub ports: &'a [Xy],
    /// The local address of page 0, the same on every port.
    pub base: u64,
    /// The number of the first page read (a page's number picks its port and address).
    pub first: u32,
    /// How many pages are read.
    pub count: u32,
    /// Bytes per page.
    pub len: u32,
    /// Where in local L1 the first page lands; each next page lands `len` bytes further.
    pub dst: L1Addr,
    /// The tag every read carries.
    pub tag: ReadTag,
}

impl PageReads<'_> {
    /// The source and destination of page `i` (counted from `first`): `None` when `i` is not
    /// below `count`, there are no ports, or an address does not exist (a page number beyond
    /// 32 bits, a source beyond [`LOCAL_ADDR_BITS`](crate::types::LOCAL_ADDR_BITS) bits, a
    /// destination beyond 32 bits or not word aligned).
    pub fn page(&self, i: u32) -> Option<(NocAddr, L1Addr)> {
        if i >= self.count {
            return None;
        }
        let g = self.first.checked_add(i)?;
        // (`max(1)`: no division by zero; `get` finds no port then.)
        let port = *self.ports.get(g as usize % self.ports.len().max(1))?;
        let local = self.base.checked_add(g as u64 * self.len as u64)?;
        let src = NocAddr::new(port, local).ok()?;
        let dst = self.dst.offset(i.checked_mul(self.len)?)?;
        Some((src, dst))
    }
}

/// How a write is carried.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct WriteMode {
    /// Acknowledged or posted.
    pub ack: Ack,
    /// Ordered or relaxed.
    pub order: Order,
    /// Multicasts only: whether the path stays reserved for the next multicast.
    pub link: Link,
    /// Multicasts only: whether a sender inside the rectangle receives too.
    pub loopback: Loopback,
}

impl WriteMode {
    /// Acknowledged and ordered: what data, flags and markers of a protocol use.
    pub const ORDERED: Self = Self {
        ack: Ack::Acked,
        order: Order::Ordered,
        link: Link::Unlinked,
        loopback: Loopback::Excluded,
    };
    /// Acknowledged, no ordering promise.
    pub const RELAXED: Self = Self {
        ack: Ack::Acked,
        order: Order::Relaxed,
        link: Link::Unlinked,
        loopback: Loopback::Excluded,
    };

    /// This mode with [`Link::Linked`]: the multicast keeps its path for the next one.
    #[must_use]
    pub const fn linked(self) -> Self {
        Self {
            link: Link::Linked,
            ..self
        }
    }

    /// This mode with [`Loopback::Included`]: a sender inside the rectangle receives too.
    #[must_use]
    pub const fn with_loopback(self) -> Self {
        Self {
            loopback: Loopback::Included,
            ..self
        }
    }

    /// Whether a unicast write takes this mode: neither linked nor loopback.
    pub const fn is_unicast(self) -> bool {
        matches!(self.link, Link::Unlinked) && matches!(self.loopback, Loopback::Excluded)
    }
}

/// One NoC as seen from one data-movement core.
pub trait NocMulticast: ErrorType {
    /// The NoC this handle issues on.
    fn noc(&self) -> NocId;

    /// This core's raw coordinates on that NoC.
    fn node(&self) -> Xy;

    /// Starts a read of `len` bytes at `src` into local L1 at `dst`. Refused with
    /// [`ErrorKind::InvalidMode`] while a linked run is open: close it first (module docs, "A
    /// run holds the NIU").
    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), Self::Error>;

    /// Starts a write of `len` bytes from local L1 at `src` to `dst`. `mode` must be a unicast
    /// mode ([`WriteMode::is_unicast`]); otherwise [`ErrorKind::InvalidMode`]. Refused with
    /// [`ErrorKind::InvalidMode`] too while a linked run is open: close it first (module docs, "A
    /// run holds the NIU").
    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), Self::Error>;

    /// Starts a multicast of `len` bytes from local L1 at `src` to L1 address `dst` of every
    /// compute node of `rect` except this one (this one too with [`Loopback::Included`]); with
    /// [`Link::Linked`] the path stays reserved for the next multicast (module docs). While a
    /// run is open, only a multicast to its rectangle is taken ([`ErrorKind::InvalidMode`]
    /// otherwise); until an unlinked one closes the run, reads and unicast writes are refused.
    fn multicast(
        &mut self,
        src: L1Addr,
        rect: Rect,
        dst: L1Addr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), Self::Error>;

    /// True when every read issued so far has landed.
    fn reads_done(&mut self) -> Result<bool, Self::Error>;

    /// Starts a read of `len` bytes at `src` into local L1 at `dst`, tagged with `tag` (see
    /// "Tagged reads" in the module docs). The provided method issues an untagged read. Refused
    /// like `read` while a linked run is open.
    fn read_tagged(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        tag: ReadTag,
    ) -> Result<(), Self::Error> {
        let _ = tag;
        self.read(src, dst, len)
    }

    /// True when every read issued with `tag` has landed. The provided method waits for every
    /// read ([`NocMulticast::reads_done`]), which is stronger.
    fn tagged_reads_done(&mut self, tag: ReadTag) -> Result<bool, Self::Error> {
        let _ = tag;
        self.reads_done()
    }

    /// Tagged reads of pages `from..reads.count` of `reads` (see [`PageReads`]), as
    /// [`read_tagged`](Self::read_tagged) of each in turn would. Returns the first page not
    /// issued: `reads.count` when every one was (`from` when it is not below `reads.count`);
    /// less when the NoC was busy at that page (call again from it) or the page has no
    /// addresses ([`PageReads::page`] is `None` for it). Any other refusal is returned as
    /// `read_tagged` returns it, the pages before it issued.
    ///
    /// One call for a block's pages: a backend may check what the pages share (the length,
    /// the tag, the mode, the ports, the destination range) once rather than at each page,
    /// work out each page's addresses with an add, and program only what changes from page to
    /// page. The provided method issues each page with `read_tagged`.
    fn read_pages(&mut self, from: u32, reads: &PageReads<'_>) -> Result<u32, Self::Error> {
        let mut i = from;
        while i < reads.count {
            let Some((src, dst)) = reads.page(i) else {
                return Ok(i);
            };
            match self.read_tagged(src, dst, reads.len, reads.tag) {
                Ok(()) => i += 1,
                Err(e) if e.kind() == ErrorKind::Busy => return Ok(i),
                Err(e) => return Err(e),
            }
        }
        Ok(i)
    }

    /// True when every write and multicast issued so far has left its source.
    fn writes_sent(&mut self) -> Result<bool, Self::Error>;

    /// True when every acked write issued so far is acknowledged by all its destinations.
    fn writes_acked(&mut self) -> Result<bool, Self::Error>;

    /// Forgets every transfer issued so far, as far as `reads_done` and `writes_acked` see
    /// (see "Resync" in the module docs).
    fn resync(&mut self) -> Result<(), Self::Error>;
}

impl<T: NocMulticast + ?Sized> NocMulticast for &mut T {
    #[inline]
    fn noc(&self) -> NocId {
        T::noc(self)
    }
    #[inline]
    fn node(&self) -> Xy {
        T::node(self)
    }
    #[inline]
    fn read(&mut self, src: NocAddr, dst: L1Addr, len: u32) -> Result<(), Self::Error> {
        T::read(self, src, dst, len)
    }
    #[inline]
    fn write(
        &mut self,
        src: L1Addr,
        dst: NocAddr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), Self::Error> {
        T::write(self, src, dst, len, mode)
    }
    #[inline]
    fn multicast(
        &mut self,
        src: L1Addr,
        rect: Rect,
        dst: L1Addr,
        len: u32,
        mode: WriteMode,
    ) -> Result<(), Self::Error> {
        T::multicast(self, src, rect, dst, len, mode)
    }
    #[inline]
    fn reads_done(&mut self) -> Result<bool, Self::Error> {
        T::reads_done(self)
    }
    #[inline]
    fn read_tagged(
        &mut self,
        src: NocAddr,
        dst: L1Addr,
        len: u32,
        tag: ReadTag,
    ) -> Result<(), Self::Error> {
        T::read_tagged(self, src, dst, len, tag)
    }
    #[inline]
    fn tagged_reads_done(&mut self, tag: ReadTag) -> Result<bool, Self::Error> {
        T::tagged_reads_done(self, tag)
    }
    #[inline]
    fn read_pages(&mut self, from: u32, reads: &PageReads<'_>) -> Result<u32, Self::Error> {
        T::read_pages(self, from, reads)
    }
    #[inline]
    fn writes_sent(&mut self) -> Result<bool, Self::Error> {
        T::writes_sent(self)
    }
    #[inline]
    fn writes_acked(&mut self) -> Result<bool, Self::Error> {
        T::writes_acked(self)
    }
    #[inline]
    fn resync(&mut self) -> Result<(), Self::Error> {
        T::resync(self)
    }
}
