//! blackhole-pac against Tenstorrent's ttsim register data: `data/bh/tile_regs.json` of
//! Tenstorrent's `ttsim` repository (v1.10.0), the list ttsim's Blackhole model generates its
//! register decoder from (ttsim `src/tile_gen_regs.py`).
//!
//! ```text
//! KOMOREBI_TTSIM_TILE_REGS=<ttsim>/data/bh/tile_regs.json \
//!     cargo test -p blackhole-pac --test ttsim_regs -- --nocapture
//! ```
//!
//! Without the variable the test passes and prints one line saying how to run it. With a path it
//! cannot read or parse, it fails naming the path and the problem.
//!
//! For every JSON register the crate defines, the test compares the full address (the
//! `address_map` base plus `offset`; element `i` of an array at `+ i * array_stride`), the array
//! size and stride, the access direction where a `Reg<T, A>` encodes one (`R`/`W`/`RW` against
//! `ro`/`wo`/`rw`), and the reset value where the crate has one. Each mismatch names the register,
//! the PAC value and the JSON value. A JSON register or region this file neither checks nor lists
//! below fails the test as well, so a newer ttsim cannot add a register the crate defines without
//! the test noticing.
//!
//! Where the JSON's blocks sit (ttsim `src/tile.cpp` dispatches so; the block names are not the
//! `address_map` names):
//!
//! | JSON block | base |
//! |---|---|
//! | `riscv_debug_regs` | `riscv_debug_regs` |
//! | `noc_regs` | `noc0_regs` (NIU0) and `noc1_regs` (NIU1); the PCIe NIU's BAR0 copy by offset only |
//! | `noc_overlay_stream` | `noc_overlay`, stream 0 only: ttsim's stream stride (`0x1000`) is in its code, not in the JSON |
//! | `reset_unit` | `arc_apb` + `arc_apb_reset_unit` (the reset unit's base is an offset into ARC's APB space) |
//!
//! The crate's `arc::RESET_SCRATCH_BASE` (`0x8003_0400`) is `reset_unit.scratch_ram[0]`
//! (`0x8000_0000 + 0x3_0000 + 0x400`), tt-umd's `SCRATCH_RAM_0`; the reset unit's `scratch`
//! words at `+ 0x60` (tt-umd's `ARC_RESET_SCRATCH_OFFSET`) are a different register.
//!
//! JSON names with no blackhole-pac counterpart:
//!
//! | block or region | names | why |
//! |---|---|---|
//! | `riscv_debug_regs` | `perf_cnt_instrn_thread0`, `perf_cnt_instrn_thread1`, `perf_cnt_instrn_thread2`, `perf_cnt_tdma_unpack0`, `perf_cnt_tdma_unpack1`, `perf_cnt_tdma_unpack2`, `perf_cnt_fpu0`, `perf_cnt_fpu1`, `perf_cnt_fpu2`, `perf_cnt_l1_0`, `perf_cnt_l1_1`, `perf_cnt_l1_2`, `perf_cnt_all`, `dbg_l1_mem_reg0`, `dbg_l1_mem_reg1`, `dbg_l1_mem_reg2`, `cg_ctrl_hyst0`, `cg_ctrl_hyst1`, `cg_ctrl_hyst2`, `risc_dbg_cntl_0`, `risc_dbg_cntl_1`, `risc_dbg_status_0`, `risc_dbg_status_1`, `trisc_pc_buf_override`, `dbg_invalid_instrn`, `dbg_instrn_buf_ctrl0`, `dbg_instrn_buf_ctrl1`, `stoch_rnd_mask0`, `stoch_rnd_mask1`, `fpu_sticky_bits`, `eth_risc_prefetch_ctrl`, `eth_risc_prefetch_pc`, `perf_cnt_tdma_pack0`, `perf_cnt_tdma_pack1`, `perf_cnt_tdma_pack2`, `perf_cnt_out_l_instrn_thread`, `perf_cnt_out_h_instrn_thread`, `perf_cnt_out_l_tdma_unpack`, `perf_cnt_out_h_tdma_unpack`, `perf_cnt_out_l_tdma_pack`, `perf_cnt_out_h_tdma_pack`, `perf_cnt_out_l_dbg_l1`, `perf_cnt_out_h_dbg_l1`, `perf_cnt_out_l_fpu`, `perf_cnt_out_h_fpu`, `ecc_ctrl`, `ecc_status`, `watchdog_timer`, `wdt_cntl`, `wdt_status`, `timestamp_dump_cmd`, `timestamp_dump_cntl`, `timestamp_dump_status`, `timestamp_dump_buf0_start_addr`, `timestamp_dump_buf0_end_addr`, `timestamp_dump_buf1_start_addr`, `timestamp_dump_buf1_end_addr`, `perf_cnt_mux_ctrl`, `dbg_l1_readback_offset`, `lfsr_hit_mask`, `disable_reset`, `cg_ctrl_en`, `cg_kick` | marked `unsupported` (ttsim does not model them) and not in the crate: performance counters, debug, ECC, watchdog, timestamp and clock-gating registers this stack does not use |
//! | `riscv_debug_regs` | `dbg_bus_ctrl`, `tensix_creg_read`, `dbg_rd_data`, `dbg_array_rd_en`, `dbg_array_rd_cmd`, `dbg_feature_disable`, `dbg_array_rd_data`, `tensix_creg_rddata`, `dbg_instrn_buf_status`, `dest_cg_ctrl` | modelled by ttsim, not in the crate: debug bus, Tensix configuration readback, instruction-buffer status, destination clock gating |
//! | `noc_overlay_stream` | `remote_src`, `remote_dest_buf_space_available_update`, `remote_dest_buf_space_available` | the crate uses only registers 8 and 10 of a stream, as circular-buffer counters |
//! | `reset_unit` | `scratch` | the reset unit's `SCRATCH(n)` at `+ 0x60`; the crate's ARC words are `scratch_ram` (see above) |
//! | `riscv_tdma_regs` | `xmov_src_addr`, `xmov_dst_addr`, `xmov_size`, `xmov_direction`, `command_addr`, `status`, `packed_size`, `acc_packed_size`, `clk_gate_en`, `clk_gate_hyst`, `xmov_l1_base_addr`, `fifo_packed_tile_size`, `fifo_packed_tile_zeromask`, `fifo_packed_tile_status` | TDMA-RISC: not in the crate |
//! | `eth_risc_ctrl` | `ierisc_reset_pc`, `subordinate_ierisc_reset_pc`, `interrupt_mode` | Ethernet tiles: not in the crate |
//! | `eth_txq` | `control`, `cmd`, `status`, `transfer_start_addr`, `transfer_size_bytes`, `dest_addr`, `remote_reg_data`, `data_packet_accept_ahead`, `txpkt_cfg_sel_sw`, `txpkt_cfg_sel_hw` | Ethernet tiles: not in the crate |
//! | `eth_rxq` | `control` | Ethernet tiles: not in the crate |
//! | `eth_ctrl_regs` | `pcs_status`, `mac_rx_routing`, `mac_rx_addr_routing` | Ethernet tiles: not in the crate |
//! | `eth_txpkt_cfg` | `mac_da_lo`, `mac_da_hi` | Ethernet tiles: not in the crate |
//! | `tensix_pc_buf` | `tensix_sync`, `mop_sync`, `semaphore` | Tensix PC buffers and semaphores: not in the crate |
//! | `dbi` | `device_control_device_status` | the PCIe controller's DBI space: not in the crate |
//! | `address_map` | `riscv_tdma_regs`, `eth_risc_ctrl`, `tensix_mop_cfg`, `tensix_dst`, `tensix_regfile`, `tensix_inst`, `tensix_inst1`, `tensix_inst2`, `tensix_pc_buf`, `tensix_pc1_buf`, `tensix_pc2_buf`, `tensix_mailbox0`, `tensix_mailbox1`, `tensix_mailbox2`, `tensix_mailbox3`, `tensix_cfg`, `eth_txq`, `eth_rxq`, `eth_ctrl_regs`, `eth_txpkt_cfg`, `arc_apb_msi_fifo`, `pcie_dbi` | regions of which the crate describes nothing |
//! | `address_map` | `arc_apb_niu0`, `arc_apb_niu1` | ARC's own NIUs; the crate reaches NIU configuration through the PCIe tile's NIU in BAR0 |
//! | `address_map` | `pcie_niu` | ttsim's NoC-side address of the PCIe NIU; the crate has only its BAR0 view (`niu::PCIE_NIU0_BAR0`), which the JSON does not name |
//!
//! The `riscv_local_mem` region's base is checked, its limit is not: ttsim's 4 KiB there is the
//! window its host debug access reads (ttsim `src/libttsim.cpp`), while a core's local RAM size
//! is per core (`brisc_local_mem` etc., which are checked).
//!
//! Access directions where ttsim is narrower than the hardware; the crate keeps the hardware's:
//!
//! | register | ttsim | PAC | primary source |
//! |---|---|---|---|
//! | `noc_regs.noc_brcst_exclude` | `wo` | `RW` | tt-isa-documentation `BlackholeA0/NoC/MemoryMap.md`: the request initiator (`NIU_BASE + 0x00..0x43`) is "Read / write" |
//! | `noc_regs.noc_id_logical` | `ro` | `RW` | same page: the configuration words (`+ 0x100..0x17F`) are "Read / write", and firmware rewrites `NOC_ID_LOGICAL` with the translated coordinates |
//!
//! Crate items the JSON does not list, so not checked here: command-buffer
//! `NOC_AT_LEN_BE_1`, `NOC_L1_ACC_AT_INSTRN`, `NOC_SEC_CTRL`, `NOC_ENDPOINT_ID`, `CMD_BUF_AVAIL`,
//! `CMD_BUF_OVFL` and the `NOC_NODE_ID` copies of command buffers 1..3; the translation tables,
//! masks and `NIU_TRANS_COUNT_RTZ_*` configuration words; the 26 status counters other than the
//! six ttsim lists; streams 1..63 (the stride); `tensix::PC_SNAPSHOT`; the BAR0 addresses
//! (`arc::ARC_APB_BAR0`, `niu::PCIE_NIU0_BAR0`, `niu::PCIE_NIU1_BAR0`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use blackhole_pac::niu::{self, CmdBuf, CmdBufId, Counter, Niu, TransactionId};
use blackhole_pac::reg::{Access, R, RW, Reg, W};
use blackhole_pac::stream::{self, CbIndex, Streams};
use blackhole_pac::{arc, tensix};
use serde_json::Value;

