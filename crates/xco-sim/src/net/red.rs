//! RED: random early detection (Floyd & Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", 1993), an arrival hook of a FIFO port.
//!
//! At every arrival RED updates an exponentially weighted average of the
//! backlog, `avg = (1 - w_q) avg + w_q q`; an arrival that finds the port
//! idle first decays it by the frames the port could have sent meanwhile,
//! `avg = (1 - w_q)^m avg` with `m = idle time / s` and `s` the transmission
//! time of a typical (mean-size) frame on this link. Then:
//!
//! - `avg < min_th`: admit (and `count = -1`);
//! - `min_th <= avg < max_th`: `count += 1`,
//!   `p_b = max_p (avg - min_th) / (max_th - min_th)`, in byte mode scaled by
//!   `frame bytes / mean frame bytes`, and the arrival is hit with
//!   `p_a = p_b / (1 - count p_b)` (1 once `count p_b >= 1`), which spreads
//!   hits evenly instead of in clusters; a hit resets `count` to 0;
//! - in gentle mode, `max_th <= avg < 2 max_th` is part of the early region
//!   with `p_b = max_p + (1 - max_p) (avg - max_th) / max_th`;
//! - above that (`avg >= max_th`, gentle: `2 max_th`) every arrival is hit
//!   (`count = 0`).
//!
//! A hit marks an ECN-capable packet (CE) when ECN is on, and drops any
//! other; with `harddrop` the forced region drops ECN-capable packets too
//! (ns-2's and Floyd's choice; Linux marks there unless told `harddrop`).
//! Independently of all this the buffer is a hard byte limit: an arrival
//! that does not fit is tail-dropped even if RED admitted it.
//!
//! The backlog RED averages is the bytes waiting, not counting a frame being
//! serialised; a port is idle when nothing is waiting or serialising. The
//! random draws come from a seeded [`Rng`], one stream per port.

use super::packet::Packet;
use super::qdisc::{Arrival, ArrivalHook, DropReason, Verdict};
use xco_core::Rng;

/// RED's settings (bytes throughout: the backlog is counted in bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// The buffer: the hard limit, bytes.
    pub limit_bytes: u64,
    /// `min_th`, bytes of average backlog.
    pub min_th_bytes: u64,
    /// `max_th`, bytes of average backlog (at least `min_th`).
    pub max_th_bytes: u64,
    /// `max_p`: the hit probability at `max_th` (0 < max_p <= 1).
    pub max_p: f64,
    /// `w_q`: the average's weight (0 < w_q <= 1; 1 follows the backlog).
    pub weight: f64,
    /// Gentle mode: the early region reaches to `2 max_th`.
    pub gentle: bool,
    /// Byte mode: `p_b` scaled by the frame's size over `mean_frame_bytes`.
    pub byte_mode: bool,
    /// The typical frame, bytes: `s` of the idle decay and byte mode's yardstick.
    pub mean_frame_bytes: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// In the forced region drop ECN-capable packets too.
    pub harddrop: bool,
}

impl RedConfig {
    /// Floyd & Jacobson's settings (`max_p` 0.1, `w_q` 0.002, no gentle or
    /// byte mode), ECN marking on, 1000-byte typical frames, with the buffer
    /// and thresholds given.
    pub fn new(limit_bytes: u64, min_th_bytes: u64, max_th_bytes: u64) -> RedConfig {
        RedConfig {
            limit_bytes,
            min_th_bytes,
            max_th_bytes,
            max_p: 0.1,
            weight: 0.002,
            gentle: false,
            byte_mode: false,
            mean_frame_bytes: 1000,
            ecn: true,
            harddrop: false,
        }
    }

