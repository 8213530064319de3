//! CUBIC congestion control (RFC 9438), behind the [`CongestionControl`] seam.
//!
//! After a congestion event at window `W_max`, the window follows
//! `W_cubic(t) = C (t - K)^3 + W_max` with `K = cbrt((W_max - cwnd_epoch) / C)`,
//! `t` the time since the congestion-avoidance epoch began: concave up to
//! `W_max`, flat around it, convex beyond (§4.2). Per ACK the window moves
//! toward `target = W_cubic(t + RTT)`, clamped to `[cwnd, 1.5 cwnd]`, by
//! `(target - cwnd) / cwnd` per segment acknowledged. Beside it runs the
//! Reno-friendly estimate `W_est` (§4.3), growing by
//! `alpha = 3 (1 - beta) / (1 + beta)` segments per window until it reaches
//! the window before the reduction, then by one; where `W_cubic(t) < W_est`
//! the window is `W_est` (the TCP-friendly region: short RTTs, small windows).
//! A congestion event (loss, ECN echo, drop notice) sets
//! `ssthresh = max(beta * cwnd, 2)` segments (Linux uses cwnd, RFC 9438 §4.6
//! the flight, the same for a window-limited sender) and remembers `W_max`,
//! lowered to `cwnd (1 + beta) / 2` when the window had not regained the
//! previous `W_max` (fast convergence, §4.7). Slow start is RFC 5681's with
//! RFC 3465 byte counting, as in [`super::cc::NewReno`]. Neither grows
//! while the sender is application-limited (RFC 7661, Linux's
//! `tcp_is_cwnd_limited`: in slow start while cwnd is below twice the flight,
//! in congestion avoidance while the flight is within 3 segments of cwnd).
//!
//! `C = 0.4`, `beta = 0.7`. The window is kept in segments as `f64`
//! (the growth per ACK is a fraction of a byte at large windows) and
//! written to the byte window after each step; time stays integer until
//! `t` is formed. The RTT is smoothed from the ACK samples (RFC 6298's 1/8).
//! With `[tcp] hystart = true` the initial slow start is HyStart++'s
//! (RFC 9406, [`super::hystart`]). Not built: the spurious-loss undo.

use super::cc::{AckSample, CongestionControl, CongestionEvent, EventSample, Window};
use super::hystart::HyStart;
use xco_core::Time;

/// CUBIC's C, segments per second cubed.
pub const C: f64 = 0.4;
/// CUBIC's multiplicative decrease factor.
pub const BETA: f64 = 0.7;

/// RFC 9438 state.
#[derive(Clone, Debug)]
pub struct Cubic {
    /// Slow-start growth limit per ACK, L of RFC 3465, bytes.
    pub abc_limit_bytes: u64,
    /// The window in segments (fractional).
    cwnd_seg: f64,
    /// The byte window last written (to notice others' changes).
    cwnd_written: u64,
    /// W_max, segments.
    pub w_max: f64,
    /// The window just before the last reduction, segments.
    pub cwnd_prior: f64,
    /// W_est, segments.
    pub w_est: f64,
    /// K, seconds.
    pub k_s: f64,
    /// Start of the congestion-avoidance epoch.
    pub epoch_start: Option<Time>,
    /// Smoothed RTT, seconds (0 before a sample).
    pub srtt_s: f64,
    /// HyStart++ for the initial slow start (None: plain slow start).
    pub hystart: Option<HyStart>,
}

impl Cubic {
    /// A fresh instance (no congestion event yet).
    pub fn new(abc_limit_bytes: u64) -> Cubic {
        Cubic {
            abc_limit_bytes,
            cwnd_seg: 0.0,
            cwnd_written: 0,
            w_max: 0.0,
            cwnd_prior: 0.0,
            w_est: 0.0,
            k_s: 0.0,
            epoch_start: None,
            srtt_s: 0.0,
            hystart: None,
        }
    }

    /// A fresh instance whose initial slow start is HyStart++'s.
    pub fn with_hystart(abc_limit_bytes: u64, hystart: HyStart) -> Cubic {
        Cubic {
            hystart: Some(hystart),
            ..Cubic::new(abc_limit_bytes)
        }
    }

    /// `W_cubic(t)` of RFC 9438 eq. 1, segments, for `t_s` seconds into the epoch.
    #[inline]
    pub fn w_cubic(&self, t_s: f64) -> f64 {
        let d = t_s - self.k_s;
        C * d * d * d + self.w_max
    }

    /// `alpha_cubic` of RFC 9438 eq. 4.
    pub fn alpha() -> f64 {
        3.0 * (1.0 - BETA) / (1.0 + BETA)
    }

    fn write(&mut self, w: &mut Window) {
        w.cwnd = ((self.cwnd_seg * w.mss as f64) as u64).max(w.mss);
        self.cwnd_written = w.cwnd;
    }
}

