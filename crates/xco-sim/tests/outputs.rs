//! What a run writes tells the truth: tables that parse back whatever the
//! node names, empty statistics left empty, and a record of what ran.

use xco_sim::run_scenario;

/// An explicit topology whose names use every character a node name may
/// hold besides letters and digits (`_`, `.`, `-`).
const ODD_NAMES: &str = r#"
[topology]
kind = "explicit"
nodes = [
  { name = "h_0", kind = "host" },
  { name = "h-1.x", kind = "host" },
  { name = "s.1-x", kind = "switch" },
]
links = [
  { a = "h_0", b = "s.1-x", rate = "1Gbps" },
  { a = "h-1.x", b = "s.1-x", rate = "1Gbps" },
]
[[apps]]
kind = "transfer"
src = "h_0"
dst = "h-1.x"
bytes = "100KB"
[output]
timeseries_bin_us = 100
timeseries_ports = "all"
"#;

/// Every record of `table` as cells, checking each has the header's column count.
fn records(table: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(table.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows: Vec<Vec<String>> = r
        .records()
        .map(|rec| rec.unwrap().iter().map(str::to_string).collect())
        .collect();
    for row in &rows {
        assert_eq!(row.len(), header.len(), "a row shifted its columns: {row:?}");
    }
    (header, rows)
}

#[test]
fn node_names_read_back_unchanged_in_every_column_and_the_path() {
    let o = run_scenario(ODD_NAMES, None).unwrap();
    let (header, ports) = records(&o.ports_csv);
    let from = header.iter().position(|c| c == "from").unwrap();
    assert!(ports.iter().any(|r| r[from] == "s.1-x"), "{ports:?}");
    let (header, flows) = records(&o.flows_csv);
    let dst = header.iter().position(|c| c == "dst").unwrap();
    let path = header.iter().position(|c| c == "path").unwrap();
    let data = flows
        .iter()
        .find(|r| r[dst] == "h-1.x")
        .expect("the transfer's row");
    let hops: Vec<&str> = data[path].split_whitespace().collect();
    assert_eq!(
        hops,
        ["h_0", "s.1-x", "h-1.x"],
        "the path column splits into the node names"
    );
    let (_, series) = records(&o.timeseries_csv);
    assert!(
        series.iter().any(|r| r[3] == "h_0->s.1-x"),
        "a port row names its link"
    );
    records(&o.apps_csv);
    records(&o.samples_csv);
}

/// The value of `metric` of app `app` in an apps table, as written.
fn cell<'a>(apps_csv: &'a str, app: &str, metric: &str) -> &'a str {
    apps_csv
        .lines()
        .find_map(|l| {
            let mut c = l.splitn(4, ',');
            let (a, _, m, v) = (c.next()?, c.next()?, c.next()?, c.next()?);
            (a == app && m == metric).then_some(v)
        })
        .unwrap_or_else(|| panic!("no {metric} of app {app} in\n{apps_csv}"))
}

#[test]
fn a_statistic_of_nothing_is_empty_never_zero() {
    // the run ends before the first incast round can finish, and the ping's
    // only probe is still on its way
    let text = r#"
[run]
duration_ms = 0.05
[topology]
kind = "star"
hosts = 4
link_delay_us = 100
[[apps]]
kind = "incast"
client = "h0"
servers = "h1..h3"
sru = "1MB"
[[apps]]
kind = "ping"
src = "h0"
dst = "h1"
count = 1
"#;
    let o = run_scenario(text, None).unwrap();
    assert_eq!(cell(&o.apps_csv, "0", "rounds_done"), "0");
    for m in [
        "goodput_mbps",
        "completion_ms_mean",
        "completion_ms_p99",
        "completion_ms_max",
    ] {
        assert_eq!(cell(&o.apps_csv, "0", m), "", "{m} of no finished round");
    }
    assert_eq!(cell(&o.apps_csv, "1", "replies"), "0");
    assert_eq!(cell(&o.apps_csv, "1", "rtt_us_mean"), "");
    let summary = &o.app_summaries[0].2;
    let mean = summary
        .iter()
        .find(|(k, _)| *k == "completion_ms_mean")
        .unwrap()
        .1;
    assert!(mean.is_nan(), "the summary says NaN, not {mean}");
}

fn meta(text: &str, seed: Option<u64>) -> serde_json::Value {
    let o = run_scenario(text, seed).unwrap();
    serde_json::from_str(&o.meta_json).expect("meta.json is JSON")
}

const TRANSFER: &str = r#"
name = "one-transfer"
[run]
seed = 4
[topology]
kind = "star"
hosts = 2
[[apps]]
kind = "transfer"
src = "h0"
dst = "h1"
bytes = "100KB"
"#;

