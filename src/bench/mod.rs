//! `komorebi bench`: measurements on a simulated chip, each reported in the units of the
//! tt-metal test it mirrors, so a simulated figure can be set beside a published one.
//!
//! | module | command | what it measures |
//! |---|---|---|
//! | [`noc`] | `komorebi bench noc` | one data-movement pattern of tt-metal's data-movement tests: cycles from the first issue to the barrier |
//!
//! Every benchmark is one run per invocation on the deterministic simulator: the same flags give
//! the same cycles on any machine. The group leaves room for `komorebi bench broadcast`
//! (issue 18).

pub mod noc;
