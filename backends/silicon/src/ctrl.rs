//! `ControlBlock` on the tile's L1 control block.

use komorebi_hal::control::{self, ErrorKind};
use komorebi_hal::{ControlLayout, L1Addr};

use crate::chip::Chip;
use crate::error::{Error, Why};
use crate::order::{fence, publish};

type CtrlError = Error<ErrorKind>;

/// Where a [`SiliconCtrl`] finds its control block, how the block is laid out, and the clock it
/// reads.
///
/// [`Placed`] names them at run time (`SiliconCtrl::from_ptr`, what the host tests lay over a
/// buffer); an image that knows them when it is built (the firmware: the ABI's one control
/// block at a fixed L1 address) names them with a type whose methods return constants, so
/// every check of a constant offset is decided when the image is built rather than at each
/// call.
///
/// # Safety
/// `block` must return a 4-byte aligned pointer valid for volatile reads and writes of
/// `layout().len` bytes for as long as a handle over the place is used, and every call of
/// `block` and `layout` must return the same value.
pub unsafe trait ControlPlace {
    /// The control block's first word.
    fn block(&self) -> *mut u32;
    /// Where the block is in L1 and where its stop word and wait limit are.
    fn layout(&self) -> ControlLayout;
    /// The cycle clock (on the baby cores: `cycles`, the tile's wall clock).
    fn now(&self) -> u64;
}

/// A control block placed at run time: [`SiliconCtrl::from_ptr`]'s.
#[derive(Copy, Clone, Debug)]
pub struct Placed {
    block: *mut u32,
    layout: ControlLayout,
    clock: fn() -> u64,
}

// SAFETY: `from_ptr`, the only way to build one, has the trait's contract as its own.
unsafe impl ControlPlace for Placed {
    #[inline]
    fn block(&self) -> *mut u32 {
        self.block
    }
    #[inline]
    fn layout(&self) -> ControlLayout {
        self.layout
    }
    #[inline]
    fn now(&self) -> u64 {
        (self.clock)()
    }
}

/// The tile's control block as one kernel sees it, on chip `C` (whose cores' cache decides
/// the fences).
#[derive(Debug)]
pub struct SiliconCtrl<C: Chip, P = Placed> {
    place: P,
    chip: core::marker::PhantomData<C>,
}

/// The tile's wall clock (`RISCV_DEBUG_REG_WALL_CLOCK_*`, one 64-bit AICLK counter per tile,
/// the one the host reads as the device's time), read live-high, low, live-high for a
/// consistent value. Not the core's `cycle` CSRs: those count the same clock on a card (ISA
/// `BabyRISCV/CSRs.md`), but ttsim does not implement them ("UnsupportedFunctionality in
/// read_csr: csr=0xc80"), and tt-metal's firmware times with the wall clock too. The live high
/// half, not the latched one, because the latch is shared by the tile's five cores.
///
/// The registers are at the same place on Blackhole and Wormhole (`0xFFB1_21F0` low,
/// `0xFFB1_21F4` live high; `blackhole_pac::tensix`, `wormhole_pac::tensix`).
///
/// Not inlined: a kernel reads the clock at every wait and the loop is the same each time.
#[cfg(target_arch = "riscv32")]
#[inline(never)]
pub fn cycles() -> u64 {
    use blackhole_pac::tensix::{WALL_CLOCK_H_LIVE, WALL_CLOCK_L};
    const _: () = assert!(
        WALL_CLOCK_L as usize == wormhole_pac::tensix::WALL_CLOCK_L
            && WALL_CLOCK_H_LIVE as usize == wormhole_pac::tensix::WALL_CLOCK_H_LIVE
    );
    let reg = |a: u32| a as usize as *const u32;
    loop {
        // SAFETY: the wall-clock registers are mapped on every Tensix baby core; reading the
        // live high half and the low half has no side effect this code relies on (the low
        // half's latch of the high half is not used).
        let (hi, lo, hi2) = unsafe {
            (
                reg(WALL_CLOCK_H_LIVE).read_volatile(),
                reg(WALL_CLOCK_L).read_volatile(),
                reg(WALL_CLOCK_H_LIVE).read_volatile(),
            )
        };
        if hi == hi2 {
            return (hi as u64) << 32 | lo as u64;
        }
    }
}

impl<C: Chip> SiliconCtrl<C, Placed> {
    /// The control block at `block` (its first word), laid out as `layout`, with the cycle
    /// clock `clock` (on the baby cores: `komorebi_silicon::cycles`, the tile's wall clock).
    ///
    /// # Safety
    /// `block` must be 4-byte aligned and valid for volatile reads and writes of `layout.len`
    /// bytes for as long as the handle is used.
    pub unsafe fn from_ptr(block: *mut u32, layout: ControlLayout, clock: fn() -> u64) -> Self {
        Self {
            place: Placed {
                block,
                layout,
                clock,
            },
            chip: core::marker::PhantomData,
        }
    }
}

