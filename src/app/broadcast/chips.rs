//! Several chips under one host (`--chips N`): which device each chip of a run is, and its
//! seed. On Blackhole every chip is a PCIe device of its own (a p300 card is two, a QuietBox 2
//! four), so a run opens one session a chip and the dispatcher serves them all.
//!
//! | `--device` | chip `c` of the run |
//! |---|---|
//! | `sim`, `pcie-sim` | an independent simulated chip with the same harvest mask and its own seed stream ([`chip_seed`]) |
//! | `ttsim[:PATH]` | the `c`-th chip of the build (`bh_x2`, `bh_x4`), all run by one ttsim server: one simulation |
//! | a card's node | the `c`-th usable node tt-kmd presents (sorted by PCI address, `TT_VISIBLE_DEVICES` honoured), counting from `--device`'s |

use komorebi_sim::SimConfig;

use super::config::{BroadcastConfig, DeviceChoice};
use super::error::{BroadcastError, flag};
use crate::host::session::Backend;

/// Chip `chip`'s seed in a run seeded with `seed`. Chip 0 runs `seed` itself, so a run on one
/// chip is the run it always was; each other chip gets a stream of its own (splitmix64 of the
/// seed and the chip, so neighbouring seeds or chips give unrelated streams). A chip's seed is
/// its simulator's stream, not a replay of its share: a one-chip run with it runs jobs from 0,
/// and which jobs a run of several chips moves between them depends on the host's threads.
/// One chip's run replays with its `--seed` alone.
pub fn chip_seed(seed: u64, chip: u32) -> u64 {
    if chip == 0 {
        return seed;
    }
    // splitmix64's finalizer (Steele, Lea and Flood, "Fast splittable pseudorandom number
    // generators", OOPSLA 2014) over the seed stepped `chip` times by its increment.
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(chip as u64));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The backend `cfg.device` names, simulating `sim` where it simulates.
pub(super) fn backend(cfg: &BroadcastConfig, sim: SimConfig) -> Backend {
    match &cfg.device {
        DeviceChoice::Sim => Backend::Simulator(sim),
        DeviceChoice::PcieSim => Backend::pcie_sim(sim)
            .with_firmware(cfg.firmware.clone())
            .with_handler(cfg.image_handler())
            .with_exec(cfg.exec),
        DeviceChoice::Ttsim { library, chip } => Backend::Ttsim {
            library: library.clone(),
            chip: *chip,
            firmware: cfg.firmware.clone(),
            handler: cfg.image_handler(),
            server: None,
        },
        DeviceChoice::Card(path) => Backend::Card {
            path: path.clone(),
            firmware: cfg.firmware.clone(),
            handler: cfg.image_handler(),
        },
    }
}

/// One chip of a run: how to open it, and how the report names it.
#[derive(Debug)]
pub(super) struct ChipDevice {
    /// The backend that opens it.
    pub backend: Backend,
    /// Its device, as the report names it.
    pub name: String,
    /// Its simulation's seed (simulated chips only).
    pub seed: Option<u64>,
}

/// The chips of a run of `cfg` (`cfg.chips` of them), the simulated ones configured as `sim`
/// but for their seeds: those of chips `first..` of the whole run (a rank of several hosts
/// holds chips from its first on). The error says how many chips the device has when it has
/// too few.
pub(super) fn chip_devices(
    cfg: &BroadcastConfig,
    sim: &SimConfig,
    first: u32,
) -> Result<Vec<ChipDevice>, BroadcastError> {
    let one = |chip: u32| {
        let sim = SimConfig {
            seed: chip_seed(sim.seed, first + chip),
            ..sim.clone()
        };
        let seed = cfg.device.in_process().then_some(sim.seed);
        ChipDevice {
            backend: backend(cfg, sim),
            name: cfg.device.to_string(),
            seed,
        }
    };
    match &cfg.device {
        _ if cfg.chips == 1 => Ok(vec![one(0)]),
        DeviceChoice::Sim | DeviceChoice::PcieSim => Ok((0..cfg.chips).map(one).collect()),
        DeviceChoice::Ttsim { library, .. } => ttsim_chips(cfg, library),
        DeviceChoice::Card(path) => card_chips(cfg, path),
    }
}

/// The first `cfg.chips` chips of the ttsim build at `library`, sharing one server.
#[cfg(target_os = "linux")]
fn ttsim_chips(
    cfg: &BroadcastConfig,
    library: &std::path::Path,
) -> Result<Vec<ChipDevice>, BroadcastError> {
    use crate::host::session::SessionError;
    let unusable = |e| BroadcastError::Session(SessionError::Unusable(e));
    let server = crate::host::backend::ttsim_process(library).map_err(unusable)?;
    let present = server.chips().map_err(unusable)?;
    if present.len() < cfg.chips as usize {
        return Err(flag(
            "--chips",
            format!(
                "{} with --device {}: the build presents {} (allowed: --chips 1..={}; ttsim's \
                 bh_x2 and bh_x4 builds present 2 and 4)",
                cfg.chips,
                cfg.device,
                crate::num::count(present.len() as u64, "chip", "chips"),
                present.len().max(1)
            ),
        ));
    }
    Ok(present
        .into_iter()
        .take(cfg.chips as usize)
        .map(|chip| ChipDevice {
            backend: Backend::Ttsim {
                library: library.to_path_buf(),
                chip,
                firmware: cfg.firmware.clone(),
                handler: cfg.image_handler(),
                server: Some(server.clone()),
            },
            name: format!("ttsim:{}@{chip}", library.display()),
            seed: None,
        })
        .collect())
}

