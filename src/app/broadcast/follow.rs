//! `--log-follow`: the cores' log lines as the run goes. After each job the rectangle's logs are
//! read as `--log` reads them at the end (`logs`), and what no earlier job handed on goes to a
//! sink with the job's number.
//!
//! What it guarantees: every line of the run's logs is handed on once, after the job at whose
//! end it was first read, in the order the kernel logged it; so is a lost count that grew (the
//! count so far) and a ring's error, once for as long as each read finds the same error (a
//! ring that reads clean, or errs otherwise, has its next error handed on again: a read
//! between a kernel's two count stores errs once and must not hide a later corruption). A job that timed out is followed when the host
//! gives up on it, so a stalled core's give-up lines come before the run ends.
//!
//! Leaf module: imports only the host's log types.

use std::collections::HashMap;
use std::sync::Arc;

use crate::host::log::KernelLog;

/// A sink of followed lines: the job, then the kernels with something new.
type Sink = dyn Fn(u32, &[KernelLog]) + Send + Sync;

/// Where `--log-follow` hands each job's new lines: the job, then the kernels with something
/// new (only the new lines in each).
#[derive(Clone)]
pub struct LogFollow(Arc<Sink>);

impl LogFollow {
    /// A sink that calls `f(job, logs)` after each job with something new.
    pub fn new(f: impl Fn(u32, &[KernelLog]) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    pub(super) fn hand(&self, job: u32, logs: &[KernelLog]) {
        if !logs.is_empty() {
            (self.0)(job, logs);
        }
    }
}

impl std::fmt::Debug for LogFollow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogFollow")
    }
}

/// Two sinks are equal when they are the same sink.
impl PartialEq for LogFollow {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// What was handed on of each kernel's log (tile, kernel).
#[derive(Debug, Default)]
pub(super) struct Followed {
    seen: HashMap<([u8; 2], &'static str), Seen>,
    /// The native kernels' lines read so far: the next read takes only those after them.
    native_read: usize,
}

/// What was handed on of one kernel's log.
#[derive(Debug, Default)]
struct Seen {
    /// Its lines.
    lines: usize,
    /// Its lost count.
    lost: u32,
    /// The error its last read found, if any.
    error: Option<String>,
}

impl Followed {
    /// Where the next read of the native kernels' lines starts (`logs::kernel_logs_from`).
    pub(super) fn native_read(&self) -> usize {
        self.native_read
    }

    /// What to hand on of a read: with `native_next` (the native kernels' lines, read from
    /// [`native_read`](Self::native_read) on) every line, each read once; else (the firmware's
    /// rings, read whole) [`fresh`](Self::fresh).
    pub(super) fn take(
        &mut self,
        logs: Vec<KernelLog>,
        native_next: Option<usize>,
    ) -> Vec<KernelLog> {
        match native_next {
            Some(next) => {
                self.native_read = next;
                logs
            }
            None => self.fresh(logs),
        }
    }

    /// The part of `logs` (every kernel's log as it stands) not handed on yet.
    pub(super) fn fresh(&mut self, logs: Vec<KernelLog>) -> Vec<KernelLog> {
        let mut out = Vec::new();
        for mut k in logs {
            let seen = self.seen.entry((k.tile, k.kernel)).or_default();
            let (lines, lost) = (seen.lines, seen.lost);
            seen.lines = lines.max(k.lines.len());
            seen.lost = lost.max(k.lost);
            let same_error = k.error == seen.error;
            seen.error.clone_from(&k.error);
            k.lines.drain(..lines.min(k.lines.len()));
            if k.lost <= lost {
                k.lost = 0;
            }
            if same_error {
                k.error = None;
            }
            if !k.lines.is_empty() || k.lost > 0 || k.error.is_some() {
                out.push(k);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::log::LogLine;

    fn log(tile: [u8; 2], lines: &[&str], lost: u32, error: Option<&str>) -> KernelLog {
        KernelLog {
            chip: None,
            tile,
            kernel: "reader",
            lines: lines
                .iter()
                .map(|m| LogLine {
                    cycle: None,
                    level: "warn",
                    message: m.to_string(),
                })
                .collect(),
            lost,
            error: error.map(str::to_string),
            unset: false,
        }
    }

    fn messages(logs: &[KernelLog]) -> Vec<(u8, Vec<String>, u32, bool)> {
        logs.iter()
            .map(|k| {
                let m = k.lines.iter().map(|l| l.message.clone()).collect();
                (k.tile[0], m, k.lost, k.error.is_some())
            })
            .collect()
    }

    #[test]
    fn each_line_error_and_growth_of_the_lost_count_is_handed_on_once() {
        let mut f = Followed::default();
        let first = f.fresh(vec![
            log([0, 0], &["a"], 0, None),
            log([1, 0], &[], 0, Some("bad")),
        ]);
        assert_eq!(
            messages(&first),
            [(0, vec!["a".into()], 0, false), (1, vec![], 0, true)]
        );
        // Nothing new: nothing handed on.
        let again = f.fresh(vec![
            log([0, 0], &["a"], 0, None),
            log([1, 0], &[], 0, Some("bad")),
        ]);
        assert!(again.is_empty(), "{again:?}");
        // New lines after the old ones, a ring that filled, a new kernel.
        let later = f.fresh(vec![
            log([0, 0], &["a", "b", "c"], 2, None),
            log([1, 0], &[], 0, Some("bad")),
            log([2, 0], &["d"], 0, None),
        ]);
        assert_eq!(
            messages(&later),
            [
                (0, vec!["b".into(), "c".into()], 2, false),
                (2, vec!["d".into()], 0, false)
            ]
        );
        // The same lost count again is not new.
        let same = f.fresh(vec![log([0, 0], &["a", "b", "c"], 2, None)]);
        assert!(same.is_empty(), "{same:?}");
    }

    #[test]
    fn an_error_is_handed_on_again_after_a_clean_read_or_when_it_changes() {
        let mut f = Followed::default();
        let erred = |f: &mut Followed, error| messages(&f.fresh(vec![log([0, 0], &[], 0, error)]));
        assert_eq!(erred(&mut f, Some("torn")), [(0, vec![], 0, true)]);
        assert_eq!(erred(&mut f, Some("torn")), []);
        // Another error: handed on.
        assert_eq!(erred(&mut f, Some("bad frame")), [(0, vec![], 0, true)]);
        // A clean read, then the first error again: handed on again.
        assert_eq!(erred(&mut f, None), []);
        assert_eq!(erred(&mut f, Some("torn")), [(0, vec![], 0, true)]);
    }
}
