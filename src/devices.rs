//! `komorebi devices`: every card tt-kmd presents, or every chip of a ttsim library, with what
//! the host can learn without loading anything (driver, PCI address, harvest mask, fused DRAM
//! bank and AICLK from ARC telemetry, firmware bundle version from sysfs).
//!
//! A node that cannot be opened is listed with the reason; no node at all is an empty list.

use std::fmt;

use serde::Serialize;

/// One device node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DeviceRow {
    /// The node (`/dev/tenstorrent/0`).
    pub path: String,
    /// PCI address `dddd:bb:dd.f`, if the driver answered.
    pub pci_address: Option<String>,
    /// The driver's version `major.minor.patch` and ioctl API version.
    pub driver: Option<String>,
    /// The chip (`blackhole`, `wormhole`), when it could be opened.
    pub chip: Option<&'static str>,
    /// The harvest mask: a Blackhole's die-order Tensix columns (ARC telemetry tag 34), a
    /// Wormhole's rows in tt-umd's order (ARC message 0x57).
    pub harvest: Option<u32>,
    /// The fused DRAM bank (telemetry tag 36), if the card has one (left out of the JSON when
    /// none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused_dram: Option<u8>,
    /// AICLK in MHz as the card reported it (a Blackhole's telemetry tag 14, a Wormhole's
    /// `GET_AICLK`), as found: a card's listing sends no clock message; none when it reported
    /// none (no clock is made up).
    pub aiclk_mhz: Option<u32>,
    /// A note about the clock when the open left one (whether the host could raise AICLK from
    /// idle, and why not when it could not); none for a card, whose listing raises nothing.
    pub aiclk_note: Option<String>,
    /// Firmware bundle version (sysfs `tt_fw_bundle_ver`).
    pub firmware_bundle: Option<String>,
    /// Why the device cannot be used, if it cannot.
    pub error: Option<String>,
}

/// Every device node found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Devices {
    /// The nodes, sorted by PCI address.
    pub devices: Vec<DeviceRow>,
    /// Where they were looked for: `None` for tt-kmd's nodes, else the ttsim library
    /// (`ttsim:PATH`); the text says it when nothing was found.
    #[serde(skip)]
    pub searched: Option<String>,
}

impl fmt::Display for Devices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.devices.is_empty() {
            return match &self.searched {
                None => writeln!(
                    f,
                    "no Blackhole or Wormhole card found (tt-kmd presents none in /dev/tenstorrent)"
                ),
                Some(library) => writeln!(f, "no chip found in {library}"),
            };
        }
        for d in &self.devices {
            let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
            write!(f, "{}  pci {}", d.path, or(&d.pci_address))?;
            if let Some(e) = &d.error {
                writeln!(f, "  unusable: {e}")?;
                continue;
            }
            writeln!(
                f,
                "  driver {}  {}harvest {}{}  aiclk {} MHz  firmware {}",
                or(&d.driver),
                d.chip.map(|c| format!("chip {c}  ")).unwrap_or_default(),
                d.harvest.map_or("-".into(), |h| format!("{h:#06x}")),
                d.fused_dram
                    .map(|b| format!("  fused DRAM bank {b}"))
                    .unwrap_or_default(),
                d.aiclk_mhz.map_or("-".into(), |m| m.to_string()),
                or(&d.firmware_bundle)
            )?;
            if let Some(c) = &d.aiclk_note {
                writeln!(f, "  note: {c}")?;
            }
        }
        Ok(())
    }
}

