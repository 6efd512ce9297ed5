//! A Tensix baby core's register space above its local data RAM, as the firmware reaches it:
//! which register an address is ([`decode`]), the command-buffer registers of the two NIUs
//! ([`CmdBufRegs`]), and a command buffer's words read as one NoC command ([`CmdBufRegs::command`]).
//! The effects (issuing a command, counters, stream counters) are the firmware front's
//! (`core.rs`); this module only names and holds.
//!
//! Addresses are blackhole-pac's: NIU0 at `0xFFB2_0000`, NIU1 at `0xFFB3_0000` (four command
//! buffers at `0x800` steps, `NOC_CFG` at `+0x100`, status counters at `+0x200`); the overlay
//! streams at `0xFFB4_0000` (`0x1000` a stream); the tile's control registers at
//! `0xFFB1_2000..` (soft reset, reset PCs, wall clock).
//!
//! Leaf module: imports nothing of the crate.

use blackhole_pac::addr::NOC_LOCAL_ADDR_MAX;
use blackhole_pac::niu::{
    self, NIU_BLOCK_BYTES, NOC_CFG_OFFSET, NOC_CMD_BUF_OFFSET, NOC_STATUS_OFFSET, NocCtrl, cmd,
};
use blackhole_pac::stream::{STREAM_BASE, STREAM_STRIDE, STREAMS};

/// What an address above local RAM is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reg {
    /// Register at byte `offset` of command buffer `buf` of NIU `noc`.
    Cmd { noc: u8, buf: u8, offset: u32 },
    /// `NOC_CFG(index)` of NIU `noc`.
    Cfg { noc: u8, index: u32 },
    /// Status counter `index` of NIU `noc`.
    Status { noc: u8, index: u32 },
    /// Register `index` of overlay stream `stream`.
    Stream { stream: u8, index: u32 },
    /// A tile control register (`regs.rs` knows which).
    Tile(u32),
}

/// The register at `addr`; `None` for an address no register of the model answers.
pub(crate) fn decode(addr: u32) -> Option<Reg> {
    let niu0 = niu::NIU0_BASE as u32;
    let niu1 = niu::NIU1_BASE as u32;
    let stream_end = STREAM_BASE as u32 + (STREAMS * STREAM_STRIDE) as u32;
    let at = |base: u32| addr.wrapping_sub(base);
    if (niu0..niu0 + NIU_BLOCK_BYTES as u32).contains(&addr)
        || (niu1..niu1 + NIU_BLOCK_BYTES as u32).contains(&addr)
    {
        let noc = u8::from(addr >= niu1);
        let off = at(if noc == 0 { niu0 } else { niu1 });
        let (buf, within) = (
            off / NOC_CMD_BUF_OFFSET as u32,
            off % NOC_CMD_BUF_OFFSET as u32,
        );
        return Some(match within {
            o if o < NOC_CFG_OFFSET as u32 => Reg::Cmd {
                noc,
                buf: buf as u8,
                offset: o,
            },
            o if buf == 0 && o < NOC_STATUS_OFFSET as u32 => Reg::Cfg {
                noc,
                index: (o - NOC_CFG_OFFSET as u32) / 4,
            },
            o if buf == 0 && o < NOC_STATUS_OFFSET as u32 + 4 * 0x60 => Reg::Status {
                noc,
                index: (o - NOC_STATUS_OFFSET as u32) / 4,
            },
            _ => return None,
        });
    }
    if (STREAM_BASE as u32..stream_end).contains(&addr) {
        let off = at(STREAM_BASE as u32);
        return Some(Reg::Stream {
            stream: (off / STREAM_STRIDE as u32) as u8,
            index: (off % STREAM_STRIDE as u32) / 4,
        });
    }
    (0xFFB1_2000..0xFFB1_3000)
        .contains(&addr)
        .then_some(Reg::Tile(addr))
}

/// Words of a command buffer's register file this model keeps (`NOC_TARG_ADDR_LO` ..
/// `CMD_BUF_OVFL`).
const CMD_WORDS: usize = cmd::CMD_BUF_OVFL / 4 + 1;

/// The registers software writes into one command buffer.
#[derive(Clone, Debug, Default)]
pub(crate) struct CmdBufRegs {
    words: [u32; CMD_WORDS],
    /// When the NIU takes the command last sent from here (its pipeline starts it): until then
    /// `NOC_CMD_CTRL` reads 1 and software must not write the buffer (ISA `NoC/MemoryMap.md`,
    /// `NOC_CMD_CTRL`: "Until this assignment has happened, software must not write to any
    /// fields of the initiator").
    pub(crate) taken_at: u64,
}

/// One request as a command buffer's registers describe it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Command {
    /// `NOC_CTRL`.
    pub ctrl: NocCtrl,
    /// `NOC_TARG_ADDR`: the coordinate word and the local address.
    pub targ: (u32, u64),
    /// `NOC_RET_ADDR`: likewise.
    pub ret: (u32, u64),
    /// `NOC_AT_LEN_BE`.
    pub len: u32,
    /// The transaction id of `NOC_PACKET_TAG` (bits 10..13).
    pub id: u8,
}

