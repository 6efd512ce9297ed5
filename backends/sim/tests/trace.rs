//! The trace: held in memory or streamed to a writer as it happens; the stream is the held
//! trace byte for byte, valid JSON with every kind of event, the same bytes for the same seed,
//! closed when dropped unfinished, and a failing writer is a typed error, never a panic.

mod common;

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use common::*;
use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::{Rect, Role};
use komorebi_sim::trace::{PROCESS_NAMES, STREAM_BUFFER, TraceError};
use komorebi_sim::*;
use serde_json::{Value, json};

/// A writer whose bytes the test keeps.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Shared {
    fn bytes(&self) -> Vec<u8> {
        self.0.borrow().clone()
    }
}

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A disk with `room` bytes: then every write fails as a full disk does.
struct Full {
    room: usize,
    took: Rc<RefCell<usize>>,
}

impl Write for Full {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let mut took = self.took.borrow_mut();
        let n = b.len().min(self.room - *took);
        if n == 0 {
            return Err(io::Error::from_raw_os_error(28)); // ENOSPC
        }
        *took += n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A chip with traffic of every kind the trace shows: two NoC0 senders multicasting along
/// row 3 and waiting for their acks, reads from another tile, and a NoC1 writer; `rounds`
/// multicasts each. `stream`, if given, is where the trace goes, from after the kernels are
/// spawned (so what came before was held and goes first).
fn workload(seed: u64, rounds: u32, stream: Option<Box<dyn Write>>) -> Sim {
    let mut s = Sim::new(SimConfig {
        seed,
        adversarial: true,
        trace: true,
        ..SimConfig::default()
    });
    for (i, &t) in [(1, 3), (11, 3)].iter().enumerate() {
        s.write_l1_u32(t, 0x8000, 1 + i as u32).unwrap();
        set_limit(&mut s, t, 1_000_000);
        s.spawn(t, Role::Reader, move |env| async move {
            let (mut n, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
            let rect = Rect::new(xy((2, 3)), xy((6, 3))).unwrap();
            for k in 0..rounds {
                let dst = l1(0x2_0000 + 64 * (k % 64));
                n.multicast(l1(0x8000), rect, dst, 64, WriteMode::RELAXED)
                    .unwrap();
                if k % 4 == 0 {
                    n.read(at((5, 3), 0x9000), l1(0xA000), 256).unwrap();
                    wait(&mut ctrl, &mut pause, |_| {
                        n.reads_done().map_err(|e| format!("{e}"))
                    })
                    .await
                    .unwrap();
                }
                wait(&mut ctrl, &mut pause, |_| {
                    n.writes_acked().map_err(|e| format!("{e}"))
                })
                .await
                .unwrap();
            }
        })
        .unwrap();
    }
    set_limit(&mut s, (3, 6), 1_000_000);
    s.spawn((3, 6), Role::Writer, move |env| async move {
        let (mut n, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        for k in 0..rounds {
            n.write(
                l1(0x8000),
                at(n1((4, 10)), 0x3_0000 + 64 * (k % 8)),
                128,
                WriteMode::ORDERED,
            )
            .unwrap();
            wait(&mut ctrl, &mut pause, |_| {
                n.writes_acked().map_err(|e| format!("{e}"))
            })
            .await
            .unwrap();
        }
    })
    .unwrap();
    if let Some(out) = stream {
        s.trace_to(out).unwrap();
    }
    s.run(100_000_000);
    s
}

/// The events of a trace's bytes, which must be one JSON object.
fn events(bytes: &[u8]) -> Vec<Value> {
    let v: Value = serde_json::from_slice(bytes).expect("the trace is valid JSON");
    assert_eq!(v["displayTimeUnit"], "ns");
    v["traceEvents"].as_array().expect("traceEvents").clone()
}

fn streamed(seed: u64, rounds: u32) -> Vec<u8> {
    let out = Shared::default();
    let s = workload(seed, rounds, Some(Box::new(out.clone())));
    assert_eq!(s.trace_json(), None, "a streaming trace holds nothing");
    let stats = s.finish_trace([]).expect("streaming").unwrap();
    let bytes = out.bytes();
    assert_eq!(stats.bytes, bytes.len() as u64);
    assert_eq!(stats.events, events(&bytes).len() as u64);
    bytes
}

#[test]
fn a_streamed_trace_is_the_held_trace_byte_for_byte_with_every_kind_of_event() {
    let held = workload(3, 40, None).trace_json().expect("held in memory");
    let bytes = streamed(3, 40);
    assert_eq!(String::from_utf8(bytes.clone()).unwrap(), held.to_string());
    let events = events(&bytes);
    let count = |f: &dyn Fn(&Value) -> bool| events.iter().filter(|e| f(e)).count();
    for (pid, name) in PROCESS_NAMES.iter().enumerate() {
        let named = |e: &Value| {
            e["name"] == "process_name" && e["pid"] == pid && e["args"]["name"] == *name
        };
        assert_eq!(count(&named), 1, "process {pid}");
    }
    assert_eq!(count(&|e| e["name"] == "process_sort_index"), 3);
    // Three kernels, and the three tiles issuing on their NoCs.
    assert_eq!(count(&|e| e["name"] == "thread_name"), 6);
    for (cat, name) in [
        ("kernel", "wait"),
        ("noc0", "multicast 64 B"),
        ("noc0", "read 256 B"),
        ("noc1", "write 128 B"),
    ] {
        let n = count(&|e| e["ph"] == "X" && e["cat"] == cat && e["name"] == name);
        assert!(n > 0, "no {cat} {name}");
    }
    assert_eq!(count(&|e| e["name"] == "multicast 64 B"), 80);
    let m = events
        .iter()
        .find(|e| e["name"] == "multicast 64 B")
        .unwrap();
    assert_eq!(m["args"]["destinations"], 5);
    assert!(m["dur"].as_f64().unwrap() > 0.0 && m["ts"].as_f64().unwrap() >= 0.0);
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_other_seeds_other_bytes() {
    let a = streamed(7, 30);
    assert_eq!(a, streamed(7, 30), "same seed, same trace");
    assert!((8..20).any(|seed| streamed(seed, 30) != a));
}

#[test]
fn extra_events_go_last_and_a_stream_can_start_with_tracing_off() {
    let mut s = Sim::new(SimConfig::default());
    let out = Shared::default();
    s.trace_to(out.clone()).unwrap();
    set_limit(&mut s, (1, 3), 1_000_000);
    s.spawn((1, 3), Role::Reader, |env| async move {
        let (mut n, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        n.write(l1(0x8000), at((4, 3), 0x8000), 64, WriteMode::ORDERED)
            .unwrap();
        wait(&mut ctrl, &mut pause, |_| {
            n.writes_acked().map_err(|e| format!("{e}"))
        })
        .await
        .unwrap();
    })
    .unwrap();
    s.run(1_000_000);
    let host = json!({"ph": "X", "name": "host", "pid": 1000, "tid": 0, "ts": 1.5, "dur": 2});
    s.finish_trace([host.clone()]).unwrap().unwrap();
    let events = events(&out.bytes());
    assert_eq!(events.last(), Some(&host));
    assert!(events.iter().any(|e| e["name"] == "write 64 B"));
    // Finished: tracing is off, and another finish has nothing to do.
    assert!(s.finish_trace([]).is_none());
    assert_eq!(s.trace_json(), None);
}

#[test]
fn a_trace_dropped_unfinished_is_closed_as_valid_json() {
    let out = Shared::default();
    let s = workload(1, 20, Some(Box::new(out.clone())));
    drop(s);
    let events = events(&out.bytes());
    assert!(events.iter().any(|e| e["name"] == "multicast 64 B"));
}

#[test]
fn a_full_disk_is_a_typed_one_line_error_and_the_run_goes_on() {
    let took = Rc::new(RefCell::new(0));
    let room = STREAM_BUFFER + 1000;
    let full = Full {
        room,
        took: took.clone(),
    };
    let s = workload(5, 400, Some(Box::new(full)));
    let err = s.trace_error().expect("the disk filled up");
    assert_eq!(err.kind, io::Error::from_raw_os_error(28).kind());
    // The first buffer went in whole; the second filled the disk and failed.
    assert_eq!(*took.borrow(), room);
    assert!(
        (STREAM_BUFFER as u64..room as u64).contains(&err.written),
        "{err}"
    );
    // The simulation ran to its end all the same: every multicast happened.
    assert_eq!(
        s.stats().deliveries,
        workload(5, 400, None).stats().deliveries
    );
    let done: Result<_, TraceError> = s.finish_trace([]).unwrap();
    let e = done.unwrap_err();
    assert_eq!(e, err, "the first error is the one returned");
    let msg = e.to_string();
    assert!(msg.starts_with("writing the trace failed after "), "{msg}");
    assert_eq!(msg.lines().count(), 1, "{msg}");
}

#[test]
fn a_panic_that_unwinds_through_the_simulator_still_closes_the_trace() {
    let out = Shared::default();
    let into = out.clone();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let mut s = workload(2, 20, Some(Box::new(into)));
        set_limit(&mut s, (2, 3), 1_000_000);
        s.spawn((2, 3), Role::Reader, |env| async move {
            let (mut ctrl, mut pause) = (env.ctrl(), env.pause());
            let _ = wait(&mut ctrl, &mut pause, |_| Ok(false)).await;
            panic!("a kernel's bug, after its wait");
        })
        .unwrap();
        s.run(u64::MAX);
    }));
    assert!(caught.is_err(), "the kernel panicked");
    let events = events(&out.bytes());
    assert!(events.iter().any(|e| e["name"] == "multicast 64 B"));
}

#[test]
fn a_wait_still_open_when_the_trace_ends_is_written_up_to_its_end() {
    // A kernel that waits for acknowledgements that never come (it sent nothing), past the
    // run's end: its wait is in the trace, from when it began to the trace's end.
    let mut s = Sim::new(SimConfig::default());
    let out = Shared::default();
    s.trace_to(out.clone()).unwrap();
    set_limit(&mut s, (1, 3), 1_000_000);
    s.spawn((1, 3), Role::Reader, |env| async move {
        let (mut ctrl, mut pause) = (env.ctrl(), env.pause());
        let _ = wait(&mut ctrl, &mut pause, |_| Ok(false)).await;
    })
    .unwrap();
    s.advance(10_000);
    let now = s.now();
    assert!(now >= 10_000, "{now}");
    s.finish_trace([]).unwrap().unwrap();
    let events = events(&out.bytes());
    let waits: Vec<&Value> = events
        .iter()
        .filter(|e| e["name"] == "wait" && e["tid"] == 0)
        .collect();
    assert_eq!(waits.len(), 1, "{waits:?}");
    let (ts, dur) = (
        waits[0]["ts"].as_f64().unwrap(),
        waits[0]["dur"].as_f64().unwrap(),
    );
    let mhz = SimConfig::default().timing.aiclk_mhz as f64;
    assert!(
        ((ts + dur) * mhz - now as f64).abs() < 1.0,
        "ends at {now}: {ts} + {dur}"
    );
    assert!(ts * mhz < 100.0, "began at once: {ts}");
}
