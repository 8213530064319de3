//! Loss recovery: which ACKs reveal a loss, what to retransmit, and the
//! window while the losses are repaired.
//!
//! The endpoint calls the recovery algorithm on every ACK of new data
//! ([`Recovery::on_new_ack`]) and every duplicate ACK
//! ([`Recovery::on_dup_ack`]); when a duplicate ACK reveals a loss, the
//! endpoint raises [`super::cc::CongestionEvent::DupAckLoss`] (the congestion
//! control sets ssthresh) and then calls [`Recovery::enter`]. On a
//! retransmission timeout it calls [`Recovery::on_rto`] after the congestion
//! control's `Rto` response. Recovery never sends: it answers with the
//! segment to retransmit, and the endpoint sends it.
//!
//! The state shared with the rest of the sender — in recovery or not, and the
//! `recover` point (Linux's `ca_state` and `high_seq`, which the ECN and RTO
//! code read too) — stays in the endpoint and is lent through [`LossCtx`];
//! what is the algorithm's own (the duplicate-ACK count, NewReno's
//! partial-ACK flag, later a SACK scoreboard or RACK's timestamps) lives in
//! its variant of [`Recovery`].
//!
//! [`NewRenoRecovery`] is RFC 5681 §3.2 fast retransmit / fast recovery with
//! RFC 6582's partial ACKs ("impatient" timer: re-armed on the first partial
//! ACK only). [`SackRecovery`] is RFC 6675's SACK-based recovery (its own
//! file); RACK's time-based detection (RFC 8985 §6, [`super::rack`]) works inside
//! it.

pub use super::loss::{LossCtx, NewAckStep, Segment};
use super::sack::Scoreboard;
pub use super::sack_recovery::{NextSeg, SackRecovery};

/// RFC 5681 / RFC 6582 NewReno recovery state.
#[derive(Clone, Debug, Default)]
pub struct NewRenoRecovery {
    /// Duplicate ACKs counted.
    pub dupacks: u32,
    /// Duplicate ACKs that reveal a loss (3).
    pub dupack_threshold: u32,
    partial_ack_seen: bool,
}

impl NewRenoRecovery {
    fn on_new_ack(&mut self, cx: LossCtx, acked_bytes: u64) -> NewAckStep {
        let mss = cx.win.mss;
        if !*cx.in_recovery {
            self.dupacks = 0;
            return NewAckStep {
                retransmit: None,
                restart_rto: true,
            };
        }
        if cx.snd_una >= *cx.recover {
            // full ACK (RFC 6582 §3.2 step 3): deflate the window
            *cx.in_recovery = false;
            let flight = cx.snd_max - cx.snd_una;
            cx.win.cwnd = cx.win.ssthresh.min(flight.max(mss) + mss);
            self.dupacks = 0;
            return NewAckStep {
                retransmit: None,
                restart_rto: true,
            };
        }
        // partial ACK (step 4): retransmit the next hole, deflate by acked, add one MSS
        let w = &mut *cx.win;
        w.cwnd = w.cwnd.saturating_sub(acked_bytes);
        if acked_bytes >= mss {
            w.cwnd += mss;
        }
        w.cwnd = w.cwnd.max(mss);
        let first = !self.partial_ack_seen;
        self.partial_ack_seen = true;
        NewAckStep {
            retransmit: cx.head(),
            restart_rto: first,
        }
    }

    fn on_dup_ack(&mut self, cx: LossCtx, ack: u64) -> bool {
        self.dupacks += 1;
        if *cx.in_recovery {
            cx.win.cwnd += cx.win.mss; // inflate (RFC 5681 §3.2 step 4)
            false
        } else {
            // RFC 6582 §3.2 step 1: not again for losses of the same window
            self.dupacks == self.dupack_threshold && ack >= *cx.recover
        }
    }

    fn enter(&mut self, cx: LossCtx) -> Option<Segment> {
        *cx.recover = cx.snd_max;
        *cx.in_recovery = true;
        self.partial_ack_seen = false;
        // RFC 5681 §3.2 step 3: the three segments that left the network
        cx.win.cwnd = cx.win.ssthresh + 3 * cx.win.mss;
        cx.head()
    }

