//! Routing tests on fat-trees wired with the closed-form numbering of
//! [`FatTreePaths`], so the address-bit mode can be held against it.

use super::*;
use crate::sched::{FatTreePaths, PathProvider};
use std::collections::BTreeSet;

/// A k-ary fat-tree whose directed link ids are exactly [`FatTreePaths`]'s:
/// host h up `2h`, down `2h+1`; then edge–aggregation pairs; then
/// aggregation–core pairs. Nodes: hosts, then edges, aggregations, cores.
fn fat_tree(k: u32) -> Graph {
    let h = k / 2;
    let hosts = k * k * k / 4;
    let edges = k * h;
    let (edge0, agg0, core0) = (hosts, hosts + edges, hosts + 2 * edges);
    let mut links = Vec::new();
    for x in 0..hosts {
        links.push((x, edge0 + x / h));
        links.push((edge0 + x / h, x));
    }
    for e in 0..edges {
        for a in 0..h {
            let agg = agg0 + (e / h) * h + a;
            links.push((edge0 + e, agg));
            links.push((agg, edge0 + e));
        }
    }
    for g in 0..edges {
        for c in 0..h {
            let core = core0 + (g % h) * h + c;
            links.push((agg0 + g, core));
            links.push((core, agg0 + g));
        }
    }
    let nodes = hosts + 2 * edges + h * h;
    Graph::new((0..nodes).map(|n| n < hosts).collect(), &links)
}

/// The nodes a path visits, checking that each link leaves the previous node.
fn walk(g: &Graph, src: u32, path: &[LinkId]) -> Vec<u32> {
    let mut at = vec![src];
    for &l in path {
        let u = *at.last().unwrap();
        let v = g
            .out(u)
            .iter()
            .find(|&&(x, _)| x == l)
            .unwrap_or_else(|| panic!("link {l} does not leave node {u}"))
            .1;
        at.push(v);
    }
    at
}

fn all_pairs(hosts: u32) -> impl Iterator<Item = (u32, u32)> {
    (0..hosts).flat_map(move |s| (0..hosts).filter(move |&d| d != s).map(move |d| (s, d)))
}

#[test]
fn address_bits_is_the_fat_tree_closed_form_for_every_pair() {
    for k in [4, 8] {
        let mut r = Router::new(fat_tree(k), RoutingMode::AddressBits).unwrap();
        let mut closed = FatTreePaths::new(k);
        for (s, d) in all_pairs(k * k * k / 4) {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            // the flow hash must not matter: the choice is the destination's
            assert!(r.path(s, d, mix64(s as u64, d as u64), &mut a));
            closed.path(s, d, &mut b);
            assert_eq!(a, b, "k={k} {s}->{d}");
        }
    }
}

#[test]
fn ecmp_paths_are_shortest_and_spread_over_the_cores() {
    let k = 4;
    let g = fat_tree(k);
    let mut r = Router::new(g.clone(), RoutingMode::Ecmp).unwrap();
    let mut cores = BTreeSet::new();
    for (s, d) in all_pairs(16) {
        let mut p = Vec::new();
        assert!(r.path(s, d, mix64(7, (s * 16 + d) as u64), &mut p));
        let at = walk(&g, s, &p);
        assert_eq!(*at.last().unwrap(), d);
        let want = if s / 2 == d / 2 {
            2
        } else if s / 4 == d / 4 {
            4
        } else {
            6
        };
        assert_eq!(p.len(), want, "{s}->{d}");
        if want == 6 {
            cores.insert(at[3]);
        }
    }
    assert_eq!(cores.len(), 4, "hashing uses every core: {cores:?}");
}

#[test]
fn equal_length_paths_all_climb_to_a_core() {
    for k in [4, 8] {
        let g = fat_tree(k);
        let core0 = k * k * k / 4 + k * k;
        for choice in [CoreChoice::Flow, CoreChoice::Packet, CoreChoice::Destination] {
            let mut r = Router::new(g.clone(), RoutingMode::EqualLength(choice)).unwrap();
            for (s, d) in all_pairs(k * k * k / 4) {
                let mut p = Vec::new();
                assert!(r.path(s, d, mix64(3, (s as u64) << 32 | d as u64), &mut p));
                let at = walk(&g, s, &p);
                assert_eq!(p.len(), 6, "k={k} {choice:?} {s}->{d}: {at:?}");
                assert_eq!(*at.last().unwrap(), d);
                assert!(at[3] >= core0, "the middle node is a core: {at:?}");
            }
        }
    }
}

