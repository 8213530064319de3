//! `[topology] kind = "tree3"`: the shape the scenario asks for, routed by
//! the one routing layer, and its bad input named.

use xco_sim::net::topology::NodeKind;
use xco_sim::scenario::build;

fn tree3(extra: &str) -> String {
    format!(
        r#"
[topology]
kind = "tree3"
servers_per_rack = 6
racks = 4
racks_per_agg = 2
cores = 2
host_rate = "1Gbps"
tor_oversubscription = "1:3"
edge_buffer = "100KB"
{extra}
[[apps]]
kind = "transfer"
src = "h0"
dst = "h23"
bytes = "100KB"
"#
    )
}

fn err(text: &str) -> String {
    match build(text, None) {
        Ok(_) => panic!("scenario was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn tree3_has_racks_aggregation_switches_cores_and_whole_uplinks() {
    let mut b = build(&tree3(""), None).unwrap();
    let net = &b.sim.cx.net;
    let hosts = (0..net.nodes.len() as u32)
        .filter(|&n| net.nodes[n as usize].kind == NodeKind::Host)
        .count();
    assert_eq!(hosts, 24);
    for name in ["t0", "t3", "g0", "g1", "c0", "c1"] {
        assert!(net.node(name).is_some(), "{name}");
    }
    assert!(net.node("g2").is_none() && net.node("t4").is_none() && net.node("c2").is_none());
    // 1:3 at the ToR: 6 servers x 1 Gbps over 3 = 2 uplinks of 1 Gbps
    let t0 = net.node("t0").unwrap();
    let g0 = net.node("g0").unwrap();
    let up: Vec<_> = net.ports.iter().filter(|p| p.from == t0 && p.to == g0).collect();
    assert_eq!(up.len(), 2);
    let up_bps: u64 = up.iter().map(|p| p.rate_bps).sum();
    assert_eq!(6 * 1_000_000_000 / up_bps, 3, "the over-subscription is met");
    // the ToR's port toward a server has the edge buffer
    let h0 = net.node("h0").unwrap();
    let down = net.ports.iter().find(|p| p.from == t0 && p.to == h0).unwrap();
    assert_eq!(down.buffer_bytes, 100_000);
    // rack 0 is under g0, rack 3 under g1
    let t3 = net.node("t3").unwrap();
    let g1 = net.node("g1").unwrap();
    assert!(net.ports.iter().any(|p| p.from == t3 && p.to == g1));
    assert!(!net.ports.iter().any(|p| p.from == t3 && p.to == g0));
    // a transfer across the cores completes
    let stats = b.sim.run().unwrap();
    assert_eq!(stats.stop_reason, "apps_done");
}

#[test]
fn tree3_bad_input_is_named() {
    let e = err(&tree3("").replace("racks_per_agg = 2", "racks_per_agg = 3"));
    assert!(
        e.starts_with("topology.racks_per_agg:") && e.contains("divide"),
        "{e}"
    );
    let e = err(&tree3("").replace("\"1:3\"", "\"1:4\""));
    assert!(
        e.starts_with("topology.tor_oversubscription:") && e.contains("whole"),
        "{e}"
    );
    let e = err(&tree3("").replace("host_rate = \"1Gbps\"", "host_rate = \"0Gbps\""));
    assert!(e.starts_with("topology.host_rate:"), "{e}");
    let e = err(&tree3("tor_uplink_rate = 0"));
    assert!(e.starts_with("topology.tor_uplink_rate:"), "{e}");
    let e = err(&tree3("").replace("edge_buffer = \"100KB\"", "edge_buffer = \"0B\""));
    assert!(
        e.starts_with("topology.edge_buffer:") && e.contains("positive"),
        "{e}"
    );
    let e = err(&tree3("").replace("racks = 4\n", ""));
    assert!(e.starts_with("topology.racks:") && e.contains("required"), "{e}");
    let e = err(&tree3("").replace("\"1:3\"", "\"3\""));
    assert!(e.starts_with("topology.tor_oversubscription:"), "{e}");
}

#[test]
fn the_xco_controller_runs_on_a_tree3_like_on_every_topology() {
    let text = r#"
[run]
seed = 2
duration_ms = 20
[topology]
kind = "tree3"
servers_per_rack = 4
racks = 4
racks_per_agg = 2
host_rate = "1Gbps"
tor_oversubscription = "1:2"
[xco]
controller = "h15"
mode = "timeslice"
[[apps]]
kind = "bulk"
src = ["h0", "h1", "h4"]
dst = "h9"
"#;
    let o = xco_sim::run_scenario(text, None).unwrap();
    let xco = o
        .app_summaries
        .iter()
        .find(|(_, k, _)| *k == "xco")
        .expect("XCo reports");
    let metric = |m: &str| xco.2.iter().find(|(k, _)| *k == m).unwrap().1;
    assert!(metric("directives") > 0.0, "the controller scheduled the senders");
    assert!(metric("reports") > 0.0);
    let bytes: u64 = o
        .flows_csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c[3] == "bulk") // role
        .map(|c| c[9].parse::<u64>().unwrap()) // bytes_delivered
        .sum();
    assert!(bytes > 1_000_000, "the bulk flows delivered ({bytes} B)");
}
