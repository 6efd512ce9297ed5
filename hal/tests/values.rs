//! The HAL's value types and role table against literal values, each at its edges: the packed
//! group word, rectangle containment and cover, wrapping, roles and NoC ids. (Mutation testing,
//! `docs/mutants.md`: these are the values every layer above relies on.)

use komorebi_hal::{LogicalRect, LogicalXy, NocId, Rect, Role, Xy};

fn xy(x: u8, y: u8) -> Xy {
    Xy::new(x, y).unwrap()
}

#[test]
fn a_group_packs_into_one_word_and_back() {
    let r = LogicalRect::new(0x12, 0x34, 0x56, 0x78);
    assert_eq!(r.word(), 0x7856_3412);
    assert_eq!(LogicalRect::from_word(0x7856_3412), r);
    assert_eq!(LogicalRect::new(255, 0, 0, 255).word(), 0xFF00_00FF);
    assert_eq!(
        LogicalRect::from_word(0xFF00_00FF),
        LogicalRect::new(255, 0, 0, 255)
    );
    assert_eq!(r.to_string(), "18,52,86,120");
}

#[test]
fn a_group_contains_its_cores_and_no_other() {
    // Columns 2..=4, rows 3..=4.
    let r = LogicalRect::new(2, 3, 3, 2);
    let inside: Vec<(u8, u8)> = (0..8)
        .flat_map(|x| (0..8).map(move |y| (x, y)))
        .filter(|&(x, y)| r.contains(x, y))
        .collect();
    assert_eq!(inside, [(2, 3), (2, 4), (3, 3), (3, 4), (4, 3), (4, 4)]);
    assert!(r.contains_xy(LogicalXy::new(4, 4)));
    assert!(!r.contains_xy(LogicalXy::new(5, 4)));
    assert!(!r.contains_xy(LogicalXy::new(4, 5)));
    assert_eq!((r.len(), r.is_empty()), (6, false));
    // At the top of the u8 range nothing overflows.
    let edge = LogicalRect::new(250, 250, 6, 6);
    assert!(edge.contains(255, 255) && !edge.contains(249, 255));
    assert!(LogicalRect::new(0, 0, 0, 5).is_empty());
    assert!(LogicalRect::new(0, 0, 5, 0).is_empty());
}

#[test]
fn a_group_covers_what_lies_inside_it_and_overlaps_what_shares_a_core() {
    let r = LogicalRect::new(2, 3, 3, 2);
    assert!(r.covers(r));
    assert!(r.covers(LogicalRect::new(3, 4, 2, 1)));
    for outside in [
        LogicalRect::new(1, 3, 2, 2),
        LogicalRect::new(2, 2, 2, 2),
        LogicalRect::new(3, 3, 3, 1),
        LogicalRect::new(2, 4, 1, 2),
    ] {
        assert!(!r.covers(outside), "{outside}");
        assert!(r.overlaps(outside), "{outside}");
    }
    assert!(!r.overlaps(LogicalRect::new(5, 3, 1, 1)), "right of it");
    assert!(!r.overlaps(LogicalRect::new(2, 5, 1, 1)), "below it");
    assert!(!r.overlaps(LogicalRect::new(0, 0, 2, 9)), "left of it");
    assert!(!r.overlaps(LogicalRect::new(0, 0, 9, 3)), "above it");
    assert!(!r.overlaps(LogicalRect::new(3, 3, 0, 1)), "empty");
}

#[test]
fn coordinates_and_rectangles_keep_their_axes() {
    let p = xy(3, 9);
    assert_eq!((p.x(), p.y()), (3, 9));
    assert_eq!(LogicalXy::from((4, 7)), LogicalXy::new(4, 7));
    assert_eq!(<(u8, u8)>::from(LogicalXy::new(4, 7)), (4, 7));
    let plain = Rect::new(xy(1, 2), xy(3, 4)).unwrap();
    assert!(!plain.is_wrapping());
    assert!(Rect::single(xy(5, 5)).contains(xy(5, 5)));
    assert!(
        !Rect::wrapping(xy(3, 3), xy(3, 3)).is_wrapping(),
        "one node does not wrap"
    );
    assert!(Rect::wrapping(xy(4, 2), xy(3, 2)).is_wrapping(), "x wraps");
    assert!(Rect::wrapping(xy(2, 4), xy(2, 3)).is_wrapping(), "y wraps");
    let w = Rect::wrapping(xy(15, 0), xy(1, 0));
    assert!(w.contains(xy(16, 0)) && w.contains(xy(0, 0)) && !w.contains(xy(2, 0)));
}

#[test]
fn roles_name_their_index_and_noc() {
    let table: Vec<_> = Role::ALL
        .iter()
        .map(|r| (r.index(), r.name(), r.noc()))
        .collect();
    assert_eq!(
        table,
        [
            (0, "reader", Some(NocId::Noc0)),
            (1, "writer", Some(NocId::Noc1)),
            (2, "compute", None)
        ]
    );
    assert_eq!((NocId::Noc0.index(), NocId::Noc1.index()), (0, 1));
    assert_eq!(Role::mover(NocId::Noc1), Role::Writer);
}