/// The environment variable naming the JSON file.
const VAR: &str = "KOMOREBI_TTSIM_TILE_REGS";

/// What the test prints when [`VAR`] is unset.
const SKIP: &str = "skipped: set KOMOREBI_TTSIM_TILE_REGS to ttsim's data/bh/tile_regs.json \
                    (build-ttsim.sh's source tree) to check blackhole-pac against it";

/// JSON registers with no counterpart in the crate (`"*"`: the whole block); the table at the top
/// says why. `unsupported` entries count as unmapped unless checked.
const UNMAPPED_REGS: &[(&str, &str)] = &[
    ("riscv_debug_regs", "dbg_bus_ctrl"),
    ("riscv_debug_regs", "tensix_creg_read"),
    ("riscv_debug_regs", "dbg_rd_data"),
    ("riscv_debug_regs", "dbg_array_rd_en"),
    ("riscv_debug_regs", "dbg_array_rd_cmd"),
    ("riscv_debug_regs", "dbg_feature_disable"),
    ("riscv_debug_regs", "dbg_array_rd_data"),
    ("riscv_debug_regs", "tensix_creg_rddata"),
    ("riscv_debug_regs", "dbg_instrn_buf_status"),
    ("riscv_debug_regs", "dest_cg_ctrl"),
    ("noc_overlay_stream", "remote_src"),
    (
        "noc_overlay_stream",
        "remote_dest_buf_space_available_update",
    ),
    ("noc_overlay_stream", "remote_dest_buf_space_available"),
    ("reset_unit", "scratch"),
    ("riscv_tdma_regs", "*"),
    ("eth_risc_ctrl", "*"),
    ("eth_txq", "*"),
    ("eth_rxq", "*"),
    ("eth_ctrl_regs", "*"),
    ("eth_txpkt_cfg", "*"),
    ("tensix_pc_buf", "*"),
    ("dbi", "*"),
];

/// `address_map` regions with no counterpart in the crate; the table at the top says why.
const UNMAPPED_REGIONS: &[&str] = &[
    "riscv_tdma_regs",
    "eth_risc_ctrl",
    "tensix_mop_cfg",
    "tensix_dst",
    "tensix_regfile",
    "tensix_inst",
    "tensix_inst1",
    "tensix_inst2",
    "tensix_pc_buf",
    "tensix_pc1_buf",
    "tensix_pc2_buf",
    "tensix_mailbox0",
    "tensix_mailbox1",
    "tensix_mailbox2",
    "tensix_mailbox3",
    "tensix_cfg",
    "eth_txq",
    "eth_rxq",
    "eth_ctrl_regs",
    "eth_txpkt_cfg",
    "arc_apb_niu0",
    "arc_apb_niu1",
    "arc_apb_msi_fifo",
    "pcie_dbi",
    "pcie_niu",
];

/// `(block, name, ttsim, PAC)`: access directions ttsim models narrower than the hardware (the
/// table at the top gives the sources). Any other difference fails, and so does an entry here
/// that no longer differs.
const NARROWER_IN_TTSIM: &[(&str, &str, Dir, Dir)] = &[
    ("noc_regs", "noc_brcst_exclude", Dir::Wo, Dir::Rw),
    ("noc_regs", "noc_id_logical", Dir::Ro, Dir::Rw),
];

