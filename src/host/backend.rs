//! Which chip a session opens, and how each is opened: the simulator, the simulator presented
//! as a PCIe card, or a card.

use std::path::PathBuf;

use komorebi_hal::Xy;
use komorebi_kernel::handler::HandlerSet;
use komorebi_pcie::PcieError;
use komorebi_pcie::card::CardOptions;
use komorebi_pcie::firmware::Firmware;
use komorebi_pcie::sim::SimBarOptions;
use komorebi_sim::SimConfig;

use crate::chip::ChipKind;
use crate::host::device::{Device, DeviceError, SimDevice};
use crate::host::pcie;
pub use crate::host::pcie::Exec;

/// The firmware ELF directory of this source tree, built first: `cargo build --release` in
/// `examples/firmware` (quick when it is up to date; the firmware's own `.cargo/config.toml`
/// sets its target and flags, so nothing of the caller's build environment is passed on).
/// Used by `--exec firmware` without `--firmware`, and by the tests and benchmarks that run
/// the firmware. The error says what failed and how to build the images by hand.
pub fn built_firmware() -> Result<PathBuf, String> {
    built_firmware_for(ChipKind::Blackhole)
}

/// [`built_firmware`] for chip `kind`: the Wormhole images are built with the firmware's
/// `wormhole` feature and its `wormhole.toml` settings into their own target directory
/// ([`WORMHOLE_FIRMWARE_DIR`]), so both sets stay.
pub fn built_firmware_for(kind: ChipKind) -> Result<PathBuf, String> {
    built_firmware_with(kind, ImageHandler::Broadcast)
}

/// [`built_firmware_for`] with the images carrying `handler`: the handshake's are built with
/// the firmware's `handshake` feature, without logging, into directories of their own
/// ([`HANDSHAKE_FIRMWARE_DIR`], [`WORMHOLE_HANDSHAKE_FIRMWARE_DIR`]).
pub fn built_firmware_with(kind: ChipKind, handler: ImageHandler) -> Result<PathBuf, String> {
    built_firmware_in(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        kind,
        handler,
    )
}

/// The handler a firmware image set carries, which its headers name: each set holds one, for
/// code room (komorebi's reader is within some 450 bytes of its 24 KiB; the handshake's block
/// loop would come on top of it).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum ImageHandler {
    /// komorebi's broadcast handler (`komorebi_kernel::BroadcastHandler`): the default images.
    #[default]
    Broadcast,
    /// The handshake baseline (`komorebi_kernel::HandshakeHandler`, `--protocol handshake`),
    /// built without logging: with defmt's ring and call sites its reader is 178 bytes over its
    /// 24 KiB (measured 2026-12-07).
    Handshake,
}

