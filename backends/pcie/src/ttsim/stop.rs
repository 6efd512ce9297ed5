//! Why ttsim stopped: its structured error line, read from what the server printed.
//!
//! ttsim reports a violation as one line, `[CLOCK] ERROR: CATEGORY: FUNCTION: MESSAGE`, and
//! ends its process (ttsim `src/common.cpp`, `ttsim_error`; `docs/sim_error_handling.md`). The
//! server runs it in a process of its own, so the host reads that line from the server's
//! standard error and carries it as a [`TtsimStop`].

use std::fmt;

/// ttsim's error categories (`TTSimErrorCategory`, ttsim `src/common.h`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TtsimCategory {
    /// Software did what the ISA leaves undefined.
    UndefinedBehavior,
    /// Software used a value nobody set.
    UnpredictableValueUsed,
    /// Software relied on what the ISA says it must not rely on.
    NonContractualBehavior,
    /// An internal check of ttsim failed (a ttsim bug).
    AssertionFailure,
    /// The ISA documentation does not say enough to model it.
    MissingSpecification,
    /// Implemented, but not tested enough to be enabled.
    UntestedFunctionality,
    /// Not implemented yet.
    UnimplementedFunctionality,
    /// Not planned to be implemented.
    UnsupportedFunctionality,
    /// An operating-system error.
    SystemError,
    /// A bad option, environment variable or configuration file.
    ConfigurationError,
    /// A name this list does not know (a newer ttsim).
    Other(String),
}

impl TtsimCategory {
    /// The category named `name` as ttsim prints it.
    pub fn from_name(name: &str) -> Self {
        match name {
            "UndefinedBehavior" => Self::UndefinedBehavior,
            "UnpredictableValueUsed" => Self::UnpredictableValueUsed,
            "NonContractualBehavior" => Self::NonContractualBehavior,
            "AssertionFailure" => Self::AssertionFailure,
            "MissingSpecification" => Self::MissingSpecification,
            "UntestedFunctionality" => Self::UntestedFunctionality,
            "UnimplementedFunctionality" => Self::UnimplementedFunctionality,
            "UnsupportedFunctionality" => Self::UnsupportedFunctionality,
            "SystemError" => Self::SystemError,
            "ConfigurationError" => Self::ConfigurationError,
            other => Self::Other(other.to_string()),
        }
    }

    /// The name as ttsim prints it.
    pub fn name(&self) -> &str {
        match self {
            Self::UndefinedBehavior => "UndefinedBehavior",
            Self::UnpredictableValueUsed => "UnpredictableValueUsed",
            Self::NonContractualBehavior => "NonContractualBehavior",
            Self::AssertionFailure => "AssertionFailure",
            Self::MissingSpecification => "MissingSpecification",
            Self::UntestedFunctionality => "UntestedFunctionality",
            Self::UnimplementedFunctionality => "UnimplementedFunctionality",
            Self::UnsupportedFunctionality => "UnsupportedFunctionality",
            Self::SystemError => "SystemError",
            Self::ConfigurationError => "ConfigurationError",
            Self::Other(name) => name,
        }
    }

    /// Whether the category says the simulated software (komorebi) is at fault, as opposed to
    /// a gap or a bug in ttsim or its configuration.
    pub fn blames_software(&self) -> bool {
        matches!(
            self,
            Self::UndefinedBehavior | Self::UnpredictableValueUsed | Self::NonContractualBehavior
        )
    }
}

impl fmt::Display for TtsimCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// ttsim's process ended: what it said, or how the process ended when it said nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TtsimStop {
    /// The category of its error line, if it printed one.
    pub category: Option<TtsimCategory>,
    /// The ttsim function that reported it (empty without an error line).
    pub function: String,
    /// The message after the function, or, without an error line, how the process ended and
    /// the last lines it printed.
    pub message: String,
    /// The clock step the error line carries.
    pub clock: Option<u64>,
}

