//! # komorebi
//!
//! Host side of the komorebi persistent-kernel stack for Tenstorrent Blackhole, and the
//! `komorebi` command-line tool.
//!
//! | module | what |
//! |---|---|
//! | [`host::device`] | the host's view of a chip (`Device`), and the simulator as one (`SimDevice`) |
//! | [`host::session`] | `Session`, `CommandSpec`, `Report`, the test `Feeder`, `Run` |
//! | [`broadcast_app`] | the 03_broadcast program behind `komorebi broadcast` and the example |
//! | [`grid_report`], [`layout_report`] | `komorebi grid`, `komorebi layout` |
//! | [`cli`] | flags and output shared by the binary and the examples |
//! | [`inspect`] | every core's broadcast areas: text, JSON, SVG/PNG picture |
//! | [`explore`] | schedule exploration: random seeds x random shapes, adversary on |
//! | [`app::matmul`] | the `matmul_schedule` example: a tiled product's schedule through a dispatcher plugin |
//! | [`dispatch`] | the dispatcher: VMS-style animation master with plugin, slots, reservations, work stealing |

pub mod app;
pub mod broadcast_app;
pub mod cli;
pub mod dispatch;
pub mod explore;
pub mod grid_report;
pub mod host;
pub mod inspect;
pub mod layout_report;

pub use host::session::{
    Backend, CommandSpec, Feeder, Report, Run, Session, SessionError, TileProgram,
};
