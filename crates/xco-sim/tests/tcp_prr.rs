//! Proportional Rate Reduction (RFC 6937, `tcp/prr.rs`) in SACK recovery,
//! as Linux's `tcp_cwnd_reduction`: while the pipe is above ssthresh the
//! sender sends ceil(ssthresh x delivered / prior_cwnd) segments in all,
//! spread over the recovery's ACKs; without PRR (RFC 6675) it sends nothing
//! until the pipe has drained below ssthresh, then one segment per ACK.

use crate::support::{sender_established, Sender};
use xco_sim::tcp::TcpConfig;

fn cfg(prr: bool) -> TcpConfig {
    TcpConfig {
        sack: true,
        prr,
        initial_cwnd_segments: 20,
        ..TcpConfig::for_mtu(1500)
    }
}

/// Segment 0 of a 20-segment window lost; SACKs for 1.. arrive one by one.
/// Returns the segments sent after each SACK in recovery (the fast
/// retransmit excluded) and the episode's ssthresh in segments.
fn one_loss(prr: bool, sacks: u64) -> (Vec<usize>, u64) {
    let mut s: Sender = sender_established(cfg(prr));
    let mss = s.mss;
    s.write(60 * mss);
    assert_eq!(s.drain().len(), 20);
    let mut sent = Vec::new();
    for k in 1..=sacks {
        s.ack_sack(0, &[(mss, (k + 1) * mss)]);
        let out = s.drain();
        if k == 3 {
            assert!(s.ep().in_recovery, "the third duplicate starts recovery");
            assert_eq!(out.first(), Some(&(0, mss)), "the fast retransmit of segment 0");
            sent.push(out.len() - 1);
        } else if k > 3 {
            assert!(s.ep().in_recovery);
            sent.push(out.len());
        } else {
            assert!(out.is_empty(), "no Limited Transmit configured");
        }
    }
    (sent, s.ep().win.ssthresh / mss)
}

#[test]
fn prr_spreads_the_reduction_over_the_acks_in_proportion_to_what_they_delivered() {
    let (sent, ssthresh) = one_loss(true, 19);
    assert_eq!(ssthresh, 10, "NewReno: half of the 20-segment flight");
    // prr_delivered d counts from the ACK that started recovery (d = 1 there)
    let mut out_total = 1u64; // the fast retransmit
    for (i, &n) in sent.iter().enumerate() {
        let d = i as u64 + 1;
        out_total += n as u64;
        let pipe_before = 20 - (d + 2) + 1; // unSACKed and not lost, plus the retransmission
        if pipe_before > ssthresh {
            assert_eq!(
                out_total,
                (ssthresh * d).div_ceil(20).max(1),
                "after {d} segments delivered: ceil(ssthresh x d / prior_cwnd) sent in all ({sent:?})"
            );
        }
    }
    // the proportional phase sends every other ACK: never a burst
    assert!(sent.iter().all(|&n| n <= 1), "{sent:?}");
    assert!(
        sent[..8].iter().sum::<usize>() >= 3,
        "it sends during the first ACKs: {sent:?}"
    );
}

#[test]
fn without_prr_the_sender_waits_until_the_pipe_falls_below_ssthresh() {
    let (sent, ssthresh) = one_loss(false, 19);
    assert_eq!(ssthresh, 10);
    // RFC 6675: cwnd = ssthresh = 10; pipe 17 after the third duplicate falls
    // one segment per SACK: nothing goes until it is 9
    assert!(sent[..7].iter().all(|&n| n == 0), "{sent:?}");
    let (with_prr, _) = one_loss(true, 19);
    assert!(
        with_prr[..7].iter().sum::<usize>() > 0,
        "PRR sends where RFC 6675 waits: {with_prr:?}"
    );
}

#[test]
fn leaving_recovery_sets_cwnd_to_ssthresh() {
    let mut s = sender_established(cfg(true));
    let mss = s.mss;
    s.write(60 * mss);
    s.drain();
    for k in 1..=5 {
        s.ack_sack(0, &[(mss, (k + 1) * mss)]);
    }
    s.drain();
    assert!(s.ep().in_recovery);
    let recover = s.ep().recover;
    s.ack(recover);
    assert!(!s.ep().in_recovery);
    assert_eq!(s.ep().win.cwnd, s.ep().win.ssthresh);
}
