//! The Prometheus text format (0.0.4) the daemons' `/metrics` answers with,
//! and the fixed-bucket latency histogram both daemons record into.

use std::fmt::Write as _;
use xco_core::Dur;

/// Writes metrics in the Prometheus text format.
#[derive(Default)]
pub struct Prom {
    /// The text so far.
    pub out: String,
}

impl Prom {
    /// One metric: its help, type and `(labels, value)` lines.
    pub fn metric(&mut self, name: &str, kind: &str, help: &str, lines: &[(String, String)]) {
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, v) in lines {
            let _ = writeln!(self.out, "{name}{labels} {v}");
        }
    }

    /// One metric with a single unlabelled value.
    pub fn one(&mut self, name: &str, kind: &str, help: &str, v: impl ToString) {
        self.metric(name, kind, help, &[(String::new(), v.to_string())]);
    }

    /// A histogram in seconds.
    pub fn histogram(&mut self, name: &str, help: &str, h: &Histogram) {
        let mut acc = 0;
        let mut lines: Vec<(String, String)> = BUCKETS_US
            .iter()
            .zip(h.counts)
            .map(|(b, c)| {
                acc += c;
                (format!("_bucket{{le=\"{}\"}}", *b as f64 / 1e6), acc.to_string())
            })
            .collect();
        lines.push(("_bucket{le=\"+Inf\"}".into(), h.n.to_string()));
        lines.push(("_sum".into(), format!("{}", h.sum_ns as f64 / 1e9)));
        lines.push(("_count".into(), h.n.to_string()));
        self.metric(name, "histogram", help, &lines);
    }
}

/// Upper bounds (µs) of the histogram buckets.
pub const BUCKETS_US: [u64; 12] = [
    10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 50000, 250000, 1000000,
];

/// A latency histogram (fixed buckets, no allocation per sample).
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    counts: [u64; BUCKETS_US.len()],
    sum_ns: u64,
    n: u64,
}

impl Histogram {
    /// Record one duration.
    pub fn record(&mut self, d: Dur) {
        let us = d.as_ns() / 1000;
        if let Some(i) = BUCKETS_US.iter().position(|&b| us <= b) {
            self.counts[i] += 1;
        }
        self.sum_ns = self.sum_ns.saturating_add(d.as_ns());
        self.n += 1;
    }

    /// Upper bound (µs) of the bucket holding quantile `q` (0 if nothing was
    /// recorded; `u64::MAX` above the last bucket).
    pub fn quantile_us(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let want = ((q * self.n as f64).ceil() as u64).max(1);
        let mut acc = 0;
        for (i, c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= want {
                return BUCKETS_US[i];
            }
        }
        u64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_bucket_bounds() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile_us(0.5), 0);
        for us in [5, 40, 40, 900] {
            h.record(Dur::from_us(us));
        }
        assert_eq!(h.quantile_us(0.5), 50);
        assert_eq!(h.quantile_us(1.0), 1000);
        h.record(Dur::from_ms(5000));
        assert_eq!(h.quantile_us(1.0), u64::MAX);
    }
}