/// [`built_firmware_with`] in the source tree at `root` (a copy of this one elsewhere, say: the
/// test that the images are the same wherever the tree lies builds one).
pub fn built_firmware_in(
    root: &std::path::Path,
    kind: ChipKind,
    handler: ImageHandler,
) -> Result<PathBuf, String> {
    let dir = root.join(firmware_subdir(kind, handler));
    // A program copied to another host (an MPI rank's) has no source tree to build in.
    if !root.join("examples/firmware").is_dir() {
        return Err(format!(
            "this program's source tree {} is not on this host, so the {kind} images can be \
             neither built nor found there: give --firmware DIR",
            root.display()
        ));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let args = firmware_build_args(kind, handler);
    // cargo's output is kept and printed only when the build fails: a build that succeeds says
    // nothing in a run's output (rustc warns of the images' unstable `relax` target feature on
    // every rebuild: examples/firmware/.cargo/config.toml says why it is used).
    let built = std::process::Command::new(cargo)
        .args(args)
        .current_dir(root.join("examples/firmware"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .stdin(std::process::Stdio::null())
        .output();
    let status = built.map(|out| {
        if !out.status.success() {
            use std::io::Write;
            let _ = std::io::stderr().write_all(&out.stderr);
        }
        out.status
    });
    let present = komorebi_hal::Role::ALL
        .iter()
        .all(|r| dir.join(r.name()).is_file());
    // A build that ran and failed is an error even with images on disk: they are an earlier
    // tree's, and a run (or a test) would pass or fail on code that no longer builds. Without
    // cargo at all, the images there are the only ones to run.
    match status {
        Ok(s) if s.success() => Ok(dir),
        Ok(s) => Err(format!(
            "building the {kind} firmware in {} failed ({s}; cargo printed why above): it needs the \
             riscv32im target (`rustup target add riscv32im-unknown-none-elf`){}; {}",
            root.join("examples/firmware").display(),
            if present {
                ", and the images already there are an earlier build's, not run"
            } else {
                ""
            },
            firmware_build_hint_with(kind, handler)
        )),
        Err(_) if present => Ok(dir),
        Err(e) => Err(format!(
            "cannot run cargo to build the {kind} firmware: {e}; {}",
            firmware_build_hint_with(kind, handler)
        )),
    }
}

/// Where the firmware build of this source tree puts its ELF files ([`built_firmware`]).
pub fn default_firmware_dir() -> PathBuf {
    default_firmware_dir_for(ChipKind::Blackhole)
}

/// Where the firmware build of this source tree puts chip `kind`'s ELF files.
pub fn default_firmware_dir_for(kind: ChipKind) -> PathBuf {
    default_firmware_dir_with(kind, ImageHandler::Broadcast)
}

/// Where the firmware build of this source tree puts chip `kind`'s ELF files carrying
/// `handler`.
pub fn default_firmware_dir_with(kind: ChipKind, handler: ImageHandler) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(firmware_subdir(kind, handler))
}

/// Where in a source tree the firmware build puts chip `kind`'s ELF files carrying `handler`.
const fn firmware_subdir(kind: ChipKind, handler: ImageHandler) -> &'static str {
    match (kind, handler) {
        (ChipKind::Blackhole, ImageHandler::Broadcast) => DEFAULT_FIRMWARE_DIR,
        (ChipKind::Wormhole, ImageHandler::Broadcast) => WORMHOLE_FIRMWARE_DIR,
        (ChipKind::Blackhole, ImageHandler::Handshake) => HANDSHAKE_FIRMWARE_DIR,
        (ChipKind::Wormhole, ImageHandler::Handshake) => WORMHOLE_HANDSHAKE_FIRMWARE_DIR,
    }
}

/// The arguments of the `cargo` build in `examples/firmware` that makes chip `kind`'s images
/// carrying `handler`.
fn firmware_build_args(kind: ChipKind, handler: ImageHandler) -> Vec<&'static str> {
    let mut args = vec!["build", "--release", "--quiet"];
    // `wormhole.toml` turns Blackhole's Zba and Zbb off: a Wormhole core is RV32IM alone.
    match (kind, handler) {
        (ChipKind::Blackhole, ImageHandler::Broadcast) => {}
        (ChipKind::Wormhole, ImageHandler::Broadcast) => args.extend([
            "--features",
            "wormhole",
            "--config",
            "wormhole.toml",
            "--target-dir",
            "target/wormhole",
        ]),
        (ChipKind::Blackhole, ImageHandler::Handshake) => args.extend([
            "--no-default-features",
            "--features",
            "handshake",
            "--target-dir",
            "target/handshake",
        ]),
        (ChipKind::Wormhole, ImageHandler::Handshake) => args.extend([
            "--no-default-features",
            "--features",
            "wormhole,handshake",
            "--config",
            "wormhole.toml",
            "--target-dir",
            "target/wormhole-handshake",
        ]),
    }
    args
}

/// How to build the firmware ELF files the loader needs (a Blackhole's; [`firmware_build_hint`]
/// for either chip).
pub const FIRMWARE_BUILD_HINT: &str =
    "build them with `(cd examples/firmware && cargo build --release)`, or give --firmware DIR";

/// How to build chip `kind`'s firmware ELF files.
pub fn firmware_build_hint(kind: ChipKind) -> String {
    firmware_build_hint_with(kind, ImageHandler::Broadcast)
}

/// How to build chip `kind`'s firmware ELF files carrying `handler`.
pub fn firmware_build_hint_with(kind: ChipKind, handler: ImageHandler) -> String {
    if (kind, handler) == (ChipKind::Blackhole, ImageHandler::Broadcast) {
        return FIRMWARE_BUILD_HINT.to_string();
    }
    let args = firmware_build_args(kind, handler);
    let args: Vec<&str> = args.into_iter().filter(|a| *a != "--quiet").collect();
    format!(
        "build them with `(cd examples/firmware && cargo {})`, or give --firmware DIR",
        args.join(" ")
    )
}

