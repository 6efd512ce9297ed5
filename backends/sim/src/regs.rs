//! A Tensix tile's registers as a host reaches them through a TLB window (local addresses at
//! and above `0xFFB0_0000`, which are not L1): soft reset, the reset-PC overrides and PCs, the
//! 64-bit wall clock, and NIU0's `NOC_ID_LOGICAL`. Addresses are blackhole-pac's
//! (`tensix.rs`); every other register address is refused by the caller.
//!
//! | Register | Address | Model |
//! |---|---|---|
//! | `RISCV_DEBUG_REG_SOFT_RESET_0` | `0xFFB1_21B0` | read/write; bit set = core held in reset |
//! | `TRISC_RESET_PC_OVERRIDE` | `0xFFB1_2234` | read/write; bit `i` makes TRISC`i` start at its PC register |
//! | TRISC0..2 reset PCs | `0xFFB1_2228/222C/2230` | read/write |
//! | `NCRISC_RESET_PC_OVERRIDE` | `0xFFB1_223C` | read/write; bit 0 makes NCRISC start at its PC register |
//! | NCRISC reset PC | `0xFFB1_2238` | read/write |
//! | `WALL_CLOCK_L` | `0xFFB1_21F0` | read only: the cycle's low half; latches the high half |
//! | `WALL_CLOCK_H_LIVE` | `0xFFB1_21F4` | read only: the cycle's high half now |
//! | `WALL_CLOCK_H_LATCHED` | `0xFFB1_21F8` | read only: the high half at the last `WALL_CLOCK_L` read |
//! | `NOC_ID_LOGICAL` (NIU0) | `0xFFB2_0148` | read only: x in bits 0..5, y in 6..11 |
//!
//! Leaf module: imports only the leaf `boot`.

use blackhole_pac::tensix;

use crate::boot::Core;

/// What a register write did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum RegWrite {
    /// A register other than soft reset took the value.
    Stored,
    /// The soft-reset register went from `old` to `new`.
    SoftReset { old: u32, new: u32 },
}

/// One tile's modelled registers.
#[derive(Clone, Debug)]
pub(crate) struct TileRegs {
    soft_reset: u32,
    trisc_override: u32,
    trisc_pc: [u32; 3],
    ncrisc_override: u32,
    ncrisc_pc: u32,
    wall_h_latched: u32,
}

impl TileRegs {
    /// Registers after reset, with soft reset `soft_reset`.
    pub(crate) fn new(soft_reset: u32) -> Self {
        Self {
            soft_reset,
            trisc_override: 0,
            trisc_pc: tensix::TRISC_RESET_PC,
            ncrisc_override: 0,
            ncrisc_pc: tensix::NCRISC_RESET_PC,
            wall_h_latched: 0,
        }
    }

    /// Whether `addr` is a register this model knows (so an access there is not refused).
    pub(crate) fn known(addr: u32) -> bool {
        Self::writable(addr)
            || [
                tensix::WALL_CLOCK_L,
                tensix::WALL_CLOCK_H_LIVE,
                tensix::WALL_CLOCK_H_LATCHED,
                tensix::NOC_ID_LOGICAL_ADDR,
            ]
            .contains(&addr)
    }

    /// Whether a host may write `addr`.
    pub(crate) fn writable(addr: u32) -> bool {
        addr == tensix::SOFT_RESET_ADDR
            || addr == tensix::TRISC_RESET_PC_OVERRIDE
            || addr == tensix::NCRISC_RESET_PC_OVERRIDE
            || addr == tensix::NCRISC_RESET_PC_REG
            || tensix::TRISC_RESET_PC_REGS.contains(&addr)
    }

    /// Reads the register at `addr` at cycle `now`; `node_id` is the value of
    /// `NOC_ID_LOGICAL`. `None` for an address the model does not know.
    pub(crate) fn read(&mut self, addr: u32, now: u64, node_id: u32) -> Option<u32> {
        Some(match addr {
            tensix::SOFT_RESET_ADDR => self.soft_reset,
            tensix::TRISC_RESET_PC_OVERRIDE => self.trisc_override,
            tensix::NCRISC_RESET_PC_OVERRIDE => self.ncrisc_override,
            tensix::NCRISC_RESET_PC_REG => self.ncrisc_pc,
            tensix::WALL_CLOCK_L => {
                self.wall_h_latched = (now >> 32) as u32;
                now as u32
            }
            tensix::WALL_CLOCK_H_LIVE => (now >> 32) as u32,
            tensix::WALL_CLOCK_H_LATCHED => self.wall_h_latched,
            tensix::NOC_ID_LOGICAL_ADDR => node_id,
            a => {
                let i = tensix::TRISC_RESET_PC_REGS.iter().position(|&r| r == a)?;
                self.trisc_pc[i]
            }
        })
    }

