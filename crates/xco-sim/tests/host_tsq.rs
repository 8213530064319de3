//! TCP Small Queues (`[host] tsq_limit_bytes`): one TCP socket keeps at most
//! its limit in its host's NIC queue, and still fills its link.

use crate::support::{metric, run};
use xco_sim::sim::Sim;

/// A ping from h0 to h2 every 200 us while h0 also sends bulk TCP to h1
/// over 1 Gb/s links, NIC queues of 1,000 packets; `tsq` is the
/// `tsq_limit_bytes` line (empty: TSQ off).
fn bulk_and_ping(tsq: &str) -> String {
    format!(
        r#"[run]
duration_ms = 300
[topology]
kind = "star"
hosts = 3
host_rate = "1Gbps"
link_delay_us = 5
switch_buffer = "128KB"
[host]
txqueuelen = 1000
{tsq}
[[apps]]
kind = "ping"
src = "h0"
dst = "h2"
interval_us = 200
[[apps]]
kind = "bulk"
src = "h0"
dst = "h1"
"#
    )
}

/// h0's NIC: (most bytes it held, packets it dropped).
fn nic(sim: &Sim) -> (u64, u64) {
    let h0 = sim.cx.net.node("h0").unwrap();
    let p = &sim.cx.net.ports[sim.cx.net.nodes[h0 as usize].nic as usize];
    (p.stats.max_backlog_bytes, p.stats.dropped_packets)
}

#[test]
fn a_bulk_flow_holds_at_most_its_tsq_limit_in_a_deep_nic_queue() {
    let off = run(&bulk_and_ping(""));
    let (off_max, off_drops) = nic(&off);
    let off_rtt = metric(&off, 0, "rtt_us_max");
    let off_goodput = metric(&off, 1, "goodput_mbps");
    for cap in [262_144u64, 1 << 20] {
        let on = run(&bulk_and_ping(&format!("tsq_limit_bytes = {cap}")));
        let (on_max, on_drops) = nic(&on);
        let on_rtt = metric(&on, 0, "rtt_us_max");
        let on_goodput = metric(&on, 1, "goodput_mbps");
        eprintln!(
            "tsq cap {cap} B: NIC max {on_max} B (off {off_max}), ping max RTT {on_rtt:.0} us \
             (off {off_rtt:.0}), bulk {on_goodput:.1} Mbit/s (off {off_goodput:.1})"
        );
        assert_eq!((on_drops, off_drops), (0, 0), "nothing lost at the host");
        // the socket's bytes stay within the cap, give or take a few frames:
        // it sends while below the limit (one frame may cross it), pings
        // share the queue, and the port's maximum is sampled at arrivals
        // (measured: 1,490 B over a 256 KiB cap, 4,646 B over 1 MiB)
        assert!(on_max <= cap + 4 * 1538, "NIC held {on_max} B, cap {cap}");
        assert!(
            off_max > 1_000_000,
            "without TSQ the NIC queue fills: {off_max} B"
        );
        // the link stays full
        assert!(
            on_goodput > 0.97 * off_goodput,
            "{on_goodput:.1} vs {off_goodput:.1}"
        );
        assert!(on_goodput > 900.0, "{on_goodput:.1}");
        // a ping behind the flow waits behind a short queue: at most the
        // cap's transmission time (8.4 ms per MiB at 1 Gb/s) and a margin
        let cap_us = cap as f64 * 8.0 / 1e3;
        assert!(
            on_rtt < cap_us + 200.0,
            "ping max RTT {on_rtt:.0} us, cap {cap_us:.0} us"
        );
        assert!(on_rtt < off_rtt, "{on_rtt:.0} vs {off_rtt:.0}");
    }
}

#[test]
fn the_tsq_cap_is_checked() {
    let e = match xco_sim::scenario::build(&bulk_and_ping("tsq_limit_bytes = 100"), None) {
        Ok(_) => panic!("a 100-byte cap was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(e.starts_with("host.tsq_limit_bytes: must be from 1538"), "{e}");
}
