//! The broadcast handler (id [`BROADCAST_HANDLER`]): the 03_broadcast program. Each data-movement
//! kernel may run one broadcast (the reader on NoC0, the writer on NoC1); the sender of each
//! reads its blocks from DRAM; compute takes both broadcasts' blocks in turn, checks every byte
//! against the pattern the host wrote, and pops them. With [`program::Check::None`] compute
//! reads no word: it takes and pops every block in protocol order (every wait, give-up and
//! recovery as with checking) and reports 0 bytes checked.
//!
//! # Program
//! The words of each kernel are a [`program::BroadcastProgram`] (version 4, [`program::PROGRAM_VERSION`]; its module has the
//! table of every word). Each kernel decodes and checks the whole tile's program; a program that
//! fails its checks, or whose copies disagree, is refused: the data-movement kernels record a
//! `broadcast_begin` give-up, compute gives up without checking.
//!
//! # Injected faults
//! A program's `stall_before` makes that kernel stop making its calls before a block, as a
//! hung core would: a data-movement kernel for one wait limit, compute until every producer of
//! its buffers has given up or finished. Then it recovers (below) and returns, so its tile still
//! reports and the next command runs without a reset. A stalled kernel records no give-up in the
//! broadcast area: a hung core records nothing; the cores waiting for it do.
//!
//! # After a give-up
//! A kernel whose broadcast gave up still leaves its tile ready for the next command: the
//! data-movement kernel announces its recovery (`abi::KERNEL_RECOVERING`), waits at most one
//! wait limit for its own transfers to be acknowledged, and pads its buffer to the end of the
//! lap; compute, which takes announced pages for padding rather than data, pops everything
//! until that kernel is done. These waits ignore the stop flag; the give-up recorded first stays
//! the one reported.
//!
//! # A command's first block
//! Compute takes no page as a command's first block before its producer's set-up word
//! (`abi::KERNEL_SET_UP`, stored once the broadcast is set up or refused, the refusal recorded
//! first) names the command: pages a recovery that never ended left in a buffer would otherwise
//! be taken for block 0 of a producer that refuses that buffer as not empty.

use komorebi_broadcast::area::{self, GiveUpRecord, Where};
use komorebi_broadcast::compute::{self, ComputeError};
use komorebi_broadcast::device::{Broadcast, Cause, Context, GiveUp, refuse_without_buffer};
use komorebi_hal::noc::PageReads;
use komorebi_hal::{
    CircularBuffer, Compute, ControlBlock, DataMovement, NocMulticast, Pause, Role, wait_until,
};

use crate::abi::{self, GiveUpCode, KernelGiveUp};
use crate::command::{Command, CommandCtrl};
use crate::handler::{Buffers, Handler, Outcome};

mod pattern;
pub mod program;

use pattern::check_page;
pub use pattern::{PATTERN_STRIDE, pattern_base, pattern_word};

use program::{BroadcastProgram, Check, ComputeInput, MoverProgram};

/// The broadcast handler's id: the first handler.
pub const BROADCAST_HANDLER: u16 = 1;
/// The 03_broadcast handler. It keeps no state between commands: the program it holds is
/// only the place each command's words are decoded into, rewritten whole at every command, so
/// that a kernel does not build (zero) and move a fresh program at each command's start (some
/// 1,700 cycles on the baby cores, decisions D32).
#[derive(Debug, Default, Clone)]
pub struct BroadcastHandler {
    program: BroadcastProgram,
}

impl BroadcastHandler {
    /// A handler (the same as `BroadcastHandler::default()`).
    pub fn new() -> Self {
        Self::default()
    }

    /// A handler for the kernel `role`, made before its first command: a data-movement
    /// kernel's has both movers' places made, which its first command's decode writes into
    /// rather than building each aside and moving it into place (some 430 cycles of that
    /// command's start on the baby cores, decisions D57). Compute's is [`Self::new`]'s: its
    /// start is not what its first block waits for, and its image has no bytes to spare.
    /// The places' contents mean nothing until a command is decoded.
    pub fn for_kernel(role: Role) -> Self {
        let mut handler = Self::default();
        if role != Role::Compute {
            for mover in [&mut handler.program.reader, &mut handler.program.writer] {
                *mover = Some(MoverProgram::default());
            }
        }
        handler
    }
}

