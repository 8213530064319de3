//! `hosts.csv`: which node and flow each address and port in a pcap belongs to.
//!
//! Captures carry real-looking headers: node `n` is IPv4 `10.x.y.z` with MAC
//! `02:00:..` ([`node_ip`], [`node_mac`]), a TCP endpoint or UDP source/sink
//! has port [`ep_port`] of its index, XCo control messages use UDP port 4790
//! and pings carry their app's id as the ICMP identifier. This table names
//! them: first one row per node (its addresses), then one row per transport
//! endpoint (`transport`, `port`, the `flow` of `flows.csv` it sends, its app
//! and role).

use super::csv_table::CsvTable;
use crate::net::pcap::{ep_port, node_ip, node_mac, CONTROL_PORT};
use crate::net::topology::NodeKind;
use crate::sim::Sim;
use crate::stats::FlowKind;

fn ip_text(n: u32) -> String {
    let [a, b, c, d] = node_ip(n);
    format!("{a}.{b}.{c}.{d}")
}

fn mac_text(n: u32) -> String {
    node_mac(n)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The `hosts.csv` text of a finished run.
pub fn hosts_csv(sim: &Sim) -> String {
    let net = &sim.cx.net;
    let mut t = CsvTable::new(&[
        "node",
        "kind",
        "ip",
        "mac",
        "transport",
        "port",
        "flow",
        "app",
        "role",
    ]);
    for (i, n) in net.nodes.iter().enumerate() {
        let kind = match n.kind {
            NodeKind::Host => "host",
            NodeKind::Switch => "switch",
        };
        let i = i as u32;
        t.row(&[
            n.name.clone(),
            kind.into(),
            ip_text(i),
            mac_text(i),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
        ]);
    }
    let mut endpoint = |node: u32, transport: &str, port: u32, flow: u32| {
        let f = &net.flows[flow as usize];
        let app = if f.app == u32::MAX {
            "-1".to_string()
        } else {
            f.app.to_string()
        };
        t.row(&[
            net.name(node).to_string(),
            "host".into(),
            ip_text(node),
            mac_text(node),
            transport.into(),
            port.to_string(),
            flow.to_string(),
            app,
            f.role.into(),
        ]);
    };
    for ep in &sim.tcp.eps {
        endpoint(ep.host, "tcp", ep_port(ep.id) as u32, ep.tx_flow);
    }
    for (i, sink) in sim.stack.udp_sinks.iter().enumerate() {
        let f = &net.flows[sink.flow as usize];
        endpoint(f.src, "udp", ep_port(f.app) as u32, sink.flow);
        endpoint(f.dst, "udp", ep_port(i as u32) as u32, sink.flow);
    }
    for (i, f) in net.flows.iter().enumerate() {
        match f.kind {
            FlowKind::Ping => endpoint(f.src, "icmp_id", f.app, i as u32),
            FlowKind::Control => endpoint(f.src, "udp", CONTROL_PORT as u32, i as u32),
            FlowKind::Tcp | FlowKind::Udp => {}
        }
    }
    t.finish()
}
