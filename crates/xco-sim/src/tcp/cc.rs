//! Congestion control: how the window grows and how far it falls.
//!
//! The seam follows Linux's `tcp_congestion_ops`. An algorithm sees two
//! things and nothing else:
//!
//! * an [`AckSample`] for every ACK that acknowledges new data — time, bytes
//!   acked, the RTT sample, ECE, the flight after the ACK and whether loss
//!   recovery owns the window (Linux's `pkts_acked` / `in_ack_event` /
//!   `cong_avoid` in one call);
//! * a [`CongestionEvent`] when the sender decides the network signalled
//!   congestion: a loss found by duplicate ACKs, a retransmission timeout, an
//!   ECN echo, a drop notification (Linux's `ssthresh` plus `set_state`).
//!
//! Loss *detection and repair* (which ACK is a duplicate, what to retransmit,
//! the window during fast recovery) are not here: they are
//! [`super::recovery`]'s job, so SACK-based recovery can replace NewReno's
//! without touching an algorithm here. Which RFC lives where: RFC 5681 slow
//! start, congestion avoidance and eq. (4) and RFC 3465 byte counting here;
//! RFC 6582 fast recovery in `recovery`; RFC 3168 §6.1.2's once-per-window
//! rule in the endpoint, its window cut here.
//!
//! Dispatch is an enum ([`super::congestion::Cc`]): the built-in algorithms are matched, never
//! boxed; [`super::congestion::Cc::Custom`] takes a boxed algorithm for experiments and tests.

use xco_core::{Dur, Time};

/// The window variables an algorithm acts on.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes.
    pub ssthresh: u64,
    /// Sender MSS, bytes.
    pub mss: u64,
    /// Bytes acknowledged in congestion avoidance not yet turned into growth.
    pub bytes_acked: u64,
}

/// What one ACK of new data tells the algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSample {
    /// When the ACK arrived.
    pub now: Time,
    /// Bytes this ACK newly acknowledged (cumulatively).
    pub bytes_acked: u64,
    /// RTT measured from the ACK's timestamp echo (RFC 7323), if any.
    pub rtt_sample: Option<Dur>,
    /// The ACK carried ECE (RFC 3168), i.e. some data it covers was CE-marked.
    pub ece: bool,
    /// Bytes still outstanding after this ACK.
    pub in_flight_bytes: u64,
    /// Loss recovery owned the window when this ACK arrived (the algorithm
    /// should not grow it; recovery deflates it when it ends).
    pub in_recovery: bool,
    /// The cumulative ACK point after this ACK (`snd_una`).
    pub snd_una: u64,
    /// One past the highest byte sent (`snd_max`): per-window bookkeeping
    /// (DCTCP's alpha) ends a window when `snd_una` reaches a past `snd_max`.
    pub snd_max: u64,
}

/// A congestion signal the sender acted on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionEvent {
    /// A loss detected by duplicate ACKs (or SACK): fast recovery starts.
    DupAckLoss,
    /// The retransmission timer expired: the loss window follows.
    Rto,
    /// An ACK with ECE, at most once per window of data (RFC 3168 §6.1.2).
    EcnEcho,
    /// A switch reported dropping one of this sender's packets (nothing
    /// raises it yet).
    DropNotification,
}

/// The sender's state when a congestion event happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventSample {
    /// When.
    pub now: Time,
    /// Bytes outstanding (FlightSize of RFC 5681).
    pub in_flight_bytes: u64,
}

/// A congestion-control algorithm.
pub trait CongestionControl {
    /// An ACK acknowledged new data: grow (or hold) the window.
    fn on_ack(&mut self, w: &mut Window, s: &AckSample);
    /// React to `ev`: set `ssthresh` and `cwnd`. For [`CongestionEvent::DupAckLoss`]
    /// loss recovery then takes over `cwnd` until it ends.
    fn on_congestion(&mut self, w: &mut Window, ev: CongestionEvent, s: &EventSample);
}

/// Which algorithm an endpoint runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcKind {
    /// RFC 5681 slow start / congestion avoidance with RFC 6582 recovery.
    NewReno,
    /// CUBIC (RFC 9438).
    Cubic,
    /// DCTCP (RFC 8257); implies ECN.
    Dctcp,
}

impl CcKind {
    /// Parse a scenario name.
    pub fn from_name(s: &str) -> Option<CcKind> {
        match s {
            "newreno" => Some(CcKind::NewReno),
            "cubic" => Some(CcKind::Cubic),
            "dctcp" => Some(CcKind::Dctcp),
            _ => None,
        }
    }
}

/// RFC 5681 window growth with appropriate byte counting (RFC 3465).
#[derive(Clone, Debug)]
pub struct NewReno {
    /// Slow-start growth limit per ACK, L of RFC 3465, bytes.
    pub abc_limit_bytes: u64,
}

impl NewReno {
    /// RFC 5681 eq. (4): half the flight, at least two segments.
    #[inline]
    fn ssthresh_after_loss(w: &Window, in_flight_bytes: u64) -> u64 {
        (in_flight_bytes / 2).max(2 * w.mss)
    }
}