    /// Why these settings cannot run, if they cannot.
    pub fn problem(&self) -> Option<String> {
        if self.min_th_bytes > self.max_th_bytes {
            return Some(format!(
                "min_th ({} B) must not exceed max_th ({} B)",
                self.min_th_bytes, self.max_th_bytes
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Some(format!("max_p must be in (0, 1], got {}", self.max_p));
        }
        if !(self.weight > 0.0 && self.weight <= 1.0) {
            return Some(format!("weight must be in (0, 1], got {}", self.weight));
        }
        if self.mean_frame_bytes == 0 {
            return Some("mean_packet must be at least 1 byte".into());
        }
        None
    }
}

/// The RED arrival hook of one port.
#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedConfig,
    /// `s`: transmission time of a mean-size frame on the port, ps.
    mean_tx_ps: f64,
    /// `ln(1 - w_q)`: the idle decay is `exp(m ln(1 - w_q))`, cheaper than `powf`.
    ln_keep: f64,
    /// The average backlog, bytes.
    avg_bytes: f64,
    /// Arrivals since the last hit (-1: the average was below `min_th`).
    count: i64,
    rng: Rng,
}

impl Red {
    /// RED with `cfg` on a port of `rate_bps`, drawing from `rng`.
    ///
    /// Panics if `cfg` has a [`RedConfig::problem`] or `rate_bps` is 0.
    pub fn new(cfg: RedConfig, rate_bps: u64, rng: Rng) -> Red {
        if let Some(p) = cfg.problem() {
            panic!("RED settings: {p}");
        }
        assert!(rate_bps > 0, "RED on a port of rate 0");
        Red {
            mean_tx_ps: cfg.mean_frame_bytes as f64 * 8e12 / rate_bps as f64,
            ln_keep: (1.0 - cfg.weight).ln(),
            cfg,
            avg_bytes: 0.0,
            count: -1,
            rng,
        }
    }

    /// The settings.
    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    /// The average backlog, bytes.
    pub fn avg_bytes(&self) -> f64 {
        self.avg_bytes
    }

    /// Update the average for an arrival as `a` describes.
    #[inline]
    fn update_average(&mut self, a: &Arrival) {
        let w = self.cfg.weight;
        match a.idle_since {
            Some(since) => {
                let m = a.now.saturating_since(since).ps() as f64 / self.mean_tx_ps;
                if self.avg_bytes > 0.0 && m > 0.0 {
                    self.avg_bytes *= (m * self.ln_keep).exp();
                }
            }
            None => self.avg_bytes = (1.0 - w) * self.avg_bytes + w * a.backlog_bytes as f64,
        }
    }

    /// The hit probability `p_b` at the current average (early region only).
    #[inline]
    fn p_b(&self, frame_bytes: u32) -> f64 {
        let (min, max) = (self.cfg.min_th_bytes as f64, self.cfg.max_th_bytes as f64);
        let avg = self.avg_bytes;
        let p = if avg < max {
            self.cfg.max_p * (avg - min) / (max - min)
        } else {
            self.cfg.max_p + (1.0 - self.cfg.max_p) * (avg - max) / max
        };
        if self.cfg.byte_mode {
            p * frame_bytes as f64 / self.cfg.mean_frame_bytes as f64
        } else {
            p
        }
    }

    /// RED's answer for an arrival of `frame_bytes` (before the hard limit).
    #[inline]
    fn decide(&mut self, frame_bytes: u32, ect: bool) -> Verdict {
        let avg = self.avg_bytes;
        if avg < self.cfg.min_th_bytes as f64 {
            self.count = -1;
            return Verdict::Admit;
        }
        let forced_from = if self.cfg.gentle {
            2.0 * self.cfg.max_th_bytes as f64
        } else {
            self.cfg.max_th_bytes as f64
        };
        if avg >= forced_from {
            self.count = 0;
            return self.hit(ect, true);
        }
        self.count += 1;
        let p_b = self.p_b(frame_bytes);
        let c = self.count as f64 * p_b;
        let p_a = if c < 1.0 { p_b / (1.0 - c) } else { 1.0 };
        if self.rng.next_f64() < p_a {
            self.count = 0;
            return self.hit(ect, false);
        }
        Verdict::Admit
    }

