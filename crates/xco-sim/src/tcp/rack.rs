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
//! The reordering window grows with D-SACKs (§6.2 step 4, as Linux's
//! `tcp_rack_update_reo_wnd`): a D-SACK ([`Rack::on_dsack`]) says a
//! retransmission was spurious, perhaps because the window was too short
//! for the path's reordering; on the next ACK that delivers data sent after
//! the last growth, `reo_wnd_mult` grows by one (at most once per round
//! trip) and `reo_wnd = min(reo_wnd_mult * min_RTT / 4, SRTT)`. The larger
//! window persists for [`RECOVERY_THRESH`] loss recoveries (fast or timeout)
//! ending without a D-SACK, then returns to one quarter. As in Linux (since
//! it stopped growing the window on D-SACKs of tail loss probes), a D-SACK
//! counts only once reordering has been seen and when it is not the
//! duplicate of a tail loss probe; the RFC's pseudocode has neither
//! condition. Linux keeps "a round trip" in delivered-packet counts
//! (`rack.last_delivered`); here it is in time: a D-SACK is disregarded
//! while the newest segment the ACK delivers left before the last growth.
//!
//! RACK lives inside SACK recovery ([`super::sack_recovery::SackRecovery`];
//! RFC 8985 needs SACK): the sender's `IsLost` boundary is the larger of
//! RFC 6675's and RACK's ([`Rack::lost_below`]). Not modelled: RACK's
//! detection of a lost retransmission within one recovery episode (RFC
//! 6675's `HighRxt` is not moved back; the RTO repairs it), Linux's undo of
//! a spurious recovery, and Linux's checks for dubious D-SACKs (longer than
//! the receive window, or more duplicates than retransmissions: the
//! simulated network never duplicates a packet).

use std::collections::VecDeque;
use xco_core::{Dur, Time};

/// Loss recoveries without a D-SACK a grown reordering window lasts
/// (`TCP_RACK_RECOVERY_THRESH` in Linux, 16 in RFC 8985 §6.2 step 4).
pub const RECOVERY_THRESH: u32 = 16;

/// The largest `reo_wnd_mult` (Linux keeps it in a byte).
pub const MAX_REO_WND_MULT: u32 = 255;

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
    /// A retransmission of it was found lost too; it waits to be sent again.
    pub relost: bool,
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
    /// The smallest RTT seen (`RACK.min_RTT`): as Linux's `tcp_min_rtt`, fed
    /// by the connection's every RTT sample, the handshake's included
    /// ([`Rack::note_rtt`]), and by RACK's own unambiguous samples.
    pub min_rtt: Option<Dur>,
    /// `RACK.fack`: one past the highest byte delivered (ACKed or SACKed).
    pub fack: u64,
    /// A segment never retransmitted was delivered below `fack` (`RACK.reordering_seen`).
    pub reordering_seen: bool,
    /// `fack` before the ACK being processed (Linux's `prior_fack`).
    prior_fack: u64,
    /// Every unSACKed byte below this was found lost by RACK.
    pub lost_below: u64,
    /// When the RACK timer is due (`Time::NEVER`: not armed).
    pub reo_at: Time,
    /// Segments RACK has found lost.
    pub segments_lost: u64,
    /// `RACK.reo_wnd_mult`: the reordering window in quarters of the min RTT.
    pub reo_wnd_mult: u32,
    /// `RACK.reo_wnd_persist`: recoveries left before the multiplier returns to 1.
    pub reo_wnd_persist: u32,
    /// Bytes of the records marked `relost` (kept as a count so the pipe and
    /// `NextSeg` pay nothing while no retransmission is lost again).
    relost_bytes: u64,
    /// A D-SACK that may grow the window arrived (Linux's `rack.dsack_seen`).
    pub dsack_seen: bool,
    /// When the window last grew (a round trip since then: data sent after it delivered).
    pub grown_at: Option<Time>,
    /// The latest send time among the segments the ACK being processed delivered.
    ack_newest_xmit: Option<Time>,
    /// After a timeout: its recovery ends when `snd_una` reaches this.
    rto_recover: Option<u64>,
}

impl Rack {
    /// A new state, timer off.
    pub fn new() -> Rack {
        Rack {
            reo_at: Time::NEVER,
            reo_wnd_mult: 1,
            ..Rack::default()
        }
    }

