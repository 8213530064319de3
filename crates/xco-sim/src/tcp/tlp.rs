//! Tail loss probe (the TLP half of RFC 8985, §7).
//!
//! A loss at the tail of a flight produces no duplicate ACKs, so without a
//! probe only the retransmission timeout repairs it (RTO_min: 200 ms in
//! Linux, hundreds of round trips in a data center). TLP arms a probe
//! timeout (PTO, about two smoothed RTTs) instead of the RTO while the sender
//! is in the open state; when it fires the sender sends one probe — a new
//! segment if the application and the receive window allow, else the last
//! segment again — and arms the RTO. The probe's ACK (or the SACKs it
//! triggers) then lets ordinary recovery repair the loss within a few RTTs.
//!
//! As in Linux the PTO and the RTO share one timer (the endpoint's): the
//! endpoint keeps RFC 6298's RTO deadline and points the timer at the
//! earlier PTO when a probe may go ([`TlpState::pto`]).
//!
//! RACK's time-based detection (RFC 8985 §6) is `super::rack`. Not modelled:
//! the probe's use of D-SACK (§7.4.2; the sender counts D-SACKs and RACK
//! uses them, but not here), so a probe that retransmitted data is always
//! taken as having repaired a loss (without a D-SACK the sender "MUST
//! assume" one) and the congestion control is told, as for fast recovery.

use super::loss::Segment;
use xco_core::{Dur, Time};

/// RFC 8985 §7.2: the PTO when no RTT has been measured.
pub const PTO_WITHOUT_RTT: Dur = Dur::from_secs(1);

/// Linux's `TCP_TIMEOUT_MIN_US`: what its PTO adds to 2 × SRTT.
pub const LINUX_TIMEOUT_MIN: Dur = Dur::from_ms(2);

/// One endpoint's TLP state.
#[derive(Clone, Copy, Debug, Default)]
pub struct TlpState {
    /// One past the probe's last byte while a probe is outstanding (`TLP.end_seq`).
    pub end_seq: Option<u64>,
    /// The outstanding probe retransmitted data (`TLP.is_retrans`).
    pub is_retrans: bool,
    /// FlightSize when the probe left (the loss response's FlightSize).
    pub flight_at_probe: u64,
    /// Probes sent.
    pub probes: u64,
    /// Probes taken as having repaired a loss (the congestion control was told).
    pub losses_repaired: u64,
    /// When the last probe left.
    pub last_probe_at: Option<Time>,
}

/// What the probe sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A new segment of `len` bytes from `snd_max`.
    NewData(u64),
    /// The last segment again.
    Retransmit(Segment),
}

impl TlpState {
    /// RFC 8985 §7.2: `2 * SRTT`, plus the receiver's worst-case delayed-ACK
    /// time `max_ack_delay` when only one segment is outstanding (its ACK
    /// may be delayed), 1 s before any RTT sample.
    pub fn pto(srtt: Option<Dur>, flight_bytes: u64, mss: u64, max_ack_delay: Dur) -> Dur {
        match srtt {
            None => PTO_WITHOUT_RTT,
            Some(s) => {
                let pto = Dur(2 * s.ps());
                if flight_bytes <= mss {
                    pto + max_ack_delay
                } else {
                    pto
                }
            }
        }
    }

    /// Linux's probe timeout (`tcp_schedule_loss_probe`, 6.x): 2 × SRTT plus
    /// `TCP_TIMEOUT_MIN_US` (2 ms), or plus `rto_min` when one segment is
    /// out; 1 s before any RTT sample (`TCP_TIMEOUT_INIT`).
    pub fn pto_linux(srtt: Option<Dur>, flight_bytes: u64, mss: u64, rto_min: Dur) -> Dur {
        match srtt {
            None => PTO_WITHOUT_RTT,
            Some(s) => {
                let extra = if flight_bytes <= mss {
                    rto_min
                } else {
                    LINUX_TIMEOUT_MIN
                };
                Dur(2 * s.ps()) + extra
            }
        }
    }

