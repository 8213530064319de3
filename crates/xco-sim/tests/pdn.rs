//! PDN (spec `pdn.md`): switches notify senders of congestion drops; the
//! sender retransmits the dropped segment at once and halves its window at
//! most once per window of data.

use crate::support::{incast, metric, run};
use std::collections::BTreeSet;
use xco_sim::net::packet::PktKind;
use xco_sim::scenario::build;
use xco_sim::sim::Sim;

fn with_pdn(text: &str, extra: &str) -> String {
    format!("{text}\n[pdn]\n{extra}\n")
}

#[test]
fn pdn_keeps_incast_goodput_up_to_150_servers_without_a_timeout() {
    // the no-collapse plateau: 8 servers fit in the 300 KB port
    let plateau = metric(&run(&incast(8, 10, "300KB", 200.0)), 0, "goodput_mbps");
    let without = metric(&run(&incast(64, 10, "300KB", 200.0)), 0, "goodput_mbps");
    assert!(
        without < 0.2 * plateau,
        "NewReno collapses at 64 servers: {without:.1} vs {plateau:.1} Mbit/s"
    );
    for n in [32, 64, 150] {
        let sim = run(&with_pdn(&incast(n, 10, "300KB", 200.0), ""));
        let goodput = metric(&sim, 0, "goodput_mbps");
        let timeouts = metric(&sim, 0, "timeouts");
        assert_eq!(timeouts, 0.0, "no retransmission timeout with PDN at N = {n}");
        // the spec: "with PDN goodput stays high"; 80% of the plateau leaves
        // room for the retransmitted copies sharing the servers' links
        assert!(
            goodput > 0.8 * plateau,
            "N = {n}: {goodput:.1} Mbit/s with PDN vs a plateau of {plateau:.1}"
        );
        let t = sim.cx.net.pdn().unwrap().totals();
        assert!(t.made > 0, "N = {n}: the collapse's drops were notified");
        assert_eq!(
            t.delivered + t.lost,
            t.made,
            "every notification ends delivered or lost"
        );
    }
}

/// One sender behind two switches; the last port toward the receiver is slow
/// and small, so the first window overflows there and every notification
/// travels two hops back (sb -> sa -> h0). The transfer is exactly the
/// initial window (14 segments of the PDN MSS, 1428 B), so nothing new
/// follows the burst and the retransmissions find the port drained.
fn two_hop(extra_pdn: &str, capture: &str) -> String {
    format!(
        r#"
[topology]
kind = "explicit"
nodes = [
  {{ name = "h0", kind = "host" }},
  {{ name = "sa", kind = "switch" }},
  {{ name = "sb", kind = "switch" }},
  {{ name = "h1", kind = "host" }},
]
links = [
  {{ a = "h0", b = "sa", rate = "10Gbps", delay_us = 5 }},
  {{ a = "sa", b = "sb", rate = "10Gbps", delay_us = 5 }},
  {{ a = "sb", b = "h1", rate = "1Gbps", delay_us = 5 }},
]
switch_buffer = "15KB"
[tcp]
initial_cwnd_segments = 14
[[apps]]
kind = "transfer"
src = "h0"
dst = "h1"
bytes = "19992B"
[output]
timeseries_bin_us = 0
capture = [{capture}]
[pdn]
{extra_pdn}
"#
    )
}

fn built(text: &str) -> Sim {
    let mut b = build(text, None).unwrap_or_else(|e| panic!("scenario error: {e}"));
    b.sim.run().unwrap();
    b.sim
}