#[test]
fn pac_matches_ttsim_tile_regs() {
    let Some(path) = std::env::var_os(VAR) else {
        // Standard error: the test harness shows it, where it hides a passing test's output.
        eprintln!("{SKIP}");
        return;
    };
    if path.is_empty() {
        panic!("{VAR} is set but empty: give the path of ttsim's data/bh/tile_regs.json");
    }
    let path = Path::new(&path);
    match run(path) {
        Ok(summary) => println!("{summary}"),
        Err(e) => panic!("{e}"),
    }
}

/// Loads `path` and checks the crate against it: a one-line summary, or every problem.
fn run(path: &Path) -> Result<String, String> {
    let json = load(path).map_err(|e| format!("{VAR}={}: {e}", path.display()))?;
    let mut c = Check::new(&json);
    check_niu(&mut c);
    check_streams(&mut c);
    check_tensix(&mut c);
    check_arc(&mut c);
    c.coverage();
    if c.failures.is_empty() {
        Ok(format!(
            "{}: {} registers and {} regions checked ({} comparisons), all equal to blackhole-pac",
            path.display(),
            c.checked.len(),
            c.regions.len(),
            c.compared
        ))
    } else {
        Err(format!(
            "blackhole-pac disagrees with {} in {} places:\n  {}",
            path.display(),
            c.failures.len(),
            c.failures.join("\n  ")
        ))
    }
}

// ---- the JSON ------------------------------------------------------------------------------

/// An access direction: the JSON's `ro`/`wo`/`rw`, or a `Reg`'s `R`/`W`/`RW`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Dir {
    Ro,
    Wo,
    Rw,
}

impl Dir {
    /// As the JSON spells it.
    fn json(self) -> &'static str {
        match self {
            Dir::Ro => "ro",
            Dir::Wo => "wo",
            Dir::Rw => "rw",
        }
    }

    /// As the PAC's marker type is named.
    fn pac(self) -> &'static str {
        match self {
            Dir::Ro => "R",
            Dir::Wo => "W",
            Dir::Rw => "RW",
        }
    }
}

/// One `address_map` entry.
struct Region {
    base: u64,
    limit: u64,
}

/// One register of a `regs` block.
struct JsonReg {
    offset: u64,
    rw: Option<Dir>,
    reset: Option<u64>,
    /// `(array_size, array_stride)`.
    array: Option<(u64, u64)>,
    unsupported: bool,
}

/// The parsed file.
struct TileRegs {
    regions: BTreeMap<String, Region>,
    blocks: BTreeMap<String, BTreeMap<String, JsonReg>>,
}

fn load(path: &Path) -> Result<TileRegs, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| format!("not valid JSON: {e}"))?;
    parse(&json)
}

fn parse(json: &Value) -> Result<TileRegs, String> {
    let mut regions = BTreeMap::new();
    for (i, entry) in array(get(json, "address_map", "the top level")?, "address_map")?
        .iter()
        .enumerate()
    {
        let at = format!("address_map[{i}]");
        let name = string(get(entry, "name", &at)?, &at)?;
        let at = format!("{at} ({name})");
        let region = Region {
            base: hex(get(entry, "base", &at)?, &at)?,
            limit: hex(get(entry, "limit", &at)?, &at)?,
        };
        if region.limit < region.base {
            return Err(format!("{at}: limit below base"));
        }
        if regions.insert(name.to_owned(), region).is_some() {
            return Err(format!("{at}: the name appears twice"));
        }
    }
    let mut blocks = BTreeMap::new();
    for (i, block) in array(get(json, "regs", "the top level")?, "regs")?
        .iter()
        .enumerate()
    {
        let at = format!("regs[{i}]");
        let block_name = string(get(block, "name", &at)?, &at)?;
        let mut regs = BTreeMap::new();
        for (j, reg) in array(get(block, "regs", &at)?, &at)?.iter().enumerate() {
            let at = format!("regs[{i}].regs[{j}] ({block_name})");
            let name = string(get(reg, "name", &at)?, &at)?;
            let at = format!("{at} {name}");
            let rw = match get(reg, "rw", &at)? {
                Value::Null => None,
                Value::String(s) if s == "ro" => Some(Dir::Ro),
                Value::String(s) if s == "wo" => Some(Dir::Wo),
                Value::String(s) if s == "rw" => Some(Dir::Rw),
                other => return Err(format!("{at}: rw is {other}, not ro/wo/rw/null")),
            };
            let reset = match get(reg, "reset_value", &at)? {
                Value::Null => None,
                v => Some(hex(v, &at)?),
            };
            let array = match (reg.get("array_size"), reg.get("array_stride")) {
                (None, None) => None,
                (Some(size), Some(stride)) => Some((
                    size.as_u64()
                        .ok_or_else(|| format!("{at}: array_size {size} is not a count"))?,
                    hex(stride, &at)?,
                )),
                _ => {
                    return Err(format!(
                        "{at}: array_size and array_stride must come together"
                    ));
                }
            };
            let unsupported = match reg.get("unsupported") {
                None => false,
                Some(v) => v
                    .as_bool()
                    .ok_or_else(|| format!("{at}: unsupported is {v}, not a bool"))?,
            };
            let offset = hex(get(reg, "offset", &at)?, &at)?;
            let reg = JsonReg {
                offset,
                rw,
                reset,
                array,
                unsupported,
            };
            if regs.insert(name.to_owned(), reg).is_some() {
                return Err(format!("{at}: the name appears twice in the block"));
            }
        }
        if blocks.insert(block_name.to_owned(), regs).is_some() {
            return Err(format!("{at} ({block_name}): the block appears twice"));
        }
    }
    Ok(TileRegs { regions, blocks })
}

fn get<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or_else(|| format!("{at}: no `{key}`"))
}

fn array<'a>(v: &'a Value, at: &str) -> Result<&'a Vec<Value>, String> {
    v.as_array().ok_or_else(|| format!("{at}: not an array"))
}

fn string<'a>(v: &'a Value, at: &str) -> Result<&'a str, String> {
    v.as_str()
        .ok_or_else(|| format!("{at}: {v} is not a string"))
}

/// A `"0x..."` string.
fn hex(v: &Value, at: &str) -> Result<u64, String> {
    v.as_str()
        .and_then(|s| s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")))
        .and_then(|digits| u64::from_str_radix(digits, 16).ok())
        .ok_or_else(|| format!("{at}: {v} is not a 0x-prefixed 64-bit hex number"))
}

// ---- the comparisons -----------------------------------------------------------------------

/// The access direction a `Reg`'s marker type encodes.
trait Kind {
    const DIR: Dir;
}
impl Kind for R {
    const DIR: Dir = Dir::Ro;
}
impl Kind for W {
    const DIR: Dir = Dir::Wo;
}
impl Kind for RW {
    const DIR: Dir = Dir::Rw;
}

/// A register's address and access direction; only the address is taken, nothing is accessed.
fn probe<T: Copy, A: Access + Kind>(reg: Reg<T, A>) -> (usize, Dir) {
    (reg.as_ptr() as usize, A::DIR)
}

/// The comparisons made so far, what they touched, and every mismatch.
struct Check<'a> {
    json: &'a TileRegs,
    /// `(block, name)` of every JSON register a PAC item was compared with.
    checked: BTreeSet<(String, String)>,
    regions: BTreeSet<String>,
    narrower_seen: BTreeSet<(String, String)>,
    compared: usize,
    failures: Vec<String>,
}

