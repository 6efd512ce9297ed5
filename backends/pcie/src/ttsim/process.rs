//! The host's end of the ttsim server: [`TtsimProcess`] starts the server, sends it requests,
//! and turns its end into a [`TtsimStop`].
//!
//! The process is shared: every chip of a multi-chip library lives in the one ttsim instance,
//! so every [`TtsimBar`](super::TtsimBar) of it holds a clone of the same handle, and the
//! handle serializes their requests (ttsim is single-threaded and not reentrant). When the
//! server ends, every later request answers the same [`PcieError::TtsimStopped`]; the host
//! itself never ends with it.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::stop::TtsimStop;
use super::wire::{HELLO, MAX_TRANSFER, Request};
use crate::error::PcieError;

/// The most device numbers a PCI bus has (ttsim answers all-ones past its last chip).
pub const MAX_CHIPS: u32 = 32;
/// How much of the server's output the host keeps (the end of it, where an error line is).
const OUTPUT_KEPT: usize = 64 * 1024;
/// How long the host waits for the server to end once its streams are closed, before it
/// kills it.
const END_WAIT: Duration = Duration::from_secs(5);
/// How long the host waits for a reply (the greeting included) before it takes the server for
/// stuck, ends it and reports so: far longer than any request takes (a clock request of
/// 1,000 steps of every core of a 32-chip build is well under a second).
pub const REPLY_WAIT: Duration = Duration::from_secs(60);

/// Reads `buf.len()` bytes of reply, waiting at most `wait` for each piece to arrive
/// (`TimedOut` when one does not).
fn read_reply(from: &mut BufReader<ChildStdout>, buf: &mut [u8], wait: Duration) -> io::Result<()> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use std::os::fd::AsFd;
    let mut filled = 0;
    while filled < buf.len() {
        if from.buffer().is_empty() {
            // A signal that interrupts the wait (a handler the host installed) is no dead
            // server: wait again for what is left of the piece's time.
            let until = std::time::Instant::now() + wait;
            let ready = loop {
                let left = until.saturating_duration_since(std::time::Instant::now());
                let timeout = Timespec {
                    tv_sec: left.as_secs() as i64,
                    tv_nsec: left.subsec_nanos() as i64,
                };
                let fd = from.get_ref().as_fd();
                let mut fds = [PollFd::new(&fd, PollFlags::IN)];
                match poll(&mut fds, Some(&timeout)) {
                    Err(rustix::io::Errno::INTR) => continue,
                    r => break r.map_err(io::Error::from)?,
                }
            };
            if ready == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no reply within {} s", wait.as_secs_f64()),
                ));
            }
        }
        let n = match from.read(&mut buf[filled..]) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => r?,
        };
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        filled += n;
    }
    Ok(())
}

/// What the server printed, the last [`OUTPUT_KEPT`] bytes of it.
#[derive(Default)]
struct Output(Vec<u8>);

impl Output {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
        if self.0.len() > 2 * OUTPUT_KEPT {
            let cut = self.0.len() - OUTPUT_KEPT;
            self.0.drain(..cut);
        }
    }
}

