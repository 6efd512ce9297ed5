//! Firmware cores (`Sim::spawn_firmware`) on hand-assembled programs: a write programmed
//! through the NIU registers moves the same bytes in the same time as the native `SimNoc`'s
//! (one engine, two fronts), and an access the model does not know stops the core with its
//! tile, pc and address, never a panic. A read or unicast write issued during a linked run
//! hangs the NIU, as the ISA says, and the run reports it.

mod common;
mod enc;

use common::*;
use enc::*;
use komorebi_hal::noc::{NocMulticast, WriteMode};
use komorebi_hal::{ControlBlock, NocAddr, Role};
use komorebi_sim::*;

/// `li rd, value` as `lui` + `addi`.
fn li(rd: u32, value: u32) -> [u32; 2] {
    let lo = ((value & 0xFFF) as i32) << 20 >> 20;
    let hi = value.wrapping_sub(lo as u32) >> 12;
    [lui(rd, hi), addi(rd, rd, lo)]
}

const T0: u32 = 5;
const T1: u32 = 6;
const T2: u32 = 7;
const T3: u32 = 28;

/// Loads `words` into L1 of `tile` at `addr`.
fn load(sim: &mut Sim, tile: (u8, u8), addr: u32, words: &[u32]) {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    sim.write_l1(tile, addr, &bytes).unwrap();
}

/// `li T0, base`, then each `(offset, value)` stored at `T0 + offset` through T1: a command
/// buffer programmed register by register.
fn store_words(p: &mut Vec<u32>, base: u32, words: &[(i32, u32)]) {
    p.extend(li(T0, base));
    for &(offset, value) in words {
        p.extend(li(T1, value));
        p.push(sw(T1, T0, offset));
    }
}

/// Starts `tile`'s reader on `program` (loaded at 0) and runs the chip until the core stops;
/// asserts it stopped at the program's last instruction, its `ebreak`, and nowhere else.
fn run_to_ebreak(sim: &mut Sim, tile: (u8, u8), program: &[u32]) {
    sim.spawn_firmware(tile, Role::Reader).unwrap();
    sim.run(1_000_000);
    let faults = sim.core_faults();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(
        faults[0].pc,
        4 * (program.len() as u32 - 1),
        "stopped at its ebreak"
    );
}
const SRC: u32 = 0x2_0000;
const DST: u32 = 0x3_0000;
const LEN: u32 = 256;
const WRITE_ACKED_UNICAST: u32 = 0x2 | 1 << 4 | 1 << 7 | 1 << 13;

#[test]
fn a_write_through_the_niu_registers_is_the_native_noc_s_write() {
    let (from, to) = ((1, 2), (2, 3));
    let data: Vec<u8> = (0..LEN).map(|i| (i * 7 + 1) as u8).collect();

    // The firmware: program command buffer 0 of NIU0, note the cycle, send, poll the ack
    // counter, note the cycle, stop. Coordinates are translated (translation is on by default;
    // columns 1 and 2 are the first two enabled columns, so they translate to themselves).
    let mut sim = Sim::new(SimConfig::default());
    let mut p = Vec::new();
    store_words(
        &mut p,
        0xFFB2_0000,
        &[
            (0x00, SRC),
            (0x08, 1 | 2 << 6),
            (0x0C, DST),
            (0x14, 2 | 3 << 6),
            (0x20, LEN),
            (0x1C, WRITE_ACKED_UNICAST),
        ],
    );
    p.push(csrrs(T2, CYCLE, 0));
    p.push(sw(T2, 0, 0x100));
    p.push(addi(T1, 0, 1));
    p.push(sw(T1, T0, 0x40));
    p.push(lw(T3, T0, 0x204)); // NIU_MST_WR_ACK_RECEIVED
    p.push(beq(T3, 0, -4));
    p.push(csrrs(T2, CYCLE, 0));
    p.push(sw(T2, 0, 0x104));
    p.push(EBREAK);
    load(&mut sim, from, 0, &p);
    sim.write_l1(from, SRC, &data).unwrap();
    run_to_ebreak(&mut sim, from, &p);
    let mut got = vec![0; LEN as usize];
    sim.read_l1(to, DST, &mut got).unwrap();
    assert_eq!(got, data, "the bytes landed");
    assert_eq!(sim.niu(from, 0).unwrap().acks_received, 1);
    let fw = (sim.read_l1_u32(from, 0x104).unwrap() - sim.read_l1_u32(from, 0x100).unwrap()) as u64;

    // The native kernel: the same write through `SimNoc`, timed the same way.
    let mut sim = Sim::new(SimConfig::default());
    set_limit(&mut sim, from, 1 << 40);
    sim.write_l1(from, SRC, &data).unwrap();
    let out = log();
    let o = out.clone();
    sim.spawn(from, Role::Reader, move |env| async move {
        let (mut noc, mut ctrl, mut pause) = (env.noc().unwrap(), env.ctrl(), env.pause());
        let t0 = ctrl.now();
        let dst = NocAddr::new(komorebi_hal::Xy::new(2, 3).unwrap(), DST as u64).unwrap();
        noc.write(
            komorebi_hal::L1Addr::new(SRC).unwrap(),
            dst,
            LEN,
            WriteMode::ORDERED,
        )
        .unwrap();
        let mut c = ctrl.clone();
        wait(&mut c, &mut pause, |_| {
            noc.writes_acked().map_err(|e| e.to_string())
        })
        .await
        .unwrap();
        o.borrow_mut().push(ctrl.now() - t0);
    })
    .unwrap();
    sim.run(u64::MAX);
    let native = out.borrow()[0];
    // The native kernel is woken at the ack. The firmware core runs in 32-cycle slices and sees
    // the world's events (the ack among them) at that grain (`core.rs`, "Time"), then polls the
    // counter every 7 + 1 cycles (a register load, a predicted branch) and leaves the loop
    // through a mispredicted branch (4): it may see the ack up to 32 + 8 + 4 cycles later.
    println!("write of {LEN} bytes, issue to ack: firmware {fw} cycles, native {native}");
    assert!(
        fw.abs_diff(native) <= 32 + 8 + 4,
        "firmware {fw} cycles, native {native}"
    );
}