#[test]
fn a_notification_reaches_the_sender_hop_by_hop_and_repairs_exactly_the_dropped_segment() {
    let sim = built(&two_hop("", r#""sa->sb", "sb->h1", "h0->sa""#));
    let net = &sim.cx.net;
    let flow = &net.flows[0];
    let seqs = |i: usize| -> Vec<u64> {
        net.captures[i]
            .records()
            .iter()
            .filter(|(_, p)| p.kind == PktKind::Tcp && p.payload_bytes > 0 && p.flow == 0)
            .map(|(_, p)| p.seq)
            .collect()
    };
    // what reached sb's slow port for the first time, minus what left it: the drops
    let arrived_first: BTreeSet<u64> = seqs(0).into_iter().collect();
    let departed_first: Vec<u64> = seqs(1);
    let mut left = BTreeSet::new();
    let mut dropped = BTreeSet::new();
    for s in &departed_first {
        left.insert(*s);
    }
    for s in &arrived_first {
        if !left.contains(s) {
            dropped.insert(*s);
        }
    }
    // the sender's retransmissions: segments it sent more than once
    let mut seen = BTreeSet::new();
    let mut resent = Vec::new();
    for s in seqs(2) {
        if !seen.insert(s) {
            resent.push(s);
        }
    }
    let pdn = net.pdn().unwrap();
    let t = pdn.totals();
    assert!(t.made >= 2, "the first window overflowed sb's port: {t:?}");
    assert_eq!(t.delivered, t.made, "nothing lost on the way back: {t:?}");
    assert_eq!(flow.timeouts, 0);
    assert_eq!(
        flow.fast_retransmits, 0,
        "PDN repaired the losses before three duplicate ACKs"
    );
    assert_eq!(
        flow.notified_retransmits, t.made,
        "one retransmission per notification"
    );
    assert_eq!(
        flow.retransmits, flow.notified_retransmits,
        "no other retransmission"
    );
    // each retransmitted segment is a dropped one, and each dropped one was resent exactly once
    let resent_set: BTreeSet<u64> = resent.iter().copied().collect();
    assert_eq!(
        resent.len(),
        resent_set.len(),
        "a segment resent twice: {resent:?}"
    );
    assert!(
        dropped.iter().all(|s| resent_set.contains(s)),
        "dropped {dropped:?}, resent {resent:?}"
    );
    // hop by hop: made at sb's port toward h1, carried on sb->sa, then sa->h0
    let port = |a: &str, b: &str| {
        net.port_between(net.node(a).unwrap(), net.node(b).unwrap())
            .unwrap() as usize
    };
    let carried = |p: usize| pdn.stats[p].piggybacked + pdn.stats[p].empty_frames;
    assert_eq!(pdn.stats[port("sb", "h1")].made, t.made);
    assert_eq!(carried(port("sb", "sa")), t.made, "first hop back");
    assert_eq!(carried(port("sa", "h0")), t.made, "second hop back");
    assert_eq!(
        carried(port("sa", "sb")) + carried(port("sb", "h1")),
        0,
        "nothing went forward"
    );
    // several notifications within one window of data halve the window once
    assert_eq!(
        flow.notified_reductions, 1,
        "{} notifications, one reduction",
        t.made
    );
}

#[test]
fn a_notification_queue_bound_of_one_is_kept_and_what_did_not_fit_is_counted() {
    let sim = built(&two_hop("queue_notices = 1", r#""sb->sa""#));
    let t = sim.cx.net.pdn().unwrap().totals();
    assert!(t.made >= 2);
    assert_eq!(t.max_queue_len, 1, "{t:?}");
    assert_eq!(t.made, t.delivered + t.lost, "{t:?}");
}

#[test]
fn pdn_and_newreno_hosts_share_a_network_and_only_pdn_hosts_are_notified() {
    let sim = run(&with_pdn(
        &incast(64, 5, "300KB", 200.0),
        r#"hosts = ["a0..a31", "b0"]"#,
    ));
    let flows = &sim.cx.net.flows;
    let (mut pdn_hosts, mut others) = (0, 0);
    for f in flows.iter() {
        let name = sim.cx.net.name(f.src);
        let idx: u32 = name[1..].parse().unwrap_or(0);
        if name.starts_with('a') && idx >= 32 {
            others += f.notified_retransmits;
        } else {
            pdn_hosts += f.notified_retransmits;
        }
    }
    assert!(pdn_hosts > 0);
    assert_eq!(others, 0, "hosts without PDN get no notifications");
}

#[test]
fn frames_that_carry_a_notification_are_ethertype_0xa800_in_the_capture() {
    let sim = built(&two_hop("", r#""sb->sa""#));
    let net = &sim.cx.net;
    let port = net
        .port_between(net.node("sb").unwrap(), net.node("sa").unwrap())
        .unwrap() as usize;
    let s = net.pdn().unwrap().stats[port];
    let pcap = net.captures[0].to_pcap();
    let mut r = pcap_file::pcap::PcapReader::new(&pcap[..]).unwrap();
    let (mut pdn_frames, mut pdn_len, mut others) = (0u64, 0u64, 0u64);
    while let Some(pkt) = r.next_packet() {
        let pkt = pkt.unwrap();
        if pkt.data[12..14] == [0xA8, 0x00] {
            pdn_frames += 1;
            pdn_len += pkt.orig_len as u64;
        } else {
            assert_eq!(pkt.data[12..14], [0x08, 0x00]);
            others += 1;
        }
    }
    assert!(others > 0, "the ACKs toward the sender");
    assert_eq!(pdn_frames, s.piggybacked + s.empty_frames, "{s:?}");
    assert!(pdn_len > 0);
}

#[test]
fn sack_acks_in_a_capture_stay_plain_ipv4_frames() {
    // SACK blocks use a packet flag bit; only PDN carriers may be 0xA800 frames
    let text = incast(64, 3, "100KB", 200.0)
        .replace("[tcp]\n", "[tcp]\nsack = true\n")
        .replace("[output]\n", "[output]\ncapture = [\"sb->sa\"]\n");
    let sim = built(&text);
    let cap = &sim.cx.net.captures[0];
    let sacks = cap
        .records()
        .iter()
        .filter(|(_, p)| p.flags & xco_sim::net::packet::FLAG_SACK != 0)
        .count();
    assert!(sacks > 0, "the receiver sent SACK blocks toward the senders");
    let pcap = cap.to_pcap();
    let mut r = pcap_file::pcap::PcapReader::new(&pcap[..]).unwrap();
    while let Some(pkt) = r.next_packet() {
        assert_eq!(pkt.unwrap().data[12..14], [0x08, 0x00], "no PDN in this run");
    }
}

/// A PDN TCP flow h0 -> h2 beside a line-rate UDP flood h1 -> h2 that keeps
/// the small port toward h2 full: most of the TCP flow's segments, and of
/// their notified retransmissions, are dropped.
fn shut_out(resend: &str) -> Sim {
    run(&format!(
        r#"
[run]
duration_ms = 300
[topology]
kind = "star"
hosts = 3
switch_buffer = "30KB"
[[apps]]
kind = "bulk"
src = "h0"
dst = "h2"
[[apps]]
kind = "udp"
src = "h1"
dst = "h2"
[output]
timeseries_bin_us = 0
[pdn]
hosts = ["h0", "h2"]
resend = "{resend}"
"#
    ))
}

#[test]
fn each_resend_rule_answers_notifications_as_documented() {
    let answered = |sim: &Sim| {
        let t = sim.cx.net.pdn().unwrap().totals();
        assert_eq!(t.lost, 0, "every notification reached the sender");
        t.delivered
    };
    // at-once (the spec): every notification is answered with a resend
    let every = shut_out("at-once");
    let f = &every.cx.net.flows[0];
    assert_eq!(f.notified_left_to_timer, 0);
    assert_eq!(f.notified_retransmits, answered(&every));
    // once: the same run meets lost resends (a second notification of a
    // segment) and leaves exactly those to the timer
    let once = shut_out("once");
    let g = &once.cx.net.flows[0];
    assert!(
        g.notified_left_to_timer > 0,
        "the flood drops resent segments too"
    );
    assert_eq!(g.notified_retransmits + g.notified_left_to_timer, answered(&once));
    assert!(g.timeouts > 0, "the timer repairs what was left to it");
    assert!(
        f.wire_bytes_sent > 4 * g.wire_bytes_sent,
        "at once resends far more: {} vs {} bytes sent",
        f.wire_bytes_sent,
        g.wire_bytes_sent
    );
    // window: nothing is left to the timer; a notified segment waits for
    // the window, so at most every notification is answered
    let win = shut_out("window");
    let w = &win.cx.net.flows[0];
    assert_eq!(w.notified_left_to_timer, 0);
    assert!(w.notified_retransmits > 0 && w.notified_retransmits <= answered(&win));
    // window-rtt: a lost resend waits a round trip before its next copy, so
    // fewer than half as many bytes go into the flooded port as under window
    let rtt = shut_out("window-rtt");
    let r = &rtt.cx.net.flows[0];
    assert_eq!(r.notified_left_to_timer, 0);
    assert!(r.notified_retransmits > 0 && r.notified_retransmits <= answered(&rtt));
    assert!(
        w.wire_bytes_sent > 2 * r.wire_bytes_sent,
        "{} vs {} bytes sent",
        w.wire_bytes_sent,
        r.wire_bytes_sent
    );
}

#[test]
fn incast_rounds_end_without_timeouts_under_every_rule_but_once() {
    let notices = |rule: &str| {
        let sim = run(&with_pdn(
            &incast(150, 10, "300KB", 200.0),
            &format!("resend = \"{rule}\""),
        ));
        let t = sim.cx.net.pdn().unwrap().totals();
        (metric(&sim, 0, "timeouts"), t.made)
    };
    let (at_once, at_once_made) = notices("at-once");
    let (window, window_made) = notices("window");
    let (rtt, rtt_made) = notices("window-rtt");
    let (once, _) = notices("once");
    assert_eq!((at_once, window, rtt), (0.0, 0.0, 0.0));
    assert!(once > 0.0, "lost resends wait for the timer");
    // waiting for the window, and a round trip after a lost resend, puts
    // fewer copies into the full port
    assert!(window_made < at_once_made, "{window_made} vs {at_once_made}");
    assert!(rtt_made < window_made, "{rtt_made} vs {window_made}");
}