struct Channel {
    child: Option<Child>,
    to: Option<BufWriter<ChildStdin>>,
    from: Option<BufReader<ChildStdout>>,
    output: Arc<Mutex<Output>>,
    drain: Option<JoinHandle<()>>,
    stopped: Option<PcieError>,
    steps: u64,
    reply_wait: Duration,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Channel {
    /// Ends the server (closing its input lets it call `libttsim_exit` and return), waits for
    /// it within [`END_WAIT`] or kills it, and gathers what it printed. Returns how it ended.
    fn end(&mut self) -> String {
        if let Some(mut to) = self.to.take() {
            let _ = Request::Exit.write_to(&mut to);
            let _ = to.flush();
        }
        self.from = None;
        let mut ended = String::from("still running");
        if let Some(mut child) = self.child.take() {
            let start = Instant::now();
            let status = loop {
                match child.try_wait() {
                    Ok(Some(s)) => break Some(s),
                    Ok(None) if start.elapsed() < END_WAIT => {
                        std::thread::sleep(Duration::from_millis(5))
                    }
                    _ => {
                        let _ = child.kill();
                        break child.wait().ok();
                    }
                }
            };
            ended = match status {
                Some(s) => describe(s),
                None => "unknown".into(),
            };
        }
        if let Some(d) = self.drain.take() {
            let _ = d.join();
        }
        ended
    }

    /// The server is gone or misbehaved (`e`): end it, keep why, and return it.
    fn fail(&mut self, e: io::Error) -> PcieError {
        if let Some(stop) = &self.stopped {
            return stop.clone();
        }
        if e.kind() == io::ErrorKind::TimedOut {
            // A stuck server would not read the exit request either.
            if let Some(child) = self.child.as_mut() {
                let _ = child.kill();
            }
        }
        let ended = self.end();
        let output = String::from_utf8_lossy(&lock(&self.output).0).into_owned();
        let mut stop = TtsimStop::from_output(&output, &ended);
        if stop.category.is_none() && e.kind() == io::ErrorKind::InvalidData {
            stop.message = format!("{}; the host read a malformed reply: {e}", stop.message);
        }
        if stop.category.is_none() && e.kind() == io::ErrorKind::TimedOut {
            stop.message = format!(
                "the ttsim server answered nothing within {} s, so the host ended it ({ended})",
                self.reply_wait.as_secs_f64()
            );
        }
        let err = PcieError::TtsimStopped(stop);
        self.stopped = Some(err.clone());
        err
    }

    fn alive(&self) -> Result<(), PcieError> {
        match &self.stopped {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Sends `request` and, when `reply` is not empty, reads that many bytes of answer.
    fn call(&mut self, request: &Request, reply: &mut [u8]) -> Result<(), PcieError> {
        self.alive()?;
        let r = (|| {
            let to = self.to.as_mut().ok_or(io::ErrorKind::BrokenPipe)?;
            request.write_to(to)?;
            if reply.is_empty() {
                return Ok(());
            }
            to.flush()?;
            let from = self.from.as_mut().ok_or(io::ErrorKind::BrokenPipe)?;
            read_reply(from, reply, self.reply_wait)
        })();
        r.map_err(|e| self.fail(e))
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.end();
    }
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => status.to_string(),
    }
}

/// A running ttsim server, shared by every chip it simulates.
#[derive(Clone)]
pub struct TtsimProcess {
    channel: Arc<Mutex<Channel>>,
    library: PathBuf,
}

impl std::fmt::Debug for TtsimProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtsimProcess")
            .field("library", &self.library)
            .finish_non_exhaustive()
    }
}

impl TtsimProcess {
    /// Starts `server` (the `komorebi-ttsim-server` binary) on the library at `library`
    /// (`libttsim.so`) and waits for its greeting: ttsim is initialized when this returns.
    /// A reply that takes longer than [`REPLY_WAIT`] ends the server.
    pub fn spawn(server: &Path, library: &Path) -> Result<Self, PcieError> {
        Self::spawn_waiting(server, library, REPLY_WAIT)
    }

