//! The CSV tables and `meta.json` of a finished run.

use super::csv_table::{num, CsvTable};
use super::meta::RunRecord;
use super::meta::{meta_json, CutOutput};
use super::timeseries::Timeseries;
use crate::app::Metric;
use crate::net::drop_runs::MAX_RUN;
use crate::net::Net;
use crate::sim::{RunStats, Sim};

/// Everything a run produces, as text and bytes ready to be written.
pub struct RunOutput {
    /// One row per flow.
    pub flows_csv: String,
    /// Per-bin flow throughput and port queues.
    pub timeseries_csv: String,
    /// One row per (app, metric).
    pub apps_csv: String,
    /// Per-round / per-probe / per-flow samples of apps.
    pub samples_csv: String,
    /// One row per port.
    pub ports_csv: String,
    /// Per port and input: arrivals and drops.
    pub port_inputs_csv: String,
    /// Per switch port and input: episodes of k consecutive drops.
    pub drop_runs_csv: String,
    /// Enqueue/dequeue/drop events of the ports with a queue timeline.
    pub queue_timeline_csv: String,
    /// Node addresses and endpoint ports as they appear in pcaps.
    pub hosts_csv: String,
    /// Scenario, seed, version, run statistics.
    pub meta_json: String,
    /// Captured links: (file name, pcap bytes).
    pub pcaps: Vec<(String, Vec<u8>)>,
    /// Counters of the run.
    pub stats: RunStats,
    /// What the run did not write in full (an output that reached its size
    /// limit), one sentence each.
    pub warnings: Vec<String>,
    /// Per app: (id, kind, metrics).
    pub app_summaries: Vec<(u32, &'static str, Vec<Metric>)>,
    /// Apps' own tables (`requests.csv` of a web fan-in): (file name, CSV text).
    pub app_tables: Vec<(String, String)>,
    /// The seed used.
    pub seed: u64,
}

/// Every app's own tables; a name two apps share gets the app's index in front (`app1_requests.csv`).
fn app_tables(sim: &Sim) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, a) in sim.apps.iter().enumerate() {
        for (name, text) in a.tables() {
            let name = if out.iter().any(|(n, _)| n == name) {
                format!("app{i}_{name}")
            } else {
                name.to_string()
            };
            out.push((name, text));
        }
    }
    out
}

fn flows_csv(sim: &Sim) -> String {
    let net = &sim.cx.net;
    let end = sim.cx.now;
    let mut t = CsvTable::new(&[
        "flow",
        "app",
        "app_kind",
        "role",
        "kind",
        "src",
        "dst",
        "start_s",
        "end_s",
        "bytes_delivered",
        "goodput_mbps",
        "wire_bytes_sent",
        "wire_bytes_dropped",
        "packets_dropped",
        "retransmits",
        "timeouts",
        "fast_retransmits",
        "msgs_sent",
        "msgs_delivered",
        "rtt_us_mean",
        "rtt_us_max",
        "path",
    ]);
    for (i, f) in net.flows.iter().enumerate() {
        let path = if f.route == crate::stats::NO_ROUTE {
            String::new()
        } else {
            net.route_text(f.route, f.src, f.dst)
        };
        let stop = f.end.unwrap_or(end);
        let secs = stop.saturating_since(f.start).as_secs_f64();
        let goodput = if secs > 0.0 {
            f.app_bytes_delivered as f64 * 8.0 / secs / 1e6
        } else {
            f64::NAN
        };
        let end_s = f.end.map(|t| t.as_secs_f64().to_string()).unwrap_or_default();
        let (rtt_mean, rtt_max) = if f.rtt_count > 0 {
            (
                (f.rtt_sum_ps as f64 / f.rtt_count as f64 / 1e6).to_string(),
                (f.rtt_max_ps as f64 / 1e6).to_string(),
            )
        } else {
            (String::new(), String::new())
        };
        t.row(&[
            i.to_string(),
            (if f.app == u32::MAX { -1 } else { f.app as i64 }).to_string(),
            sim.apps
                .get(f.app as usize)
                .map_or("xco", |a| a.kind())
                .to_string(),
            f.role.to_string(),
            f.kind.name().to_string(),
            net.name(f.src).to_string(),
            net.name(f.dst).to_string(),
            f.start.as_secs_f64().to_string(),
            end_s,
            f.app_bytes_delivered.to_string(),
            num(goodput),
            f.wire_bytes_sent.to_string(),
            f.wire_bytes_dropped.to_string(),
            f.wire_packets_dropped.to_string(),
            f.retransmits.to_string(),
            f.timeouts.to_string(),
            f.fast_retransmits.to_string(),
            f.msgs_sent.to_string(),
            f.msgs_delivered.to_string(),
            rtt_mean,
            rtt_max,
            path,
        ]);
    }
    t.finish()
}