#[test]
fn an_access_the_model_does_not_know_stops_the_core_with_its_pc_and_address() {
    let tile = (3, 4);
    for (program, addr, what) in [
        // lui t0, 0xFFB90; lw t1, 0(t0): nothing answers at 0xFFB9_0000.
        (
            vec![lui(T0, 0xFFB90), lw(T1, T0, 0)],
            0xFFB9_0000u32,
            "load: no register at this address",
        ),
        // A half-word load from NIU0's NOC_NODE_ID.
        (
            vec![lui(T0, 0xFFB20), lh(T1, T0, 0x44)],
            0xFFB2_0044,
            "load: registers take 32-bit accesses only",
        ),
        // A store to a status counter.
        (
            vec![lui(T0, 0xFFB20), sw(0, T0, 0x204)],
            0xFFB2_0204,
            "store: Status { noc: 0, index: 1 } is not writable in the model",
        ),
    ] {
        let mut sim = Sim::new(SimConfig::default());
        load(&mut sim, tile, 0x1_2000, &program);
        sim.spawn_firmware(tile, Role::Writer).unwrap();
        sim.run(100_000);
        let f = sim.core_faults();
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].tile, f[0].kernel, f[0].pc, f[0].addr),
            (tile, Role::Writer, 0x1_2004, Some(addr))
        );
        assert_eq!(f[0].what, what);
    }
    // An illegal instruction: the word and the pc.
    let mut sim = Sim::new(SimConfig::default());
    load(&mut sim, tile, 0x6000, &[addi(0, 0, 0), 0xFFFF_FFFF]);
    sim.spawn_firmware(tile, Role::Compute).unwrap();
    sim.run(100_000);
    let f = sim.core_faults();
    assert_eq!((f[0].pc, f[0].addr), (0x6004, None));
    assert_eq!(f[0].what, "illegal instruction 0xffffffff");
    assert!(
        f[0].to_string()
            .contains("Compute core of tile (3, 4) stopped at pc 0x6004")
    );
}

/// Stores a word to L1 0x4A10 and sends it to tile (2, 3) through NIU0 (16 bytes), with or
/// without reading the word back first; returns what landed there.
fn publish(late: bool, read_back: bool) -> u32 {
    let (from, to) = ((1, 2), (2, 3));
    let mut sim = Sim::new(SimConfig {
        late_core_stores: late,
        ..SimConfig::default()
    });
    let mut p = Vec::new();
    p.extend(li(T1, 0x1234_5678));
    p.extend(li(T2, 0x4A10));
    p.push(sw(T1, T2, 0));
    if read_back {
        // The ISA's rule: load the word back and consume the value before the NIU command.
        p.push(lw(T3, T2, 0));
        p.push(addi(0, T3, 0));
    }
    store_words(
        &mut p,
        0xFFB2_0000,
        &[
            (0x00, 0x4A10),
            (0x08, 1 | 2 << 6),
            (0x0C, 0x4A40),
            (0x14, 2 | 3 << 6),
            (0x20, 16),
            (0x1C, WRITE_ACKED_UNICAST),
        ],
    );
    p.push(addi(T1, 0, 1));
    p.push(sw(T1, T0, 0x40));
    p.push(lw(T3, T0, 0x204));
    p.push(beq(T3, 0, -4));
    p.push(EBREAK);
    load(&mut sim, from, 0, &p);
    sim.spawn_firmware(from, Role::Reader).unwrap();
    sim.run(1_000_000);
    assert_eq!(sim.core_faults().len(), 1, "stopped at its ebreak");
    sim.read_l1_u32(to, 0x4A40).unwrap()
}