    /// The connection measured an RTT of `rtt` (Linux feeds `tcp_min_rtt`
    /// from every sample, the SYN's included).
    pub fn note_rtt(&mut self, rtt: Dur) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// The lowest retransmission found lost again and not sent since, `[start, end)`.
    pub fn first_relost(&self) -> Option<(u64, u64)> {
        if self.relost_bytes == 0 {
            return None;
        }
        self.sent.iter().find(|r| r.relost).map(|r| (r.start, r.end))
    }

    /// Bytes of the retransmissions found lost again and not sent since (out of the pipe).
    pub fn relost_bytes(&self) -> u64 {
        self.relost_bytes
    }

    /// Record `r` is no longer waiting to be sent again (sent, delivered or gone).
    fn clear_relost(relost_bytes: &mut u64, r: &mut SentRecord) {
        if r.relost {
            r.relost = false;
            *relost_bytes -= r.end - r.start;
        }
    }

    /// The last segment sent, `[start, end)`: what a tail loss probe resends
    /// (Linux's `tcp_send_loss_probe` resends the last segment as sent).
    pub fn last_sent(&self) -> Option<(u64, u64)> {
        self.sent.back().map(|r| (r.start, r.end))
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
                    Rack::clear_relost(&mut self.relost_bytes, r);
                }
            }
            _ => self.sent.push_back(SentRecord {
                start: seq,
                end,
                xmit_at: now,
                retrans: false,
                delivered: false,
                relost: false,
            }),
        }
    }

    /// §6.2 steps 1-3 for one delivered record at `now`.
    fn deliver(&mut self, r: SentRecord, now: Time) {
        self.ack_newest_xmit = Some(self.ack_newest_xmit.map_or(r.xmit_at, |t| t.max(r.xmit_at)));
        // step 3, against the highest byte delivered before this ACK (as
        // Linux's `prior_fack`): a segment the same ACK delivers below a
        // SACK it carries was not overtaken
        if !r.retrans && r.start < self.prior_fack {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(r.end);
        let rtt = now.saturating_since(r.xmit_at);
        if r.retrans {
            // step 2, as Linux's tcp_rack_advance: skip a sample that may
            // belong to an earlier transmission, judged by the min RTT alone.
            // RFC 8985 also skips one whose ACK echoes an earlier timestamp,
            // but a receiver echoes the last in-order segment's timestamp
            // (RFC 7323 §4.3), so a SACK of a retransmission above a hole
            // (a tail loss probe's) always does: that rule never let RACK
            // use a probe's SACK (issue 25, docs/tcp-profiles.md).
            if self.min_rtt.is_some_and(|m| rtt < m) {
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
    pub fn on_sacked(&mut self, s: u64, e: u64, now: Time) {
        let i = self.sent.partition_point(|r| r.end <= s);
        let mut k = i;
        while k < self.sent.len() {
            let r = self.sent[k];
            if r.start >= e {
                break;
            }
            if !r.delivered && r.start >= s && r.end <= e {
                self.sent[k].delivered = true;
                Rack::clear_relost(&mut self.relost_bytes, &mut self.sent[k]);
                self.deliver(r, now);
            }
            k += 1;
        }
    }

    /// The cumulative ACK reached `snd_una` at `now`: its records are delivered and dropped.
    pub fn on_cum_ack(&mut self, snd_una: u64, now: Time) {
        if self.rto_recover.is_some_and(|r| snd_una >= r) {
            self.rto_recover = None;
            self.on_recovery_end();
        }
        while let Some(&r) = self.sent.front() {
            if r.end > snd_una {
                break;
            }
            if let Some(mut gone) = self.sent.pop_front() {
                Rack::clear_relost(&mut self.relost_bytes, &mut gone);
            }
            if !r.delivered {
                self.deliver(r, now);
            }
        }
    }

    /// A D-SACK block arrived (RFC 2883); `of_probe` if it reports the
    /// duplicate of a tail loss probe (one segment ending where the
    /// outstanding probe ends). Linux's `tcp_dsack_seen`: the window may
    /// grow only once reordering has been seen, and not for a probe (TLP is
    /// timer-driven, not triggered by RACK).
    pub fn on_dsack(&mut self, of_probe: bool) {
        if self.reordering_seen && !of_probe {
            self.dsack_seen = true;
        }
    }

    /// The ACK being processed at `now` has had its SACK blocks and
    /// cumulative ACK recorded: update the reordering window (§6.2 step 4,
    /// Linux's `tcp_rack_update_reo_wnd`) and close the ACK. An ACK that
    /// delivered nothing changes nothing; a pending D-SACK grows the window
    /// unless the newest segment this ACK delivered left before the last
    /// growth (not a round trip yet); without one, a window whose
    /// persistence ran out returns to one quarter of the min RTT.
    pub fn on_ack_done(&mut self, now: Time) {
        self.prior_fack = self.fack;
        let Some(newest) = self.ack_newest_xmit.take() else {
            return;
        };
        if self.grown_at.is_some_and(|g| newest < g) {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.reo_wnd_mult = (self.reo_wnd_mult + 1).min(MAX_REO_WND_MULT);
            self.dsack_seen = false;
            self.grown_at = Some(now);
            self.reo_wnd_persist = RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// A loss recovery (fast, or after a timeout) ended: one fewer left
    /// before a grown window shrinks (Linux's `tcp_try_undo_recovery`
    /// without an undo).
    pub fn on_recovery_end(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
    }

    /// §6.2 step 4: the reordering window. `no_wait` is true when the
    /// sender is in recovery or has DupThresh segments SACKed.
    pub fn reo_wnd(&self, no_wait: bool, srtt: Option<Dur>) -> Dur {
        if !self.reordering_seen && no_wait {
            return Dur::ZERO;
        }
        let quarter = Dur(self.min_rtt.unwrap_or(Dur::ZERO).ps() / 4 * self.reo_wnd_mult as u64);
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
        let (rtt, end_seq) = (self.rtt, self.end_seq);
        let mut lost_below = self.lost_below;
        // By send time, not by sequence (RFC 8985 §6.2 step 5; Linux's
        // `tcp_rack_detect_loss` walks its time-sorted queue): a segment
        // above everything delivered is lost too once a segment sent after
        // it (a retransmission) was delivered, which is how RACK repairs a
        // lost tail without the timeout.
        for r in self.sent.iter_mut() {
            // a retransmitted segment can be lost again, wherever the boundary is;
            // below it nothing else is news
            if r.delivered || r.relost || (!r.retrans && r.end <= lost_below) {
                continue;
            }
            let sent_before = r.xmit_at < rack_xmit_at || (r.xmit_at == rack_xmit_at && r.end < end_seq);
            if !sent_before {
                if !r.retrans {
                    // new data leaves in sequence order, and a retransmission
                    // after its first sending: everything above left later
                    break;
                }
                continue;
            }
            let due = r.xmit_at + rtt + reo_wnd;
            if due > now {
                latest = Some(latest.map_or(due, |t| t.max(due)));
            } else if r.retrans {
                // a lost retransmission (Linux's tcp_rack_detect_loss treats a
                // retransmitted segment as any other): send it again
                r.relost = true;
                self.relost_bytes += r.end - r.start;
                self.segments_lost += 1;
            } else {
                lost_below = r.end;
                self.segments_lost += 1;
            }
        }
        self.lost_below = lost_below;
        if let Some(t) = latest {
            self.reo_at = t;
        }
        self.lost_below
    }

    /// A retransmission timeout with `snd_max` sent: forget what RACK
    /// found lost (go-back-N resends it); its recovery ends when the
    /// cumulative ACK reaches `snd_max`.
    pub fn on_rto(&mut self, snd_max: u64) {
        self.lost_below = 0;
        for r in self.sent.iter_mut() {
            r.relost = false;
        }
        self.relost_bytes = 0;
        self.reo_at = Time::NEVER;
        self.rto_recover = Some(snd_max);
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
    fn a_lost_retransmission_waits_to_be_sent_again_until_sent_delivered_or_acked() {
        let relost_after_new_data = || {
            let mut r = ten();
            r.on_send(0, MSS, t_us(50)); // 0 retransmitted at 50 us
            r.on_send(10 * MSS, MSS, t_us(60)); // new data after it
            r.on_sacked(10 * MSS, 11 * MSS, t_us(160)); // delivered: 0's copy is overdue
            r.detect_loss(t_us(10_000), 0, Dur::ZERO);
            assert_eq!((r.first_relost(), r.relost_bytes()), (Some((0, MSS)), MSS));
            r
        };
        let mut r = relost_after_new_data();
        r.on_send(0, MSS, t_us(10_001)); // sent again
        assert_eq!((r.first_relost(), r.relost_bytes()), (None, 0));
        let mut r = relost_after_new_data();
        r.on_sacked(0, MSS, t_us(10_001)); // the copy did arrive after all
        assert_eq!((r.first_relost(), r.relost_bytes()), (None, 0));
        let mut r = relost_after_new_data();
        r.on_cum_ack(MSS, t_us(10_001));
        assert_eq!((r.first_relost(), r.relost_bytes()), (None, 0));
    }

    #[test]
    fn a_hole_is_lost_once_a_later_segment_is_delivered_and_its_time_is_up() {
        let mut r = ten();
        // 0..4 ACKed 100 us after they left, 4 lost, 5 SACKed at 106 us
        for k in 1..=4 {
            r.on_cum_ack(k * MSS, t_us(k + 100));
        }
        r.on_sacked(5 * MSS, 6 * MSS, t_us(106));
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
    fn a_tail_above_everything_delivered_is_lost_once_a_later_retransmission_arrives() {
        // 0..10 sent; 0 ACKed; 1 lost, 2..10 lost too (a whole tail); 1 is
        // retransmitted at 200 us and delivered at 300 us: everything sent
        // before 200 us and not delivered is lost by time (RFC 8985 §6.2
        // step 5 judges by send time; Linux's tcp_rack_detect_loss walks its
        // time-sorted queue), although 2..10 lie above the highest byte delivered
        let mut r = ten();
        r.on_cum_ack(MSS, t_us(101));
        r.on_send(MSS, MSS, t_us(200));
        r.on_cum_ack(2 * MSS, t_us(300));
        assert_eq!(r.fack, 2 * MSS);
        assert_eq!(r.detect_loss(t_us(300), 2 * MSS, Dur::ZERO), 10 * MSS);
        assert_eq!(r.segments_lost, 8);
        // new data sent after the retransmission is not judged by it
        let mut r = ten();
        r.on_cum_ack(MSS, t_us(101));
        r.on_send(MSS, MSS, t_us(200));
        r.on_send(10 * MSS, MSS, t_us(201));
        r.on_cum_ack(2 * MSS, t_us(300));
        assert_eq!(
            r.detect_loss(t_us(300), 2 * MSS, Dur::ZERO),
            10 * MSS,
            "10 left after 1's copy"
        );
    }

    #[test]
    fn segments_sent_after_the_delivered_one_are_not_judged() {
        let mut r = ten();
        r.on_sacked(3 * MSS, 4 * MSS, t_us(104));
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
        r.on_sacked(2 * MSS, 3 * MSS, t_us(103));
        r.on_ack_done(t_us(103));
        r.on_cum_ack(2 * MSS, t_us(104));
        assert!(r.reordering_seen, "0 and 1 arrived after 2, never retransmitted");
        // one ACK that SACKs 4 and cumulatively ACKs 3: nothing overtook 3
        let mut r = ten();
        r.on_cum_ack(3 * MSS, t_us(103));
        r.on_ack_done(t_us(103));
        r.on_sacked(4 * MSS, 5 * MSS, t_us(105));
        r.on_cum_ack(4 * MSS, t_us(105));
        r.on_ack_done(t_us(105));
        assert!(!r.reordering_seen, "3 and 4 in one ACK are in order");
        let mut r = ten();
        r.on_cum_ack(MSS, t_us(101));
        r.on_send(MSS, MSS, t_us(150));
        // faster than the min RTT: the ACK may be the original's, not a sample of the retransmission
        r.on_cum_ack(2 * MSS, t_us(160));
        assert_eq!((r.xmit_at, r.rtt), (Some(t_us(1)), Dur::from_us(100)));
        assert!(!r.reordering_seen);
    }

    /// Ten segments, 0..4 ACKed and 5 SACKed before 4 arrives: reordering
    /// seen; min RTT 100 us.
    fn reordered() -> Rack {
        let mut r = ten();
        for k in 1..=4 {
            r.on_cum_ack(k * MSS, t_us(k + 100));
        }
        r.on_sacked(5 * MSS, 6 * MSS, t_us(106));
        r.on_ack_done(t_us(106));
        r.on_cum_ack(6 * MSS, t_us(107));
        r.on_ack_done(t_us(107));
        assert!(r.reordering_seen);
        assert_eq!(r.min_rtt, Some(Dur::from_us(100)));
        r
    }

    #[test]
    fn a_d_sack_grows_the_window_by_a_quarter_min_rtt_on_the_next_delivering_ack() {
        let mut r = reordered();
        let srtt = Some(Dur::from_ms(1));
        assert_eq!(r.reo_wnd(false, srtt), Dur::from_us(25));
        r.on_dsack(false);
        assert_eq!(r.reo_wnd_mult, 1, "not before an ACK delivers data");
        r.on_ack_done(t_us(108)); // a pure D-SACK ACK: nothing delivered
        assert_eq!(r.reo_wnd_mult, 1);
        r.on_cum_ack(7 * MSS, t_us(110));
        r.on_ack_done(t_us(110));
        assert_eq!((r.reo_wnd_mult, r.reo_wnd_persist), (2, RECOVERY_THRESH));
        assert_eq!(r.reo_wnd(false, srtt), Dur::from_us(50), "2 x min_RTT / 4");
        // once reordering was seen, even recovery keeps the window
        assert_eq!(r.reo_wnd(true, srtt), Dur::from_us(50));
        // at most SRTT
        assert_eq!(r.reo_wnd(false, Some(Dur::from_us(40))), Dur::from_us(40));
    }

    #[test]
    fn at_most_one_growth_per_round_trip() {
        let mut r = reordered();
        r.on_dsack(false);
        r.on_cum_ack(7 * MSS, t_us(110));
        r.on_ack_done(t_us(110));
        assert_eq!(r.reo_wnd_mult, 2);
        // another D-SACK; the next ACK delivers segment 7, sent (at 8 us)
        // before the growth: the same round trip, disregarded
        r.on_dsack(false);
        r.on_cum_ack(8 * MSS, t_us(111));
        r.on_ack_done(t_us(111));
        assert_eq!(r.reo_wnd_mult, 2);
        assert!(!r.dsack_seen, "dropped, not kept for later");
        // a segment sent after the growth is delivered: a new round trip
        r.on_send(10 * MSS, MSS, t_us(120));
        r.on_dsack(false);
        r.on_cum_ack(11 * MSS, t_us(220));
        r.on_ack_done(t_us(220));
        assert_eq!(r.reo_wnd_mult, 3);
    }

    #[test]
    fn no_growth_without_reordering_seen_or_for_a_probe_s_duplicate() {
        let mut r = ten();
        r.on_cum_ack(MSS, t_us(101));
        r.on_dsack(false);
        r.on_cum_ack(2 * MSS, t_us(102));
        r.on_ack_done(t_us(102));
        assert_eq!(r.reo_wnd_mult, 1, "no reordering seen");
        let mut r = reordered();
        r.on_dsack(true);
        r.on_cum_ack(7 * MSS, t_us(110));
        r.on_ack_done(t_us(110));
        assert_eq!(r.reo_wnd_mult, 1, "the duplicate of a tail loss probe");
    }

    #[test]
    fn the_window_returns_to_a_quarter_after_sixteen_recoveries_without_d_sack() {
        let mut r = reordered();
        r.on_dsack(false);
        r.on_cum_ack(7 * MSS, t_us(110));
        r.on_ack_done(t_us(110));
        assert_eq!(r.reo_wnd_mult, 2);
        for k in 0..RECOVERY_THRESH {
            // one recovery each time; a timeout's counts when snd_una reaches its snd_max
            if k == 0 {
                r.on_rto(10 * MSS);
                r.on_cum_ack(9 * MSS, t_us(300));
                assert_eq!(r.reo_wnd_persist, RECOVERY_THRESH, "not over yet");
                r.on_cum_ack(10 * MSS, t_us(301));
            } else {
                r.on_recovery_end();
            }
            r.on_ack_done(t_us(400));
            assert_eq!(r.reo_wnd_mult, 2, "after {} recoveries", k + 1);
            r.on_send(20 * MSS + k as u64 * MSS, MSS, t_us(500 + k as u64));
            r.on_cum_ack(21 * MSS + k as u64 * MSS, t_us(600 + k as u64));
            r.on_ack_done(t_us(600 + k as u64));
            let left = RECOVERY_THRESH - k - 1;
            assert_eq!(r.reo_wnd_persist, left);
            assert_eq!(
                r.reo_wnd_mult,
                if left == 0 { 1 } else { 2 },
                "after {} recoveries",
                k + 1
            );
        }
    }
}
