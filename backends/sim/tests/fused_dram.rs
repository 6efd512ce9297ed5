//! A chip with its fused DRAM bank (`SimConfig::fused_dram`): telemetry leaves the bank out,
//! translated DRAM coordinates follow the ARC firmware's table for it, and every access to one
//! of its ports, by the host (its own accessors and the BAR windows) or by a kernel on either
//! NoC, is a fault with the bank named, never data.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use blackhole_pac::arc::tag;
use blackhole_pac::grid::{DRAM_PORTS, dram_endpoint};
use blackhole_pac::harvest::{DramBanks, HarvestMask};
use blackhole_pac::tlb::TlbOrdering::Relaxed;
use blackhole_pac::translate::Translation;
use common::bar::*;
use common::*;
use komorebi_hal::noc::{Error as _, ErrorKind, NocMulticast, WriteMode};
use komorebi_hal::{NocAddr, Role};
use komorebi_sim::*;

fn fused(bank: u8) -> Sim {
    Sim::new(SimConfig {
        fused_dram: Some(bank),
        ..SimConfig::default()
    })
}

#[test]
fn the_host_s_own_accessors_refuse_the_fused_bank_and_name_it() {
    for bank in 0..8u8 {
        let mut s = fused(bank);
        let mut b = [0u8; 64];
        let e = s.read_dram(bank, 0x1000, &mut b).unwrap_err();
        let others = DramBanks::with_fused(Some(bank)).unwrap();
        assert_eq!(
            e,
            SimError::FusedDram {
                bank,
                addr: 0x1000,
                len: 64,
                banks: others
            }
        );
        assert!(s.write_dram(bank, 0x40, &[1; 16]).is_err());
        // Every other bank is memory as before.
        for other in others.iter() {
            s.write_dram(other, 0x40, &[other; 16]).unwrap();
            s.read_dram(other, 0x40, &mut b[..16]).unwrap();
            assert_eq!(b[..16], [other; 16]);
        }
    }
    assert_eq!(
        fused(3)
            .read_dram(3, 0x1000, &mut [0; 64])
            .unwrap_err()
            .to_string(),
        "DRAM bank 3 0x1000+64: the bank is fused off on this chip (its clock is off on a card: \
         nothing answers at its ports); the chip has banks 0, 1, 2, 4, 5, 6, 7"
    );
    // No bank fused: all eight answer, as before.
    let mut s = sim();
    for bank in 0..8 {
        s.write_dram(bank, 0, &[bank; 4]).unwrap();
    }
}

#[test]
fn a_window_onto_the_fused_bank_faults_by_raw_and_by_translated_coordinates() {
    for bank in 0..8u8 {
        let mut s = fused(bank);
        let t = Translation::with_dram(HarvestMask::P100_P150, Some(bank));
        for port in 0..3u8 {
            let translated = t.dram(bank, port).unwrap().get();
            let raw = DRAM_PORTS[bank as usize][port as usize];
            for (i, xy) in [(202, translated), (7, raw)] {
                let w = window(&mut s, i, uni(xy, 0, Relaxed), 0x100);
                assert!(
                    matches!(w32(&mut s, w, 1), Err(SimError::FusedDram { bank: b, .. }) if b == bank),
                    "bank {bank} port {port} at {xy:?}"
                );
                assert!(matches!(r32(&mut s, w), Err(SimError::FusedDram { .. })));
            }
        }
        // The translated coordinates follow the firmware's table for this bank: each working
        // bank's port 0 reaches that bank.
        for other in DramBanks::with_fused(Some(bank)).unwrap().iter() {
            let xy = t.dram(other, 0).unwrap().get();
            let w = window(&mut s, 203, uni(xy, 0, Relaxed), 0x200);
            w32(&mut s, w, 0xB0 + other as u32).unwrap();
            let mut b = [0; 4];
            s.read_dram(other, 0x200, &mut b).unwrap();
            assert_eq!(u32::from_le_bytes(b), 0xB0 + other as u32, "bank {other}");
        }
    }
}

