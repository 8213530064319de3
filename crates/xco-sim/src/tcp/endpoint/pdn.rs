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
//!   in place of duplicate ACKs. It does not bound a storm: a drop is
//!   reported within one notification loop (tens of microseconds), far
//!   sooner than an RTT, so the window's worth of resends circulates once
//!   per loop.
//! - `window-rtt`: `window`, and a segment whose notified resend was dropped
//!   too waits one smoothed RTT from that notification before it is resent
//!   again (the endpoint's pacing timer wakes it), so a window's worth of
//!   resends circulates at most once per RTT.

use super::TcpEndpoint;
use crate::ctx::Ctx;
use crate::engine::Event;
use crate::net::pdn::{PdnResend, NOTICE_BYTES};
use crate::tcp::cc::{CongestionControl, CongestionEvent};
use crate::tcp::host::{TcpCount, TcpHost};
use crate::tcp::recovery::Segment;
use xco_core::Time;

/// A notified segment waiting for the window (`window`, `window-rtt`).
#[derive(Clone, Copy, Debug)]
struct Waiting {
    seq: u64,
    len_bytes: u64,
    /// Not resent before this time (`window-rtt`: a lost resend's wait).
    not_before: Time,
}

/// One endpoint's PDN sender state.
#[derive(Clone, Debug, Default)]
pub(super) struct PdnSender {
    /// PDN on: notifications are answered.
    on: bool,
    rule: PdnResend,
    /// `once`, `window-rtt`: segments (first byte) resent on a notification
    /// since the last timeout, ascending.
    resent: Vec<u64>,
    /// `window`, `window-rtt`: notified segments not yet resent, ascending.
    waiting: Vec<Waiting>,
    /// Bytes of `waiting` (out of the network, not resent).
    pub(super) waiting_bytes: u64,
    /// `window`, `window-rtt`: when the window was last halved.
    cut_at: Time,
}

impl PdnSender {
    /// True if `seq` was resent on a notification (and remember it if not).
    fn resent_before(&mut self, seq: u64, snd_una: u64) -> bool {
        self.resent.retain(|&s| s >= snd_una);
        match self.resent.binary_search(&seq) {
            Ok(_) => true,
            Err(at) => {
                self.resent.insert(at, seq);
                false
            }
        }
    }

    /// Queue a notified segment (unless it already waits).
    fn wait(&mut self, w: Waiting) {
        if let Err(at) = self.waiting.binary_search_by_key(&w.seq, |x| x.seq) {
            self.waiting.insert(at, w);
            self.waiting_bytes += w.len_bytes;
        }
    }
}

impl TcpEndpoint {
    /// Use PDN: the MSS shrinks by a notification's size, so a frame that
    /// carries one still fits the MTU (the initial window keeps its segments).
    pub fn use_pdn(&mut self, rule: PdnResend) {
        self.pdn.rule = rule;
        let old = self.win.mss;
        let new = old.saturating_sub(NOTICE_BYTES as u64).max(1);
        self.win.cwnd = self.win.cwnd / old * new;
        self.win.mss = new;
        self.pdn.on = true;
    }

    /// A drop notification for the `len` bytes from `seq` arrived.
    pub fn on_drop_notification<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, seq: u64, len: u64) {
        if !self.pdn.on || seq < self.snd_una || seq >= self.snd_max || len == 0 {
            return; // already acknowledged (or not ours to answer)
        }
        let len_bytes = len.min(self.snd_max - seq);
        let srtt = self.rtt.srtt().unwrap_or_else(|| self.rtt.rto());
        let una = self.snd_una;
        match self.pdn.rule {
            PdnResend::AtOnce => self.pdn_resend_now(cx, h, seq, len_bytes),
            PdnResend::Once => {
                if self.pdn.resent_before(seq, una) {
                    // its notified resend was dropped too: the timer's
                    h.count(cx, self.tx_flow, TcpCount::NotifiedLeftToTimer);
                } else {
                    self.pdn_resend_now(cx, h, seq, len_bytes);
                }
            }
            PdnResend::Window => self.pdn.wait(Waiting {
                seq,
                len_bytes,
                not_before: Time::ZERO,
            }),
            PdnResend::WindowRtt => {
                let lost_resend = self.pdn.resent.binary_search(&seq).is_ok();
                let not_before = if lost_resend { cx.now + srtt } else { Time::ZERO };
                self.pdn.wait(Waiting {
                    seq,
                    len_bytes,
                    not_before,
                });
            }
        }
        let windowed = matches!(self.pdn.rule, PdnResend::Window | PdnResend::WindowRtt);
        let again = windowed && cx.now.saturating_since(self.pdn.cut_at) >= srtt;
        if seq >= self.recover || again {
            let s = self.event_sample(cx.now);
            self.cc
                .on_congestion(&mut self.win, CongestionEvent::DropNotification, &s);
            self.recover = self.snd_max;
            self.pdn.cut_at = cx.now;
            h.count(cx, self.tx_flow, TcpCount::NotifiedReduction);
        }
        if self.pdn.waiting_bytes > 0 {
            self.pdn_resend_waiting(cx, h);
        }
        if !self.rto_armed() {
            self.arm_rto(cx, h);
        }
    }

    fn pdn_resend_now<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, seq: u64, len_bytes: u64) {
        h.count(cx, self.tx_flow, TcpCount::NotifiedRetransmit);
        self.retransmit(cx, h, Segment { seq, len_bytes });
    }

    /// `window`, `window-rtt`: resend the waiting segments that are due and
    /// that the window has room for, oldest first (those an ACK covered
    /// leave the list); wake at the next due time if one must wait.
    #[cold]
    #[inline(never)]
    pub(super) fn pdn_resend_waiting<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        let una = self.snd_una;
        self.pdn.waiting.retain(|w| w.seq >= una);
        self.pdn.waiting_bytes = self.pdn.waiting.iter().map(|w| w.len_bytes).sum();
        let mut next_due = Time::NEVER;
        let mut i = 0;
        while let Some(&w) = self.pdn.waiting.get(i) {
            if w.not_before > cx.now {
                next_due = next_due.min(w.not_before);
                i += 1;
                continue;
            }
            let out = self.pdn.waiting_bytes + self.recovery.delivered_above_hole(self.win.mss);
            let in_flight = (self.snd_nxt - self.snd_una).saturating_sub(out);
            // window-rtt: the first hole goes when due whatever the window
            // (nothing above it can be ACKed before it is filled)
            let first_hole = w.seq == una && self.pdn.rule == PdnResend::WindowRtt;
            if in_flight + w.len_bytes > self.win.cwnd && !first_hole {
                break;
            }
            self.pdn.waiting.remove(i);
            self.pdn.waiting_bytes -= w.len_bytes;
            if self.pdn.rule == PdnResend::WindowRtt {
                self.pdn.resent_before(w.seq, una);
            }
            self.pdn_resend_now(cx, h, w.seq, w.len_bytes);
        }
        if next_due != Time::NEVER {
            self.pace_timer
                .arm_earlier(&mut cx.ev, next_due, Event::TcpPace(self.id));
        }
    }

    /// A timeout resends from the first unacknowledged byte: forget the
    /// notified segments (a notification of a timer resend is answered anew).
    pub(super) fn pdn_forget(&mut self) {
        self.pdn.resent.clear();
        self.pdn.waiting.clear();
        self.pdn.waiting_bytes = 0;
    }
}