/// Lists every tt-kmd node of this host.
pub fn devices() -> Devices {
    #[cfg(target_os = "linux")]
    {
        Devices {
            devices: komorebi_pcie::kmd::enumerate()
                .into_iter()
                .map(row)
                .collect(),
            searched: None,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Devices::default()
    }
}

/// Lists every chip of the ttsim library at `library`, each opened as a card is (its
/// telemetry read through its BARs). A server that cannot start is one row saying why.
pub fn ttsim_devices(library: &std::path::Path) -> Devices {
    let name = format!("ttsim:{}", library.display());
    let unusable = |e: komorebi_pcie::PcieError| Devices {
        devices: vec![DeviceRow {
            path: name.clone(),
            error: Some(e.to_string()),
            ..DeviceRow::default()
        }],
        searched: Some(name.clone()),
    };
    #[cfg(target_os = "linux")]
    {
        use komorebi_pcie::card::CardOptions;
        use komorebi_pcie::ttsim::{TtsimBar, TtsimBarOptions};
        let process = match crate::host::backend::ttsim_process(library) {
            Ok(p) => p,
            Err(e) => return unusable(e),
        };
        let chips = match process.chips() {
            Ok(c) => c,
            Err(e) => return unusable(e),
        };
        let devices = chips
            .into_iter()
            .map(|chip| {
                let mut row = DeviceRow {
                    path: format!("{name}@{chip}"),
                    driver: Some("none (ttsim: the host programs the windows)".into()),
                    ..DeviceRow::default()
                };
                // The card's identity: the clock as the ARC message left it.
                let opened = TtsimBar::open(process.clone(), chip, TtsimBarOptions::default())
                    .and_then(|bar| bar.open_card(CardOptions::default()))
                    .map(|card| (card.identity(), card));
                match opened {
                    Ok((id, card)) => {
                        row.chip = Some(crate::chip::chip_flag(card.chip().kind()));
                        row.pci_address = Some(id.pci_address);
                        row.harvest = Some(card.chip().harvest_word());
                        row.fused_dram = card.fused_dram();
                        row.aiclk_mhz = card.aiclk_reported();
                        row.aiclk_note = id.clock_note;
                    }
                    Err(e) => row.error = Some(e.to_string()),
                }
                row
            })
            .collect();
        Devices {
            devices,
            searched: Some(name),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        unusable(komorebi_pcie::PcieError::Unsupported)
    }
}

#[cfg(target_os = "linux")]
fn row(node: komorebi_pcie::kmd::DeviceNode) -> DeviceRow {
    use komorebi_pcie::card::Card;
    let mut row = DeviceRow {
        path: node.path.clone(),
        pci_address: node.pci_address.map(|a| a.to_string()),
        error: node.error.as_ref().map(ToString::to_string),
        ..DeviceRow::default()
    };
    if row.error.is_some() {
        return row;
    }
    // The card's identity as found, not only the driver's part. A listing only looks: it
    // sends ARC no clock message at open or drop, for a run another process may have on the
    // card (the default options raise the clock and send it back to idle).
    let opened = komorebi_pcie::kmd::KmdBar::open(&node.path)
        .and_then(|bar| Card::open(bar, crate::host::pcie::looking()))
        .map(|card| (card.identity(), card));
    match opened {
        Ok((id, card)) => {
            row.chip = Some(crate::chip::chip_flag(card.chip().kind()));
            let (ma, mi, pa) = id.driver_version;
            row.driver = Some(format!("{ma}.{mi}.{pa} (ioctl API {})", id.api_version));
            row.harvest = Some(card.chip().harvest_word());
            row.fused_dram = card.fused_dram();
            row.aiclk_mhz = card.aiclk_reported();
            row.aiclk_note = id.clock_note;
            row.firmware_bundle = id.firmware_bundle;
        }
        Err(e) => row.error = Some(e.to_string()),
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_card_here_is_an_empty_list_and_says_so() {
        // This machine has no /dev/tenstorrent; a host with cards lists them.
        if std::path::Path::new("/dev/tenstorrent").exists() {
            return;
        }
        let d = devices();
        assert_eq!(d, Devices::default());
        assert_eq!(serde_json::to_string(&d).unwrap(), r#"{"devices":[]}"#);
        assert!(
            d.to_string()
                .starts_with("no Blackhole or Wormhole card found")
        );
    }
}
