//! Chrome / Perfetto trace output: every NoC transfer and every kernel wait, as complete
//! ("X") events in microseconds at AICLK, each thread named by a metadata ("M") event. Open the
//! file in `ui.perfetto.dev` or `chrome://tracing`.
//!
//! ## Where the events go
//! A [`Trace`] sends each event, the moment it is recorded, to one of two sinks:
//! * **memory** (`SimConfig::trace`, `Sim::trace_json`): the events are kept as
//!   [`TraceEvent`]s, for tests and small runs that want to look at them. Memory grows with the
//!   run: the 03 default records 437,168 events, and holding them, then turning them into one
//!   JSON value to write, took 1,082 MB (about 2.5 KB an event) before the writer sink existed.
//! * **a writer** (`Sim::trace_to`): each event is written as JSON at once, into a 64 KiB
//!   buffer handed to the writer whenever it fills, and then forgotten. What is kept does not
//!   grow with the run: the buffer, the set of threads already named (one entry per tile and
//!   NoC, and per task), two counters and the first write error. No event is ever held open:
//!   every event here is a complete event written when its end is known (a transfer when its
//!   last flit lands, a wait when the task wakes), so there are no "begin" events to match.
//!
//! Events recorded in memory before the writer is given are written first, in order, so a host
//! that sets `SimConfig::trace` and starts the stream once it has opened its file loses nothing.
//!
//! The sinks are an enum, not a `TraceSink` trait: there are exactly two, both in this file, and
//! what varies among users is where the bytes go, which `std::io::Write` already abstracts (a
//! file, a `Vec<u8>`, a writer that fails in a test). A trait object would add a public trait to
//! keep stable and a dynamic call per event for no third sink anyone needs.
//!
//! ## The file
//! The format is the one `Trace::to_json` gives, byte for byte: one JSON object,
//! `{"displayTimeUnit":"ns","traceEvents":[` then the processes' names and sort indices, then
//! the events in the order they were recorded, comma-separated, with every object's keys in
//! sorted order, then `]}`. The head is written when the stream starts; `Sim::finish_trace`
//! writes the caller's extra events (the host's own slices), the tail, and flushes. The same
//! seed and inputs give the same bytes.
//!
//! When the run does not get to `finish_trace`:
//! * **an error or a timeout** that returns normally: the simulator is dropped, and dropping an
//!   unfinished stream writes the tail and flushes (best effort, errors ignored), so the file is
//!   valid JSON holding every event up to that point;
//! * **a panic**: the same, when the panic unwinds through the owner of the simulator (the
//!   default `panic = "unwind"`); with `panic = "abort"` nothing is dropped and the file ends
//!   at the last full buffer;
//! * **a kill** (SIGKILL, or SIGINT/SIGTERM with no handler): nothing runs; the file ends at the
//!   last full 64 KiB buffer, possibly inside an event, and is not valid JSON.
//!
//! A write error (disk full, a closed pipe) stops the writing: the first error is kept, later
//! events are dropped, and `Sim::finish_trace` returns it as a [`TraceError`] with a one-line
//! message. The simulation itself is not affected. The file is then incomplete.
//!
//! Leaf module: imports nothing of the crate.

use std::collections::HashSet;
use std::fmt;
use std::io::{self, Write};

use serde::Serialize;

/// One trace event (the Trace Event Format's fields), as the memory sink keeps it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TraceEvent {
    /// What.
    pub name: String,
    /// Category: `noc0`, `noc1` or `kernel`.
    pub cat: &'static str,
    /// Phase: `X` (complete) or `M` (metadata).
    pub ph: &'static str,
    /// Start, µs.
    pub ts: f64,
    /// Duration, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dur: Option<f64>,
    /// Process: 0 kernels, 1 NoC0, 2 NoC1.
    pub pid: u32,
    /// Thread: the task (kernels) or the issuing tile (NoCs).
    pub tid: u32,
    /// Extra fields.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub args: serde_json::Map<String, serde_json::Value>,
}