impl<'a> Check<'a> {
    fn new(json: &'a TileRegs) -> Self {
        Self {
            json,
            checked: BTreeSet::new(),
            regions: BTreeSet::new(),
            narrower_seen: BTreeSet::new(),
            compared: 0,
            failures: Vec::new(),
        }
    }

    fn fail(&mut self, message: String) {
        self.failures.push(message);
    }

    /// `block.name`, which the test maps a PAC item to: missing from the JSON is a failure too
    /// (the mapping below must then change).
    fn reg(&mut self, block: &str, name: &str) -> Option<&'a JsonReg> {
        self.checked.insert((block.to_owned(), name.to_owned()));
        let reg = self.json.blocks.get(block).and_then(|b| b.get(name));
        if reg.is_none() {
            self.fail(format!(
                "{block}.{name}: the test maps a PAC item to it, but the JSON has no such register"
            ));
        }
        reg
    }

    fn region(&mut self, name: &str) -> Option<&'a Region> {
        self.regions.insert(name.to_owned());
        let region = self.json.regions.get(name);
        if region.is_none() {
            self.fail(format!(
                "address_map {name}: the test maps a PAC item to it, but the JSON has no such region"
            ));
        }
        region
    }

    fn compare(&mut self, what: &str, pac: &str, pac_value: u64, json_value: u64) {
        self.compared += 1;
        if pac_value != json_value {
            self.fail(format!(
                "{what}: PAC {pac} = {pac_value:#x}, JSON {json_value:#x}"
            ));
        }
    }

    /// The full address of `block.name` (element `index` of an array) placed at the sum of the
    /// `bases` regions' bases, against the PAC's `pac_value`.
    fn addr(
        &mut self,
        bases: &[&str],
        block: &str,
        name: &str,
        index: Option<u64>,
        pac: &str,
        pac_value: u64,
    ) {
        let Some(reg) = self.reg(block, name) else {
            return;
        };
        let mut base = 0;
        for b in bases {
            let Some(region) = self.region(b) else {
                return;
            };
            base += region.base;
        }
        let (element, label) = match (index, reg.array) {
            (None, None) => (0, format!("{block}.{name}")),
            (Some(i), Some((size, stride))) if i < size => {
                (i * stride, format!("{block}.{name}[{i}]"))
            }
            (Some(i), Some((size, _))) => {
                return self.fail(format!(
                    "{block}.{name}[{i}]: PAC {pac} is element {i}, the JSON array has {size}"
                ));
            }
            (Some(i), None) => {
                return self.fail(format!(
                    "{block}.{name}[{i}]: PAC {pac} is element {i}, the JSON register is no array"
                ));
            }
            (None, Some((size, _))) => {
                return self.fail(format!(
                    "{block}.{name}: PAC {pac} is one register, the JSON an array of {size}"
                ));
            }
        };
        let what = format!("{label} address ({})", bases.join(" + "));
        self.compare(&what, pac, pac_value, base + reg.offset + element);
    }

    /// The offset of `block.name` within its block, for a copy of the block at a base the JSON
    /// does not name.
    fn offset(&mut self, block: &str, name: &str, pac: &str, pac_value: u64) {
        if let Some(reg) = self.reg(block, name) {
            self.compare(
                &format!("{block}.{name} offset"),
                pac,
                pac_value,
                reg.offset,
            );
        }
    }

    fn array(&mut self, block: &str, name: &str, size: (&str, u64), stride: (&str, u64)) {
        let Some(reg) = self.reg(block, name) else {
            return;
        };
        match reg.array {
            Some((json_size, json_stride)) => {
                self.compare(
                    &format!("{block}.{name} array_size"),
                    size.0,
                    size.1,
                    json_size,
                );
                self.compare(
                    &format!("{block}.{name} array_stride"),
                    stride.0,
                    stride.1,
                    json_stride,
                );
            }
            None => self.fail(format!(
                "{block}.{name}: PAC {} = {} registers, the JSON register is no array",
                size.0, size.1
            )),
        }
    }

    fn access(&mut self, block: &str, name: &str, pac: &str, dir: Dir) {
        let Some(reg) = self.reg(block, name) else {
            return;
        };
        let Some(json) = reg.rw else {
            return self.fail(format!(
                "{block}.{name} access: PAC {pac} is {}, the JSON gives none",
                dir.pac()
            ));
        };
        self.compared += 1;
        if json == dir {
            return;
        }
        let narrower = NARROWER_IN_TTSIM
            .iter()
            .any(|&(b, n, t, p)| (b, n, t, p) == (block, name, json, dir));
        if narrower {
            self.narrower_seen
                .insert((block.to_owned(), name.to_owned()));
            return;
        }
        self.fail(format!(
            "{block}.{name} access: PAC {pac} is {}, JSON {}",
            dir.pac(),
            json.json()
        ));
    }

    fn reset(&mut self, block: &str, name: &str, pac: &str, pac_value: u64) {
        let Some(reg) = self.reg(block, name) else {
            return;
        };
        match reg.reset {
            Some(json) => {
                self.compare(&format!("{block}.{name} reset value"), pac, pac_value, json)
            }
            None => self.fail(format!(
                "{block}.{name} reset value: PAC {pac} = {pac_value:#x}, the JSON gives none"
            )),
        }
    }

    fn region_base(&mut self, name: &str, pac: &str, pac_value: u64) {
        if let Some(region) = self.region(name) {
            self.compare(
                &format!("address_map {name} base"),
                pac,
                pac_value,
                region.base,
            );
        }
    }

    fn region_size(&mut self, name: &str, pac: &str, pac_value: u64) {
        if let Some(region) = self.region(name) {
            let size = region.limit - region.base + 1;
            self.compare(&format!("address_map {name} size"), pac, pac_value, size);
        }
    }

    /// `[start, start + len)` lies inside region `name`.
    fn within(&mut self, name: &str, pac: &str, start: u64, len: u64) {
        if let Some(region) = self.region(name) {
            self.compared += 1;
            if start < region.base || start + len - 1 > region.limit {
                self.fail(format!(
                    "address_map {name}: PAC {pac} = {start:#x}..{:#x} is not inside JSON \
                     {:#x}..={:#x}",
                    start + len,
                    region.base,
                    region.limit
                ));
            }
        }
    }

    /// Every JSON register and region is either checked or listed as unmapped, and every listed
    /// one exists and is not checked.
    fn coverage(&mut self) {
        let listed = |block: &str, name: &str| {
            UNMAPPED_REGS
                .iter()
                .any(|&(b, n)| b == block && (n == name || n == "*"))
        };
        let json = self.json;
        for (block, regs) in &json.blocks {
            for (name, reg) in regs {
                let key = (block.clone(), name.clone());
                if self.checked.contains(&key) {
                    if listed(block, name) {
                        self.fail(format!("{block}.{name}: listed as unmapped but checked"));
                    }
                } else if !listed(block, name) && !reg.unsupported {
                    self.fail(format!(
                        "{block}.{name} (offset {:#x}): the JSON names it, the test neither checks \
                         it nor lists it as unmapped",
                        reg.offset
                    ));
                }
            }
        }
        for &(block, name) in UNMAPPED_REGS {
            let exists = json
                .blocks
                .get(block)
                .is_some_and(|regs| name == "*" || regs.contains_key(name));
            if !exists {
                self.fail(format!(
                    "{block}.{name}: listed as unmapped, but the JSON has no such register"
                ));
            }
        }
        for name in json.regions.keys() {
            let listed = UNMAPPED_REGIONS.contains(&name.as_str());
            match (self.regions.contains(name), listed) {
                (true, true) => self.fail(format!(
                    "address_map {name}: listed as unmapped but checked"
                )),
                (false, false) => self.fail(format!(
                    "address_map {name}: the JSON names it, the test neither checks it nor lists \
                     it as unmapped"
                )),
                _ => {}
            }
        }
        for name in UNMAPPED_REGIONS {
            if !json.regions.contains_key(*name) {
                self.fail(format!(
                    "address_map {name}: listed as unmapped, but the JSON has no such region"
                ));
            }
        }
        for &(block, name, json_dir, pac_dir) in NARROWER_IN_TTSIM {
            if !self
                .narrower_seen
                .contains(&(block.to_owned(), name.to_owned()))
            {
                self.fail(format!(
                    "{block}.{name}: listed as {} in ttsim and {} in the PAC, but that difference \
                     was not seen",
                    json_dir.json(),
                    pac_dir.pac()
                ));
            }
        }
    }
}