fn gave_up(g: Option<GiveUp>) -> Outcome {
    Outcome {
        give_up: g.map(|g| KernelGiveUp {
            code: GiveUpCode::Broadcast(g.place),
            broadcast: g.broadcast,
            block: g.block,
        }),
        stat: 0,
    }
}

/// The block loop a data-movement body runs over the broadcast it set up: komorebi's
/// ([`Komorebi`]) or another protocol's over the same words and buffer (the handshake peer's).
/// A type rather than a flag, so that a build that registers only this handler (the firmware)
/// carries no other protocol's code.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub(crate) trait BlockLoop {
    /// Runs every block of `mover` over `b` (`pages` pages a block), then `b`'s `finish`.
    async fn run<N, K, P, C>(
        dm: &mut DataMovement<N, K, P>,
        b: &mut Broadcast<C>,
        pages: u32,
        mover: &MoverProgram,
    ) -> Result<(), GiveUp>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
        C: CircularBuffer;
}

/// komorebi's block loop: the sender reads up to `window - 1` blocks ahead of the one it casts.
pub(crate) struct Komorebi;

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl BlockLoop for Komorebi {
    async fn run<N, K, P, C>(
        dm: &mut DataMovement<N, K, P>,
        b: &mut Broadcast<C>,
        pages: u32,
        mover: &MoverProgram,
    ) -> Result<(), GiveUp>
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
        C: CircularBuffer,
    {
        let window = b.args().map_or(1, |a| a.window.max(1)) as u32;
        let mut reserved = 0;
        for block in 0..mover.blocks as u32 {
            if mover.stall_before.map(u32::from) == Some(block) {
                return Err(stall(dm, b, block).await);
            }
            if b.sender() {
                // Reserve and read every block whose slot is free, up to `window - 1` beyond this
                // one, before casting this one: their reads are in flight while it is cast.
                let last = (mover.blocks as u32).min(block + window);
                while reserved < last && (reserved == block || b.reserve_ready(reserved)) {
                    let slot = b.reserve(dm, reserved).await?;
                    read_block(dm, b, mover, pages, reserved, slot).await?;
                    reserved += 1;
                }
                b.cast(dm, block).await?;
            } else {
                b.arrive(dm, block).await?;
            }
        }
        b.finish(dm).await
    }
}

/// A data-movement kernel's body: checks the words and sets the broadcast up, runs its blocks
/// with `L` (komorebi's, or the handshake peer's over the same words and buffer), and recovers
/// after a give-up.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub(crate) async fn dm_body<L, N, K, P, B>(
    dm: &mut DataMovement<N, K, P>,
    program: &mut BroadcastProgram,
    buffers: &B,
    command: &Command,
    role: Role,
) -> Outcome
where
    L: BlockLoop,
    N: NocMulticast,
    K: ControlBlock,
    P: Pause,
    B: Buffers,
{
    let words = command.words(role);
    if words.is_empty() {
        return Outcome::default();
    }
    let context = Context {
        sequence: command.sequence,
        group: command.group,
        exclusive: command.exclusive(),
    };
    // The buffer the words name (a bad index is caught by the words' checks). A tile without
    // that buffer gives up `broadcast_begin`, recorded in the area like any bad words; so does
    // a program that fails its checks. Both make the record `Broadcast::refuse` would, without
    // building a broadcast to drop, and with the id as the argument words give it.
    let index = words.get(2).map_or(0, |&w| w as u8);
    let decoded = decode_program(program, command);
    let cause = match (
        buffers.cb(index),
        decoded.then(|| program.mover(role)).flatten(),
    ) {
        (Some(cb), Some(mover)) => {
            return run_mover::<L, _, _, _, _>(dm, cb, &context, command, mover, role).await;
        }
        (None, _) => Cause::NoBuffer { index },
        (Some(_), None) => Cause::Refused,
    };
    let id = words.first().map_or(0, |&w| w as u8);
    let refused = refuse_without_buffer(&mut dm.ctrl, &context, id, cause);
    // Refused, the refusal recorded: compute's wait for block 0 ends (as after `run_mover`'s
    // set-up).
    let _ = dm
        .ctrl
        .store(abi::kernel_word(abi::KERNEL_SET_UP, role), command.index);
    gave_up(Some(refused))
}

