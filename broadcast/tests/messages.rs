//! What the give-ups and compute's errors print: the words a report shows an operator. Every
//! expected string is written here in full.

use komorebi_broadcast::area::Where;
use komorebi_broadcast::args::ArgsError;
use komorebi_broadcast::compute::ComputeError;
use komorebi_broadcast::device::{Cause, GiveUp};
use komorebi_hal::{LogicalRect, cb, control, noc};

#[test]
fn every_cause_of_a_give_up_prints_what_went_wrong() {
    let cases = [
        (
            Cause::BadWords(ArgsError::Window(9)),
            "bad broadcast words: window 9 (allowed: 1..=8)",
        ),
        (
            Cause::Refused,
            "the handler refused the program around the broadcast words",
        ),
        (
            Cause::WrongGroup {
                command: LogicalRect::new(0, 0, 2, 3),
                words: LogicalRect::new(0, 0, 3, 3),
            },
            "command names group 0,0,2,3 but the broadcast words were built for 0,0,3,3",
        ),
        (
            Cause::NotExclusive,
            "a command with broadcasts must carry EXCLUSIVE",
        ),
        (
            Cause::WrongNoc,
            "broadcast words are for the other NoC's kernel",
        ),
        (Cause::WrongCore, "broadcast words are for another core"),
        (
            Cause::BufferSize {
                expected: 8,
                capacity: 6,
            },
            "broadcast buffer has 6 pages, the words need window * pages = 8",
        ),
        (
            Cause::PageSize { bytes: 6 },
            "broadcast buffer has pages of 6 bytes (allowed: a nonzero multiple of 4, the whole \
             buffer within 32-bit addresses)",
        ),
        (
            Cause::NotAtSlotZero,
            "broadcast buffer does not start at slot 0",
        ),
        (
            Cause::BufferNotEmpty { pages: 3 },
            "broadcast buffer still holds 3 pages of an earlier command (allowed: an empty \
             buffer, so the command starts at slot 0)",
        ),
        (
            Cause::NoBuffer { index: 7 },
            "the tile has no circular buffer 7 for the broadcast",
        ),
        (
            Cause::Misuse,
            "broadcast call out of order or for the wrong role",
        ),
        (Cause::TimedOut, "wait limit passed"),
        (Cause::Stopped, "tile asked to stop"),
        (
            Cause::Noc(noc::ErrorKind::Busy),
            "NoC: the NoC cannot take a request now",
        ),
        (
            Cause::Cb(cb::ErrorKind::Overflow),
            "circular buffer: push of more pages than are free",
        ),
        (
            Cause::Control(control::ErrorKind::OutOfRange),
            "control block: offset beyond the control block",
        ),
    ];
    for (cause, text) in cases {
        assert_eq!(cause.to_string(), text, "{cause:?}");
    }
}

#[test]
fn a_give_up_prints_its_place_broadcast_block_and_cause() {
    let g = GiveUp {
        place: Where::BroadcastDone,
        broadcast: 1,
        block: 3,
        cause: Cause::TimedOut,
    };
    assert_eq!(
        g.to_string(),
        "broadcast_done (broadcast 1, block 3): wait limit passed"
    );
    let g = GiveUp {
        place: Where::BroadcastBegin,
        broadcast: 0,
        block: 0,
        cause: Cause::NoBuffer { index: 5 },
    };
    assert_eq!(
        g.to_string(),
        "broadcast_begin (broadcast 0, block 0): the tile has no circular buffer 5 for the broadcast"
    );
}

#[test]
fn every_compute_error_prints_what_went_wrong() {
    let cases = [
        (
            ComputeError::TimedOut { waited: 1_000 },
            "compute waited 1000 cycles for a block",
        ),
        (
            ComputeError::Stopped { waited: 12 },
            "compute stopped after 12 cycles",
        ),
        (
            ComputeError::Cb(cb::ErrorKind::Underflow),
            "circular buffer: pop or read of pages that are not ready",
        ),
        (
            ComputeError::Control(control::ErrorKind::Misaligned),
            "control block: offset not a multiple of 4",
        ),
        (
            ComputeError::Misuse,
            "broadcast compute call with pages, window or blocks out of range",
        ),
    ];
    for (error, text) in cases {
        assert_eq!(error.to_string(), text, "{error:?}");
    }
}
