//! `Card::now` reads the device clock consistently while the tile's own cores read the same
//! wall clock: the firmware reads `WALL_CLOCK_L` in every wait (`komorebi_silicon::cycles`), and
//! that read re-latches the high half the host would read from `WALL_CLOCK_H_LATCHED`.

#![cfg(feature = "sim")]

use std::cell::Cell;

use blackhole_pac::tensix::{WALL_CLOCK_H_LATCHED, WALL_CLOCK_H_LIVE, WALL_CLOCK_L};
use komorebi_pcie::PcieError;
use komorebi_pcie::card::{Card, CardOptions};
use komorebi_pcie::sim::{SimBar, SimBarOptions};
use komorebi_sim::{Sim, SimConfig};

mod common;

use common::{Read, Tap, Tapped};

/// The simulated card, except that its tiles' wall clocks are this one: `now` moves on by
/// `step` at every host read of a wall-clock register, and a core of the tile reads
/// `WALL_CLOCK_L` just before each host read (a firmware core polling), re-latching the high
/// half.
struct Polled {
    now: Cell<u64>,
    step: u64,
    latched: Cell<u32>,
}

impl Polled {
    fn wall_clock(&self, addr: u64) -> Option<u32> {
        let t = self.now.get();
        // A core reads WALL_CLOCK_L first: the latch takes the high half now.
        self.latched.set((t >> 32) as u32);
        let v = match u32::try_from(addr).ok()? {
            WALL_CLOCK_L => {
                self.latched.set((t >> 32) as u32);
                t as u32
            }
            WALL_CLOCK_H_LIVE => (t >> 32) as u32,
            WALL_CLOCK_H_LATCHED => self.latched.get(),
            _ => return None,
        };
        self.now.set(t + self.step);
        Some(v)
    }
}

impl Tap for Polled {
    fn read32(&self, read: Read<'_>) -> Option<Result<u32, PcieError>> {
        self.wall_clock(read.at()?).map(Ok)
    }
}

#[test]
fn the_device_clock_is_right_when_the_low_half_wraps_while_a_core_polls() {
    let step = 4;
    let card = Card::open(
        Tapped::new(
            SimBar::new(Sim::new(SimConfig::default()), SimBarOptions::default()),
            Polled {
                now: Cell::new(0),
                step,
                latched: Cell::new(0),
            },
        ),
        CardOptions::default(),
    )
    .unwrap();
    // Every start within a few reads of the low half's wrap.
    for back in 0..4 * step {
        let start = (1u64 << 32) - back;
        card.bar().tap.now.set(start);
        let t = card.now().unwrap();
        let end = card.bar().tap.now.get();
        assert!(
            (start..end).contains(&t),
            "{back} before the wrap: the clock read {t:#x}, between {start:#x} and {end:#x}"
        );
    }
}
