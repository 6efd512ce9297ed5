//! Chrome / Perfetto trace output: every NoC transfer and every kernel wait, as complete
//! ("X") events in microseconds at AICLK. Open the file in `ui.perfetto.dev` or
//! `chrome://tracing`.
//!
//! Leaf module: imports nothing of the crate.

use serde::Serialize;

/// One trace event (the Trace Event Format's fields).
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

/// The recorded events.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Events in the order they were recorded.
    pub events: Vec<TraceEvent>,
}

fn us(cycles: u64, mhz: u32) -> f64 {
    cycles as f64 / mhz as f64
}

impl Trace {
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
        let mut args = serde_json::Map::new();
        args.insert("bytes".into(), len.into());
        args.insert("destinations".into(), dests.into());
        args.insert("tile".into(), serde_json::json!([xy0.0, xy0.1]));
        self.events.push(TraceEvent {
            name: format!("{what} {len} B"),
            cat: if noc == 0 { "noc0" } else { "noc1" },
            ph: "X",
            ts: us(from, mhz),
            dur: Some(us(to.saturating_sub(from), mhz)),
            pid: 1 + noc as u32,
            tid: tile as u32,
            args,
        });
    }

    pub(crate) fn wait(&mut self, task: usize, from: u64, to: u64, mhz: u32) {
        self.events.push(TraceEvent {
            name: "wait".into(),
            cat: "kernel",
            ph: "X",
            ts: us(from, mhz),
            dur: Some(us(to.saturating_sub(from), mhz)),
            pid: 0,
            tid: task as u32,
            args: serde_json::Map::new(),
        });
    }

    pub(crate) fn name_thread(&mut self, pid: u32, tid: u32, name: String) {
        let mut args = serde_json::Map::new();
        args.insert("name".into(), name.into());
        self.events.push(TraceEvent {
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

    /// The trace as Trace Event Format JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "traceEvents": self.events, "displayTimeUnit": "ns" })
    }
}