/// [`BroadcastProgram::decode_into`] for a data-movement kernel, not inlined: in the firmware's reader
/// and writer (whose block loop is inlined into one function) a call is smaller than the
/// decode among the protocol's calls. Compute inlines it: there the call is larger. Whether
/// the program passed is all the kernel needs of the error (the refusal is `Cause::Refused`),
/// so the error itself is not returned (and not put together).
#[inline(never)]
fn decode_program(program: &mut BroadcastProgram, command: &Command) -> bool {
    program.decode_into(command).is_ok()
}

/// [`dm_body`] once its buffer and program are there: sets the broadcast up, runs its blocks
/// with `L` and recovers after a give-up.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
async fn run_mover<L, N, K, P, C>(
    dm: &mut DataMovement<N, K, P>,
    cb: C,
    context: &Context,
    command: &Command,
    mover: &MoverProgram,
    role: Role,
) -> Outcome
where
    L: BlockLoop,
    N: NocMulticast,
    K: ControlBlock,
    P: Pause,
    C: CircularBuffer,
{
    let mut b = Broadcast::new(dm, cb, context, &mover.args, 0);
    // Set up, or refused with the refusal recorded: compute may take a first block from here
    // on (pages in the buffer before this are an earlier command's; `compute_body`).
    let _ = dm
        .ctrl
        .store(abi::kernel_word(abi::KERNEL_SET_UP, role), command.index);
    if !b.ok() {
        return gave_up(b.give_up());
    }
    if !b.included() {
        return Outcome::default();
    }
    let pages = b.args().map_or(1, |a| a.pages) as u32;
    let r = L::run(dm, &mut b, pages, mover).await;
    let stat = b
        .blocks()
        .saturating_mul(pages)
        .saturating_mul(mover.page_size);
    match r {
        Ok(()) => Outcome {
            give_up: None,
            stat,
        },
        Err(g) => {
            // Announce the recovery before any padding is pushed: compute must not take it for
            // a block.
            let _ = dm.ctrl.store(
                abi::kernel_word(abi::KERNEL_RECOVERING, role),
                command.index,
            );
            recover_producer(dm, &mut b).await;
            Outcome {
                stat,
                ..gave_up(Some(g))
            }
        }
    }
}

/// An injected stall before block `block` (`stall_before`): a data-movement kernel that stops
/// making its broadcast calls, so it sends no more markers (or ready words). It sleeps out one
/// wait limit, then gives up waiting itself, recording nothing in its area (a hung core records
/// nothing); its kernel's outcome names the place its role waits at: `broadcast_done` for the
/// sender (the markers and its own NoC), `broadcast_valid` for a receiver. A stalled sender does
/// not stop its tile, as a sender timing out at `broadcast_done` does: a hung core commands
/// nothing, and the cores waiting for it give up at their own limits.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub(crate) async fn stall<N, K, P, C>(
    dm: &mut DataMovement<N, K, P>,
    b: &Broadcast<C>,
    block: u32,
) -> GiveUp
where
    N: NocMulticast,
    K: ControlBlock,
    P: Pause,
    C: CircularBuffer,
{
    let _ = wait_until(&mut dm.ctrl, &mut dm.pause, |_| Ok::<_, ()>(false)).await;
    b.give_up().unwrap_or(GiveUp {
        place: if b.sender() {
            komorebi_broadcast::Where::BroadcastDone
        } else {
            komorebi_broadcast::Where::BroadcastValid
        },
        broadcast: b.args().map_or(0, |a| a.broadcast),
        block,
        cause: komorebi_broadcast::Cause::TimedOut,
    })
}

/// Issues the reads of block `block`'s pages into `slot`, tagged with the block's read tag
/// ([`Broadcast::read`]: a busy NoC is asked again within the wait limit; a page without
/// addresses, another NoC error, the limit or a stop give the block up). The handshake peer
/// reads its blocks with it too.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
#[inline(never)]
pub(crate) async fn read_block<N, K, P, C>(
    dm: &mut DataMovement<N, K, P>,
    b: &mut Broadcast<C>,
    mover: &MoverProgram,
    pages: u32,
    block: u32,
    slot: komorebi_hal::L1Addr,
) -> Result<(), GiveUp>
where
    N: NocMulticast,
    K: ControlBlock,
    P: Pause,
    C: CircularBuffer,
{
    let reads = PageReads {
        ports: &mover.banks,
        base: mover.dram_base as u64,
        first: block * pages,
        count: pages,
        len: mover.page_size,
        dst: slot,
        tag: b.read_tag(block),
    };
    b.read(dm, block, &reads).await
}

