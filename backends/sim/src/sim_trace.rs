//! A [`Sim`]'s Chrome/Perfetto trace ([`trace`](crate::trace)): held in memory and read as
//! JSON, or streamed to a writer as the run goes and finished with the host's own events.

use crate::sim::Sim;
use crate::trace::{Trace, TraceError, TraceStats};

impl Sim {
    /// The trace so far as Chrome/Perfetto JSON, when `SimConfig::trace` holds it in memory;
    /// `None` when tracing is off or the trace streams to a writer ([`Sim::trace_to`]).
    pub fn trace_json(&self) -> Option<serde_json::Value> {
        let w = self.world.borrow();
        let trace = w.trace.as_ref()?;
        (!trace.is_streaming()).then(|| trace.to_json())
    }

    /// Streams the trace to `out` from now on, each event as it is recorded (through a 64 KiB
    /// buffer of its own) and not kept: memory does not grow (`trace` module docs). Events held
    /// so far go first; tracing starts if it was off. A write error does not stop the run: the
    /// first is kept ([`Sim::trace_error`], [`Sim::finish_trace`]); `Err` is an open stream's.
    pub fn trace_to(&self, out: impl std::io::Write + 'static) -> Result<(), TraceError> {
        let mut w = self.world.borrow_mut();
        w.trace
            .get_or_insert_with(Trace::new)
            .stream_to(Box::new(out))
    }

    /// Finishes the stream [`Sim::trace_to`] opened: writes `extra` events (the host's own, any
    /// Trace Event Format objects), closes the JSON and flushes; tracing is off afterwards. What
    /// was written or the first write error; `None` with no stream (dropping closes one).
    pub fn finish_trace(
        &self,
        extra: impl IntoIterator<Item = serde_json::Value>,
    ) -> Option<Result<TraceStats, TraceError>> {
        let mut w = self.world.borrow_mut();
        // Waits still open are written up to now: the trace shows those a run ended in too.
        let (now, mhz) = (w.now, w.cfg.timing.aiclk_mhz);
        let open = w.sched.open_waits(now);
        let trace = w.trace.as_mut().filter(|t| t.is_streaming())?;
        for (task, from) in open {
            trace.wait(task, from, now, mhz);
        }
        let done = trace.finish(extra);
        if done.is_some() {
            w.trace = None;
        }
        done
    }

    /// The stream's first write error, once a write has failed.
    pub fn trace_error(&self) -> Option<TraceError> {
        self.world.borrow().trace.as_ref()?.error().cloned()
    }
}
