//! SACK (RFC 2018) and SACK-based loss recovery (RFC 6675): a window with
//! two holes is repaired in one recovery episode without a timeout, the
//! second hole before the first retransmission is acknowledged; the pipe
//! follows RFC 6675's `SetPipe`.

use crate::support::{sender_established, Sender};
use std::sync::{Arc, Mutex};
use xco_core::Time;
use xco_sim::net::packet::Packet;
use xco_sim::net::qdisc::{Arrival, ArrivalHook, DropReason, Qdisc, Verdict};
use xco_sim::scenario::build;
use xco_sim::tcp::recovery::Recovery;
use xco_sim::tcp::TcpConfig;

fn sack_cfg() -> TcpConfig {
    TcpConfig {
        sack: true,
        initial_cwnd_segments: 20,
        ..TcpConfig::for_mtu(1500)
    }
}

fn pipe(s: &Sender) -> u64 {
    match &s.ep().recovery {
        Recovery::Sack(r) => r.pipe,
        other => panic!("not SACK recovery: {other:?}"),
    }
}

#[test]
fn two_holes_are_repaired_in_one_episode_and_the_pipe_follows_rfc_6675() {
    let mut s = sender_established(sack_cfg());
    s.write(20 * 1448);
    let mss = s.mss;
    assert_eq!(s.drain().len(), 20);
    let seg = |k: u64| k * mss;
    // segments 2 and 7 are lost; the receiver ACKs every other arrival at once
    s.ack(seg(1));
    s.ack(seg(2));
    s.ack_sack(seg(2), &[(seg(3), seg(4))]);
    s.ack_sack(seg(2), &[(seg(3), seg(5))]);
    assert!(!s.ep().in_recovery, "two duplicates, 2 MSS SACKed: not yet");
    assert!(s.drain().is_empty());
    s.ack_sack(seg(2), &[(seg(3), seg(6))]);
    assert!(s.ep().in_recovery, "the third duplicate starts recovery");
    assert_eq!(s.drain(), vec![(seg(2), mss)], "HighACK + 1 retransmitted");
    // RFC 6675 (4.2): ssthresh = cwnd = FlightSize / 2 = 18 MSS / 2
    assert_eq!((s.ep().win.ssthresh, s.ep().win.cwnd), (9 * mss, 9 * mss));
    // SetPipe by hand: unSACKed 6..20 not lost (14) + segment 2 retransmitted (1)
    assert_eq!(pipe(&s), 15 * mss);
    s.ack_sack(seg(2), &[(seg(3), seg(7))]);
    assert_eq!(pipe(&s), 14 * mss);
    // 8 arrives past the second hole: 7 has one MSS SACKed above, not lost
    s.ack_sack(seg(2), &[(seg(8), seg(9)), (seg(3), seg(7))]);
    assert_eq!(pipe(&s), (1 + 11 + 1) * mss, "7, 9..20 and the retransmission");
    s.ack_sack(seg(2), &[(seg(8), seg(10)), (seg(3), seg(7))]);
    assert_eq!(pipe(&s), (1 + 10 + 1) * mss);
    // 3 MSS above 7: now it is lost and leaves the pipe
    s.ack_sack(seg(2), &[(seg(8), seg(11)), (seg(3), seg(7))]);
    assert_eq!(pipe(&s), (9 + 1) * mss);
    assert!(s.drain().is_empty(), "cwnd 9 < pipe 10");
    s.ack_sack(seg(2), &[(seg(8), seg(12)), (seg(3), seg(7))]);
    assert_eq!(pipe(&s), (8 + 1) * mss);
    assert!(s.drain().is_empty(), "cwnd - pipe = 0");
    s.ack_sack(seg(2), &[(seg(8), seg(13)), (seg(3), seg(7))]);
    // pipe 8 MSS: one segment may go, and NextSeg rule 1 picks the lost hole 7
    assert_eq!(s.drain(), vec![(seg(7), mss)], "second hole, same episode");
    assert_eq!(pipe(&s), 9 * mss);
    assert_eq!(s.retransmits(), 2);
    // the retransmission of 2 arrives: partial ACK up to the second hole
    s.ack_sack(seg(7), &[(seg(8), seg(13))]);
    assert!(s.ep().in_recovery);
    // pipe: 13..20 (7) + 7 retransmitted (1) = 8: one segment may go, no hole
    // is left above HighRxt, so NextSeg rule 4 sends the rescue retransmission
    // of the highest unSACKed segment, once per episode
    assert_eq!(s.drain(), vec![(seg(19), mss)]);
    // ... and of 7: everything up to 13, then the rest
    s.ack(seg(13));
    assert!(s.ep().in_recovery, "RecoveryPoint is 20");
    s.ack(seg(20));
    assert!(!s.ep().in_recovery);
    assert_eq!(s.ep().win.cwnd, 9 * mss, "cwnd = ssthresh at the end");
    let f = &s.sim.cx.net.flows[s.ep().tx_flow as usize];
    assert_eq!((f.fast_retransmits, f.timeouts, f.retransmits), (1, 0, 3));
    assert_eq!(s.drain(), vec![], "all 20 segments written were acknowledged");
}

/// One 1 MB transfer h0 -> h1 over a star, the switch port to h1 dropping
/// the first transmissions of two data segments of the same window.
use crate::support::TRANSFER_1MB as TRANSFER;

/// Drops the first copy of the segments starting at `lose`, records when
/// each later copy of them passed.
struct DropTwo {
    lose: [u64; 2],
    seen: [u32; 2],
    retransmitted_at: Arc<Mutex<Vec<Time>>>,
}