#[test]
fn a_word_published_without_its_read_back_can_go_out_stale() {
    // Stores land at once: the word goes out whichever way.
    assert_eq!(publish(false, false), 0x1234_5678);
    // Held in the store queue as long as the hardware may: without the read-back the NIU reads
    // the old word (the hazard of tt-isa-documentation `BabyRISCV/MemoryOrdering.md`;
    // docs/blackhole.md, "Hardware bugs"); the read-back lands it first.
    assert_eq!(
        publish(true, false),
        0,
        "the NIU read L1 before the store landed"
    );
    assert_eq!(publish(true, true), 0x1234_5678);
}

/// Runs `program` on the reader of tile (1, 2) with every L1 store held in the store queue as
/// long as the hardware may, until it stops at its `ebreak`; then the word at L1 `at`.
fn with_late_stores(program: &[u32], at: u32) -> u32 {
    let tile = (1, 2);
    let mut sim = Sim::new(SimConfig {
        late_core_stores: true,
        ..SimConfig::default()
    });
    load(&mut sim, tile, 0, program);
    sim.spawn_firmware(tile, Role::Reader).unwrap();
    sim.run(1_000_000);
    assert_eq!(sim.core_faults().len(), 1, "stopped at its ebreak");
    sim.read_l1_u32(tile, at).unwrap()
}

#[test]
fn a_load_that_overlaps_a_held_store_reads_it_and_a_stopped_core_s_stores_land() {
    // A word stored, then its second byte loaded (not the store's start address): the load
    // overlaps the held store, so it waits for it (ISA `BabyRISCV/MemoryOrdering.md`, "Store
    // then load"); the byte is stored at 0x4A20, and the core stops at once.
    let mut p = Vec::new();
    p.extend(li(T1, 0x1234_5678));
    p.extend(li(T2, 0x4A10));
    p.push(sw(T1, T2, 0));
    p.push(lbu(T3, T2, 1));
    p.push(sw(T3, T2, 0x10));
    p.push(EBREAK);
    assert_eq!(with_late_stores(&p, 0x4A20), 0x56);
    // A store and a stop: the held store still lands.
    let mut p = Vec::new();
    p.extend(li(T1, 0x0BAD_CAFE));
    p.extend(li(T2, 0x4A30));
    p.push(sw(T1, T2, 0));
    p.push(EBREAK);
    assert_eq!(with_late_stores(&p, 0x4A30), 0x0BAD_CAFE);
}

#[test]
fn a_linked_loopback_multicast_through_the_niu_registers_reaches_the_sender_too() {
    // Two multicasts of command buffer 0 to (1, 2)..=(2, 3), the sender included
    // (`NOC_CMD_BRCST_SRC_INCLUDE`, bit 17): the first linked (`NOC_CMD_VC_LINKED`, bit 6), the
    // second unlinked, ending the run. Four receivers each: 8 acks.
    const MCAST: u32 = 0x2 | 1 << 4 | 1 << 5 | 1 << 7 | 1 << 8 | 4 << 13 | 1 << 17;
    let me = (1, 2);
    let data: Vec<u8> = (0..LEN).map(|i| (i * 3 + 5) as u8).collect();
    let mut sim = Sim::new(SimConfig::default());
    let mut p = Vec::new();
    store_words(
        &mut p,
        0xFFB2_0000,
        &[
            (0x00, SRC),
            (0x08, 1 | 2 << 6),
            (0x0C, DST),
            (0x14, 2 | 3 << 6 | 1 << 12 | 2 << 18),
            (0x20, LEN),
            (0x1C, MCAST | 1 << 6),
        ],
    );
    p.push(addi(T1, 0, 1));
    p.push(sw(T1, T0, 0x40));
    p.extend(li(T1, MCAST));
    p.push(sw(T1, T0, 0x1C));
    p.push(addi(T1, 0, 1));
    p.push(sw(T1, T0, 0x40));
    p.push(addi(T2, 0, 8));
    p.push(lw(T3, T0, 0x204)); // NIU_MST_WR_ACK_RECEIVED
    p.push(bne(T3, T2, -4));
    p.push(EBREAK);
    load(&mut sim, me, 0, &p);
    sim.write_l1(me, SRC, &data).unwrap();
    run_to_ebreak(&mut sim, me, &p);
    for tile in [(1, 2), (2, 2), (1, 3), (2, 3)] {
        let mut got = vec![0; LEN as usize];
        sim.read_l1(tile, DST, &mut got).unwrap();
        assert_eq!(got, data, "{tile:?}");
    }
    assert_eq!(sim.niu(me, 0).unwrap().acks_received, 8);
}