// ---- the mapping ---------------------------------------------------------------------------

/// A command-buffer register: JSON name, `niu::cmd` constant name and value, accessor name, and
/// the accessor itself.
type CmdReg = (
    &'static str,
    &'static str,
    usize,
    &'static str,
    fn(CmdBuf) -> (usize, Dir),
);

/// A [`CmdReg`] from the accessor and the `niu::cmd` constant; ttsim's name is `noc_` and the
/// accessor's.
macro_rules! cmd_reg {
    ($accessor:ident, $constant:ident) => {
        (
            concat!("noc_", stringify!($accessor)),
            stringify!($constant),
            niu::cmd::$constant,
            stringify!($accessor),
            |b| probe(b.$accessor()),
        )
    };
}

/// Every command-buffer register the JSON lists as an array over the four buffers.
const CMD_REGS: [CmdReg; 12] = [
    cmd_reg!(targ_addr_lo, NOC_TARG_ADDR_LO),
    cmd_reg!(targ_addr_mid, NOC_TARG_ADDR_MID),
    cmd_reg!(targ_addr_hi, NOC_TARG_ADDR_HI),
    cmd_reg!(ret_addr_lo, NOC_RET_ADDR_LO),
    cmd_reg!(ret_addr_mid, NOC_RET_ADDR_MID),
    cmd_reg!(ret_addr_hi, NOC_RET_ADDR_HI),
    cmd_reg!(packet_tag, NOC_PACKET_TAG),
    cmd_reg!(ctrl, NOC_CTRL),
    cmd_reg!(at_len_be, NOC_AT_LEN_BE),
    cmd_reg!(at_data, NOC_AT_DATA),
    cmd_reg!(brcst_exclude, NOC_BRCST_EXCLUDE),
    cmd_reg!(cmd_ctrl, NOC_CMD_CTRL),
];

/// The `NOC_CFG(n)` words the JSON lists: JSON name, the PAC's index expression and value.
const CFG_REGS: [(&str, &str, usize); 6] = {
    use niu::cfg::*;
    [
        ("niu_cfg_0", "cfg::NIU_CFG_0", NIU_CFG_0),
        ("router_cfg_0", "cfg::ROUTER_CFG_0", ROUTER_CFG_0),
        ("router_cfg_1", "cfg::ROUTER_CFG_1", ROUTER_CFG_1),
        // The crate names no ROUTER_CFG_2; its docs give ROUTER_CFG_n = ROUTER_CFG_0 + n.
        ("router_cfg_2", "cfg::ROUTER_CFG_0 + 2", ROUTER_CFG_0 + 2),
        ("router_cfg_3", "cfg::ROUTER_CFG_3", ROUTER_CFG_3),
        ("noc_id_logical", "cfg::NOC_ID_LOGICAL", NOC_ID_LOGICAL),
    ]
};

/// Every `Counter`, so that any the JSON lists is checked.
const COUNTERS: [Counter; 32] = {
    use Counter::*;
    [
        MstAtomicRespReceived,
        MstWrAckReceived,
        MstRdRespReceived,
        MstRdDataWordReceived,
        MstCmdAccepted,
        MstRdReqSent,
        MstNonpostedAtomicSent,
        MstPostedAtomicSent,
        MstNonpostedWrDataWordSent,
        MstPostedWrDataWordSent,
        MstNonpostedWrReqSent,
        MstPostedWrReqSent,
        MstNonpostedWrReqStarted,
        MstPostedWrReqStarted,
        MstRdReqStarted,
        MstNonpostedAtomicStarted,
        SlvAtomicRespSent,
        SlvWrAckSent,
        SlvRdRespSent,
        SlvRdDataWordSent,
        SlvReqAccepted,
        SlvRdReqReceived,
        SlvNonpostedAtomicReceived,
        SlvPostedAtomicReceived,
        SlvNonpostedWrDataWordReceived,
        SlvPostedWrDataWordReceived,
        SlvNonpostedWrReqReceived,
        SlvPostedWrReqReceived,
        SlvNonpostedWrReqStarted,
        SlvPostedWrReqStarted,
        TransCountRtzNum,
        TransCountRtzSource,
    ]
};

/// Stops compiling when `Counter` gains a variant, so that [`COUNTERS`] is updated with it.
fn counter_listed(c: Counter) {
    use Counter::*;
    match c {
        MstAtomicRespReceived
        | MstWrAckReceived
        | MstRdRespReceived
        | MstRdDataWordReceived
        | MstCmdAccepted
        | MstRdReqSent
        | MstNonpostedAtomicSent
        | MstPostedAtomicSent
        | MstNonpostedWrDataWordSent
        | MstPostedWrDataWordSent
        | MstNonpostedWrReqSent
        | MstPostedWrReqSent
        | MstNonpostedWrReqStarted
        | MstPostedWrReqStarted
        | MstRdReqStarted
        | MstNonpostedAtomicStarted
        | SlvAtomicRespSent
        | SlvWrAckSent
        | SlvRdRespSent
        | SlvRdDataWordSent
        | SlvReqAccepted
        | SlvRdReqReceived
        | SlvNonpostedAtomicReceived
        | SlvPostedAtomicReceived
        | SlvNonpostedWrDataWordReceived
        | SlvPostedWrDataWordReceived
        | SlvNonpostedWrReqReceived
        | SlvPostedWrReqReceived
        | SlvNonpostedWrReqStarted
        | SlvPostedWrReqStarted
        | TransCountRtzNum
        | TransCountRtzSource => {}
    }
}

