//! What travels through the simulated chip: tile indices, NoC targets, virtual-channel classes,
//! write and read packets, and the items of the event queue.
//!
//! Leaf module: plain data, imports nothing of the crate. Every other module may use it.

use std::rc::Rc;

/// A tile index into the chip's Tensix list (`tile::Tiles`).
pub(crate) type TileIx = u16;

/// "No Tensix here" in the coordinate grid; also the top of the flow keys of DRAM banks.
pub(crate) const NO_TILE: TileIx = TileIx::MAX;

/// Where a NoC request lands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    L1(TileIx),
    Dram(u8),
}

/// The VC classes that share a physical link (ISA: 0b00/0b01 unicast requests, 0b10 broadcast
/// requests, 0b11 responses).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Vc {
    Unicast = 0,
    Multicast = 1,
    Response = 2,
}

/// How many [`Vc`] classes a link reserves separately.
pub(crate) const VC_CLASSES: usize = 3;

/// How a multicast packet treats the links of its tree (`link` holds them).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Hold {
    /// Not part of a linked run.
    Free,
    /// A linked packet of run `n`: the links stay held for the run.
    Keep(u32),
    /// The last packet of run `n`: each link is released once its tail has crossed.
    Release(u32),
}

/// A write or multicast on its way out of its NIU.
#[derive(Clone, Debug)]
pub(crate) struct WritePacket {
    pub src: TileIx,
    pub noc: u8,
    pub src_addr: u32,
    pub len: u32,
    /// Destinations: `(target, raw coordinates on this NoC)`.
    pub dests: Rc<[(Target, (u8, u8))]>,
    pub dst_addr: u64,
    pub acked: bool,
    pub ordered: bool,
    pub multicast: bool,
    /// Flow key for ordering: same source, NoC, destination set (and ordered class).
    pub flow: u64,
    pub issued_at: u64,
    /// Cycles of path reservation before the data leaves (0: unicast, or a linked run's later
    /// packet).
    pub reserve: u64,
    /// How a multicast holds its links (linked runs).
    pub hold: Hold,
    /// The source bytes at issue, kept when `SimConfig::source_read` checks the source.
    pub at_issue: Option<Rc<[u8]>>,
    /// Its place among its NIU's write packets, given as it departs (`Niu::write_turn`).
    pub seq: u64,
    /// Its transaction id (`NOC_PACKET_TAG` bits 10..13; 0 from the native kernels).
    pub id: u8,
}

/// A read on its way.
#[derive(Clone, Debug)]
pub(crate) struct ReadPacket {
    pub tile: TileIx,
    pub noc: u8,
    pub src: Target,
    pub src_raw: (u8, u8),
    pub src_addr: u64,
    pub dst_addr: u32,
    pub len: u32,
    pub issued_at: u64,
    /// Transaction id (0: untagged).
    pub id: u8,
}

/// One item of the event queue: a kernel wake-up or a step of a NoC transaction.
#[derive(Debug)]
pub(crate) enum Item {
    Wake {
        task: usize,
        epoch: u64,
    },
    /// A task's deadline; at most one live entry per task (see `Scheduler::park`).
    Deadline {
        task: usize,
    },
    DepartWrite(Box<WritePacket>),
    /// A packet (world id) asks for its path: a multicast reserves its tree (or waits for the
    /// run holding a link of it); then the data leaves after the reservation's cycles.
    Reserve {
        worm: u32,
    },
    /// A packet's data leaves its source's NIU.
    Launch {
        worm: u32,
    },
    /// A packet's head reaches the router in front of hop `hop` of its route.
    Hop {
        worm: u32,
        hop: u16,
    },
    DepartRead(Box<ReadPacket>),
    Commit {
        target: Target,
        addr: u64,
        data: Rc<[u8]>,
        src: TileIx,
    },
    /// An ack reaching its NIU's ejection port (`slotted`: its cycle there is taken), for a
    /// write of transaction id `id`.
    Ack {
        tile: TileIx,
        noc: u8,
        slotted: bool,
        id: u8,
    },
    ReadServe(Box<ReadPacket>),
    ReadRespond(Box<ReadPacket>),
    ReadLand {
        tile: TileIx,
        noc: u8,
        addr: u32,
        data: Rc<[u8]>,
        /// The read's transaction id.
        id: u8,
    },
    /// A held host write (`SimConfig::reorder_posted_writes`) lands; `Sim` carries it out.
    HostWrite {
        id: u64,
    },
}
