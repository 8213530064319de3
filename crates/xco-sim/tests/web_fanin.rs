//! The web fan-in (`[[apps]] kind = "web_fanin"`): every requested object
//! delivered exactly once for every method, also with drops and timeouts;
//! a failed hub's backup takes over and the request completes; One-all
//! collapses where SICC does not on the same request; a hub's packet
//! compression packs objects into fewer packets, and without it every
//! object is its own packet; bad input named.

use xco_sim::run_scenario;
use xco_sim::scenario::build;

/// A small tree3 (8 racks of 8 servers, 2 aggregation switches) and a web fan-in.
fn scenario(method: &str, edge_buffer: &str, app_extra: &str) -> String {
    format!(
        r#"
[run]
seed = 7
[topology]
kind = "tree3"
servers_per_rack = 8
racks = 8
racks_per_agg = 4
cores = 1
host_rate = "1Gbps"
tor_oversubscription = "1:4"
edge_buffer = "{edge_buffer}"
switch_buffer = "400KB"
link_delay_us = 5
[tcp]
rto_min_ms = 10
rto_initial_ms = 10
[output]
timeseries_bin_us = 0
[[apps]]
kind = "web_fanin"
method = "{method}"
objects = 2000
queries = 300
requests = 3
{app_extra}
"#
    )
}

struct Run {
    requests: Vec<Vec<String>>,
    queries: Vec<Vec<String>>,
    header: Vec<String>,
    duplicates: f64,
    timeouts: u64,
    drops: u64,
}

fn run(text: &str) -> Run {
    let o = run_scenario(text, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.stats.stop_reason, "apps_done", "every request finished");
    let table = |name: &str| -> (Vec<String>, Vec<Vec<String>>) {
        let t = &o.app_tables.iter().find(|(n, _)| n == name).expect(name).1;
        let mut lines = t.lines();
        let header = lines.next().unwrap().split(',').map(String::from).collect();
        (
            header,
            lines.map(|l| l.split(',').map(String::from).collect()).collect(),
        )
    };
    let (header, requests) = table("requests.csv");
    let (_, queries) = table("queries.csv");
    let metric = |m: &str| o.app_summaries[0].2.iter().find(|(k, _)| *k == m).unwrap().1;
    let col = header.iter().position(|h| h == "timeouts").unwrap();
    let timeouts = requests.iter().map(|r| r[col].parse::<u64>().unwrap()).sum();
    let drops = o
        .ports_csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .collect::<Vec<_>>();
    let ports_header: Vec<&str> = o.ports_csv.lines().next().unwrap().split(',').collect();
    let dcol = ports_header
        .iter()
        .position(|h| *h == "dropped_packets")
        .expect("ports.csv dropped_packets");
    let drops = drops.iter().map(|r| r[dcol].parse::<u64>().unwrap()).sum();
    Run {
        requests,
        queries,
        header,
        duplicates: metric("duplicate_objects"),
        timeouts,
        drops,
    }
}

fn col(r: &Run, name: &str) -> usize {
    r.header.iter().position(|h| h == name).unwrap()
}

/// Every (request, query) pair appears once in queries.csv: each object once.
fn each_object_once(r: &Run, requests: usize, queries: usize) {
    assert_eq!(r.requests.len(), requests);
    assert_eq!(r.duplicates, 0.0, "no object arrived twice");
    let mut seen = vec![0u32; requests * queries];
    for q in &r.queries {
        let req: usize = q[2].parse().unwrap();
        let i: usize = q[3].parse().unwrap();
        seen[req * queries + i] += 1;
    }
    assert!(
        seen.iter().all(|&c| c == 1),
        "every requested object exactly once"
    );
}

const METHODS: [&str; 8] = [
    "one_all",
    "sw",
    "ictcp",
    "sicc",
    "sicc-nps",
    "sicc-nmt",
    "sicc-nssc",
    "sicc-nqr",
];

#[test]
fn every_method_delivers_every_object_exactly_once() {
    for m in METHODS {
        let r = run(&scenario(m, "400KB", ""));
        each_object_once(&r, 3, 300);
        let mcol = col(&r, "method");
        assert!(r.requests.iter().all(|row| row[mcol] == m));
    }
}