/// Which chip a session opens.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Backend {
    /// The simulator (the default): harvest mask, seed and adversary from the configuration.
    Simulator(SimConfig),
    /// The simulator presented as a PCIe card and driven through `komorebi-pcie`, as a card
    /// is: windows, telemetry, the firmware loader. `firmware`: a directory with the ELF
    /// files `reader`, `writer`, `compute`; `None` loads the header-only native images.
    PcieSim {
        /// The simulated chip.
        config: SimConfig,
        /// Firmware ELF directory, or the native images ([`DEFAULT_FIRMWARE_DIR`] when `exec`
        /// is [`Exec::Firmware`]).
        firmware: Option<PathBuf>,
        /// The handler of the images built when `firmware` is `None` and `exec` the firmware.
        handler: ImageHandler,
        /// What the cores run.
        exec: Exec,
        /// How the simulated card's BARs are cut.
        bar: SimBarOptions,
        /// How the host uses its windows.
        card: CardOptions,
    },
    /// Chip `chip` of Tenstorrent's ttsim (the `libttsim.so` at `library`), run by its server
    /// process and driven through `komorebi-pcie` as a card is, with the firmware ELF files in
    /// `firmware` (built from this tree when `None`, as for `--exec firmware`).
    Ttsim {
        /// The `libttsim.so`.
        library: PathBuf,
        /// The chip's PCI device number (0 for a single-chip build).
        chip: u32,
        /// Firmware ELF directory.
        firmware: Option<PathBuf>,
        /// The handler of the images built for the chip when `firmware` is `None`.
        handler: ImageHandler,
        /// A server already running `library`, to share (the other chips of a multi-chip
        /// build are one simulation: one server runs them all), or `None` to start one.
        server: Option<komorebi_pcie::ttsim::TtsimProcess>,
    },
    /// The card at `path` (`/dev/tenstorrent/N`), with the firmware ELF files in `firmware`
    /// ([`DEFAULT_FIRMWARE_DIR`], or [`WORMHOLE_FIRMWARE_DIR`] on a Wormhole, when `None`).
    Card {
        /// The device node.
        path: PathBuf,
        /// Firmware ELF directory.
        firmware: Option<PathBuf>,
        /// The handler of the images built for the chip when `firmware` is `None`.
        handler: ImageHandler,
    },
}

/// Where `cargo build --release` in `examples/firmware` puts the firmware ELF files.
pub const DEFAULT_FIRMWARE_DIR: &str =
    "examples/firmware/target/riscv32im-unknown-none-elf/release";
/// Where `cargo build --release --features wormhole --config wormhole.toml --target-dir
/// target/wormhole` in `examples/firmware` puts the Wormhole images.
pub const WORMHOLE_FIRMWARE_DIR: &str =
    "examples/firmware/target/wormhole/riscv32im-unknown-none-elf/release";
/// Where `cargo build --release --no-default-features --features handshake --target-dir
/// target/handshake` in `examples/firmware` puts the images carrying the handshake handler.
pub const HANDSHAKE_FIRMWARE_DIR: &str =
    "examples/firmware/target/handshake/riscv32im-unknown-none-elf/release";
/// Where the Wormhole images carrying the handshake handler go (`--features
/// wormhole,handshake --config wormhole.toml --target-dir target/wormhole-handshake`).
pub const WORMHOLE_HANDSHAKE_FIRMWARE_DIR: &str =
    "examples/firmware/target/wormhole-handshake/riscv32im-unknown-none-elf/release";

impl Default for Backend {
    fn default() -> Self {
        Self::Simulator(SimConfig::default())
    }
}

impl Backend {
    /// The simulator presented as a PCIe card, with the default windows and the native
    /// images.
    pub fn pcie_sim(config: SimConfig) -> Self {
        Self::PcieSim {
            config,
            firmware: None,
            handler: ImageHandler::Broadcast,
            exec: Exec::Native,
            bar: SimBarOptions::default(),
            card: CardOptions::default(),
        }
    }

    /// The same backend loading the firmware ELF files of `dir` (`None`: the default, which
    /// for `PcieSim` is the native images). The simulator driven directly loads nothing.
    pub fn with_firmware(mut self, dir: Option<PathBuf>) -> Self {
        match &mut self {
            Self::PcieSim { firmware, .. }
            | Self::Ttsim { firmware, .. }
            | Self::Card { firmware, .. } => *firmware = dir,
            Self::Simulator(_) => {}
        }
        self
    }