impl ArrivalHook for DropTwo {
    fn on_arrival(&mut self, a: &Arrival, p: &mut Packet) -> Verdict {
        if p.payload_bytes == 0 {
            return Verdict::Admit;
        }
        for k in 0..2 {
            if p.seq == self.lose[k] {
                self.seen[k] += 1;
                if self.seen[k] == 1 {
                    return Verdict::Drop(DropReason::Discipline);
                }
                self.retransmitted_at.lock().unwrap().push(a.now);
            }
        }
        Verdict::Admit
    }
    fn limit_bytes(&self) -> u64 {
        1 << 30
    }
}

/// The propagation round trip of the star: four 10 us links. No
/// retransmission can be acknowledged sooner.
const PROPAGATION_RTT_PS: u64 = 40_000_000;

/// Run the transfer losing segments 30 and 36; (fast retransmits,
/// timeouts, retransmits, gap between the two repairs in ps).
fn lose_two(sack: bool) -> (u64, u64, u64, u64) {
    let text = format!("{TRANSFER}[tcp]\nsack = {sack}\n");
    let mut sim = build(&text, None).unwrap().sim;
    assert_eq!(sim.stack.tcp.cfg.sack, sack);
    let mss = sim.stack.tcp.cfg.mss_bytes as u64;
    let net = &mut sim.cx.net;
    let port = net
        .port_between(net.node("s0").unwrap(), net.node("h1").unwrap())
        .unwrap();
    let at = Arc::new(Mutex::new(Vec::new()));
    let hook = DropTwo {
        lose: [30 * mss, 36 * mss],
        seen: [0; 2],
        retransmitted_at: at.clone(),
    };
    net.set_qdisc(port, Qdisc::Fifo(Box::new(hook))).unwrap();
    sim.run().unwrap();
    let ep = &sim.tcp.eps[0];
    let f = &sim.cx.net.flows[ep.tx_flow as usize];
    assert_eq!(f.app_bytes_delivered, 1_000_000, "the transfer completes");
    let at = at.lock().unwrap();
    assert_eq!(at.len(), 2, "each lost segment retransmitted once");
    let ep_rcv = &sim.tcp.eps[1];
    assert_eq!(ep_rcv.rcv_nxt, 1_000_000);
    (
        f.fast_retransmits,
        f.timeouts,
        f.retransmits,
        at[1].ps() - at[0].ps(),
    )
}

#[test]
fn with_sack_both_holes_are_retransmitted_within_one_rtt_without_a_timeout() {
    let (fr, to, rx, gap_ps) = lose_two(true);
    assert_eq!((fr, to), (1, 0), "one episode, no timeout");
    assert!((2..=3).contains(&rx), "two repairs and at most one rescue: {rx}");
    assert!(
        gap_ps < PROPAGATION_RTT_PS,
        "the second hole went out {gap_ps} ps after the first: before the first could be acknowledged"
    );
    // NewReno also gets there without a timeout, but learns of the second
    // hole only from the partial ACK, at least a round trip later
    let (fr, to, rx, gap_ps) = lose_two(false);
    assert_eq!((fr, to, rx), (1, 0, 2));
    assert!(gap_ps > PROPAGATION_RTT_PS, "NewReno gap {gap_ps} ps");
}

/// Data segment `[seq, seq + len)` as the sender of `s` would send it.
fn data(s: &Sender, seq: u64, len: u64) -> Packet {
    let e = s.ep();
    Packet {
        seq,
        payload_bytes: len as u32,
        ip_bytes: 52 + len as u32,
        flags: xco_sim::net::packet::FLAG_ACK,
        wnd: 1 << 30,
        flow: e.tx_flow,
        dst_ep: e.peer_ep,
        src_ep: s.ep,
        ts_val: 1,
        ..Packet::EMPTY
    }
}

#[test]
fn a_duplicate_segment_is_answered_at_once_with_a_d_sack_block() {
    let mut s = sender_established(sack_cfg());
    let mss = s.mss;
    let rx = s.ep().peer_ep as usize;
    let h1 = s.sim.cx.net.node("h1").unwrap();
    let nic = s.sim.cx.net.nodes[h1 as usize].nic;
    let deliver = |s: &mut Sender, p: Packet| {
        let (cx, stack) = (&mut s.sim.cx, &mut s.sim.stack);
        s.sim.tcp.eps[rx].on_segment(cx, stack, u32::MAX, &p);
        cx.net.take_packets(nic)
    };
    let first = data(&s, 0, mss);
    assert!(deliver(&mut s, first).is_empty(), "in order: the ACK is delayed");
    let acks = deliver(&mut s, first);
    assert_eq!(acks.len(), 1, "a duplicate is ACKed at once");
    let sack = xco_sim::net::packet::FLAG_SACK;
    assert!(acks[0].flags & sack != 0, "carrying the D-SACK block");
    assert_eq!(acks[0].ack, mss);
    assert!(acks[0].ip_bytes > 52);
    assert_eq!(s.sim.tcp.eps[rx].dsacks_sent, 1);
    // reported once: the next ACK carries no SACK option
    let (second, third) = (data(&s, mss, mss), data(&s, 2 * mss, mss));
    let mut acks = deliver(&mut s, second);
    if acks.is_empty() {
        acks = deliver(&mut s, third); // the second full segment forces the ACK
    }
    assert!(!acks.is_empty());
    assert!(acks.iter().all(|a| a.flags & sack == 0 && a.ip_bytes == 52));
    assert_eq!(s.sim.tcp.eps[rx].dsacks_sent, 1);
    // a duplicate of held out-of-order data is a D-SACK too
    let ooo = data(&s, 10 * mss, mss);
    deliver(&mut s, ooo);
    let acks = deliver(&mut s, ooo);
    assert!(acks.iter().all(|a| a.flags & sack != 0));
    assert_eq!(s.sim.tcp.eps[rx].dsacks_sent, 2);
}