/// ttsim's name of a counter: `niu_` and the variant in snake case (`MstWrAckReceived` ->
/// `niu_mst_wr_ack_received`), as in the ISA's `NIU_MST_WR_ACK_RECEIVED`.
fn counter_json_name(c: Counter) -> String {
    let mut name = String::from("niu");
    for ch in format!("{c:?}").chars() {
        if ch.is_ascii_uppercase() {
            name.push('_');
        }
        name.push(ch.to_ascii_lowercase());
    }
    name
}

const CMD_BUFS: [CmdBufId; 4] = [
    CmdBufId::Buf0,
    CmdBufId::Buf1,
    CmdBufId::Buf2,
    CmdBufId::Buf3,
];

fn check_niu(c: &mut Check) {
    const B: &str = "noc_regs";
    let mut buf = vec![0u32; niu::NIU_BLOCK_BYTES / 4];
    // SAFETY: `buf` covers NIU_BLOCK_BYTES and outlives `block`; only addresses are taken from
    // the block's registers, none is read or written.
    let block = unsafe { Niu::from_ptr(buf.as_mut_ptr().cast()) };
    let origin = block.as_ptr() as usize;
    let bases = [
        ("noc0_regs", "NIU0_BASE", niu::NIU0_BASE),
        ("noc1_regs", "NIU1_BASE", niu::NIU1_BASE),
    ];
    let json: &TileRegs = c.json;
    if let (Some(n0), Some(n1)) = (json.regions.get("noc0_regs"), json.regions.get("noc1_regs")) {
        let distance = n1.base.wrapping_sub(n0.base);
        c.compare(
            "address_map noc1_regs base - noc0_regs base",
            "NOC_INSTANCE_OFFSET",
            niu::NOC_INSTANCE_OFFSET as u64,
            distance,
        );
    }
    for (region, base_name, base) in bases {
        c.region_base(region, base_name, base as u64);
        c.within(
            region,
            &format!("{base_name} + NIU_BLOCK_BYTES"),
            base as u64,
            niu::NIU_BLOCK_BYTES as u64,
        );
        let at = |addr: usize| (base + addr - origin) as u64;

        for (json, constant, offset, accessor, get) in CMD_REGS {
            for id in CMD_BUFS {
                let i = id as usize;
                c.addr(
                    &[region],
                    B,
                    json,
                    Some(i as u64),
                    &format!("{base_name} + {i} * NOC_CMD_BUF_OFFSET + cmd::{constant}"),
                    (base + i * niu::NOC_CMD_BUF_OFFSET + offset) as u64,
                );
                c.addr(
                    &[region],
                    B,
                    json,
                    Some(i as u64),
                    &format!("{base_name} + Niu::cmd_buf({id:?}).{accessor}()"),
                    at(get(block.cmd_buf(id)).0),
                );
            }
        }

        // Once per NIU: only command buffer 0's copy of NOC_NODE_ID is in the JSON.
        c.addr(
            &[region],
            B,
            "noc_node_id",
            None,
            &format!("{base_name} + cmd::NOC_NODE_ID"),
            (base + niu::cmd::NOC_NODE_ID) as u64,
        );
        c.addr(
            &[region],
            B,
            "noc_node_id",
            None,
            &format!("{base_name} + Niu::cmd_buf(Buf0).node_id()"),
            at(probe(block.cmd_buf(CmdBufId::Buf0).node_id()).0),
        );
        c.addr(
            &[region],
            B,
            "noc_clear_outstanding_req_cnt",
            None,
            &format!("{base_name} + NOC_CLEAR_OUTSTANDING_REQ_CNT"),
            (base + niu::NOC_CLEAR_OUTSTANDING_REQ_CNT) as u64,
        );
        c.addr(
            &[region],
            B,
            "noc_clear_outstanding_req_cnt",
            None,
            &format!("{base_name} + Niu::clear_outstanding_req_cnt()"),
            at(probe(block.clear_outstanding_req_cnt()).0),
        );

        for (json, index_name, n) in CFG_REGS {
            c.addr(
                &[region],
                B,
                json,
                None,
                &format!("{base_name} + NOC_CFG_OFFSET + 4 * {index_name}"),
                (base + niu::NOC_CFG_OFFSET + 4 * n) as u64,
            );
            c.addr(
                &[region],
                B,
                json,
                None,
                &format!("{base_name} + Niu::cfg({index_name})"),
                at(probe(block.cfg(n)).0),
            );
        }
        c.addr(
            &[region],
            B,
            "niu_cfg_0",
            None,
            &format!("{base_name} + Niu::niu_cfg_0()"),
            at(probe(block.niu_cfg_0()).0),
        );

        for counter in COUNTERS {
            counter_listed(counter);
            let name = counter_json_name(counter);
            if !json.blocks.get(B).is_some_and(|b| b.contains_key(&name)) {
                continue; // ttsim does not model this counter
            }
            c.addr(
                &[region],
                B,
                &name,
                None,
                &format!("{base_name} + NOC_STATUS_OFFSET + 4 * Counter::{counter:?}"),
                (base + niu::NOC_STATUS_OFFSET + 4 * counter as usize) as u64,
            );
            c.addr(
                &[region],
                B,
                &name,
                None,
                &format!("{base_name} + Niu::status(Counter::{counter:?})"),
                at(probe(block.status(counter)).0),
            );
        }

        for id in 0..niu::TRANSACTION_IDS {
            let tid = TransactionId::new(id).expect("id < TRANSACTION_IDS");
            let i = id as usize;
            c.addr(
                &[region],
                B,
                "niu_mst_reqs_outstanding_id",
                Some(id.into()),
                &format!("{base_name} + NOC_STATUS_OFFSET + 4 * (REQS_OUTSTANDING_ID_BASE + {id})"),
                (base + niu::NOC_STATUS_OFFSET + 4 * (niu::REQS_OUTSTANDING_ID_BASE + i)) as u64,
            );
            c.addr(
                &[region],
                B,
                "niu_mst_reqs_outstanding_id",
                Some(id.into()),
                &format!("{base_name} + Niu::reqs_outstanding({id})"),
                at(probe(block.reqs_outstanding(tid)).0),
            );
            c.addr(
                &[region],
                B,
                "niu_mst_write_reqs_outgoing_id",
                Some(id.into()),
                &format!(
                    "{base_name} + NOC_STATUS_OFFSET + 4 * (WRITE_REQS_OUTGOING_ID_BASE + {id})"
                ),
                (base + niu::NOC_STATUS_OFFSET + 4 * (niu::WRITE_REQS_OUTGOING_ID_BASE + i)) as u64,
            );
            c.addr(
                &[region],
                B,
                "niu_mst_write_reqs_outgoing_id",
                Some(id.into()),
                &format!("{base_name} + Niu::write_reqs_outgoing({id})"),
                at(probe(block.write_reqs_outgoing(tid)).0),
            );
        }
    }

    // Array shapes and access directions: the same for both NIUs.
    let b0 = block.cmd_buf(CmdBufId::Buf0);
    let b1 = block.cmd_buf(CmdBufId::Buf1);
    for (json, _, _, accessor, get) in CMD_REGS {
        c.array(
            B,
            json,
            ("NOC_CMD_BUFS", niu::NOC_CMD_BUFS as u64),
            (
                &format!("Niu::cmd_buf(Buf1).{accessor}() - Niu::cmd_buf(Buf0).{accessor}()"),
                (get(b1).0 - get(b0).0) as u64,
            ),
        );
        c.access(B, json, &format!("CmdBuf::{accessor}"), get(b0).1);
    }
    // An idle command buffer reads "ready", and every command buffer is idle out of reset.
    c.reset(
        B,
        "noc_cmd_ctrl",
        "NOC_CTRL_STATUS_READY",
        niu::NOC_CTRL_STATUS_READY.into(),
    );
    c.access(B, "noc_node_id", "CmdBuf::node_id", probe(b0.node_id()).1);
    c.access(
        B,
        "noc_clear_outstanding_req_cnt",
        "Niu::clear_outstanding_req_cnt",
        probe(block.clear_outstanding_req_cnt()).1,
    );
    c.access(B, "niu_cfg_0", "Niu::niu_cfg_0", probe(block.niu_cfg_0()).1);
    for (name, _, n) in CFG_REGS {
        c.access(B, name, "Niu::cfg", probe(block.cfg(n)).1);
    }
    for counter in COUNTERS {
        let name = counter_json_name(counter);
        if json.blocks.get(B).is_some_and(|b| b.contains_key(&name)) {
            c.access(B, &name, "Niu::status", probe(block.status(counter)).1);
        }
    }
    let t0 = TransactionId::new(0).expect("0 < 16");
    let t1 = TransactionId::new(1).expect("1 < 16");
    c.array(
        B,
        "niu_mst_reqs_outstanding_id",
        ("TRANSACTION_IDS", niu::TRANSACTION_IDS.into()),
        (
            "Niu::reqs_outstanding(1) - Niu::reqs_outstanding(0)",
            (probe(block.reqs_outstanding(t1)).0 - probe(block.reqs_outstanding(t0)).0) as u64,
        ),
    );
    c.access(
        B,
        "niu_mst_reqs_outstanding_id",
        "Niu::reqs_outstanding",
        probe(block.reqs_outstanding(t0)).1,
    );
    c.array(
        B,
        "niu_mst_write_reqs_outgoing_id",
        ("TRANSACTION_IDS", niu::TRANSACTION_IDS.into()),
        (
            "Niu::write_reqs_outgoing(1) - Niu::write_reqs_outgoing(0)",
            (probe(block.write_reqs_outgoing(t1)).0 - probe(block.write_reqs_outgoing(t0)).0)
                as u64,
        ),
    );
    c.access(
        B,
        "niu_mst_write_reqs_outgoing_id",
        "Niu::write_reqs_outgoing",
        probe(block.write_reqs_outgoing(t0)).1,
    );

    // The PCIe tile's NIU in BAR0: the JSON does not name that base, so offsets only.
    c.offset(
        B,
        "niu_cfg_0",
        "arc::PCIE_NIU_CFG_0_BAR0 - niu::PCIE_NIU0_BAR0",
        (arc::PCIE_NIU_CFG_0_BAR0 - niu::PCIE_NIU0_BAR0).into(),
    );
    c.offset(
        B,
        "noc_node_id",
        "arc::PCIE_NOC_NODE_ID_BAR0 - niu::PCIE_NIU0_BAR0",
        (arc::PCIE_NOC_NODE_ID_BAR0 - niu::PCIE_NIU0_BAR0).into(),
    );
}