fn ports_csv(sim: &Sim) -> String {
    let net = &sim.cx.net;
    let now = sim.cx.now;
    let secs = now.as_secs_f64();
    let mut t = CsvTable::new(&[
        "port",
        "from",
        "to",
        "rate_bps",
        "buffer_bytes",
        "admitted_bytes",
        "admitted_packets",
        "dropped_bytes",
        "dropped_packets",
        "max_queue_bytes",
        "utilization",
    ]);
    for (i, p) in net.ports.iter().enumerate() {
        // bytes whose serialisation ended by `now` (admitted ones may still wait)
        let busy = p.busy_until.saturating_since(now);
        let unsent_bits = (busy.as_secs_f64() * p.rate_bps as f64).min(p.stats.admitted_bytes as f64 * 8.0);
        let sent_bytes = (p.stats.admitted_bytes as f64 - unsent_bits / 8.0).max(0.0);
        let util = if secs > 0.0 {
            (sent_bytes * 8.0 / (p.rate_bps as f64 * secs)).min(1.0)
        } else {
            f64::NAN
        };
        t.row(&[
            i.to_string(),
            net.name(p.from).to_string(),
            net.name(p.to).to_string(),
            p.rate_bps.to_string(),
            p.buffer_bytes.to_string(),
            p.stats.admitted_bytes.to_string(),
            p.stats.admitted_packets.to_string(),
            p.stats.dropped_bytes.to_string(),
            p.stats.dropped_packets.to_string(),
            p.stats.max_backlog_bytes.to_string(),
            num(util),
        ]);
    }
    t.finish()
}

/// Per output port and input: what arrived and what was dropped. A switch
/// port has a row per input link that brought it anything (`input_from` the
/// neighbour at the link's far end); a host NIC has one row, its own host
/// (`input_from` empty); a port of a switch of more than
/// [`crate::net::MAX_COUNTED_INPUTS`] ports, and every port of a network of
/// more than [`crate::net::MAX_COUNTED_PAIRS`] (port, input) pairs, has one
/// row of its totals (`input_from` empty too). Inputs that brought nothing have no row.
fn port_inputs_csv(sim: &Sim) -> String {
    let net = &sim.cx.net;
    let mut t = CsvTable::new(&[
        "port",
        "from",
        "to",
        "input",
        "input_from",
        "arrived_packets",
        "arrived_bytes",
        "dropped_packets",
        "dropped_bytes",
    ]);
    for r in net.input_rows() {
        if r.stats.arrived_packets == 0 {
            continue;
        }
        let [port, from, to, input, input_from] = port_input_cells(net, r.port, r.input, r.from_node);
        t.row(&[
            port,
            from,
            to,
            input,
            input_from,
            r.stats.arrived_packets.to_string(),
            r.stats.arrived_bytes.to_string(),
            r.stats.dropped_packets.to_string(),
            r.stats.dropped_bytes.to_string(),
        ]);
    }
    t.finish()
}

/// The cells naming a port and one of its inputs: port id, its two ends,
/// the input's position and the node it comes from (empty at a host NIC).
fn port_input_cells(net: &Net, port: u32, input: u32, from_node: Option<u32>) -> [String; 5] {
    let p = &net.ports[port as usize];
    [
        port.to_string(),
        net.name(p.from).to_string(),
        net.name(p.to).to_string(),
        input.to_string(),
        from_node.map(|n| net.name(n).to_string()).unwrap_or_default(),
    ]
}