    /// The same backend building, when it loads this tree's firmware (no directory given), the
    /// images that carry `handler`. The simulator driven directly loads nothing.
    pub fn with_handler(mut self, images: ImageHandler) -> Self {
        match &mut self {
            Self::PcieSim { handler, .. }
            | Self::Ttsim { handler, .. }
            | Self::Card { handler, .. } => *handler = images,
            Self::Simulator(_) => {}
        }
        self
    }

    /// The same backend running `exec` on its cores (only the simulated card takes it).
    pub fn with_exec(mut self, how: Exec) -> Self {
        if let Self::PcieSim { exec, .. } = &mut self {
            *exec = how;
        }
        self
    }

    /// The simulator's configuration, for the backends that simulate.
    pub fn sim_config(&self) -> Option<&SimConfig> {
        match self {
            Self::Simulator(c) | Self::PcieSim { config: c, .. } => Some(c),
            Self::Ttsim { .. } | Self::Card { .. } => None,
        }
    }

    /// Opens the device with the persistent kernels running `handlers()`.
    pub(crate) fn open<H, F>(self, handlers: F) -> Result<Box<dyn Device>, OpenError>
    where
        H: HandlerSet + 'static,
        F: Fn() -> H + 'static,
    {
        match self {
            Self::Simulator(config) => {
                // The same logical coordinates a card of this chip reports.
                let of_noc0 = pcie::logical_of(&pcie::card_chip_of(&config));
                let logical = move |t: (u8, u8)| Xy::new(t.0, t.1).map_or((0xFF, 0xFF), &of_noc0);
                Ok(Box::new(SimDevice::new(config, handlers, logical)?))
            }
            Self::PcieSim {
                config,
                firmware,
                handler,
                exec,
                bar,
                card,
            } => {
                // The simulated card runs the firmware as a Blackhole only (a Wormhole's native
                // kernels alone: refused before here).
                let kind = ChipKind::Blackhole;
                let firmware = match (firmware, exec) {
                    (None, Exec::Firmware) => {
                        Some(built_firmware_with(kind, handler).map_err(|why| {
                            OpenError::Unusable(PcieError::Firmware {
                                image: "examples/firmware".into(),
                                why,
                            })
                        })?)
                    }
                    (dir, _) => dir,
                };
                let firmware = firmware
                    .map(|d| Firmware::from_dir(&d))
                    .transpose()
                    .map_err(|e| match (exec, e) {
                        (Exec::Firmware, PcieError::Firmware { image, why }) => {
                            OpenError::Unusable(PcieError::Firmware {
                                image,
                                why: format!("{why}; {FIRMWARE_BUILD_HINT}"),
                            })
                        }
                        (_, e) => OpenError::Unusable(e),
                    })?;
                let device = pcie::open_pcie_sim(config, bar, card, firmware, exec, handlers)
                    .map_err(OpenError::Unusable)?;
                Ok(Box::new(device))
            }
            Self::Ttsim {
                library,
                chip,
                firmware,
                handler,
                server,
            } => {
                let _ = &handlers;
                #[cfg(target_os = "linux")]
                {
                    let process = match server {
                        Some(p) => p,
                        None => ttsim_process(&library).map_err(OpenError::Unusable)?,
                    };
                    let device = pcie::open_ttsim(process, chip, chip_images(firmware, handler))
                        .map_err(OpenError::Unusable)?;
                    Ok(Box::new(device))
                }
                #[cfg(not(target_os = "linux"))]
                {
                    let _ = (library, chip, firmware, handler, server);
                    Err(OpenError::Unusable(PcieError::Unsupported))
                }
            }
            Self::Card {
                path,
                firmware,
                handler,
            } => {
                let _ = &handlers;
                #[cfg(target_os = "linux")]
                {
                    let device = pcie::open_card(&path, chip_images(firmware, handler))
                        .map_err(OpenError::Unusable)?;
                    Ok(Box::new(device))
                }
                #[cfg(not(target_os = "linux"))]
                {
                    let _ = (path, firmware, handler);
                    Err(OpenError::Unusable(PcieError::Unsupported))
                }
            }
        }
    }
}

/// The images a device of chip `kind` loads: `firmware` (`--firmware`), or this source tree's
/// build for that chip carrying `handler`, built first ([`built_firmware_with`]), at the same
/// absolute path the log reader takes its defmt tables from. The device's PCI id says which
/// chip it is.
#[cfg(target_os = "linux")]
fn chip_images(
    firmware: Option<PathBuf>,
    handler: ImageHandler,
) -> impl FnOnce(ChipKind) -> Result<PathBuf, PcieError> {
    move |kind| match firmware {
        Some(d) => Ok(d),
        None => built_firmware_with(kind, handler).map_err(|why| PcieError::Firmware {
            image: "examples/firmware".into(),
            why,
        }),
    }
}