impl CmdBufRegs {
    /// Whether software may read or write the register at byte `offset` (the ones the model
    /// keeps; `NOC_CMD_CTRL`, `NOC_NODE_ID` and `NOC_ENDPOINT_ID` are the front's).
    pub(crate) fn stored(offset: u32) -> bool {
        offset % 4 == 0
            && (offset as usize <= cmd::NOC_SEC_CTRL || offset as usize == cmd::NOC_AT_DATA)
    }

    /// The word at `offset` (a [`CmdBufRegs::stored`] one).
    pub(crate) fn get(&self, offset: u32) -> u32 {
        self.words.get(offset as usize / 4).copied().unwrap_or(0)
    }

    /// Sets the word at `offset` (a [`CmdBufRegs::stored`] one).
    pub(crate) fn set(&mut self, offset: u32, value: u32) {
        if let Some(w) = self.words.get_mut(offset as usize / 4) {
            *w = value;
        }
    }

    fn addr(&self, lo: usize, mid: usize, hi: usize) -> (u32, u64) {
        let local = (self.get(mid as u32) as u64 & 0xF) << 32 | self.get(lo as u32) as u64;
        (self.get(hi as u32) & 0xFF_FFFF, local & NOC_LOCAL_ADDR_MAX)
    }

    /// The command the registers hold now (what writing 1 to `NOC_CMD_CTRL` sends).
    pub(crate) fn command(&self) -> Command {
        Command {
            ctrl: NocCtrl(self.get(cmd::NOC_CTRL as u32)),
            targ: self.addr(
                cmd::NOC_TARG_ADDR_LO,
                cmd::NOC_TARG_ADDR_MID,
                cmd::NOC_TARG_ADDR_HI,
            ),
            ret: self.addr(
                cmd::NOC_RET_ADDR_LO,
                cmd::NOC_RET_ADDR_MID,
                cmd::NOC_RET_ADDR_HI,
            ),
            len: self.get(cmd::NOC_AT_LEN_BE as u32),
            id: blackhole_pac::niu::PacketTag(self.get(cmd::NOC_PACKET_TAG as u32))
                .transaction_id(),
        }
    }
}

/// A unicast coordinate word: `(x, y)`.
pub(crate) fn unicast_xy(word: u32) -> (u8, u8) {
    ((word & 0x3F) as u8, (word >> 6 & 0x3F) as u8)
}

/// A multicast coordinate word: `(start, end)`.
pub(crate) fn multicast_xy(word: u32) -> ((u8, u8), (u8, u8)) {
    (
        ((word >> 12 & 0x3F) as u8, (word >> 18 & 0x3F) as u8),
        ((word & 0x3F) as u8, (word >> 6 & 0x3F) as u8),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use blackhole_pac::addr::{AddrRegs, multicast_addr, unicast_addr};

    #[test]
    fn addresses_decode_to_their_registers() {
        assert_eq!(
            decode(0xFFB2_0840),
            Some(Reg::Cmd {
                noc: 0,
                buf: 1,
                offset: 0x40
            })
        );
        assert_eq!(
            decode(0xFFB3_0148),
            Some(Reg::Cfg {
                noc: 1,
                index: 0x12
            })
        );
        assert_eq!(
            decode(0xFFB2_0280),
            Some(Reg::Status {
                noc: 0,
                index: 0x20
            })
        );
        assert_eq!(
            decode(0xFFB4_3028),
            Some(Reg::Stream {
                stream: 3,
                index: 10
            })
        );
        assert_eq!(decode(0xFFB1_21F0), Some(Reg::Tile(0xFFB1_21F0)));
        assert_eq!(
            decode(0xFFB2_0900),
            None,
            "buffer 1 has no configuration block"
        );
        assert_eq!(decode(0xFFB8_0000), None, "past stream 63");
        assert_eq!(decode(0xFFB0_0000), None, "local RAM is the hart's");
    }

    #[test]
    fn a_command_reads_back_the_addresses_software_split() {
        let mut r = CmdBufRegs::default();
        let targ = AddrRegs::split(unicast_addr(3, 4, 0x1_2345_6780).unwrap());
        let ret = AddrRegs::split(multicast_addr((1, 2), (5, 9), 0x4A40).unwrap());
        for (off, v) in [
            (cmd::NOC_TARG_ADDR_LO, targ.lo),
            (cmd::NOC_TARG_ADDR_MID, targ.mid),
            (cmd::NOC_TARG_ADDR_HI, targ.hi),
            (cmd::NOC_RET_ADDR_LO, ret.lo),
            (cmd::NOC_RET_ADDR_MID, ret.mid),
            (cmd::NOC_RET_ADDR_HI, ret.hi),
            (cmd::NOC_AT_LEN_BE, 2048),
            (cmd::NOC_CTRL, 0x32),
        ] {
            assert!(CmdBufRegs::stored(off as u32));
            r.set(off as u32, v);
        }
        let c = r.command();
        assert_eq!(unicast_xy(c.targ.0), (3, 4));
        assert_eq!(c.targ.1, 0x1_2345_6780);
        assert_eq!(multicast_xy(c.ret.0), ((1, 2), (5, 9)));
        assert_eq!(c.ret.1, 0x4A40);
        assert_eq!((c.len, c.ctrl.0), (2048, 0x32));
        assert!(!CmdBufRegs::stored(cmd::NOC_CMD_CTRL as u32));
        assert!(!CmdBufRegs::stored(cmd::NOC_NODE_ID as u32));
    }
}
