//! RACK: time-based loss detection (the RACK half of RFC 8985, §6).
//!
//! Duplicate-ACK counting (RFC 5681, RFC 6675's `IsLost`) needs three
//! segments delivered above a hole before it calls the hole lost; a loss
//! followed by only one or two more segments then waits for the RTO. RACK
//! instead remembers when each segment was (last) sent and, from the most
//! recently sent segment known to be delivered (`RACK.xmit_ts`), calls lost
//! every unacknowledged, unSACKed segment sent before it whose time is up:
//!
//! ```text
//!   lost  <=>  seg.xmit_ts + RACK.rtt + RACK.reo_wnd <= now
//! ```
//!
//! `RACK.rtt` is the RTT of that delivered segment, `RACK.reo_wnd` the
//! reordering allowance: `min_RTT / 4` (at most SRTT), or zero while no
//! reordering has been seen and the sender is in recovery or already has
//! DupThresh segments SACKed (§6.2 step 4, as Linux's `tcp_rack_reo_wnd`).
//! A segment not yet due arms the RACK timer (the `remaining` of §6.2
//! step 5: the latest such deadline), which runs the detection again.
//!
//! The per-segment record ([`Rack::on_send`]) is kept in sequence order
//! (new data only ever appends; a retransmission rewrites the records it
//! covers), so the cumulative ACK pops from the front and a SACK block
//! finds its records by binary search: the work per ACK is proportional to
//! what it acknowledges, plus, while holes exist, the records below the
//! highest SACK.
//!
//! RACK lives inside SACK recovery ([`super::sack_recovery::SackRecovery`];
//! RFC 8985 needs SACK): the sender's `IsLost` boundary is the larger of
//! RFC 6675's and RACK's ([`Rack::lost_below`]). Not modelled: reordering
//! window adaptation by D-SACK (`reo_wnd_mult` stays 1), and RACK's
//! detection of a lost retransmission within one recovery episode (RFC
//! 6675's `HighRxt` is not moved back; the RTO repairs it).

use std::collections::VecDeque;
use xco_core::{Dur, Time};

/// One transmitted segment still above the cumulative ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentRecord {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// When it was last (re)transmitted (`Segment.xmit_ts`).
    pub xmit_at: Time,
    /// It has been retransmitted (its RTT may be ambiguous).
    pub retrans: bool,
    /// It was SACKed.
    pub delivered: bool,
}

/// One sender's RACK state.
#[derive(Clone, Debug, Default)]
pub struct Rack {
    sent: VecDeque<SentRecord>,
    /// `RACK.xmit_ts`: the latest send time of a delivered segment (None: none yet).
    pub xmit_at: Option<Time>,
    /// `RACK.end_seq`: the end of that segment.
    pub end_seq: u64,
    /// `RACK.rtt`: its RTT.
    pub rtt: Dur,
    /// The smallest unambiguous RTT seen (`RACK.min_RTT`).
    pub min_rtt: Option<Dur>,
    /// `RACK.fack`: one past the highest byte delivered (ACKed or SACKed).
    pub fack: u64,
    /// A segment never retransmitted was delivered below `fack` (`RACK.reordering_seen`).
    pub reordering_seen: bool,
    /// Every unSACKed byte below this was found lost by RACK.
    pub lost_below: u64,
    /// When the RACK timer is due (`Time::NEVER`: not armed).
    pub reo_at: Time,
    /// Segments RACK has found lost.
    pub segments_lost: u64,
}

impl Rack {
    /// A new state, timer off.
    pub fn new() -> Rack {
        Rack {
            reo_at: Time::NEVER,
            ..Rack::default()
        }
    }

    /// The records above the cumulative ACK, in sequence order.
    pub fn records(&self) -> &VecDeque<SentRecord> {
        &self.sent
    }

