//! `komorebi bench`: measurements on a simulated chip, each reported in the units of the
//! tt-metal test it mirrors, so a simulated figure can be set beside a published one.
//!
//! | module | command | what it measures |
//! |---|---|---|
//! | [`noc`] | `komorebi bench noc` | one data-movement pattern of tt-metal's data-movement tests: cycles from the first issue to the barrier |
//! | [`broadcast`] | `komorebi bench broadcast` | the 03_broadcast program for each protocol x window x pages: cycles, resource bound, binding resource, efficiency, komorebi's speedup over the handshake |
//!
//! Every run is on the deterministic simulator (unless `--device` names a card): the same
//! flags give the same cycles on any machine. `bench noc` is one run per invocation;
//! `bench broadcast` is one run per row, each on its own simulator.

pub mod broadcast;
pub mod noc;