#[test]
fn meta_records_the_seed_override_and_the_scenario_that_ran() {
    let m = meta(TRANSFER, None);
    assert_eq!(m["seed"], 4);
    assert_eq!(m["seed_from"], "run.seed");
    assert_eq!(m["name"], "one-transfer");
    let m = meta(TRANSFER, Some(11));
    assert_eq!(m["seed"], 11);
    assert_eq!(m["seed_from"], "override");
    assert_eq!(
        m["scenario"]["run"]["seed"], 11,
        "the scenario as run, not as written"
    );
    assert_eq!(m["scenario"]["apps"][0]["bytes"], "100KB");
    assert_eq!(m["stop_reason"], "apps_done");
    assert!(m.get("scenario_toml").is_none(), "no copy of the file's text");
    let m = meta(&TRANSFER.replace("seed = 4", ""), None);
    assert_eq!(
        (m["seed"].clone(), m["seed_from"].clone()),
        (1.into(), "default".into())
    );
    let m = meta(TRANSFER, Some(u64::MAX));
    assert_eq!(m["scenario"]["run"]["seed"], u64::MAX);
}

#[test]
fn meta_says_which_parts_are_random_and_when_the_seed_changes_nothing() {
    let m = meta(TRANSFER, None);
    assert_eq!(m["randomness"]["deterministic"], true);
    assert_eq!(
        m["randomness"]["summary"],
        "deterministic: the seed changes nothing"
    );
    // and it is true: another seed gives the same tables
    let (a, b) = (
        run_scenario(TRANSFER, Some(1)).unwrap(),
        run_scenario(TRANSFER, Some(2)).unwrap(),
    );
    assert_eq!((a.flows_csv, a.ports_csv), (b.flows_csv, b.ports_csv));

    let fat_tree = r#"
[topology]
kind = "fat_tree"
k = 4
[[apps]]
kind = "incast"
client = "h0"
servers = "h4..h7"
sru = "10KB"
start_delay_max_us = 50
[[apps]]
kind = "udp"
src = "h8"
dst = "h9"
count = 3
[[apps]]
kind = "short_flows"
src = "h1"
dst = "h2"
parallel = 2
flow = "5KB"
flows_per_sequence = 1
start_spread_us = 10
"#;
    let m = meta(fat_tree, None);
    assert_eq!(m["randomness"]["deterministic"], false);
    let draws: Vec<String> = m["randomness"]["draws"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_string())
        .collect();
    assert!(draws.iter().any(|d| d.starts_with("ECMP")), "{draws:?}");
    assert!(
        draws
            .iter()
            .any(|d| d.starts_with("apps[0] (incast): each server's start delay")),
        "{draws:?}"
    );
    assert!(draws.iter().any(|d| d.starts_with("apps[1] (udp)")), "{draws:?}");
    assert!(
        draws.iter().any(|d| d.starts_with("apps[2] (short_flows)")),
        "{draws:?}"
    );
    // under XCo, flows between two hosts share one path whatever the seed
    let m = meta(&format!("{fat_tree}\n[xco]\ncontroller = \"h15\"\n"), None);
    let draws = m["randomness"]["draws"].as_array().unwrap();
    assert!(
        !draws.iter().any(|d| d.as_str().unwrap().starts_with("ECMP")),
        "{draws:?}"
    );
}

