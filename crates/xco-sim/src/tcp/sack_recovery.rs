//! SACK-based loss recovery (RFC 6675), the [`super::recovery::Recovery::Sack`] variant.
//!
//! The scoreboard ([`Scoreboard`]) records what the receiver SACKed. A
//! duplicate ACK is one that SACKs new data (RFC 6675 §2); recovery starts
//! on the DupThresh-th of them or as soon as the first unacknowledged
//! segment counts as lost (`IsLost(HighACK + 1)`, §5 step 3(b)). It then
//! keeps `cwnd` at ssthresh (no inflation) and sends while
//! `cwnd - pipe >= 1 SMSS`, choosing each segment by `NextSeg` (§4): a lost
//! hole first, new data next, then any unSACKed hole below the highest SACK,
//! and once per episode a rescue retransmission of the highest unSACKed
//! segment. Several holes are repaired in one episode, each by one
//! retransmission, and recovery ends when the cumulative ACK reaches
//! `RecoveryPoint` (the endpoint's `recover`).
//!
//! The endpoint drives it: [`SackRecovery::on_sack`] on every arriving SACK
//! option, [`SackRecovery::set_pipe`] before it sends during recovery, then
//! [`SackRecovery::next_seg`] and [`SackRecovery::on_sent`] per segment.
//! A D-SACK block ([`SackRecovery::on_dsack`], RFC 2883 §4) is counted
//! and grows RACK's reordering window (`super::rack`); it
//! undoes nothing (no undo of a spurious recovery). With `prr_on` the
//! endpoint sets cwnd per ACK by proportional rate reduction (RFC 6937,
//! `super::prr`); without it cwnd = ssthresh for the whole episode, as
//! RFC 6675 writes it. Limited Transmit (RFC 3042) is the endpoint's.

use super::loss::{LossCtx, NewAckStep, Segment};
use super::prr::Prr;
use super::rack::Rack;
use super::sack::{dsack_block, Scoreboard};
use crate::net::packet::SackOption;

/// What `NextSeg` chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSeg {
    /// Retransmit this segment (rules 1 and 3).
    Retransmit(Segment),
    /// Send one segment of new data (rule 2).
    NewData,
    /// The rescue retransmission (rule 4): does not move HighRxt.
    Rescue(Segment),
}

/// RFC 6675 recovery state.
#[derive(Clone, Debug, Default)]
pub struct SackRecovery {
    /// The SACKed ranges.
    pub scoreboard: Scoreboard,
    /// Duplicate ACKs (ACKs with new SACK information) counted.
    pub dupacks: u32,
    /// DupThresh (3).
    pub dupack_threshold: u32,
    /// One past the highest byte retransmitted in this episode (HighRxt + 1).
    pub high_rxt: u64,
    /// RescueRxt + 1: a rescue retransmission is allowed while `snd_una` is above it.
    pub rescue_rxt: u64,
    /// The pipe estimate (RFC 6675 `SetPipe`, then plus what was sent).
    pub pipe: u64,
    /// RACK's time-based loss detection (RFC 8985 §6), when on.
    pub rack: Option<Rack>,
    /// ACKs received with a D-SACK block (RFC 2883 §4).
    pub dsacks_received: u64,
    /// Proportional rate reduction (RFC 6937) sets cwnd during recovery.
    pub prr_on: bool,
    /// This episode's PRR counters (when `prr_on`).
    pub prr: Prr,
}

impl SackRecovery {
    /// A new instance with `dupack_threshold`, with RACK if `rack`.
    pub fn new(dupack_threshold: u32, rack: bool) -> SackRecovery {
        SackRecovery {
            dupack_threshold,
            rack: rack.then(Rack::new),
            ..SackRecovery::default()
        }
    }

    /// Record an ACK's SACK blocks; returns the bytes newly SACKed.
    pub fn on_sack(&mut self, opt: &SackOption, snd_una: u64, snd_max: u64) -> u64 {
        let mut newly = 0;
        for &(s, e) in opt.used() {
            newly += self.scoreboard.add(s, e, snd_una, snd_max);
        }
        newly
    }