#[test]
fn equal_length_by_destination_takes_the_address_bit_core() {
    // between pods, equal-length by destination bits is address-bit routing
    let k = 4;
    let mut el = Router::new(fat_tree(k), RoutingMode::EqualLength(CoreChoice::Destination)).unwrap();
    let mut ab = Router::new(fat_tree(k), RoutingMode::AddressBits).unwrap();
    for (s, d) in all_pairs(16).filter(|(s, d)| s / 4 != d / 4) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        el.path(s, d, 1, &mut a);
        ab.path(s, d, 2, &mut b);
        assert_eq!(a, b, "{s}->{d}");
    }
    // and a same-edge pair goes through the core its destination bits name
    let mut p = Vec::new();
    el.path(0, 1, 9, &mut p);
    let at = walk(&fat_tree(k), 0, &p);
    let core0 = 16 + 16;
    // host 1: position 1 on its edge (aggregation 1), edge 0 of its pod (core 0 of that group)
    assert_eq!(at[3], core0 + 2, "{at:?}");
}

#[test]
fn per_packet_spraying_uses_several_paths_for_one_pair() {
    let mut r = Router::new(fat_tree(4), RoutingMode::EqualLength(CoreChoice::Packet)).unwrap();
    let mut paths = BTreeSet::new();
    for pkt in 0..64u64 {
        let mut p = Vec::new();
        r.path(0, 1, mix64(11, pkt), &mut p);
        paths.insert(p);
    }
    assert_eq!(paths.len(), 4, "two aggregations x two cores");
}

#[test]
fn a_switch_that_cannot_climb_is_refused_by_the_tiered_modes() {
    // h0 - s2 - s3 - h1 and s4 hanging off s3: s4 is tier 2 (the top), and
    // s2 (tier 1) has no link up to it
    let g = Graph::new(
        vec![true, true, false, false, false],
        &[(0, 2), (2, 0), (1, 3), (3, 1), (2, 3), (3, 2), (3, 4), (4, 3)],
    );
    assert!(Router::new(g.clone(), RoutingMode::Ecmp).is_ok());
    let e = Router::new(g, RoutingMode::EqualLength(CoreChoice::Flow)).unwrap_err();
    assert!(
        e.contains("switch 2 (tier 1) has no link to a switch of tier 2"),
        "{e}"
    );
    let island = Graph::new(vec![true, false, false], &[(0, 1), (1, 0)]);
    let e = Router::new(island, RoutingMode::AddressBits).unwrap_err();
    assert!(e.contains("node 2 is connected to no host"), "{e}");
}

#[test]
fn a_switch_is_no_destination_nor_source() {
    let mut r = Router::new(fat_tree(4), RoutingMode::Ecmp).unwrap();
    let mut p = vec![7];
    assert!(!r.path(0, 16, 1, &mut p), "node 16 is an edge switch");
    assert!(!r.path(16, 0, 1, &mut p));
    assert_eq!(p, vec![7]);
}

#[test]
fn unreachable_destinations_leave_the_path_untouched() {
    let g = Graph::new(vec![true, true, false], &[(0, 2), (2, 0)]);
    let mut r = Router::new(g, RoutingMode::Ecmp).unwrap();
    let mut p = vec![99];
    assert!(!r.path(0, 1, 0, &mut p));
    assert_eq!(p, vec![99]);
}

#[test]
fn modes_parse_from_their_names_and_reject_others() {
    for name in RoutingMode::NAMES {
        assert_eq!(RoutingMode::parse(name).unwrap().name(), name);
    }
    let e = RoutingMode::parse("ECMP").unwrap_err();
    assert!(
        e.contains("'ECMP' is not a routing mode") && e.contains("equal-length-dest"),
        "{e}"
    );
}

#[test]
fn a_controller_cannot_schedule_sprayed_packets() {
    let r = Router::new(fat_tree(4), RoutingMode::EqualLength(CoreChoice::Packet)).unwrap();
    let e = HostPaths::new(r, (0..16).collect()).err().unwrap();
    assert!(e.contains("XCo needs a path per host pair"), "{e}");
    let r = Router::new(fat_tree(4), RoutingMode::Ecmp).unwrap();
    let mut hp = HostPaths::new(r.clone(), (0..16).collect()).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    hp.path(3, 12, &mut a);
    r.clone().path(3, 12, pair_hash(3, 12), &mut b);
    assert_eq!(a, b, "a host pair's path is the pair-hashed one");
}

