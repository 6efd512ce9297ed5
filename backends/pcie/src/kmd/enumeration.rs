//! The node list: `enumerate` opens each `/dev/tenstorrent/N` read-only for one GET_DEVICE_INFO
//! and sorts the nodes by PCI address; `select_visible` applies `TT_VISIBLE_DEVICES`.

use std::os::fd::AsFd;
use std::path::Path;

use rustix::fs::OFlags;
use rustix::io::Errno;
use tt_kmd_sys as sys;

use super::address::{PciAddress, node_number};
use super::errno::open_error;
use super::open::{check_tt_kmd_node, device_info, known_chip, open_node};
use crate::error::PcieError;

/// Where tt-kmd puts its device nodes.
pub const DEVICE_DIR: &str = "/dev/tenstorrent";
/// The environment variable that restricts [`enumerate`] (see [`select_visible`]).
pub const VISIBLE_DEVICES_VAR: &str = "TT_VISIBLE_DEVICES";

/// One entry of [`enumerate`]: a device node and what opening it showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceNode {
    /// The node's path (`/dev/tenstorrent/0`).
    pub path: String,
    /// `N` of `/dev/tenstorrent/N` (it may change across a reset; the PCI address does not).
    pub node: Option<u32>,
    /// The PCI address, when GET_DEVICE_INFO answered.
    pub pci_address: Option<PciAddress>,
    /// PCI vendor and device id, when GET_DEVICE_INFO answered.
    pub pci_id: Option<(u16, u16)>,
    /// Why the node cannot be used, if it cannot (could not be opened, not tt-kmd, not a
    /// Blackhole, ...). [`KmdBar::open`](super::KmdBar::open) checks more (driver version,
    /// BAR mappings).
    pub error: Option<PcieError>,
}

impl DeviceNode {
    /// Whether the node looked like a usable Blackhole.
    pub fn is_blackhole(&self) -> bool {
        self.error.is_none()
            && self.pci_id == Some((sys::PCI_VENDOR_ID_TENSTORRENT, sys::PCI_DEVICE_ID_BLACKHOLE))
    }
}

/// Every tt-kmd device node of this host, sorted by PCI address (nodes whose address could not
/// be read last, by node number), restricted by `TT_VISIBLE_DEVICES` when it is set (see
/// [`select_visible`]). No `/dev/tenstorrent` at all is an empty list.
///
/// Each node is opened read-only with `O_NONBLOCK` (so a node held with `O_EXCL` by another
/// process shows as [`PcieError::Busy`] instead of blocking) and `O_APPEND` for one
/// GET_DEVICE_INFO, then closed. `O_APPEND` makes the fd a power-aware client that asks for
/// nothing (tt-kmd 2.6.0 and later, `chardev.c` `tt_cdev_open`; older drivers ignore it), so a
/// listing sends the card no power message; a plain open would ask ARC to power the card up
/// and, at the close, down again (tt-umd opens its lock-only handles the same way,
/// `KmdMutex::open_device`).
pub fn enumerate() -> Vec<DeviceNode> {
    let nodes = enumerate_in(Path::new(DEVICE_DIR));
    match std::env::var_os(VISIBLE_DEVICES_VAR) {
        Some(spec) => select_visible(nodes, &spec.to_string_lossy()),
        None => nodes,
    }
}

/// [`enumerate`] over the nodes of `dir` (character devices with numeric names; `by-id` and
/// anything else is skipped; symbolic links are followed), without `TT_VISIBLE_DEVICES`.
pub fn enumerate_in(dir: &Path) -> Vec<DeviceNode> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            let path = dir.display().to_string();
            let error = match Errno::from_io_error(&e) {
                Some(errno) => open_error(&path, errno),
                None => PcieError::Ioctl {
                    path: path.clone(),
                    ioctl: "open",
                    errno: 0,
                    message: e.to_string(),
                },
            };
            return vec![DeviceNode {
                path,
                node: None,
                pci_address: None,
                pci_id: None,
                error: Some(error),
            }];
        }
    };
    let mut nodes: Vec<DeviceNode> = entries
        .flatten()
        .filter_map(|entry| {
            let node = entry.file_name().to_str().and_then(node_number)?;
            let path = entry.path();
            let is_char = std::fs::metadata(&path)
                .map(|m| std::os::unix::fs::FileTypeExt::is_char_device(&m.file_type()))
                .unwrap_or(false);
            is_char.then(|| probe(&path, node))
        })
        .collect();
    sort_nodes(&mut nodes);
    nodes
}

/// By PCI address, then the nodes without one by node number.
fn sort_nodes(nodes: &mut [DeviceNode]) {
    nodes.sort_by_key(|n| (n.pci_address.is_none(), n.pci_address, n.node));
}

