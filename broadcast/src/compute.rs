//! Compute side of the broadcast: what the compute kernel of every core of a broadcast calls.
//!
//! ```text
//! for block in 0..blocks {
//!     receive(&mut compute, &mut cb, pages).await?;   // the block's pages are ready
//!     // read pages 0..pages with cb.read_page(..)
//!     done(&mut cb, pages)?;                          // pop; the DM kernel sends the marker
//! }
//! end(&mut compute, &mut cb, pages, window, blocks).await?;  // pops finish's padding
//! ```
//!
//! Compute gives up like every other wait (wait limit, stop flag) but records nothing: the
//! broadcast area of a core has one writer, the data-movement kernel running the broadcast.
//! The runtime reports a compute give-up with the tile's report. `receive` (and its variants)
//! and `end` read the tile's stop flag once a call, whether or not their pages are ready at
//! once; `done` only pops and takes no handle to read it with.

use komorebi_hal::cb::{self, CircularBuffer, Error as _};
use komorebi_hal::control::{self, ControlBlock};
use komorebi_hal::wait::{WaitError, wait_until};
use komorebi_hal::{Compute, Pause};

use crate::area::padding_blocks;

/// Why a compute call gave up.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ComputeError {
    /// The wait limit passed waiting for pages.
    TimedOut {
        /// Cycles waited.
        waited: u64,
    },
    /// The tile was asked to stop.
    Stopped {
        /// Cycles waited.
        waited: u64,
    },
    /// A circular-buffer call failed.
    Cb(cb::ErrorKind),
    /// A control-block call failed.
    Control(control::ErrorKind),
    /// `pages`, `window` or `blocks` out of range (window 1..=8, pages >= 1, blocks <= 32 767).
    Misuse,
}

impl core::fmt::Display for ComputeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TimedOut { waited } => write!(f, "compute waited {waited} cycles for a block"),
            Self::Stopped { waited } => write!(f, "compute stopped after {waited} cycles"),
            Self::Cb(k) => write!(f, "circular buffer: {k}"),
            Self::Control(k) => write!(f, "control block: {k}"),
            Self::Misuse => {
                f.write_str("broadcast compute call with pages, window or blocks out of range")
            }
        }
    }
}

impl core::error::Error for ComputeError {}

/// Waits until the next block's `pages` pages are ready; read them by index 0..pages.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub async fn receive<K, P, C>(
    compute: &mut Compute<K, P>,
    cb: &mut C,
    pages: u16,
) -> Result<(), ComputeError>
where
    K: ControlBlock,
    P: Pause,
    C: CircularBuffer,
{
    receive_unless(compute, cb, pages, |_| false).await
}

/// [`receive`], ending early, without the pages, once `gone` holds: for a consumer that learns
/// at once by other means that its producer will push none of them (the broadcast handler's
/// compute reads its producer's refusal of its words from the broadcast area). `gone` is looked
/// at each round after the pages, so pages that are ready are taken first; whether the pages
/// are ready (`pages_ready`) tells which ended the wait (`gone` may have come to hold after
/// the pages did).
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub async fn receive_unless<K, P, C, G>(
    compute: &mut Compute<K, P>,
    cb: &mut C,
    pages: u16,
    mut gone: G,
) -> Result<(), ComputeError>
where
    K: ControlBlock,
    P: Pause,
    C: CircularBuffer,
    G: FnMut(&mut K) -> bool,
{
    receive_when(compute, cb, pages, |c, ready| ready || gone(c)).await
}

/// The most general wait for a block: until `ends(ctrl, ready)` holds, `ready` saying whether
/// the block's `pages` pages are ready; within the wait limit and while the tile runs, as
/// [`receive`]. `ends(c, ready)` = `ready || gone(c)` is [`receive_unless`]; the broadcast
/// handler's compute also holds a command's first block back until its producer's set-up
/// word says the pages in the buffer are this command's. One closure for every block keeps
/// one copy of the wait in the firmware's compute image.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub async fn receive_when<K, P, C, E>(
    compute: &mut Compute<K, P>,
    cb: &mut C,
    pages: u16,
    mut ends: E,
) -> Result<(), ComputeError>
where
    K: ControlBlock,
    P: Pause,
    C: CircularBuffer,
    E: FnMut(&mut K, bool) -> bool,
{
    if pages == 0 {
        return Err(ComputeError::Misuse);
    }
    let Compute { ctrl, pause } = compute;
    // "Every call ... checks the tile's stop flag" (the specification): once a call, whether
    // or not the pages are ready at once (the wait looks only while they are not; decisions
    // D58). `done` takes no handle to look with, as the specification's `broadcast_done`.
    match ctrl.stop_requested() {
        Ok(false) => {}
        Ok(true) => return Err(ComputeError::Stopped { waited: 0 }),
        Err(e) => return Err(ComputeError::Control(control::Error::kind(&e))),
    }
    match wait_until(ctrl, pause, |c| {
        cb.pages_ready().map(|ready| ends(c, ready >= pages))
    })
    .await
    {
        Ok(_) => Ok(()),
        Err(WaitError::TimedOut { waited }) => Err(ComputeError::TimedOut { waited }),
        Err(WaitError::Stopped { waited }) => Err(ComputeError::Stopped { waited }),
        Err(WaitError::Control(k)) => Err(ComputeError::Control(k)),
        Err(WaitError::Condition(e)) => Err(ComputeError::Cb(e.kind())),
    }
}

/// Done with the block: pops its `pages` pages (the data-movement kernel sends the marker).
pub fn done<C: CircularBuffer>(cb: &mut C, pages: u16) -> Result<(), ComputeError> {
    cb.pop(pages).map_err(|e| ComputeError::Cb(e.kind()))
}

/// After the last block: waits for and pops the padding `finish` pushed, so the next command
/// starts at slot 0.
#[cfg_attr(komorebi_blocking, maybe_async::must_be_sync)]
pub async fn end<K, P, C>(
    compute: &mut Compute<K, P>,
    cb: &mut C,
    pages: u16,
    window: u8,
    blocks: u32,
) -> Result<(), ComputeError>
where
    K: ControlBlock,
    P: Pause,
    C: CircularBuffer,
{
    if pages == 0
        || window == 0
        || window > crate::args::MAX_WINDOW
        || blocks > crate::args::MAX_BLOCKS
    {
        return Err(ComputeError::Misuse);
    }
    let pad = padding_blocks(window, blocks) * pages as u32;
    if pad == 0 {
        return Ok(());
    }
    let pad = u16::try_from(pad).map_err(|_| ComputeError::Misuse)?;
    receive_when(compute, cb, pad, |_, ready| ready).await?;
    cb.pop(pad).map_err(|e| ComputeError::Cb(e.kind()))
}
