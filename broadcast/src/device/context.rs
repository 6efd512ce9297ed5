//! What a broadcast knows of its command ([`Context`]), and the refusal of a broadcast that
//! cannot even be built ([`refuse_without_buffer`]).

use komorebi_hal::LogicalRect;
use komorebi_hal::control::ControlBlock;

use super::cause::{Cause, GiveUp};
use super::wait::record_first;
use crate::area::{self, GiveUpRecord, Where};

/// What a broadcast needs to know of the command it runs in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Context {
    /// The command's sequence number; its low half tags every VALID and DONE word.
    pub sequence: u32,
    /// The group the command names.
    pub group: LogicalRect,
    /// Whether the command carries `EXCLUSIVE` (rule 3 requires it).
    pub exclusive: bool,
}

/// Refuses a broadcast the handler cannot even build because the tile has no buffer for it (the
/// buffer index its words name is not configured): records a `broadcast_begin` give-up for
/// broadcast `id` with `cause`, as [`Broadcast::refuse`](super::Broadcast::refuse) does, and returns it. There is
/// no `Broadcast` to call afterwards. The record is `refuse`'s, so a handler that refuses a
/// broadcast before building it for another reason (its program fails its checks) may use this
/// too and not build a broadcast only to drop it.
pub fn refuse_without_buffer<K: ControlBlock>(
    ctrl: &mut K,
    context: &Context,
    id: u8,
    cause: Cause,
) -> GiveUp {
    let give_up = GiveUp {
        place: Where::BroadcastBegin,
        broadcast: id,
        block: 0,
        cause,
    };
    let record = GiveUpRecord {
        place: Where::BroadcastBegin,
        broadcast: id,
        block: 0,
        sequence: context.sequence,
    };
    // Best effort, as every give-up's record: a control block that cannot be written has
    // nothing better to tell. The statistics of this command are zero. An id with no area of
    // its own records nothing (`record_first`).
    if id < area::MAX_BROADCASTS {
        let base = area::area(id);
        let _ = record_first(ctrl, id, record)
            .and_then(|()| ctrl.store(base + area::STATS_BLOCKS, 0))
            .and_then(|()| ctrl.store(base + area::STATS_WAIT_CYCLES, 0));
    }
    give_up
}
