//! The sender's answer to a PDN drop notification (spec: `pdn.md`, "At the
//! sender").
//!
//! The host maps the notification to this socket by its 4-tuple
//! ([`crate::host::receive`]); here the socket retransmits the dropped
//! segment at once from its send buffer and, at most once per window of
//! data, halves its window ([`CongestionEvent::DropNotification`]: ssthresh
//! to half the flight, cwnd to ssthresh).
//!
//! "At most once per RTT" uses NewReno's `recover` point (RFC 6582): a
//! notification cuts the window only if the dropped segment was sent after
//! the last cut (its sequence number is at or above `recover`), and a cut
//! moves `recover` to the highest byte sent. Because the point is shared,
//! duplicate ACKs of the same window do not start a second reduction
//! either. The sender does not enter NewReno's partial-ACK loop: it would
//! resend, at each partial ACK, holes the notifications have already
//! repaired. A notification that is lost on the way leaves the loss to
//! duplicate ACKs or the retransmission timer, as without PDN.
//!
//! A lost retransmission. The spec answers every notification at once, so
//! a notification of a segment the sender already resent on a notification
//! (its retransmission was dropped too) resends it again: with
//! `[pdn] resend_lost_retransmits = true` (the default) that is what
//! happens. It keeps incast rounds free of timeouts, but a sender shut out
//! of a full port (a drop-tail lock-out) then puts its window on the wire
//! once per round trip at line rate while delivering nothing, and halving
//! cwnd does not slow it: the resends do not wait for the window
//! (`pdn-fairness` measures it). With `false` a segment is resent on a
//! notification once per timeout period and a lost retransmission is left
//! to the retransmission timer, as NewReno does with a lost fast
//! retransmit; a timeout forgets the resent segments, so a dropped timer
//! retransmission is answered at once again.

use super::TcpEndpoint;
use crate::net::pdn::NOTICE_BYTES;
use crate::sim::Core;
use crate::tcp::cc::{CongestionControl, CongestionEvent};
use crate::tcp::recovery::Segment;

impl TcpEndpoint {
    /// Use PDN: the MSS shrinks by a notification's size, so a frame that
    /// carries one still fits the MTU (the initial window keeps its segments).
    pub fn use_pdn(&mut self, resend_lost_retransmits: bool) {
        self.pdn_resend_lost = resend_lost_retransmits;
        let old = self.win.mss;
        let new = old.saturating_sub(NOTICE_BYTES as u64).max(1);
        self.win.cwnd = self.win.cwnd / old * new;
        self.win.mss = new;
        self.pdn = true;
    }

    /// A drop notification for the `len` bytes from `seq` arrived.
    pub fn on_drop_notification(&mut self, core: &mut Core, seq: u64, len: u64) {
        if !self.pdn || seq < self.snd_una || seq >= self.snd_max || len == 0 {
            return; // already acknowledged (or not ours to answer)
        }
        let len_bytes = len.min(self.snd_max - seq);
        if !self.pdn_resend_lost {
            let una = self.snd_una;
            self.pdn_resent.retain(|&s| s >= una);
            match self.pdn_resent.binary_search(&seq) {
                Ok(_) => {
                    // its notified retransmission was dropped too: the timer's
                    core.net.flows[self.tx_flow as usize].notified_left_to_timer += 1;
                    if !self.rto_armed() {
                        self.arm_rto(core);
                    }
                    return;
                }
                Err(at) => self.pdn_resent.insert(at, seq),
            }
        }
        core.net.flows[self.tx_flow as usize].notified_retransmits += 1;
        self.retransmit(core, Segment { seq, len_bytes });
        if seq >= self.recover {
            let s = self.event_sample(core.now);
            self.cc
                .on_congestion(&mut self.win, CongestionEvent::DropNotification, &s);
            self.recover = self.snd_max;
            core.net.flows[self.tx_flow as usize].notified_reductions += 1;
        }
        if !self.rto_armed() {
            self.arm_rto(core);
        }
    }
}
