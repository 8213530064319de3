//! Incast: goodput collapses as servers are added, and the classic remedies move the collapse.

use crate::support::{incast, metric, run};

fn goodput(n: usize, buffer: &str, rto_min_ms: f64) -> f64 {
    metric(&run(&incast(n, 10, buffer, rto_min_ms)), 0, "goodput_mbps")
}

#[test]
fn goodput_collapses_as_servers_are_added() {
    let few = goodput(8, "300KB", 200.0);
    let many = goodput(64, "300KB", 200.0);
    assert!(few > 700.0, "8 servers fit in the buffer: {few:.1} Mbit/s");
    assert!(
        many < 0.2 * few,
        "64 servers overflow the 300 KB buffer: {many:.1} vs {few:.1}"
    );
    let sim = run(&incast(64, 10, "300KB", 200.0));
    assert!(
        metric(&sim, 0, "timeouts") > 0.0,
        "the collapse comes from retransmission timeouts"
    );
}

#[test]
fn a_large_buffer_removes_the_collapse() {
    let many = goodput(64, "10MB", 200.0);
    assert!(many > 700.0, "64 servers with a 10 MB buffer: {many:.1} Mbit/s");
}

#[test]
fn a_1ms_rto_min_largely_removes_the_collapse() {
    let slow = goodput(64, "300KB", 200.0);
    let fast = goodput(64, "300KB", 1.0);
    assert!(
        fast > 5.0 * slow,
        "RTO_min 1 ms: {fast:.1} vs 200 ms: {slow:.1} Mbit/s"
    );
    assert!(fast > 300.0, "RTO_min 1 ms keeps goodput high: {fast:.1} Mbit/s");
}

#[test]
fn striped_block_reads_split_the_block_over_servers() {
    let text = r#"
[run]
mtu_bytes = 9000
[topology]
kind = "star"
hosts = 5
[[apps]]
kind = "stripe"
client = "h0"
servers = "h1..h4"
block = "1MB"
total = "8MB"
[output]
timeseries_bin_us = 0
"#;
    let sim = run(text);
    assert_eq!(metric(&sim, 0, "rounds_done"), 8.0);
    let delivered: u64 = sim
        .cx
        .net
        .flows
        .iter()
        .filter(|f| f.role == "response")
        .map(|f| f.app_bytes_delivered)
        .sum();
    assert_eq!(delivered, 8 * 4 * 250_000);
}
