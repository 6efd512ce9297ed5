//! # komorebi
//!
//! Host side of the komorebi persistent-kernel stack for Tenstorrent Blackhole, and the
//! `komorebi` command-line tool.
//!
//! Today this crate holds the reports behind `komorebi grid` and `komorebi layout`. The Session, Run, test
//! feeder and dispatcher arrive with their issues (see README.md's status table); they are
//! absent, not stubbed.

pub mod grid_report;
pub mod layout_report;
