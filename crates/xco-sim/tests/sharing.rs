//! Throughput and sharing of long TCP flows.

use crate::support::{metric, run};

#[test]
fn single_flow_reaches_line_rate_minus_headers() {
    let sim = run(r#"
[topology]
kind = "star"
hosts = 2
link_delay_us = 10
switch_buffer = "1MB"
[[apps]]
kind = "transfer"
src = "h0"
dst = "h1"
bytes = "50MB"
[output]
timeseries_bin_us = 0
"#);
    let goodput = metric(&sim, 0, "goodput_mbps");
    // per 1500 B IP packet: 1448 B of payload for 1500 + 18 (Ethernet) + 20 (preamble, gap) on the wire
    let ideal = 1000.0 * 1448.0 / 1538.0;
    assert!(
        goodput > 0.95 * ideal && goodput <= ideal * 1.0001,
        "goodput {goodput:.1} Mbit/s vs ideal {ideal:.1}"
    );
}

#[test]
fn long_flows_share_a_bottleneck_fairly_and_fill_it() {
    let sim = run(r#"
[run]
duration_ms = 3000
[topology]
kind = "star"
hosts = 5
link_delay_us = 20
switch_buffer = "300KB" # ~30x the bandwidth-delay product
[[apps]]
kind = "bulk"
src = "h0..h3"
dst = "h4"
[output]
timeseries_bin_us = 0
"#);
    let rates: Vec<f64> = (0..4).map(|i| metric(&sim, i, "goodput_mbps")).collect();
    let sum: f64 = rates.iter().sum();
    let sumsq: f64 = rates.iter().map(|r| r * r).sum();
    let jain = sum * sum / (4.0 * sumsq);
    assert!(jain > 0.9, "Jain's index {jain:.3} for {rates:?}");
    let net = &sim.cx.net;
    let h4 = net.node("h4").unwrap();
    let s0 = net.node("s0").unwrap();
    let port = &net.ports[net.port_between(s0, h4).unwrap() as usize];
    let util = port.stats.delivered_bytes as f64 * 8.0 / (port.rate_bps as f64 * sim.cx.now.as_secs_f64());
    assert!(util > 0.9, "bottleneck utilisation {util:.3}");
    assert!(
        port.stats.dropped_packets > 0,
        "the flows must have probed the buffer"
    );
}