#[test]
fn every_method_delivers_every_object_exactly_once_with_drops_and_timeouts() {
    let mut any_timeouts = false;
    for m in METHODS {
        let r = run(&scenario(m, "6KB", ""));
        each_object_once(&r, 3, 300);
        if m == "one_all" {
            assert!(r.drops > 0, "the 6 KB edge buffer must drop One-all's responses");
        }
        any_timeouts |= r.timeouts > 0;
    }
    assert!(
        any_timeouts,
        "some method must have met a timeout for this test to mean anything"
    );
}

#[test]
fn a_failed_hubs_backup_takes_over_and_the_request_completes() {
    let r = run(&scenario("sicc", "400KB", "fail_largest_hub = true"));
    each_object_once(&r, 3, 300);
    let f = col(&r, "failovers");
    assert!(
        r.requests.iter().all(|row| row[f] == "1"),
        "one failover per request"
    );
}

#[test]
fn redirection_moves_queries_off_overloaded_hubs_and_every_object_arrives_once() {
    // half the hubs send at 10 % of their rate: their queries move to replicas elsewhere
    let extra = "overload_probability = 0.5\noverload_fraction = 0.1\nspeed_period_ms = 1";
    for m in ["sicc", "sicc-nssc"] {
        let r = run(&scenario(m, "100KB", extra));
        each_object_once(&r, 3, 300);
        let c = col(&r, "redirected");
        let moved: u64 = r.requests.iter().map(|row| row[c].parse::<u64>().unwrap()).sum();
        assert!(moved > 0, "{m}: some query was redirected");
    }
    let r = run(&scenario("sicc-nqr", "100KB", extra));
    each_object_once(&r, 3, 300);
    let c = col(&r, "redirected");
    assert!(
        r.requests.iter().all(|row| row[c] == "0"),
        "SICC-NQR redirects nothing"
    );
}

#[test]
fn one_all_collapses_where_sicc_does_not_on_the_same_request() {
    // the same seed draws the same catalogue, front-end and requests
    let text = |m: &str| scenario(m, "30KB", "");
    let one = run(&text("one_all"));
    let sicc = run(&text("sicc"));
    let lat = |r: &Run| -> Vec<f64> {
        let c = col(r, "latency_us");
        r.requests.iter().map(|row| row[c].parse().unwrap()).collect()
    };
    let (lo, ls) = (lat(&one), lat(&sicc));
    assert!(one.timeouts > 0, "One-all meets timeouts (incast collapse)");
    assert_eq!(sicc.timeouts, 0, "SICC meets none");
    // a timeout costs the 10 ms RTO: every One-all request that met one is slower than SICC's
    for i in 0..3 {
        assert!(
            lo[i] > ls[i],
            "request {i}: One-all {} us vs SICC {} us",
            lo[i],
            ls[i]
        );
    }
}

/// Per request: packets that arrived at the ToR's port toward the front-end.
fn fe_packets(r: &Run) -> Vec<u64> {
    let c = col(r, "packets");
    r.requests.iter().map(|row| row[c].parse().unwrap()).collect()
}

#[test]
fn compression_packs_a_hubs_objects_and_without_it_each_object_is_its_own_packet() {
    // hubs straight to the front-end (SICC-NMT), small objects, a buffer that drops
    // nothing: the same requests (same seed) with and without packing
    let small = "object_max_bytes = 200";
    let with = run(&scenario("sicc-nmt", "400KB", small));
    let without = run(&scenario(
        "sicc-nmt",
        "400KB",
        &format!("{small}\ncompression = false"),
    ));
    each_object_once(&with, 3, 300);
    each_object_once(&without, 3, 300);
    assert_eq!(with.drops + without.drops, 0, "no retransmission in the counts");
    let (pw, pn) = (fe_packets(&with), fe_packets(&without));
    for i in 0..3 {
        // objects straight from the front-end's own rack come in their own packets too
        assert!(
            pn[i] >= 300,
            "request {i}: without compression every object is at least one packet, got {}",
            pn[i]
        );
        // 300 objects of at most 200 B fit in 42 packets of 1,448 B: packing must save
        // far more than the few packets ACKs and queries add
        assert!(
            2 * pw[i] < pn[i],
            "request {i}: with compression {} packets, without {}",
            pw[i],
            pn[i]
        );
    }
    // other methods have no hub to switch
    let e = err(&scenario("one_all", "400KB", "compression = false"));
    assert!(e.starts_with("apps[0].compression:"), "{e}");
}