#[test]
fn a_read_tagged_through_noc_packet_tag_is_counted_in_its_reqs_outstanding_counter() {
    // Command buffer 1 of NIU0 reads LEN bytes from (2, 3) with transaction id 3
    // (`NOC_PACKET_TAG` bits 10..13), then polls `NIU_MST_REQS_OUTSTANDING_ID(3)` (status
    // 0x10 + 3) until 0 and stores what it saw first.
    const READ_UNICAST_VC: u32 = 1 << 7 | 1 << 13;
    let me = (1, 2);
    let data: Vec<u8> = (0..LEN).map(|i| (i * 5 + 3) as u8).collect();
    let mut sim = Sim::new(SimConfig::default());
    let mut p = Vec::new();
    store_words(
        &mut p,
        0xFFB2_0800,
        &[
            (0x00, SRC),
            (0x08, 2 | 3 << 6),
            (0x0C, DST),
            (0x14, 1 | 2 << 6),
            (0x20, LEN),
            (0x18, 3 << 10),
            (0x1C, READ_UNICAST_VC),
        ],
    );
    p.push(addi(T1, 0, 1));
    p.push(sw(T1, T0, 0x40));
    p.extend(li(T0, 0xFFB2_0000));
    p.push(lw(T3, T0, 0x200 + 4 * 0x13));
    p.push(sw(T3, 0, 0x100));
    p.push(lw(T3, T0, 0x200 + 4 * 0x13));
    p.push(bne(T3, 0, -4));
    p.push(EBREAK);
    load(&mut sim, me, 0, &p);
    sim.write_l1((2, 3), SRC, &data).unwrap();
    run_to_ebreak(&mut sim, me, &p);
    assert_eq!(
        sim.read_l1_u32(me, 0x100).unwrap(),
        1,
        "one read of id 3 in flight"
    );
    let mut got = vec![0; LEN as usize];
    sim.read_l1(me, DST, &mut got).unwrap();
    assert_eq!(got, data);
}

#[test]
fn writes_are_counted_under_their_transaction_id_outgoing_until_they_leave_and_outstanding_until_acked()
 {
    // Command buffer 0 of NIU0 sends two acknowledged writes of LEN bytes to (2, 3) with
    // transaction id 5 (`NOC_PACKET_TAG` bits 10..13), then stores (ISA `NoC/Counters.md`):
    // `NIU_MST_WRITE_REQS_OUTGOING_ID(5)` (status 0x20 + 5) and `(0)` at once (the second
    // write waits for the first to leave the NIU), `NIU_MST_REQS_OUTSTANDING_ID(5)` (0x10 + 5)
    // at once, then polls the outgoing count to 0 and the outstanding one to 0 (both acked).
    let me = (1, 2);
    let data: Vec<u8> = (0..LEN).map(|i| (i * 7 + 1) as u8).collect();
    let mut sim = Sim::new(SimConfig::default());
    let mut p = Vec::new();
    store_words(
        &mut p,
        0xFFB2_0000,
        &[
            (0x00, SRC),
            (0x08, 1 | 2 << 6),
            (0x0C, DST),
            (0x14, 2 | 3 << 6),
            (0x20, LEN),
            (0x18, 5 << 10),
            (0x1C, WRITE_ACKED_UNICAST),
        ],
    );
    p.push(addi(T1, 0, 1));
    p.push(sw(T1, T0, 0x40));
    p.push(lw(0, T0, 0x40)); // the command read back before the counters (Counters.md)
    p.push(sw(T1, T0, 0x40));
    p.push(lw(0, T0, 0x40));
    let status = |i: i32| 0x200 + 4 * i;
    for (i, at) in [(0x25, 0x100), (0x20, 0x104), (0x15, 0x108)] {
        p.push(lw(T3, T0, status(i)));
        p.push(sw(T3, 0, at));
    }
    p.push(lw(T3, T0, status(0x25)));
    p.push(bne(T3, 0, -4));
    p.push(lw(T3, T0, status(0x15)));
    p.push(bne(T3, 0, -4));
    p.push(lw(T3, T0, status(0x20)));
    p.push(sw(T3, 0, 0x10C));
    p.push(EBREAK);
    load(&mut sim, me, 0, &p);
    sim.write_l1(me, SRC, &data).unwrap();
    run_to_ebreak(&mut sim, me, &p);
    let word = |at| sim.read_l1_u32(me, at).unwrap();
    assert!(
        (1..=2).contains(&word(0x100)),
        "id 5's writes outgoing: {}",
        word(0x100)
    );
    assert_eq!(word(0x104), 0, "id 0 has no write outgoing");
    assert_eq!(word(0x108), 2, "both writes of id 5 wait for their acks");
    assert_eq!(word(0x10C), 0);
    assert_eq!(sim.niu(me, 0).unwrap().acks_received, 2);
    let mut got = vec![0; LEN as usize];
    sim.read_l1((2, 3), DST, &mut got).unwrap();
    assert_eq!(got, data);
}

