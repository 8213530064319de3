//! Bytes are conserved: what was sent was delivered, dropped, or is still in flight.

use crate::support::incast;
use std::collections::HashMap;
use xco_sim::net::qdisc::QueueDiscipline;
use xco_sim::scenario::build;

fn check_conservation(text: &str) -> (u64, u64) {
    let mut b = build(text, None).unwrap();
    b.sim.run().unwrap();
    let net = &b.sim.core.net;
    // every live packet is in exactly one queue or pipe
    let mut in_flight: HashMap<u32, u64> = HashMap::new();
    let mut held = 0usize;
    for (i, p) in net.ports.iter().enumerate() {
        let queued: Vec<u32> = p.qdisc.packets();
        let piped: Vec<u32> = p.in_pipe().collect();
        held += queued.len() + piped.len();
        for &id in queued.iter().chain(piped.iter()) {
            *in_flight.entry(net.pool[id].flow).or_default() += net.pool[id].ip_bytes as u64;
        }
        let piped_bytes: u64 = piped.iter().map(|&id| (net.pool[id].ip_bytes + 18) as u64).sum();
        let st = &p.stats;
        assert_eq!(
            st.arrived_bytes,
            st.tx_bytes + st.dropped_bytes + p.qdisc.backlog_bytes(),
            "port {i}: arrived = sent + dropped + queued"
        );
        assert_eq!(
            st.tx_bytes,
            st.delivered_bytes + piped_bytes,
            "port {i}: sent = delivered + on the wire"
        );
    }
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
