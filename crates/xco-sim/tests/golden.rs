//! Golden runs: small whole-simulation scenarios whose output tables are
//! stored in the repository and compared byte for byte.
//!
//! Each `tests/golden/NAME.toml` is run with its own seed; its tables
//! (`flows.csv`, `apps.csv`, `samples.csv`, `ports.csv`, `timeseries.csv`)
//! and `run.txt` (end time, data-packet hops, why the run stopped) must
//! equal the files in `tests/golden/NAME/`. The scenarios cover incast
//! collapse, TCP against UDP, XCo timeslice / rate limiting / hybrid and
//! fail-open, a k = 4 fat-tree, ping under load and short flows; every TCP
//! profile (newreno with and without Limited Transmit, linux, dctcp with
//! step marking, the PDN paper profile with its per-request connections),
//! SACK / RACK / TLP alone, RED with ECN, SFQ, PDN, ECMP per host pair
//! with timing noise, and SICC's web fan-in on a tree3 (speed control,
//! redirection, overloaded hubs) beside One-all.
//!
//! A restructuring must leave every file byte-identical. A commit that
//! changes a behaviour on purpose refreshes them with
//! `XCO_GOLDEN=update cargo test --release -p xco-sim --test sim golden`
//! and says in its message which behaviour changed and why.
//!
//! The event count is not pinned: it is a cost of the implementation (a
//! timer that is re-armed instead of superseded is one event more), not a
//! behaviour.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use xco_sim::run_scenario;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn scenarios() -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(golden_dir())
        .expect("tests/golden exists")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let name = p.file_name()?.to_str()?.strip_suffix(".toml")?.to_string();
            Some((name, p))
        })
        .collect();
    v.sort();
    v
}

/// The files a golden run pins: (file name, content).
fn outputs(name: &str, text: &str) -> Vec<(&'static str, String)> {
    let o = run_scenario(text, None).unwrap_or_else(|e| panic!("golden scenario {name} fails: {e}"));
    let run = format!(
        "seed {}\nsim_end_s {}\ndata_packet_hops {}\nstop_reason {}\n",
        o.seed,
        o.stats.end.as_secs_f64(),
        o.stats.data_packet_hops,
        o.stats.stop_reason
    );
    vec![
        ("flows.csv", o.flows_csv),
        ("apps.csv", o.apps_csv),
        ("samples.csv", o.samples_csv),
        ("ports.csv", o.ports_csv),
        ("timeseries.csv", o.timeseries_csv),
        ("run.txt", run),
    ]
}

/// A short account of how `got` differs from `want`, row by row.
fn row_diff(file: &str, want: &str, got: &str) -> String {
    let w: Vec<&str> = want.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    let changed: Vec<usize> = (0..w.len().max(g.len()))
        .filter(|&i| w.get(i) != g.get(i))
        .collect();
    let mut s = format!(
        "{file}: {} of {} rows differ (now {} rows)\n",
        changed.len(),
        w.len(),
        g.len()
    );
    for &i in changed.iter().take(6) {
        let _ = writeln!(s, "  row {}:", i + 1);
        let _ = writeln!(s, "    - {}", w.get(i).unwrap_or(&"(none)"));
        let _ = writeln!(s, "    + {}", g.get(i).unwrap_or(&"(none)"));
    }
    if changed.len() > 6 {
        let _ = writeln!(s, "  ... and {} more rows", changed.len() - 6);
    }
    s
}

#[test]
fn golden_runs_match_their_stored_tables() {
    let update = std::env::var("XCO_GOLDEN").is_ok_and(|v| v == "update");
    let all = scenarios();
    assert!(all.len() >= 8, "the golden scenarios are missing: {all:?}");
    let mut report = String::new();
    for (name, path) in &all {
        let text = std::fs::read_to_string(path).expect("readable scenario");
        let dir = golden_dir().join(name);
        for (file, got) in outputs(name, &text) {
            let at = dir.join(file);
            if update {
                std::fs::create_dir_all(&dir).expect("golden dir");
                std::fs::write(&at, &got).expect("write golden file");
                continue;
            }
            match std::fs::read_to_string(&at) {
                Ok(want) if want == got => {}
                Ok(want) => report.push_str(&row_diff(&format!("golden/{name}/{file}"), &want, &got)),
                Err(_) => {
                    let _ = writeln!(
                        report,
                        "golden/{name}/{file}: missing (XCO_GOLDEN=update writes it)"
                    );
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "golden runs changed:\n{report}\nIf the change is on purpose, refresh with \
         XCO_GOLDEN=update cargo test --release -p xco-sim --test sim golden \
         and say in the commit which behaviour changed and why."
    );
}

#[test]
fn a_changed_row_is_named_with_its_file_and_row_number() {
    let d = row_diff("golden/x/flows.csv", "h\n1,a\n2,b\n", "h\n1,a\n2,c\n3,d\n");
    assert!(
        d.starts_with("golden/x/flows.csv: 2 of 3 rows differ (now 4 rows)"),
        "{d}"
    );
    assert!(d.contains("row 3:\n    - 2,b\n    + 2,c"), "{d}");
    assert!(d.contains("row 4:\n    - (none)\n    + 3,d"), "{d}");
}