/// The ttsim server binary: [`SERVER_VAR`](komorebi_pcie::ttsim::SERVER_VAR) when set, else
/// `komorebi-ttsim-server` next to this program or one directory up (where cargo puts it for
/// `target/*/examples` and `target/*/deps`), built there first if this program runs from this
/// source tree's cargo target directory and it is missing. The error says where it looked and
/// how to build it.
#[cfg(target_os = "linux")]
pub fn ttsim_server() -> Result<PathBuf, PcieError> {
    use komorebi_pcie::ttsim::{SERVER_NAME, SERVER_VAR};
    if let Some(p) = std::env::var_os(SERVER_VAR) {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| PcieError::TtsimUnavailable {
        library: "-".into(),
        why: format!("cannot find this program's own path: {e}"),
    })?;
    let dirs: Vec<PathBuf> = exe.ancestors().skip(1).take(2).map(PathBuf::from).collect();
    let found = || {
        dirs.iter()
            .map(|d| d.join(SERVER_NAME))
            .find(|p| p.is_file())
    };
    if let Some(p) = found() {
        return Ok(p);
    }
    // `cargo run` builds only the program it runs: build the server beside it, as
    // `built_firmware` builds the firmware, when this program runs from a cargo target
    // directory of this source tree.
    if build_server_beside(&exe)
        && let Some(p) = found()
    {
        return Ok(p);
    }
    Err(PcieError::TtsimUnavailable {
        library: "-".into(),
        why: format!(
            "the server binary {SERVER_NAME} is not in {}: build it with `cargo build --release \
             --bin {SERVER_NAME}` (the same profile as this program), or set {SERVER_VAR}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    })
}

/// The cargo profile and target directory a program at `exe` was built into
/// (`<target>/<profile>/komorebi`, `<target>/<profile>/examples/…` or `…/deps/…`; `<target>`
/// may be a target triple's directory inside a target directory). `None` when `exe` is not in
/// a cargo target directory, which cargo marks with `CACHEDIR.TAG`: a program copied or
/// installed elsewhere (`~/.cargo/bin`, `/usr/local/bin`) must not start a build there.
#[cfg(any(target_os = "linux", test))]
fn cargo_dirs_of(exe: &std::path::Path) -> Option<(&str, &std::path::Path)> {
    let mut dir = exe.parent()?;
    if dir
        .file_name()
        .is_some_and(|n| n == "examples" || n == "deps")
    {
        dir = dir.parent()?;
    }
    let profile = dir.file_name()?.to_str()?;
    let target = dir.parent()?;
    let marked = |d: &std::path::Path| d.join("CACHEDIR.TAG").is_file();
    (marked(target) || target.parent().is_some_and(marked)).then_some((profile, target))
}

/// Builds the server into the cargo target directory and profile `exe` runs from
/// ([`cargo_dirs_of`]); false when `exe` is not in one, this source tree is gone, or the build
/// fails (the caller then says how to build it).
#[cfg(target_os = "linux")]
fn build_server_beside(exe: &std::path::Path) -> bool {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (Some((profile, target)), true) = (cargo_dirs_of(exe), root.join("Cargo.toml").is_file())
    else {
        return false;
    };
    // cargo's `dev` profile builds into `debug`.
    let profile = if profile == "debug" { "dev" } else { profile };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    std::process::Command::new(cargo)
        .args(["build", "--quiet", "--profile", profile, "--bin"])
        .arg(komorebi_pcie::ttsim::SERVER_NAME)
        .arg("--target-dir")
        .arg(target)
        .current_dir(root)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .is_ok_and(|s| s.success())
}

/// Starts a ttsim server on `library`.
#[cfg(target_os = "linux")]
pub fn ttsim_process(
    library: &std::path::Path,
) -> Result<komorebi_pcie::ttsim::TtsimProcess, PcieError> {
    komorebi_pcie::ttsim::TtsimProcess::spawn(&ttsim_server()?, library)
}

/// Why a backend could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// The device refused a request while it was being set up.
    #[error("device: {0}")]
    Device(#[from] DeviceError),
    /// The device cannot be used at all.
    #[error("{0}")]
    Unusable(PcieError),
}

#[cfg(test)]
mod tests {
    use super::cargo_dirs_of;

    #[test]
    fn each_image_set_has_its_own_directory_and_build_command() {
        use super::{ChipKind, ImageHandler, firmware_build_hint_with, firmware_subdir};
        let sets = [
            (ChipKind::Blackhole, ImageHandler::Broadcast),
            (ChipKind::Wormhole, ImageHandler::Broadcast),
            (ChipKind::Blackhole, ImageHandler::Handshake),
            (ChipKind::Wormhole, ImageHandler::Handshake),
        ];
        let dirs: std::collections::BTreeSet<_> =
            sets.iter().map(|&(k, h)| firmware_subdir(k, h)).collect();
        assert_eq!(dirs.len(), 4, "{dirs:?}");
        assert_eq!(
            firmware_build_hint_with(ChipKind::Blackhole, ImageHandler::Handshake),
            "build them with `(cd examples/firmware && cargo build --release \
             --no-default-features --features handshake --target-dir target/handshake)`, or \
             give --firmware DIR"
        );
        assert_eq!(
            firmware_build_hint_with(ChipKind::Wormhole, ImageHandler::Broadcast),
            "build them with `(cd examples/firmware && cargo build --release --features wormhole \
             --config wormhole.toml --target-dir target/wormhole)`, or give --firmware DIR"
        );
        // Each command's target directory is the one its images are looked for in.
        for (kind, handler) in sets {
            let hint = firmware_build_hint_with(kind, handler);
            let target = firmware_subdir(kind, handler)
                .trim_start_matches("examples/firmware/")
                .trim_end_matches("/riscv32im-unknown-none-elf/release");
            assert!(
                hint.contains(&format!("--target-dir {target})")) || target == "target",
                "{hint} / {target}"
            );
        }
    }

    #[test]
    fn a_program_away_from_its_source_tree_says_so_and_names_the_chip() {
        let root = std::path::Path::new("/nonexistent/komorebi");
        let e = super::built_firmware_in(
            root,
            super::ChipKind::Wormhole,
            super::ImageHandler::Broadcast,
        )
        .unwrap_err();
        assert_eq!(
            e,
            "this program's source tree /nonexistent/komorebi is not on this host, so the \
             Wormhole B0 images can be neither built nor found there: give --firmware DIR"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_card_loads_the_images_the_log_reader_decodes_with() {
        use super::{ChipKind, chip_images, default_firmware_dir_for};
        // Without --firmware: this tree's build, at the absolute path `log_tables` reads (a
        // relative default loaded the current directory's images, another tree's from
        // elsewhere); with it, the directory given.
        let dir = chip_images(None, super::ImageHandler::Broadcast)(ChipKind::Blackhole).unwrap();
        assert_eq!(dir, default_firmware_dir_for(ChipKind::Blackhole));
        assert!(dir.is_absolute(), "{}", dir.display());
        let given = std::path::PathBuf::from("/some/images");
        assert_eq!(
            chip_images(Some(given.clone()), super::ImageHandler::Broadcast)(ChipKind::Wormhole)
                .unwrap(),
            given
        );
    }

    #[test]
    fn the_server_is_built_only_beside_a_program_in_a_cargo_target_directory() {
        let root = std::env::temp_dir().join(format!("komorebi-dirs-{}", std::process::id()));
        let target = root.join("target");
        std::fs::create_dir_all(target.join("x86_64-unknown-linux-gnu/release")).unwrap();
        std::fs::create_dir_all(root.join("bin/release")).unwrap();
        let at = |p: &str| root.join(p);
        // Not a cargo target directory (no CACHEDIR.TAG): a copied or installed program.
        assert_eq!(cargo_dirs_of(&at("bin/release/komorebi")), None);
        assert_eq!(cargo_dirs_of(&at("target/release/komorebi")), None);
        std::fs::write(
            target.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .unwrap();
        assert_eq!(cargo_dirs_of(&at("bin/release/komorebi")), None);
        for (exe, profile, dir) in [
            ("target/release/komorebi", "release", "target"),
            ("target/debug/examples/broadcast", "debug", "target"),
            ("target/release/deps/ttsim-0123", "release", "target"),
            (
                "target/x86_64-unknown-linux-gnu/release/komorebi",
                "release",
                "target/x86_64-unknown-linux-gnu",
            ),
        ] {
            let exe = at(exe);
            assert_eq!(
                cargo_dirs_of(&exe),
                Some((profile, at(dir).as_path())),
                "{}",
                exe.display()
            );
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
