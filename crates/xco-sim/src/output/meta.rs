//! `meta.json`: what ran and how the run ended, from the run's record.
//!
//! Everything in it comes from [`RunRecord`] (the scenario after every
//! override, the seed and where it came from, the random draws) and the
//! run's counters; nothing is copied from the scenario file's text. Keys are
//! sorted, so the same run gives the same bytes.

use super::human_bytes;
use crate::sim::RunStats;
use serde_json::{json, Value};
use xco_core::Time;

/// Where the seed of a run came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedSource {
    /// Given to the run (`--seed`, `seed=` in Python): it overrides the file.
    Override,
    /// The file's `run.seed`.
    File,
    /// Neither: the default, 1.
    Default,
}

impl SeedSource {
    /// Name for `meta.json`.
    pub fn name(self) -> &'static str {
        match self {
            SeedSource::Override => "override",
            SeedSource::File => "run.seed",
            SeedSource::Default => "default",
        }
    }
}

/// What ran: the effective scenario, its seed and its random draws.
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// The scenario's `name` (or `scenario`).
    pub name: String,
    /// The seed in use.
    pub seed: u64,
    /// Where the seed came from.
    pub seed_source: SeedSource,
    /// The scenario as read, with `run.seed` set to the seed in use.
    pub scenario: Value,
    /// The random draws the scenario makes, one sentence each; empty when the
    /// seed changes nothing.
    pub random_draws: Vec<String>,
}

/// What `meta.json` says when the seed changes nothing.
pub const DETERMINISTIC: &str = "deterministic: the seed changes nothing";

/// An output file that reached its size limit (`output.max_file_bytes`).
#[derive(Clone, Debug)]
pub struct CutOutput {
    /// The file's name (`timeseries.csv`, `sa-sb.pcap`).
    pub file: String,
    /// Its limit, bytes.
    pub limit_bytes: u64,
    /// The simulated time of the first row or packet not written.
    pub from: Time,
    /// What is missing, in words (`1234 packets`).
    pub not_written: String,
}

impl CutOutput {
    /// The warning a user reads.
    pub fn warning(&self) -> String {
        format!(
            "{} stopped at its size limit of {} (output.max_file_bytes, or --max-output): \
             {} from t = {} s on are not written",
            self.file,
            human_bytes(self.limit_bytes),
            self.not_written,
            self.from.as_secs_f64()
        )
    }
}

/// The `meta.json` text of a run; `source_commit` is the source's commit
/// when known; `cut` lists the outputs that reached their size limit. An
/// interrupted run says `"interrupted": true` (a run that was not has no
/// such key, so its file is the same as before interruption existed).
pub fn meta_json(
    record: &RunRecord,
    stats: &RunStats,
    source_commit: Option<&str>,
    cut: &[CutOutput],
) -> String {
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
    let mut meta: Value = json!({
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
    if stats.stop_reason == "interrupted" {
        meta["interrupted"] = Value::Bool(true);
    }
    if !cut.is_empty() {
        meta["output_cut"] = cut
            .iter()
            .map(|c| {
                json!({
                    "file": c.file,
                    "limit_bytes": c.limit_bytes,
                    "from_s": c.from.as_secs_f64(),
                    "not_written": c.not_written,
                })
            })
            .collect();
    }
    let mut s = serde_json::to_string_pretty(&meta).expect("JSON values serialise");
    s.push('\n');
    s
}
