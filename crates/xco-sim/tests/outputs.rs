//! What a run writes tells the truth: tables that parse back whatever the
//! node names, empty statistics left empty, and a record of what ran.

use xco_sim::run_scenario;

/// An explicit topology whose switch is named `s1,x` (a comma in a name).
const COMMA_SWITCH: &str = r#"
[topology]
kind = "explicit"
nodes = [
  { name = "h0", kind = "host" },
  { name = "h\"1", kind = "host" },
  { name = "s1,x", kind = "switch" },
]
links = [
  { a = "h0", b = "s1,x", rate = "1Gbps" },
  { a = "h\"1", b = "s1,x", rate = "1Gbps" },
]
[[apps]]
kind = "transfer"
src = "h0"
dst = "h\"1"
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
fn a_node_named_with_a_comma_keeps_every_column_in_place() {
    let o = run_scenario(COMMA_SWITCH, None).unwrap();
    let (header, ports) = records(&o.ports_csv);
    let from = header.iter().position(|c| c == "from").unwrap();
    assert!(ports.iter().any(|r| r[from] == "s1,x"), "{ports:?}");
    let (header, flows) = records(&o.flows_csv);
    let dst = header.iter().position(|c| c == "dst").unwrap();
    assert!(flows.iter().any(|r| r[dst] == "h\"1"), "{flows:?}");
    let (_, series) = records(&o.timeseries_csv);
    assert!(
        series.iter().any(|r| r[3] == "h0->s1,x"),
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
