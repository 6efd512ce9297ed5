//! A tile without the circular buffer its broadcast words name (the firmware's buffer table has
//! no entry there): the data-movement kernel gives up `broadcast_begin`, records it in the
//! broadcast's area like any bad words, and touches no NoC.

use std::collections::BTreeMap;

use komorebi_broadcast::area::{self, GiveUpRecord, Where};
use komorebi_broadcast::args::{Along, BroadcastArgs};
use komorebi_hal::{Compute, DataMovement, L1Addr, LogicalRect, Role, Spin, block_on, control};
use komorebi_kernel::abi::{GiveUpCode, KernelGiveUp};
use komorebi_kernel::broadcast_handler::program::{
    BroadcastProgram, ComputeInput, ComputeProgram, MoverProgram,
};
use komorebi_kernel::{BroadcastHandler, Buffers, Command, Handler};
use komorebi_mock::{MockCircularBuffer, MockNocMulticast};

const SEQUENCE: u32 = 0x0003_0009;

/// A control block of plain words.
#[derive(Default)]
struct Words(BTreeMap<u32, u32>);

impl control::ErrorType for Words {
    type Error = control::ErrorKind;
}

impl komorebi_hal::ControlBlock for Words {
    fn len(&self) -> u32 {
        0x1000
    }
    fn addr(&self, offset: u32) -> Result<L1Addr, control::ErrorKind> {
        L1Addr::new(0x1_0000 + offset).map_err(|_| control::ErrorKind::Misaligned)
    }
    fn load(&mut self, offset: u32) -> Result<u32, control::ErrorKind> {
        Ok(*self.0.get(&offset).unwrap_or(&0))
    }
    fn store(&mut self, offset: u32, value: u32) -> Result<(), control::ErrorKind> {
        self.0.insert(offset, value);
        Ok(())
    }
    fn stop_requested(&mut self) -> Result<bool, control::ErrorKind> {
        Ok(false)
    }
    fn request_stop(&mut self) -> Result<(), control::ErrorKind> {
        Ok(())
    }
    fn wait_limit(&mut self) -> Result<u64, control::ErrorKind> {
        Ok(1_000)
    }
    fn now(&mut self) -> u64 {
        0
    }
}

/// A tile whose buffer table is empty.
struct NoBuffers;

impl Buffers for NoBuffers {
    type Cb = MockCircularBuffer;
    fn cb(&self, _index: u8) -> Option<MockCircularBuffer> {
        None
    }
}

fn mover(broadcast: u8, noc: u8) -> MoverProgram {
    let args = BroadcastArgs {
        broadcast,
        rank: 1,
        receivers: 3,
        window: 2,
        noc,
        cb: 16 + broadcast,
        pages: 4,
        core: (2, 2),
        sender: (1, 2),
        start: (2, 2),
        end: (4, 2),
        group: LogicalRect::new(0, 0, 4, 1),
        rect: LogicalRect::new(0, 0, 4, 1),
        along: Along::Row,
    };
    MoverProgram {
        args: args.encode(),
        blocks: 16,
        page_size: 2048,
        dram_base: 0x100_0000,
        banks: core::array::from_fn(|b| komorebi_hal::Xy::new(b as u8, 11 - b as u8).unwrap()),
        stall_before: None,
    }
}

fn command() -> Command {
    let mut compute = ComputeProgram {
        job: 7,
        ..ComputeProgram::default()
    };
    for (broadcast, producer) in [(0, Role::Reader), (1, Role::Writer)] {
        let input = ComputeInput {
            cb: 16 + broadcast,
            pages: 4,
            window: 2,
            blocks: 16,
            page_size: 2048,
            broadcast,
            producer,
        };
        compute.inputs.push(input).unwrap();
    }
    let p = BroadcastProgram {
        reader: Some(mover(0, 0)),
        writer: Some(mover(1, 1)),
        compute,
    };
    let w = p.words();
    Command::new(1, SEQUENCE, 1, 1, LogicalRect::new(0, 0, 4, 1), 1_000)
        .with_words(&w.reader, &w.writer, &w.compute)
        .unwrap()
}