#[test]
fn noc_clear_outstanding_req_cnt_zeroes_the_counters_its_mask_names() {
    // A read with transaction id 3 in flight, then `NOC_CLEAR_OUTSTANDING_REQ_CNT` (NIU base +
    // 0x60) with bit 3 set: `NIU_MST_REQS_OUTSTANDING_ID(3)` reads 1, then 0.
    const READ_UNICAST_VC: u32 = 1 << 7 | 1 << 13;
    let me = (1, 2);
    let mut sim = Sim::new(SimConfig::default());
    let mut p = Vec::new();
    store_words(
        &mut p,
        0xFFB2_0800,
        &[
            (0x00, SRC),
            (0x08, 2 | 3 << 6),
            (0x0C, DST),
            (0x14, 1 | 2 << 6),
            (0x20, LEN),
            (0x18, 3 << 10),
            (0x1C, READ_UNICAST_VC),
            (0x40, 1),
        ],
    );
    p.push(lw(T3, T0, 0x200 - 0x800 + 4 * 0x13));
    p.push(sw(T3, 0, 0x100));
    p.extend(li(T1, 1 << 3));
    p.push(sw(T1, T0, 0x60 - 0x800));
    p.push(lw(T3, T0, 0x200 - 0x800 + 4 * 0x13));
    p.push(sw(T3, 0, 0x104));
    p.push(EBREAK);
    load(&mut sim, me, 0, &p);
    sim.spawn_firmware(me, Role::Reader).unwrap();
    sim.run(1_000_000);
    assert_eq!(sim.core_faults().len(), 1, "{:?}", sim.core_faults());
    assert_eq!(sim.core_faults()[0].pc, 4 * (p.len() as u32 - 1));
    assert_eq!(sim.read_l1_u32(me, 0x100).unwrap(), 1);
    assert_eq!(sim.read_l1_u32(me, 0x104).unwrap(), 0);
}

#[test]
fn noc_clear_outstanding_req_cnt_is_not_in_command_buffer_1() {
    // The firmware once wrote the mask at command buffer 1's offset 0x60 (NIU base + 0x860),
    // which is no register (ttsim stopped it: "UnimplementedFunctionality in noc_regs_wr32:
    // offset=0x860"); the model refuses the store, naming it.
    let me = (1, 2);
    let mut sim = Sim::new(SimConfig::default());
    let mut p = Vec::new();
    p.extend(li(T0, 0xFFB2_0800));
    p.extend(li(T1, 0xFFFF));
    p.push(sw(T1, T0, 0x60));
    p.push(EBREAK);
    load(&mut sim, me, 0, &p);
    sim.spawn_firmware(me, Role::Reader).unwrap();
    sim.run(1_000_000);
    let faults = sim.core_faults();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_ne!(
        faults[0].pc,
        4 * (p.len() as u32 - 1),
        "stopped at the store, not the ebreak"
    );
    assert!(
        faults[0].to_string().contains("0xffb20860"),
        "{}",
        faults[0]
    );
}

/// A multicast of command buffer 0 to (1, 2)..=(2, 3), the sender included (4 receivers):
/// acked, ordered (static VC 4), path reserve.
const MCAST_4: u32 = 0x2 | 1 << 4 | 1 << 5 | 1 << 7 | 1 << 8 | 4 << 13 | 1 << 17;
/// `NOC_CMD_VC_LINKED`.
const VC_LINKED: u32 = 1 << 6;
/// Where [`linked_run_then`]'s firmware stores what it saw, past its code.
const OUT: u32 = 0x1_0000;

/// Which request [`linked_run_then`] issues besides the run.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Other {
    /// A read of LEN bytes from (2, 3) 0x5_0000 into 0x4_0000, command buffer 1.
    Read,
    /// A write of LEN bytes from SRC to (2, 3) 0x6_0000, command buffer 2.
    Write,
}

