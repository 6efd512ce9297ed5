//! What `komorebi bench broadcast` refuses, and a run that could not complete.

use std::path::PathBuf;

use komorebi_broadcast::args::MAX_BUFFER_PAGES;

use crate::app::broadcast::{BroadcastError, Protocol};

/// A bad value of one of the swept lists (`--windows`, `--pages`, `--protocols`). Clap puts it
/// after the flag and the list given (`invalid value '1,9' for '--windows <LIST>': ...`), so
/// the line names the flag, the bad value and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ListError {
    /// No value at all.
    #[error("the list is empty (allowed: {allowed}, comma separated, each once)")]
    Empty {
        /// What each value may be.
        allowed: String,
    },
    /// An item that is not a value of the list's kind (not a number, not a protocol, or empty
    /// between two commas).
    #[error("'{value}' is not {what} (allowed: {allowed}, comma separated, each once)")]
    NotAValue {
        /// The item as given.
        value: String,
        /// What it should be: `a number`, `a protocol`.
        what: &'static str,
        /// What each value may be.
        allowed: String,
    },
    /// A number outside the allowed range.
    #[error("{value} is out of range (allowed: {allowed}, comma separated, each once)")]
    OutOfRange {
        /// The number as given.
        value: String,
        /// What each value may be.
        allowed: String,
    },
    /// A value given more than once.
    #[error("{value} is given twice (allowed: {allowed}, comma separated, each once)")]
    Duplicate {
        /// The value, as the list spells it.
        value: String,
        /// What each value may be.
        allowed: String,
    },
}

/// Flags that cannot make the bench they describe, and a run that could not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BroadcastBenchError {
    /// A window and a pages of the lists whose buffer is too large.
    #[error(
        "--pages {pages} with window {window} of --windows: window x pages = {} (allowed: \
         window x pages at most {MAX_BUFFER_PAGES} for every window and pages of the lists)",
        u32::from(*window) * u32::from(*pages)
    )]
    TooManyPages {
        /// The window.
        window: u8,
        /// The pages.
        pages: u16,
    },
    /// A flag value the program refuses (its own checks, made for every row before the first
    /// runs, or the plan of a run): the bench's flag and why.
    #[error("{flag}: {why}")]
    Refused {
        /// The bench's flag: `--protocols` and `--windows` where the program says `--protocol`
        /// and `--window`.
        flag: &'static str,
        /// What is wrong and what is allowed.
        why: String,
    },
    /// A flag value that cannot be read for the chip (`--harvest`), in clap's words.
    #[error("{0}")]
    Flag(String),
    /// A `--plot` path that is not an SVG file.
    #[error("--plot {}: the plot is an SVG file (allowed: a path ending in .svg)", path.display())]
    PlotNotSvg {
        /// The path given.
        path: PathBuf,
    },
    /// The host cannot take the bench: an output path that cannot be written, or not enough
    /// memory for a run (the one-line message of `cli::check_output` or `cli::check_memory`,
    /// which names the flag).
    #[error("{0}")]
    Host(String),
    /// A run that could not complete (the session or the dispatcher failed, or the device cannot
    /// be used): not a row that ran and failed, which the report keeps.
    #[error("the {protocol} run with window {window} and {} a block: {error}", crate::num::count(u64::from(*pages), "page", "pages"))]
    Run {
        /// The row's protocol.
        protocol: Protocol,
        /// The row's window.
        window: u8,
        /// The row's pages.
        pages: u16,
        /// What failed.
        error: BroadcastError,
    },
}

impl BroadcastBenchError {
    /// The error of the run of row (`protocol`, `window`, `pages`): a refused flag value as
    /// [`Self::Refused`] naming the bench's flag, anything else as [`Self::Run`].
    pub fn of_run(protocol: Protocol, window: u8, pages: u16, error: BroadcastError) -> Self {
        match error {
            BroadcastError::Flag { flag, why } => Self::Refused {
                flag: bench_flag(flag),
                why: bench_words(&why),
            },
            error => Self::Run {
                protocol,
                window,
                pages,
                error,
            },
        }
    }

    /// The exit code: 4 for a device that cannot be used, 2 otherwise (bad flags, an output
    /// that cannot be written, a run that could not complete), as `komorebi broadcast` gives.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Run { error, .. } if error.device_unusable() => crate::cli::EXIT_DEVICE,
            _ => 2,
        }
    }
}

/// The bench's name of a flag of `komorebi broadcast`: its swept flags are lists.
fn bench_flag(flag: &str) -> &str {
    match flag {
        "--protocol" => "--protocols",
        "--window" => "--windows",
        flag => flag,
    }
}

/// A refusal's text in the bench's words: every `--protocol` and `--window` it names (a whole
/// flag, not the start of a longer one) becomes the bench's list flag, so that what it says is
/// allowed is a flag the bench takes.
fn bench_words(why: &str) -> String {
    let mut out = String::with_capacity(why.len() + 8);
    let mut rest = why;
    while let Some(at) = rest.find("--") {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let flag_len = from[2..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .map_or(from.len(), |n| n + 2);
        let (flag, after) = from.split_at(flag_len);
        out.push_str(bench_flag(flag));
        rest = after;
    }
    out.push_str(rest);
    out
}