/// After a give-up: wait for this kernel's own transfers, then pad the buffer to the end of its
/// lap so the next command starts at slot 0 (compute pops meanwhile).
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
async fn recover_producer<N, K, P, C>(dm: &mut DataMovement<N, K, P>, b: &mut Broadcast<C>)
where
    N: NocMulticast,
    K: ControlBlock,
    P: Pause,
    C: CircularBuffer,
{
    let limit = dm.ctrl.wait_limit().unwrap_or(0);
    let noc = &mut dm.noc;
    // Its own transfers first, reads read ahead into slots included: none may land once the
    // next command owns the slot (bounded: an acknowledgement or response lost on the NoC
    // never comes; the next command's resync forgets it).
    let mut bounded = CommandCtrl::recovery(&mut dm.ctrl, limit);
    let _ = wait_until(&mut bounded, &mut dm.pause, |_| {
        Ok::<_, ()>(noc.writes_acked().map_err(|_| ())? && noc.reads_done().map_err(|_| ())?)
    })
    .await;
    let cb = b.buffer();
    let (capacity, page_size) = (cb.capacity() as u32, cb.page_size());
    if capacity == 0 || page_size == 0 {
        return;
    }
    // Wrapping: a buffer's write pointer is never below its base (`saturating_sub` costs the
    // Wormhole reader bytes it does not have).
    let at = cb.write_ptr().get().wrapping_sub(cb.base().get()) / page_size;
    let pad = ((capacity - at % capacity) % capacity) as u16;
    if pad > 0 {
        // Unbounded: compute pops everything in its own recovery, which it enters within one
        // wait limit of its last block. Only a hung compute could keep this waiting, and then
        // the tile cannot report anyway.
        let mut patient = CommandCtrl::recovery(&mut dm.ctrl, u64::MAX);
        let ok = wait_until(&mut patient, &mut dm.pause, |_| {
            cb.pages_free().map(|f| f >= pad).map_err(|_| ())
        })
        .await;
        if ok.is_ok() {
            let _ = cb.push_padding(pad);
            // Read the counters back before the kernel's done word (stored when this returns),
            // which compute's recovery takes for "nothing more comes": a later store to another
            // region may be processed first (ISA `BabyRISCV/MemoryOrdering.md`), and padding
            // counted after it would be left for the next command.
            let _ = cb.pages_free();
        }
    }
}

fn compute_give_up(e: ComputeError, broadcast: u8, block: u32) -> KernelGiveUp {
    let code = match e {
        ComputeError::TimedOut { .. } => GiveUpCode::ComputeTimedOut,
        ComputeError::Stopped { .. } => GiveUpCode::ComputeStopped,
        _ => GiveUpCode::ComputeFailed,
    };
    KernelGiveUp {
        code,
        broadcast,
        block,
    }
}

