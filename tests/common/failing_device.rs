//! A device that fails one write, for the session's and the dispatcher's tests of a post that
//! fails part way.

use komorebi_kernel::abi;

/// The writes a [`FailingWrite`] let through: tile, address, bytes.
pub type Writes = std::sync::Arc<std::sync::Mutex<Vec<(komorebi_hal::Xy, u32, Vec<u8>)>>>;

/// A device with a p150's grid whose L1 takes writes and reads zeros, failing the write numbered
/// `fail_at` (from 0) once: enough for `Session::post`. Its writes are shared with the test.
pub struct FailingWrite {
    /// Every write that went through: tile, address, bytes.
    pub writes: Writes,
    /// The write that fails, counted from 0.
    pub fail_at: usize,
    /// Whether it failed already (it fails once).
    pub failed: bool,
    /// Whether every read of L1 fails (a device that stopped answering).
    pub reads_fail: bool,
    /// Whether `advance` says its deadline came (its clock stands at 0 all the same); else it
    /// says nothing can change.
    pub deadline_comes: bool,
}

impl FailingWrite {
    /// A device failing write `fail_at` once (`usize::MAX`: none), and every read with
    /// `reads_fail`; its writes go to `writes`.
    pub fn new(writes: Writes, fail_at: usize, reads_fail: bool) -> Self {
        Self {
            writes,
            fail_at,
            failed: false,
            reads_fail,
            deadline_comes: false,
        }
    }

    /// A session on it.
    pub fn session(self) -> Result<komorebi::Session, komorebi::SessionError> {
        komorebi::Session::with_device(Box::new(self), Box::new(NoRecords))
    }
}

impl komorebi::host::device::Device for FailingWrite {
    fn chip(&self) -> komorebi::chip::ChipKind {
        komorebi::chip::ChipKind::Blackhole
    }
    fn harvest_word(&self) -> u32 {
        0x3000
    }
    fn fused_dram(&self) -> Option<u8> {
        None
    }
    fn read_l1(
        &self,
        _: komorebi_hal::Xy,
        _: u32,
        buf: &mut [u8],
    ) -> Result<(), komorebi::host::device::DeviceError> {
        if self.reads_fail {
            return Err(komorebi::host::device::DeviceError::new(
                "the test's failing read",
            ));
        }
        buf.fill(0);
        Ok(())
    }
    fn write_l1(
        &mut self,
        tile: komorebi_hal::Xy,
        addr: u32,
        data: &[u8],
    ) -> Result<(), komorebi::host::device::DeviceError> {
        let mut w = self.writes.lock().unwrap();
        if w.len() == self.fail_at && !self.failed {
            self.failed = true;
            return Err(komorebi::host::device::DeviceError::new(
                "the test's failing write",
            ));
        }
        w.push((tile, addr, data.to_vec()));
        Ok(())
    }
    fn read_dram(
        &self,
        _: u8,
        _: u64,
        buf: &mut [u8],
    ) -> Result<(), komorebi::host::device::DeviceError> {
        buf.fill(0);
        Ok(())
    }
    fn write_dram(
        &mut self,
        _: u8,
        _: u64,
        _: &[u8],
    ) -> Result<(), komorebi::host::device::DeviceError> {
        Ok(())
    }
    fn configure_cb(
        &mut self,
        _: komorebi_hal::Xy,
        _: u8,
        _: u32,
        _: u32,
        _: u16,
    ) -> Result<(), komorebi::host::device::DeviceError> {
        Ok(())
    }
    fn now(&self) -> u64 {
        0
    }
    fn aiclk_mhz(&self) -> u32 {
        1350
    }
    fn advance(
        &mut self,
        _: u64,
        _: &mut dyn FnMut(&dyn komorebi::host::device::Peek) -> bool,
    ) -> komorebi::host::device::Advance {
        if self.deadline_comes {
            komorebi::host::device::Advance::Deadline
        } else {
            komorebi::host::device::Advance::Idle
        }
    }
}

/// Reads no give-up of its own.
pub struct NoRecords;

impl komorebi::host::session::ProgramRecords for NoRecords {
    fn give_ups(
        &self,
        _: [u8; 2],
        _: u32,
        _: &mut dyn FnMut(u32) -> Result<u32, komorebi::SessionError>,
        _: &mut Vec<komorebi::host::session::CoreGiveUp>,
    ) -> Result<(), komorebi::SessionError> {
        Ok(())
    }
    fn repeats(&self, _: &abi::KernelGiveUp) -> bool {
        false
    }
}