#[cfg(not(target_os = "linux"))]
fn ttsim_chips(
    cfg: &BroadcastConfig,
    _library: &std::path::Path,
) -> Result<Vec<ChipDevice>, BroadcastError> {
    linux_only(cfg, "ttsim")
}

/// `cfg.chips` usable cards tt-kmd presents, from the node `first` on.
#[cfg(target_os = "linux")]
fn card_chips(
    cfg: &BroadcastConfig,
    first: &std::path::Path,
) -> Result<Vec<ChipDevice>, BroadcastError> {
    let nodes: Vec<String> = komorebi_pcie::kmd::enumerate()
        .into_iter()
        .filter(|n| n.is_blackhole())
        .map(|n| n.path)
        .collect();
    let from = nodes
        .iter()
        .position(|p| std::path::Path::new(p) == first)
        .unwrap_or(nodes.len());
    let chosen = &nodes[from..];
    let card = |path: &str| ChipDevice {
        backend: Backend::Card {
            path: path.into(),
            firmware: cfg.firmware.clone(),
            handler: cfg.image_handler(),
        },
        name: path.to_string(),
        seed: None,
    };
    if chosen.is_empty() && !first.exists() {
        // No such node: opening it says so (exit 4), as it does for one chip.
        return Ok(vec![card(&first.display().to_string())]);
    }
    if chosen.len() < cfg.chips as usize {
        let (found, allowed) = match chosen.len() {
            0 => ("none".to_string(), "none from there on".to_string()),
            n => (chosen.join(", "), format!("--chips 1..={n}")),
        };
        return Err(flag(
            "--chips",
            format!(
                "{} from {}: tt-kmd presents {} from there on ({found}) (allowed: {allowed}; \
                 `komorebi devices` lists them, TT_VISIBLE_DEVICES picks which)",
                cfg.chips,
                first.display(),
                crate::num::count(
                    chosen.len() as u64,
                    "usable Blackhole chip",
                    "usable Blackhole chips"
                ),
            ),
        ));
    }
    Ok(chosen
        .iter()
        .take(cfg.chips as usize)
        .map(|path| card(path))
        .collect())
}

#[cfg(not(target_os = "linux"))]
fn card_chips(
    cfg: &BroadcastConfig,
    _first: &std::path::Path,
) -> Result<Vec<ChipDevice>, BroadcastError> {
    linux_only(cfg, "a card")
}

/// Several chips of `device`, which only Linux reaches (tt-kmd; ttsim's server).
#[cfg(not(target_os = "linux"))]
fn linux_only(cfg: &BroadcastConfig, device: &str) -> Result<Vec<ChipDevice>, BroadcastError> {
    Err(flag(
        "--chips",
        format!("{} with {device}: it runs on Linux only", cfg.chips),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chip_zero_keeps_the_seed_and_the_others_differ() {
        for seed in [0, 1, 42, u64::MAX] {
            assert_eq!(chip_seed(seed, 0), seed);
            let seeds: std::collections::BTreeSet<u64> =
                (0..32).map(|c| chip_seed(seed, c)).collect();
            assert_eq!(seeds.len(), 32, "32 chips, 32 streams (seed {seed})");
        }
        // Neighbouring seeds do not give shifted copies of each other's chips.
        assert_ne!(chip_seed(1, 1), chip_seed(2, 0));
        assert_ne!(chip_seed(0, 2), chip_seed(1, 1));
    }

    #[test]
    fn simulated_chips_differ_only_in_their_seeds() {
        let cfg = BroadcastConfig {
            chips: 3,
            seed: 7,
            ..BroadcastConfig::default()
        };
        let sim = SimConfig {
            seed: 7,
            harvest: cfg.harvest,
            ..SimConfig::default()
        };
        let chips = chip_devices(&cfg, &sim, 0).unwrap();
        assert_eq!(chips.len(), 3);
        for (c, chip) in chips.iter().enumerate() {
            let expected = chip_seed(7, c as u32);
            assert_eq!(chip.seed, Some(expected));
            let Backend::Simulator(config) = &chip.backend else {
                panic!("chip {c}: {:?}", chip.backend);
            };
            assert_eq!(config.seed, expected);
            assert_eq!(config.harvest, cfg.harvest);
            assert_eq!(chip.name, "sim");
        }
    }
}
