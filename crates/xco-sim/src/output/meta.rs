//! `meta.json`: what ran and how the run ended, from the run's record.
//!
//! Everything in it comes from [`RunRecord`] (the scenario after every
//! override, the seed and where it came from, the random draws) and the
//! run's counters; nothing is copied from the scenario file's text. Keys are
//! sorted, so the same run gives the same bytes.

use crate::scenario::RunRecord;
use crate::sim::RunStats;
use serde_json::{json, Value};

/// What `meta.json` says when the seed changes nothing.
pub const DETERMINISTIC: &str = "deterministic: the seed changes nothing";

/// The `meta.json` text of a run; `source_commit` is the source's commit when known.
pub fn meta_json(record: &RunRecord, stats: &RunStats, source_commit: Option<&str>) -> String {
    let deterministic = record.random_draws.is_empty();
    let randomness = json!({
        "deterministic": deterministic,
        "draws": record.random_draws,
        "summary": if deterministic {
            DETERMINISTIC.to_string()
        } else {
            format!("random: the seed sets {} kind(s) of draw", record.random_draws.len())
        },
    });
    let meta: Value = json!({
        "xco_version": env!("CARGO_PKG_VERSION"),
        "source_commit": source_commit,
        "name": record.name,
        "seed": record.seed,
        "seed_from": record.seed_source.name(),
        "randomness": randomness,
        "scenario": record.scenario,
        "sim_end_s": stats.end.as_secs_f64(),
        "events": stats.events,
        "data_packet_hops": stats.data_packet_hops,
        "stop_reason": stats.stop_reason,
    });
    let mut s = serde_json::to_string_pretty(&meta).expect("JSON values serialise");
    s.push('\n');
    s
}