    /// RFC 2883 §4: is there a D-SACK block in `opt`, an ACK of `ack`? If
    /// so, count it and tell RACK (its reordering window may grow); `probe_end` is where
    /// an outstanding tail loss probe ends, `mss` the sender's MSS (a
    /// one-segment D-SACK ending there reports the probe's duplicate).
    pub fn on_dsack(&mut self, opt: &SackOption, ack: u64, probe_end: Option<u64>, mss: u64) -> bool {
        let Some((s, e)) = dsack_block(opt, ack) else {
            return false;
        };
        self.dsacks_received += 1;
        if let Some(r) = self.rack.as_mut() {
            r.on_dsack(probe_end == Some(e) && e - s <= mss);
        }
        true
    }

    /// Start PRR's episode (`prr_on`): the window was `prior_cwnd_bytes`
    /// before the congestion control reduced it, and `fast_rexmit_bytes`
    /// were already retransmitted by [`Self::enter`].
    pub fn prr_start(&mut self, cx: &LossCtx, prior_cwnd_bytes: u64, fast_rexmit_bytes: u64) {
        let mark = self.lost_below(cx);
        self.prr = Prr::start(prior_cwnd_bytes, mark);
        self.prr.on_sent(fast_rexmit_bytes);
    }

    /// PRR after an ACK in recovery that reported `delivered_bytes`
    /// delivered (cumulatively or newly SACKed): sets cwnd = pipe + sndcnt
    /// (`super::prr`); an ACK that delivered nothing changes nothing.
    pub fn prr_on_ack(&mut self, cx: &mut LossCtx, delivered_bytes: u64, una_advanced: bool) {
        self.set_pipe(cx);
        let mark = self.lost_below(cx);
        let newly_lost = mark > self.prr.lost_mark;
        self.prr.lost_mark = self.prr.lost_mark.max(mark);
        let (ssthresh, mss) = (cx.win.ssthresh, cx.win.mss);
        if let Some(cwnd) = self.prr.cwnd_after_ack(
            delivered_bytes,
            self.pipe,
            ssthresh,
            mss,
            una_advanced,
            newly_lost,
        ) {
            cx.win.cwnd = cwnd;
        }
    }

    /// The lost boundary of RFC 6675's `IsLost` for this sender, or
    /// RACK's if that is higher.
    #[inline]
    fn lost_below(&self, cx: &LossCtx) -> u64 {
        let b = self
            .scoreboard
            .lost_below(cx.snd_una, cx.win.mss, self.dupack_threshold);
        match &self.rack {
            Some(r) => b.max(r.lost_below),
            None => b,
        }
    }

    /// RACK's detection (RFC 8985 §6.2) at `now`, with the reordering
    /// window for this sender's state; true if it finds the first
    /// unacknowledged segment lost. No-op without RACK.
    pub fn rack_detect(&mut self, cx: &LossCtx, now: xco_core::Time, srtt: Option<xco_core::Dur>) -> bool {
        let limit = (self.dupack_threshold.max(1) as u64 - 1) * cx.win.mss;
        let no_wait = *cx.in_recovery || self.scoreboard.sacked_bytes() > limit;
        let Some(r) = self.rack.as_mut() else {
            return false;
        };
        let reo = r.reo_wnd(no_wait, srtt);
        r.detect_loss(now, cx.snd_una, reo) > cx.snd_una
    }

    pub(super) fn on_new_ack(&mut self, cx: LossCtx, _acked_bytes: u64) -> NewAckStep {
        self.scoreboard.advance(cx.snd_una);
        self.dupacks = 0;
        if *cx.in_recovery && cx.snd_una >= *cx.recover {
            // (A): the episode ends; cwnd stays at ssthresh
            *cx.in_recovery = false;
            cx.win.cwnd = cx.win.ssthresh;
            if let Some(r) = self.rack.as_mut() {
                r.on_recovery_end();
            }
        }
        NewAckStep {
            retransmit: None,
            restart_rto: true,
        }
    }

    pub(super) fn on_dup_ack(&mut self, cx: LossCtx, ack: u64, newly_sacked: u64) -> bool {
        if newly_sacked == 0 || *cx.in_recovery {
            return false; // not a duplicate by RFC 6675 §2, or (B) handles it
        }
        self.dupacks += 1;
        // RFC 6582 §3.2 step 1 as in NewReno: not again for the same window
        (self.dupacks >= self.dupack_threshold || self.lost_below(&cx) > cx.snd_una) && ack >= *cx.recover
    }

