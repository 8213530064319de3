//! The controller's `/metrics` endpoint (Prometheus text format 0.0.4).
//!
//! The event loop renders a snapshot every 100 ms; a small HTTP thread serves
//! the latest one, so a slow scraper never delays a directive.

use super::ControllerStats;
use crate::channel::ChannelStats;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use xco_core::sched::Scheduler;
use xco_core::{Dur, Time};

/// Upper bounds (µs) of the timer-lateness histogram buckets.
const LATENESS_BUCKETS_US: [u64; 9] = [10, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

/// Histogram of how late the scheduler's timer fired.
#[derive(Clone, Debug, Default)]
pub struct Lateness {
    counts: [u64; LATENESS_BUCKETS_US.len() + 1],
    sum_ns: u64,
    n: u64,
}

impl Lateness {
    /// Record one lateness.
    pub fn record(&mut self, d: Dur) {
        let us = d.as_ns() / 1000;
        let i = LATENESS_BUCKETS_US
            .iter()
            .position(|&b| us <= b)
            .unwrap_or(LATENESS_BUCKETS_US.len());
        self.counts[i] += 1;
        self.sum_ns += d.as_ns();
        self.n += 1;
    }

    /// Upper bound (µs) of the bucket holding quantile `q` (0 if nothing was recorded).
    pub fn quantile_us(&self, q: f64) -> u64 {
        let want = (q * self.n as f64).ceil() as u64;
        let mut acc = 0;
        for (i, c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= want.max(1) && self.n > 0 {
                return LATENESS_BUCKETS_US.get(i).copied().unwrap_or(u64::MAX);
            }
        }
        0
    }
}

/// Directives per second over the last full second.
#[derive(Clone, Debug, Default)]
pub struct RateWindow {
    start: Option<(Time, u64)>,
    /// The rate.
    pub per_s: f64,
}

impl RateWindow {
    /// Update with the running total at `now`.
    pub fn update(&mut self, now: Time, total: u64) {
        match self.start {
            None => self.start = Some((now, total)),
            Some((t0, n0)) => {
                let dt = now.saturating_since(t0).as_secs_f64();
                if dt >= 1.0 {
                    self.per_s = (total - n0) as f64 / dt;
                    self.start = Some((now, total));
                }
            }
        }
    }
}

/// Render the metrics text.
pub fn render(
    sched: &Scheduler,
    st: &ControllerStats,
    ch: &ChannelStats,
    late: &Lateness,
    link_names: &[String],
    hosts: u32,
    directives_per_s: f64,
) -> String {
    let mut o = String::with_capacity(4096);
    let s = sched.stats();
    let mut metric = |name: &str, kind: &str, help: &str, lines: &[(String, String)]| {
        let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, v) in lines {
            let _ = writeln!(o, "{name}{labels} {v}");
        }
    };
    let one = |v: String| vec![(String::new(), v)];
    metric(
        "xco_directives_total",
        "counter",
        "Directives issued.",
        &one(s.directives.to_string()),
    );
    metric(
        "xco_directives_per_second",
        "gauge",
        "Directives issued per second over the last second.",
        &one(format!("{directives_per_s:.1}")),
    );
    metric(
        "xco_scheduler_events_total",
        "counter",
        "Scheduling events handled.",
        &one(s.events.to_string()),
    );
    metric(
        "xco_scheduler_nodes_considered_total",
        "counter",
        "Hosts considered by Algorithm 1.",
        &one(s.nodes_considered.to_string()),
    );
    let joined = (0..hosts).filter(|&x| sched.joined(x)).count();
    let backlogged = (0..hosts)
        .filter(|&x| sched.joined(x) && !sched.backlog(x).is_empty())
        .count();
    let sending = (0..hosts).filter(|&x| sched.dest(x).is_some()).count();
    metric(
        "xco_active_hosts",
        "gauge",
        "Hosts registered with the controller.",
        &one(joined.to_string()),
    );
    metric(
        "xco_backlogged_hosts",
        "gauge",
        "Registered hosts with backlogged traffic.",
        &one(backlogged.to_string()),
    );
    metric(
        "xco_sending_hosts",
        "gauge",
        "Hosts holding a timeslice now.",
        &one(sending.to_string()),
    );
    metric(
        "xco_hosts_timed_out_total",
        "counter",
        "Hosts dropped for silence.",
        &one(s.hosts_timed_out.to_string()),
    );
    let link = |f: &dyn Fn(u32) -> u64| -> Vec<(String, String)> {
        (0..sched.links() as u32)
            .map(|l| {
                (
                    format!("{{link=\"{}\"}}", link_names[l as usize]),
                    f(l).to_string(),
                )
            })
            .collect()
    };
    metric(
        "xco_link_admitted_bps",
        "gauge",
        "Capacity the schedule admits on each directed link, bit/s.",
        &link(&|l| sched.admitted_bps(l)),
    );
    metric(
        "xco_link_capacity_bps",
        "gauge",
        "Schedulable capacity of each directed link, bit/s.",
        &link(&|l| sched.link_bps(l)),
    );
    let types = ["join", "leave", "heartbeat", "report", "giveback"];
    let msgs: Vec<(String, String)> = types
        .iter()
        .zip(st.msgs)
        .map(|(t, n)| (format!("{{type=\"{t}\"}}"), n.to_string()))
        .collect();
    metric(
        "xco_messages_total",
        "counter",
        "Accepted control messages by type.",
        &msgs,
    );
    let rej = vec![
        ("{reason=\"auth\"}".to_string(), ch.rejected_auth.to_string()),
        ("{reason=\"replay\"}".to_string(), ch.rejected_replay.to_string()),
        (
            "{reason=\"malformed\"}".to_string(),
            ch.rejected_malformed.to_string(),
        ),
        ("{reason=\"sender\"}".to_string(), st.rejected_sender.to_string()),
    ];
    metric(
        "xco_rejected_total",
        "counter",
        "Rejected control datagrams by reason.",
        &rej,
    );
    metric(
        "xco_undeliverable_total",
        "counter",
        "Directives for hosts of unknown address.",
        &one(st.undeliverable.to_string()),
    );
    metric(
        "xco_timer_fires_total",
        "counter",
        "Scheduler timer expiries handled.",
        &one(st.timer_fires.to_string()),
    );
    let mut acc = 0;
    let mut buckets: Vec<(String, String)> = LATENESS_BUCKETS_US
        .iter()
        .zip(late.counts)
        .map(|(b, c)| {
            acc += c;
            (format!("_bucket{{le=\"{}\"}}", *b as f64 / 1e6), acc.to_string())
        })
        .collect();
    buckets.push(("_bucket{le=\"+Inf\"}".into(), late.n.to_string()));
    buckets.push(("_sum".into(), format!("{}", late.sum_ns as f64 / 1e9)));
    buckets.push(("_count".into(), late.n.to_string()));
    metric(
        "xco_timer_lateness_seconds",
        "histogram",
        "How late the scheduler's timer fired.",
        &buckets,
    );
    o
}

