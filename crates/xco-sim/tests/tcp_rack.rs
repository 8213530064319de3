//! RACK (RFC 8985 §6): a segment lost in the middle of a window with fewer
//! than three segments SACKed after it is found lost by time — its own
//! RTT plus a quarter of the minimum RTT after it left — not by duplicate
//! ACKs or the retransmission timer.

use crate::support::sender_established;
use std::sync::{Arc, Mutex};
use xco_core::{Dur, Time};
use xco_sim::net::packet::Packet;
use xco_sim::net::qdisc::{Arrival, ArrivalHook, DropReason, Qdisc, Verdict};
use xco_sim::scenario::build;
use xco_sim::tcp::TcpConfig;

#[test]
fn a_hole_with_two_sacks_above_it_is_retransmitted_at_rack_rtt_plus_reo_wnd() {
    for rack in [true, false] {
        let mut s = sender_established(TcpConfig {
            sack: true,
            tlp: true,
            rack,
            ..TcpConfig::for_mtu(1500)
        });
        let mss = s.mss;
        let seg = |k: u64| k * mss;
        // off time 0, so the ACK's timestamp echo is exactly the send time
        s.advance(Dur::from_us(1));
        let sent_at = s.now();
        s.write(8 * mss);
        assert_eq!(s.drain().len(), 8);
        let rtt = Dur::from_us(100);
        s.advance(rtt);
        // 0..4 arrive (RTT 100 us); 4 is lost; 5 and 6 arrive: two SACKs
        s.ack_with_ts(seg(4), sent_at.ps().max(1));
        s.ack_sack(seg(4), &[(seg(5), seg(6))]);
        s.ack_sack(seg(4), &[(seg(5), seg(7))]);
        assert!(
            !s.ep().in_recovery,
            "two duplicates, two MSS SACKed: no DupThresh"
        );
        assert!(s.drain().is_empty());
        if rack {
            // RACK.rtt = 100 us (segment 6 left with 4); reo_wnd = min_RTT / 4
            let due = sent_at + rtt + Dur::from_us(25);
            s.advance(due.saturating_since(s.now()) - Dur::from_ps(1));
            let early = s.drain_timed();
            assert!(
                early.is_empty(),
                "not before the RACK timer: {early:?} due {due} now {}",
                s.now()
            );
            s.advance(Dur::from_ps(1));
            let r = s.drain_timed();
            assert_eq!(r, vec![(seg(4), mss, due)], "segment 4 retransmitted at {due}");
            assert!(s.ep().in_recovery);
            s.ack(seg(8));
            assert!(!s.ep().in_recovery);
            let f = &s.sim.cx.net.flows[s.ep().tx_flow as usize];
            assert_eq!((f.fast_retransmits, f.timeouts, f.retransmits), (1, 0, 1));
            assert_eq!(s.ep().tlp.probes, 0, "no probe with SACKed data outstanding");
        } else {
            // no RACK: two SACKs are not DupThresh; nothing goes at RACK's time
            s.advance(Dur::from_us(26));
            assert!(s.drain().is_empty(), "no retransmission 1.25 RTT after the loss");
            assert!(!s.ep().in_recovery);
        }
    }
}

/// Drops the first `copies` copies of the data segment starting at `seq`;
/// records when each copy passed.
struct DropOne {
    seq: u64,
    copies: usize,
    at: Arc<Mutex<Vec<Time>>>,
}

impl ArrivalHook for DropOne {
    fn on_arrival(&mut self, a: &Arrival, p: &mut Packet) -> Verdict {
        if p.payload_bytes > 0 && p.seq == self.seq {
            let mut at = self.at.lock().unwrap();
            at.push(a.now);
            if at.len() <= self.copies {
                return Verdict::Drop(DropReason::Discipline);
            }
        }
        Verdict::Admit
    }
    fn limit_bytes(&self) -> u64 {
        1 << 30
    }
}

/// A 100-segment transfer losing segment 97 (two segments follow it):
/// (timeouts, fast retransmits, time from loss to repair, SRTT).
fn lose_third_last(tcp: &str) -> (u64, u64, Dur, Dur) {
    lose(tcp, 97, 1, 100)
}

