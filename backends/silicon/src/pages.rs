//! What a handle's page reads ([`NocMulticast::read_pages`]) check once for a batch: the
//! addresses the pages share, and the ports they read from, remembered with their coordinate
//! words; and the L1 range check every transfer makes. Pure functions of the chip and the
//! request.
//!
//! [`NocMulticast::read_pages`]: komorebi_hal::noc::NocMulticast::read_pages

use komorebi_hal::Xy;
use komorebi_hal::noc::{ErrorKind, PageReads};
use komorebi_hal::types::LOCAL_ADDR_BITS;

use crate::chip::Chip;
use crate::error::{Error, Why};

/// Ports a handle remembers for page reads ([`PortTable`]): the host spreads a sender's pages
/// over the eight DRAM streams.
pub(crate) const PORTS: usize = 8;

/// The ports of the last page reads ([`NocMulticast::read_pages`]) and their coordinate
/// words: a sender reads every block of a command from the same ports, so a batch compares the
/// ports it reads from with the ones remembered in their places (a half word each) rather than
/// looking each page's port up.
#[derive(Copy, Clone, Debug)]
pub(crate) struct PortTable {
    /// How many ports (0: none remembered).
    pub(crate) len: usize,
    /// Each port as [`port_key`] has it.
    pub(crate) keys: [u16; PORTS],
    /// Each port's coordinate word for the NIU.
    pub(crate) coords: [u32; PORTS],
    /// The alignment a source address needs on every one of them, less one: DRAM's when one
    /// is a DRAM port, L1's otherwise.
    pub(crate) mask: u32,
}

impl PortTable {
    /// No port remembered.
    pub(crate) const NONE: Self = Self {
        len: 0,
        keys: [0; PORTS],
        coords: [0; PORTS],
        mask: 0,
    };

    /// Whether the `count` ports a batch reads from, from `first` on (taken in turn), are the
    /// ones remembered there (the others it does not read: they need not be).
    ///
    /// The ports taken in turn are at most two straight runs, `first..` and then, past the end,
    /// `0..`: each compared in a loop of its own, with no wrap or bounds check per port.
    #[inline(always)]
    pub(crate) fn same(&self, ports: &[Xy], first: usize, count: usize) -> bool {
        let n = ports.len();
        if self.len != n || count > n {
            return false;
        }
        let end = first + count;
        let (run, wrapped) = if end <= n {
            (first..end, 0..0)
        } else {
            (first..n, 0..end - n)
        };
        self.run_same(ports, run) && self.run_same(ports, wrapped)
    }

    /// Whether `ports[run]` are the ones remembered at `run`.
    #[inline(always)]
    fn run_same(&self, ports: &[Xy], run: core::ops::Range<usize>) -> bool {
        match (ports.get(run.clone()), self.keys.get(run)) {
            (Some(p), Some(k)) => p.iter().zip(k).all(|(&p, &k)| port_key(p) == k),
            _ => false,
        }
    }
}

/// A node as one half word.
pub(crate) const fn port_key(p: Xy) -> u16 {
    p.x() as u16 | (p.y() as u16) << 8
}

/// The checks pages `from..r.count` share, made once: every page number and source
/// address exists (the last one's does), the destinations are in L1 and aligned (the
/// whole range is, and the length is a whole number of DRAM words, so of L1 words), and
/// each page is one packet. The first page's source and destination addresses when they
/// pass (every source then has the first one's alignment).
#[inline(always)]
pub(crate) fn shared<C: Chip>(from: u32, r: &PageReads<'_>) -> Option<(u64, u32)> {
    // (A DRAM word is a whole number of L1 words on both chips.)
    const { assert!(C::DRAM_READ_ALIGN % C::L1_ALIGN == 0) };
    if r.len % C::DRAM_READ_ALIGN != 0 || r.len > C::MAX_PACKET_BYTES {
        return None;
    }
    let len = r.len as u64;
    let page = r.first.checked_add(from)? as u64;
    let last = r.first.checked_add(r.count - 1)? as u64;
    let local = r.base.checked_add(page * len)?;
    if r.base.checked_add(last * len)? >> LOCAL_ADDR_BITS != 0 {
        return None;
    }
    let dst = r.dst.get().checked_add(from.checked_mul(r.len)?)?;
    let span = (r.count - from).checked_mul(r.len)?;
    check_l1::<C>(dst, span).ok()?;
    Some((local, dst))
}

/// `len` bytes at L1 address `a` lie in L1 and `a` is aligned as the chip's NIUs need: every
/// transfer's local side, a batch of page reads' destinations at once.
pub(crate) fn check_l1<C: Chip>(a: u32, len: u32) -> Result<(), Error<ErrorKind>> {
    if a % C::L1_ALIGN != 0 {
        return Err(Error {
            kind: ErrorKind::Misaligned,
            why: Why::L1Misaligned,
        });
    }
    // `a + len > L1_SIZE`, in 32 bits without overflow (no 64-bit add on the cores).
    let size = C::L1_SIZE;
    if len > size || a > size - len {
        return Err(Error {
            kind: ErrorKind::InvalidAddress,
            why: Why::BeyondL1,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xy(x: u8, y: u8) -> Xy {
        Xy::new(x, y).unwrap()
    }

    /// The rule `same` keeps: the `count` ports from `first` on, taken in turn (wrapping), are
    /// each the one remembered in its place.
    fn same_port_by_port(t: &PortTable, ports: &[Xy], first: usize, count: usize) -> bool {
        t.len == ports.len()
            && count <= ports.len()
            && (0..count).all(|k| {
                let i = (first + k) % ports.len();
                port_key(ports[i]) == t.keys[i]
            })
    }

    #[test]
    fn a_batch_s_ports_match_port_by_port_for_every_start_count_and_changed_port() {
        for n in 1..=PORTS {
            let all: [Xy; PORTS] = core::array::from_fn(|i| xy(i as u8 + 1, 2 * i as u8 + 3));
            let ports = &all[..n];
            let mut table = PortTable {
                len: n,
                ..PortTable::NONE
            };
            for (key, &p) in table.keys.iter_mut().zip(ports) {
                *key = port_key(p);
            }
            // `None`: every port as remembered; `Some(c)`: port `c` differs.
            for changed in core::iter::once(None).chain((0..n).map(Some)) {
                let mut asked = all;
                if let Some(c) = changed {
                    asked[c] = xy(20, 20);
                }
                let asked = &asked[..n];
                for first in 0..n {
                    for count in 0..=n + 1 {
                        assert_eq!(
                            table.same(asked, first, count),
                            same_port_by_port(&table, asked, first, count),
                            "n {n}, changed {changed:?}, first {first}, count {count}"
                        );
                    }
                }
            }
            // Another number of ports is never the same.
            assert!(!table.same(&ports[..n - 1], 0, 0));
        }
    }
}
