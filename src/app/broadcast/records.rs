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