#[test]
fn telemetry_reports_the_fused_bank_through_arc() {
    for (f, want) in [
        (None, 0xFF),
        (Some(0), 0xFE),
        (Some(5), 0xDF),
        (Some(7), 0x7F),
    ] {
        let mut s = Sim::new(SimConfig {
            fused_dram: f,
            ..SimConfig::default()
        });
        let w = window(&mut s, 1, uni((8, 0), 0, Relaxed), 0x8003_0434);
        let table = r32(&mut s, w).unwrap();
        let w = window(&mut s, 1, uni((8, 0), 0, Relaxed), 0x8003_0430);
        let data = r32(&mut s, w).unwrap();
        let base = window(&mut s, 2, uni((8, 0), 0, Relaxed), table as u64);
        let n = r32(&mut s, plus(base, 4)).unwrap();
        let mut found = None;
        for i in 0..n as u64 {
            let e = r32(&mut s, plus(base, 8 + 4 * i)).unwrap();
            if e & 0xFFFF == tag::ENABLED_GDDR as u32 {
                let d = window(
                    &mut s,
                    3,
                    uni((8, 0), 0, Relaxed),
                    data as u64 + 4 * (e >> 16) as u64,
                );
                found = Some(r32(&mut s, d).unwrap());
            }
        }
        assert_eq!(found, Some(want), "{f:?}");
        assert_eq!(
            DramBanks::from_enabled_gddr(found).unwrap().fused(),
            f,
            "the host's decoding gives the bank back"
        );
    }
}

/// Raw coordinates on `noc` of the port of `bank` tt-metal's kernels use on that NoC.
fn port(bank: u8, noc: u8) -> (u8, u8) {
    let p = dram_endpoint(bank, noc).unwrap();
    if noc == 0 { p } else { n1(p) }
}

#[test]
fn a_kernel_s_read_or_write_of_the_fused_bank_faults_and_is_recorded() {
    for (bank, noc) in [(0u8, 0u8), (3, 1), (4, 0), (7, 1)] {
        let mut s = fused(bank);
        let tile = (1, 2);
        s.write_l1_u32(tile, 0x8000, 0x1234).unwrap();
        let seen: Rc<RefCell<Vec<(ErrorKind, String)>>> = Rc::default();
        let out = seen.clone();
        let (role, p) = (
            if noc == 0 { Role::Reader } else { Role::Writer },
            port(bank, noc),
        );
        let other = port(DramBanks::with_fused(Some(bank)).unwrap().nth(0), noc);
        s.spawn(tile, role, move |env| async move {
            let mut n = env.noc().unwrap();
            let at = |xy, a| NocAddr::new(common::xy(xy), a).unwrap();
            for r in [
                n.read(at(p, 0x1000), l1(0x9000), 64),
                n.write(l1(0x8000), at(p, 0x1000), 64, WriteMode::ORDERED),
                // A working bank is read as before.
                n.read(at(other, 0x1000), l1(0xA000), 64),
            ] {
                if let Err(e) = r {
                    out.borrow_mut().push((e.kind(), e.to_string()));
                }
            }
        })
        .unwrap();
        assert_eq!(s.run(1_000_000), RunOutcome::Quiescent);
        let why = format!(
            "a NoC{noc} request to DRAM bank {bank} (port {p:?} on NoC{noc}): the bank is fused \
             off on this chip (its clock is off on a card: the request would never be answered)"
        );
        assert_eq!(
            *seen.borrow(),
            vec![
                (ErrorKind::Fault, why.clone()),
                (ErrorKind::Fault, why.clone())
            ],
            "bank {bank} on NoC{noc}"
        );
        let v = s.violations();
        assert_eq!(v.len(), 2);
        assert!(
            matches!(v[0], Violation::FusedDram { tile: (1, 2), noc: n, bank: b, port: q, .. } if n == noc && b == bank && q == p)
        );
        let time = match v[0] {
            Violation::FusedDram { time, .. } => time,
            _ => unreachable!(),
        };
        assert_eq!(
            v[0].to_string(),
            format!("cycle {time}: tile (1, 2): {why}")
        );
        // Nothing was read from or written to it: the NIU counted only the working bank's read.
        assert_eq!(s.niu(tile, noc).unwrap().reads_issued, 1);
    }
}