impl CongestionControl for NewReno {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        if s.in_recovery {
            return; // RFC 6582: recovery inflates and deflates the window
        }
        if w.cwnd < w.ssthresh {
            // slow start: cwnd += min(N, L)
            w.cwnd += s.bytes_acked.min(self.abc_limit_bytes);
        } else {
            // congestion avoidance: one MSS per cwnd of acknowledged bytes
            w.bytes_acked += s.bytes_acked;
            if w.bytes_acked >= w.cwnd {
                w.bytes_acked -= w.cwnd;
                w.cwnd += w.mss;
            }
        }
    }

    fn on_congestion(&mut self, w: &mut Window, ev: CongestionEvent, s: &EventSample) {
        w.ssthresh = NewReno::ssthresh_after_loss(w, s.in_flight_bytes);
        match ev {
            // RFC 5681 §3.2 step 2 (recovery adds the three segments that left)
            CongestionEvent::DupAckLoss | CongestionEvent::DropNotification => w.cwnd = w.ssthresh,
            // RFC 5681 §3.1: the loss window is one segment
            CongestionEvent::Rto => {
                w.cwnd = w.mss;
                w.bytes_acked = 0;
            }
            // RFC 3168 §6.1.2: halve the window, as for a loss
            CongestionEvent::EcnEcho => w.cwnd = w.cwnd.min(w.ssthresh),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn win(cwnd: u64, ssthresh: u64) -> Window {
        Window {
            cwnd,
            ssthresh,
            mss: MSS,
            bytes_acked: 0,
        }
    }

    fn newreno() -> NewReno {
        NewReno {
            abc_limit_bytes: 2 * MSS,
        }
    }

    fn acked(bytes_acked: u64) -> AckSample {
        AckSample {
            now: Time::ZERO,
            bytes_acked,
            rtt_sample: None,
            ece: false,
            in_flight_bytes: 0,
            in_recovery: false,
            snd_una: 0,
            snd_max: 0,
        }
    }

    fn flight(in_flight_bytes: u64) -> EventSample {
        EventSample {
            now: Time::ZERO,
            in_flight_bytes,
        }
    }

    #[test]
    fn slow_start_grows_by_acked_bytes_up_to_l() {
        let mut w = win(1000, u64::MAX);
        newreno().on_ack(&mut w, &acked(2000));
        assert_eq!(w.cwnd, 3000);
        newreno().on_ack(&mut w, &acked(5000));
        assert_eq!(w.cwnd, 5000, "RFC 3465: at most L = 2 MSS per ACK");
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window() {
        let mut w = win(4000, 4000);
        for _ in 0..3 {
            newreno().on_ack(&mut w, &acked(1000));
        }
        assert_eq!(w.cwnd, 4000);
        newreno().on_ack(&mut w, &acked(1000));
        assert_eq!(w.cwnd, 5000);
    }

    #[test]
    fn no_growth_while_recovery_owns_the_window() {
        let mut w = win(4000, 8000);
        let s = AckSample {
            in_recovery: true,
            ..acked(1000)
        };
        newreno().on_ack(&mut w, &s);
        assert_eq!((w.cwnd, w.bytes_acked), (4000, 0));
    }

    #[test]
    fn dup_ack_loss_sets_ssthresh_to_half_the_flight_but_at_least_two_mss() {
        // RFC 5681 eq. (4): ssthresh = max(FlightSize / 2, 2 * SMSS)
        let mut w = win(20_000, u64::MAX);
        newreno().on_congestion(&mut w, CongestionEvent::DupAckLoss, &flight(10_000));
        assert_eq!((w.ssthresh, w.cwnd), (5000, 5000));
        let mut w = win(20_000, u64::MAX);
        newreno().on_congestion(&mut w, CongestionEvent::DupAckLoss, &flight(1000));
        assert_eq!(w.ssthresh, 2000);
    }

    #[test]
    fn rto_sets_ssthresh_and_the_one_segment_loss_window() {
        // RFC 5681 §3.1: ssthresh by eq. (4), cwnd = LW = 1 SMSS
        let mut w = win(20_000, 30_000);
        w.bytes_acked = 700;
        newreno().on_congestion(&mut w, CongestionEvent::Rto, &flight(16_000));
        assert_eq!((w.ssthresh, w.cwnd, w.bytes_acked), (8000, MSS, 0));
    }

    #[test]
    fn ecn_echo_halves_the_window() {
        // RFC 3168 §6.1.2: cwnd and ssthresh halved, as for a loss
        let mut w = win(10_000, u64::MAX);
        newreno().on_congestion(&mut w, CongestionEvent::EcnEcho, &flight(10_000));
        assert_eq!((w.ssthresh, w.cwnd), (5000, 5000));
    }

    #[test]
    fn a_drop_notification_is_a_loss() {
        let mut w = win(10_000, u64::MAX);
        newreno().on_congestion(&mut w, CongestionEvent::DropNotification, &flight(8000));
        assert_eq!((w.ssthresh, w.cwnd), (4000, 4000));
    }
}