#[test]
fn hosts_csv_names_every_address_and_port_of_a_capture() {
    let text = r#"
[run]
duration_ms = 3
[topology]
kind = "two_switch"
hosts_a = 3
hosts_b = 1
[[apps]]
kind = "incast"
client = "b0"
servers = "a*"
sru = "20KB"
[[apps]]
kind = "udp"
src = "a0"
dst = "b0"
rate = "10Mbps"
message = "3000B"
[[apps]]
kind = "ping"
src = "b0"
dst = "a1"
interval_us = 500
[output]
capture = ["sa->sb", "sb->sa"]
"#;
    let o = run_scenario(text, None).unwrap();
    let (header, rows) = records(&o.hosts_csv);
    let col = |name: &str| header.iter().position(|c| c == name).unwrap();
    let (node, ip, transport, port) = (col("node"), col("ip"), col("transport"), col("port"));
    let name_of_ip: std::collections::HashMap<&str, &str> = rows
        .iter()
        .filter(|r| r[transport].is_empty())
        .map(|r| (r[ip].as_str(), r[node].as_str()))
        .collect();
    assert_eq!(name_of_ip["10.0.0.2"], "a0", "node 2 is a0 (after sa, sb)");
    let endpoints: std::collections::HashSet<(&str, &str, &str)> = rows
        .iter()
        .filter(|r| !r[transport].is_empty())
        .map(|r| (r[ip].as_str(), r[transport].as_str(), r[port].as_str()))
        .collect();
    let mut seen = std::collections::HashSet::new();
    for (_, pcap) in &o.pcaps {
        let mut reader = pcap_file::pcap::PcapReader::new(&pcap[..]).unwrap();
        while let Some(pkt) = reader.next_packet() {
            let f = pkt.unwrap().data.into_owned();
            let ip_of = |at: usize| format!("{}.{}.{}.{}", f[at], f[at + 1], f[at + 2], f[at + 3]);
            let (src, dst) = (ip_of(26), ip_of(30));
            assert!(name_of_ip.contains_key(src.as_str()) && name_of_ip.contains_key(dst.as_str()));
            let first_fragment = u16::from_be_bytes([f[20], f[21]]) & 0x1fff == 0;
            let l4 = &f[34..];
            let (proto, sport, dport) = match f[23] {
                6 => (
                    "tcp",
                    u16::from_be_bytes([l4[0], l4[1]]),
                    u16::from_be_bytes([l4[2], l4[3]]),
                ),
                17 if first_fragment => (
                    "udp",
                    u16::from_be_bytes([l4[0], l4[1]]),
                    u16::from_be_bytes([l4[2], l4[3]]),
                ),
                1 if l4[0] == 8 => ("icmp_id", u16::from_be_bytes([l4[4], l4[5]]), u16::MAX),
                _ => continue,
            };
            let (sport, dport) = (sport.to_string(), dport.to_string());
            assert!(
                endpoints.contains(&(src.as_str(), proto, sport.as_str())),
                "{src} {proto} {sport}"
            );
            if dport != u16::MAX.to_string() {
                assert!(
                    endpoints.contains(&(dst.as_str(), proto, dport.as_str())),
                    "{dst} {proto} {dport}"
                );
            }
            seen.insert(proto);
        }
    }
    assert_eq!(seen.len(), 3, "the capture holds TCP, UDP and ICMP: {seen:?}");
}

#[test]
fn port_inputs_split_each_ports_arrivals_and_drops_by_the_neighbour_they_came_from() {
    // two senders into one 40 KB port: it drops, and each drop is charged to an input
    let text = r#"
[run]
duration_ms = 100
[topology]
kind = "star"
hosts = 3
link_delay_us = 10
switch_buffer = "40KB"
[[apps]]
kind = "bulk"
src = ["h0", "h1"]
dst = "h2"
[output]
timeseries_bin_us = 0
"#;
    let o = run_scenario(text, None).unwrap();
    let (ph, ports) = records(&o.ports_csv);
    let (ih, inputs) = records(&o.port_inputs_csv);
    let pc = |n: &str| ph.iter().position(|c| c == n).unwrap();
    let ic = |n: &str| ih.iter().position(|c| c == n).unwrap();
    let num = |s: &str| s.parse::<u64>().unwrap();
    let bottleneck = ports
        .iter()
        .find(|r| r[pc("from")] == "s0" && r[pc("to")] == "h2")
        .unwrap();
    let rows: Vec<&Vec<String>> = inputs
        .iter()
        .filter(|r| r[ic("port")] == bottleneck[pc("port")])
        .collect();
    let from: Vec<&str> = rows.iter().map(|r| r[ic("input_from")].as_str()).collect();
    assert_eq!(from, vec!["h0", "h1"], "one row per input that brought packets");
    let sum = |col: &str| rows.iter().map(|r| num(&r[ic(col)])).sum::<u64>();
    assert_eq!(sum("dropped_packets"), num(&bottleneck[pc("dropped_packets")]));
    assert_eq!(sum("dropped_bytes"), num(&bottleneck[pc("dropped_bytes")]));
    assert!(sum("dropped_packets") > 0);
    // each input's drops are its sender's losses (all drops happen here)
    let (fh, flows) = records(&o.flows_csv);
    let fc = |n: &str| fh.iter().position(|c| c == n).unwrap();
    for r in &rows {
        let lost: u64 = flows
            .iter()
            .filter(|f| f[fc("src")] == r[ic("input_from")])
            .map(|f| num(&f[fc("packets_dropped")]))
            .sum();
        assert_eq!(num(&r[ic("dropped_packets")]), lost, "{r:?}");
    }
    // a host NIC: one row, its own host, no neighbour
    let nic: Vec<&Vec<String>> = inputs
        .iter()
        .filter(|r| r[ic("from")] == "h0" && r[ic("to")] == "s0")
        .collect();
    assert_eq!(nic.len(), 1);
    assert_eq!(nic[0][ic("input_from")], "");
    // every arrival at every port is in exactly one row
    let admitted_plus_dropped: u64 = ports
        .iter()
        .map(|r| num(&r[pc("admitted_packets")]) + num(&r[pc("dropped_packets")]))
        .sum();
    let arrived: u64 = inputs.iter().map(|r| num(&r[ic("arrived_packets")])).sum();
    assert_eq!(arrived, admitted_plus_dropped);
}