/// Restricts `nodes` (sorted as [`enumerate`] sorts them) to those `spec` names, the
/// `TT_VISIBLE_DEVICES` format of tt-umd: a comma-separated list, whitespace ignored, of
///
/// * integers: an index into `nodes` (this is the PCI-address order, which survives resets;
///   tt-umd today indexes its list sorted by node number, and plans to move to this);
/// * PCI addresses or parts of one (a token with `:` or `.` and otherwise only hex digits):
///   every node whose `dddd:bb:dd.f` contains it (`0000:c` is a whole Galaxy tray).
///
/// The result keeps `nodes`' order, each node once. An empty `spec` selects nothing. A token
/// that matches nothing becomes an entry of its own with [`PcieError::NoSuchDevice`], so a
/// listing shows the mistake (tt-umd throws).
pub fn select_visible(nodes: Vec<DeviceNode>, spec: &str) -> Vec<DeviceNode> {
    let mut keep = vec![false; nodes.len()];
    let mut unmatched = Vec::new();
    for token in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let mut hit = false;
        if is_bdf_token(token) {
            let token = token.to_ascii_lowercase();
            for (i, node) in nodes.iter().enumerate() {
                if node
                    .pci_address
                    .is_some_and(|a| a.to_string().contains(&token))
                {
                    keep[i] = true;
                    hit = true;
                }
            }
        } else if let Ok(i) = token.parse::<usize>()
            && let Some(k) = keep.get_mut(i)
        {
            *k = true;
            hit = true;
        }
        if !hit {
            unmatched.push(token.to_string());
        }
    }
    let mut selected: Vec<DeviceNode> = nodes
        .into_iter()
        .zip(keep)
        .filter_map(|(node, keep)| keep.then_some(node))
        .collect();
    selected.extend(unmatched.into_iter().map(|token| {
        let path = format!("{VISIBLE_DEVICES_VAR} entry `{token}`");
        DeviceNode {
            path: path.clone(),
            node: None,
            pci_address: None,
            pci_id: None,
            error: Some(PcieError::NoSuchDevice { path }),
        }
    }));
    selected
}

fn is_bdf_token(token: &str) -> bool {
    token.contains([':', '.'])
        && token
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
}

/// Opens `path` read-only (power-aware, asking for nothing) for one GET_DEVICE_INFO.
fn probe(path: &Path, node: u32) -> DeviceNode {
    let p = path.display().to_string();
    let mut entry = DeviceNode {
        path: p.clone(),
        node: Some(node),
        pci_address: None,
        pci_id: None,
        error: None,
    };
    let info = open_node(path, OFlags::RDONLY | OFlags::APPEND).and_then(|fd| {
        check_tt_kmd_node(&p, fd.as_fd())?;
        device_info(&p, fd.as_fd())
    });
    match info {
        Ok(info) => {
            entry.pci_address = Some(PciAddress::from_kmd(info.pci_domain, info.bus_dev_fn));
            entry.pci_id = Some((info.vendor_id, info.device_id));
            entry.error = known_chip(&p, &info).err();
        }
        Err(e) => entry.error = Some(e),
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(addr: Option<(u16, u16)>, n: u32) -> DeviceNode {
        DeviceNode {
            path: format!("/dev/tenstorrent/{n}"),
            node: Some(n),
            pci_address: addr.map(|(d, bdf)| PciAddress::from_kmd(d, bdf)),
            pci_id: Some((0x1E52, 0xB140)),
            error: None,
        }
    }

    #[test]
    fn visible_devices_by_index_and_bdf() {
        let nodes = vec![
            node(Some((0, 0x0100)), 3),
            node(Some((0, 0x0200)), 0),
            node(Some((0, 0xC100)), 1),
        ];
        let pick = |spec: &str| -> Vec<String> {
            select_visible(nodes.clone(), spec)
                .into_iter()
                .map(|n| n.path)
                .collect()
        };
        assert_eq!(pick("0"), ["/dev/tenstorrent/3"]);
        assert_eq!(
            pick(" 2 , 0 "),
            ["/dev/tenstorrent/3", "/dev/tenstorrent/1"]
        );
        assert_eq!(pick("0000:02:00.0"), ["/dev/tenstorrent/0"]);
        assert_eq!(pick("0000:C"), ["/dev/tenstorrent/1"]);
        assert_eq!(pick("0000:01:00.0,0"), ["/dev/tenstorrent/3"]);
        assert!(pick("").is_empty());
        let bad = select_visible(nodes.clone(), "7,0000:09");
        assert_eq!(bad.len(), 2);
        assert!(
            bad.iter()
                .all(|n| matches!(n.error, Some(PcieError::NoSuchDevice { .. })))
        );
        assert_eq!(bad[0].path, "TT_VISIBLE_DEVICES entry `7`");
    }

    #[test]
    fn enumerate_sorts_by_pci_address() {
        let mut nodes = [
            node(None, 0),
            node(Some((1, 0x0100)), 1),
            node(Some((0, 0x0300)), 2),
            node(Some((0, 0x0108)), 4),
        ];
        sort_nodes(&mut nodes);
        let order: Vec<u32> = nodes.iter().filter_map(|n| n.node).collect();
        assert_eq!(order, [4, 2, 1, 0]);
    }
}
