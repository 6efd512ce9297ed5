//! The checks a run's configuration passes before anything runs: each refusal names the flag
//! whose value is not allowed, says why, and says what is allowed.

use blackhole_pac::grid::DRAM_BANKS;
use blackhole_pac::harvest::HarvestMask;
use komorebi_broadcast::args::{MAX_BLOCKS, MAX_BUFFER_PAGES, MAX_WINDOW};

use crate::chip::ChipKind;
use crate::host::backend::Exec;

use super::config::{BUFFER_BASE, BroadcastConfig, DeviceChoice, MAX_CHIPS, Protocol};
use super::error::{BroadcastError, flag};
use super::faults::{FaultKind, FaultSpec};

impl BroadcastConfig {
    /// Refuses a `--firmware` directory the run would not load (`--device sim` loads no image)
    /// or whose images cannot be read: a bad flag, found before the run, rather than a device
    /// that cannot be used.
    fn validate_firmware(&self) -> Result<(), BroadcastError> {
        let Some(dir) = &self.firmware else {
            return Ok(());
        };
        if self.device == DeviceChoice::Sim {
            return Err(flag(
                "--firmware",
                format!(
                    "{} with --device sim: its native kernels run in this process and no image is \
                     loaded (allowed: --firmware with --device pcie-sim, ttsim or a card)",
                    dir.display()
                ),
            ));
        }
        let hint = crate::host::backend::firmware_build_hint_with(self.chip, self.image_handler());
        let firmware = komorebi_pcie::firmware::Firmware::from_dir(dir)
            .map_err(|e| flag("--firmware", format!("{}: {e}; {hint}", dir.display())))?;
        // Each image drives one chip's registers (its header names the chip): the chip the run
        // is on (`--chip`, which every device is checked against when it opens). The images
        // are loaded with the native kernels too (`pcie-sim`'s loader is a card's).
        let chip = self.chip;
        if let Some(other) = firmware.images.iter().find(|i| {
            let built_for = i.header.device_id;
            built_for != 0 && built_for != chip.device_id()
        }) {
            let built_for = other.header.device_id;
            let theirs = ChipKind::from_device_id(built_for)
                .map_or_else(|| format!("PCI device {built_for:#06x}"), |k| k.to_string());
            return Err(flag(
                "--firmware",
                format!(
                    "{} is built for {theirs}, and the run is on a {chip} (allowed: images \
                     built for the {chip}: {hint})",
                    other.name,
                ),
            ));
        }
        if self.runs_native() {
            // The native kernels carry every handler.
            return Ok(());
        }
        // An image carries one handler (code room): the protocol's commands must be its. An
        // image of no handler was built before images named theirs.
        let wanted = self.protocol.handler();
        let mut carried = firmware.images.iter().map(|i| i.header.handler);
        if carried.clone().any(|h| h == 0) {
            return Err(flag(
                "--firmware",
                format!(
                    "{}: its images name no handler (0, which only the native kernels' \
                     header-only images carry: firmware built before images named their \
                     handler) (allowed: images built from this source: {hint})",
                    dir.display(),
                ),
            ));
        }
        match carried.find(|&h| h != wanted) {
            Some(other) => {
                let theirs = Protocol::of_handler(other);
                let carried = theirs.map_or(format!("handler {other}, no protocol's"), |p| {
                    format!("the {p} handler")
                });
                let instead = theirs.map_or(String::new(), |p| format!("--protocol {p}, or "));
                let protocol = self.protocol;
                Err(flag(
                    "--firmware",
                    format!(
                        "{}: its images carry {carried}, and --protocol {protocol} posts the \
                         {protocol} handler's commands (allowed: {instead}images with the \
                         {protocol} handler: {hint})",
                        dir.display(),
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// What `--chip` allows: a Blackhole takes no row mask; a Wormhole runs on the simulator
    /// directly or as a card (native kernels), ttsim's `wh` or a card (firmware), one chip, its
    /// own rows harvested (simulated only: a device's come from its ARC), no Blackhole mask or
    /// fused bank; on ttsim or a card, neither chip takes a simulated chip's harvesting or fused
    /// bank (the device reports its own).
    fn validate_chip(&self) -> Result<(), BroadcastError> {
        if self.chip == ChipKind::Blackhole {
            if self.row_harvest != wormhole_pac::harvest::HarvestMask::NONE {
                return Err(flag(
                    "--harvest",
                    format!(
                        "a row mask ({:#05x}) with a Blackhole, whose harvesting is by columns \
                         (allowed: a row mask with --chip wormhole)",
                        self.row_harvest.bits()
                    ),
                ));
            }
            // A device reports its own harvesting and fused bank: a simulated chip's flags
            // would be ignored there, so they are refused rather than left unsaid.
            if !self.device.in_process() {
                if self.harvest != HarvestMask::P100_P150 {
                    return Err(flag(
                        "--harvest",
                        format!(
                            "{:#06x} with --device {}: a device's harvested columns come from \
                             its ARC telemetry (allowed: --harvest with --device sim or \
                             pcie-sim)",
                            self.harvest.bits(),
                            self.device
                        ),
                    ));
                }
                if let Some(bank) = self.fused_dram {
                    return Err(flag(
                        "--fused-dram",
                        format!(
                            "{bank} with --device {}: a device's fused DRAM bank comes from its \
                             ARC telemetry (ENABLED_GDDR) (allowed: --fused-dram with --device \
                             sim or pcie-sim)",
                            self.device
                        ),
                    ));
                }
            }
            return Ok(());
        }
        if self.device == DeviceChoice::PcieSim && self.exec == Exec::Firmware {
            return Err(flag(
                "--exec",
                "firmware with --chip wormhole --device pcie-sim: the simulator's firmware cores \
                 model a Blackhole's (allowed: --exec native there; the Wormhole firmware runs \
                 on ttsim's `wh` build, --device ttsim:PATH, or a card)",
            ));
        }
        if let Some(bank) = self.fused_dram {
            return Err(flag(
                "--fused-dram",
                format!(
                    "{bank} with --chip wormhole: a Wormhole B0's 6 DRAM banks all work, and a \
                     fused bank is a Blackhole's (allowed: --fused-dram with --chip blackhole)"
                ),
            ));
        }
        if self.harvest != HarvestMask::P100_P150 {
            return Err(flag(
                "--chip",
                "wormhole with a Blackhole column mask: the mask describes the simulated \
                 Blackhole; the simulated Wormhole harvests rows (allowed: --harvest with \
                 --chip wormhole names its rows)",
            ));
        }
        if !self.device.in_process() && self.row_harvest != wormhole_pac::harvest::HarvestMask::NONE
        {
            return Err(flag(
                "--harvest",
                format!(
                    "{:#05x} with --device {}: a device's rows come from its ARC (ttsim's `wh` \
                     harvests none) (allowed: a row mask with --device sim or pcie-sim)",
                    self.row_harvest.bits(),
                    self.device
                ),
            ));
        }
        Ok(())
    }

    /// Refuses `--log` or `--log-follow` with firmware images whose log tables cannot be read
    /// (built without logging, stripped): found before the run, not after it, when the report
    /// would be lost with them.
    fn validate_log(&self) -> Result<(), BroadcastError> {
        if self.log.is_none() && self.log_follow.is_none() {
            return Ok(());
        }
        if self.protocol == Protocol::Handshake && !self.runs_native() && self.firmware.is_none() {
            let which = if self.log.is_some() {
                "--log"
            } else {
                "--log-follow"
            };
            return Err(flag(
                which,
                format!(
                    "with --protocol handshake on the firmware: the handshake images are built \
                     without logging (code room) (allowed: {which} with --protocol komorebi, \
                     or with the handshake's native kernels: --device sim, or pcie-sim with \
                     --exec native)"
                ),
            ));
        }
        super::logs::log_tables(self).map(drop)
    }

    /// Refuses, on ttsim or a card, what only the simulator has: its trace, its seed and its
    /// adversary (a device's schedule is its own), rather than run without them unsaid.
    fn validate_simulated_only(&self) -> Result<(), BroadcastError> {
        if self.device.in_process() {
            return Ok(());
        }
        // Each flag given, with its value as the message shows it (a switch has none).
        let refused = [
            (
                "--trace",
                self.trace.as_ref().map(|p| format!("{} ", p.display())),
                "only the simulator records every transfer and wait",
            ),
            (
                "--seed",
                (self.seed != 0).then(|| format!("{} ", self.seed)),
                "the seed orders the simulator's schedule; a device's is its own",
            ),
            (
                "--adversarial",
                self.adversarial.then(String::new),
                "only the simulator's schedule can be reordered",
            ),
        ];
        let given = refused
            .into_iter()
            .find_map(|(name, value, why)| Some((name, value?, why)));
        match given {
            Some((name, value, why)) => Err(flag(
                name,
                format!(
                    "{value}with --device {}: {why} (allowed: {name} with --device sim or \
                     pcie-sim)",
                    self.device
                ),
            )),
            None => Ok(()),
        }
    }

    pub(super) fn validate(&self) -> Result<(), BroadcastError> {
        self.validate_chip()?;
        self.validate_firmware()?;
        if !(1..=MAX_CHIPS).contains(&self.chips) {
            return Err(flag(
                "--chips",
                format!("{} (allowed: 1..={MAX_CHIPS})", self.chips),
            ));
        }
        self.chips_in_all(self.chips)?;
        if self.chips > 1
            && let DeviceChoice::Ttsim { chip, .. } = &self.device
            && *chip != 0
        {
            return Err(flag(
                "--chips",
                format!(
                    "{} with --device {}: the run takes the build's first chips itself \
                             (allowed: --device ttsim[:PATH] without @CHIP with --chips)",
                    self.chips, self.device
                ),
            ));
        }
        if self.protocol == Protocol::Handshake && !self.faults.is_empty() {
            return Err(flag(
                "--protocol",
                "handshake with --fault: faults are injected through komorebi's program and \
                 broadcast area, and their expected outcomes are komorebi's (allowed: --fault \
                 with --protocol komorebi)",
            ));
        }
        self.validate_simulated_only()?;
        if !self.device.in_process()
            && let Some(f) = self.faults.iter().find(|f| f.kind.is_noc())
        {
            return Err(flag(
                "--fault",
                format!(
                    "{} with --device {}: it drops a NoC transaction inside the simulator; \
                         the host of ttsim or a card cannot drop one (allowed: --device sim or \
                         pcie-sim; on ttsim and a card: stall-dm, stall-compute, \
                         stall-sender-compute, bad-words, host-stop)",
                    f.kind.name(),
                    self.device
                ),
            ));
        }
        if self.speed_up.is_some() {
            self.speed_up_allowed()?;
        }
        if self.profile.is_some() && !self.cores_counted() {
            return Err(flag(
                "--profile",
                format!(
                    "with --device {} --exec {}: only the simulator's RISC-V cores count cycles \
                     by instruction (allowed: --profile with --device pcie-sim --exec firmware, \
                     a Blackhole)",
                    self.device, self.exec
                ),
            ));
        }
        if self.named_kernel_costs().is_some() && !self.device.in_process() {
            return Err(flag(
                "--kernel-costs",
                format!(
                    "{} with --device {}: only the simulator charges native kernels per call \
                     (allowed: --kernel-costs firmware with --device sim or pcie-sim; elsewhere \
                     only {}, the default)",
                    self.kernel_costs,
                    self.device,
                    komorebi_sim::KernelCosts::default()
                ),
            ));
        }
        match (&self.device, self.exec) {
            (DeviceChoice::Sim, Exec::Firmware) => {
                return Err(flag(
                    "--exec",
                    "firmware with --device sim (allowed: --exec firmware with --device \
                     pcie-sim, whose loader and boot run the images as a card's do, or ttsim)",
                ));
            }
            (DeviceChoice::Ttsim { .. } | DeviceChoice::Card(_), Exec::Native) => {
                return Err(flag(
                    "--exec",
                    format!(
                        "native with --device {}: ttsim and a card run the firmware ELF files \
                         only (allowed: --exec firmware, the default there)",
                        self.device
                    ),
                ));
            }
            _ => {}
        }
        if let Some(bank) = self.fused_dram.filter(|&b| b as usize >= DRAM_BANKS) {
            return Err(flag(
                "--fused-dram",
                format!(
                    "{bank} (allowed: 0..={}, the DRAM bank fused off; none by default)",
                    DRAM_BANKS - 1
                ),
            ));
        }
        if self.blocks > MAX_BLOCKS {
            return Err(flag(
                "--blocks",
                format!("{} (allowed: 0..={MAX_BLOCKS})", self.blocks),
            ));
        }
        if self.pages == 0 {
            return Err(flag(
                "--pages",
                format!("0 (allowed: 1..={MAX_BUFFER_PAGES})"),
            ));
        }
        if self.window == 0 || self.window > MAX_WINDOW {
            return Err(flag(
                "--window",
                format!("{} (allowed: 1..={MAX_WINDOW})", self.window),
            ));
        }
        if self.window as u32 * self.pages as u32 > MAX_BUFFER_PAGES {
            return Err(flag(
                "--pages",
                format!(
                    "window * pages = {} (allowed: at most {MAX_BUFFER_PAGES})",
                    self.window as u32 * self.pages as u32
                ),
            ));
        }
        if self.page_size == 0 || !self.page_size.is_multiple_of(64) || self.page_size > 1 << 20 {
            return Err(flag(
                "--page-size",
                format!(
                    "{} (allowed: 64..=1048576, a multiple of 64; DRAM reads are 64-byte aligned)",
                    self.page_size
                ),
            ));
        }
        if self.jobs == 0 {
            return Err(flag("--jobs", format!("0 (allowed: 1..={})", u32::MAX)));
        }
        if !self.rows && !self.columns {
            return Err(flag("--along", "no broadcast (allowed: row, column, both)"));
        }
        let buffers = self.operands().len() as u64
            * self.window as u64
            * self.pages as u64
            * self.page_size as u64;
        let room = crate::chip::l1_size(self.chip) as u64 - BUFFER_BASE as u64;
        if buffers > room {
            // Window, pages and page size all make the buffers: the message gives their product
            // and names the one out of proportion: of those that alone brought to their least
            // would let the buffers fit (else of all three), the one furthest above its default.
            let operands = self.operands().len();
            let (window, pages, page) =
                (self.window as u64, self.pages as u64, self.page_size as u64);
            let fits = |w: u64, p: u64, b: u64| operands as u64 * w * p * b <= room;
            let default = BroadcastConfig::default();
            let flags = [
                (
                    "--window",
                    fits(1, pages, page),
                    window,
                    default.window as u64,
                ),
                (
                    "--pages",
                    fits(window, 1, page),
                    pages,
                    default.pages as u64,
                ),
                (
                    "--page-size",
                    fits(window, pages, 64),
                    page,
                    default.page_size as u64,
                ),
            ];
            let alone = flags.iter().any(|f| f.1);
            let at_fault = flags
                .iter()
                .filter(|f| f.1 || !alone)
                // value / default, compared without division: a/b > c/d as a*d > c*b.
                .reduce(|best, f| if f.2 * best.3 > best.2 * f.3 { f } else { best })
                .map_or("--window", |f| f.0);
            // Both broadcasts take a buffer each: one alone has the whole room.
            let alone = match operands {
                2 => format!(", or {room} with --along row or column"),
                _ => String::new(),
            };
            return Err(flag(
                at_fault,
                format!(
                    "{} of --window {} x --pages {} x --page-size {} = {buffers} bytes do not \
                     fit the {room} bytes of L1 above {BUFFER_BASE:#x} (allowed: window x pages \
                     x page size at most {}{alone})",
                    crate::num::count(operands as u64, "broadcast buffer", "broadcast buffers"),
                    self.window,
                    self.pages,
                    self.page_size,
                    room / operands.max(1) as u64
                ),
            ));
        }
        // What no grid makes right is refused before any device opens, so that the exit code
        // (2) does not depend on the device (the plan checks the rest on the device's grid).
        if self.rect.is_empty() {
            return Err(super::error::empty_rect(self.rect));
        }
        self.check_faults_on_the_rect()?;
        self.validate_dram()?;
        // Last: it reads the images' tables, and a flag no run can have is named first.
        self.validate_log()
    }

    /// The jobs' data fits a DRAM bank. On the simulator (whose grid is the flags'): sure when a
    /// span a sender fits; else the plan on that grid counts its layers and refuses exactly
    /// what it would refuse (a rectangle that does not lay out there is refused elsewhere). On
    /// ttsim or a card the grid is read only once the device is open, and another grid may lay
    /// the copies out in other layers: here only data that no grid of the chip holds is refused
    /// (so that a bench or the ranks of `--mpi` refuse it before any run), and the plan laid
    /// out on the device's own geometry refuses the rest, with the same words
    /// (`BroadcastPlan::per_job`).
    fn validate_dram(&self) -> Result<(), BroadcastError> {
        if !self.device.in_process() {
            use crate::num::count;
            let (senders, layers) = self.least_on_any_grid();
            let what = format!(
                "{} of {} of {} bytes for at least {} on any grid of the chip, their copies at \
                 least {} deep,",
                count(self.blocks.into(), "block", "blocks"),
                count(self.pages.into(), "page", "pages"),
                self.page_size,
                count(senders, "sender", "senders"),
                count(layers, "layer", "layers"),
            );
            let region = layers.saturating_mul(self.copy_bytes());
            return match self.dram_refusal(&what, region, true) {
                Some(refused) => Err(refused),
                None => Ok(()),
            };
        }
        let [a, w] = self.senders();
        let (need, usable) = self.dram_need((a + w).saturating_mul(self.copy_bytes()));
        if need <= usable {
            return Ok(());
        }
        let Ok(g) = crate::chip::geometry(self.chip, self.harvest_word(), self.fused_dram) else {
            return Ok(());
        };
        match super::plan::BroadcastPlan::lay_out(self, &g) {
            Err(
                e @ BroadcastError::Flag {
                    flag: "--blocks" | "--jobs",
                    ..
                },
            ) => Err(e),
            _ => Ok(()),
        }
    }
}

impl BroadcastConfig {
    /// Refuses what of the faults no grid can make right, before any device opens (so the
    /// refusal is the same, exit 2, whatever the device): a core outside the rectangle, a fault
    /// given twice, two stalls of one kernel, a fault of a core with bad words that could never
    /// fire, a BLOCK bad words do not take, and a stall block that never comes. What depends
    /// on the broadcasts laid out on the device's grid is [`BroadcastPlan::check_faults`]'s.
    pub(super) fn check_faults_on_the_rect(&self) -> Result<(), BroadcastError> {
        let r = self.rect;
        for (i, f) in self.faults.iter().enumerate() {
            if !r.contains_xy(f.core) {
                return Err(flag(
                    "--fault",
                    format!(
                        "{}: core {} is not in --rect {r} (allowed: X {}..={}, Y {}..={})",
                        f.kind.name(),
                        f.core,
                        r.x0,
                        r.x0 as u32 + r.columns as u32 - 1,
                        r.y0,
                        r.y0 as u32 + r.rows as u32 - 1,
                    ),
                ));
            }
            // The same fault twice acts once (a drop's two filters match one transaction).
            if self.faults[..i].contains(f) {
                return Err(flag(
                    "--fault",
                    format!("{f} is given twice (allowed: each fault once)"),
                ));
            }
            // One stall per kernel: a second would replace the first.
            let kernel = |k: FaultKind| match k {
                FaultKind::StallDm => Some(0),
                FaultKind::StallCompute | FaultKind::StallSenderCompute => Some(1),
                _ => None,
            };
            let same_kernel = |g: &&FaultSpec| {
                g.core == f.core && kernel(f.kind).is_some_and(|k| kernel(g.kind) == Some(k))
            };
            if let Some(before) = self.faults[..i].iter().find(same_kernel) {
                return Err(flag(
                    "--fault",
                    format!(
                        "{before} and {f} stall the same kernel of core {} (allowed: one stall \
                         per kernel of a core)",
                        f.core
                    ),
                ));
            }
            // Bad words stop the core's data-movement kernels before any block: a fault of its
            // broadcast calls or blocks there could never fire (a drop of a VALID to it or a
            // host stop at block 0 still can).
            let reaches_blocks = |k: FaultKind| {
                !matches!(
                    k,
                    FaultKind::BadWords | FaultKind::DropValid | FaultKind::HostStop
                )
            };
            let bad = |g: &FaultSpec| g.core == f.core && g.kind == FaultKind::BadWords;
            if reaches_blocks(f.kind) && self.faults.iter().any(bad) {
                return Err(flag(
                    "--fault",
                    format!(
                        "{f}: core {} has bad-words too, so it runs no block and the fault would \
                         never fire (allowed: bad-words with drop-valid or host-stop on one core)",
                        f.core
                    ),
                ));
            }
            match f.kind {
                FaultKind::BadWords if f.block != 0 => {
                    return Err(flag(
                        "--fault",
                        format!(
                            "bad-words:{},{}:{}: bad-words takes no BLOCK (allowed: \
                             bad-words:{},{})",
                            f.core.x, f.core.y, f.block, f.core.x, f.core.y
                        ),
                    ));
                }
                FaultKind::StallDm | FaultKind::StallCompute | FaultKind::StallSenderCompute => {
                    self.check_fault_block(f, self.blocks as u64, "block")?
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Refuses fault `f` when its BLOCK is not below `count`, the things of its kind (`what`)
    /// job 0 has: the fault would never fire.
    pub(super) fn check_fault_block(
        &self,
        f: &FaultSpec,
        count: u64,
        what: &str,
    ) -> Result<(), BroadcastError> {
        if (f.block as u64) < count {
            return Ok(());
        }
        let allowed = if count == 0 {
            "none: nothing of that kind happens".to_string()
        } else {
            format!("0..{count}")
        };
        Err(flag(
            "--fault",
            format!(
                "{}: {what} {} never comes (allowed: {allowed} with --blocks {}), so the fault \
                 would never fire",
                f.kind.name(),
                f.block,
                self.blocks
            ),
        ))
    }
}