/// The compute kernel's body: takes, checks (with [`Check::Full`]) and pops every block of
/// both broadcasts in turn, then the padding; drains after a give-up. The handshake peer's
/// compute is this one. The words are decoded into `program`, as the movers' are: a fresh
/// program at each command cost compute some 1,200 cycles of zeroing and moving on the baby
/// cores.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub(crate) async fn compute_body<K, P, B>(
    compute: &mut Compute<K, P>,
    program: &mut BroadcastProgram,
    buffers: &B,
    command: &Command,
) -> Outcome
where
    K: ControlBlock,
    P: Pause,
    B: Buffers,
{
    if program.decode_into(command).is_err() {
        return Outcome {
            give_up: Some(KernelGiveUp {
                code: GiveUpCode::ComputeFailed,
                broadcast: 0,
                block: 0,
            }),
            stat: 0,
        };
    };
    let program = &program.compute;
    let inputs = [
        program.inputs.first().copied(),
        program.inputs.get(1).copied(),
    ];
    let (job, stall) = (program.job, program.stall_before.map(u32::from));
    let mut cbs = inputs.map(|s| s.and_then(|s| buffers.cb(s.cb)));
    let mut checked: u32 = 0;
    // A buffer the tile lacks: its producer refuses that broadcast (`broadcast_begin`), and
    // compute says so too, going on with the other broadcast, whose producer runs.
    let mut first: Option<KernelGiveUp> = inputs.iter().zip(&cbs).find_map(|(s, cb)| {
        let s = s.filter(|_| cb.is_none())?;
        Some(KernelGiveUp {
            code: GiveUpCode::ComputeFailed,
            broadcast: s.broadcast,
            block: 0,
        })
    });
    let mut failed = false;
    let blocks = inputs
        .iter()
        .flatten()
        .map(|s| s.blocks as u32)
        .max()
        .unwrap_or(0);
    'blocks: for block in 0..blocks {
        if stall == Some(block) {
            // Compute stops popping, and stays stopped until every producer has given up or
            // finished: only then does it drain its buffers so the next command can run.
            // Named by the first broadcast that has the block (one that ended before it did not
            // stall on it).
            let broadcast = inputs
                .iter()
                .flatten()
                .find(|s| block < s.blocks as u32)
                .map_or(0, |s| s.broadcast);
            first = first.or(Some(KernelGiveUp {
                code: GiveUpCode::ComputeTimedOut,
                broadcast,
                block,
            }));
            let mut ctrl = CommandCtrl::recovery(&mut compute.ctrl, u64::MAX);
            let index = command.index;
            let _ = wait_until(&mut ctrl, &mut compute.pause, |c| {
                for s in inputs.iter().flatten() {
                    let recovering = c
                        .load(abi::kernel_word(abi::KERNEL_RECOVERING, s.producer))
                        .map_err(|_| ())?
                        == index;
                    let done = c
                        .load(abi::kernel_word(abi::KERNEL_DONE, s.producer))
                        .map_err(|_| ())?
                        == index;
                    if !recovering && !done {
                        return Ok(false);
                    }
                }
                Ok::<_, ()>(true)
            })
            .await;
            failed = true;
            break 'blocks;
        }
        for (s, cb) in inputs.iter().zip(cbs.iter_mut()) {
            let (Some(s), Some(cb)) = (s, cb.as_mut()) else {
                continue;
            };
            if block >= s.blocks as u32 {
                continue;
            }
            // A producer that refused its words or a block's reads (its area's record:
            // `broadcast_begin` of this command) pushes no more blocks: the wait ends then, not
            // at the wait limit. Only a refusal: a give-up made at a wait limit would race
            // compute's own. (A refusal at setup or at block 0's reads comes before any wait;
            // one at a later block's reads may come after the producer waited for that block's
            // slot, and then races compute's limit for the block as any give-up does.)
            let refused = GiveUpRecord {
                place: Where::BroadcastBegin,
                broadcast: s.broadcast,
                block: 0,
                sequence: command.sequence,
            }
            .words()[0];
            let at = area::area(s.broadcast) + area::GIVE_UP_WHERE;
            let gone = |c: &mut K| c.load(at).ok() == Some(refused);
            // At block 0, pages ready at once may be an earlier command's (left by a recovery
            // that did not end), in a buffer the producer refuses as not empty (setup refuses
            // such a buffer, so only block 0 can meet them). The producer records that refusal
            // (its block word before its where word) before its set-up word: block 0's pages
            // are taken only once the set-up word names this command, and then the refusal is
            // seen.
            let index = command.index;
            let set_up = abi::kernel_word(abi::KERNEL_SET_UP, s.producer);
            // (Looked at only once the pages are ready: a wait's rounds before cost nothing more.)
            let ends = |c: &mut K, ready: bool| {
                ready && (block > 0 || c.load(set_up).ok() == Some(index)) || gone(c)
            };
            if let Err(e) = compute::receive_when(compute, cb, s.pages, ends).await {
                first = first.or(Some(compute_give_up(e, s.broadcast, block)));
                failed = true;
                break 'blocks;
            }
            // Ended by the refusal, not by the pages (or by pages an earlier command left, at
            // block 0): the refusal's record names its block. A block pushed before a later
            // refusal is taken as any block is, below.
            let refused_at_0 = |c: &mut K| {
                gone(c)
                    && c.load(area::area(s.broadcast) + area::GIVE_UP_BLOCK)
                        .map_or(true, |b| b == 0)
            };
            if cb.pages_ready().map_or(true, |ready| ready < s.pages)
                || block == 0 && refused_at_0(&mut compute.ctrl)
            {
                failed = true;
                break 'blocks;
            }
            // Pages pushed by a producer that gave up are padding: leave the checks to nobody.
            if compute
                .ctrl
                .load(abi::kernel_word(abi::KERNEL_RECOVERING, s.producer))
                .ok()
                == Some(command.index)
            {
                failed = true;
                break 'blocks;
            }
            // `Check::None`: no word is read, the block is only taken and popped.
            let pages = if program.check == Check::Full {
                s.pages
            } else {
                0
            };
            for page in 0..pages {
                match check_page(cb, s, job, block, page) {
                    Ok(true) => checked = checked.saturating_add(s.page_size),
                    Ok(false) => {
                        first = first.or(Some(KernelGiveUp {
                            code: GiveUpCode::DataMismatch,
                            broadcast: s.broadcast,
                            block,
                        }))
                    }
                    Err(e) => {
                        first = first.or(Some(compute_give_up(e, s.broadcast, block)));
                        failed = true;
                        break 'blocks;
                    }
                }
            }
            // The check took time: on a card the loop itself, in a simulator a charge on this
            // kernel's clock (`read_page`). Let that time pass before the pop frees the slot,
            // so nobody sees the pop before the check could have ended (a no-op spin on a card).
            let now = compute.ctrl.now();
            compute.pause.pause(now).await;
            if let Err(e) = compute::done(cb, s.pages) {
                first = first.or(Some(compute_give_up(e, s.broadcast, block)));
                failed = true;
                break 'blocks;
            }
        }
    }
    if !failed {
        for (s, cb) in inputs.iter().zip(cbs.iter_mut()) {
            let (Some(s), Some(cb)) = (s, cb.as_mut()) else {
                continue;
            };
            if let Err(e) = compute::end(compute, cb, s.pages, s.window, s.blocks as u32).await {
                first = first.or(Some(compute_give_up(e, s.broadcast, s.blocks as u32)));
                failed = true;
            }
        }
    }
    if failed {
        recover_consumer(compute, &inputs, &mut cbs, command.index).await;
    }
    Outcome {
        give_up: first,
        stat: checked,
    }
}