    fn on_rto(&mut self, cx: LossCtx) {
        *cx.in_recovery = false;
        self.dupacks = 0;
        *cx.recover = cx.snd_max; // RFC 6582 §4
    }
}

/// Enum dispatch over the loss-recovery algorithms.
#[derive(Clone, Debug)]
pub enum Recovery {
    /// RFC 6582 NewReno.
    NewReno(NewRenoRecovery),
    /// RFC 6675 SACK-based recovery.
    Sack(Box<SackRecovery>),
}

impl Recovery {
    /// NewReno recovery with fast retransmit after `dupack_threshold` duplicate ACKs.
    pub fn new_reno(dupack_threshold: u32) -> Recovery {
        Recovery::NewReno(NewRenoRecovery {
            dupack_threshold,
            ..NewRenoRecovery::default()
        })
    }

    /// RFC 6675 SACK-based recovery with `dupack_threshold` (DupThresh),
    /// with RACK's time-based detection (RFC 8985 §6) if `rack` and
    /// proportional rate reduction (RFC 6937) if `prr`.
    pub fn sack(dupack_threshold: u32, rack: bool, prr: bool) -> Recovery {
        let mut r = SackRecovery::new(dupack_threshold, rack);
        r.prr_on = prr;
        Recovery::Sack(Box::new(r))
    }

    /// The SACK variant, if this is it.
    #[inline]
    pub fn as_sack(&mut self) -> Option<&mut SackRecovery> {
        match self {
            Recovery::Sack(r) => Some(r),
            _ => None,
        }
    }

    /// The SACK scoreboard, if this variant keeps one.
    #[inline]
    pub fn scoreboard(&self) -> Option<&Scoreboard> {
        match self {
            Recovery::Sack(r) => Some(&r.scoreboard),
            _ => None,
        }
    }

    /// Duplicate ACKs counted since the last ACK of new data.
    #[inline]
    pub fn dupacks(&self) -> u32 {
        match self {
            Recovery::NewReno(r) => r.dupacks,
            Recovery::Sack(r) => r.dupacks,
        }
    }

    /// Bytes above the first hole known to have left the network: SACKed
    /// bytes, or one `mss` per duplicate ACK without SACK (RFC 5681 §3.2).
    pub fn delivered_above_hole(&self, mss: u64) -> u64 {
        match self {
            Recovery::NewReno(r) => r.dupacks as u64 * mss,
            Recovery::Sack(r) => r.scoreboard.sacked_bytes(),
        }
    }

    /// An ACK advanced `snd_una` (already in `cx`) by `acked_bytes`.
    #[inline]
    pub fn on_new_ack(&mut self, cx: LossCtx, acked_bytes: u64) -> NewAckStep {
        match self {
            Recovery::NewReno(r) => r.on_new_ack(cx, acked_bytes),
            Recovery::Sack(r) => r.on_new_ack(cx, acked_bytes),
        }
    }

    /// A duplicate ACK of `ack` (RFC 5681 §2) arrived that SACKed
    /// `newly_sacked` new bytes: true if it reveals a loss (the endpoint then
    /// raises `DupAckLoss` and calls [`Recovery::enter`]).
    #[inline]
    pub fn on_dup_ack(&mut self, cx: LossCtx, ack: u64, newly_sacked: u64) -> bool {
        match self {
            Recovery::NewReno(r) => r.on_dup_ack(cx, ack),
            Recovery::Sack(r) => r.on_dup_ack(cx, ack, newly_sacked),
        }
    }

    /// Start recovery (ssthresh already set): the segment to retransmit.
    pub fn enter(&mut self, cx: LossCtx) -> Option<Segment> {
        match self {
            Recovery::NewReno(r) => r.enter(cx),
            Recovery::Sack(r) => r.enter(cx),
        }
    }

