//! The sender's answer to a PDN drop notification (spec: `pdn.md`, "At the
//! sender").
//!
//! The host maps the notification to this socket by its 4-tuple
//! ([`crate::host::receive`]); here the socket resends the dropped segment
//! from its send buffer and, at most once per window of data, halves its
//! window ([`CongestionEvent::DropNotification`]: ssthresh to half the
//! flight, cwnd to ssthresh).
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
//! When to resend (`[pdn] resend`). The spec resends at once; it does not
//! say what happens when the resend is dropped too (docs/pdn.md measures
//! each rule):
//! - `at-once` (default, the spec taken literally): every notification is
//!   answered at once, a notification of a lost resend too, whatever the
//!   window. Incast rounds end without timeouts, but each segment may be
//!   resent dozens of times, and a sender shut out of a full port puts its
//!   window on the wire once per round trip at line rate while delivering
//!   nothing: halving cwnd does not slow resends that ignore it.
//! - `once`: at once, but a segment once per timeout period; a notification
//!   of its lost resend is counted (`notified_left_to_timer`) and left to
//!   the retransmission timer, as NewReno leaves a lost fast retransmit. A
//!   timeout forgets the resent segments.
//! - `window`: a notified segment has left the network, so it leaves the
//!   flight; it is resent as soon as the flight (bytes sent and not
//!   acknowledged, less those notified lost and not yet resent and those
//!   known delivered above the first hole: SACKed, or a segment per
//!   duplicate ACK) leaves room for it in cwnd, at the notification or at a
//!   later ACK, oldest first.
//!   A notification of data sent before the last cut cuts again once a
//!   smoothed RTT has passed since it: resends that keep being dropped
//!   halve the window every round trip, down to its floor. This is
//!   NewReno's conservation of packets with the switch's exact loss report
//!   in place of duplicate ACKs.

use super::TcpEndpoint;
use crate::net::pdn::{PdnResend, NOTICE_BYTES};
use crate::sim::Core;
use crate::tcp::cc::{CongestionControl, CongestionEvent};
use crate::tcp::recovery::Segment;

impl TcpEndpoint {
    /// Use PDN: the MSS shrinks by a notification's size, so a frame that
    /// carries one still fits the MTU (the initial window keeps its segments).
    pub fn use_pdn(&mut self, resend: PdnResend) {
        self.pdn_resend = resend;
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
        let una = self.snd_una;
        self.pdn_segs.retain(|&(s, _)| s >= una);
        let known = self.pdn_segs.binary_search_by_key(&seq, |&(s, _)| s);
        match (self.pdn_resend, known) {
            (PdnResend::AtOnce, _) => self.pdn_resend_now(core, seq, len_bytes),
            (PdnResend::Once, Ok(_)) => {
                // its notified resend was dropped too: the timer's
                core.net.flows[self.tx_flow as usize].notified_left_to_timer += 1;
            }
            (PdnResend::Once, Err(at)) => {
                self.pdn_segs.insert(at, (seq, len_bytes));
                self.pdn_resend_now(core, seq, len_bytes);
            }
            (PdnResend::Window, Ok(_)) => {} // already waiting
            (PdnResend::Window, Err(at)) => {
                self.pdn_segs.insert(at, (seq, len_bytes));
                self.pdn_lost_bytes += len_bytes;
            }
        }
        let srtt = self.rtt.srtt().unwrap_or_else(|| self.rtt.rto());
        let again =
            self.pdn_resend == PdnResend::Window && core.now.saturating_since(self.pdn_cut_at) >= srtt;
        if seq >= self.recover || again {
            let s = self.event_sample(core.now);
            self.cc
                .on_congestion(&mut self.win, CongestionEvent::DropNotification, &s);
            self.recover = self.snd_max;
            self.pdn_cut_at = core.now;
            core.net.flows[self.tx_flow as usize].notified_reductions += 1;
        }
        if self.pdn_lost_bytes > 0 {
            self.pdn_resend_waiting(core);
        }
        if !self.rto_armed() {
            self.arm_rto(core);
        }
    }

    fn pdn_resend_now(&mut self, core: &mut Core, seq: u64, len_bytes: u64) {
        core.net.flows[self.tx_flow as usize].notified_retransmits += 1;
        self.retransmit(core, Segment { seq, len_bytes });
    }

    /// `window`: resend the notified segments the window has room for,
    /// oldest first (those an ACK covered are dropped from the list).
    #[cold]
    #[inline(never)]
    pub(super) fn pdn_resend_waiting(&mut self, core: &mut Core) {
        let una = self.snd_una;
        let mut lost = 0;
        self.pdn_segs.retain(|&(s, l)| {
            let keep = s >= una;
            lost += if keep { l } else { 0 };
            keep
        });
        self.pdn_lost_bytes = lost;
        let mut sent = 0;
        while let Some(&(seq, len_bytes)) = self.pdn_segs.get(sent) {
            let out = self.pdn_lost_bytes + self.recovery.delivered_above_hole(self.win.mss);
            let in_flight = (self.snd_nxt - self.snd_una).saturating_sub(out);
            if in_flight + len_bytes > self.win.cwnd {
                break;
            }
            core.net.flows[self.tx_flow as usize].notified_retransmits += 1;
            core.net.flows[self.tx_flow as usize].retransmits += 1;
            self.send_data(core, seq, len_bytes);
            self.pdn_lost_bytes -= len_bytes;
            sent += 1;
        }
        self.pdn_segs.drain(..sent);
    }

    /// A timeout resends from the first unacknowledged byte: forget the
    /// notified segments (a notification of a timer resend is answered anew).
    pub(super) fn pdn_forget(&mut self) {
        self.pdn_segs.clear();
        self.pdn_lost_bytes = 0;
    }
}
