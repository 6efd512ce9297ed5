//! The text a run's summary prints: its lines ([`BroadcastSummary`]'s `Display`) and its verdict
//! ([`BroadcastSummary::result_line`]).

use crate::num::{count, duration};

use super::summary::{BroadcastSummary, JobGiveUp};

/// What a report's first line adds for the native kernels' costs a call: nothing for the
/// default (tt-metal's), else which table charged them.
pub(crate) fn kernel_costs_note(costs: komorebi_sim::KernelCosts) -> String {
    if costs == komorebi_sim::KernelCosts::default() {
        return String::new();
    }
    format!("; native kernels charged {costs} costs per call")
}

impl std::fmt::Display for BroadcastSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = |v: u64, one: &str, many: &str| count(v, one, many);
        writeln!(
            f,
            "broadcast on {}{} ({} protocol{}): {} of {} each; per job {} (rows, NoC0) and {} (columns, NoC1)",
            match self.device.as_str() {
                "sim" => "the simulator".to_string(),
                "pcie-sim" => "the simulator as a PCIe card".to_string(),
                card => card.to_string(),
            },
            self.fused_dram
                .map(|b| format!(" with DRAM bank {b} fused off"))
                .unwrap_or_default(),
            self.protocol,
            kernel_costs_note(self.kernel_costs.unwrap_or_default()),
            n(self.jobs as u64, "job", "jobs"),
            n(self.blocks as u64, "block", "blocks"),
            n(self.broadcasts[0] as u64, "A broadcast", "A broadcasts"),
            n(self.broadcasts[1] as u64, "W broadcast", "W broadcasts"),
        )?;
        writeln!(f, "  data, all jobs:")?;
        writeln!(
            f,
            "    received by multicast: {} bytes (by the receivers of each broadcast)",
            self.received_bytes
        )?;
        if self.check == "none" {
            writeln!(
                f,
                "    checked by compute:    not checked (--check none: compute took and popped every block without reading a word)"
            )?;
        } else {
            writeln!(
                f,
                "    checked by compute:    {} bytes (every core's compute; a sender's compute checks its own blocks too, which it reads from DRAM, not by multicast: so more than received)",
                self.checked_bytes
            )?;
        }
        let unit = self.clock.word();
        match self.micros {
            Some(us) => {
                let mut clocks = self.chips.iter().map(|c| c.aiclk_mhz).filter(|&m| m > 0);
                let first = clocks.next();
                if first.is_some_and(|m| clocks.any(|other| other != m)) {
                    // The chip with the most cycles need not be the one that took longest.
                    writeln!(
                        f,
                        "  device time ({}; chips at different AICLKs), all jobs:",
                        self.clock.unit()
                    )?;
                    writeln!(
                        f,
                        "    ran:            {} cycles on the chip with the most; {} on the longest in time, each chip at its own AICLK",
                        self.cycles,
                        duration((us * 1e3) as u64)
                    )?;
                } else {
                    writeln!(
                        f,
                        "  device time ({}; us at the {} MHz AICLK), all jobs:",
                        self.clock.unit(),
                        first.unwrap_or(self.aiclk_mhz)
                    )?;
                    writeln!(
                        f,
                        "    ran:            {} cycles = {}",
                        self.cycles,
                        duration((us * 1e3) as u64)
                    )?;
                }
            }
            None if self.clock.is_time() => {
                writeln!(
                    f,
                    "  device time ({}; the device reported no AICLK, so no microseconds), all jobs:",
                    self.clock.unit()
                )?;
                writeln!(f, "    ran:            {} cycles", self.cycles)?;
            }
            None => {
                writeln!(
                    f,
                    "  device clock ({}: not device time; ttsim is not timed: a step runs one instruction of every active core and lands each NoC transfer at issue), all jobs:",
                    self.clock.unit()
                )?;
                writeln!(f, "    ran:            {} steps", self.cycles)?;
            }
        }
        if self.bound_cycles == 0 {
            writeln!(f, "    resource bound: none: {}", self.binding)?;
        } else {
            writeln!(
                f,
                "    resource bound: {} cycles, bound by {} (the least cycles the busiest resource needs)",
                self.bound_cycles, self.binding
            )?;
        }
        match self.efficiency {
            Some(e) => writeln!(
                f,
                "    efficiency:     {e:.3} (bound / ran: 1 is a run as fast as the bound allows)"
            )?,
            None if self.bound_cycles == 0 => writeln!(
                f,
                "    efficiency:     none: there is no resource bound to compare with"
            )?,
            None if self.speed_up.is_some() => writeln!(
                f,
                "    efficiency:     none: a what-if run (--speed-up): its cycles are not the firmware's as built"
            )?,
            None if !self.clock.is_time() => writeln!(
                f,
                "    efficiency:     none: the bound is device cycles and ttsim's steps are no device time"
            )?,
            None if !self.completed() => writeln!(
                f,
                "    efficiency:     none: the run did not complete, {} and {}; its cycles are no performance figure",
                n(self.timeouts as u64, "job timed out", "jobs timed out"),
                n(self.abandoned as u64, "job abandoned", "jobs abandoned"),
            )?,
            None if self.cycles == 0 => writeln!(
                f,
                "    efficiency:     none: the run took no cycles to compare the bound with"
            )?,
            None if self.results.iter().all(|r| r.ok) && !self.violations.is_empty() => writeln!(
                f,
                "    efficiency:     none: the run saw violations (below), so its cycles are no performance figure"
            )?,
            None => writeln!(
                f,
                "    efficiency:     none: not every job succeeded, so the run did not do the work the bound counts"
            )?,
        }
        writeln!(
            f,
            "    {:<16}A {}, W {} ({} cores spent waiting inside broadcast calls, summed over every core and job: cores wait at once, so this exceeds the run's)",
            format!("wait {unit}:"),
            self.wait_cycles[0],
            self.wait_cycles[1],
            unit
        )?;
        for v in &self.violations {
            writeln!(f, "  VIOLATION: {v}")?;
        }
        for fault in &self.unfired_faults {
            writeln!(
                f,
                "  warning: --fault {fault} never fired (its core gave up, reported or was held back before it): the run did not test it"
            )?;
        }
        if let Some(d) = &self.dispatch {
            for line in d.to_string().lines() {
                writeln!(f, "  {line}")?;
            }
        }
        if let Some(p) = &self.profile {
            for line in p.to_string().lines() {
                writeln!(f, "  {line}")?;
            }
        }
        if let Some(s) = &self.speed_up {
            for line in s.to_string().lines() {
                writeln!(f, "  {line}")?;
            }
        }
        if let Some(logs) = &self.log {
            let lines: usize = logs.iter().map(|l| l.lines.len()).sum();
            // Summed wide: a corrupt ring's count is whatever its word held.
            let lost: u64 = logs.iter().map(|l| u64::from(l.lost)).sum();
            let unreadable = logs.iter().filter(|l| l.error.is_some()).count();
            let unreadable = match unreadable {
                0 => String::new(),
                n => format!(", {n} rings not readable as a kernel writes them"),
            };
            match &self.log_file {
                Some(path) => writeln!(
                    f,
                    "  kernel log: {lines} lines ({lost} lost) from {} kernels{unreadable}, in {}",
                    logs.len(),
                    path.display()
                )?,
                None => {
                    let chip = match logs.iter().any(|l| l.chip.is_some()) {
                        true => "chip, ",
                        false => "",
                    };
                    writeln!(
                        f,
                        "  kernel log: {lines} lines ({lost} lost) from {} kernels{unreadable} ({chip}tile, kernel, core cycle, level, message):",
                        logs.len()
                    )?;
                    for log in logs {
                        for line in log.to_string().lines() {
                            writeln!(f, "    {line}")?;
                        }
                    }
                }
            }
        }
        if self.chips.len() > 1 {
            for c in &self.chips {
                writeln!(
                    f,
                    "  chip {} ({}{}): {} ({} moved here from its home chip), {} {unit}",
                    c.chip,
                    c.device,
                    c.seed.map(|s| format!(", seed {s}")).unwrap_or_default(),
                    n(c.jobs as u64, "job", "jobs"),
                    c.moved,
                    c.cycles
                )?;
            }
        }
        for r in &self.ranks {
            match &r.error {
                None => writeln!(
                    f,
                    "  rank {} ({}): {} on {}",
                    r.rank,
                    r.host,
                    n(r.jobs as u64, "job", "jobs"),
                    n(r.chips as u64, "chip", "chips")
                )?,
                Some(e) => writeln!(
                    f,
                    "  rank {} ({}): {} not run: {e}",
                    r.rank,
                    r.host,
                    n(r.jobs as u64, "job", "jobs")
                )?,
            }
        }
        // Each give-up under its chip's name when there are several, in job order as the
        // JSON's list (a job runs on one chip: each chip's list is in job order, and a job's
        // own give-ups stay in the order its report gave them).
        let mut chipped: Vec<(Option<u32>, &JobGiveUp)> = if self.chips.len() > 1 {
            self.chips
                .iter()
                .flat_map(|c| c.giveups.iter().map(move |g| (Some(c.chip), g)))
                .collect()
        } else {
            self.giveups.iter().map(|g| (None, g)).collect()
        };
        chipped.sort_by_key(|(_, g)| g.job);
        for (chip, g) in chipped {
            writeln!(
                f,
                "  give-up: job {} {}core ({},{}) {} broadcast {} block {} ({})",
                g.job,
                chip.map(|c| format!("chip {c} ")).unwrap_or_default(),
                g.core[0],
                g.core[1],
                g.place,
                g.broadcast,
                g.block,
                g.kernel
            )?;
        }
        let abandoned: Vec<String> = self
            .results
            .iter()
            .filter(|r| r.abandoned)
            .map(|r| r.job.to_string())
            .collect();
        if !abandoned.is_empty() {
            let why = if self.ranks.iter().any(|r| r.error.is_some()) {
                "their rank never answered (above), or the cores of an earlier job never finished it, so its tiles were never free again"
            } else {
                "the cores of an earlier job never finished it, so its tiles were never free again"
            };
            writeln!(
                f,
                "  not run (abandoned): job {}: {why}",
                abandoned.join(", ")
            )?;
        }
        write!(f, "  {}", self.result_line())
    }
}

