//! Handlers: what a command means to each of the three kernels, registered by id.

use komorebi_hal::Compute;
use komorebi_hal::DataMovement;
use komorebi_hal::{CircularBuffer, ControlBlock, NocMulticast, Pause};

use crate::abi::KernelGiveUp;
use crate::command::Command;

/// How a kernel reaches its tile's circular buffers.
pub trait Buffers {
    /// The buffer handle type.
    type Cb: CircularBuffer;
    /// Circular buffer `index`, or `None` if the tile has no such buffer.
    fn cb(&self, index: u8) -> Option<Self::Cb>;
}

/// What one kernel's part of a command came to.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The kernel's first give-up, if any.
    pub give_up: Option<KernelGiveUp>,
    /// A statistic for the report (bytes moved or checked).
    pub stat: u32,
}

/// One handler: the three kernels' bodies for commands with handler id [`Handler::ID`].
///
/// Bodies are `async` and run inside the persistent loop; `dm.ctrl` / `compute.ctrl` carry the
/// command's wait limit. A body must return (a give-up is an [`Outcome`], not a hang), and must
/// leave every buffer as the protocol requires for the next command.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub trait Handler {
    /// The handler id (0 is reserved for exit).
    const ID: u16;
    /// True when the handler runs broadcasts: its commands must carry `EXCLUSIVE` (rule 3).
    const USES_BROADCASTS: bool;

    /// The reader's body (NoC0).
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
        B: Buffers;

    /// The writer's body (NoC1).
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
        B: Buffers;

    /// The compute kernel's body.
    async fn compute<K, P, B>(
        &mut self,
        compute: &mut Compute<K, P>,
        buffers: &B,
        command: &Command,
    ) -> Outcome
    where
        K: ControlBlock,
        P: Pause,
        B: Buffers;
}

/// A set of handlers, dispatched by id. Implemented for one handler and for tuples of up to
/// four.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub trait HandlerSet {
    /// `Some(uses_broadcasts)` for a registered id, `None` otherwise.
    fn lookup(&self, id: u16) -> Option<bool>;

    /// Runs the reader body of handler `id` (registered: checked with `lookup`).
    async fn reader<N, K, P, B>(
        &mut self,
        id: u16,
        dm: &mut DataMovement<N, K, P>,
        buffers: &B,
        command: &Command,
    ) -> Outcome
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
        B: Buffers;

    /// Runs the writer body of handler `id`.
    async fn writer<N, K, P, B>(
        &mut self,
        id: u16,
        dm: &mut DataMovement<N, K, P>,
        buffers: &B,
        command: &Command,
    ) -> Outcome
    where
        N: NocMulticast,
        K: ControlBlock,
        P: Pause,
        B: Buffers;

    /// Runs the compute body of handler `id`.
    async fn compute<K, P, B>(
        &mut self,
        id: u16,
        compute: &mut Compute<K, P>,
        buffers: &B,
        command: &Command,
    ) -> Outcome
    where
        K: ControlBlock,
        P: Pause,
        B: Buffers;
}

macro_rules! handler_set {
    ($($h:ident . $i:tt),+) => {
        #[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
        impl<$($h: Handler),+> HandlerSet for ($($h,)+) {
            fn lookup(&self, id: u16) -> Option<bool> {
                $( if id == $h::ID { return Some($h::USES_BROADCASTS); } )+
                None
            }

            async fn reader<N, K, P, B>(&mut self, id: u16, dm: &mut DataMovement<N, K, P>, buffers: &B, command: &Command) -> Outcome
            where
                N: NocMulticast,
                K: ControlBlock,
                P: Pause,
                B: Buffers,
            {
                $( if id == $h::ID { return self.$i.reader(dm, buffers, command).await; } )+
                Outcome::default()
            }

            async fn writer<N, K, P, B>(&mut self, id: u16, dm: &mut DataMovement<N, K, P>, buffers: &B, command: &Command) -> Outcome
            where
                N: NocMulticast,
                K: ControlBlock,
                P: Pause,
                B: Buffers,
            {
                $( if id == $h::ID { return self.$i.writer(dm, buffers, command).await; } )+
                Outcome::default()
            }

            async fn compute<K, P, B>(&mut self, id: u16, compute: &mut Compute<K, P>, buffers: &B, command: &Command) -> Outcome
            where
                K: ControlBlock,
                P: Pause,
                B: Buffers,
            {
                $( if id == $h::ID { return self.$i.compute(compute, buffers, command).await; } )+
                Outcome::default()
            }
        }
    };
}

handler_set!(H0.0);
handler_set!(H0.0, H1.1);
handler_set!(H0.0, H1.1, H2.2);
handler_set!(H0.0, H1.1, H2.2, H3.3);
