//! wormhole-pac against Tenstorrent's ttsim register data: `data/wh/tile_regs.json` of ttsim
//! v1.10.0, the list its Wormhole model generates its register decoder from.
//!
//! ```text
//! KOMOREBI_TTSIM_WH_TILE_REGS=<ttsim>/data/wh/tile_regs.json \
//!     cargo test -p wormhole-pac --test ttsim_regs
//! ```
//!
//! Without the variable the file is looked for beside `KOMOREBI_TTSIM_TILE_REGS` (ttsim's
//! Blackhole `data/bh/tile_regs.json`, at `../wh/tile_regs.json`); without either the test
//! passes after one line saying how to run it. Every register the crate defines that the JSON
//! lists is compared: its address (the `address_map` base plus `offset`, element `i` of an
//! array at `+ i * array_stride`), array size and stride, and reset value where the crate has
//! one. (The JSON lists what ttsim models: `NOC_ENDPOINT_ID` and most counters are not in it.)

use serde_json::Value;
use wormhole_pac::niu::{self, cfg, cmd, counter};
use wormhole_pac::tensix;

fn json() -> Option<Value> {
    // A path the variable names must be a file (a mistyped one would skip the test); the one
    // beside the Blackhole table is taken only if it is there.
    let named = std::env::var_os("KOMOREBI_TTSIM_WH_TILE_REGS").map(std::path::PathBuf::from);
    if let Some(p) = &named {
        assert!(
            p.is_file(),
            "KOMOREBI_TTSIM_WH_TILE_REGS: {} is not a file",
            p.display()
        );
    }
    let path = named.or_else(|| {
        let bh = std::path::PathBuf::from(std::env::var_os("KOMOREBI_TTSIM_TILE_REGS")?);
        Some(bh.parent()?.parent()?.join("wh/tile_regs.json")).filter(|p| p.is_file())
    });
    let Some(path) = path else {
        eprintln!(
            "skipped: set KOMOREBI_TTSIM_WH_TILE_REGS to ttsim's data/wh/tile_regs.json to run \
             this test"
        );
        return None;
    };
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: cannot be read: {e}", path.display()));
    Some(
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display())),
    )
}

fn hex(v: &Value) -> u64 {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("{v} is not a hex string"));
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn base(j: &Value, region: &str) -> u64 {
    let r = j["address_map"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == region)
        .unwrap_or_else(|| panic!("no address_map region {region}"));
    hex(&r["base"])
}

fn reg<'a>(j: &'a Value, block: &str, name: &str) -> &'a Value {
    j["regs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == block)
        .unwrap_or_else(|| panic!("no register block {block}"))["regs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no register {block}.{name}"))
}