fn check_streams(c: &mut Check) {
    const B: &str = "noc_overlay_stream";
    let mut buf = vec![0u32; stream::STREAM_BLOCK_BYTES / 4];
    let origin = buf.as_mut_ptr();
    // SAFETY: `buf` covers STREAM_BLOCK_BYTES and outlives `streams`; only addresses are taken.
    let streams = unsafe { Streams::from_ptr(origin.cast()) };
    let origin = origin as usize;
    c.region_base("noc_overlay", "STREAM_BASE", stream::STREAM_BASE as u64);
    // Circular buffer 0 uses stream OPERAND_START_STREAM = 0, the stream the JSON describes.
    let cb0 = CbIndex::new(0).expect("0 < 64");
    // (JSON name, register index name and value, accessor name, accessor's address and access)
    type StreamReg = (
        &'static str,
        &'static str,
        usize,
        &'static str,
        (usize, Dir),
    );
    let regs: [StreamReg; 2] = [
        (
            "remote_dest_buf_size",
            "TILES_RECEIVED_REG",
            stream::TILES_RECEIVED_REG,
            "tiles_received",
            probe(streams.tiles_received(cb0)),
        ),
        (
            "remote_dest_buf_start",
            "TILES_ACKED_REG",
            stream::TILES_ACKED_REG,
            "tiles_acked",
            probe(streams.tiles_acked(cb0)),
        ),
    ];
    for (json, index_name, index, accessor, (addr, dir)) in regs {
        c.addr(
            &["noc_overlay"],
            B,
            json,
            None,
            &format!("stream_reg_addr(0, {index_name})"),
            stream::stream_reg_addr(0, index) as u64,
        );
        c.addr(
            &["noc_overlay"],
            B,
            json,
            None,
            &format!("STREAM_BASE + Streams::{accessor}(CB 0)"),
            (stream::STREAM_BASE + addr - origin) as u64,
        );
        c.access(B, json, &format!("Streams::{accessor}"), dir);
    }
}