#[test]
fn values_and_errors_print_what_they_are() {
    use komorebi_hal::wait::WaitError;
    use komorebi_hal::{L1Addr, cb, control};
    let rect = Rect::new(xy(1, 2), xy(3, 4)).unwrap();
    assert_eq!(rect.to_string(), "(1, 2)..=(3, 4)");
    assert_eq!(L1Addr::new(0x4A10).unwrap().to_string(), "0x4a10");
    assert_eq!(Role::Writer.to_string(), "writer");
    assert_eq!(LogicalXy::new(4, 7).to_string(), "(4,7)");
    assert_eq!(
        cb::ErrorKind::Overflow.to_string(),
        "push of more pages than are free"
    );
    assert_eq!(
        control::ErrorKind::OutOfRange.to_string(),
        "offset beyond the control block"
    );
    let timed_out: WaitError<&str> = WaitError::TimedOut { waited: 500 };
    assert_eq!(timed_out.waited(), 500);
    assert_eq!(timed_out.to_string(), "wait limit passed after 500 cycles");
    assert_eq!(WaitError::Stopped::<&str> { waited: 9 }.waited(), 9);
    assert_eq!(WaitError::Condition("bad").waited(), 0);
    assert_eq!(WaitError::Condition("bad").to_string(), "bad");
}

#[test]
fn write_modes_link_and_loop_back_only_when_asked_and_only_plain_modes_are_unicast() {
    use komorebi_hal::noc::{Ack, Link, Loopback, Order, WriteMode};
    assert_eq!(
        WriteMode::ORDERED,
        WriteMode {
            ack: Ack::Acked,
            order: Order::Ordered,
            link: Link::Unlinked,
            loopback: Loopback::Excluded,
        }
    );
    let linked = WriteMode::RELAXED.linked();
    assert_eq!(
        (linked.ack, linked.order, linked.link, linked.loopback),
        (Ack::Acked, Order::Relaxed, Link::Linked, Loopback::Excluded)
    );
    let looped = WriteMode::ORDERED.with_loopback();
    assert_eq!(
        (looped.ack, looped.order, looped.link, looped.loopback),
        (
            Ack::Acked,
            Order::Ordered,
            Link::Unlinked,
            Loopback::Included
        )
    );
    let both = WriteMode::ORDERED.linked().with_loopback();
    assert_eq!(
        (both.link, both.loopback),
        (Link::Linked, Loopback::Included)
    );
    assert!(WriteMode::ORDERED.is_unicast());
    assert!(WriteMode::RELAXED.is_unicast());
    assert!(!linked.is_unicast());
    assert!(!looped.is_unicast());
    assert!(!both.is_unicast());
}

/// Every backend names a buffer's slots with `slot_after`: round the buffer, in `u32` past
/// `u16::MAX`, and slot 0 of a buffer of no pages.
#[test]
fn a_slot_after_goes_round_the_buffer() {
    use komorebi_hal::cb::slot_after;
    assert_eq!(slot_after(2, 3, 8), 5);
    assert_eq!(slot_after(5, 3, 8), 0, "the last slot then slot 0");
    assert_eq!(slot_after(6, 5, 8), 3);
    assert_eq!(slot_after(7, 0, 8), 7);
    assert_eq!(slot_after(0, 0, 1), 0);
    // 65,000 + 40,000 passes u16::MAX: 105,000 % 65,535 = 39,465.
    assert_eq!(slot_after(65_000, 40_000, 65_535), 39_465);
    assert_eq!(slot_after(65_534, 65_535, u16::MAX), 65_534);
    assert_eq!(slot_after(3, 4, 0), 0, "no pages: slot 0");
    assert_eq!(slot_after(0, 0, 0), 0);
}

/// NoC1 runs the other way: its `(x, y)` is NoC0's `(w - 1 - x, h - 1 - y)`; off the grid, or on
/// a grid larger than the coordinate space (64 x 64), there is no NoC0 coordinate. Each of the
/// four refusals alone.
#[test]
fn a_noc1_node_mirrors_into_noc0_within_its_grid() {
    let g = (17, 12);
    assert_eq!(NocId::Noc1.noc0_of(xy(3, 2), g), Some(xy(13, 9)));
    assert_eq!(NocId::Noc0.noc0_of(xy(3, 2), g), Some(xy(3, 2)));
    assert_eq!(NocId::Noc1.noc0_of(xy(16, 11), g), Some(xy(0, 0)));
    assert_eq!(NocId::Noc1.noc0_of(xy(0, 0), g), Some(xy(16, 11)));
    assert_eq!(NocId::Noc0.noc0_of(xy(16, 11), g), Some(xy(16, 11)));
    for noc in [NocId::Noc0, NocId::Noc1] {
        assert_eq!(noc.noc0_of(xy(17, 0), g), None, "x off the grid");
        assert_eq!(noc.noc0_of(xy(0, 12), g), None, "y off the grid");
        assert_eq!(noc.noc0_of(xy(1, 2), (65, 12)), None, "too wide");
        assert_eq!(noc.noc0_of(xy(1, 2), (17, 65)), None, "too tall");
    }
    // The whole coordinate space is a grid.
    assert_eq!(NocId::Noc1.noc0_of(xy(63, 63), (64, 64)), Some(xy(0, 0)));
    assert_eq!(NocId::Noc1.noc0_of(xy(0, 1), (64, 64)), Some(xy(63, 62)));
    assert_eq!(NocId::Noc0.noc0_of(xy(63, 63), (64, 64)), Some(xy(63, 63)));
}

#[test]
fn a_node_gives_back_its_coordinates() {
    assert_eq!(xy(3, 5).get(), (3, 5));
    assert_eq!(xy(63, 0).get(), (63, 0));
}