#[test]
fn the_niu_offsets_are_ttsims() {
    let Some(j) = json() else { return };
    assert_eq!(base(&j, "noc0_regs"), niu::NIU0_BASE as u64);
    assert_eq!(base(&j, "noc1_regs"), niu::NIU1_BASE as u64);
    for (name, offset) in [
        ("noc_targ_addr_lo", cmd::NOC_TARG_ADDR_LO),
        ("noc_targ_addr_mid", cmd::NOC_TARG_ADDR_MID),
        ("noc_ret_addr_lo", cmd::NOC_RET_ADDR_LO),
        ("noc_ret_addr_mid", cmd::NOC_RET_ADDR_MID),
        ("noc_packet_tag", cmd::NOC_PACKET_TAG),
        ("noc_ctrl", cmd::NOC_CTRL),
        ("noc_at_len_be", cmd::NOC_AT_LEN_BE),
        ("noc_at_data", cmd::NOC_AT_DATA),
        ("noc_cmd_ctrl", cmd::NOC_CMD_CTRL),
    ] {
        let r = reg(&j, "noc_regs", name);
        assert_eq!(hex(&r["offset"]), offset as u64, "{name}");
        assert_eq!(r["array_size"], niu::NOC_CMD_BUFS, "{name}");
        assert_eq!(
            hex(&r["array_stride"]),
            niu::NOC_CMD_BUF_OFFSET as u64,
            "{name}"
        );
    }
    let single = |name: &str| hex(&reg(&j, "noc_regs", name)["offset"]);
    assert_eq!(single("noc_node_id"), cmd::NOC_NODE_ID as u64);
    assert_eq!(
        single("noc_clear_outstanding_req_cnt"),
        niu::NOC_CLEAR_OUTSTANDING_REQ_CNT as u64
    );
    let cfg_at = |n: usize| (niu::NOC_CFG_OFFSET + 4 * n) as u64;
    assert_eq!(single("niu_cfg_0"), cfg_at(cfg::NIU_CFG_0));
    assert_eq!(single("router_cfg_1"), cfg_at(cfg::ROUTER_CFG_1));
    assert_eq!(single("router_cfg_3"), cfg_at(cfg::ROUTER_CFG_3));
    for i in 0..4 {
        let x = format!("noc_x_id_translate_table_{i}");
        let y = format!("noc_y_id_translate_table_{i}");
        assert_eq!(
            single(&x),
            cfg_at(cfg::NOC_X_ID_TRANSLATE_TABLE_0 + i),
            "{x}"
        );
        assert_eq!(
            single(&y),
            cfg_at(cfg::NOC_Y_ID_TRANSLATE_TABLE_0 + i),
            "{y}"
        );
    }
    assert_eq!(single("noc_id_logical"), cfg_at(cfg::NOC_ID_LOGICAL));
    let status_at = |n: usize| (niu::NOC_STATUS_OFFSET + 4 * n) as u64;
    for (name, index) in [
        (
            "niu_mst_atomic_resp_received",
            counter::NIU_MST_ATOMIC_RESP_RECEIVED,
        ),
        ("niu_mst_wr_ack_received", counter::NIU_MST_WR_ACK_RECEIVED),
        (
            "niu_mst_rd_resp_received",
            counter::NIU_MST_RD_RESP_RECEIVED,
        ),
        (
            "niu_mst_posted_atomic_sent",
            counter::NIU_MST_POSTED_ATOMIC_SENT,
        ),
        (
            "niu_mst_nonposted_wr_req_sent",
            counter::NIU_MST_NONPOSTED_WR_REQ_SENT,
        ),
        (
            "niu_mst_posted_wr_req_sent",
            counter::NIU_MST_POSTED_WR_REQ_SENT,
        ),
    ] {
        assert_eq!(single(name), status_at(index), "{name}");
    }
    for (name, index) in [
        (
            "niu_mst_reqs_outstanding_id",
            counter::NIU_MST_REQS_OUTSTANDING_ID,
        ),
        (
            "niu_mst_write_reqs_outgoing_id",
            counter::NIU_MST_WRITE_REQS_OUTGOING_ID,
        ),
    ] {
        let r = reg(&j, "noc_regs", name);
        assert_eq!(hex(&r["offset"]), status_at(index), "{name}");
        assert_eq!(r["array_size"], niu::TRANSACTION_IDS as u64, "{name}");
        assert_eq!(hex(&r["array_stride"]), 4, "{name}");
    }
    // Blackhole's registers that Wormhole lacks are not in the block.
    let names: Vec<&str> = j["regs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "noc_regs")
        .unwrap()["regs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    for absent in ["noc_targ_addr_hi", "noc_ret_addr_hi", "noc_brcst_exclude"] {
        assert!(
            !names.contains(&absent),
            "{absent} is in ttsim's Wormhole NIU"
        );
    }
}

#[test]
fn soft_reset_and_the_wall_clock_are_ttsims() {
    let Some(j) = json() else { return };
    let debug = base(&j, "riscv_debug_regs");
    let soft = reg(&j, "riscv_debug_regs", "soft_reset_0");
    assert_eq!(debug + hex(&soft["offset"]), tensix::SOFT_RESET_0 as u64);
    assert_eq!(hex(&soft["reset_value"]), tensix::SOFT_RESET_ALL as u64);
    let clock = |name: &str| debug + hex(&reg(&j, "riscv_debug_regs", name)["offset"]);
    assert_eq!(clock("wall_clock_0"), tensix::WALL_CLOCK_L as u64);
    assert_eq!(clock("wall_clock_1_at"), tensix::WALL_CLOCK_H as u64);
}
