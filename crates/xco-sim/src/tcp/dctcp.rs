//! DCTCP congestion control (RFC 8257), behind the [`CongestionControl`] seam.
//!
//! The sender keeps `alpha`, an estimate of the fraction of its bytes that
//! switches marked CE: once per window of data (when the cumulative ACK
//! passes the end of the window the last update started) it sets
//! `alpha = (1 - g) alpha + g F`, `F` the fraction of bytes acknowledged in
//! that window by ACKs carrying ECE, `g = 1/16` (§3.3). On an ECN echo —
//! at most once per window, the endpoint's RFC 3168 rule — the window is
//! cut to `cwnd (1 - alpha / 2)` (at least two segments) instead of halved;
//! a loss or timeout is answered as NewReno does (§3.4), and the window
//! grows as NewReno's. `alpha` starts at 1 (Linux's default), so the first
//! echo halves.
//!
//! The receiver's half — ECE on exactly the ACKs of CE-marked data, with an
//! immediate ACK whenever the CE state of arriving data changes while an ACK
//! is being delayed (§3.2) — lives in the endpoint (it is part of receiving,
//! not of this algorithm); it runs when both ends use DCTCP.

use super::cc::{AckSample, CongestionControl, CongestionEvent, EventSample, NewReno, Window};

/// DCTCP's gain g (RFC 8257 §3.3: 1/16).
pub const G: f64 = 1.0 / 16.0;

/// RFC 8257 sender state.
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// Window growth and the loss response.
    pub reno: NewReno,
    /// The marked-fraction estimate, 0..=1.
    pub alpha: f64,
    /// Bytes acknowledged in the current observation window.
    acked_bytes: u64,
    /// Of those, bytes acknowledged by ACKs with ECE.
    marked_bytes: u64,
    /// The window ends when `snd_una` reaches this.
    window_end: u64,
    /// Windows observed (alpha updates).
    pub updates: u64,
}

impl Dctcp {
    /// A fresh instance (alpha = 1).
    pub fn new(abc_limit_bytes: u64) -> Dctcp {
        Dctcp {
            reno: NewReno { abc_limit_bytes },
            alpha: 1.0,
            acked_bytes: 0,
            marked_bytes: 0,
            window_end: 0,
            updates: 0,
        }
    }
}

impl CongestionControl for Dctcp {
    #[inline(never)]
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.acked_bytes += s.bytes_acked;
        if s.ece {
            self.marked_bytes += s.bytes_acked;
        }
        if s.snd_una >= self.window_end {
            // §3.3: one update per window of data
            if self.acked_bytes > 0 {
                let f = self.marked_bytes as f64 / self.acked_bytes as f64;
                self.alpha = (1.0 - G) * self.alpha + G * f;
                self.updates += 1;
            }
            self.acked_bytes = 0;
            self.marked_bytes = 0;
            self.window_end = s.snd_max;
        }
        self.reno.on_ack(w, s);
    }

    fn on_congestion(&mut self, w: &mut Window, ev: CongestionEvent, s: &EventSample) {
        match ev {
            CongestionEvent::EcnEcho => {
                let cut = (w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
                w.ssthresh = cut.max(2 * w.mss);
                w.cwnd = w.ssthresh;
            }
            _ => self.reno.on_congestion(w, ev, s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xco_core::Time;

    const MSS: u64 = 1000;

    fn ack(snd_una: u64, snd_max: u64, ece: bool) -> AckSample {
        AckSample {
            now: Time::ZERO,
            bytes_acked: MSS,
            rtt_sample: None,
            ece,
            in_flight_bytes: snd_max - snd_una,
            in_recovery: false,
            snd_una,
            snd_max,
        }
    }

    #[test]
    fn alpha_moves_by_g_toward_the_marked_fraction_once_per_window() {
        let mut d = Dctcp::new(2 * MSS);
        let mut w = Window {
            cwnd: 10 * MSS,
            ssthresh: 10 * MSS,
            mss: MSS,
            bytes_acked: 0,
        };
        // the first ACK opens the window [.., 20)
        d.on_ack(&mut w, &ack(MSS, 20 * MSS, false));
        let a0 = d.alpha;
        // ACKs up to 20, every fourth with ECE; the one reaching 20 closes the window
        for k in 2..=20 {
            d.on_ack(&mut w, &ack(k * MSS, 30 * MSS, k % 4 == 0));
        }
        assert_eq!(d.updates, 2, "the first ACK and the one reaching 20");
        // window 2: 19 ACKs (k = 2..=20), ECE on k = 4, 8, 12, 16, 20
        let f = 5.0 / 19.0;
        assert!((d.alpha - ((1.0 - G) * a0 + G * f)).abs() < 1e-12, "{}", d.alpha);
    }

    #[test]
    fn an_echo_cuts_by_alpha_over_two_and_a_loss_halves() {
        let mut d = Dctcp::new(2 * MSS);
        d.alpha = 0.2;
        let mut w = Window {
            cwnd: 100 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
            bytes_acked: 0,
        };
        let s = EventSample {
            now: Time::ZERO,
            in_flight_bytes: 100 * MSS,
        };
        d.on_congestion(&mut w, CongestionEvent::EcnEcho, &s);
        assert_eq!(w.cwnd, 90 * MSS, "cwnd (1 - 0.2 / 2)");
        d.on_congestion(&mut w, CongestionEvent::DupAckLoss, &s);
        assert_eq!(w.cwnd, 50 * MSS, "a loss as NewReno: half the flight");
    }
}