/// Firmware on (1, 2): a linked multicast of SRC to DST, then a closing multicast of SRC to
/// DST + 0x1000, with `other` issued before the closing multicast (`during`) or after it; then
/// it stores `NOC_CMD_CTRL` of `other`'s command buffer at [`OUT`] and of command buffer 0
/// after it, each once its NIU took the command or after 10,000 polls, and stops. Returns the simulator run to quiescence and the program.
fn linked_run_then(other: Other, during: bool) -> (Sim, Vec<u32>) {
    let me = (1, 2);
    let mut sim = Sim::new(SimConfig::default());
    let mut p = Vec::new();
    store_words(
        &mut p,
        0xFFB2_0000,
        &[
            (0x00, SRC),
            (0x08, 1 | 2 << 6),
            (0x0C, DST),
            (0x14, 2 | 3 << 6 | 1 << 12 | 2 << 18),
            (0x20, LEN),
            (0x1C, MCAST_4 | VC_LINKED),
            (0x40, 1),
        ],
    );
    let buf: u32 = match other {
        Other::Read => 1,
        Other::Write => 2,
    };
    let issue_other = |p: &mut Vec<u32>| match other {
        Other::Read => store_words(
            p,
            0xFFB2_0800,
            &[
                (0x00, 0x5_0000),
                (0x08, 2 | 3 << 6),
                (0x0C, 0x4_0000),
                (0x14, 1 | 2 << 6),
                (0x20, LEN),
                (0x1C, 1 << 4 | 1 << 7 | 1 << 13),
                (0x40, 1),
            ],
        ),
        Other::Write => store_words(
            p,
            0xFFB2_1000,
            &[
                (0x00, SRC),
                (0x08, 1 | 2 << 6),
                (0x0C, 0x6_0000),
                (0x14, 2 | 3 << 6),
                (0x20, LEN),
                (0x1C, WRITE_ACKED_UNICAST),
                (0x40, 1),
            ],
        ),
    };
    if during {
        issue_other(&mut p);
    }
    store_words(
        &mut p,
        0xFFB2_0000,
        &[(0x0C, DST + 0x1000), (0x1C, MCAST_4), (0x40, 1)],
    );
    if !during {
        issue_other(&mut p);
    }
    p.extend(li(T2, OUT));
    // Each buffer's NOC_CMD_CTRL once its NIU took the command (a busy pipeline holds it a
    // while), or 1 after 10,000 polls: a hung NIU never takes it.
    let settled = |p: &mut Vec<u32>, base: u32, out: i32| {
        p.extend(li(T0, base));
        p.extend(li(T1, 10_000));
        p.push(lw(T3, T0, 0x40)); // poll:
        p.push(beq(T3, 0, 12));
        p.push(addi(T1, T1, -1));
        p.push(bne(T1, 0, -12));
        p.push(sw(T3, T2, out));
    };
    settled(&mut p, 0xFFB2_0000 + 0x800 * buf, 0);
    settled(&mut p, 0xFFB2_0000, 4);
    p.push(EBREAK);
    load(&mut sim, me, 0, &p);
    sim.write_l1(me, SRC, &pattern(3)).unwrap();
    sim.write_l1((2, 3), 0x5_0000, &pattern(5)).unwrap();
    sim.spawn_firmware(me, Role::Reader).unwrap();
    assert_eq!(sim.run(1_000_000), RunOutcome::Quiescent);
    (sim, p)
}

fn pattern(k: u32) -> Vec<u8> {
    (0..LEN).map(|i| (i * k + 1) as u8).collect()
}

fn l1_bytes(sim: &Sim, tile: (u8, u8), addr: u32) -> Vec<u8> {
    let mut got = vec![0; LEN as usize];
    sim.read_l1(tile, addr, &mut got).unwrap();
    got
}

#[test]
fn a_read_or_unicast_write_during_a_linked_run_hangs_the_niu_and_is_reported() {
    let me = (1, 2);
    let rect = [(1, 2), (2, 2), (1, 3), (2, 3)];
    for other in [Other::Read, Other::Write] {
        let (sim, p) = linked_run_then(other, true);
        let faults = sim.core_faults();
        assert_eq!(faults.len(), 1, "{other:?}: {faults:?}");
        assert_eq!(
            faults[0].pc,
            4 * (p.len() as u32 - 1),
            "stopped at its ebreak: {}",
            faults[0]
        );
        // The linked multicast went; the request never landed, and the closing multicast
        // never went: the NIU initiates nothing after the request.
        for tile in rect {
            assert_eq!(l1_bytes(&sim, tile, DST), pattern(3), "{other:?} {tile:?}");
            assert_eq!(l1_bytes(&sim, tile, DST + 0x1000), vec![0; LEN as usize]);
        }
        let (target, addr) = match other {
            Other::Read => (me, 0x4_0000),
            Other::Write => ((2, 3), 0x6_0000),
        };
        assert_eq!(
            l1_bytes(&sim, target, addr),
            vec![0; LEN as usize],
            "{other:?}"
        );
        let n = sim.niu(me, 0).unwrap();
        assert_eq!((n.reads_issued, n.acks_received), (0, 4), "{other:?}");
        assert_eq!(
            n.nonposted_writes_issued, 1,
            "{other:?}: the linked multicast only"
        );
        // Neither command was initiated: both command buffers stay busy.
        assert_eq!(sim.read_l1_u32(me, OUT).unwrap(), 1, "{other:?}");
        assert_eq!(sim.read_l1_u32(me, OUT + 4).unwrap(), 1, "{other:?}");
        // The violation names the tile, the NIU, the request and the run.
        let v = sim.violations();
        assert_eq!(v.len(), 1, "{other:?}: {v:?}");
        let Violation::LinkedRunHungNiu {
            tile,
            noc,
            request,
            target,
            addr,
            len,
            run,
            ..
        } = v[0].clone()
        else {
            panic!("{:?}", v[0]);
        };
        let expected = match other {
            Other::Read => ("read", (2, 3), 0x5_0000),
            Other::Write => ("unicast write", (2, 3), 0x6_0000),
        };
        assert_eq!((tile, noc, len, run), (me, 0, LEN, ((1, 2), (2, 3))));
        assert_eq!((request, target, addr), expected);
        let text = v[0].to_string();
        assert!(
            text.contains(&format!(
                "tile (1, 2) NIU0: a {request} of 256 bytes at (2, 3)"
            )) && text.contains("linked multicast run to (1, 2)..=(2, 3)")
                && text.contains("the NIU initiates no request any more"),
            "{text}"
        );
    }
}