    /// Writes `value` to the register at `addr`; `None` (nothing written) for an address that
    /// is not writable.
    pub(crate) fn write(&mut self, addr: u32, value: u32) -> Option<RegWrite> {
        match addr {
            tensix::SOFT_RESET_ADDR => {
                let old = self.soft_reset;
                self.soft_reset = value;
                return Some(RegWrite::SoftReset { old, new: value });
            }
            tensix::TRISC_RESET_PC_OVERRIDE => self.trisc_override = value,
            tensix::NCRISC_RESET_PC_OVERRIDE => self.ncrisc_override = value,
            tensix::NCRISC_RESET_PC_REG => self.ncrisc_pc = value,
            a => {
                let i = tensix::TRISC_RESET_PC_REGS.iter().position(|&r| r == a)?;
                self.trisc_pc[i] = value;
            }
        }
        Some(RegWrite::Stored)
    }

    /// The soft-reset register's value.
    pub(crate) fn read_soft_reset(&self) -> u32 {
        self.soft_reset
    }

    /// What a BRISC image does to start the tile's cores `cores` (their soft-reset bits) at
    /// their default reset PCs (on Wormhole, where the host cannot): every override off, then
    /// their bits cleared. Returns the soft-reset register before and after.
    pub(crate) fn start_at_default_pcs(&mut self, cores: u32) -> (u32, u32) {
        self.trisc_override = 0;
        self.ncrisc_override = 0;
        let old = self.soft_reset;
        self.soft_reset = old & !cores;
        (old, self.soft_reset)
    }

    /// The PC `core` starts at when released: BRISC 0x0 (fixed); NCRISC and TRISCs their PC
    /// register when their override bit is set, else the default reset PC.
    pub(crate) fn reset_pc(&self, core: Core) -> u32 {
        let trisc = |i: usize| {
            if self.trisc_override & (1 << i) != 0 {
                self.trisc_pc[i]
            } else {
                tensix::TRISC_RESET_PC[i]
            }
        };
        match core {
            Core::Brisc => tensix::BRISC_RESET_PC,
            Core::Trisc0 => trisc(0),
            Core::Trisc1 => trisc(1),
            Core::Trisc2 => trisc(2),
            Core::Ncrisc if self.ncrisc_override & 1 != 0 => self.ncrisc_pc,
            Core::Ncrisc => tensix::NCRISC_RESET_PC,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcs_overrides_and_the_latch() {
        let mut r = TileRegs::new(tensix::SOFT_RESET_ALL_CORES);
        assert_eq!(r.reset_pc(Core::Ncrisc), 0x1_2000);
        r.write(tensix::NCRISC_RESET_PC_REG, 0x2_0000).unwrap();
        assert_eq!(r.reset_pc(Core::Ncrisc), 0x1_2000, "no override yet");
        r.write(tensix::NCRISC_RESET_PC_OVERRIDE, 1).unwrap();
        assert_eq!(r.reset_pc(Core::Ncrisc), 0x2_0000);
        r.write(tensix::TRISC_RESET_PC_REGS[0], 0x7000).unwrap();
        r.write(tensix::TRISC_RESET_PC_OVERRIDE, 0b001).unwrap();
        assert_eq!(r.reset_pc(Core::Trisc0), 0x7000);
        assert_eq!(r.reset_pc(Core::Trisc1), 0xA000);
        let now = (5u64 << 32) | 9;
        assert_eq!(r.read(tensix::WALL_CLOCK_H_LATCHED, now, 0), Some(0));
        assert_eq!(r.read(tensix::WALL_CLOCK_L, now, 0), Some(9));
        assert_eq!(
            r.read(tensix::WALL_CLOCK_H_LIVE, now + (1 << 32), 0),
            Some(6)
        );
        assert_eq!(
            r.read(tensix::WALL_CLOCK_H_LATCHED, now + (1 << 32), 0),
            Some(5)
        );
        assert_eq!(
            r.write(tensix::SOFT_RESET_ADDR, 0),
            Some(RegWrite::SoftReset {
                old: tensix::SOFT_RESET_ALL_CORES,
                new: 0
            })
        );
        assert_eq!(r.write(tensix::WALL_CLOCK_L, 1), None);
        assert!(TileRegs::known(tensix::WALL_CLOCK_L));
        assert!(!TileRegs::known(0xFFB0_0000));
    }
}