/// A `segments`-segment transfer losing the first `copies` copies of segment
/// `k`: (timeouts, fast retransmits, time from the first loss to the repair, SRTT).
fn lose(tcp: &str, k: u64, copies: usize, segments: u64) -> (u64, u64, Dur, Dur) {
    let bytes = segments * 1448;
    let text = format!(
        "[topology]\nkind = \"star\"\nhosts = 2\nlink_delay_us = 10\nswitch_buffer = \"1MB\"\n\
         [[apps]]\nkind = \"transfer\"\nsrc = \"h0\"\ndst = \"h1\"\nbytes = \"{bytes}B\"\n\
         [tcp]\n{tcp}\n[output]\ntimeseries_bin_us = 0\n"
    );
    let mut sim = build(&text, None).unwrap().sim;
    let mss = sim.stack.tcp.cfg.mss_bytes as u64;
    let net = &mut sim.cx.net;
    let port = net
        .port_between(net.node("s0").unwrap(), net.node("h1").unwrap())
        .unwrap();
    let at = Arc::new(Mutex::new(Vec::new()));
    let hook = DropOne {
        seq: k * mss,
        copies,
        at: at.clone(),
    };
    net.set_qdisc(port, Qdisc::Fifo(Box::new(hook))).unwrap();
    sim.run().unwrap();
    let ep = &sim.tcp.eps[0];
    let f = &sim.cx.net.flows[ep.tx_flow as usize];
    assert_eq!(f.app_bytes_delivered, bytes, "{tcp}: the transfer completes");
    let at = at.lock().unwrap();
    assert_eq!(at.len(), copies + 1, "{tcp}: lost {copies} times, repaired once");
    (
        f.timeouts,
        f.fast_retransmits,
        at[copies].saturating_since(at[0]),
        ep.rtt.srtt().unwrap(),
    )
}

#[test]
fn in_a_transfer_rack_repairs_a_loss_two_segments_from_the_end_within_two_rtts() {
    let (timeouts, fast, repair, srtt) = lose_third_last("profile = \"linux\"");
    assert_eq!((timeouts, fast), (0, 1), "found by RACK, repaired in recovery");
    assert!(
        repair.ps() <= 2 * srtt.ps(),
        "repaired {repair:?} after the loss, SRTT {srtt:?}"
    );
    // the linux profile without RACK: no DupThresh, no probe (SACKed data
    // outstanding), so the RTO (200 ms) repairs it
    let (timeouts, fast, repair, _) = lose_third_last("profile = \"linux\"\nrack = false");
    assert_eq!((timeouts, fast), (1, 0));
    assert!(repair >= Dur::from_ms(200), "{repair:?}");
}

#[test]
fn a_tail_probe_resends_the_last_segment_and_its_sack_repairs_the_hole_without_a_timeout() {
    // the incast tail loss of real-incast (issue 25): the last full segment and
    // a short tail are lost; the probe resends the tail as it was sent, and its
    // SACK, which echoes the last in-order segment's timestamp (RFC 7323 §4.3),
    // lets RACK find the full segment lost: fast recovery, no RTO (as Linux)
    let mut s = sender_established(TcpConfig {
        sack: true,
        tlp: true,
        rack: true,
        initial_cwnd_segments: 20,
        ..TcpConfig::for_mtu(1500)
    });
    let mss = s.mss;
    s.advance(Dur::from_us(1));
    let t0 = s.now();
    s.write(10 * mss + 72);
    let sent = s.drain();
    assert_eq!(sent.len(), 11);
    assert_eq!(sent[10], (10 * mss, 72));
    s.advance(Dur::from_us(100));
    s.ack_with_ts(9 * mss, t0.ps()); // 0..8 arrive; 9 and the tail are lost
    let mut probe = Vec::new();
    for _ in 0..100 {
        s.advance(Dur::from_us(10));
        probe = s.drain_timed();
        if !probe.is_empty() {
            break;
        }
    }
    assert_eq!(probe.len(), 1, "one probe");
    assert_eq!(
        (probe[0].0, probe[0].1),
        (10 * mss, 72),
        "the last segment as it was sent"
    );
    s.advance(Dur::from_us(100));
    s.ack_sack_ts(9 * mss, &[(10 * mss, 10 * mss + 72)], t0.ps());
    let repaired = s.drain();
    assert!(
        repaired.contains(&(9 * mss, mss)),
        "segment 9 resent on the probe's SACK: {repaired:?}"
    );
    let f = &s.sim.cx.net.flows[s.ep().tx_flow as usize];
    assert_eq!(f.timeouts, 0);
}

#[test]
fn rack_finds_a_lost_retransmission_and_sends_it_again_without_a_timeout() {
    // segment 300 of 6,000 is lost, and so is its first retransmission; the
    // segments sent after that retransmission are SACKed, so RACK (as
    // Linux's tcp_rack_detect_loss, which treats a retransmission as any
    // other segment) finds it lost again a reordering window later
    let (timeouts, fast, repair, srtt) = lose("profile = \"linux\"", 300, 2, 6000);
    assert_eq!((timeouts, fast), (0, 1), "one recovery, no timeout");
    assert!(
        repair.ps() <= 4 * srtt.ps(),
        "repaired {repair:?} after the loss, SRTT {srtt:?}"
    );
}
