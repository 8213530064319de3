//! RFC 5681 / 6582 / 6298 reactions of a sender driven segment by segment.

use crate::support::{sender_established, Sender};
use xco_core::{Dur, Time};
use xco_sim::tcp::TcpConfig;

fn cfg() -> TcpConfig {
    TcpConfig {
        initial_cwnd_segments: 10,
        ..TcpConfig::for_mtu(1500)
    }
}

/// Acknowledge `segs` in-flight segments one ACK per `per_ack` segments.
fn ack_all(s: &mut Sender, segs: &[(u64, u64)], per_ack: usize) {
    for chunk in segs.chunks(per_ack) {
        let (seq, len) = *chunk.last().unwrap();
        s.ack(seq + len);
    }
}

#[test]
fn slow_start_doubles_cwnd_per_rtt() {
    for per_ack in [1, 2] {
        let mut s = sender_established(cfg());
        s.write(100_000_000);
        let mut burst = s.drain().len();
        assert_eq!(burst, 10, "initial window");
        for _round in 0..4 {
            let segs = s.drain_after_ack_round(per_ack, burst);
            assert_eq!(
                segs,
                2 * burst,
                "with one ACK per {per_ack} segments the window must double"
            );
            burst = segs;
        }
    }
}

impl Sender {
    /// ACK everything outstanding (one ACK per `per_ack` segments) and return how many new segments went out.
    fn drain_after_ack_round(&mut self, per_ack: usize, outstanding: usize) -> usize {
        let una = self.ep().snd_una;
        let segs: Vec<(u64, u64)> = (0..outstanding as u64)
            .map(|i| (una + i * self.mss, self.mss))
            .collect();
        ack_all(self, &segs, per_ack);
        self.drain().len()
    }
}

#[test]
fn three_duplicate_acks_trigger_exactly_one_fast_retransmit() {
    let mut s = sender_established(cfg());
    s.write(100_000_000);
    let first = s.drain();
    assert_eq!(first.len(), 10);
    let mss = s.mss;
    s.ack(mss); // segment 1 arrived, segment 2 lost
    s.drain();
    s.ack(mss);
    s.ack(mss);
    assert_eq!(s.retransmits(), 0, "two duplicate ACKs are not enough");
    assert!(s.drain().iter().all(|&(seq, _)| seq != mss));
    s.ack(mss); // third duplicate
    let sent = s.drain();
    assert_eq!(sent.iter().filter(|&&(seq, _)| seq == mss).count(), 1);
    assert_eq!(s.retransmits(), 1);
    assert!(s.ep().in_recovery);
    let flight = 10 * mss; // snd_max - snd_una before the loss response
    let ssthresh = s.ep().win.ssthresh;
    assert!(
        ssthresh >= (flight - mss) / 2 && ssthresh <= flight / 2 + mss,
        "ssthresh {ssthresh}"
    );
    for _ in 0..5 {
        s.ack(mss); // more duplicates inflate the window, never retransmit again
    }
    let later = s.drain();
    assert!(
        later.iter().all(|&(seq, _)| seq != mss),
        "no second retransmission of the hole"
    );
    assert_eq!(s.retransmits(), 1);
    assert!(
        later.iter().all(|&(seq, _)| seq >= s.ep().recover),
        "only new data while inflated"
    );
}

#[test]
fn partial_ack_in_fast_recovery_retransmits_the_next_hole() {
    let mut s = sender_established(cfg());
    s.write(100_000_000);
    s.drain();
    let mss = s.mss;
    // segments 0 and 3 are lost: dup ACKs for 0
    for _ in 0..3 {
        s.ack(0);
    }
    let r = s.drain();
    assert_eq!(r, vec![(0, mss)]);
    let recover = s.ep().recover;
    assert_eq!(recover, 10 * mss);
    // the retransmission fills hole 0; the receiver has 1..2, so the ACK is partial at 3
    s.ack(3 * mss);
    let sent = s.drain();
    assert_eq!(
        sent.first(),
        Some(&(3 * mss, mss)),
        "partial ACK retransmits the next hole at once"
    );
    assert!(s.ep().in_recovery, "a partial ACK does not end recovery");
    // a full ACK ends recovery and deflates cwnd to at most ssthresh
    let high = s.ep().snd_max;
    s.ack(high);
    assert!(!s.ep().in_recovery);
    assert!(s.ep().win.cwnd <= s.ep().win.ssthresh);
}