    /// `[seq, seq + len)` left at `now`: new data appends a record, a
    /// retransmission rewrites the send time of the records it covers.
    pub fn on_send(&mut self, seq: u64, len: u64, now: Time) {
        let end = seq + len;
        match self.sent.back() {
            Some(last) if seq < last.end => {
                let i = self.sent.partition_point(|r| r.end <= seq);
                for r in self.sent.range_mut(i..) {
                    if r.start >= end {
                        break;
                    }
                    r.xmit_at = now;
                    r.retrans = true;
                    r.delivered = false;
                }
            }
            _ => self.sent.push_back(SentRecord {
                start: seq,
                end,
                xmit_at: now,
                retrans: false,
                delivered: false,
            }),
        }
    }

    /// §6.2 steps 1-3 for one delivered record, `now`, the ACK echoing `ts_ecr` (ps, 0: none).
    fn deliver(&mut self, r: SentRecord, now: Time, ts_ecr: u64) {
        if !r.retrans && r.end < self.fack {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(r.end);
        let rtt = now.saturating_since(r.xmit_at);
        if r.retrans {
            // step 2: skip a sample that may belong to an earlier transmission
            let echoes_earlier = ts_ecr > 0 && ts_ecr < r.xmit_at.ps();
            if echoes_earlier || self.min_rtt.is_some_and(|m| rtt < m) {
                return;
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        let later = match self.xmit_at {
            None => true,
            Some(t) => r.xmit_at > t || (r.xmit_at == t && r.end > self.end_seq),
        };
        if later {
            self.xmit_at = Some(r.xmit_at);
            self.end_seq = r.end;
            self.rtt = rtt;
        }
    }

    /// A SACK block `[s, e)` arrived at `now`: the records inside it are delivered.
    pub fn on_sacked(&mut self, s: u64, e: u64, now: Time, ts_ecr: u64) {
        let i = self.sent.partition_point(|r| r.end <= s);
        let mut k = i;
        while k < self.sent.len() {
            let r = self.sent[k];
            if r.start >= e {
                break;
            }
            if !r.delivered && r.start >= s && r.end <= e {
                self.sent[k].delivered = true;
                self.deliver(r, now, ts_ecr);
            }
            k += 1;
        }
    }

    /// The cumulative ACK reached `snd_una` at `now`: its records are delivered and dropped.
    pub fn on_cum_ack(&mut self, snd_una: u64, now: Time, ts_ecr: u64) {
        while let Some(&r) = self.sent.front() {
            if r.end > snd_una {
                break;
            }
            self.sent.pop_front();
            if !r.delivered {
                self.deliver(r, now, ts_ecr);
            }
        }
    }

    /// §6.2 step 4: the reordering window. `no_wait` is true when the
    /// sender is in recovery or has DupThresh segments SACKed.
    pub fn reo_wnd(&self, no_wait: bool, srtt: Option<Dur>) -> Dur {
        if !self.reordering_seen && no_wait {
            return Dur::ZERO;
        }
        let quarter = Dur(self.min_rtt.unwrap_or(Dur::ZERO).ps() / 4);
        match srtt {
            Some(s) => quarter.min(s),
            None => quarter,
        }
    }

    /// §6.2 step 5 at `now`: mark lost what is due; returns the new lost
    /// boundary (never below `snd_una`) and arms or disarms the RACK timer
    /// ([`Rack::reo_at`]).
    pub fn detect_loss(&mut self, now: Time, snd_una: u64, reo_wnd: Dur) -> u64 {
        self.reo_at = Time::NEVER;
        self.lost_below = self.lost_below.max(snd_una);
        let Some(rack_xmit_at) = self.xmit_at else {
            return self.lost_below;
        };
        let mut latest: Option<Time> = None;
        for r in self.sent.iter() {
            if r.start >= self.fack {
                break; // nothing delivered above: no evidence
            }
            if r.delivered || r.end <= self.lost_below {
                continue;
            }
            let sent_before = r.xmit_at < rack_xmit_at || (r.xmit_at == rack_xmit_at && r.end < self.end_seq);
            if !sent_before {
                continue;
            }
            let due = r.xmit_at + self.rtt + reo_wnd;
            if due <= now {
                self.lost_below = r.end;
                self.segments_lost += 1;
            } else {
                latest = Some(latest.map_or(due, |t| t.max(due)));
            }
        }
        if let Some(t) = latest {
            self.reo_at = t;
        }
        self.lost_below
    }

    /// A retransmission timeout: forget what RACK found lost (go-back-N resends it).
    pub fn on_rto(&mut self) {
        self.lost_below = 0;
        self.reo_at = Time::NEVER;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn t_us(us: u64) -> Time {
        Time::ZERO + Dur::from_us(us)
    }

    /// Ten segments sent 1 us apart from t = 1 us.
    fn ten() -> Rack {
        let mut r = Rack::new();
        for k in 0..10 {
            r.on_send(k * MSS, MSS, t_us(1 + k));
        }
        r
    }

    #[test]
    fn a_hole_is_lost_once_a_later_segment_is_delivered_and_its_time_is_up() {
        let mut r = ten();
        // 0..4 ACKed 100 us after they left, 4 lost, 5 SACKed at 106 us
        for k in 1..=4 {
            r.on_cum_ack(k * MSS, t_us(k + 100), 0);
        }
        r.on_sacked(5 * MSS, 6 * MSS, t_us(106), 0);
        assert_eq!(
            (r.xmit_at, r.end_seq, r.rtt),
            (Some(t_us(6)), 6 * MSS, Dur::from_us(100))
        );
        let reo = r.reo_wnd(false, Some(Dur::from_us(100)));
        assert_eq!(reo, Dur::from_us(25), "min_RTT / 4");
        // 4 went at 5 us: due at 5 + 100 + 25 = 130 us
        assert_eq!(r.detect_loss(t_us(106), 4 * MSS, reo), 4 * MSS);
        assert_eq!(r.reo_at, t_us(130), "the RACK timer");
        assert_eq!(r.detect_loss(t_us(130), 4 * MSS, reo), 5 * MSS, "lost at 130 us");
        assert_eq!(r.reo_at, Time::NEVER);
        assert_eq!(r.segments_lost, 1);
        // with DupThresh SACKed (no reordering seen) the window is zero
        assert_eq!(r.reo_wnd(true, Some(Dur::from_us(100))), Dur::ZERO);
    }

    #[test]
    fn segments_sent_after_the_delivered_one_are_not_judged() {
        let mut r = ten();
        r.on_sacked(3 * MSS, 4 * MSS, t_us(104), 0);
        r.detect_loss(t_us(10_000), 0, Dur::ZERO);
        assert_eq!(r.lost_below, 3 * MSS, "0..3 lost; 4..10 sent later");
        // a retransmission of 0 is sent after 3: not lost by 3's delivery
        r.on_send(0, MSS, t_us(10_000));
        assert!(r.records()[0].retrans);
        r.lost_below = 0;
        r.detect_loss(t_us(20_000), 0, Dur::ZERO);
        assert_eq!(r.lost_below, 3 * MSS, "1 and 2 still lost, 0 skipped");
    }

    #[test]
    fn a_late_original_segment_is_reordering_an_ambiguous_retransmission_no_sample() {
        let mut r = ten();
        r.on_sacked(2 * MSS, 3 * MSS, t_us(103), 0);
        r.on_cum_ack(2 * MSS, t_us(104), 0);
        assert!(r.reordering_seen, "0 and 1 arrived after 2, never retransmitted");
        let mut r = ten();
        r.on_cum_ack(MSS, t_us(101), 0);
        r.on_send(MSS, MSS, t_us(150));
        // the ACK echoes the original's timestamp: not a sample of the retransmission
        r.on_cum_ack(2 * MSS, t_us(160), t_us(2).ps());
        assert_eq!((r.xmit_at, r.rtt), (Some(t_us(1)), Dur::from_us(100)));
        assert!(!r.reordering_seen);
    }
}
