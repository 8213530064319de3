//! The daemons' `/metrics` text, encoded by `prometheus-client` (the
//! Prometheus project's own Rust client) in the OpenMetrics text format
//! (1.0.0, which Prometheus scrapes natively; label values escaped, counters
//! with their `_total` suffix, the closing `# EOF`), and the fixed-bucket
//! latency histogram both daemons record into.
//!
//! The daemons keep their own counters (plain integers on the event loop:
//! nothing shared, nothing locked per packet); at each publish they describe
//! them here as metric families, and [`Prom::finish`] hands the snapshot to
//! the client library as a [`Collector`] to encode.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelValue, EncodeMetric, LabelValueEncoder};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use xco_core::Dur;

/// A sample's labels: `(name, value)` pairs.
pub type Labels = Vec<(&'static str, String)>;

/// One sample's value.
#[derive(Clone, Copy, Debug)]
pub enum Value {
    /// A whole number (counts, bytes, bit/s).
    Int(u64),
    /// A real number (rates).
    Real(f64),
}

impl From<u64> for Value {
    fn from(v: u64) -> Value {
        Value::Int(v)
    }
}

impl From<usize> for Value {
    fn from(v: usize) -> Value {
        Value::Int(v as u64)
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Value {
        Value::Int(v.into())
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}

/// What kind of metric a family is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (encoded with the `_total` suffix).
    Counter,
    /// Goes up and down.
    Gauge,
}

#[derive(Debug)]
enum Samples {
    Plain(Kind, Vec<(Labels, Value)>),
    Histogram(Labels, Histogram),
}

#[derive(Debug)]
struct Family {
    /// Without a counter's `_total` (the encoder adds it).
    name: String,
    help: String,
    samples: Samples,
}

/// The metric families of one publish.
#[derive(Debug, Default)]
pub struct Prom {
    families: Vec<Family>,
}

impl Prom {
    /// A family of `kind`: its name (a counter's may end in `_total`, as
    /// the samples will), help text and `(labels, value)` samples.
    pub fn metric(&mut self, name: &str, kind: Kind, help: &str, samples: Vec<(Labels, Value)>) {
        let name = match kind {
            Kind::Counter => name.strip_suffix("_total").unwrap_or(name),
            Kind::Gauge => name,
        };
        self.families.push(Family {
            name: name.to_string(),
            help: help.to_string(),
            samples: Samples::Plain(kind, samples),
        });
    }

    /// A family with one unlabelled sample.
    pub fn one(&mut self, name: &str, kind: Kind, help: &str, v: impl Into<Value>) {
        self.metric(name, kind, help, vec![(Labels::new(), v.into())]);
    }

    /// A histogram in seconds, labelled `labels`.
    pub fn histogram(&mut self, name: &str, help: &str, labels: Labels, h: &Histogram) {
        self.families.push(Family {
            name: name.to_string(),
            help: help.to_string(),
            samples: Samples::Histogram(labels, h.clone()),
        });
    }

    /// The OpenMetrics text of every family, in the order they were added.
    pub fn finish(self) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Snapshot(self.families)));
        let mut out = String::new();
        // writing into a String cannot fail; an encoder error would be a bug of ours
        prometheus_client::encoding::text::encode(&mut out, &registry).expect("metrics text encodes");
        out
    }
}

#[derive(Debug)]
struct Snapshot(Vec<Family>);

/// A label value escaped as OpenMetrics asks (`\\`, `\"`, `\n`):
/// `prometheus-client` 0.24 writes `String` values as they are.
#[derive(Debug)]
struct Esc<'a>(&'a str);

impl EncodeLabelValue for Esc<'_> {
    fn encode(&self, e: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        use std::fmt::Write as _;
        for c in self.0.chars() {
            match c {
                '\\' => e.write_str("\\\\")?,
                '"' => e.write_str("\\\"")?,
                '\n' => e.write_str("\\n")?,
                c => e.write_char(c)?,
            }
        }
        Ok(())
    }
}

fn escaped(l: &Labels) -> Vec<(&'static str, Esc<'_>)> {
    l.iter().map(|(k, v)| (*k, Esc(v))).collect()
}

