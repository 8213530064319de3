//! Tail loss probes (RFC 8985 §7): a lost last segment is repaired by a
//! probe about two RTTs after the last ACK, not by the retransmission timer.

use crate::support::sender_established;
use std::sync::{Arc, Mutex};
use xco_core::{Dur, Time};
use xco_sim::net::packet::Packet;
use xco_sim::net::qdisc::{Arrival, ArrivalHook, DropReason, Qdisc, Verdict};
use xco_sim::scenario::build;
use xco_sim::tcp::TcpConfig;

#[test]
fn the_probe_goes_two_srtts_after_the_last_ack_and_repairs_the_tail() {
    for sack in [false, true] {
        let mut s = sender_established(TcpConfig {
            tlp: true,
            sack,
            ..TcpConfig::for_mtu(1500)
        });
        let mss = s.mss;
        s.write(10 * mss);
        assert_eq!(s.drain().len(), 10);
        let rtt = Dur::from_us(100);
        s.advance(rtt);
        // segments 0..8 arrive; 9, the last, is lost: no duplicate ACK follows
        s.ack_with_ts(8 * mss, 1);
        let srtt = s.ep().rtt.srtt().unwrap();
        assert!(srtt.ps().abs_diff(rtt.ps()) < 10, "one sample: SRTT = RTT");
        let acked_at = s.now();
        s.advance(Dur(2 * srtt.ps() - 1_000_000));
        assert!(s.drain().is_empty(), "no probe before 2 SRTT");
        s.advance(Dur::from_us(2));
        assert_eq!(s.drain(), vec![(9 * mss, mss)], "the last segment is the probe");
        let probe_at = s.ep().tlp.last_probe_at.unwrap();
        assert_eq!(
            probe_at,
            acked_at + Dur(2 * srtt.ps()),
            "PTO = 2 SRTT (RFC 8985 §7.2)"
        );
        assert_eq!(s.ep().tlp.probes, 1);
        // the probe's ACK ends the episode with a loss response, no timeout
        let cwnd_before = s.ep().win.cwnd;
        s.ack(10 * mss);
        assert_eq!(s.ep().tlp.losses_repaired, 1);
        assert!(s.ep().win.cwnd < cwnd_before, "cwnd cut as by fast recovery");
        let f = &s.sim.cx.net.flows[s.ep().tx_flow as usize];
        assert_eq!((f.timeouts, f.retransmits), (0, 1));
        // nothing left: no more probes or timeouts
        s.advance(Dur::from_secs(2));
        assert!(s.drain().is_empty());
        assert_eq!(s.sim.cx.net.flows[s.ep().tx_flow as usize].timeouts, 0);
    }
}

/// A 100-segment transfer over a star whose switch port to the receiver
/// drops the first copy of the last data segment.
fn transfer(tcp: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = 2
link_delay_us = 10
switch_buffer = "1MB"
[[apps]]
kind = "transfer"
src = "h0"
dst = "h1"
bytes = "144800B"
[tcp]
{tcp}
[output]
timeseries_bin_us = 0
"#
    )
}

struct DropLast {
    last_seq: u64,
    copies: u32,
    at: Arc<Mutex<Vec<Time>>>,
}

impl ArrivalHook for DropLast {
    fn on_arrival(&mut self, a: &Arrival, p: &mut Packet) -> Verdict {
        if p.payload_bytes > 0 && p.seq == self.last_seq {
            self.copies += 1;
            self.at.lock().unwrap().push(a.now);
            if self.copies == 1 {
                return Verdict::Drop(DropReason::Discipline);
            }
        }
        Verdict::Admit
    }
    fn limit_bytes(&self) -> u64 {
        1 << 30
    }
}

/// (timeouts, probes, time from the loss to the repair, SRTT at the end).
fn lose_last(tcp: &str) -> (u64, u64, Dur, Dur) {
    let mut sim = build(&transfer(tcp), None).unwrap().sim;
    let mss = sim.stack.tcp.cfg.mss_bytes as u64;
    assert_eq!(mss, 1448);
    let net = &mut sim.cx.net;
    let port = net
        .port_between(net.node("s0").unwrap(), net.node("h1").unwrap())
        .unwrap();
    let at = Arc::new(Mutex::new(Vec::new()));
    let hook = DropLast {
        last_seq: 99 * mss,
        copies: 0,
        at: at.clone(),
    };
    net.set_qdisc(port, Qdisc::Fifo(Box::new(hook))).unwrap();
    sim.run().unwrap();
    let ep = &sim.tcp.eps[0];
    let f = &sim.cx.net.flows[ep.tx_flow as usize];
    assert_eq!(f.app_bytes_delivered, 144_800, "the transfer completes");
    let at = at.lock().unwrap();
    assert_eq!(at.len(), 2, "lost once, repaired once");
    (
        f.timeouts,
        ep.tlp.probes,
        at[1].saturating_since(at[0]),
        ep.rtt.srtt().unwrap(),
    )
}

#[test]
fn a_lost_last_segment_is_repaired_by_a_probe_in_a_few_rtts_not_an_rto() {
    for tcp in ["tlp = true", "tlp = true\nsack = true"] {
        let (timeouts, probes, repair, srtt) = lose_last(tcp);
        assert_eq!((timeouts, probes), (0, 1), "{tcp}");
        // the loss is seen one RTT later (the last ACKs), the probe 2 SRTT after that
        assert!(
            repair.ps() <= 4 * srtt.ps(),
            "{tcp}: repaired {repair:?} after the loss, SRTT {srtt:?}"
        );
    }
    // without probes only the timeout (RTO_min 200 ms) repairs the tail
    let (timeouts, probes, repair, _) = lose_last("sack = true");
    assert_eq!((timeouts, probes), (1, 0));
    assert!(repair >= Dur::from_ms(200), "{repair:?}");
}

#[test]
fn with_linux_s_pto_a_lone_tail_segment_is_probed_at_the_rto_deadline_not_timed_out() {
    // Linux (tcp_schedule_loss_probe): one segment out, PTO = 2 SRTT + RTO_min,
    // later than the RTO deadline: the timer fires there as a probe, so the
    // loss is repaired without a timeout (cwnd is not cut to one segment)
    let mut s = crate::support::sender_established(xco_sim::tcp::TcpConfig {
        sack: true,
        tlp: true,
        rack: true,
        tlp_linux_pto: true,
        ..xco_sim::tcp::TcpConfig::for_mtu(1500)
    });
    let mss = s.mss;
    s.advance(xco_core::Dur::from_us(1));
    let t0 = s.now();
    s.write(2 * mss);
    assert_eq!(s.drain().len(), 2);
    s.advance(xco_core::Dur::from_us(100));
    s.ack_with_ts(mss, t0.ps()); // the second (last) segment is lost
    let acked_at = s.now();
    let mut probe = Vec::new();
    for _ in 0..400 {
        s.advance(xco_core::Dur::from_ms(1));
        probe = s.drain();
        if !probe.is_empty() {
            break;
        }
    }
    assert_eq!(probe, vec![(mss, mss)], "the lost segment again");
    // at the RTO deadline (RTO_min 200 ms), not RFC 8985's 2 SRTT + 40 ms
    let waited = s.now().saturating_since(acked_at);
    assert!(waited >= xco_core::Dur::from_ms(199), "probed after {waited:?}");
    let f = &s.sim.cx.net.flows[s.ep().tx_flow as usize];
    assert_eq!(f.timeouts, 0, "a probe, not a timeout");
    assert_eq!(s.ep().tlp.probes, 1);
}
