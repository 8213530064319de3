//! A run can be stopped from another thread and says so; outputs stop at
//! their size limit and say so; neither changes a run that needs neither.

use std::sync::Arc;
use std::time::{Duration, Instant};
use xco_sim::control::RunControl;
use xco_sim::run_scenario;
use xco_sim::scenario::{run_scenario_opts, RunOptions};

/// A k = 4 fat-tree under bulk TCP for `ms` simulated milliseconds, with a
/// time series every 100 us and one captured link.
fn busy(ms: u32, extra_output: &str) -> String {
    format!(
        r#"
name = "busy"
[run]
duration_ms = {ms}
[topology]
kind = "fat_tree"
k = 4
host_rate = "10Gbps"
link_delay_us = 1
[[apps]]
kind = "bulk"
src = "h0..h7"
dst = "h15"
[[apps]]
kind = "bulk"
src = "h8..h14"
dst = "h0"
[output]
timeseries_bin_us = 100
capture = ["e0_0->h0"]
{extra_output}
"#
    )
}

fn meta(json: &str) -> serde_json::Value {
    serde_json::from_str(json).unwrap()
}

#[test]
fn a_stopped_control_ends_the_run_early_and_marks_its_outputs_interrupted() {
    let control = Arc::new(RunControl::new());
    let opts = RunOptions {
        control: Some(Arc::clone(&control)),
        ..RunOptions::default()
    };
    // a run of an hour of simulated time: it ends only because it is stopped
    let text = busy(3_600_000, "timeseries_bin_us = 10000");
    let text = text.replace("timeseries_bin_us = 100\n", "");
    let started = Instant::now();
    let out = std::thread::scope(|s| {
        let run = s.spawn(|| run_scenario_opts(&text, &opts).unwrap());
        while control.progress().events < 100_000 {
            assert!(!run.is_finished(), "the run ended by itself");
            std::thread::sleep(Duration::from_millis(5));
        }
        let asked = Instant::now();
        control.stop();
        let out = run.join().unwrap();
        (out, asked.elapsed())
    });
    let (out, stop_took) = out;
    assert!(
        stop_took < Duration::from_secs(1),
        "stopped {stop_took:?} after the request"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(out.stats.stop_reason, "interrupted");
    let m = meta(&out.meta_json);
    assert_eq!(m["interrupted"], true);
    assert_eq!(m["stop_reason"], "interrupted");
    let end_s = m["sim_end_s"].as_f64().unwrap();
    assert!(end_s > 0.0 && end_s < 3600.0, "ended at {end_s} s");
    // what was simulated is in the tables
    assert!(out.flows_csv.lines().count() > 8);
    let p = control.progress();
    assert!(p.end_is_duration && p.stop_requested);
    assert_eq!(p.events, out.stats.events, "the last progress is the run's end");
}

#[test]
fn a_control_stopped_before_the_run_stops_it_before_the_first_event() {
    let control = Arc::new(RunControl::new());
    control.stop();
    let opts = RunOptions {
        control: Some(control),
        ..RunOptions::default()
    };
    let out = run_scenario_opts(&busy(10, ""), &opts).unwrap();
    assert_eq!((out.stats.stop_reason, out.stats.events), ("interrupted", 0));
}

#[test]
fn a_control_that_is_never_stopped_changes_nothing() {
    let text = busy(2, "");
    let plain = run_scenario(&text, None).unwrap();
    let opts = RunOptions {
        control: Some(Arc::new(RunControl::new())),
        ..RunOptions::default()
    };
    let watched = run_scenario_opts(&text, &opts).unwrap();
    assert_eq!(plain.flows_csv, watched.flows_csv);
    assert_eq!(plain.timeseries_csv, watched.timeseries_csv);
    assert_eq!(plain.ports_csv, watched.ports_csv);
    assert_eq!(plain.meta_json, watched.meta_json);
    assert_eq!(plain.pcaps, watched.pcaps);
    assert!(meta(&plain.meta_json).get("interrupted").is_none());
    assert!(meta(&plain.meta_json).get("output_cut").is_none() && plain.warnings.is_empty());
}

#[test]
fn the_time_series_and_a_capture_stop_at_their_size_limit_with_a_warning() {
    let full = run_scenario(&busy(2, ""), None).unwrap();
    let limit = 20_000u64;
    assert!(full.timeseries_csv.len() as u64 > 2 * limit && full.pcaps[0].1.len() as u64 > 2 * limit);
    let cut = run_scenario(&busy(2, &format!("max_file_bytes = {limit}")), None).unwrap();
    // the rows that fit are the first rows of the whole table
    let ts = &cut.timeseries_csv;
    assert!(
        ts.len() as u64 <= limit && ts.len() as u64 > limit - 200,
        "{} bytes",
        ts.len()
    );
    assert!(full.timeseries_csv.starts_with(ts.as_str()) && ts.ends_with('\n'));
    // the capture keeps its first packets, as whole records
    let (name, pcap) = &cut.pcaps[0];
    assert!(
        pcap.len() as u64 <= limit && pcap.len() as u64 > limit - 200,
        "{name}: {} bytes",
        pcap.len()
    );
    assert_eq!(&full.pcaps[0].1[..pcap.len()], &pcap[..]);
    // one warning per file, and the record says what was cut
    assert_eq!(cut.warnings.len(), 2, "{:?}", cut.warnings);
    assert!(cut.warnings[0].starts_with("timeseries.csv stopped at its size limit of 19.5 KiB"));
    assert!(cut.warnings[1].contains("e0_0-h0.pcap stopped at its size limit"));
    let m = meta(&cut.meta_json);
    assert_eq!(m["output_cut"][0]["file"], "timeseries.csv");
    assert_eq!(m["output_cut"][0]["limit_bytes"], limit);
    assert_eq!(m["output_cut"][1]["file"], "e0_0-h0.pcap");
    // nothing else changed
    assert_eq!(full.flows_csv, cut.flows_csv);
    // an override from the caller wins over the file
    let opts = RunOptions {
        max_file_bytes: Some(4096),
        ..RunOptions::default()
    };
    let small = run_scenario_opts(&busy(2, &format!("max_file_bytes = {limit}")), &opts).unwrap();
    assert!(small.timeseries_csv.len() <= 4096 && small.pcaps[0].1.len() <= 4096);
}

#[test]
fn a_size_limit_under_one_kib_is_refused_naming_the_key() {
    let Err(e) = run_scenario(&busy(1, "max_file_bytes = 100"), None) else {
        panic!("a 100-byte limit was taken");
    };
    assert_eq!(e.field, "output.max_file_bytes");
    assert!(e.message.contains("1024"), "{}", e.message);
}