impl TtsimStop {
    /// The stop that `output` (everything the server printed) and `ended` (how its process
    /// ended, as `exit status 1` or `signal 11`) describe: the last error line in `output`, or
    /// `ended` with the last lines printed.
    pub fn from_output(output: &str, ended: &str) -> Self {
        if let Some(stop) = output.lines().rev().find_map(parse_error_line) {
            return stop;
        }
        let tail: Vec<&str> = output
            .lines()
            .filter(|l| !l.trim().is_empty())
            .rev()
            .take(3)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let message = if tail.is_empty() {
            format!("the ttsim server ended ({ended}) without an error line")
        } else {
            format!(
                "the ttsim server ended ({ended}) without an error line; it printed last: {}",
                tail.join(" | ")
            )
        };
        Self {
            category: None,
            function: String::new(),
            message,
            clock: None,
        }
    }
}

/// `[CLOCK] ERROR: CATEGORY: FUNCTION: MESSAGE` (or without `: MESSAGE`).
fn parse_error_line(line: &str) -> Option<TtsimStop> {
    let at = line.find("ERROR: ")?;
    let clock = line[..at]
        .trim()
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .and_then(|s| s.parse().ok());
    let rest = &line[at + "ERROR: ".len()..];
    let (category, rest) = rest.split_once(": ").unwrap_or((rest.trim(), ""));
    let (function, message) = rest.split_once(": ").unwrap_or((rest.trim(), ""));
    Some(TtsimStop {
        category: Some(TtsimCategory::from_name(category.trim())),
        function: function.trim().to_string(),
        message: message.trim().to_string(),
        clock,
    })
}

impl fmt::Display for TtsimStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.category {
            None => f.write_str(&self.message),
            Some(c) => {
                write!(f, "{c}")?;
                if !self.function.is_empty() {
                    write!(f, " in {}", self.function)?;
                }
                if !self.message.is_empty() {
                    write!(f, ": {}", self.message)?;
                }
                if let Some(clock) = self.clock {
                    write!(f, " (clock step {clock})")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_error_line_is_the_stop() {
        let out = "[0] 0.1 seconds (0.0 KHz)\n\
                   [1234] ERROR: UnimplementedFunctionality: pci_mem_rd_cur: bar0: offset=0x1fc00000 size=4\n";
        let stop = TtsimStop::from_output(out, "exit status 1");
        assert_eq!(
            stop,
            TtsimStop {
                category: Some(TtsimCategory::UnimplementedFunctionality),
                function: "pci_mem_rd_cur".into(),
                message: "bar0: offset=0x1fc00000 size=4".into(),
                clock: Some(1234),
            }
        );
        assert_eq!(
            stop.to_string(),
            "UnimplementedFunctionality in pci_mem_rd_cur: bar0: offset=0x1fc00000 size=4 \
             (clock step 1234)"
        );
        assert!(!stop.category.as_ref().unwrap().blames_software());
    }

    #[test]
    fn an_error_without_a_message_and_an_unknown_category() {
        let stop = TtsimStop::from_output("[7] ERROR: Mystery: libttsim_tile_rd_bytes\n", "");
        assert_eq!(stop.category, Some(TtsimCategory::Other("Mystery".into())));
        assert_eq!(stop.function, "libttsim_tile_rd_bytes");
        assert_eq!(stop.message, "");
        let ub = TtsimStop::from_output("[1] ERROR: UndefinedBehavior: f: x\n", "");
        assert!(ub.category.unwrap().blames_software());
    }

    #[test]
    fn no_error_line_says_how_the_process_ended_and_what_it_printed_last() {
        let stop = TtsimStop::from_output("a\n\nb\nc\nd\n", "signal 11");
        assert_eq!(stop.category, None);
        assert_eq!(
            stop.message,
            "the ttsim server ended (signal 11) without an error line; it printed last: b | c | d"
        );
        let silent = TtsimStop::from_output("", "exit status 3");
        assert_eq!(
            silent.to_string(),
            "the ttsim server ended (exit status 3) without an error line"
        );
    }

    #[test]
    fn every_category_name_reads_back() {
        for name in [
            "UndefinedBehavior",
            "UnpredictableValueUsed",
            "NonContractualBehavior",
            "AssertionFailure",
            "MissingSpecification",
            "UntestedFunctionality",
            "UnimplementedFunctionality",
            "UnsupportedFunctionality",
            "SystemError",
            "ConfigurationError",
        ] {
            let c = TtsimCategory::from_name(name);
            assert!(!matches!(c, TtsimCategory::Other(_)), "{name}");
            assert_eq!(c.name(), name);
        }
    }
}