/// Serves the latest snapshot over HTTP.
pub struct MetricsServer {
    snapshot: Arc<Mutex<String>>,
}

impl MetricsServer {
    /// Listen on `addr` and serve from a background thread.
    pub fn start(addr: SocketAddr) -> std::io::Result<MetricsServer> {
        let listener = TcpListener::bind(addr)?;
        let snapshot = Arc::new(Mutex::new(String::new()));
        let shared = snapshot.clone();
        std::thread::Builder::new().name("metrics".into()).spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
                let mut req = [0u8; 2048];
                let mut got = 0;
                while got < req.len() {
                    match conn.read(&mut req[got..]) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => got += n,
                    }
                    if req[..got].windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
                let line = String::from_utf8_lossy(&req[..got]);
                let (status, body) = if line.starts_with("GET /metrics ") {
                    ("200 OK", shared.lock().map(|s| s.clone()).unwrap_or_default())
                } else {
                    ("404 Not Found", "only GET /metrics is served here\n".to_string())
                };
                let _ = write!(
                    conn,
                    "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        })?;
        Ok(MetricsServer { snapshot })
    }

    /// Replace the served snapshot.
    pub fn publish(&self, text: String) {
        if let Ok(mut s) = self.snapshot.lock() {
            *s = text;
        }
    }
}
