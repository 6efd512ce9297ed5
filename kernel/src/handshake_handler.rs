//! The handshake handler (id [`HANDSHAKE_HANDLER`]): the 03_broadcast program moved by a
//! tt-metal-style handshake instead of komorebi's broadcast, the baseline komorebi's protocol is
//! measured against (`komorebi broadcast --protocol handshake`, issue 18).
//!
//! It takes the same program words as the [`BroadcastHandler`](crate::BroadcastHandler)
//! ([`BroadcastProgram`], so the host changes
//! only the handler id), runs the same shape over the same buffers, reads the same DRAM pages
//! with the broadcast handler's own `read_block` (page `g = block * pages + page` through the
//! port of stream `g % 8` at `dram_base + g * page_size`, as since program version 2), and its compute is
//! the broadcast handler's own: the same checks, the same `--check`, the same give-ups.
//!
//! # The protocol, per broadcast and block `b`
//!
//! Modelled on tt-metal's matmul multicast readers (read, not copied):
//! `ttnn/cpp/ttnn/operations/matmul/device/kernels/dataflow/reader_bmm_tile_layout_in0_sender_padding.cpp`
//! (the sender) and `reader_bmm_tile_layout_in0_receiver.cpp` (a receiver), in
//! `tenstorrent/tt-metal`.
//!
//! * Sender: waits until its own slot is free (`cb_reserve_back`), issues the block's DRAM
//!   reads, waits for them (`noc_async_read_barrier`), waits until every receiver has said it
//!   is ready for `b` (`noc_semaphore_wait`), multicasts the slot to the same slot of every
//!   receiver, flushes (`noc_async_writes_flushed`, which tt-metal does on Blackhole), multicasts
//!   the flag (`noc_semaphore_set_multicast`) and pushes the block to its own compute
//!   (`cb_push_back`). Strictly serial: block `b + 1`'s reads are issued after block `b`'s flag.
//! * Receiver: waits until its own slot is free (`cb_reserve_back`), says it is ready
//!   (`noc_semaphore_inc` in tt-metal), waits for the flag of `b` (`noc_semaphore_wait`), pushes
//!   the block to its compute.
//!
//! The buffer is `window * pages` pages as for komorebi (the shape is shared); the handshake uses
//! it as a ring of `window` slots, so window 2 is tt-metal's double buffer.
//!
//! The ready signal is not an atomic increment: the HAL has none. Each receiver writes a
//! sequence-tagged count, `marker(seq, b + 1)`, into its own word at the sender: one 4-byte NoC
//! write per receiver and block, the same traffic as the increment; the sender waits until every
//! receiver's word counts at least `b + 1`. The words are the broadcast area's (the DONE-BY words
//! as ready words, VALID as the flag, the marker source as the ready write's source), so nothing
//! new is laid out in the control block; the calls are `komorebi_broadcast`'s
//! ([`Broadcast::reserve`], [`Broadcast::handshake`], [`Broadcast::finish`]; their module docs
//! say what each guarantees).
//!
//! # What it guarantees
//!
//! * Every wait is bounded by the command's wait limit and the tile's stop flag; one that times
//!   out is a give-up, reported as `GiveUpCode::Broadcast(place)` with komorebi's places (the
//!   sender waiting for its ready words: `broadcast_done`, and it stops its tile; a receiver
//!   waiting for the flag: `broadcast_valid`; waiting for its own compute: `broadcast_free`).
//! * After a give-up the tile is still ready for the next command, as with the broadcast
//!   handler: the data-movement kernel announces its recovery, waits at most one wait limit for
//!   its own writes, pads its buffer to the end of the lap; compute drains.
//! * At the end of a clean command compute has popped every block, the buffers are padded to
//!   whole windows (the next command starts at slot 0), every core's own writes are
//!   acknowledged, and the sender's ready words and the receivers' flags are cleared.
//! * A program's `stall_before` stalls a data-movement kernel as it does the broadcast
//!   handler's (a receiver that stalls never says it is ready, so its sender gives up
//!   `broadcast_done` within one wait limit).
//!
//! Not registered in the firmware images (their code room): the simulator's native kernels run
//! it.

use komorebi_broadcast::device::{Broadcast, GiveUp};
use komorebi_hal::{
    CircularBuffer, Compute, ControlBlock, DataMovement, NocMulticast, Pause, Role,
};

use crate::broadcast_handler::program::{BroadcastProgram, MoverProgram};
use crate::broadcast_handler::{BlockLoop, compute_body, dm_body, read_block, stall};
use crate::command::Command;
use crate::handler::{Buffers, Handler, Outcome};

/// The handshake handler's id: the second handler.
pub const HANDSHAKE_HANDLER: u16 = 2;

/// The handshake peer of the 03_broadcast handler (module docs). It keeps no state between
/// commands.
#[derive(Debug, Default, Clone, Copy)]
pub struct HandshakeHandler;

/// The handshake's block loop (the body around it is the broadcast handler's `dm_body`).
struct Handshake;

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl BlockLoop for Handshake {
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
        for block in 0..mover.blocks as u32 {
            if mover.stall_before.map(u32::from) == Some(block) {
                // As the broadcast handler's stall: no ready word, no cast.
                return Err(stall(dm, b, block).await);
            }
            if b.sender() {
                // One block at a time: reserve, read, cast; no block is read ahead.
                let slot = b.reserve(dm, block).await?;
                read_block(dm, b, mover, pages, block, slot).await?;
                b.handshake(dm, block).await?;
            } else {
                b.handshake(dm, block).await?;
            }
        }
        b.finish(dm).await
    }
}

#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
impl Handler for HandshakeHandler {
    const ID: u16 = HANDSHAKE_HANDLER;
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
        dm_body::<Handshake, _, _, _, _>(
            dm,
            &mut BroadcastProgram::default(),
            buffers,
            command,
            Role::Reader,
        )
        .await
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
        dm_body::<Handshake, _, _, _, _>(
            dm,
            &mut BroadcastProgram::default(),
            buffers,
            command,
            Role::Writer,
        )
        .await
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
        compute_body(compute, &mut BroadcastProgram::default(), buffers, command).await
    }
}