    /// RFC 8985 §7.3: what to probe with. New data if any is unsent and
    /// the receive window `wnd` allows it, else the highest segment sent.
    pub fn choose(snd_una: u64, snd_max: u64, app_limit: u64, wnd: u64, mss: u64) -> Probe {
        let new_len = mss.min(app_limit.saturating_sub(snd_max));
        if new_len > 0 && snd_max + new_len - snd_una <= wnd.max(mss) {
            return Probe::NewData(new_len);
        }
        let len_bytes = mss.min(snd_max - snd_una);
        Probe::Retransmit(Segment {
            seq: snd_max - len_bytes,
            len_bytes,
        })
    }

    /// A probe left at `now`; `end_seq` is `snd_max` after it.
    pub fn on_probe(&mut self, now: Time, end_seq: u64, is_retrans: bool, flight_bytes: u64) {
        self.end_seq = Some(end_seq);
        self.is_retrans = is_retrans;
        self.flight_at_probe = flight_bytes;
        self.probes += 1;
        self.last_probe_at = Some(now);
    }

    /// RFC 8985 §7.4: the cumulative ACK reached `snd_una`. True if that ends
    /// an episode whose probe retransmitted data: the sender must then
    /// respond as to a loss found by fast recovery.
    pub fn on_ack(&mut self, snd_una: u64) -> bool {
        match self.end_seq {
            Some(end) if snd_una >= end => {
                self.end_seq = None;
                if self.is_retrans {
                    self.losses_repaired += 1;
                }
                self.is_retrans
            }
            _ => false,
        }
    }

    /// Recovery or a timeout took over: the episode ends without a verdict.
    pub fn abandon(&mut self) {
        self.end_seq = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pto_is_two_srtts_plus_the_delayed_ack_for_a_single_segment() {
        let srtt = Some(Dur::from_us(100));
        let d = Dur::from_ms(40);
        assert_eq!(TlpState::pto(srtt, 3000, 1000, d), Dur::from_us(200));
        assert_eq!(TlpState::pto(srtt, 1000, 1000, d), Dur::from_us(200) + d);
        assert_eq!(TlpState::pto(None, 3000, 1000, d), Dur::from_secs(1));
    }

    #[test]
    fn linux_s_pto_adds_two_ms_or_rto_min_with_one_segment_out() {
        let srtt = Some(Dur::from_us(100));
        let min = Dur::from_ms(200);
        assert_eq!(TlpState::pto_linux(srtt, 3000, 1000, min), Dur::from_us(2200));
        assert_eq!(
            TlpState::pto_linux(srtt, 1000, 1000, min),
            Dur::from_us(200) + min
        );
        assert_eq!(TlpState::pto_linux(None, 3000, 1000, min), Dur::from_secs(1));
    }

    #[test]
    fn the_probe_is_new_data_if_allowed_else_the_last_segment() {
        assert_eq!(
            TlpState::choose(0, 5000, 8000, 1 << 20, 1000),
            Probe::NewData(1000)
        );
        assert_eq!(
            TlpState::choose(0, 5000, 5500, 1 << 20, 1000),
            Probe::NewData(500)
        );
        let last = Probe::Retransmit(Segment {
            seq: 4000,
            len_bytes: 1000,
        });
        assert_eq!(TlpState::choose(0, 5000, 5000, 1 << 20, 1000), last);
        assert_eq!(TlpState::choose(0, 5000, 9000, 5000, 1000), last, "window full");
        let short = TlpState::choose(4700, 5000, 5000, 1 << 20, 1000);
        assert_eq!(
            short,
            Probe::Retransmit(Segment {
                seq: 4700,
                len_bytes: 300
            })
        );
    }

    #[test]
    fn only_a_retransmitted_probe_reports_a_repaired_loss() {
        let mut t = TlpState::default();
        t.on_probe(Time::ZERO, 5000, false, 4000);
        assert!(!t.on_ack(4000), "below the probe");
        assert!(!t.on_ack(5000), "new data probe: no loss inferred");
        assert_eq!(t.end_seq, None);
        t.on_probe(Time::ZERO, 6000, true, 1000);
        assert!(t.on_ack(6000));
        assert_eq!((t.probes, t.losses_repaired), (2, 1));
    }
}