/// Names of the trace's processes, by pid: what each timeline shows, and in which time.
pub const PROCESS_NAMES: [&str; 3] = [
    "kernels: waits (device time, cycles as us at AICLK)",
    "NoC0 transfers by issuing tile (device time)",
    "NoC1 transfers by issuing tile (device time)",
];

/// Bytes a streamed trace gathers before it hands them to its writer.
pub const STREAM_BUFFER: usize = 64 * 1024;

/// A write to a trace's writer failed (disk full, a closed pipe, an unwritable file): the I/O
/// error's kind and message, and how far the trace got. Displayed on one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("writing the trace failed after {written} bytes: {message}")]
pub struct TraceError {
    /// The I/O error's kind.
    pub kind: io::ErrorKind,
    /// The I/O error's message, on one line.
    pub message: String,
    /// Bytes the writer took in full before the failing write.
    pub written: u64,
}

impl TraceError {
    /// The trace error of I/O error `error`, after `written` bytes.
    pub fn io(error: &io::Error, written: u64) -> Self {
        Self {
            kind: error.kind(),
            message: error.to_string().replace('\n', " "),
            written,
        }
    }
}

/// What a finished stream wrote.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TraceStats {
    /// Events written, the processes' names and the caller's extra events among them.
    pub events: u64,
    /// Bytes written, head and tail included.
    pub bytes: u64,
}

/// The trace's events, held or streamed (see the module docs).
#[derive(Default)]
pub struct Trace {
    sink: Sink,
    /// The NoC threads (pid, tid) named so far.
    named: HashSet<(u32, u32)>,
}

impl fmt::Debug for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Trace");
        match &self.sink {
            Sink::Memory(events) => d.field("held", &events.len()),
            Sink::Stream(w) => d
                .field("streamed_events", &w.events)
                .field("streamed_bytes", &(w.bytes + w.buf.len() as u64)),
        };
        d.finish_non_exhaustive()
    }
}

/// Where the events go.
enum Sink {
    /// Kept, in the order recorded.
    Memory(Vec<TraceEvent>),
    /// Written as they come.
    Stream(Box<Stream>),
}

impl Default for Sink {
    fn default() -> Self {
        Self::Memory(Vec::new())
    }
}

fn us(cycles: u64, mhz: u32) -> f64 {
    cycles as f64 / mhz as f64
}

/// The processes' names and sort indices, the first events of every trace.
fn process_events() -> Vec<serde_json::Value> {
    let mut events = Vec::with_capacity(2 * PROCESS_NAMES.len());
    for (pid, name) in PROCESS_NAMES.iter().enumerate() {
        events.push(
            serde_json::json!({"ph": "M", "name": "process_name", "pid": pid,
            "tid": 0, "args": {"name": name}}),
        );
        events.push(serde_json::json!({"ph": "M", "name": "process_sort_index",
            "pid": pid, "tid": 0, "args": {"sort_index": pid}}));
    }
    events
}

impl Trace {
    /// An empty trace that keeps its events in memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The events held in memory (none once the trace streams).
    pub fn events(&self) -> &[TraceEvent] {
        match &self.sink {
            Sink::Memory(events) => events,
            Sink::Stream(_) => &[],
        }
    }

    /// Whether the events go to a writer.
    pub fn is_streaming(&self) -> bool {
        matches!(self.sink, Sink::Stream(_))
    }

    /// From now on writes every event to `out` as it is recorded: the head first, then the
    /// events held so far (which memory then lets go). A stream already open is finished first
    /// (its error, if any, is returned, and the new stream starts all the same).
    pub fn stream_to(&mut self, out: Box<dyn Write>) -> Result<(), TraceError> {
        let earlier = self.finish(std::iter::empty()).transpose();
        let mut stream = Box::new(Stream::new(out));
        if let Sink::Memory(held) = std::mem::take(&mut self.sink) {
            for e in &held {
                // `to_value` orders the keys, as `to_json` does.
                match serde_json::to_value(e) {
                    Ok(v) => stream.put(&v),
                    Err(e) => stream.fail(&io::Error::other(e)),
                }
            }
        }
        self.sink = Sink::Stream(stream);
        earlier.map(drop)
    }

