//! A core's part in a broadcast (sender, receiver, neither) and what that part needs: the
//! sender its multicast rectangle, a receiver the address of its DONE-BY word at the sender.

use komorebi_hal::control::ControlBlock;
use komorebi_hal::{NocAddr, Rect, Xy};

use super::cause::{Cause, ctrl_cause};
use crate::area;
use crate::args::{ArgsError, BroadcastArgs};

/// This core's part in the broadcast, with what the part needs.
#[derive(Copy, Clone, Debug)]
pub(super) enum Part {
    Sender { rect: Option<Rect>, receivers: u8 },
    Receiver { done_dst: NocAddr },
    Excluded,
}

fn xy(p: (u8, u8)) -> Result<Xy, Cause> {
    Xy::new(p.0, p.1).map_err(|_| Cause::WrongCore)
}

impl Part {
    /// The part of a core included in the broadcast `args` describe (checked words).
    pub(super) fn of<K: ControlBlock>(ctrl: &mut K, args: &BroadcastArgs) -> Result<Self, Cause> {
        Ok(if args.is_sender() {
            let rect = if args.receivers == 0 {
                None
            } else {
                Some(
                    Rect::new(xy(args.start)?, xy(args.end)?)
                        .map_err(|_| Cause::BadWords(ArgsError::Reversed))?,
                )
            };
            Part::Sender {
                rect,
                receivers: args.receivers,
            }
        } else {
            let dst = ctrl
                .addr(area::done_by(args.broadcast, args.rank))
                .map_err(ctrl_cause)?;
            Part::Receiver {
                done_dst: NocAddr::l1(xy(args.sender)?, dst),
            }
        })
    }
    /// A receiver's DONE-BY word at the sender, its markers' destination.
    pub(super) fn done_dst(&self) -> Option<NocAddr> {
        match *self {
            Part::Receiver { done_dst } => Some(done_dst),
            _ => None,
        }
    }
}
