//! `timeseries.csv`, written while the run goes: one row per flow and
//! sampled port per bin, as CSV text that stops at a size limit.
//!
//! The rows are rendered when a bin closes (the names and numbers are those
//! the run's end would print), so the run holds the table's text and nothing
//! more. Once the next row would take the text past the limit
//! (`output.max_file_bytes`, 1 GiB by default) no further row is kept, and
//! [`Timeseries::cut_at`] says from which bin on rows are missing.

use super::csv_table::BoundedCsv;
use xco_core::Time;

/// The time series' columns.
pub const COLUMNS: [&str; 7] = [
    "t_s",
    "entity",
    "id",
    "name",
    "throughput_mbps",
    "queue_bytes",
    "drops",
];

/// The time-series table of a run.
pub struct Timeseries {
    csv: BoundedCsv,
    rows: u64,
    cut_at: Option<Time>,
}

impl Timeseries {
    /// An empty table of at most `limit_bytes` bytes of text.
    pub fn new(limit_bytes: u64) -> Timeseries {
        Timeseries {
            csv: BoundedCsv::new(&COLUMNS, limit_bytes),
            rows: 0,
            cut_at: None,
        }
    }

    /// Append a row for bin end `t` (`t_s`: the same time as the table prints
    /// it); `entity` is `flow` or `port`. Nothing is kept once the limit was reached.
    #[allow(clippy::too_many_arguments)]
    pub fn row(
        &mut self,
        t: Time,
        t_s: &str,
        entity: &str,
        id: u32,
        name: &str,
        throughput_mbps: f64,
        queue_bytes: u64,
        drops: u64,
    ) {
        let cells = [
            t_s,
            entity,
            &id.to_string(),
            name,
            &throughput_mbps.to_string(),
            &queue_bytes.to_string(),
            &drops.to_string(),
        ];
        if self.csv.row(&cells) {
            self.rows += 1;
        } else if self.cut_at.is_none() {
            self.cut_at = Some(t);
        }
    }

    /// True once a row did not fit: later rows are not kept.
    pub fn is_full(&self) -> bool {
        self.csv.is_full()
    }

    /// The bin end of the first row that was not kept, if any.
    pub fn cut_at(&self) -> Option<Time> {
        self.cut_at
    }

    /// Rows kept.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Keep no row that would take the text past `bytes` from now on.
    pub fn set_limit(&mut self, bytes: u64) {
        self.csv.set_limit(bytes);
    }

    /// The size limit, bytes.
    pub fn limit_bytes(&self) -> u64 {
        self.csv.limit_bytes()
    }

    /// The table's text so far.
    pub fn text(&self) -> &str {
        self.csv.text()
    }

    /// The table's text, moved out.
    pub fn into_text(self) -> String {
        self.csv.into_text()
    }
}