impl CongestionControl for Cubic {
    #[inline(never)]
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        if let Some(r) = s.rtt_sample {
            let r = r.as_secs_f64();
            self.srtt_s = if self.srtt_s == 0.0 {
                r
            } else {
                0.875 * self.srtt_s + 0.125 * r
            };
        }
        if s.in_recovery {
            return; // loss recovery owns the window
        }
        // RFC 7661 / Linux's tcp_is_cwnd_limited: an application-limited
        // sender does not grow a window it does not use
        let flight_before = s.in_flight_bytes + s.bytes_acked;
        let limited = if w.cwnd < w.ssthresh {
            w.cwnd < 2 * flight_before
        } else {
            flight_before + 3 * w.mss >= w.cwnd
        };
        if !limited {
            return;
        }
        if w.cwnd < w.ssthresh {
            match &mut self.hystart {
                Some(h) if h.active() => {
                    h.on_ack(w, s);
                }
                _ => w.cwnd += s.bytes_acked.min(self.abc_limit_bytes),
            }
            return;
        }
        let mss = w.mss as f64;
        if w.cwnd != self.cwnd_written {
            self.cwnd_seg = w.cwnd as f64 / mss; // recovery or an idle restart moved it
        }
        let now = s.now;
        let start = match self.epoch_start {
            Some(t) => t,
            None => {
                // §4.2: a new epoch from the current window
                self.epoch_start = Some(now);
                if self.cwnd_seg < self.w_max {
                    self.k_s = ((self.w_max - self.cwnd_seg) / C).cbrt();
                } else {
                    self.k_s = 0.0;
                    self.w_max = self.cwnd_seg;
                }
                self.w_est = self.cwnd_seg;
                now
            }
        };
        let t_s = now.saturating_since(start).as_secs_f64();
        let acked_seg = s.bytes_acked as f64 / mss;
        // §4.3: the Reno-friendly estimate
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            Cubic::alpha()
        };
        self.w_est += alpha * acked_seg / self.cwnd_seg;
        if self.w_cubic(t_s) < self.w_est {
            self.cwnd_seg = self.w_est;
        } else {
            // §4.4-4.5: toward W_cubic one RTT ahead
            let target = self
                .w_cubic(t_s + self.srtt_s)
                .clamp(self.cwnd_seg, 1.5 * self.cwnd_seg);
            self.cwnd_seg += (target - self.cwnd_seg) / self.cwnd_seg * acked_seg;
        }
        self.write(w);
    }

    fn on_congestion(&mut self, w: &mut Window, ev: CongestionEvent, _s: &EventSample) {
        let mss = w.mss as f64;
        let cwnd_seg = w.cwnd as f64 / mss;
        if let Some(h) = &mut self.hystart {
            h.on_congestion();
        }
        self.epoch_start = None;
        // §4.7 fast convergence
        self.w_max = if cwnd_seg < self.w_max {
            cwnd_seg * (1.0 + BETA) / 2.0
        } else {
            cwnd_seg
        };
        self.cwnd_prior = cwnd_seg;
        let ssthresh_seg = (cwnd_seg * BETA).max(2.0);
        w.ssthresh = (ssthresh_seg * mss) as u64;
        match ev {
            CongestionEvent::DupAckLoss | CongestionEvent::DropNotification | CongestionEvent::EcnEcho => {
                self.cwnd_seg = ssthresh_seg;
                self.write(w);
            }
            CongestionEvent::Rto => {
                self.cwnd_seg = 1.0;
                self.write(w);
                w.bytes_acked = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xco_core::Dur;

    const MSS: u64 = 1000;

    /// Drive CUBIC in congestion avoidance after a loss at `w_max_seg`
    /// segments: one ACK per segment, spread evenly over each RTT; returns
    /// (t seconds into the epoch, cwnd segments, W_est) per ACK until `until_s`.
    fn after_loss(w_max_seg: u64, rtt: Dur, until_s: f64) -> (Cubic, Vec<(f64, f64)>) {
        let mut c = Cubic::new(2 * MSS);
        c.srtt_s = rtt.as_secs_f64();
        let mut w = Window {
            cwnd: w_max_seg * MSS,
            ssthresh: u64::MAX / 4,
            mss: MSS,
            bytes_acked: 0,
        };
        let ev = EventSample {
            now: Time::ZERO,
            in_flight_bytes: w.cwnd,
        };
        c.on_congestion(&mut w, CongestionEvent::DupAckLoss, &ev);
        let mut now = Time::ZERO + rtt;
        let mut out = Vec::new();
        let start = now;
        while now.saturating_since(start).as_secs_f64() < until_s {
            let segs = w.cwnd / MSS;
            let gap = Dur(rtt.ps() / segs.max(1));
            for _ in 0..segs {
                let s = AckSample {
                    now,
                    bytes_acked: MSS,
                    rtt_sample: Some(rtt),
                    ece: false,
                    in_flight_bytes: w.cwnd,
                    in_recovery: false,
                    snd_una: 0,
                    snd_max: 0,
                };
                c.on_ack(&mut w, &s);
                out.push((
                    now.saturating_since(start).as_secs_f64(),
                    w.cwnd as f64 / MSS as f64,
                ));
                now += gap;
            }
        }
        (c, out)
    }

    #[test]
    fn a_loss_sets_ssthresh_to_beta_cwnd_and_remembers_w_max() {
        let (c, out) = after_loss(100, Dur::from_ms(50), 0.01);
        assert_eq!(c.w_max, 100.0);
        assert!((out[0].1 - 70.0).abs() < 0.1, "cwnd = 0.7 W_max: {}", out[0].1);
        // K = cbrt(W_max (1 - beta) / C)
        assert!((c.k_s - (100.0 * 0.3 / 0.4f64).cbrt()).abs() < 1e-9);
    }

    /// RFC 9438's window `t` seconds into the epoch after a loss at
    /// `w_max` segments: `max(W_cubic(t), W_est(t))`, `W_est` growing alpha
    /// segments per RTT up to the window before the loss, then one (eq. 1, 4).
    fn reference(t: f64, rtt_s: f64, w_max: f64) -> (f64, f64) {
        let k = (w_max * (1.0 - BETA) / C).cbrt();
        let w_cubic = C * (t - k).powi(3) + w_max;
        let rtts = t / rtt_s;
        let to_prior = (w_max - BETA * w_max) / Cubic::alpha();
        let w_est = if rtts <= to_prior {
            BETA * w_max + Cubic::alpha() * rtts
        } else {
            w_max + (rtts - to_prior)
        };
        (w_cubic, w_est)
    }

    /// Check every ACK's window against [`reference`]; returns how many
    /// ACKs fell in the cubic and in the friendly region.
    fn check_within_one_segment(out: &[(f64, f64)], rtt: Dur, w_max: f64) -> (usize, usize) {
        let (mut cubic, mut friendly) = (0, 0);
        for &(t, cwnd) in out {
            let (w_cubic, w_est) = reference(t, rtt.as_secs_f64(), w_max);
            assert!(
                (cwnd - w_cubic.max(w_est)).abs() <= 1.0,
                "t {t:.4} s: cwnd {cwnd:.2}, W_cubic {w_cubic:.2}, W_est {w_est:.2}"
            );
            if w_cubic >= w_est {
                cubic += 1;
            } else {
                friendly += 1;
            }
        }
        (cubic, friendly)
    }

    #[test]
    fn cwnd_follows_w_cubic_concave_then_convex_within_one_segment() {
        // 200 ms RTT, W_max 100: W_cubic stays above W_est (the cubic region)
        let rtt = Dur::from_ms(200);
        let k = (100.0 * 0.3 / C).cbrt();
        let (_, out) = after_loss(100, rtt, k + 2.0);
        let (cubic, friendly) = check_within_one_segment(&out, rtt, 100.0);
        assert_eq!(friendly, 0);
        assert!(cubic > 1000);
        // the shape: growth per second falls toward K and rises after it
        let at = |ts: f64| out.iter().find(|&&(t, _)| t >= ts).unwrap().1;
        let early = at(1.0) - at(0.0);
        let plateau = at(k + 0.5) - at(k - 0.5);
        let late = at(k + 1.9) - at(k + 0.9);
        assert!(early > 3.0 * plateau, "concave: {early:.2} then {plateau:.2}");
        assert!(late > 3.0 * plateau, "convex: {plateau:.2} then {late:.2}");
        assert!(
            at(k - 0.5) < 100.0 && at(k + 1.9) > 101.0,
            "below W_max, then above"
        );
    }

    #[test]
    fn at_a_medium_rtt_cwnd_moves_from_the_cubic_to_the_friendly_region() {
        // 50 ms: W_cubic leads at first, W_est (alpha per RTT) overtakes it
        let rtt = Dur::from_ms(50);
        let (_, out) = after_loss(100, rtt, 5.0);
        let (cubic, friendly) = check_within_one_segment(&out, rtt, 100.0);
        assert!(
            cubic > 100 && friendly > 100,
            "both regions: {cubic} and {friendly} ACKs"
        );
    }

    #[test]
    fn at_short_rtts_cwnd_follows_the_reno_friendly_estimate() {
        // 1 ms RTT: W_est grows alpha segments per RTT, far faster than W_cubic
        let rtt = Dur::from_ms(1);
        let (_, out) = after_loss(100, rtt, 0.1);
        let (cubic, friendly) = check_within_one_segment(&out, rtt, 100.0);
        assert!(friendly > 50 * cubic, "{cubic} cubic, {friendly} friendly");
        // alpha = 0.53 per RTT to the old window (57 RTTs), then one per RTT
        let last = out.last().unwrap().1;
        assert!((140.0..146.0).contains(&last), "{last}");
    }
}