/// After a give-up: pop everything each producer pushed until it is done with this command and
/// the buffer is back at slot 0 (the producer pads its lap; see `recover_producer`).
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
async fn recover_consumer<K, P, C>(
    compute: &mut Compute<K, P>,
    inputs: &[Option<ComputeInput>; 2],
    cbs: &mut [Option<C>; 2],
    index: u32,
) where
    K: ControlBlock,
    P: Pause,
    C: CircularBuffer,
{
    // Unbounded: each producer's recovery is itself bounded, so it is done in finite time; a
    // hung producer keeps its tile from reporting either way.
    let mut ctrl = CommandCtrl::recovery(&mut compute.ctrl, u64::MAX);
    for (s, cb) in inputs.iter().zip(cbs.iter_mut()) {
        let (Some(s), Some(cb)) = (s, cb.as_mut()) else {
            continue;
        };
        let done_at = abi::kernel_word(abi::KERNEL_DONE, s.producer);
        let _ = wait_until(&mut ctrl, &mut compute.pause, |c| {
            // Pops never cross the end of the buffer (the wrap rule): at most to the lap's end.
            let ready = cb.pages_ready().map_err(|_| ())?;
            let at = cb.read_ptr().get().saturating_sub(cb.base().get()) / cb.page_size().max(1);
            let to_end = (cb.capacity() as u32).saturating_sub(at) as u16;
            if ready.min(to_end) > 0 {
                cb.pop(ready.min(to_end)).map_err(|_| ())?;
            }
            let producer_done = c.load(done_at).map_err(|_| ())? == index;
            Ok::<_, ()>(producer_done && cb.pages_ready().map_err(|_| ())? == 0)
        })
        .await;
    }
}

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl Handler for BroadcastHandler {
    const ID: u16 = BROADCAST_HANDLER;
    const USES_BROADCASTS: bool = true;

    async fn reader<N, K, P, B>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        buffers: &B,
        command: &Command,
    ) -> Outcome
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
        B: Buffers,
    {
        dm_body::<Komorebi, _, _, _, _>(dm, &mut self.program, buffers, command, Role::Reader).await
    }

    async fn writer<N, K, P, B>(
        &mut self,
        dm: &mut DataMovement<N, K, P>,
        buffers: &B,
        command: &Command,
    ) -> Outcome
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
        B: Buffers,
    {
        dm_body::<Komorebi, _, _, _, _>(dm, &mut self.program, buffers, command, Role::Writer).await
    }

    async fn compute<K, P, B>(
        &mut self,
        compute: &mut Compute<K, P>,
        buffers: &B,
        command: &Command,
    ) -> Outcome
    where
        K: ControlBlock,
        P: Pause,
        B: Buffers,
    {
        compute_body(compute, &mut self.program, buffers, command).await
    }
}