    /// The retransmission timer expired (the congestion control has set the loss window).
    pub fn on_rto(&mut self, cx: LossCtx) {
        match self {
            Recovery::NewReno(r) => r.on_rto(cx),
            Recovery::Sack(r) => r.on_rto(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::Window;

    const MSS: u64 = 1000;

    /// A sender with 10 segments outstanding from 0.
    struct St {
        win: Window,
        in_recovery: bool,
        recover: u64,
        snd_una: u64,
        snd_max: u64,
    }

    impl St {
        fn new() -> St {
            St {
                win: Window {
                    cwnd: 10 * MSS,
                    ssthresh: u64::MAX,
                    mss: MSS,
                    bytes_acked: 0,
                },
                in_recovery: false,
                recover: 0,
                snd_una: 0,
                snd_max: 10 * MSS,
            }
        }
        fn cx(&mut self) -> LossCtx<'_> {
            LossCtx {
                win: &mut self.win,
                in_recovery: &mut self.in_recovery,
                recover: &mut self.recover,
                snd_una: self.snd_una,
                snd_max: self.snd_max,
            }
        }
    }

    #[test]
    fn the_third_duplicate_ack_reveals_the_loss_once() {
        let mut st = St::new();
        let mut r = Recovery::new_reno(3);
        assert!(!r.on_dup_ack(st.cx(), 0, 0));
        assert!(!r.on_dup_ack(st.cx(), 0, 0));
        assert!(r.on_dup_ack(st.cx(), 0, 0));
        st.win.ssthresh = 5 * MSS; // what the congestion control decided
        let seg = r.enter(st.cx());
        assert_eq!(
            seg,
            Some(Segment {
                seq: 0,
                len_bytes: MSS
            })
        );
        assert!(st.in_recovery);
        assert_eq!((st.recover, st.win.cwnd), (10 * MSS, 8 * MSS), "ssthresh + 3 MSS");
        assert!(!r.on_dup_ack(st.cx(), 0, 0), "inflates, no second loss");
        assert_eq!(st.win.cwnd, 9 * MSS);
    }

    #[test]
    fn partial_ack_retransmits_the_next_hole_and_restarts_the_timer_once() {
        let mut st = St::new();
        let mut r = Recovery::new_reno(3);
        st.win.ssthresh = 5 * MSS;
        r.enter(st.cx());
        st.snd_una = 3 * MSS;
        let step = r.on_new_ack(st.cx(), 3 * MSS);
        assert_eq!(
            step,
            NewAckStep {
                retransmit: Some(Segment {
                    seq: 3 * MSS,
                    len_bytes: MSS
                }),
                restart_rto: true,
            }
        );
        // RFC 6582 step 4: deflate by the acked amount, add back one MSS
        assert_eq!(st.win.cwnd, 8 * MSS - 3 * MSS + MSS);
        st.snd_una = 5 * MSS;
        let step = r.on_new_ack(st.cx(), 2 * MSS);
        assert!(!step.restart_rto, "only the first partial ACK restarts the timer");
        assert!(st.in_recovery);
    }

    #[test]
    fn full_ack_ends_recovery_and_deflates_to_ssthresh() {
        let mut st = St::new();
        let mut r = Recovery::new_reno(3);
        st.win.ssthresh = 5 * MSS;
        r.enter(st.cx());
        st.snd_una = 10 * MSS;
        st.snd_max = 12 * MSS;
        let step = r.on_new_ack(st.cx(), 10 * MSS);
        assert_eq!(step.retransmit, None);
        assert!(!st.in_recovery);
        // min(ssthresh, max(FlightSize, MSS) + MSS)
        assert_eq!(st.win.cwnd, 3 * MSS);
    }

    #[test]
    fn no_new_recovery_for_duplicates_below_recover_after_a_timeout() {
        let mut st = St::new();
        let mut r = Recovery::new_reno(3);
        r.on_rto(st.cx());
        assert_eq!(st.recover, 10 * MSS);
        for _ in 0..3 {
            assert!(!r.on_dup_ack(st.cx(), 0, 0), "RFC 6582 §4: ack below recover");
        }
    }
}
