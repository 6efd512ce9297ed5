//! # komorebi
//!
//! Host side of the komorebi persistent-kernel stack for Tenstorrent Blackhole, and the
//! `komorebi` command-line tool.
//!
//! | module | what |
//! |---|---|
//! | [`host`] | the host library: [`host::device`] (the host's view of a chip; the simulator as one) and [`host::session`] (`Session`, `CommandSpec`, `Report`) and [`host::feed`] (the test `Feeder`, `Run`) |
//! | [`dispatch`] | the dispatcher: VMS-style animation master with plugin, slots, reservations, work stealing |
//! | [`app`] | the programs: `broadcast` (03_broadcast, behind `komorebi broadcast` and the example) and `matmul` (the `matmul_schedule` example) |
//! | [`cli`] | flags and output shared by the binary and the examples |
//! | [`bench`](mod@bench) | `komorebi bench`: measurements on a simulated chip: `bench noc` (in tt-metal's units), `bench broadcast` (the 03 program's protocols over windows x pages) |
//! | [`chip`] | the chips' grids as the layout's chip-neutral geometry |
//! | [`grid_report`], [`layout_report`] | `komorebi grid`, `komorebi layout` |
//! | [`log_report`] | `komorebi log`: a card's log rings after a run, read without starting anything |
//! | [`devices`] | `komorebi devices`: every Blackhole or Wormhole B0 card tt-kmd presents, or every chip of a ttsim library |
//! | [`inspect`] | every core's broadcast areas: text, JSON, SVG/PNG picture |
//! | [`explore`] | schedule exploration: random seeds x random shapes, adversary on |
//! | [`picture`] | drawing for `inspect`'s pictures: viridis colour map, RGB canvas, 5x9 font (7 rows and 2 of descenders), PNG |
//! | [`num`] | numbers on the command line: decimal or `0x`-hex, parsers with the real ranges |
//!
//! Dependencies inside the crate point one way: `host` knows no program and no dispatcher;
//! `dispatch` uses `host`; `app` uses both; the CLI modules use `app`.

pub mod app;
pub mod bench;
pub mod chip;
pub mod cli;
pub mod devices;
pub mod dispatch;
pub mod explore;
pub mod grid_report;
pub mod host;
pub mod inspect;
pub mod layout_report;
pub mod log_report;
pub mod num;
pub mod picture;

pub use host::feed::{Feeder, Run};
pub use host::session::{Backend, CommandSpec, Report, Session, SessionError, TileProgram};