#[test]
fn rto_doubles_on_repeated_timeouts_and_never_goes_below_rto_min() {
    let mut c = cfg();
    c.rto_min = Dur::from_ms(200);
    let mut s = sender_established(c);
    s.write(3 * s.mss);
    // one clean round trip of 100 us gives an RTT sample (RTO would be ~300 us without the floor)
    let t0 = s.now();
    s.drain();
    s.advance(Dur::from_us(100));
    let mss = s.mss;
    s.ack_with_ts(mss, t0.ps().max(1));
    assert_eq!(s.ep().rtt.rto(), Dur::from_ms(200), "RTO is clamped to RTO_min");
    s.drain();
    // now lose everything: timeouts at +200 ms, then +400, +800, +1600
    let mut last = s.now();
    let mut gaps = Vec::new();
    let mut expected_timeouts = 0;
    while gaps.len() < 4 {
        s.advance(Dur::from_ms(1));
        let re = s.drain();
        if !re.is_empty() {
            assert_eq!(
                re[0].0, mss,
                "the timeout resends the first unacknowledged segment"
            );
            assert_eq!(re.len(), 1, "after a timeout cwnd is one segment");
            let now = s.now();
            gaps.push((now - last).as_secs_f64() * 1e3);
            last = now;
            expected_timeouts += 1;
        }
        assert!(s.now() < Time(10_000_000_000_000), "timeouts stopped firing");
    }
    let f = &s.sim.cx.net.flows[s.ep().tx_flow as usize];
    assert_eq!(f.timeouts, expected_timeouts);
    let want = [200.0, 400.0, 800.0, 1600.0];
    for (g, w) in gaps.iter().zip(want) {
        assert!((g - w).abs() <= 1.0, "timeout gaps {gaps:?}, want {want:?}");
    }
}

#[test]
fn initial_rto_is_one_second_and_backs_off() {
    let mut s = sender_established(cfg());
    s.write(s.mss);
    s.drain();
    s.advance(Dur::from_ms(999));
    assert!(s.drain().is_empty());
    s.advance(Dur::from_ms(2));
    assert_eq!(s.drain().len(), 1, "RFC 6298: first timeout after 1 s");
    s.advance(Dur::from_ms(1998));
    assert!(s.drain().is_empty());
    s.advance(Dur::from_ms(3));
    assert_eq!(s.drain().len(), 1, "then after 2 s more");
}

/// After a timeout, an ACK of the retransmitted segment that echoes its
/// send time (`ts_ecr`).
fn ack_after_timeout(timestamps: bool) -> (u32, Dur) {
    let mut c = cfg();
    c.timestamps = timestamps;
    let mut s = sender_established(c);
    s.write(s.mss);
    s.drain();
    s.advance(Dur::from_ms(1001)); // the initial RTO of 1 s fires
    let re = s.drain_timed();
    assert_eq!(re.len(), 1, "the timeout resent the segment");
    assert_eq!(s.ep().backoff, 1);
    s.advance(Dur::from_us(100));
    let mss = s.mss;
    s.ack_with_ts(mss, re[0].2.ps().max(1));
    (s.ep().backoff, s.ep().rtt.rto())
}

#[test]
fn without_timestamps_a_retransmitted_segment_gives_no_rtt_sample() {
    // RFC 6298 §3 (Karn): the ACK is ambiguous, so no sample and the backed-off RTO stays (§5.7)
    let (backoff, rto) = ack_after_timeout(false);
    assert_eq!(backoff, 1, "no sample: the backoff stays");
    assert_eq!(rto, Dur::from_secs(1), "the estimator never had a sample");
    // with timestamps the echo names the copy that was answered: a valid sample
    let (backoff, rto) = ack_after_timeout(true);
    assert_eq!(backoff, 0);
    assert_eq!(rto, Dur::from_ms(200), "100 us sample, clamped to RTO_min");
}