/// Per switch port and input that dropped anything: how many runs of `k`
/// consecutive drops it suffered (`net::drop_runs` defines a run), one row
/// per `k` with episodes; `k` = [`MAX_RUN`] counts runs of that many or more,
/// and `longest_run` (the same on every row of the input) is exact.
fn drop_runs_csv(sim: &Sim) -> String {
    let net = &sim.cx.net;
    let mut t = CsvTable::new(&[
        "port",
        "from",
        "to",
        "input",
        "input_from",
        "k",
        "episodes",
        "longest_run",
    ]);
    for r in net.drop_run_rows() {
        for (i, &n) in r.histogram.episodes.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let [port, from, to, input, input_from] = port_input_cells(net, r.port, r.input, r.from_node);
            t.row(&[
                port,
                from,
                to,
                input,
                input_from,
                (i + 1).min(MAX_RUN).to_string(),
                n.to_string(),
                r.histogram.longest.to_string(),
            ]);
        }
    }
    t.finish()
}

/// The queue timelines (`net::timeline`): per chosen port, its events in
/// time order with the bytes queued after each; a timeline cut by its bound
/// ends with a `truncated` row at the first event not recorded.
fn queue_timeline_csv(sim: &Sim) -> String {
    let net = &sim.cx.net;
    let mut t = CsvTable::new(&[
        "port",
        "from",
        "to",
        "time_ns",
        "event",
        "input",
        "input_from",
        "frame_bytes",
        "queue_bytes",
    ]);
    for tl in &net.timelines {
        let p = &net.ports[tl.port as usize];
        let (from, to) = (net.name(p.from).to_string(), net.name(p.to).to_string());
        let input_from = |i: u32| {
            net.input_node(tl.port, i)
                .map(|n| net.name(n).to_string())
                .unwrap_or_default()
        };
        for r in tl.replay() {
            t.row(&[
                tl.port.to_string(),
                from.clone(),
                to.clone(),
                ns(r.row.at),
                r.row.event.name().to_string(),
                r.row.input.to_string(),
                input_from(r.row.input),
                r.row.frame_bytes.to_string(),
                r.queue_bytes.to_string(),
            ]);
        }
        if let Some(cut) = tl.cut_at {
            t.row(&[
                tl.port.to_string(),
                from.clone(),
                to.clone(),
                ns(cut),
                "truncated".to_string(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
    }
    t.finish()
}

/// A time in ns, exact (picoseconds as a decimal fraction).
fn ns(t: xco_core::Time) -> String {
    let ps = t.0;
    if ps % 1000 == 0 {
        (ps / 1000).to_string()
    } else {
        format!("{}.{:03}", ps / 1000, ps % 1000)
    }
}

/// The outputs that reached their size limit.
fn cut_outputs(sim: &Sim) -> Vec<CutOutput> {
    let ts = &sim.timeseries;
    let mut out: Vec<CutOutput> = ts
        .cut_at()
        .map(|t| CutOutput {
            file: "timeseries.csv".to_string(),
            limit_bytes: ts.limit_bytes(),
            from: t,
            not_written: "rows of this and every later bin".to_string(),
        })
        .into_iter()
        .collect();
    for c in &sim.cx.net.captures {
        if let Some(t) = c.cut_at() {
            out.push(CutOutput {
                file: c.name.clone(),
                limit_bytes: c.limit_bytes(),
                from: t,
                not_written: format!("{} packets", c.not_kept()),
            });
        }
    }
    out
}

/// Gather every output of a finished run; `source_commit` goes into `meta.json`.
pub fn collect(sim: &Sim, stats: RunStats, record: &RunRecord, source_commit: Option<&str>) -> RunOutput {
    let cut = cut_outputs(sim);
    collect_with(
        sim,
        sim.timeseries.text().to_string(),
        cut,
        stats,
        record,
        source_commit,
    )
}

/// [`collect`], moving the time series' text out of `sim` instead of
/// copying it (it may be a gigabyte); `sim` keeps an empty one.
pub fn collect_moving(
    sim: &mut Sim,
    stats: RunStats,
    record: &RunRecord,
    source_commit: Option<&str>,
) -> RunOutput {
    let cut = cut_outputs(sim);
    let limit = sim.timeseries.limit_bytes();
    let series = std::mem::replace(&mut sim.timeseries, Timeseries::new(limit)).into_text();
    collect_with(sim, series, cut, stats, record, source_commit)
}

fn collect_with(
    sim: &Sim,
    timeseries_csv: String,
    cut: Vec<CutOutput>,
    stats: RunStats,
    record: &RunRecord,
    source_commit: Option<&str>,
) -> RunOutput {
    let mut apps_csv = CsvTable::new(&["app", "kind", "metric", "value"]);
    let mut samples_csv = CsvTable::new(&["app", "kind", "x", "value"]);
    let mut summaries: Vec<(u32, &'static str, Vec<Metric>)> = Vec::new();
    for (i, a) in sim.apps.iter().enumerate() {
        let m = a.summary(&sim.cx);
        for (k, v) in &m {
            apps_csv.row(&[i.to_string(), a.kind().to_string(), k.to_string(), num(*v)]);
        }
        for (x, v) in a.samples() {
            samples_csv.row(&[i.to_string(), a.kind().to_string(), num(x), num(v)]);
        }
        summaries.push((i as u32, a.kind(), m));
    }
    if let Some(x) = &sim.stack.xco {
        // the XCo control plane reports as one more "app"
        let i = sim.apps.len();
        let m = x.summary();
        for (k, v) in &m {
            apps_csv.row(&[i.to_string(), "xco".to_string(), k.to_string(), num(*v)]);
        }
        summaries.push((i as u32, "xco", m));
    }
    if let Some(p) = sim.cx.net.pdn() {
        // PDN reports as one more "app" too
        let i = summaries.len();
        let t = p.totals();
        let flows = &sim.cx.net.flows;
        let m: Vec<Metric> = vec![
            ("notifications_made", t.made as f64),
            ("piggybacked_hops", t.piggybacked as f64),
            ("empty_frame_hops", t.empty_frames as f64),
            ("delivered", t.delivered as f64),
            ("lost", t.lost as f64),
            ("max_queue_len", t.max_queue_len as f64),
            (
                "notified_retransmits",
                flows.iter().map(|f| f.notified_retransmits).sum::<u64>() as f64,
            ),
            (
                "notified_reductions",
                flows.iter().map(|f| f.notified_reductions).sum::<u64>() as f64,
            ),
            (
                "notified_left_to_timer",
                flows.iter().map(|f| f.notified_left_to_timer).sum::<u64>() as f64,
            ),
        ];
        for (k, v) in &m {
            apps_csv.row(&[i.to_string(), "pdn".to_string(), k.to_string(), num(*v)]);
        }
        summaries.push((i as u32, "pdn", m));
    }
    let warnings = cut.iter().map(|c| c.warning()).collect();
    let meta_json = meta_json(record, &stats, source_commit, &cut);
    let pcaps = sim
        .cx
        .net
        .captures
        .iter()
        .map(|c| (c.name.clone(), c.to_pcap()))
        .collect();
    RunOutput {
        flows_csv: flows_csv(sim),
        timeseries_csv,
        apps_csv: apps_csv.finish(),
        samples_csv: samples_csv.finish(),
        ports_csv: ports_csv(sim),
        port_inputs_csv: port_inputs_csv(sim),
        drop_runs_csv: drop_runs_csv(sim),
        queue_timeline_csv: queue_timeline_csv(sim),
        hosts_csv: super::hosts::hosts_csv(sim),
        meta_json,
        pcaps,
        stats,
        warnings,
        app_summaries: summaries,
        app_tables: app_tables(sim),
        seed: record.seed,
    }
}