#[test]
fn the_same_request_after_the_closing_multicast_goes() {
    let me = (1, 2);
    for other in [Other::Read, Other::Write] {
        let (sim, p) = linked_run_then(other, false);
        let faults = sim.core_faults();
        assert_eq!(faults.len(), 1, "{other:?}: {faults:?}");
        assert_eq!(
            faults[0].pc,
            4 * (p.len() as u32 - 1),
            "stopped at its ebreak: {}",
            faults[0]
        );
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
        for tile in [(1, 2), (2, 2), (1, 3), (2, 3)] {
            assert_eq!(l1_bytes(&sim, tile, DST), pattern(3), "{other:?} {tile:?}");
            assert_eq!(l1_bytes(&sim, tile, DST + 0x1000), pattern(3));
        }
        let n = sim.niu(me, 0).unwrap();
        match other {
            Other::Read => {
                assert_eq!(l1_bytes(&sim, me, 0x4_0000), pattern(5));
                assert_eq!((n.reads_done, n.acks_received), (1, 8));
            }
            Other::Write => {
                assert_eq!(l1_bytes(&sim, (2, 3), 0x6_0000), pattern(3));
                assert_eq!((n.reads_done, n.acks_received), (0, 9));
            }
        }
        assert_eq!(sim.read_l1_u32(me, OUT).unwrap(), 0, "{other:?}");
        assert_eq!(sim.read_l1_u32(me, OUT + 4).unwrap(), 0, "{other:?}");
    }
}

/// A Blackhole firmware core that loads from L1 with its L0 data cache on (`cfg0` bit 3 clear,
/// as at reset) is reported, once however many loads it makes; with the cache turned off first
/// (`fence`, `csrrs zero, 0x7c0, 8`: komorebi's `_start`, tt-metal's boot) nothing is.
#[test]
fn an_l1_load_with_the_l0_data_cache_on_is_reported_once_per_core() {
    for off_first in [false, true] {
        let mut sim = Sim::new(SimConfig::default());
        let mut p = Vec::new();
        if off_first {
            p.extend([FENCE, addi(T1, 0, 8), csrrs(0, CFG0, T1)]);
        }
        p.extend([lw(T2, 0, 0x200), lw(T2, 0, 0x204), EBREAK]);
        load(&mut sim, (1, 2), 0, &p);
        sim.spawn_firmware((1, 2), Role::Reader).unwrap();
        sim.run(100_000);
        let faults = sim.core_faults();
        assert_eq!(faults.len(), 1, "stopped at its ebreak: {faults:?}");
        let v = sim.violations();
        if off_first {
            assert!(v.is_empty(), "{v:?}");
        } else {
            assert!(
                matches!(
                    v.as_slice(),
                    [Violation::LoadWithL0DataCacheOn {
                        tile: (1, 2),
                        kernel: "reader",
                        ..
                    }]
                ),
                "{v:?}"
            );
        }
    }
}

#[test]
fn a_core_released_late_is_profiled_from_its_release() {
    // A profiled core spawned at cycle 10,000: its profile holds what it ran, not the cycles
    // before it existed as stalls.
    let mut sim = Sim::new(SimConfig {
        profile_cores: true,
        ..SimConfig::default()
    });
    sim.advance(10_000);
    let mut p = Vec::new();
    p.extend(li(T0, 100));
    p.push(addi(T0, T0, -1)); // loop: 100 times
    p.push(bne(T0, 0, -4));
    p.push(EBREAK);
    load(&mut sim, (1, 2), 0, &p);
    sim.spawn_firmware((1, 2), Role::Reader).unwrap();
    sim.run(1_000_000);
    let profiles = sim.core_profiles();
    assert_eq!(profiles.len(), 1);
    let ran: u64 = profiles[0].samples.iter().map(|s| s.cycles).sum();
    assert_eq!(profiles[0].stalled, 0, "nothing but its own instructions");
    assert!(
        (200..1_000).contains(&ran),
        "{ran} cycles for a loop of 100"
    );
}

