//! One routing layer: the XCo controller schedules exactly the paths the
//! packets take, in every routing mode; the fat-tree modes route as their
//! names say; per-packet spraying moves a flow over several paths.

use xco_sim::net::routing::RoutingMode;
use xco_sim::run_scenario;
use xco_sim::scenario::build;

fn fat_tree(k: u32, routing: &str, xco: bool) -> String {
    let mut s = format!(
        "[run]\nduration_ms = 5\n[topology]\nkind = \"fat_tree\"\nk = {k}\nrouting = \"{routing}\"\n\
         [[apps]]\nkind = \"transfer\"\nsrc = \"h0\"\ndst = \"h1\"\nbytes = \"300KB\"\n"
    );
    if xco {
        s.push_str("[xco]\ncontroller = \"h2\"\n");
    }
    s
}

#[test]
fn the_controller_schedules_the_packets_paths_in_every_mode() {
    for k in [4u32, 8] {
        for mode in RoutingMode::NAMES.iter().filter(|m| **m != "equal-length-packet") {
            let mut b = build(&fat_tree(k, mode, true), Some(1)).unwrap();
            let (cx, stack) = (&mut b.sim.cx, &mut b.sim.stack);
            let hosts: Vec<u32> = (0..cx.net.nodes.len() as u32)
                .filter(|&n| cx.net.nodes[n as usize].kind == xco_sim::net::topology::NodeKind::Host)
                .collect();
            assert_eq!(hosts.len() as u32, k * k * k / 4);
            let xco = stack.xco.as_mut().unwrap();
            for &s in &hosts {
                for &d in hosts.iter().filter(|&&d| d != s) {
                    // the flow hash is the packets' business: under XCo a host
                    // pair's flows share one path whatever hash they bring
                    let off = cx.net.route(s, d, s as u64 * 7919 + d as u64).unwrap();
                    let (mut packets, mut at) = (Vec::new(), s);
                    while at != d {
                        let port = cx.net.routes.port(off, packets.len() as u16);
                        packets.push(port);
                        at = cx.net.ports[port as usize].to;
                    }
                    let ctl = xco.controller_path(s, d);
                    assert_eq!(ctl, packets, "k={k} {mode} {s}->{d}");
                }
            }
        }
    }
}

/// The ports whose sending node is a core switch and that carried more
/// than 50 kB (data; the ACKs of a 300 kB transfer carry far less).
fn busy_core_ports(ports_csv: &str) -> Vec<String> {
    ports_csv
        .lines()
        .skip(1)
        .filter(|l| {
            let c: Vec<&str> = l.split(',').collect();
            c[1].starts_with('c') && c[5].parse::<u64>().unwrap() > 50_000
        })
        .map(|l| l.split(',').take(3).collect::<Vec<_>>().join(","))
        .collect()
}

#[test]
fn equal_length_routing_takes_a_same_edge_flow_through_a_core() {
    // h0 and h1 share an edge switch: ECMP keeps them there, equal-length
    // sends every packet up to a core and back
    let ecmp = run_scenario(&fat_tree(4, "ecmp", false), Some(1)).unwrap();
    assert!(busy_core_ports(&ecmp.ports_csv).is_empty());
    for mode in ["equal-length-flow", "equal-length-dest"] {
        let el = run_scenario(&fat_tree(4, mode, false), Some(1)).unwrap();
        assert_eq!(
            busy_core_ports(&el.ports_csv).len(),
            1,
            "{mode}: one path, one core"
        );
        assert!(el.apps_csv.contains("bytes_delivered,300000"), "{}", el.apps_csv);
    }
}

#[test]
fn per_packet_spraying_spreads_one_flow_over_every_core_and_delivers_it() {
    let out = run_scenario(&fat_tree(4, "equal-length-packet", false), Some(1)).unwrap();
    assert_eq!(busy_core_ports(&out.ports_csv).len(), 4, "{}", out.ports_csv);
    assert!(
        out.apps_csv.contains("bytes_delivered,300000"),
        "{}",
        out.apps_csv
    );
    let again = run_scenario(&fat_tree(4, "equal-length-packet", false), Some(1)).unwrap();
    assert_eq!(out.ports_csv, again.ports_csv, "same seed, same draws");
}

#[test]
fn routing_errors_name_the_key() {
    let e = build(&fat_tree(4, "equal-length-packet", true), Some(1))
        .err()
        .unwrap();
    assert_eq!(e.field, "topology.routing");
    assert!(e.message.contains("XCo cannot schedule it"), "{}", e.message);
    let e = build(&fat_tree(4, "spray", false), Some(1)).err().unwrap();
    assert_eq!(e.field, "topology.routing");
    assert!(
        e.message.contains("'spray' is not a routing mode"),
        "{}",
        e.message
    );
}

#[test]
fn flows_csv_names_each_flows_path_and_ecmp_pair_gives_a_host_pair_one_path() {
    // four flows between the same two hosts of different pods
    let text = |routing: &str| {
        let apps = "[[apps]]\nkind = \"bulk\"\nsrc = \"h4\"\ndst = \"h0\"\n".repeat(4);
        format!(
            "[run]\nduration_ms = 1\n[topology]\nkind = \"fat_tree\"\nk = 4\nrouting = \"{routing}\"\n\
             {apps}[output]\ntimeseries_bin_us = 0\n"
        )
    };
    let paths = |routing: &str| -> Vec<String> {
        let out = run_scenario(&text(routing), Some(1)).unwrap();
        let mut lines = out.flows_csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let (col, role) = (
            header.iter().position(|h| *h == "path").unwrap(),
            header.iter().position(|h| *h == "role").unwrap(),
        );
        lines
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|c| c[role] == "bulk")
            .map(|c| c[col].to_string())
            .collect()
    };
    let pair = paths("ecmp-pair");
    assert_eq!(pair.len(), 4);
    // a 6-hop path: host, edge, aggregation, core, aggregation, edge, host
    let nodes: Vec<&str> = pair[0].split(' ').collect();
    assert_eq!(nodes.len(), 7, "{}", pair[0]);
    assert_eq!((nodes[0], nodes[6]), ("h4", "h0"));
    assert!(nodes[3].starts_with('c'), "{}", pair[0]);
    assert!(
        pair.iter().all(|p| *p == pair[0]),
        "one path per host pair: {pair:?}"
    );
    // per-flow hashing spreads the same pair's flows over several paths
    let flow = paths("ecmp");
    assert!(flow.iter().any(|p| *p != flow[0]), "{flow:?}");
}
