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

/// Names of the trace's processes, by pid: what each timeline shows, and in which time.
pub const PROCESS_NAMES: [&str; 3] = [
    "kernels: waits (device time, cycles as us at AICLK)",
    "NoC0 transfers by issuing tile (device time)",
    "NoC1 transfers by issuing tile (device time)",
];

/// The recorded events.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Events in the order they were recorded.
    pub events: Vec<TraceEvent>,
    /// The NoC threads (pid, tid) named so far.
    named: std::collections::HashSet<(u32, u32)>,
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
        let (pid, tid) = (1 + noc as u32, tile as u32);
        if self.named.insert((pid, tid)) {
            self.name_thread(
                pid,
                tid,
                format!("tile at NoC0 ({},{}) issuing on NoC{noc}", xy0.0, xy0.1),
            );
        }
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
            pid,
            tid,
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

    /// The trace as Trace Event Format JSON, every process named (and sorted: kernels, NoC0,
    /// NoC1).
    pub fn to_json(&self) -> serde_json::Value {
        let mut events: Vec<serde_json::Value> = Vec::with_capacity(self.events.len() + 6);
        for (pid, name) in PROCESS_NAMES.iter().enumerate() {
            events.push(
                serde_json::json!({"ph": "M", "name": "process_name", "pid": pid,
                "tid": 0, "args": {"name": name}}),
            );
            events.push(serde_json::json!({"ph": "M", "name": "process_sort_index",
                "pid": pid, "tid": 0, "args": {"sort_index": pid}}));
        }
        events.extend(
            self.events
                .iter()
                .filter_map(|e| serde_json::to_value(e).ok()),
        );
        serde_json::json!({ "traceEvents": events, "displayTimeUnit": "ns" })
    }
}
