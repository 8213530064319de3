//! What TCP needs from the host it runs on: [`TcpHost`].
//!
//! An endpoint is handed the context ([`Ctx`]: clock, events, network) and
//! its host, as a type implementing this trait (the host stack,
//! `crate::host::Stack`). Through it the endpoint sends (the host's egress:
//! XCo's coordinator queue on a coordinated host, else the NIC queue), asks
//! whether its egress has room and waits for it, asks TCP Small Queues
//! whether it may send, reads its TCP settings and raises notes for its
//! application. TCP never names the host stack, XCo, the driver or an
//! application: the trait is the seam, resolved at compile time (one
//! implementation, no virtual call on the packet path).

use super::note::AppNote;
use super::select::TcpSettings;
use crate::ctx::Ctx;
use crate::net::packet::PktId;
use crate::net::pdn::PdnResend;
use crate::stats::FlowStats;
use xco_core::{Dur, Time};

/// What a TCP endpoint counts in the statistics of one of its flows (its
/// sending flow, or for [`TcpCount::Delivered`] its receiving one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpCount {
    /// The application handed it this many more bytes to send.
    Written(u64),
    /// This many more bytes arrived in order (the flow ends when all written arrived).
    Delivered(u64),
    /// A segment was sent again (any cause).
    Retransmit,
    /// Fast retransmit / fast recovery began.
    FastRetransmit,
    /// The retransmission timer expired.
    Timeout,
    /// A segment was resent on a PDN drop notification.
    NotifiedRetransmit,
    /// A PDN drop notification cut the window.
    NotifiedReduction,
    /// A notified resend was itself dropped: left to the timer.
    NotifiedLeftToTimer,
}

/// The host a TCP endpoint runs on.
pub trait TcpHost {
    /// The TCP settings of the run (by index, see [`TcpSettings`]).
    fn tcp(&self) -> &TcpSettings;
    /// The TCP settings, to add or choose some.
    fn tcp_mut(&mut self) -> &mut TcpSettings;
    /// The run's seed (route hashing of new connections).
    fn seed(&self) -> u64;
    /// Tell the application `note.app()` something (after the event).
    fn note(&mut self, note: AppNote);
    /// Start the statistics of a new flow: its id.
    fn open_flow(&mut self, cx: &mut Ctx, stats: FlowStats) -> u32;
    /// Count `c` in flow `flow`'s statistics: the one way TCP writes them.
    fn count(&mut self, cx: &mut Ctx, flow: u32, c: TcpCount);
    /// PDN's resend rule if `host` runs PDN (its sockets answer drop notifications).
    fn pdn(&self, cx: &Ctx, host: u32) -> Option<PdnResend>;
    /// Hand packet `pkt`, which the endpoint built, to its host's egress.
    fn send(&mut self, cx: &mut Ctx, pkt: PktId);
    /// True if `host`'s egress can take a frame of `frame` bytes for `dst` now.
    fn egress_has_room(&mut self, cx: &mut Ctx, host: u32, dst: u32, frame: u32) -> bool;
    /// Endpoint `ep` on `host` waits for room in its egress: it is woken
    /// (its `output` called) when there is some.
    fn egress_block(&mut self, cx: &mut Ctx, host: u32, ep: u32);
    /// True when TCP Small Queues are on.
    fn tsq_on(&self) -> bool;
    /// TCP Small Queues: `Some(t)` if endpoint `ep` on `host` holds its
    /// limit in its host until `t` (its window and RTT set the limit).
    #[allow(clippy::too_many_arguments)]
    fn tsq_hold(
        &mut self,
        cx: &mut Ctx,
        host: u32,
        ep: u32,
        frame_bytes: u32,
        cwnd_bytes: u64,
        ssthresh_bytes: u64,
        srtt: Option<Dur>,
    ) -> Option<Time>;
}
