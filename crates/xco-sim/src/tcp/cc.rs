//! Congestion control: how the window grows and how far it falls on loss.
//!
//! Loss *detection and recovery* (dup ACKs, NewReno partial ACKs, timeouts)
//! are the endpoint's job; an algorithm here only answers "grow by how much"
//! and "what is ssthresh after a loss".

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

/// A congestion-control algorithm.
pub trait CongestionControl {
    /// New data was cumulatively acknowledged outside loss recovery.
    fn on_ack(&mut self, w: &mut Window, acked_bytes: u64, abc_limit_bytes: u64);
    /// The slow-start threshold after a loss with `flight_bytes` outstanding.
    fn ssthresh_after_loss(&self, w: &Window, flight_bytes: u64) -> u64;
}

/// Which algorithm an endpoint runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcKind {
    /// RFC 5681 slow start / congestion avoidance with RFC 6582 recovery.
    NewReno,
}

impl CcKind {
    /// Parse a scenario name.
    pub fn from_name(s: &str) -> Option<CcKind> {
        match s {
            "newreno" => Some(CcKind::NewReno),
            _ => None,
        }
    }
}

/// RFC 5681 window growth with appropriate byte counting (RFC 3465).
#[derive(Clone, Debug, Default)]
pub struct NewReno;

impl CongestionControl for NewReno {
    fn on_ack(&mut self, w: &mut Window, acked_bytes: u64, abc_limit_bytes: u64) {
        if w.cwnd < w.ssthresh {
            // slow start: cwnd += min(N, L)
            w.cwnd += acked_bytes.min(abc_limit_bytes);
        } else {
            // congestion avoidance: one MSS per cwnd of acknowledged bytes
            w.bytes_acked += acked_bytes;
            if w.bytes_acked >= w.cwnd {
                w.bytes_acked -= w.cwnd;
                w.cwnd += w.mss;
            }
        }
    }
    fn ssthresh_after_loss(&self, w: &Window, flight_bytes: u64) -> u64 {
        // RFC 5681 eq. (4)
        (flight_bytes / 2).max(2 * w.mss)
    }
}

/// Enum dispatch over the implemented algorithms.
#[derive(Clone, Debug)]
pub enum Cc {
    /// NewReno.
    NewReno(NewReno),
}

impl Cc {
    /// A fresh instance of `kind`.
    pub fn new(kind: CcKind) -> Cc {
        match kind {
            CcKind::NewReno => Cc::NewReno(NewReno),
        }
    }
}

impl CongestionControl for Cc {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked_bytes: u64, abc_limit_bytes: u64) {
        match self {
            Cc::NewReno(c) => c.on_ack(w, acked_bytes, abc_limit_bytes),
        }
    }
    #[inline]
    fn ssthresh_after_loss(&self, w: &Window, flight_bytes: u64) -> u64 {
        match self {
            Cc::NewReno(c) => c.ssthresh_after_loss(w, flight_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(cwnd: u64, ssthresh: u64) -> Window {
        Window {
            cwnd,
            ssthresh,
            mss: 1000,
            bytes_acked: 0,
        }
    }

    #[test]
    fn slow_start_grows_by_acked_bytes_up_to_l() {
        let mut w = win(1000, u64::MAX);
        NewReno.on_ack(&mut w, 2000, 2000);
        assert_eq!(w.cwnd, 3000);
        NewReno.on_ack(&mut w, 5000, 2000);
        assert_eq!(w.cwnd, 5000);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window() {
        let mut w = win(4000, 4000);
        for _ in 0..3 {
            NewReno.on_ack(&mut w, 1000, 2000);
        }
        assert_eq!(w.cwnd, 4000);
        NewReno.on_ack(&mut w, 1000, 2000);
        assert_eq!(w.cwnd, 5000);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two_mss() {
        let w = win(10_000, 10_000);
        assert_eq!(NewReno.ssthresh_after_loss(&w, 10_000), 5000);
        assert_eq!(NewReno.ssthresh_after_loss(&w, 1000), 2000);
    }
}
