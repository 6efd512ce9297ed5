//! The messages between the host and the ttsim server: a one-byte opcode and little-endian
//! fields, over the server's standard input (requests) and a duplicate of its standard output
//! (replies). Only what returns data is answered, and a clock step is answered so the host
//! learns at once when the simulator stopped inside it; writes are not, so a burst of writes
//! streams without a round trip each (the next reply, or the end of the pipe, tells whether
//! they landed).
//!
//! Both ends are in this crate, but the server is a binary of its own that may have been built
//! from other sources: the greeting [`HELLO`] carries the format's version.

use std::io::{self, Read, Write};

/// The server's greeting, sent once `libttsim_init` returned: `KMRBTTS` and the wire format's
/// version, one character, raised with every change of the requests' encoding, so a server
/// built from older sources is refused by name rather than misread.
pub const HELLO: [u8; 8] = *b"KMRBTTS2";

/// The most bytes one read or write request moves (the host splits larger accesses).
pub const MAX_TRANSFER: u32 = 1 << 20;

const OP_CONFIG_READ: u8 = 1;
const OP_READ: u8 = 2;
const OP_WRITE: u8 = 3;
const OP_CLOCK: u8 = 4;
const OP_EXIT: u8 = 5;

/// One request of the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// `libttsim_pci_config_rd32(bus_device_function, offset)`; answered with the word.
    ConfigRead {
        /// PCI bus/device/function (device in bits 3..8).
        bdf: u32,
        /// 4-byte aligned config-space offset.
        offset: u32,
    },
    /// `libttsim_pci_mem_rd_bytes(paddr, _, len)`; answered with `len` bytes.
    Read {
        /// ttsim's physical address (a BAR base plus an offset).
        paddr: u64,
        /// Bytes, at most [`MAX_TRANSFER`].
        len: u32,
    },
    /// `libttsim_pci_mem_wr_bytes(paddr, data, len)`; not answered.
    Write {
        /// ttsim's physical address.
        paddr: u64,
        /// The bytes, at most [`MAX_TRANSFER`].
        data: Vec<u8>,
    },
    /// `libttsim_clock(steps)`; answered with one byte once it returned.
    Clock {
        /// Clock steps to run.
        steps: u32,
    },
    /// `libttsim_exit()`, then the server ends.
    Exit,
}

fn u32_at(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn u64_at(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn too_long(len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("a transfer of {len} bytes (at most {MAX_TRANSFER} per request)"),
    )
}

impl Request {
    /// Writes the request.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        match self {
            Self::ConfigRead { bdf, offset } => {
                w.write_all(&[OP_CONFIG_READ])?;
                w.write_all(&bdf.to_le_bytes())?;
                w.write_all(&offset.to_le_bytes())
            }
            Self::Read { paddr, len } => {
                w.write_all(&[OP_READ])?;
                w.write_all(&paddr.to_le_bytes())?;
                w.write_all(&len.to_le_bytes())
            }
            Self::Write { paddr, data } => {
                let len = u32::try_from(data.len())
                    .ok()
                    .filter(|&l| l <= MAX_TRANSFER)
                    .ok_or_else(|| too_long(data.len() as u64))?;
                w.write_all(&[OP_WRITE])?;
                w.write_all(&paddr.to_le_bytes())?;
                w.write_all(&len.to_le_bytes())?;
                w.write_all(data)
            }
            Self::Clock { steps } => {
                w.write_all(&[OP_CLOCK])?;
                w.write_all(&steps.to_le_bytes())
            }
            Self::Exit => w.write_all(&[OP_EXIT]),
        }
    }

    /// Reads the next request; `None` at the end of the stream (the host closed it).
    pub fn read_from(r: &mut impl Read) -> io::Result<Option<Self>> {
        let mut op = [0];
        if r.read(&mut op)? == 0 {
            return Ok(None);
        }
        Ok(Some(match op[0] {
            OP_CONFIG_READ => Self::ConfigRead {
                bdf: u32_at(r)?,
                offset: u32_at(r)?,
            },
            OP_READ => {
                let paddr = u64_at(r)?;
                let len = u32_at(r)?;
                if len > MAX_TRANSFER {
                    return Err(too_long(len.into()));
                }
                Self::Read { paddr, len }
            }
            OP_WRITE => {
                let paddr = u64_at(r)?;
                let len = u32_at(r)?;
                if len > MAX_TRANSFER {
                    return Err(too_long(len.into()));
                }
                let mut data = vec![0; len as usize];
                r.read_exact(&mut data)?;
                Self::Write { paddr, data }
            }
            OP_CLOCK => Self::Clock { steps: u32_at(r)? },
            OP_EXIT => Self::Exit,
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("unknown request {other}"),
                ));
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_reads_back_as_written() {
        let requests = [
            Request::ConfigRead {
                bdf: 1 << 3,
                offset: 0x10,
            },
            Request::Read {
                paddr: 0x1_0000_0000,
                len: 64,
            },
            Request::Write {
                paddr: 0x8_0000_0004,
                data: vec![1, 2, 3, 4, 5, 6, 7, 8],
            },
            Request::Clock { steps: 1000 },
            Request::Exit,
        ];
        let mut bytes = Vec::new();
        for r in &requests {
            r.write_to(&mut bytes).unwrap();
        }
        let mut at = &bytes[..];
        for r in &requests {
            assert_eq!(Request::read_from(&mut at).unwrap().as_ref(), Some(r));
        }
        assert_eq!(Request::read_from(&mut at).unwrap(), None);
    }

    #[test]
    fn a_transfer_past_the_limit_is_refused_both_ways() {
        let big = Request::Write {
            paddr: 0,
            data: vec![0; MAX_TRANSFER as usize + 4],
        };
        let e = big.write_to(&mut Vec::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "a transfer of {} bytes (at most {MAX_TRANSFER} per request)",
                MAX_TRANSFER + 4
            )
        );
        let mut bytes = vec![OP_READ];
        bytes.extend(0u64.to_le_bytes());
        bytes.extend((MAX_TRANSFER + 1).to_le_bytes());
        let e = Request::read_from(&mut &bytes[..]).unwrap_err();
        assert!(e.to_string().contains("at most"), "{e}");
        let e = Request::read_from(&mut &[9u8][..]).unwrap_err();
        assert!(e.to_string().contains("unknown request 9"), "{e}");
    }
}