    /// Finishes a stream: writes `extra` (events of the caller's own, such as the host's
    /// slices), the tail, and flushes the writer; the trace then holds its events in memory
    /// again, starting empty. `None` when the trace was not streaming.
    pub fn finish(
        &mut self,
        extra: impl IntoIterator<Item = serde_json::Value>,
    ) -> Option<Result<TraceStats, TraceError>> {
        let Sink::Stream(stream) = &mut self.sink else {
            return None;
        };
        for e in extra {
            stream.put(&e);
        }
        let done = stream.close();
        self.sink = Sink::default();
        Some(done)
    }

    /// The first write error of the stream, if it has failed.
    pub fn error(&self) -> Option<&TraceError> {
        match &self.sink {
            Sink::Stream(s) => s.error.as_ref(),
            Sink::Memory(_) => None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn transfer(
        &mut self,
        noc: u8,
        tile: u16,
        xy0: (u8, u8),
        what: &str,
        len: u32,
        dests: usize,
        from: u64,
        to: u64,
        mhz: u32,
    ) {
        let (pid, tid) = (1 + noc as u32, tile as u32);
        if self.named.insert((pid, tid)) {
            self.name_thread(
                pid,
                tid,
                format!("tile at NoC0 ({},{}) issuing on NoC{noc}", xy0.0, xy0.1),
            );
        }
        let cat = if noc == 0 { "noc0" } else { "noc1" };
        let (ts, dur) = (us(from, mhz), us(to.saturating_sub(from), mhz));
        match &mut self.sink {
            Sink::Memory(events) => {
                let mut args = serde_json::Map::new();
                args.insert("bytes".into(), len.into());
                args.insert("destinations".into(), dests.into());
                args.insert("tile".into(), serde_json::json!([xy0.0, xy0.1]));
                events.push(TraceEvent {
                    name: format!("{what} {len} B"),
                    cat,
                    ph: "X",
                    ts,
                    dur: Some(dur),
                    pid,
                    tid,
                    args,
                });
            }
            Sink::Stream(s) => s.put(&Wire {
                args: Some(TransferArgs {
                    bytes: len,
                    destinations: dests,
                    tile: [xy0.0, xy0.1],
                }),
                cat,
                dur: Some(dur),
                name: Shown(TransferName { what, len }),
                ph: "X",
                pid,
                tid,
                ts,
            }),
        }
    }

    pub(crate) fn wait(&mut self, task: usize, from: u64, to: u64, mhz: u32) {
        let (ts, dur) = (us(from, mhz), us(to.saturating_sub(from), mhz));
        match &mut self.sink {
            Sink::Memory(events) => events.push(TraceEvent {
                name: "wait".into(),
                cat: "kernel",
                ph: "X",
                ts,
                dur: Some(dur),
                pid: 0,
                tid: task as u32,
                args: serde_json::Map::new(),
            }),
            Sink::Stream(s) => s.put(&Wire::<NameArg<'_>, _> {
                args: None,
                cat: "kernel",
                dur: Some(dur),
                name: "wait",
                ph: "X",
                pid: 0,
                tid: task as u32,
                ts,
            }),
        }
    }

    pub(crate) fn name_thread(&mut self, pid: u32, tid: u32, name: String) {
        match &mut self.sink {
            Sink::Memory(events) => {
                let mut args = serde_json::Map::new();
                args.insert("name".into(), name.into());
                events.push(TraceEvent {
                    name: "thread_name".into(),
                    cat: "__metadata",
                    ph: "M",
                    ts: 0.0,
                    dur: None,
                    pid,
                    tid,
                    args,
                });
            }
            Sink::Stream(s) => s.put(&Wire {
                args: Some(NameArg { name: &name }),
                cat: "__metadata",
                dur: None,
                name: "thread_name",
                ph: "M",
                pid,
                tid,
                ts: 0.0,
            }),
        }
    }

    /// The events held in memory as Trace Event Format JSON, every process named (and sorted:
    /// kernels, NoC0, NoC1). A streaming trace holds none.
    pub fn to_json(&self) -> serde_json::Value {
        let held = self.events();
        let mut events = process_events();
        events.reserve(held.len());
        events.extend(held.iter().filter_map(|e| serde_json::to_value(e).ok()));
        serde_json::json!({ "traceEvents": events, "displayTimeUnit": "ns" })
    }
}

/// An event as the stream writes it: the keys in sorted order, as `serde_json::Value` orders
/// them, so a streamed file is byte for byte what `Trace::to_json` gives.
#[derive(Serialize)]
struct Wire<'a, A, N> {
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<A>,
    cat: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    name: N,
    ph: &'a str,
    pid: u32,
    tid: u32,
    ts: f64,
}

