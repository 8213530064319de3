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