/// Firmware on (1, 2): a 16 KiB write through command buffer 0, then one through command
/// buffer 2, both on NIU0's write pipeline, which is still busy with the first; then `after`.
fn two_writes_then(after: &[u32]) -> (Sim, Vec<u32>) {
    const BIG: u32 = 16384;
    let me = (1, 2);
    let mut sim = Sim::new(SimConfig::default());
    let mut p = Vec::new();
    for (base, dst) in [(0xFFB2_0000, 0x6_0000), (0xFFB2_1000, 0x7_0000)] {
        store_words(
            &mut p,
            base,
            &[
                (0x00, SRC),
                (0x08, 1 | 2 << 6),
                (0x0C, dst),
                (0x14, 2 | 3 << 6),
                (0x20, BIG),
                (0x1C, WRITE_ACKED_UNICAST),
                (0x40, 1),
            ],
        );
    }
    p.extend_from_slice(after);
    p.push(EBREAK);
    load(&mut sim, me, 0, &p);
    (sim, p)
}

/// A command buffer holds its command until the NIU's pipeline takes it: `NOC_CMD_CTRL` reads
/// 1 until then (ISA `NoC/MemoryMap.md`), then 0, and a write of the buffer after that is
/// taken. (It read 0 at once: firmware that wrote a buffer without polling it passed.)
#[test]
fn a_command_buffer_reads_busy_until_its_niu_takes_the_command() {
    let mut after = Vec::new();
    // T0 is buffer 2's base (store_words left it there). OUT: the first CMD_CTRL read;
    // OUT + 4: the polls until it read 0.
    after.push(lw(T2, T0, 0x40));
    after.extend(li(T1, OUT));
    after.push(sw(T2, T1, 0));
    after.push(addi(T3, 0, 0));
    after.push(addi(T3, T3, 1)); // poll:
    after.push(lw(T2, T0, 0x40));
    after.push(bne(T2, 0, -8));
    after.push(sw(T3, T1, 4));
    // Free again: a register write is taken.
    after.push(sw(T1, T0, 0x0C));
    let (mut sim, p) = two_writes_then(&after);
    run_to_ebreak(&mut sim, (1, 2), &p);
    assert_eq!(sim.read_l1_u32((1, 2), OUT).unwrap(), 1, "held at first");
    let polls = sim.read_l1_u32((1, 2), OUT + 4).unwrap();
    assert!(
        polls > 10,
        "held while the first write's 16 KiB leave: {polls} polls"
    );
}

/// Writing a held command buffer stops the core and says why: software must not write an
/// initiator's fields before the NIU took its command.
#[test]
fn writing_a_held_command_buffer_stops_the_core() {
    let after = [sw(T1, T0, 0x0C)];
    let (mut sim, _) = two_writes_then(&after);
    sim.spawn_firmware((1, 2), Role::Reader).unwrap();
    sim.run(1_000_000);
    let faults = sim.core_faults();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(
        faults[0].what.contains("command buffer 2")
            && faults[0]
                .what
                .contains("must not write to any fields of the initiator"),
        "{}",
        faults[0].what
    );
}

/// A command that sends no packet (a multicast to a rectangle of no Tensix core, on command
/// buffer 3, behind two 16 KiB writes whose second the write pipeline starts only later) is not
/// held by them: its buffer reads free at once.
#[test]
fn a_command_that_sends_nothing_is_not_held_by_another() {
    let me = (1, 2);
    let mut after = Vec::new();
    // A multicast to column 0 alone (DRAM and Ethernet tiles: no Tensix core receives).
    store_words(
        &mut after,
        0xFFB2_1800,
        &[
            (0x00, SRC),
            (0x08, 1 | 2 << 6),
            (0x0C, 0x7_0000),
            (0x14, 3 << 6 | 2 << 18),
            (0x20, 64),
            (0x1C, MCAST_4 & !(1 << 17)),
            (0x40, 1),
        ],
    );
    after.push(lw(T2, T0, 0x40));
    after.extend(li(T1, OUT));
    after.push(sw(T2, T1, 0));
    let (mut sim, p) = two_writes_then(&after);
    run_to_ebreak(&mut sim, me, &p);
    assert_eq!(sim.read_l1_u32(me, OUT).unwrap(), 0);
}