#[derive(Serialize)]
struct TransferArgs {
    bytes: u32,
    destinations: usize,
    tile: [u8; 2],
}

#[derive(Serialize)]
struct NameArg<'a> {
    name: &'a str,
}

/// A transfer's name, `"{what} {len} B"`, written without an allocation.
struct TransferName<'a> {
    what: &'a str,
    len: u32,
}

impl fmt::Display for TransferName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} B", self.what, self.len)
    }
}

/// A `Display` value serialized as a JSON string, escaped as it is formatted.
struct Shown<T>(T);

impl<T: fmt::Display> Serialize for Shown<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// A trace being written: the writer, the bytes not handed to it yet, and how far it got.
struct Stream {
    out: Box<dyn Write>,
    buf: Vec<u8>,
    /// Bytes the writer took.
    bytes: u64,
    /// Events put (written, or in `buf`).
    events: u64,
    /// The first write error; nothing is written after it.
    error: Option<TraceError>,
    /// The tail is not written yet.
    open: bool,
}

impl Stream {
    /// A stream over `out`, its head and the processes' names in the buffer.
    fn new(out: Box<dyn Write>) -> Self {
        let mut buf = Vec::with_capacity(STREAM_BUFFER + 4096);
        buf.extend_from_slice(br#"{"displayTimeUnit":"ns","traceEvents":["#);
        let mut s = Self {
            out,
            buf,
            bytes: 0,
            events: 0,
            error: None,
            open: true,
        };
        for e in process_events() {
            s.put(&e);
        }
        s
    }

    /// Adds one event (dropped once a write has failed).
    fn put<T: Serialize>(&mut self, event: &T) {
        if !self.open || self.error.is_some() {
            return;
        }
        if self.events > 0 {
            self.buf.push(b',');
        }
        let mark = self.buf.len();
        if let Err(e) = serde_json::to_writer(&mut self.buf, event) {
            // Not reachable for the events here (plain fields, string keys); kept as an error
            // of the trace rather than a panic all the same.
            self.buf.truncate(mark);
            self.fail(&io::Error::other(e));
            return;
        }
        self.events += 1;
        if self.buf.len() >= STREAM_BUFFER {
            self.drain();
        }
    }

    /// Hands the buffer to the writer.
    fn drain(&mut self) {
        if self.error.is_none() && !self.buf.is_empty() {
            match self.out.write_all(&self.buf) {
                Ok(()) => self.bytes += self.buf.len() as u64,
                Err(e) => self.fail(&e),
            }
        }
        self.buf.clear();
    }

    fn fail(&mut self, e: &io::Error) {
        if self.error.is_none() {
            self.error = Some(TraceError::io(e, self.bytes));
        }
    }

    /// Writes the tail and flushes; what was written, or the first error.
    fn close(&mut self) -> Result<TraceStats, TraceError> {
        if self.open {
            self.open = false;
            self.buf.extend_from_slice(b"]}");
            self.drain();
            if self.error.is_none() {
                if let Err(e) = self.out.flush() {
                    self.fail(&e);
                }
            }
        }
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(TraceStats {
                events: self.events,
                bytes: self.bytes,
            }),
        }
    }
}

impl Drop for Stream {
    /// A stream dropped unfinished (a run ended by an error, or a panic unwinding) still ends
    /// as valid JSON: its tail is written and the writer flushed, errors ignored.
    fn drop(&mut self) {
        let _ = self.close();
    }
}
