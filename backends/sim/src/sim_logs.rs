//! Reading the native kernels' log lines out of a [`Sim`] ([`kernel_log`](crate::kernel_log)
//! files them as the kernels log): the whole list, or the lines after those read before, so a
//! host that follows a run job by job reads each line once.

use crate::report::KernelLogLine;
use crate::sim::Sim;

impl Sim {
    /// Every line the native kernels logged so far, in the order they logged it; none unless
    /// `SimConfig::kernel_logs`.
    pub fn kernel_logs(&self) -> Vec<KernelLogLine> {
        self.kernel_logs_since(0)
    }

    /// The lines the native kernels logged after their first `from` (what an earlier
    /// [`kernel_logs`](Self::kernel_logs) or call of this returned), in the order they logged
    /// them: a reader that follows the lines as a run goes takes each once.
    pub fn kernel_logs_since(&self, from: usize) -> Vec<KernelLogLine> {
        let w = self.world.borrow();
        w.kernel_logs.get(from..).unwrap_or_default().to_vec()
    }
}