fn check_tensix(c: &mut Check) {
    const B: &str = "riscv_debug_regs";
    let at = &["riscv_debug_regs"];
    let soft_reset_all = {
        let mut r = tensix::SoftReset::default();
        r.set_brisc(true);
        r.set_trisc0(true);
        r.set_trisc1(true);
        r.set_trisc2(true);
        r.set_ncrisc(true);
        r
    };
    let plain: [(&str, &str, u32); 10] = [
        ("soft_reset_0", "SOFT_RESET_ADDR", tensix::SOFT_RESET_ADDR),
        ("wall_clock_0", "WALL_CLOCK_L", tensix::WALL_CLOCK_L),
        (
            "wall_clock_1",
            "WALL_CLOCK_H_LIVE",
            tensix::WALL_CLOCK_H_LIVE,
        ),
        (
            "wall_clock_1_at",
            "WALL_CLOCK_H_LATCHED",
            tensix::WALL_CLOCK_H_LATCHED,
        ),
        (
            "trisc0_reset_pc",
            "TRISC_RESET_PC_REGS[0]",
            tensix::TRISC_RESET_PC_REGS[0],
        ),
        (
            "trisc1_reset_pc",
            "TRISC_RESET_PC_REGS[1]",
            tensix::TRISC_RESET_PC_REGS[1],
        ),
        (
            "trisc2_reset_pc",
            "TRISC_RESET_PC_REGS[2]",
            tensix::TRISC_RESET_PC_REGS[2],
        ),
        (
            "trisc_reset_pc_override",
            "TRISC_RESET_PC_OVERRIDE",
            tensix::TRISC_RESET_PC_OVERRIDE,
        ),
        (
            "ncrisc_reset_pc",
            "NCRISC_RESET_PC_REG",
            tensix::NCRISC_RESET_PC_REG,
        ),
        (
            "ncrisc_reset_pc_override",
            "NCRISC_RESET_PC_OVERRIDE",
            tensix::NCRISC_RESET_PC_OVERRIDE,
        ),
    ];
    for (json, pac, value) in plain {
        c.addr(at, B, json, None, &format!("tensix::{pac}"), value.into());
    }
    // Out of reset every baby core is held in soft reset.
    c.reset(
        B,
        "soft_reset_0",
        "SOFT_RESET_ALL_CORES",
        tensix::SOFT_RESET_ALL_CORES.into(),
    );
    c.reset(
        B,
        "soft_reset_0",
        "SoftReset with brisc, trisc0, trisc1, trisc2, ncrisc set",
        soft_reset_all.0.into(),
    );
    c.addr(
        &["noc0_regs"],
        "noc_regs",
        "noc_id_logical",
        None,
        "tensix::NOC_ID_LOGICAL_ADDR",
        tensix::NOC_ID_LOGICAL_ADDR.into(),
    );

    c.region_base(
        "riscv_local_mem",
        "tensix::LOCAL_MEM_BASE",
        tensix::LOCAL_MEM_BASE.into(),
    );
    for region in ["brisc_local_mem", "ncrisc_local_mem"] {
        c.region_size(
            region,
            "tensix::LOCAL_MEM_DM_SIZE",
            tensix::LOCAL_MEM_DM_SIZE.into(),
        );
    }
    for region in ["trisc0_local_mem", "trisc1_local_mem", "trisc2_local_mem"] {
        c.region_size(
            region,
            "tensix::LOCAL_MEM_TRISC_SIZE",
            tensix::LOCAL_MEM_TRISC_SIZE.into(),
        );
    }
}

fn check_arc(c: &mut Check) {
    const B: &str = "reset_unit";
    // The reset unit's base is an offset into ARC's APB space (ttsim `src/tile.cpp`,
    // `arc_apb_rd32`).
    let at = &["arc_apb", "arc_apb_reset_unit"];
    c.region_base("arc_apb", "arc::ARC_APB_NOC_BASE", arc::ARC_APB_NOC_BASE);
    c.region_base("arc_csm", "arc::ARC_CSM_BASE", arc::ARC_CSM_BASE.into());
    c.region_size("arc_csm", "arc::ARC_CSM_BYTES", arc::ARC_CSM_BYTES.into());
    let words = [
        (0, "arc::RESET_SCRATCH_BASE", arc::RESET_SCRATCH_BASE),
        (2, "arc::SCRATCH_RAM_2", arc::SCRATCH_RAM_2),
        (11, "arc::msg::SCRATCH_RAM_11", arc::msg::SCRATCH_RAM_11),
        (12, "arc::SCRATCH_RAM_12", arc::SCRATCH_RAM_12),
        (13, "arc::SCRATCH_RAM_13", arc::SCRATCH_RAM_13),
    ];
    for (index, pac, value) in words {
        c.addr(at, B, "scratch_ram", Some(index), pac, value);
    }
    // The message queues' interrupt (tt-umd `ARC_FW_INT_ADDR`), which the open rings.
    c.addr(
        at,
        B,
        "arc_misc_cntl",
        None,
        "arc::msg::ARC_MISC_CNTL",
        arc::msg::ARC_MISC_CNTL,
    );
}

// ---- the test of the test ------------------------------------------------------------------

/// A file the test cannot read fails naming the path and the problem.
#[test]
fn unreadable_file_names_the_path() {
    let path = Path::new("/nonexistent/komorebi/tile_regs.json");
    let e = run(path).expect_err("no such file");
    assert!(
        e.contains(VAR)
            && e.contains("/nonexistent/komorebi/tile_regs.json")
            && e.contains("cannot read"),
        "{e}"
    );
}

/// Malformed JSON fails naming the entry and the problem.
#[test]
fn malformed_entries_name_the_problem() {
    let e = parse(&serde_json::json!({ "regs": [] }))
        .err()
        .expect("no address_map");
    assert!(e.contains("address_map"), "{e}");
    let e = parse(&serde_json::json!({
        "address_map": [{ "base": "0xFFB20000", "limit": "0xFFB2FFFF", "name": "noc0_regs" }],
        "regs": [{ "name": "noc_regs", "regs": [
            { "offset": "twelve", "rw": "rw", "reset_value": null, "name": "noc_ctrl" }
        ]}]
    }))
    .err()
    .expect("bad offset");
    assert!(
        e.contains("noc_regs") && e.contains("noc_ctrl") && e.contains("twelve"),
        "{e}"
    );
}

/// A PAC value that differs from the JSON fails naming the register, the PAC value and the JSON
/// value (here the JSON is the one that is off, which the comparison cannot tell apart).
#[test]
fn a_mismatch_names_register_and_both_values() {
    let json = parse(&serde_json::json!({
        "address_map": [{ "base": "0xFFB20000", "limit": "0xFFB2FFFF", "name": "noc0_regs" }],
        "regs": [{ "name": "noc_regs", "regs": [
            { "offset": "0x1C", "rw": "ro", "reset_value": null, "name": "noc_ctrl",
              "array_size": 4, "array_stride": "0x800" }
        ]}]
    }))
    .expect("valid");
    let mut c = Check::new(&json);
    c.addr(
        &["noc0_regs"],
        "noc_regs",
        "noc_ctrl",
        Some(1),
        "NIU0_BASE + 1 * NOC_CMD_BUF_OFFSET + cmd::NOC_CTRL",
        (niu::NIU0_BASE + niu::NOC_CMD_BUF_OFFSET + niu::cmd::NOC_CTRL + 4) as u64,
    );
    c.access("noc_regs", "noc_ctrl", "CmdBuf::ctrl", Dir::Rw);
    assert_eq!(c.failures.len(), 2, "{:?}", c.failures);
    assert_eq!(
        c.failures[0],
        "noc_regs.noc_ctrl[1] address (noc0_regs): PAC NIU0_BASE + 1 * NOC_CMD_BUF_OFFSET + \
         cmd::NOC_CTRL = 0xffb20820, JSON 0xffb2081c"
    );
    assert_eq!(
        c.failures[1],
        "noc_regs.noc_ctrl access: PAC CmdBuf::ctrl is RW, JSON ro"
    );
}
