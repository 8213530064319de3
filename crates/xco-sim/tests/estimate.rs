//! The cost estimate before a run: counts times the sizes of the real
//! structs, and bounds on what the run then holds.

use std::mem::size_of;
use xco_sim::net::port::Port;
use xco_sim::scenario::build;
use xco_sim::scenario::estimate::Estimate;
use xco_sim::stats::FlowStats;
use xco_sim::tcp::endpoint::TcpEndpoint;

fn part<'a>(e: &'a Estimate, name: &str) -> &'a xco_sim::scenario::estimate::Part {
    e.parts
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no part {name}: {}", e.text()))
}

/// A k = 4 fat-tree: bulk TCP from h0..h7 to h15 and an incast, a time series.
const FATTREE: &str = r#"
[run]
duration_ms = 5
[topology]
kind = "fat_tree"
k = 4
host_rate = "10Gbps"
link_delay_us = 1
switch_buffer = "100KB"
[[apps]]
kind = "bulk"
src = "h0..h7"
dst = "h15"
[[apps]]
kind = "incast"
client = "h14"
servers = "h8..h13"
sru = "64KB"
rounds = 5
[output]
timeseries_bin_us = 100
"#;

#[test]
fn the_parts_are_counts_times_the_sizes_of_the_simulator_s_structs() {
    let b = build(FATTREE, None).unwrap();
    let e = b.estimate();
    let ports = part(&e, "ports");
    assert_eq!(ports.count, b.sim.cx.net.ports.len() as u64);
    assert_eq!(ports.item_bytes, (size_of::<Port>() + 12) as u64);
    // 8 bulk connections and 6 incast servers, two flows and two ends each
    assert_eq!(part(&e, "flows").count, 28);
    assert_eq!(part(&e, "flows").item_bytes, size_of::<FlowStats>() as u64);
    assert_eq!(part(&e, "TCP endpoints").count, 28);
    assert_eq!(
        part(&e, "TCP endpoints").item_bytes,
        size_of::<TcpEndpoint>() as u64
    );
    assert_eq!(
        e.bytes(),
        e.parts.iter().map(|p| p.count * p.item_bytes).sum::<u64>()
    );
    assert!(
        e.parts.windows(2).all(|w| w[0].bytes >= w[1].bytes),
        "largest first"
    );
    assert!(e.end_is_duration && (e.end_s - 0.005).abs() < 1e-12);
    assert_eq!(e.hops, 6, "host to host across the core of a fat-tree");
    assert!(e.text().starts_with("memory: about "), "{}", e.text());
}

#[test]
fn what_a_run_holds_stays_within_its_estimate() {
    let mut b = build(FATTREE, None).unwrap();
    let e = b.estimate();
    let st = b.sim.run().unwrap();
    let net = &b.sim.cx.net;
    assert!(net.flows.len() as u64 <= part(&e, "flows").count);
    assert!(b.sim.tcp.eps.len() as u64 <= part(&e, "TCP endpoints").count);
    assert!(net.router().bytes() <= part(&e, "routing tables").bytes);
    let ts = part(&e, "time series");
    assert!(
        b.sim.timeseries.text().len() as u64 <= ts.item_bytes,
        "{} > {}",
        b.sim.timeseries.text().len(),
        ts.item_bytes
    );
    // the time series is not a wild guess either
    assert!(b.sim.timeseries.text().len() as u64 * 3 > ts.item_bytes);
    // events: the right order of magnitude
    let ratio = e.events / st.events as f64;
    assert!(
        (0.3..10.0).contains(&ratio),
        "estimated {:.2e}, ran {}",
        e.events,
        st.events
    );
}

#[test]
fn packets_in_flight_are_bounded_by_the_buffers_or_by_what_the_apps_have_out() {
    // an incast of 40 servers x 10 KB: far fewer packets than the buffers hold
    let incast = include_str!("../../../scenarios/incast.toml");
    let e = build(incast, None).unwrap().estimate();
    let p = part(&e, "packets in flight");
    assert!(p.what.starts_with("every TCP window full"), "{}", p.what);
    assert!(p.count < 40 * 10_000 / 1448 * 2 + 200, "{}", p.count);
    // UDP sends whatever the network takes: every buffer may fill
    let udp = include_str!("../../../scenarios/udp-starves-tcp.toml");
    let e = build(udp, None).unwrap().estimate();
    assert!(part(&e, "packets in flight")
        .what
        .starts_with("every buffer full"));
}

#[test]
fn more_hosts_cost_more_and_a_run_without_duration_assumes_its_least_time() {
    let star = |n: usize| {
        format!(
            "[topology]\nkind = \"star\"\nhosts = {n}\n[[apps]]\nkind = \"incast\"\nclient = \"h0\"\n\
             servers = \"h1..h{}\"\nsru = \"100KB\"\nrounds = 2\n",
            n - 1
        )
    };
    let small = build(&star(10), None).unwrap().estimate();
    let big = build(&star(1000), None).unwrap().estimate();
    assert!(big.bytes() > 10 * part(&small, "TCP endpoints").bytes);
    assert_eq!(part(&small, "TCP endpoints").count, 2 * 9);
    assert_eq!(part(&big, "TCP endpoints").count, 2 * 999);
    // 999 servers x 100 KB x 2 rounds through h0's 1 Gbit/s NIC: at least 1.6 s
    assert!(!big.end_is_duration);
    assert!(
        (big.end_s - 999.0 * 100_000.0 * 2.0 * 8.0 / 1e9).abs() < 1e-6,
        "{}",
        big.end_s
    );
}