fn encode_value(kind: Kind, v: Value, e: prometheus_client::encoding::MetricEncoder<'_>) -> std::fmt::Result {
    match (kind, v) {
        (Kind::Counter, Value::Int(n)) => ConstCounter::new(n).encode(e),
        (Kind::Counter, Value::Real(x)) => ConstCounter::new(x).encode(e),
        (Kind::Gauge, Value::Int(n)) => ConstGauge::new(n).encode(e),
        (Kind::Gauge, Value::Real(x)) => ConstGauge::new(x).encode(e),
    }
}

impl Collector for Snapshot {
    fn encode(&self, mut enc: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        for f in &self.0 {
            match &f.samples {
                Samples::Plain(kind, samples) => {
                    let t = match kind {
                        Kind::Counter => MetricType::Counter,
                        Kind::Gauge => MetricType::Gauge,
                    };
                    let mut m = enc.encode_descriptor(&f.name, &f.help, None, t)?;
                    match samples.as_slice() {
                        // one unlabelled sample: `name value`, not `name{} value`
                        [(labels, v)] if labels.is_empty() => encode_value(*kind, *v, m)?,
                        _ => {
                            for (labels, v) in samples {
                                let l = escaped(labels);
                                encode_value(*kind, *v, m.encode_family(&l)?)?;
                            }
                        }
                    }
                }
                Samples::Histogram(labels, h) => {
                    let mut m = enc.encode_descriptor(&f.name, &f.help, None, MetricType::Histogram)?;
                    let mut buckets: Vec<(f64, u64)> = BUCKETS_US
                        .iter()
                        .zip(h.counts)
                        .map(|(b, c)| (*b as f64 / 1e6, c))
                        .collect();
                    let inside: u64 = h.counts.iter().sum();
                    buckets.push((f64::MAX, h.n - inside));
                    let (sum_s, n) = (h.sum_ns as f64 / 1e9, h.n);
                    type NoL = prometheus_client::encoding::NoLabelSet;
                    if labels.is_empty() {
                        // `name_count 3`, not `name_count{} 3`
                        m.encode_histogram::<NoL>(sum_s, n, &buckets, None)?;
                    } else {
                        let l = escaped(labels);
                        m.encode_family(&l)?
                            .encode_histogram::<NoL>(sum_s, n, &buckets, None)?;
                    }
                }
            }
        }
        Ok(())
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
    max_ns: u64,
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
        self.max_ns = self.max_ns.max(d.as_ns());
        self.n += 1;
    }

    /// The longest duration recorded (zero if none).
    pub fn max(&self) -> Dur {
        Dur::from_ns(self.max_ns)
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
    fn families_encode_as_openmetrics_text() {
        let mut p = Prom::default();
        p.metric(
            "xco_x_total",
            Kind::Counter,
            "Things.",
            vec![(vec![("host", "h1".into()), ("dest", "a\"b".into())], 3u64.into())],
        );
        p.one("xco_rate", Kind::Gauge, "A rate.", 2.5);
        let mut h = Histogram::default();
        h.record(Dur::from_us(40));
        h.record(Dur::from_ms(5000));
        p.histogram("xco_wait_seconds", "Waits.", vec![("host", "h1".into())], &h);
        let t = p.finish();
        assert!(t.contains("# TYPE xco_x counter\n"), "{t}");
        assert!(t.contains("xco_x_total{host=\"h1\",dest=\"a\\\"b\"} 3\n"), "{t}");
        assert!(t.contains("# TYPE xco_rate gauge\nxco_rate 2.5\n"), "{t}");
        assert!(
            t.contains("xco_wait_seconds_bucket{le=\"0.00005\",host=\"h1\"} 1\n"),
            "{t}"
        );
        assert!(
            t.contains("xco_wait_seconds_bucket{le=\"+Inf\",host=\"h1\"} 2\n"),
            "{t}"
        );
        assert!(t.contains("xco_wait_seconds_count{host=\"h1\"} 2\n"), "{t}");
        assert!(t.ends_with("# EOF\n"), "{t}");
        // unlabelled: no empty braces
        let mut p = Prom::default();
        p.histogram("xco_late_seconds", "Late.", Labels::new(), &h);
        let t = p.finish();
        assert!(t.contains("\nxco_late_seconds_count 2\n"), "{t}");
        assert!(t.contains("\nxco_late_seconds_bucket{le=\"0.001\"} 1\n"), "{t}");
    }

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
