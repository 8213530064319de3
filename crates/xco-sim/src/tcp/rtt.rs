//! The retransmission timeout estimator of RFC 6298.

use xco_core::Dur;

/// SRTT / RTTVAR / RTO per RFC 6298 (alpha = 1/8, beta = 1/4, K = 4).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt_ps: u64,
    rttvar_ps: u64,
    has_sample: bool,
    rto: Dur,
}

impl RttEstimator {
    /// Before any sample the RTO is `initial` (RFC 6298 §2.1: 1 s).
    pub fn new(initial: Dur) -> RttEstimator {
        RttEstimator {
            srtt_ps: 0,
            rttvar_ps: 0,
            has_sample: false,
            rto: initial,
        }
    }

    /// Take an RTT measurement (§2.2 and §2.3); the RTO is clamped to `[min, max]`.
    pub fn sample(&mut self, r: Dur, g: Dur, min: Dur, max: Dur) {
        let r = r.ps();
        if !self.has_sample {
            self.srtt_ps = r;
            self.rttvar_ps = r / 2;
            self.has_sample = true;
        } else {
            let diff = self.srtt_ps.abs_diff(r);
            self.rttvar_ps = (3 * self.rttvar_ps + diff) / 4;
            self.srtt_ps = (7 * self.srtt_ps + r) / 8;
        }
        let rto = self.srtt_ps + g.ps().max(4 * self.rttvar_ps);
        self.rto = Dur(rto).max(min).min(max);
    }

    /// The current RTO (before backoff).
    pub fn rto(&self) -> Dur {
        self.rto
    }

    /// Smoothed RTT, if measured.
    pub fn srtt(&self) -> Option<Dur> {
        self.has_sample.then_some(Dur(self.srtt_ps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_then_smoothing_per_rfc6298() {
        let mut e = RttEstimator::new(Dur::from_secs(1));
        assert_eq!(e.rto(), Dur::from_secs(1));
        let g = Dur::from_us(1);
        e.sample(Dur::from_ms(100), g, Dur::ZERO, Dur::from_secs(60));
        // SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR = 3R
        assert_eq!(e.rto(), Dur::from_ms(300));
        e.sample(Dur::from_ms(100), g, Dur::ZERO, Dur::from_secs(60));
        // RTTVAR = 3/4 * 50 + 1/4 * 0 = 37.5; SRTT = 100
        assert_eq!(e.rto(), Dur::from_ms(250));
    }

    #[test]
    fn rto_never_below_min() {
        let mut e = RttEstimator::new(Dur::from_secs(1));
        for _ in 0..50 {
            e.sample(
                Dur::from_us(100),
                Dur::from_us(1),
                Dur::from_ms(200),
                Dur::from_secs(60),
            );
        }
        assert_eq!(e.rto(), Dur::from_ms(200));
    }
}