impl<C: Chip, P: ControlPlace> SiliconCtrl<C, P> {
    /// The control block `place` names (the trait's contract is what makes this safe).
    pub fn at(place: P) -> Self {
        Self {
            place,
            chip: core::marker::PhantomData,
        }
    }

    fn word(&self, offset: u32) -> Result<*mut u32, CtrlError> {
        if offset % 4 != 0 {
            return Err(Error {
                kind: ErrorKind::Misaligned,
                why: Why::ControlMisaligned,
            });
        }
        if offset >= self.place.layout().len {
            return Err(Error {
                kind: ErrorKind::OutOfRange,
                why: Why::ControlBeyond,
            });
        }
        Ok(self.place.block().wrapping_add(offset as usize / 4))
    }
}

impl<C: Chip, P> control::ErrorType for SiliconCtrl<C, P> {
    type Error = CtrlError;
}

impl<C: Chip, P: ControlPlace> control::ControlBlock for SiliconCtrl<C, P> {
    fn len(&self) -> u32 {
        self.place.layout().len
    }

    fn addr(&self, offset: u32) -> Result<L1Addr, CtrlError> {
        self.word(offset)?;
        L1Addr::new(self.place.layout().base + offset).map_err(|_| Error {
            kind: ErrorKind::Misaligned,
            why: Why::ControlBase,
        })
    }

    fn load(&mut self, offset: u32) -> Result<u32, CtrlError> {
        let p = self.word(offset)?;
        // Other cores write these words over the NoC: no stale L0 line.
        fence::<C>();
        // SAFETY: `from_ptr`'s contract; `word` checked the offset.
        Ok(unsafe { p.read_volatile() })
    }

    /// The first and the last offset checked (every one between is then in range, and aligned
    /// when the stride is), one [`fence`] for all the loads (a `fence` only where the L0 data
    /// cache is on).
    fn load_words(&mut self, first: u32, stride: u32, words: &mut [u32]) -> Result<(), CtrlError> {
        let Some(last) = words.len().checked_sub(1) else {
            return Ok(());
        };
        let p = self.word(first)?;
        if last > 0 {
            // The stride keeps every offset aligned as the first; the last's range covers the
            // rest.
            if stride % 4 != 0 {
                return Err(Error {
                    kind: ErrorKind::Misaligned,
                    why: Why::ControlMisaligned,
                });
            }
            let end = (last as u32)
                .checked_mul(stride)
                .and_then(|span| span.checked_add(first))
                .ok_or(Error {
                    kind: ErrorKind::OutOfRange,
                    why: Why::ControlBeyond,
                })?;
            self.word(end)?;
        }
        fence::<C>();
        let step = (stride / 4) as usize;
        // Four loads before their four stores: a baby core's load overlaps the loads after it
        // but not an instruction that uses its value, so a load stored at once costs its whole
        // latency (8 cycles from L1) and four in a row cost about one each (decisions D37).
        let mut chunks = words.chunks_exact_mut(4);
        let mut q = p;
        for c in &mut chunks {
            // SAFETY: `from_ptr`'s contract; the first and last offsets were checked and every
            // one between lies between them, a whole number of words apart.
            let v = unsafe {
                [
                    q.read_volatile(),
                    q.wrapping_add(step).read_volatile(),
                    q.wrapping_add(2 * step).read_volatile(),
                    q.wrapping_add(3 * step).read_volatile(),
                ]
            };
            c.copy_from_slice(&v);
            q = q.wrapping_add(4 * step);
        }
        for w in chunks.into_remainder() {
            // SAFETY: as above.
            *w = unsafe { q.read_volatile() };
            q = q.wrapping_add(step);
        }
        Ok(())
    }

    fn store(&mut self, offset: u32, value: u32) -> Result<(), CtrlError> {
        let p = self.word(offset)?;
        // Read back before returning, so an NIU command issued next (a VALID or marker
        // multicast from this word) reads `value`, not what the store queue still holds.
        // SAFETY: as for `load`.
        unsafe { publish::<C>(p, value) };
        Ok(())
    }

    fn stop_requested(&mut self) -> Result<bool, CtrlError> {
        Ok(self.load(self.place.layout().stop_offset)? != 0)
    }

    fn request_stop(&mut self) -> Result<(), CtrlError> {
        self.store(self.place.layout().stop_offset, 1)
    }

    fn wait_limit(&mut self) -> Result<u64, CtrlError> {
        let lo = self.load(self.place.layout().wait_limit_offset)? as u64;
        let hi = self.load(self.place.layout().wait_limit_offset + 4)? as u64;
        Ok(hi << 32 | lo)
    }

    fn now(&mut self) -> u64 {
        self.place.now()
    }
}