impl BroadcastSummary {
    /// The run's verdict on one line, as the report ends: `result: ok: ...`, `result: TIMEOUT
    /// (...)`, `result: DATA MISMATCH (...)` or `result: FAILED: WHY (...)` (a run that failed
    /// with no timeout and no mismatch: a rank's run that failed, the simulator's violations,
    /// give-ups of another kind), with the counts of each.
    pub fn result_line(&self) -> String {
        let n = count;
        let failed;
        // A rank whose run failed decides the exit code before any timeout
        // (`BroadcastSummary::exit_code`): the verdict names it first too.
        let failed_rank = self
            .ranks
            .iter()
            .filter(|r| r.exit_code != 0 && r.exit_code != 3)
            .max_by_key(|r| r.exit_code);
        let verdict = if self.ok && self.check == "none" {
            "ok: every protocol step succeeded (--check none: no byte checked)"
        } else if self.ok {
            "ok: every byte checked"
        } else if let Some(r) = failed_rank {
            failed = format!(
                "FAILED: rank {}: {}",
                r.rank,
                r.error.as_deref().unwrap_or_default()
            );
            &failed
        } else if self.timeouts > 0 || self.abandoned > 0 || self.rank_lost() {
            "TIMEOUT"
        } else if self.mismatches > 0 {
            "DATA MISMATCH"
        } else {
            let why = if let Some(r) = self.ranks.iter().find(|r| r.error.is_some()) {
                // "its run failed: ...", "its report does not read: ...".
                format!(
                    "rank {}: {}",
                    r.rank,
                    r.error.as_deref().unwrap_or_default()
                )
            } else if !self.violations.is_empty() {
                n(
                    self.violations.len() as u64,
                    "simulator violation",
                    "simulator violations",
                )
            } else if !self.giveups.is_empty() {
                n(self.giveups.len() as u64, "give-up", "give-ups")
            } else {
                "not every job reported".to_string()
            };
            failed = format!("FAILED: {why}");
            &failed
        };
        format!(
            "result: {verdict} ({}, {}, {})",
            n(self.timeouts as u64, "timeout", "timeouts"),
            n(self.abandoned as u64, "job abandoned", "jobs abandoned"),
            n(self.mismatches as u64, "mismatch", "mismatches"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::broadcast::config::BroadcastConfig;
    use crate::app::broadcast::summary::{ChipSummary, RankSummary};

    #[test]
    fn the_text_says_why_a_run_has_no_efficiency() {
        let cfg = BroadcastConfig::default();
        let mut s = BroadcastSummary::empty(&cfg, [20, 12], 10, "DRAM bank 5".into());
        assert_eq!(s.bound_cycles, 80, "one job's bound times the jobs");
        s.cycles = 100;
        s.efficiency = Some(0.8);
        let text = s.to_string();
        assert!(
            text.contains("resource bound: 80 cycles, bound by DRAM bank 5")
                && text.contains("efficiency:     0.800 (bound / ran"),
            "{text}"
        );
        // Every job ok, but the simulator saw a violation: said so, not "not every job".
        s.efficiency = None;
        s.ok = false;
        s.results = vec![crate::app::broadcast::summary::JobResult {
            job: 0,
            chip: Some(0),
            ok: true,
            timeout: false,
            abandoned: false,
        }];
        s.violations = vec!["a write over unpopped pages".into()];
        let text = s.to_string();
        assert!(
            text.contains("efficiency:     none: the run saw violations (below)"),
            "{text}"
        );
        s.violations.clear();
        s.results[0].ok = false;
        s.mismatches = 1;
        let text = s.to_string();
        assert!(
            text.contains("efficiency:     none: not every job succeeded"),
            "{text}"
        );
        s.timeouts = 1;
        let text = s.to_string();
        assert!(
            text.contains("efficiency:     none: the run did not complete, 1 job timed out"),
            "{text}"
        );
        // A what-if run has none, even when it succeeded: its cycles are not the firmware's.
        (s.ok, s.mismatches, s.timeouts) = (true, 0, 0);
        s.set_efficiency();
        assert_eq!(s.efficiency, Some(0.8));
        s.speed_up = Some(crate::host::what_if::SpeedUpSummary {
            factor: 4,
            asked: vec!["words_follow".into()],
            functions: vec!["komorebi_kernel::broadcast_handler::words_follow".into()],
        });
        s.set_efficiency();
        assert_eq!(s.efficiency, None);
        let text = s.to_string();
        assert!(
            text.contains("efficiency:     none: a what-if run (--speed-up)"),
            "{text}"
        );
    }

    /// Chips at different clocks: the run's time is the longest chip's in time, which need not
    /// be the one with the most cycles, and the text does not name one clock for all.
    #[test]
    fn several_chips_time_each_chip_at_its_own_clock() {
        let cfg = BroadcastConfig::default();
        let mut s = BroadcastSummary::empty(&cfg, [20, 12], 10, "DRAM bank 5".into());
        let chip = |n, cycles, aiclk_mhz| ChipSummary {
            cycles,
            aiclk_mhz,
            ..ChipSummary::new(n, "card".into(), None)
        };
        // 1,350,000 cycles at 1350 MHz is 1,000 us; 1,000,000 at 800 MHz is 1,250 us.
        s.chips = vec![chip(0, 1_350_000, 1350), chip(1, 1_000_000, 800)];
        (s.cycles, s.aiclk_mhz) = (1_350_000, 1350);
        s.set_micros();
        assert_eq!(s.micros, Some(1250.0));
        let text = s.to_string();
        assert!(
            text.contains("(simulated cycles; chips at different AICLKs)")
                && text.contains(
                    "ran:            1350000 cycles on the chip with the most; 1.25 ms on the longest in time"
                ),
            "{text}"
        );
        // One clock: named; a chip nothing was reported of (clock 0) does not count.
        s.chips[1] = chip(1, 0, 0);
        s.set_micros();
        assert_eq!(s.micros, Some(1000.0));
        assert!(s.to_string().contains("us at the 1350 MHz AICLK)"));
        // No clock reported at all: cycles, and no time made up at 1 MHz.
        (s.chips[0].aiclk_mhz, s.aiclk_mhz) = (0, 0);
        s.set_micros();
        assert_eq!(s.micros, None);
        assert!(
            s.to_string()
                .contains("the device reported no AICLK, so no microseconds"),
            "{s}"
        );
    }

    /// Several chips: the give-ups print in job order, as the guide and the JSON's list have
    /// them, each under the chip that ran its job (chip 0 ran jobs 0 and 2, chip 1 job 1).
    #[test]
    fn several_chips_print_their_give_ups_in_job_order() {
        use crate::app::broadcast::summary::JobGiveUp;
        use crate::host::session::CoreGiveUp;
        let cfg = BroadcastConfig::default();
        let mut s = BroadcastSummary::empty(&cfg, [20, 12], 10, "DRAM bank 5".into());
        let give_up = |job, x| JobGiveUp {
            job,
            record: CoreGiveUp {
                core: [x, 0],
                place: "broadcast_valid",
                broadcast: 0,
                block: 0,
                kernel: "broadcast area",
            },
        };
        let chip = |n, giveups| ChipSummary {
            giveups,
            ..ChipSummary::new(n, "sim".into(), None)
        };
        s.chips = vec![
            chip(0, vec![give_up(0, 0), give_up(0, 1), give_up(2, 0)]),
            chip(1, vec![give_up(1, 0)]),
        ];
        s.giveups = vec![give_up(0, 0), give_up(0, 1), give_up(1, 0), give_up(2, 0)];
        let text = s.to_string();
        let lines: Vec<&str> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("give-up: "))
            .collect();
        assert_eq!(
            lines,
            [
                "job 0 chip 0 core (0,0) broadcast_valid broadcast 0 block 0 (broadcast area)",
                "job 0 chip 0 core (1,0) broadcast_valid broadcast 0 block 0 (broadcast area)",
                "job 1 chip 1 core (0,0) broadcast_valid broadcast 0 block 0 (broadcast area)",
                "job 2 chip 0 core (0,0) broadcast_valid broadcast 0 block 0 (broadcast area)",
            ],
            "{text}"
        );
    }

    /// A run that failed with no timeout and no mismatch is not called a data mismatch.
    #[test]
    fn the_verdict_names_a_failure_that_is_no_timeout_and_no_mismatch() {
        let cfg = BroadcastConfig::default();
        let mut s = BroadcastSummary::empty(&cfg, [20, 12], 10, "DRAM bank 5".into());
        s.ok = false;
        let verdict = |s: &BroadcastSummary| s.result_line();
        assert_eq!(
            verdict(&s),
            "result: FAILED: not every job reported (0 timeouts, 0 jobs abandoned, 0 mismatches)"
        );
        s.violations.push("a write over unpopped pages".into());
        assert!(verdict(&s).starts_with("result: FAILED: 1 simulator violation ("));
        let failed = |rank, jobs, error: &str, exit_code| RankSummary {
            rank,
            host: "-".into(),
            chips: 1,
            jobs,
            error: Some(error.into()),
            exit_code,
        };
        s.ranks
            .push(failed(1, 4, "its run failed: no such chip", 4));
        assert!(verdict(&s).starts_with("result: FAILED: rank 1: its run failed: no such chip ("));
        assert_eq!(s.exit_code(), 4);
        // A rank that never answered is a timeout, jobs given to it or not; beside a rank
        // whose run failed, the failure decides the exit code and the verdict alike.
        let lost = "no answer within 8 s of the run's start";
        s.ranks.push(failed(2, 0, lost, 3));
        assert_eq!(s.exit_code(), 4);
        assert!(verdict(&s).starts_with("result: FAILED: rank 1: its run failed"));
        s.ranks.remove(0);
        assert!(verdict(&s).starts_with("result: TIMEOUT ("));
        assert_eq!(s.exit_code(), 3);
        s.ranks.pop();
        s.mismatches = 2;
        assert!(verdict(&s).starts_with("result: DATA MISMATCH ("));
        s.abandoned = 1;
        assert!(verdict(&s).starts_with("result: TIMEOUT ("));
    }
}