    pub(super) fn enter(&mut self, cx: LossCtx) -> Option<Segment> {
        // (4.1) RecoveryPoint = HighData; (4.2) the congestion control set cwnd = ssthresh
        *cx.recover = cx.snd_max;
        *cx.in_recovery = true;
        // (4.3) retransmit the segment from HighACK + 1
        let (s, e) = self.scoreboard.first_hole(cx.snd_una, cx.snd_max)?;
        let seg = Segment {
            seq: s,
            len_bytes: (e - s).min(cx.win.mss),
        };
        self.high_rxt = s + seg.len_bytes;
        self.rescue_rxt = self.high_rxt;
        Some(seg)
    }

    pub(super) fn on_rto(&mut self, cx: LossCtx) {
        *cx.in_recovery = false;
        self.dupacks = 0;
        self.high_rxt = cx.snd_una;
        *cx.recover = cx.snd_max;
        if let Some(r) = self.rack.as_mut() {
            r.on_rto(cx.snd_max);
        }
    }

    /// RFC 6675 `SetPipe`.
    pub fn set_pipe(&mut self, cx: &LossCtx) {
        let lb = self.lost_below(cx);
        self.pipe = self.scoreboard.pipe(cx.snd_una, cx.snd_max, self.high_rxt, lb);
        // a retransmission RACK found lost again has left the network
        if let Some(r) = &self.rack {
            self.pipe = self.pipe.saturating_sub(r.relost_bytes());
        }
    }

    /// RFC 6675 `NextSeg`, if `cwnd - pipe >= 1 SMSS`; `new_data` says
    /// whether unsent data exists that the receiver's window allows.
    pub fn next_seg(&self, cx: &LossCtx, new_data: bool) -> Option<NextSeg> {
        let mss = cx.win.mss;
        if cx.win.cwnd < self.pipe + mss {
            return None;
        }
        let from = self.high_rxt.max(cx.snd_una);
        let seg = |(s, e): (u64, u64)| Segment {
            seq: s,
            len_bytes: (e - s).min(mss),
        };
        // (0) a retransmission RACK found lost again (RFC 6675 never resends
        // below HighRxt; Linux's RACK marks it lost and resends it)
        if let Some((s, e)) = self.rack.as_ref().and_then(|r| r.first_relost()) {
            if e > cx.snd_una {
                return Some(NextSeg::Retransmit(seg((s.max(cx.snd_una), e))));
            }
        }
        // (1) the first lost unSACKed segment above HighRxt
        if let Some(h) = self.scoreboard.first_hole(from, self.lost_below(cx)) {
            return Some(NextSeg::Retransmit(seg(h)));
        }
        // (2) new data
        if new_data {
            return Some(NextSeg::NewData);
        }
        // (3) any unSACKed segment above HighRxt below the highest SACK
        let top = self.scoreboard.highest_sacked(cx.snd_una);
        if let Some(h) = self.scoreboard.first_hole(from, top) {
            return Some(NextSeg::Retransmit(seg(h)));
        }
        // (4) once per episode: the segment ending at the highest unSACKed byte
        if cx.snd_una > self.rescue_rxt {
            let ranges = self.scoreboard.ranges();
            let hi = match ranges.last() {
                Some(&(s, e)) if e == cx.snd_max => s,
                _ => cx.snd_max,
            };
            if hi > cx.snd_una {
                let below = ranges
                    .iter()
                    .rev()
                    .find(|r| r.1 <= hi)
                    .map_or(cx.snd_una, |r| r.1);
                let s = hi.saturating_sub(mss).max(below).max(cx.snd_una);
                return Some(NextSeg::Rescue(Segment {
                    seq: s,
                    len_bytes: hi - s,
                }));
            }
        }
        None
    }

    /// `len_bytes` left as chosen by `next` (C.2-C.4): update HighRxt,
    /// RescueRxt and the pipe.
    pub fn on_sent(&mut self, cx: &LossCtx, next: NextSeg, len_bytes: u64) {
        match next {
            NextSeg::Retransmit(s) => self.high_rxt = self.high_rxt.max(s.seq + s.len_bytes),
            NextSeg::Rescue(_) => self.rescue_rxt = *cx.recover,
            NextSeg::NewData => {}
        }
        self.pipe += len_bytes;
        if self.prr_on {
            self.prr.on_sent(len_bytes);
        }
    }
}