    /// A hit: mark an ECN-capable packet, drop any other.
    #[inline]
    fn hit(&self, ect: bool, forced: bool) -> Verdict {
        if self.cfg.ecn && ect && !(forced && self.cfg.harddrop) {
            Verdict::AdmitMarked
        } else {
            Verdict::Drop(DropReason::Discipline)
        }
    }
}

impl ArrivalHook for Red {
    fn on_arrival(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict {
        self.update_average(a);
        let v = self.decide(a.frame_bytes, pkt.is_ect());
        let fits = a.idle_since.is_some() || a.backlog_bytes + a.frame_bytes as u64 <= self.cfg.limit_bytes;
        if matches!(v, Verdict::Admit | Verdict::AdmitMarked) && !fits {
            return Verdict::Drop(DropReason::TailDrop);
        }
        v
    }
    fn limit_bytes(&self) -> u64 {
        self.cfg.limit_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Ecn;
    use crate::net::qdisc::Input;
    use xco_core::{Dur, Time};

    const GBPS: u64 = 1_000_000_000;

    fn busy(now: Time, frame_bytes: u32, backlog_bytes: u64) -> Arrival {
        Arrival {
            now,
            input: Input::LOCAL,
            frame_bytes,
            backlog_bytes,
            idle_since: None,
        }
    }

    fn pkt(ecn: Ecn) -> Packet {
        let mut p = Packet::EMPTY;
        p.set_ecn(ecn);
        p
    }

    /// A RED whose average sits at `backlog` bytes (it saw that backlog long enough).
    fn steady(cfg: RedConfig, backlog: u64, seed: u64) -> Red {
        let mut r = Red::new(cfg, GBPS, Rng::new(seed));
        let w = r.cfg.weight;
        r.cfg.weight = 1.0; // settle at once, then restore the weight
        r.update_average(&busy(Time::ZERO, 1000, backlog));
        r.cfg.weight = w;
        r.count = -1;
        r
    }

    /// The fraction of arrivals hit at a steady `p_b`, from the formula
    /// alone: after a hit, the k-th arrival is hit with
    /// `p_a(k) = p_b / (1 - k p_b)` (1 once that is not below 1), so the gap
    /// between hits has a known distribution; the fraction is 1 / its mean.
    fn expected_fraction(p_b: f64) -> f64 {
        let (mut survive, mut mean, mut k) = (1.0f64, 0.0f64, 1u32);
        loop {
            let c = k as f64 * p_b;
            let p_a = if c < 1.0 { (p_b / (1.0 - c)).min(1.0) } else { 1.0 };
            mean += k as f64 * survive * p_a;
            survive *= 1.0 - p_a;
            if survive <= 0.0 {
                return 1.0 / mean;
            }
            k += 1;
        }
    }

    /// Offer `n` arrivals at a steady backlog; (hits, marks, drops).
    fn offer_steady(r: &mut Red, backlog: u64, n: u32, frame: u32, ect: bool) -> (u64, u64, u64) {
        let (mut marks, mut drops) = (0, 0);
        let mut p = pkt(if ect { Ecn::Ect0 } else { Ecn::NotEct });
        for i in 0..n {
            match r.on_arrival(&busy(Time(i as u64), frame, backlog), &mut p) {
                Verdict::Admit => {}
                Verdict::AdmitMarked => marks += 1,
                Verdict::Drop(DropReason::Discipline) => drops += 1,
                v => panic!("unexpected {v:?}"),
            }
        }
        (marks + drops, marks, drops)
    }

    /// Assert `hits` of `n` is within 4 binomial standard deviations of `p`
    /// (RED spreads its hits more evenly than independent draws would, so
    /// the binomial spread is an upper bound on the real one), plus one hit
    /// for the first arrival, drawn with `count = 0`.
    fn assert_fraction(hits: u64, n: u32, p: f64, what: &str) {
        let sigma = (n as f64 * p * (1.0 - p)).sqrt();
        let want = n as f64 * p;
        assert!(
            (hits as f64 - want).abs() <= 4.0 * sigma + 1.0,
            "{what}: {hits} hits of {n}, the formula gives {want:.0} +- {:.0} (4 sigma)",
            4.0 * sigma
        );
    }

    #[test]
    fn the_hit_fraction_at_a_steady_average_follows_the_formula() {
        let n = 200_000;
        let cfg = RedConfig {
            ecn: false,
            ..RedConfig::new(1 << 30, 30_000, 90_000)
        };
        // p_b = 0.1 * (avg - 30 KB) / 60 KB
        for (avg, p_b) in [(45_000u64, 0.025), (60_000, 0.05), (84_000, 0.09)] {
            let mut r = steady(cfg.clone(), avg, 7);
            let (hits, marks, drops) = offer_steady(&mut r, avg, n, 1000, false);
            assert_eq!((marks, drops), (0, hits), "ECN off: every hit is a drop");
            let want = expected_fraction(p_b);
            // the gaps are uniform on 1..1/p_b - 1: about twice p_b, not p_b
            assert!(want > 1.8 * p_b && want < 2.2 * p_b, "{want} for {p_b}");
            assert_fraction(hits, n, want, &format!("avg {avg} B"));
        }
        // below min_th nothing, above max_th everything
        let mut r = steady(cfg.clone(), 29_999, 7);
        assert_eq!(offer_steady(&mut r, 29_999, 10_000, 1000, false).0, 0);
        let mut r = steady(cfg.clone(), 90_000, 7);
        assert_eq!(offer_steady(&mut r, 90_000, 10_000, 1000, false).0, 10_000);
    }

    #[test]
    fn gentle_mode_ramps_from_max_p_to_one_between_max_th_and_twice_it() {
        let n = 100_000;
        let cfg = RedConfig {
            gentle: true,
            max_p: 0.02,
            ..RedConfig::new(1 << 30, 30_000, 90_000)
        };
        // avg 99 KB: p_b = 0.02 + 0.98 * 9 / 90 = 0.118
        let mut r = steady(cfg.clone(), 99_000, 3);
        let (hits, ..) = offer_steady(&mut r, 99_000, n, 1000, false);
        assert_fraction(hits, n, expected_fraction(0.118), "gentle, avg 99 KB");
        // not gentle, the same average is in the forced region
        let mut r = steady(
            RedConfig {
                gentle: false,
                ..cfg.clone()
            },
            99_000,
            3,
        );
        assert_eq!(offer_steady(&mut r, 99_000, 1000, 1000, false).0, 1000);
        let mut r = steady(cfg, 180_000, 3);
        assert_eq!(offer_steady(&mut r, 180_000, 1000, 1000, false).0, 1000);
    }

    #[test]
    fn byte_mode_scales_the_probability_by_frame_size() {
        let n = 200_000;
        let cfg = RedConfig {
            byte_mode: true,
            mean_frame_bytes: 1000,
            ..RedConfig::new(1 << 30, 30_000, 90_000)
        };
        // avg 60 KB: p_b = 0.05, times 250 / 1000 for small frames, 1500 / 1000 for big ones
        for (frame, p_b) in [(250u32, 0.0125), (1500, 0.075)] {
            let mut r = steady(cfg.clone(), 60_000, 11);
            let (hits, ..) = offer_steady(&mut r, 60_000, n, frame, false);
            assert_fraction(hits, n, expected_fraction(p_b), &format!("{frame} B frames"));
        }
    }

    #[test]
    fn only_ecn_capable_packets_are_marked_the_others_dropped() {
        let cfg = RedConfig::new(1 << 30, 30_000, 90_000);
        let mut r = steady(cfg.clone(), 60_000, 5);
        let mut rng = Rng::new(99);
        let (mut ect_marked, mut ect_dropped, mut not_marked, mut not_dropped) = (0, 0, 0, 0);
        for i in 0..100_000u64 {
            let ect = rng.below(2) == 0;
            let mut p = pkt(if ect { Ecn::Ect0 } else { Ecn::NotEct });
            let v = r.on_arrival(&busy(Time(i), 1000, 60_000), &mut p);
            match (ect, v) {
                (true, Verdict::AdmitMarked) => ect_marked += 1,
                (true, Verdict::Drop(_)) => ect_dropped += 1,
                (false, Verdict::AdmitMarked) => not_marked += 1,
                (false, Verdict::Drop(_)) => not_dropped += 1,
                _ => {}
            }
        }
        assert!(
            ect_marked > 1000 && not_dropped > 1000,
            "{ect_marked} {not_dropped}"
        );
        assert_eq!((ect_dropped, not_marked), (0, 0));
        // the forced region marks too, unless harddrop
        let mut r = steady(cfg.clone(), 95_000, 5);
        assert_eq!(offer_steady(&mut r, 95_000, 100, 1000, true), (100, 100, 0));
        let hard = RedConfig {
            harddrop: true,
            ..cfg.clone()
        };
        let mut r = steady(hard, 95_000, 5);
        assert_eq!(offer_steady(&mut r, 95_000, 100, 1000, true), (100, 0, 100));
        // ECN off: ECN-capable packets are dropped like the rest
        let off = RedConfig { ecn: false, ..cfg };
        let mut r = steady(off, 60_000, 5);
        let (hits, marks, _) = offer_steady(&mut r, 60_000, 10_000, 1000, true);
        assert!(hits > 0 && marks == 0);
    }

    #[test]
    fn the_buffer_is_a_hard_limit_whatever_red_decides() {
        let cfg = RedConfig::new(10_000, 30_000, 90_000);
        let mut r = Red::new(cfg, GBPS, Rng::new(1));
        let mut p = pkt(Ecn::Ect0);
        // average far below min_th, but the frame does not fit
        assert_eq!(
            r.on_arrival(&busy(Time(0), 1500, 9_000), &mut p),
            Verdict::Drop(DropReason::TailDrop)
        );
        assert_eq!(r.on_arrival(&busy(Time(0), 1000, 9_000), &mut p), Verdict::Admit);
        // an idle port sends the frame whatever its size
        let idle = Arrival {
            idle_since: Some(Time(0)),
            ..busy(Time(0), 20_000, 0)
        };
        assert_eq!(r.on_arrival(&idle, &mut p), Verdict::Admit);
    }

    #[test]
    fn the_average_decays_over_idle_time_by_the_frames_that_could_have_been_sent() {
        let cfg = RedConfig::new(1 << 30, 30_000, 90_000);
        let w = cfg.weight;
        let mut r = steady(cfg, 80_000, 1);
        assert!((r.avg_bytes() - 80_000.0).abs() < 1e-6);
        // 1000-byte frames at 1 Gbit/s take 8 us: 100 us idle is m = 12.5 frames
        let since = Time::ZERO + Dur::from_ms(1);
        let idle = Arrival {
            idle_since: Some(since),
            ..busy(since + Dur::from_us(100), 1000, 0)
        };
        r.on_arrival(&idle, &mut pkt(Ecn::NotEct));
        let want = 80_000.0 * (1.0 - w).powf(12.5);
        assert!((r.avg_bytes() - want).abs() < 1e-6, "{} vs {want}", r.avg_bytes());
        // a long idle period empties it; a busy arrival with an empty queue only nudges it
        let later = since + Dur::from_ms(100);
        let idle = Arrival {
            idle_since: Some(since),
            ..busy(later, 1000, 0)
        };
        r.on_arrival(&idle, &mut pkt(Ecn::NotEct));
        assert!(r.avg_bytes() < 1.0, "{}", r.avg_bytes());
    }

    #[test]
    fn same_seed_same_hits() {
        let run = |seed| {
            let mut r = steady(RedConfig::new(1 << 30, 30_000, 90_000), 60_000, seed);
            let mut p = pkt(Ecn::NotEct);
            (0..5000u64)
                .map(|i| r.on_arrival(&busy(Time(i), 1000, 60_000), &mut p))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }
}