#[test]
fn every_sicc_method_delivers_every_object_once_without_compression() {
    for m in ["sicc", "sicc-nps", "sicc-nssc"] {
        let r = run(&scenario(m, "6KB", "compression = false"));
        each_object_once(&r, 3, 300);
    }
}

fn err(text: &str) -> String {
    match build(text, None) {
        Ok(_) => panic!("scenario was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn web_fanin_bad_input_is_named() {
    let ok = scenario("sicc", "100KB", "");
    build(&ok, None).unwrap();
    let e = err(&ok.replace("queries = 300", "queries = 3000"));
    assert!(e.starts_with("apps[0].queries:"), "{e}");
    let e = err(&format!("{ok}replicas = 65\n"));
    assert!(e.starts_with("apps[0].replicas:"), "{e}");
    let e = err(&format!("{ok}front_ends = \"t0\"\n"));
    assert!(e.starts_with("apps[0].front_ends:"), "{e}");
    let e = err(&format!("{ok}object_min_bytes = 0\n"));
    assert!(e.starts_with("apps[0].object_min_bytes:"), "{e}");
    let e = err(&format!("{ok}overload_probability = 2\n"));
    assert!(e.starts_with("apps[0].overload_probability:"), "{e}");
    let e = err(&ok.replace("method = \"sicc\"", "method = \"fast\""));
    assert!(e.starts_with("apps[0].method:"), "{e}");
    let e = err(&format!("{ok}front_end_rack = 99\n"));
    assert!(e.starts_with("apps[0].front_end_rack:"), "{e}");
}

#[test]
fn ictcp_sets_every_front_end_window_through_the_receive_window_seam() {
    use xco_sim::app::App;
    use xco_sim::tcp::rcv_window::RcvWindow;
    // large objects: each server sends tens of KB, enough for ICTCP to move windows
    let text = scenario("ictcp", "400KB", "").replace(
        "requests = 3",
        "requests = 3\nobject_min_bytes = 20000\nobject_max_bytes = 60000",
    );
    let mut b = build(&text, None).unwrap();
    b.sim.run().unwrap();
    let App::WebFanin(w) = &b.sim.apps[0] else {
        panic!("the app is a web fan-in")
    };
    assert_eq!(w.requests_done(), 3);
    let windows = w.ictcp_windows(0);
    assert!(!windows.is_empty());
    let mss = b.sim.stack.tcp.cfg.mss_bytes as u64;
    assert!(
        windows.iter().all(|&x| x >= 2 * mss),
        "never below 2 MSS: {windows:?}"
    );
    assert!(
        windows.iter().any(|&x| x > 2 * mss),
        "some window grew: {windows:?}"
    );
    // every front-end endpoint carries a clamp (the seam), none is left at the buffer
    let clamps = b
        .sim
        .tcp
        .eps
        .iter()
        .filter(|e| matches!(e.rcv_window, RcvWindow::Clamp { .. }))
        .count();
    assert_eq!(clamps, windows.len(), "one clamped endpoint per ICTCP connection");
}

#[test]
fn sw_infers_a_loss_from_a_response_that_waited_out_a_timeout() {
    use xco_sim::app::App;
    let sw_after = |edge_buffer: &str| -> (u32, u64, u64) {
        let mut b = build(&scenario("sw", edge_buffer, ""), None).unwrap();
        b.sim.run().unwrap();
        let timeouts: u64 = b.sim.cx.net.flows.iter().map(|f| f.timeouts).sum();
        let App::WebFanin(w) = &b.sim.apps[0] else {
            panic!("the app is a web fan-in")
        };
        assert_eq!(w.requests_done(), 3);
        let (window, losses) = w.sw_state(0);
        (window, losses, timeouts)
    };
    // nothing dropped: no response is late, and the window grows (+1 per response)
    let (w_big, losses_big, timeouts_big) = sw_after("400KB");
    assert_eq!(timeouts_big, 0);
    assert_eq!(losses_big, 0, "no loss inferred without a timeout");
    assert!(w_big > 100, "the window grew: {w_big}");
    // a 6 KB edge buffer drops answers: responses wait out the 10 ms RTO, and SW halves
    let (w_small, losses_small, timeouts_small) = sw_after("6KB");
    assert!(timeouts_small > 0);
    assert!(losses_small > 0, "late responses are losses");
    assert!(
        w_small < w_big,
        "window {w_small} after losses vs {w_big} without"
    );
}
