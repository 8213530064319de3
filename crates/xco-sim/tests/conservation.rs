//! Bytes are conserved: what was sent was delivered, dropped, or is still in flight.

use crate::support::incast;
use std::collections::HashMap;
use xco_sim::net::packet::PktKind;
use xco_sim::scenario::build;

fn check_conservation(text: &str) -> (u64, u64) {
    let mut b = build(text, None).unwrap();
    b.sim.run().unwrap();
    let now = b.sim.cx.now;
    let net = &mut b.sim.cx.net;
    // every live packet is held by exactly one port (waiting, serialising or propagating)
    let mut in_flight: HashMap<u32, u64> = HashMap::new();
    let mut held = 0usize;
    let mut waiting_somewhere = false;
    for i in 0..net.ports.len() {
        let all: Vec<u32> = net.ports[i].in_pipe().collect();
        held += all.len();
        // PDN notifications ride on frames but are no flow's bytes (nor a frame of their own)
        let piped: Vec<u32> = all
            .into_iter()
            .filter(|&id| net.pool[id].kind != PktKind::DropNotice)
            .collect();
        for &id in &piped {
            *in_flight.entry(net.pool[id].flow).or_default() += net.pool[id].ip_bytes as u64;
        }
        let piped_bytes: u64 = piped.iter().map(|&id| (net.pool[id].ip_bytes + 18) as u64).sum();
        let p = &mut net.ports[i];
        let backlog = p.backlog_bytes(now);
        waiting_somewhere |= backlog > 0;
        assert!(
            backlog <= p.buffer_bytes,
            "port {i}: backlog {backlog} over the buffer"
        );
        assert!(
            backlog <= piped_bytes,
            "port {i}: waiting bytes are admitted bytes"
        );
        let st = &p.stats;
        assert_eq!(
            st.arrived_bytes,
            st.admitted_bytes + st.dropped_bytes,
            "port {i}: arrived = admitted + dropped"
        );
        assert_eq!(
            st.admitted_bytes,
            st.delivered_bytes + piped_bytes,
            "port {i}: admitted = delivered + waiting or on the wire"
        );
    }
    assert!(
        waiting_somewhere,
        "the test must stop with packets waiting in a queue"
    );
    // packets an XCo coordinator holds at their own host are in flight too
    let at_hosts = b
        .sim
        .stack
        .xco
        .as_ref()
        .map(|x| x.held_packets())
        .unwrap_or_default();
    for &id in &at_hosts {
        *in_flight.entry(net.pool[id].flow).or_default() += net.pool[id].ip_bytes as u64;
    }
    held += at_hosts.len();
    // notifications waiting in PDN notification queues
    held += (0..net.ports.len() as u32)
        .map(|p| net.notice_queue_len(p))
        .sum::<usize>();
    assert_eq!(held, net.pool.live(), "packets leaked from the pool");
    let mut drops = 0;
    for (i, f) in net.flows.iter().enumerate() {
        let fl = in_flight.get(&(i as u32)).copied().unwrap_or(0);
        assert_eq!(
            f.wire_bytes_sent,
            f.wire_bytes_received + f.wire_bytes_dropped + fl,
            "flow {i}: sent = delivered + dropped + in flight"
        );
        drops += f.wire_bytes_dropped;
    }
    (drops, in_flight.values().sum())
}

#[test]
fn bytes_are_conserved_per_flow_and_port_mid_run_with_drops() {
    // stopped in the middle of a lossy incast: packets are queued, on the wire and dropped
    let mut text = incast(48, 50, "100KB", 200.0);
    text = text.replace("[tcp]", "[run]\nduration_ms = 0.6\n[tcp]");
    let (dropped, in_flight) = check_conservation(&text);
    assert!(dropped > 0, "the test must exercise drops");
    assert!(in_flight > 0, "the test must stop with packets in flight");
}

#[test]
fn bytes_are_conserved_with_udp_and_pings() {
    let text = r#"
[run]
duration_ms = 5.5
[topology]
kind = "star"
hosts = 4
switch_buffer = "50KB"
[[apps]]
kind = "udp"
src = "h0..h2"
dst = "h3"
[[apps]]
kind = "ping"
src = "h3"
dst = "h0"
interval_us = 100
"#;
    let (dropped, _) = check_conservation(text);
    assert!(dropped > 0);
}

#[test]
fn bytes_are_conserved_under_xco_with_packets_held_at_hosts() {
    let text = r#"
[run]
duration_ms = 7.3
[topology]
kind = "star"
hosts = 6
switch_buffer = "64KB"
[[apps]]
kind = "udp"
src = "h0..h2"
dst = "h4"
[[apps]]
kind = "bulk"
src = "h3"
dst = "h4"
[xco]
controller = "h5"
slice_ms = 1
v2v_queue = "200KB"
"#;
    let (dropped, in_flight) = check_conservation(text);
    assert!(dropped > 0 && in_flight > 0);
}

#[test]
fn bytes_are_conserved_with_pdn_notifications_in_flight() {
    // notifications travel beside the data; they are no flow's bytes
    let mut text = incast(64, 50, "100KB", 200.0);
    text = text.replace("[tcp]", "[run]\nduration_ms = 0.6\n[tcp]");
    text.push_str("\n[pdn]\n");
    let (dropped, in_flight) = check_conservation(&text);
    assert!(dropped > 0 && in_flight > 0);
}