#[test]
fn a_missing_buffer_gives_up_broadcast_begin_and_records_it_in_the_area() {
    for (role, id) in [(Role::Reader, 0u8), (Role::Writer, 1)] {
        // No expectation on the NoC: any NoC call fails the test.
        let mut dm = DataMovement {
            noc: MockNocMulticast::new(),
            ctrl: Words::default(),
            pause: Spin,
        };
        let cmd = command();
        let outcome = match role {
            Role::Writer => block_on(BroadcastHandler::new().writer(&mut dm, &NoBuffers, &cmd)),
            _ => block_on(BroadcastHandler::new().reader(&mut dm, &NoBuffers, &cmd)),
        };
        assert_eq!(
            outcome.give_up,
            Some(KernelGiveUp {
                code: GiveUpCode::Broadcast(Where::BroadcastBegin),
                broadcast: id,
                block: 0,
            }),
            "{role:?}"
        );
        let base = area::area(id);
        let word = |o: u32| *dm.ctrl.0.get(&(base + o)).unwrap_or(&0);
        // The area's words: where | broadcast << 8 | (sequence & 0xFFFF) << 16, block,
        // sequence.
        assert_eq!(
            [
                word(area::GIVE_UP_WHERE),
                word(area::GIVE_UP_BLOCK),
                word(area::GIVE_UP_SEQUENCE)
            ],
            [
                4 | (id as u32) << 8 | (SEQUENCE & 0xFFFF) << 16,
                0,
                SEQUENCE
            ],
            "{role:?}"
        );
        assert_eq!(
            GiveUpRecord::from_words([4 | (id as u32) << 8, 0, SEQUENCE]).map(|r| r.place),
            Some(Where::BroadcastBegin)
        );
    }
}

/// A tile with buffers 0..64 only, as the control block's table holds, whose handles are mocks
/// with no expectation (the test fails if a broadcast uses one).
struct Table64;

impl Buffers for Table64 {
    type Cb = MockCircularBuffer;
    fn cb(&self, index: u8) -> Option<MockCircularBuffer> {
        (index < 64).then(MockCircularBuffer::new)
    }
}

#[test]
fn a_buffer_index_past_the_table_is_no_buffer_not_another_buffer() {
    // Buffer 69: not buffer 5 (69 & 63), which the tile has.
    let mut m = mover(0, 0);
    let mut args = BroadcastArgs::decode(&m.args).unwrap();
    args.cb = 69;
    m.args = args.encode();
    let mut compute = ComputeProgram {
        job: 7,
        ..ComputeProgram::default()
    };
    compute
        .inputs
        .push(ComputeInput {
            cb: 69,
            pages: 4,
            window: 2,
            blocks: 16,
            page_size: 2048,
            broadcast: 0,
            producer: Role::Reader,
        })
        .unwrap();
    let p = BroadcastProgram {
        reader: Some(m),
        writer: None,
        compute,
    };
    let w = p.encode().unwrap();
    let cmd = Command::new(1, SEQUENCE, 1, 1, LogicalRect::new(0, 0, 4, 1), 1_000)
        .with_words(&w.reader, &w.writer, &w.compute)
        .unwrap();
    let mut dm = DataMovement {
        noc: MockNocMulticast::new(),
        ctrl: Words::default(),
        pause: Spin,
    };
    let outcome = block_on(BroadcastHandler::new().reader(&mut dm, &Table64, &cmd));
    assert_eq!(
        outcome.give_up,
        Some(KernelGiveUp {
            code: GiveUpCode::Broadcast(Where::BroadcastBegin),
            broadcast: 0,
            block: 0,
        })
    );
}

#[test]
fn compute_without_a_buffer_it_is_to_take_gives_up_rather_than_reporting_success() {
    let mut compute = Compute {
        ctrl: Words::default(),
        pause: Spin,
    };
    let outcome = block_on(BroadcastHandler::new().compute(&mut compute, &NoBuffers, &command()));
    assert_eq!(
        outcome.give_up,
        Some(KernelGiveUp {
            code: GiveUpCode::ComputeFailed,
            broadcast: 0,
            block: 0,
        })
    );
    assert_eq!(outcome.stat, 0);
}
