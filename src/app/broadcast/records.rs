//! The broadcast's own records, for the host's reports: the first give-up of each broadcast of a
//! command, which every core keeps in its broadcast areas (`komorebi_broadcast::area`), and the
//! session a broadcast run opens (the broadcast handler and its handshake peer loaded, these
//! records read).

use komorebi_broadcast::area::{self, GiveUpRecord};
use komorebi_kernel::abi::GiveUpCode;
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
            let base = area::area(id);
            let w = [
                word(base + area::GIVE_UP_WHERE)?,
                word(base + area::GIVE_UP_BLOCK)?,
                word(base + area::GIVE_UP_SEQUENCE)?,
            ];
            // A running tile may be writing the record: it clears the where word first and
            // writes it last, so the same where word after the block and sequence means they
            // are its record's (a record being written is read at the next report).
            if word(base + area::GIVE_UP_WHERE)? != w[0] {
                continue;
            }
            if let Some(g) = GiveUpRecord::from_words(w).filter(|g| g.sequence == sequence) {
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

    /// A data-movement kernel's broadcast give-up is the one its area holds.
    fn repeats(&self, code: GiveUpCode) -> bool {
        matches!(code, GiveUpCode::Broadcast(_))
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

    #[test]
    fn a_record_read_while_the_tile_writes_it_is_left_for_the_next_report() {
        let base = area::area(0);
        let (valid, done) = (2u32, 1u32); // broadcast_valid, broadcast_done of broadcast 0
        let at = |w| base + w;
        // Whole: the where word the same before and after.
        let whole = read(
            &[
                (at(area::GIVE_UP_WHERE), &[done]),
                (at(area::GIVE_UP_BLOCK), &[5]),
                (at(area::GIVE_UP_SEQUENCE), &[12]),
            ],
            12,
        );
        assert_eq!(
            whole.iter().map(|g| (g.place, g.block)).collect::<Vec<_>>(),
            [("broadcast_done", 5)]
        );
        // An old record's place, then the new block and sequence as the tile writes them (its
        // where word cleared, then the new one): not taken for command 12's.
        for after in [0, done] {
            let torn = read(
                &[
                    (at(area::GIVE_UP_WHERE), &[valid, after]),
                    (at(area::GIVE_UP_BLOCK), &[5]),
                    (at(area::GIVE_UP_SEQUENCE), &[12]),
                ],
                12,
            );
            assert!(torn.is_empty(), "{torn:?}");
        }
    }
}