/// The routing before attachment groups: one breadth-first search per
/// destination over every node (hosts x nodes of state), kept here as the
/// reference the grouped tables must agree with path for path.
fn reference_path(g: &Graph, src: u32, dst: u32, flow_hash: u64) -> Option<Vec<LinkId>> {
    let n = g.nodes();
    let mut rev: Vec<Vec<u32>> = vec![Vec::new(); n];
    for a in 0..n as u32 {
        for &(_, b) in g.out(a) {
            rev[b as usize].push(a);
        }
    }
    let mut dist = vec![u32::MAX; n];
    dist[dst as usize] = 0;
    let mut q = std::collections::VecDeque::from([dst]);
    while let Some(u) = q.pop_front() {
        if u != dst && g.is_host(u) {
            continue;
        }
        for &v in &rev[u as usize] {
            if dist[v as usize] == u32::MAX {
                dist[v as usize] = dist[u as usize] + 1;
                q.push_back(v);
            }
        }
    }
    if dist[src as usize] == u32::MAX {
        return None;
    }
    let (mut u, mut path) = (src, Vec::new());
    while u != dst {
        let c: Vec<(LinkId, u32)> = g
            .out(u)
            .iter()
            .copied()
            .filter(|&(_, v)| dist[v as usize] != u32::MAX && dist[v as usize] + 1 == dist[u as usize])
            .filter(|&(_, v)| v == dst || !g.is_host(v))
            .collect();
        let (link, v) = c[(mix64(flow_hash, u as u64) % c.len() as u64) as usize];
        path.push(link);
        u = v;
    }
    Some(path)
}

/// A random graph with multi-homed hosts, host-to-host cables, one-way
/// links, unreachable islands and parallel links.
fn random_graph(seed: u64) -> Graph {
    let mut r = crate::rng::Rng::new(seed);
    let (hosts, switches) = (2 + r.below(10) as u32, 1 + r.below(8) as u32);
    let n = hosts + switches;
    let mut links = Vec::new();
    for _ in 0..r.below(40) + 5 {
        let (a, b) = (r.below(n as u64) as u32, r.below(n as u64) as u32);
        if a != b {
            links.push((a, b));
            if r.below(4) > 0 {
                links.push((b, a));
            }
        }
    }
    Graph::new((0..n).map(|v| v < hosts).collect(), &links)
}

#[test]
fn grouped_distances_give_the_per_destination_search_paths_on_random_graphs() {
    let mut compared = 0;
    for seed in 0..400 {
        let g = random_graph(seed);
        let mut r = Router::new(g.clone(), RoutingMode::Ecmp).unwrap();
        let hosts = (0..g.nodes() as u32).filter(|&v| g.is_host(v)).count() as u32;
        for (s, d) in all_pairs(hosts) {
            for h in [0, mix64(seed, 99)] {
                let mut p = Vec::new();
                let ok = r.path(s, d, h, &mut p);
                let want = reference_path(&g, s, d, h);
                assert_eq!(ok.then_some(p), want, "seed {seed}: {s}->{d} hash {h}");
                compared += want.is_some() as u32;
            }
        }
    }
    assert!(
        compared > 1000,
        "enough reachable pairs were compared ({compared})"
    );
}

#[test]
fn a_fat_tree_keeps_one_table_per_edge_switch() {
    let k = 8;
    let g = fat_tree(k);
    let mut r = Router::new(g.clone(), RoutingMode::Ecmp).unwrap();
    let before = r.bytes();
    let hosts = k * k * k / 4;
    for d in 0..hosts {
        r.path((d + 7) % hosts, d, 1, &mut Vec::new());
    }
    let (edges, switches) = (k * k / 2, 5 * k * k / 4);
    assert_eq!(
        r.dist.groups(),
        edges as usize,
        "hosts of one edge switch share a group"
    );
    assert_eq!(
        r.bytes() - before,
        (edges * switches * 2) as u64,
        "one u16 per switch per edge switch"
    );
    assert_eq!(r.bytes(), r.table_bytes_bound(), "every table filled = the bound");
    // the fat-tree modes also hold tiers and digits (4 B per node and tier)
    let ab = Router::new(g.clone(), RoutingMode::AddressBits).unwrap();
    let nodes = g.nodes() as u64;
    assert_eq!(
        ab.table_bytes_bound() - r.table_bytes_bound(),
        4 * (nodes + 3 * nodes)
    );
}
