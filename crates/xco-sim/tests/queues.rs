//! Port disciplines chosen in scenarios: `topology.queue` for every switch
//! port, `[[topology.queues]]` per switch or per port; RED marks ECN-capable
//! traffic instead of dropping it and writes the marks into captures; SFQ
//! chosen this way shares a port between one flow and twelve.

use crate::support::metric;
use xco_sim::net::qdisc::{PortMode, Qdisc};
use xco_sim::net::Net;
use xco_sim::scenario::build;
use xco_sim::sim::Sim;
use xco_sim::{run_scenario, RunOutput};

fn sim_of(text: &str) -> Sim {
    build(text, None)
        .unwrap_or_else(|e| panic!("scenario error: {e}"))
        .sim
}

fn err(text: &str) -> String {
    match build(text, None) {
        Ok(_) => panic!("scenario was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn port(net: &Net, from: &str, to: &str) -> u32 {
    net.port_between(net.node(from).unwrap(), net.node(to).unwrap())
        .unwrap()
}

/// What runs at a port: "droptail", "fifo-hook" or "scheduled", with its limit.
fn kind_at(net: &Net, from: &str, to: &str) -> (&'static str, u64) {
    let q = net.ports[port(net, from, to) as usize].qdisc();
    let k = match q {
        Qdisc::DropTail(_) => "droptail",
        Qdisc::Fifo(_) => "fifo-hook",
        Qdisc::Scheduled(_) => "scheduled",
    };
    (k, q.limit_bytes())
}

const TWO_SWITCH: &str = r#"
[topology]
kind = "two_switch"
hosts_a = 2
hosts_b = 2
switch_buffer = "100KB"
QUEUE
[[apps]]
kind = "transfer"
src = "a0"
dst = "b0"
bytes = "10KB"
[output]
timeseries_bin_us = 0
"#;

fn two_switch(queue: &str) -> String {
    TWO_SWITCH.replace("QUEUE", queue)
}

#[test]
fn drop_tail_stays_the_default() {
    let sim = sim_of(&two_switch(""));
    for p in &sim.cx.net.ports {
        assert!(matches!(p.qdisc(), Qdisc::DropTail(_)));
    }
}

#[test]
fn the_topology_queue_runs_every_switch_port_and_overrides_beat_it() {
    let sim = sim_of(&two_switch(
        r#"queue = { kind = "red", min_th = "30KB", max_th = "90KB" }
[[topology.queues]]
switch = "sb"
kind = "sfq"
perturb_ms = 10
[[topology.queues]]
port = "sb->b1"
kind = "droptail"
buffer = "50KB"
[[topology.queues]]
port = "a0->sa"
kind = "red"
min_th = "5KB"
max_th = "15KB"
buffer = "1MB""#,
    ));
    let net = &sim.cx.net;
    // the default: every switch port of sa
    assert_eq!(kind_at(net, "sa", "a0"), ("fifo-hook", 100_000));
    assert_eq!(kind_at(net, "sa", "sb"), ("fifo-hook", 100_000));
    // the switch entry beats it at sb, the port entry beats both
    assert_eq!(kind_at(net, "sb", "sa"), ("scheduled", 100_000));
    assert_eq!(kind_at(net, "sb", "b0"), ("scheduled", 100_000));
    assert_eq!(kind_at(net, "sb", "b1"), ("droptail", 50_000));
    // host NICs keep drop-tail unless named
    assert!(matches!(kind_at(net, "a1", "sa").0, "droptail"));
    assert_eq!(kind_at(net, "a0", "sa"), ("fifo-hook", 1_000_000));
    assert_eq!(net.ports[port(net, "sb", "b1") as usize].buffer_bytes, 50_000);
    assert_eq!(
        net.ports[port(net, "sb", "b0") as usize].mode(),
        PortMode::Scheduled
    );
    // and it runs
    let mut sim = sim;
    sim.run().unwrap();
    assert_eq!(metric(&sim, 0, "bytes_delivered"), 10_000.0);
}

#[test]
fn bad_queue_settings_name_their_key() {
    let cases = [
        (r#"queue = { kind = "fq" }"#, "topology.queue.kind", "unknown queue kind"),
        (r#"queue = { min_th = "1KB" }"#, "topology.queue.kind", "required"),
        (
            r#"queue = { kind = "red", min_th = "30KB" }"#,
            "topology.queue.max_th",
            "missing",
        ),
        (
            r#"queue = { kind = "red", min_th = "90KB", max_th = "30KB" }"#,
            "topology.queue.max_th",
            "at least min_th",
        ),
        (
            r#"queue = { kind = "red", min_th = "30Kb", max_th = "90KB" }"#,
            "topology.queue.min_th",
            "is bits",
        ),
        (
            r#"queue = { kind = "red", min_th = "30KIB", max_th = "90KB" }"#,
            "topology.queue.min_th",
            "case-sensitive",
        ),
        (
            r#"queue = { kind = "red", min_th = "3KB", max_th = "9KB", max_p = 1.5 }"#,
            "topology.queue.max_p",
            "at most 1",
        ),
        (
            r#"queue = { kind = "red", min_th = "3KB", max_th = "9KB", weight = 0 }"#,
            "topology.queue.weight",
            "above 0",
        ),
        (
            r#"queue = { kind = "sfq", max_p = 0.1 }"#,
            "topology.queue.max_p",
            "unknown field",
        ),
        (
            r#"queue = { kind = "sfq", buckets = 0 }"#,
            "topology.queue.buckets",
            "from 1",
        ),
        (
            r#"queue = { kind = "sfq", perturb_ms = -1 }"#,
            "topology.queue.perturb_ms",
            "non-negative",
        ),
        (
            r#"queue = { kind = "sfq", admission = "linux" }"#,
            "topology.queue.admission",
            "\"evict-longest\" or \"ns2\"",
        ),
        (r#"queue = "red""#, "topology.queue", "must be a table"),
        (
            "[[topology.queues]]\nkind = \"sfq\"",
            "topology.queues[0]",
            "exactly one of",
        ),
        (
            "[[topology.queues]]\nkind = \"sfq\"\nswitch = \"sa\"\nport = \"sa->a0\"",
            "topology.queues[0]",
            "exactly one of",
        ),
        (
            "[[topology.queues]]\nkind = \"sfq\"\nswitch = \"sz\"",
            "topology.queues[0].switch",
            "names no switch",
        ),
        (
            "[[topology.queues]]\nkind = \"sfq\"\nswitch = \"a0\"",
            "topology.queues[0].switch",
            "is a host",
        ),
        (
            "[[topology.queues]]\nkind = \"sfq\"\nport = \"a0->b0\"",
            "topology.queues[0].port",
            "not linked",
        ),
        (
            "[[topology.queues]]\nkind = \"sfq\"\nport = \"sa\"",
            "topology.queues[0].port",
            "not a port",
        ),
        (
            "[[topology.queues]]\nkind = \"red\"\nport = \"sa->a0\"\nmin_th = \"1B\"\nmax_th = \"2B\"\ncolour = 1",
            "topology.queues[0].colour",
            "unknown field",
        ),
        (
            "[[topology.queues]]\nkind = \"sfq\"\nport = \"sa->a0\"\n[[topology.queues]]\nkind = \"red\"\nport = \"sa->a0\"\nmin_th = \"1B\"\nmax_th = \"2B\"",
            "topology.queues[1]",
            "already has its discipline from topology.queues[0]",
        ),
    ];
    for (queue, field, why) in cases {
        let e = err(&two_switch(queue));
        assert!(
            e.starts_with(&format!("{field}:")) && e.contains(why),
            "{queue}\n=> {e}\n(want {field}: ...{why}...)"
        );
    }
}

#[test]
fn pdn_refuses_a_switch_that_runs_red_or_sfq_but_not_another_switch() {
    let red_sb = "[[topology.queues]]\nswitch = \"sb\"\nkind = \"red\"\nmin_th = \"30KB\"\nmax_th = \"90KB\"";
    let e = err(&format!("{}\n[pdn]\n", two_switch(red_sb)));
    assert!(
        e.starts_with("pdn:") && e.contains("'sb' runs another discipline"),
        "{e}"
    );
    // PDN on sa only, RED on sb: both run
    let sim = sim_of(&format!("{}\n[pdn]\nswitches = \"sa\"\n", two_switch(red_sb)));
    let net = &sim.cx.net;
    assert_eq!(kind_at(net, "sb", "b0").0, "fifo-hook");
    assert_eq!(
        kind_at(net, "sa", "sb").0,
        "scheduled",
        "PDN's notifying drop-tail"
    );
}

#[test]
fn sfq_buckets_over_all_ports_are_bounded() {
    // a k = 16 fat-tree has 320 switches of 16 ports: 5120 ports of 65,536 buckets
    let e = err(
        "[topology]\nkind = \"fat_tree\"\nk = 16\nqueue = { kind = \"sfq\", buckets = 65536 }\n\
         [[apps]]\nkind = \"transfer\"\nsrc = \"h0\"\ndst = \"h1\"\nbytes = 1000\n",
    );
    assert!(
        e.starts_with("topology.queue:") && e.contains("buckets over all ports"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------
// RED at a bottleneck: marks with ECN, drops without

const RED_BOTTLENECK: &str = r#"
[run]
duration_ms = 200
[topology]
kind = "star"
hosts = 5
link_delay_us = 10
switch_buffer = "500KB"
[[topology.queues]]
port = "s0->h4"
kind = "red"
min_th = "20KB"
max_th = "60KB"
max_p = 0.1
weight = 0.01
[tcp]
ECN
[[apps]]
kind = "bulk"
src = "h0..h3"
dst = "h4"
[output]
timeseries_bin_us = 0
capture = ["s0->h4"]
"#;

fn red_run(ecn: bool, seed: u64) -> (Sim, RunOutput) {
    let text = RED_BOTTLENECK.replace("ECN", &format!("ecn = {ecn}"));
    let mut sim = build(&text, Some(seed)).unwrap().sim;
    sim.run().unwrap();
    (sim, run_scenario(&text, Some(seed)).unwrap())
}

#[test]
fn red_marks_ecn_capable_traffic_and_drops_the_rest() {
    let (with, _) = red_run(true, 1);
    let (without, _) = red_run(false, 1);
    let at = |sim: &Sim| {
        let net = &sim.cx.net;
        net.ports[port(net, "s0", "h4") as usize].stats
    };
    let (m, d) = (at(&with), at(&without));
    assert!(m.marked_packets > 10, "ECN on: {m:?}");
    assert_eq!(
        m.dropped_packets, 0,
        "ECN on: RED marks, the 500 KB buffer never fills: {m:?}"
    );
    assert_eq!(d.marked_packets, 0, "ECN off: nothing to mark: {d:?}");
    assert!(d.discipline_drop_packets > 10, "ECN off: RED drops early: {d:?}");
    assert_eq!(
        d.tail_drop_packets, 0,
        "ECN off: the queue stays short of the buffer: {d:?}"
    );
    // either way RED keeps the queue well below the 500 KB buffer (the
    // average lags the slow-start overshoot, hence the peaks)
    assert!(
        m.max_backlog_bytes < 250_000 && d.max_backlog_bytes < 250_000,
        "{m:?} {d:?}"
    );
    // and the bottleneck stays busy
    let total: f64 = (0..4).map(|i| metric(&with, i, "goodput_mbps")).sum();
    assert!(total > 850.0, "{total}");
}

#[test]
fn red_runs_are_deterministic_and_the_seed_draws() {
    let (_, a) = red_run(false, 1);
    let (_, b) = red_run(false, 1);
    let (_, c) = red_run(false, 2);
    assert_eq!(a.flows_csv, b.flows_csv);
    assert_eq!(a.ports_csv, b.ports_csv);
    assert_ne!(a.flows_csv, c.flows_csv, "another seed, other early drops");
    assert!(
        a.meta_json.contains("RED: each RED port draws"),
        "{}",
        a.meta_json
    );
}

#[test]
fn captures_carry_the_ecn_field_and_the_ecn_flags() {
    let (sim, out) = red_run(true, 1);
    let marked = {
        let net = &sim.cx.net;
        net.ports[port(net, "s0", "h4") as usize].stats.marked_packets
    };
    let (_, pcap) = &out.pcaps[0];
    let mut reader = pcap_file::pcap::PcapReader::new(&pcap[..]).unwrap();
    let (mut ect, mut ce, mut not_ect_data) = (0u64, 0u64, 0u64);
    while let Some(pkt) = reader.next_packet() {
        let f = pkt.unwrap().data.into_owned();
        assert_eq!(f[23], 6, "only TCP crosses this port");
        let ip_len = u16::from_be_bytes([f[16], f[17]]) as usize;
        let tcp_hdr = ((f[34 + 12] >> 4) as usize) * 4;
        let data = ip_len > 20 + tcp_hdr;
        match (f[15] & 3, data) {
            (2, true) => ect += 1,
            (3, true) => ce += 1,
            (0, true) => not_ect_data += 1,
            (0, false) => {} // SYN, FIN: not ECN-capable (RFC 3168 6.1.1)
            (e, d) => panic!("ECN field {e} on a packet with data {d}"),
        }
        // the IP header checksum still holds with the ECN bits in it
        let sum: u32 = f[14..34]
            .chunks(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
            .sum();
        assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff);
    }
    assert_eq!(ce, marked, "every marked packet shows CE");
    assert!(ect > 1000, "data is ECT(0): {ect}");
    // retransmissions go out not ECN-capable (RFC 3168 6.1.5); there were none here
    assert_eq!(not_ect_data, 0);
    // the sender's side: some data segment carries CWR, captured on its NIC
    let text = RED_BOTTLENECK
        .replace("ECN", "ecn = true")
        .replace("capture = [\"s0->h4\"]", "capture = [\"h0->s0\", \"s0->h0\"]");
    let out = run_scenario(&text, Some(1)).unwrap();
    let flags = |name: &str| -> Vec<u8> {
        let (_, pcap) = out.pcaps.iter().find(|(n, _)| n == name).unwrap();
        let mut reader = pcap_file::pcap::PcapReader::new(&pcap[..]).unwrap();
        let mut v = Vec::new();
        while let Some(pkt) = reader.next_packet() {
            let f = pkt.unwrap().data.into_owned();
            v.push(f[34 + 13]);
        }
        v
    };
    assert!(
        flags("h0-s0.pcap").iter().any(|&fl| fl & 0x80 != 0),
        "CWR from the sender"
    );
    assert!(
        flags("s0-h0.pcap").iter().any(|&fl| fl & 0x40 != 0),
        "ECE back to it"
    );
}

// ---------------------------------------------------------------------------
// SFQ chosen in the scenario: one flow against twelve

const OUTCAST: &str = r#"
[run]
duration_ms = 1500
[topology]
kind = "two_switch"
hosts_a = 12
hosts_b = 2
link_delay_us = 10
switch_buffer = "64KB"
QUEUE
[tcp]
rto_min_ms = 2
[[apps]]
kind = "bulk"
src = "a*"
dst = "b0"
[[apps]]
kind = "bulk"
src = "b1"
dst = "b0"
[output]
timeseries_bin_us = 0
"#;

fn lone_share(queue: &str) -> (f64, Vec<f64>) {
    let mut sim = sim_of(&OUTCAST.replace("QUEUE", queue));
    sim.run().unwrap();
    let rates: Vec<f64> = (0..13).map(|i| metric(&sim, i, "goodput_mbps")).collect();
    let total: f64 = rates.iter().sum();
    assert!(total > 900.0, "the bottleneck must be full: {total:.0} Mbit/s");
    (rates[12] / (total / 13.0), rates)
}

#[test]
fn sfq_from_the_scenario_gives_one_flow_against_twelve_a_near_equal_share() {
    let sfq = "[[topology.queues]]\nport = \"sb->b0\"\nkind = \"sfq\"\nperturb_ms = 100";
    let (share, rates) = lone_share(sfq);
    assert!(
        share > 0.85 && share < 1.15,
        "SFQ: the lone flow gets {share:.2} of a fair share: {rates:.0?}"
    );
    let min = rates.iter().cloned().fold(f64::MAX, f64::min);
    let max = rates.iter().cloned().fold(0.0, f64::max);
    assert!(max < 1.5 * min, "SFQ: every flow near its share: {rates:.0?}");
    let (tail, rates) = lone_share("");
    assert!(
        tail < 0.5,
        "drop-tail: the lone flow gets {tail:.2} of a fair share: {rates:.0?}"
    );
}
