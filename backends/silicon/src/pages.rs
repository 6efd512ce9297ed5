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
    use komorebi_hal::L1Addr;
    use komorebi_hal::noc::ReadTag;

    use super::*;
    use crate::chip::Blackhole;

    /// Blackhole's L1: 1.5 MiB.
    const L1: u32 = 0x18_0000;

    fn l1(a: u32) -> L1Addr {
        L1Addr::new(a).unwrap()
    }

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

    /// Pages 3..8 of 2 KiB from one DRAM port at 0x1_0000 + 2048 g, into L1 at 0x2_0000.
    fn reads(ports: &[Xy]) -> PageReads<'_> {
        PageReads {
            ports,
            base: 0x1_0000,
            first: 3,
            count: 5,
            len: 2048,
            dst: l1(0x2_0000),
            tag: ReadTag::new(2).unwrap(),
        }
    }

    /// `shared` gives page `from`'s own source and destination: page `first + from` at
    /// `base + (first + from) len`, landing `from len` into the destination.
    #[test]
    fn a_batch_starts_at_page_from_s_own_source_and_destination() {
        let ports = [xy(0, 5)];
        let r = reads(&ports);
        assert_eq!(shared::<Blackhole>(0, &r), Some((0x1_1800, 0x2_0000)));
        assert_eq!(shared::<Blackhole>(2, &r), Some((0x1_2800, 0x2_1000)));
        assert_eq!(shared::<Blackhole>(4, &r), Some((0x1_3800, 0x2_2000)));
    }

    /// A page is a whole number of DRAM words (64 bytes) and at most one packet (16 KiB): a
    /// length that is neither is left to the page-by-page reads (which split a page over
    /// packets).
    #[test]
    fn a_batch_s_pages_are_whole_dram_words_and_one_packet_at_most() {
        let ports = [xy(0, 5)];
        let with = |len| PageReads {
            len,
            ..reads(&ports)
        };
        assert_eq!(shared::<Blackhole>(0, &with(32)), None);
        assert_eq!(shared::<Blackhole>(0, &with(2048 + 16)), None);
        assert_eq!(
            shared::<Blackhole>(0, &with(64)),
            Some((0x1_00C0, 0x2_0000))
        );
        assert_eq!(
            shared::<Blackhole>(0, &with(16_384)),
            Some((0x1_C000, 0x2_0000))
        );
        assert_eq!(shared::<Blackhole>(0, &with(16_384 + 64)), None);
        assert_eq!(shared::<Blackhole>(0, &with(32_768)), None);
    }

    /// The last page's source must fit 36 bits, whichever page the batch starts at: pages 3..8
    /// from 2^36 - 8 pages, the last starting one page below 2^36, pass; one page more does
    /// not, and neither does a page number past `u32`.
    #[test]
    fn a_batch_s_last_page_must_start_within_36_bits() {
        let ports = [xy(0, 5)];
        let top = PageReads {
            base: (1 << 36) - 8 * 2048,
            ..reads(&ports)
        };
        assert_eq!(
            shared::<Blackhole>(0, &top),
            Some(((1 << 36) - 5 * 2048, 0x2_0000))
        );
        assert_eq!(
            shared::<Blackhole>(4, &top),
            Some(((1 << 36) - 2048, 0x2_2000))
        );
        assert_eq!(shared::<Blackhole>(0, &PageReads { count: 6, ..top }), None);
        let past = PageReads {
            first: u32::MAX - 2,
            ..reads(&ports)
        };
        assert_eq!(shared::<Blackhole>(0, &past), None);
    }

    /// The pages from `from` on, and only those, must land in L1: ending at L1's end they
    /// pass, one L1 unit further they do not.
    #[test]
    fn a_batch_s_remaining_pages_must_land_in_l1() {
        let ports = [xy(0, 5)];
        // Pages 2..5 of the batch (3 of 2 KiB) end at L1's end.
        let at_end = PageReads {
            dst: l1(L1 - 5 * 2048),
            ..reads(&ports)
        };
        assert_eq!(
            shared::<Blackhole>(2, &at_end),
            Some((0x1_2800, L1 - 3 * 2048))
        );
        assert_eq!(
            shared::<Blackhole>(0, &at_end),
            Some((0x1_1800, L1 - 5 * 2048))
        );
        let past = PageReads {
            dst: l1(L1 - 5 * 2048 + 16),
            ..reads(&ports)
        };
        assert_eq!(shared::<Blackhole>(2, &past), None);
        assert_eq!(shared::<Blackhole>(0, &past), None);
    }

    /// L1's whole size from 0 fits; a byte range past L1's end, or longer than L1 itself, is
    /// beyond L1 (without wrapping); an address off the 16-byte units is misaligned.
    #[test]
    fn l1_ranges_end_within_l1_and_start_on_its_units() {
        let beyond = Err(Error {
            kind: ErrorKind::InvalidAddress,
            why: Why::BeyondL1,
        });
        assert_eq!(check_l1::<Blackhole>(0, L1), Ok(()));
        assert_eq!(check_l1::<Blackhole>(L1 - 16, 16), Ok(()));
        assert_eq!(check_l1::<Blackhole>(16, L1), beyond);
        assert_eq!(check_l1::<Blackhole>(L1 - 16, 32), beyond);
        assert_eq!(check_l1::<Blackhole>(0, L1 + 16), beyond);
        assert_eq!(check_l1::<Blackhole>(0, u32::MAX), beyond);
        assert_eq!(
            check_l1::<Blackhole>(8, 16),
            Err(Error {
                kind: ErrorKind::Misaligned,
                why: Why::L1Misaligned,
            })
        );
    }
}
