//! Device side of the broadcast: what the reader (NoC0) or writer (NoC1) kernel of each core of
//! a broadcast calls, generic over the HAL.
//!
//! ```text
//! let mut b = Broadcast::new(&mut dm, cb, &context, program_words, first_word);
//! if !b.ok() { return; }                       // bad words: broadcast_begin recorded
//! if b.included() {
//!     for block in 0..blocks {
//!         if b.sender() {
//!             let slot = b.reserve(&mut dm, block).await?;   // slot block % window
//!             // read the block's pages from DRAM into `slot` with dm.noc.read(..)
//!             b.cast(&mut dm, block).await?;    // receivers done with block - window,
//!                                               // reads landed, multicast, VALID, push
//!         } else {
//!             b.arrive(&mut dm, block).await?;  // VALID >= block + 1, push
//!         }
//!     }
//!     b.finish(&mut dm).await?;                 // compute popped all, padding, last markers
//! }
//! ```
//!
//! # Reading ahead
//!
//! A sender may reserve blocks ahead of the one it casts next: up to `window - 1` of them,
//! in order, each once its own compute popped the block that was in its slot. It reads each
//! reserved block's pages with [`read_tag`](Broadcast::read_tag) (`NocMulticast::read_tagged`),
//! so `cast` waits for that block's reads only, while the reads of later blocks are still in
//! flight:
//!
//! ```text
//! for block in 0..blocks {
//!     while reserved < blocks.min(block + window)
//!         && (reserved == block || b.reserve_ready(reserved)) {
//!         let slot = b.reserve(&mut dm, reserved).await?;
//!         // read block `reserved`'s pages into `slot` with read_tagged(.., b.read_tag(reserved))
//!         reserved += 1;
//!     }
//!     b.cast(&mut dm, block).await?;
//! }
//! ```
//!
//! Reading ahead changes no rule: a slot is still written on the receivers only after every
//! receiver's DONE says its block left, and on the sender only after its own compute popped it
//! and the multicast that sent its previous block left (`cast` sends VALID without waiting for
//! the data to leave, so `reserve` asks `writes_sent` when no answer since that multicast said
//! so). When no block beyond `block` is reserved, `cast` waits for every read, tagged or
//! not, so a sender that never reads ahead may read with plain `read`.
//!
//! # What it guarantees
//!
//! * The sender multicasts block `b` into slot `b % window` of every receiver only when every
//!   receiver's DONE marker of this command says its compute popped block `b - window`; its own
//!   compute gets every block through its own buffer.
//! * A receiver hands block `b` to its compute only when its VALID word of this command says at
//!   least `b + 1` blocks were cast. VALID and data travel on the same NoC, to the same
//!   rectangle, ordered, so the data is there before the VALID that announces it.
//! * Receivers send their DONE markers from inside `arrive` (also while waiting) and `finish`,
//!   from their marker-source slot, with an ordinary NoC write (never an inline write: broken
//!   into L1 on Blackhole), and change the source only once `writes_sent` says the previous one
//!   left.
//! * `finish` returns only when this core's compute popped every block, the buffer is padded to
//!   whole windows (so the next command starts at slot 0 everywhere), and this core's last
//!   transfers are acknowledged: the sender's multicasts, a receiver's final marker. The sender
//!   also waits for every receiver's final marker, so when any core of a broadcast reports, no
//!   word of this command is still in flight towards it (but with no block: a receiver's final
//!   marker then says 0 blocks, which no wait of any command takes, and the sender does not
//!   wait for it); it then clears its DONE-BY table and a receiver its VALID word.
//! * Every call gives up within one run's wait limit, or on the tile's stop flag, which every
//!   call (`reserve`, `cast`, `arrive`, `finish`, `handshake`) reads once, after the checks
//!   every call shares (an earlier give-up, the wrong role or block, a call after `finish`
//!   are returned first), whether or not it then waits; a wait also reads it while its condition does not hold. The call takes its
//!   deadline (now + the limit) once, at its first wait that does not hold at once, and every
//!   wait inside it ends by that deadline, not one limit after the wait's own start (a call
//!   whose waits all hold at once reads neither the clock nor the limit). The slack past the deadline is bounded
//!   and does not grow with the limit: one poll of the condition of each wait still to come (a
//!   wait past its deadline polls once, so a condition that holds is taken; at most five waits
//!   in a call) and the call's steps that do not wait (control-block stores, at most 18 in the
//!   sender's `finish`: 15 DONE-BY words, VALID and the two statistics; one buffer push; the
//!   give-up record). A call that fails
//!   records the first give-up of this command in the broadcast's area (where, broadcast, block,
//!   sequence), and every later call returns the same [`GiveUp`] at once. A sender whose wait
//!   for markers or for its own NoC barriers times out (`broadcast_done`) also sets its tile's
//!   stop flag.
//!
//! # The handshake peer
//!
//! [`Broadcast::handshake`] (with `reserve`, `finish`) runs a tt-metal-style handshake over the
//! same words and buffer, with the guarantees above (`handshake`'s docs say the rest).
//!
//! # Where each part lives
//!
//! `state` holds the core's state ([`Broadcast`]), its accessors and the give-up bookkeeping
//! every call shares (`admit`, `settle`, `give_up_with`). The calls, by what they do: `setup`
//! (`new`, `refuse`: the words' checks), `sender` (`reserve`, `reserve_ready`, `read_tag`,
//! `read`, `cast`), `receiver` (`arrive`), `finish`, `handshake` (the peer's call and its
//! waits); the pieces they share: `pump` (a receiver's DONE markers), `wait` (the deadline and
//! the one wait loop), `cause` (why a call gave up), `context`, `part` (sender, receiver or
//! excluded).

mod cause;
mod context;
mod finish;
mod handshake;
mod part;
mod pump;
mod receiver;
mod sender;
mod setup;
mod state;
mod wait;

pub use cause::{Cause, GiveUp};
pub use context::{Context, refuse_without_buffer};
pub use state::Broadcast;
