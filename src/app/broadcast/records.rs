//! The broadcast's own records, for the host's reports: the first give-up of each broadcast of a
//! command, which every core keeps in its broadcast areas (`komorebi_broadcast::area`), and the
//! session a broadcast run opens (the broadcast handler and its handshake peer loaded, these
//! records read).

use komorebi_broadcast::area::{self, GiveUpRecord};
use komorebi_kernel::abi::{GiveUpCode, KernelGiveUp};
use komorebi_kernel::{BroadcastHandler, HandshakeHandler};

use crate::host::session::{Backend, CoreGiveUp, ProgramRecords, Session, SessionError};

/// Reads the give-ups of both broadcast areas of a tile.
#[derive(Copy, Clone, Debug, Default)]
pub struct BroadcastRecords;

impl ProgramRecords for BroadcastRecords {
    fn give_ups(
        &self,
        core: [u8; 2],
        sequence: u32,
        word: &mut dyn FnMut(u32) -> Result<u32, SessionError>,
        out: &mut Vec<CoreGiveUp>,
    ) -> Result<(), SessionError> {
        for id in 0..area::MAX_BROADCASTS {
            // (A running tile may be writing it: `read` takes it whole or not at all.)
            let record = GiveUpRecord::read(id, &mut *word)?;
            if let Some(g) = record.filter(|g| g.sequence == sequence) {
                out.push(CoreGiveUp {
                    core,
                    place: g.place.name(),
                    broadcast: g.broadcast,
                    block: g.block,
                    kernel: "broadcast area",
                });
            }
        }
        Ok(())
    }

    /// A data-movement kernel's broadcast give-up is the one its area holds, unless its
    /// broadcast has no area (a refused id of 2 or more records in none: the kernel's own
    /// give-up is then the only one).
    fn repeats(&self, give_up: &KernelGiveUp) -> bool {
        matches!(give_up.code, GiveUpCode::Broadcast(_)) && give_up.broadcast < area::MAX_BROADCASTS
    }
}

/// Opens `backend` for broadcast runs: the broadcast handler (id 1) and its handshake peer (id 2)
/// loaded (a backend that runs firmware images runs the broadcast handler the images carry), and
/// the broadcast areas read into every report.
pub fn open_session(backend: Backend) -> Result<Session, SessionError> {
    Session::open_with(
        backend,
        || (BroadcastHandler::new(), HandshakeHandler),
        Box::new(BroadcastRecords),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::session::ProgramRecords;
    use std::collections::HashMap;

    /// The give-ups read from areas whose words read, call after call, as `script` says (the
    /// last value again once a word's list is used up; words not in it read 0).
    fn read(script: &[(u32, &[u32])], sequence: u32) -> Vec<CoreGiveUp> {
        let mut left: HashMap<u32, Vec<u32>> =
            script.iter().map(|&(a, v)| (a, v.to_vec())).collect();
        let mut word = |addr: u32| {
            let v = left
                .get_mut(&addr)
                .map_or(0, |v| if v.len() > 1 { v.remove(0) } else { v[0] });
            Ok(v)
        };
        let mut out = Vec::new();
        BroadcastRecords
            .give_ups([3, 4], sequence, &mut word, &mut out)
            .unwrap();
        out
    }

    /// A kernel's broadcast give-up is left out of the report because its area holds it; a
    /// refused id of 2 or more has no area (da821cf), so its kernel's give-up is kept.
    #[test]
    fn a_broadcast_give_up_repeats_its_area_unless_its_id_has_none() {
        use komorebi_broadcast::area::Where;
        let g = |code, broadcast| KernelGiveUp {
            code,
            broadcast,
            block: 0,
        };
        let begin = GiveUpCode::Broadcast(Where::BroadcastBegin);
        assert!(BroadcastRecords.repeats(&g(begin, 0)));
        assert!(BroadcastRecords.repeats(&g(begin, 1)));
        assert!(!BroadcastRecords.repeats(&g(begin, 2)));
        assert!(!BroadcastRecords.repeats(&g(begin, 255)));
        assert!(!BroadcastRecords.repeats(&g(GiveUpCode::ComputeTimedOut, 0)));
    }

    #[test]
    fn a_record_read_while_the_tile_writes_it_is_read_again_and_never_mixed() {
        let base = area::area(0);
        // broadcast_done and broadcast_valid of broadcast 0, of commands 7 and 12.
        let (done, valid) = (1u32, 2u32);
        let of = |place: u32, seq: u32| place | seq << 16;
        let at = |w| base + w;
        let places = |script: &[(u32, &[u32])]| {
            read(script, 12)
                .iter()
                .map(|g| (g.place, g.block))
                .collect::<Vec<_>>()
        };
        // Whole: the where word the same before and after.
        assert_eq!(
            places(&[
                (at(area::GIVE_UP_WHERE), &[of(done, 12)]),
                (at(area::GIVE_UP_BLOCK), &[5]),
                (at(area::GIVE_UP_SEQUENCE), &[12]),
            ]),
            [("broadcast_done", 5)]
        );
        // Command 7's place, then command 12's block and sequence as the tile writes them: read
        // again, the record the tile finished, never the old place with the new block; also
        // when both records give up at the same place (the where words differ in their
        // sequence half).
        for old in [of(valid, 7), of(done, 7)] {
            assert_eq!(
                places(&[
                    (at(area::GIVE_UP_WHERE), &[old, of(done, 12)]),
                    (at(area::GIVE_UP_BLOCK), &[4, 5]),
                    (at(area::GIVE_UP_SEQUENCE), &[12]),
                ]),
                [("broadcast_done", 5)],
                "{old:#x}"
            );
        }
        // Cleared and not yet written: no record.
        assert!(
            places(&[
                (at(area::GIVE_UP_WHERE), &[of(valid, 7), 0]),
                (at(area::GIVE_UP_BLOCK), &[5]),
                (at(area::GIVE_UP_SEQUENCE), &[12]),
            ])
            .is_empty()
        );
        // Still changing after three reads: none.
        let a = of(done, 12);
        assert!(
            places(&[
                (at(area::GIVE_UP_WHERE), &[a, 0, a, 0, a, 0]),
                (at(area::GIVE_UP_BLOCK), &[5]),
                (at(area::GIVE_UP_SEQUENCE), &[12]),
            ])
            .is_empty()
        );
    }
}