    /// [`TtsimProcess::spawn`] with `reply_wait` in place of [`REPLY_WAIT`].
    pub fn spawn_waiting(
        server: &Path,
        library: &Path,
        reply_wait: Duration,
    ) -> Result<Self, PcieError> {
        let unavailable = |why: String| PcieError::TtsimUnavailable {
            library: library.display().to_string(),
            why,
        };
        if !library.is_file() {
            let what = match library.is_dir() {
                true => "a directory, not the library file",
                false => "no such file",
            };
            return Err(unavailable(format!(
                "{what} (build ttsim from its source, or give the path of a libttsim.so from \
                 Tenstorrent's ttsim releases)"
            )));
        }
        let mut child = Command::new(server)
            .arg(library)
            .env_remove("TTSIM_SEMIHOSTING")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                unavailable(format!(
                    "the ttsim server {} cannot be started: {e}",
                    server.display()
                ))
            })?;
        let output = Arc::new(Mutex::new(Output::default()));
        let drain = child.stderr.take().map(|mut stderr| {
            let output = Arc::clone(&output);
            std::thread::Builder::new()
                .name("ttsim-output".into())
                .spawn(move || {
                    let mut buf = [0; 8192];
                    while let Ok(n) = stderr.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        lock(&output).push(&buf[..n]);
                    }
                })
        });
        let drain = match drain.transpose() {
            Ok(d) => d,
            Err(e) => {
                let _ = child.kill();
                return Err(unavailable(format!("cannot start a thread: {e}")));
            }
        };
        let mut channel = Channel {
            to: child.stdin.take().map(BufWriter::new),
            from: child
                .stdout
                .take()
                .map(|s| BufReader::with_capacity(1 << 20, s)),
            child: Some(child),
            output,
            drain,
            stopped: None,
            steps: 0,
            reply_wait,
        };
        let mut hello = [0; HELLO.len()];
        let greeted = channel
            .from
            .as_mut()
            .ok_or_else(|| io::Error::from(io::ErrorKind::BrokenPipe))
            .and_then(|f| read_reply(f, &mut hello, reply_wait));
        match greeted {
            Ok(()) if hello == HELLO => {}
            Ok(()) if hello[..7] == HELLO[..7] => {
                // It may misread the exit request: end it at once.
                if let Some(child) = channel.child.as_mut() {
                    let _ = child.kill();
                }
                let _ = channel.end();
                return Err(PcieError::TtsimUnavailable {
                    library: library.display().to_string(),
                    why: format!(
                        "the server {} speaks wire version {}, this program {}: it was built \
                         from other sources (rebuild it: cargo build --release --bin \
                         komorebi-ttsim-server)",
                        server.display(),
                        hello[7] as char,
                        HELLO[7] as char
                    ),
                });
            }
            Ok(()) => {
                let e = io::Error::new(io::ErrorKind::InvalidData, "not the server's greeting");
                return Err(start_error(channel.fail(e), library));
            }
            Err(e) => return Err(start_error(channel.fail(e), library)),
        }
        Ok(Self {
            channel: Arc::new(Mutex::new(channel)),
            library: library.to_path_buf(),
        })
    }

    /// The library this server runs.
    pub fn library(&self) -> &Path {
        &self.library
    }

    /// Why the server ended, if it did.
    pub fn stopped(&self) -> Option<PcieError> {
        lock(&self.channel).stopped.clone()
    }

    /// Clock steps the host has asked ttsim to run so far.
    pub fn steps(&self) -> u64 {
        lock(&self.channel).steps
    }

    /// The config-space word at `offset` of PCI device `device` (bus and function 0).
    pub fn config_read32(&self, device: u32, offset: u32) -> Result<u32, PcieError> {
        let mut b = [0; 4];
        lock(&self.channel).call(
            &Request::ConfigRead {
                bdf: (device & 0x1F) << 3,
                offset,
            },
            &mut b,
        )?;
        Ok(u32::from_le_bytes(b))
    }

    /// The device numbers of every chip the library presents (ttsim answers all-ones from the
    /// config space of a device past its last chip).
    pub fn chips(&self) -> Result<Vec<u32>, PcieError> {
        let mut chips = Vec::new();
        for device in 0..MAX_CHIPS {
            if self.config_read32(device, 0)? == u32::MAX {
                break;
            }
            chips.push(device);
        }
        Ok(chips)
    }

    /// Reads `buf.len()` bytes at ttsim's physical address `paddr`.
    pub fn read(&self, paddr: u64, buf: &mut [u8]) -> Result<(), PcieError> {
        let mut c = lock(&self.channel);
        for (i, chunk) in buf.chunks_mut(MAX_TRANSFER as usize).enumerate() {
            let at = paddr + (i * MAX_TRANSFER as usize) as u64;
            let len = chunk.len() as u32;
            c.call(&Request::Read { paddr: at, len }, chunk)?;
        }
        Ok(())
    }

    /// Writes `data` at ttsim's physical address `paddr` (not waited for: a later reply, or the
    /// end of the server, says whether it landed).
    pub fn write(&self, paddr: u64, data: &[u8]) -> Result<(), PcieError> {
        let mut c = lock(&self.channel);
        for (i, chunk) in data.chunks(MAX_TRANSFER as usize).enumerate() {
            let at = paddr + (i * MAX_TRANSFER as usize) as u64;
            c.call(
                &Request::Write {
                    paddr: at,
                    data: chunk.to_vec(),
                },
                &mut [],
            )?;
        }
        Ok(())
    }

    /// Runs `steps` clock steps of every chip (`libttsim_clock`), and returns once they ran.
    pub fn clock(&self, steps: u32) -> Result<(), PcieError> {
        let mut c = lock(&self.channel);
        c.call(&Request::Clock { steps }, &mut [0])?;
        c.steps += steps as u64;
        Ok(())
    }
}

/// A server that ended before its greeting: a ttsim error line is a stop; anything else (the
/// server's own one line: a library that cannot be loaded, a missing symbol) is why ttsim is
/// unavailable.
fn start_error(e: PcieError, library: &Path) -> PcieError {
    match e {
        PcieError::TtsimStopped(stop) if stop.category.is_none() => {
            // The server's own one line, when it printed one, says it best.
            let own = "komorebi-ttsim-server: ";
            let why = match stop.message.rfind(own) {
                Some(at) => stop.message[at + own.len()..].to_string(),
                None => stop.message,
            };
            PcieError::TtsimUnavailable {
                library: library.display().to_string(),
                why,
            }
        }
        other => other,
    }
}
