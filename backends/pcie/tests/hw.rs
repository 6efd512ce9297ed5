//! On a Blackhole card (`cargo test -p komorebi-pcie --features hw-blackhole`): open the first,
//! allocate a 2 MiB window, point it at ARC (8, 0) and read ARC's NIU `NOC_NODE_ID`. Without a
//! card at /dev/tenstorrent each test says so and passes.

#![cfg(all(feature = "hw-blackhole", target_os = "linux"))]

use blackhole_pac::arc::{ARC_APB_NOC_BASE, ARC_XY};
use blackhole_pac::tlb::{TlbConfig, TlbOrdering, TlbSize, config_offset};
use komorebi_pcie::kmd::{DeviceNode, KmdBar, enumerate};
use komorebi_pcie::{Bar, Mapping, PcieError, WindowHandle};

/// ARC's NoC0 NIU `NOC_NODE_ID`, as a TLB window reaches it.
const ARC_NOC_NODE_ID: u64 = 0x8005_0044;

fn first_blackhole() -> Option<DeviceNode> {
    let nodes = enumerate();
    for n in &nodes {
        eprintln!(
            "{}: {} {:?} {}",
            n.path,
            n.pci_address.map(|a| a.to_string()).unwrap_or_default(),
            n.pci_id,
            n.error.as_ref().map(|e| e.to_string()).unwrap_or_default()
        );
    }
    let found = nodes.into_iter().find(DeviceNode::is_blackhole);
    if found.is_none() {
        println!("no Blackhole card found at /dev/tenstorrent: skipping");
    }
    found
}

fn open_first() -> Option<KmdBar> {
    let node = first_blackhole()?;
    let bar = match KmdBar::open(&node.path) {
        Ok(bar) => bar,
        Err(e) => panic!("{}: {e}", node.path),
    };
    eprintln!("{:#?}", bar.identity());
    Some(bar)
}

#[test]
fn arc_answers_its_noc_node_id_through_a_2mib_window() {
    let Some(mut bar) = open_first() else { return };
    let mut w = bar
        .allocate(TlbSize::Size2M, Mapping::Uncached)
        .expect("allocate a 2 MiB window");
    let offset = ARC_NOC_NODE_ID % TlbSize::Size2M.bytes();
    let config = TlbConfig {
        ordering: TlbOrdering::Strict,
        ..TlbConfig::unicast(ARC_XY.0, ARC_XY.1, ARC_NOC_NODE_ID - offset)
    };
    assert_eq!(config.addr, ARC_APB_NOC_BASE);
    bar.configure(&mut w, &config).expect("configure");

    // What the driver programmed, read back from the configuration registers.
    let base = config_offset(w.index()).expect("a window index");
    let words = [0, 4, 8].map(|o| bar.bar0_read32(base + o).expect("config word"));
    assert_eq!(
        TlbConfig::decode(words, TlbSize::Size2M),
        config,
        "window {} programmed as {words:x?}",
        w.index()
    );

    let id = bar.read32(&w, offset).expect("read NOC_NODE_ID");
    eprintln!("ARC NOC_NODE_ID = {id:#010x}");
    assert_ne!(id, 0xFFFF_FFFF, "the device is hung");
    assert_eq!(
        (id & 0x3F, (id >> 6) & 0x3F),
        (u32::from(ARC_XY.0), u32::from(ARC_XY.1))
    );
    bar.free(w).expect("free");
}

#[test]
fn accesses_are_checked_and_windows_come_back() {
    let Some(mut bar) = open_first() else { return };
    let w = bar
        .allocate(TlbSize::Size2M, Mapping::WriteCombined)
        .expect("allocate");
    let size = TlbSize::Size2M.bytes();
    assert!(matches!(
        bar.read32(&w, 2),
        Err(PcieError::Unaligned { .. })
    ));
    assert!(matches!(
        bar.read32(&w, size),
        Err(PcieError::OutOfWindow { .. })
    ));
    let mut buf = [0u8; 8];
    assert!(matches!(
        bar.read(&w, size - 4, &mut buf),
        Err(PcieError::OutOfWindow { .. })
    ));
    let mut misaligned = TlbConfig::unicast(ARC_XY.0, ARC_XY.1, 0x1000);
    let mut w = w;
    assert!(matches!(
        bar.configure(&mut w, &misaligned),
        Err(PcieError::TlbConfig(_))
    ));
    misaligned.addr = 0;
    misaligned.end = (64, 0);
    assert!(matches!(
        bar.configure(&mut w, &misaligned),
        Err(PcieError::TlbConfig(_))
    ));
    bar.free(w).expect("free");

    // Freed windows are reusable: allocate and free many more than there are.
    for _ in 0..(2 * bar.window_count(TlbSize::Size2M)) {
        let w = bar
            .allocate(TlbSize::Size2M, Mapping::Uncached)
            .expect("allocate again");
        bar.free(w).expect("free again");
    }
}
