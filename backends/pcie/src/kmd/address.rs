//! How a device is named: its `PciAddress` (which survives resets, and orders the node list) and
//! the `N` of its node `/dev/tenstorrent/N` (which a reset may change). Imports none of the
//! module's other files.

use std::fmt;

/// A PCI address, ordered as tt-umd orders devices (domain, bus, device, function).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciAddress {
    /// PCI domain (segment).
    pub domain: u16,
    /// Bus.
    pub bus: u8,
    /// Device (0..32).
    pub device: u8,
    /// Function (0..8).
    pub function: u8,
}

impl PciAddress {
    /// The address GET_DEVICE_INFO reports: `pci_domain` and `bus_dev_fn` (bits 0..3 function,
    /// 3..8 device, 8..16 bus).
    pub const fn from_kmd(pci_domain: u16, bus_dev_fn: u16) -> Self {
        Self {
            domain: pci_domain,
            bus: (bus_dev_fn >> 8) as u8,
            device: ((bus_dev_fn >> 3) & 0x1F) as u8,
            function: (bus_dev_fn & 0x7) as u8,
        }
    }
}

impl fmt::Display for PciAddress {
    /// `dddd:bb:dd.f`, lower-case hex, as sysfs names devices.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

/// `N` of a node name that is all decimal digits.
pub(super) fn node_number(name: &str) -> Option<u32> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_address_from_bus_dev_fn() {
        // bus 0xc1, device 0x1f, function 7: 0xc1 << 8 | 0x1f << 3 | 7.
        let a = PciAddress::from_kmd(2, 0xC1 << 8 | 0x1F << 3 | 7);
        assert_eq!((a.domain, a.bus, a.device, a.function), (2, 0xC1, 0x1F, 7));
        assert_eq!(a.to_string(), "0002:c1:1f.7");
        assert_eq!(PciAddress::from_kmd(0, 0x0100).to_string(), "0000:01:00.0");
    }

    #[test]
    fn node_numbers_are_all_digits() {
        assert_eq!(node_number("0"), Some(0));
        assert_eq!(node_number("17"), Some(17));
        assert_eq!(node_number("by-id"), None);
        assert_eq!(node_number(""), None);
        assert_eq!(node_number("+1"), None);
        assert_eq!(node_number("1a"), None);
    }
}
