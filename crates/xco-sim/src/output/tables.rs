//! The CSV tables and `meta.json` of a finished run.

use crate::app::Metric;
use crate::scenario::RunOutput;
use crate::sim::{RunStats, Sim};
use std::fmt::Write;

fn flows_csv(sim: &Sim) -> String {
    let net = &sim.core.net;
    let end = sim.core.now;
    let mut s = String::from(
        "flow,app,app_kind,role,kind,src,dst,start_s,end_s,bytes_delivered,goodput_mbps,\
wire_bytes_sent,wire_bytes_dropped,packets_dropped,retransmits,timeouts,fast_retransmits,\
msgs_sent,msgs_delivered,rtt_us_mean,rtt_us_max\n",
    );
    for (i, f) in net.flows.iter().enumerate() {
        let stop = f.end.unwrap_or(end);
        let secs = stop.saturating_since(f.start).as_secs_f64();
        let goodput = if secs > 0.0 {
            f.app_bytes_delivered as f64 * 8.0 / secs / 1e6
        } else {
            0.0
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
        let _ = writeln!(
            s,
            "{i},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            if f.app == u32::MAX { -1 } else { f.app as i64 },
            sim.apps.get(f.app as usize).map_or("xco", |a| a.kind()),
            f.role,
            f.kind.name(),
            net.name(f.src),
            net.name(f.dst),
            f.start.as_secs_f64(),
            end_s,
            f.app_bytes_delivered,
            goodput,
            f.wire_bytes_sent,
            f.wire_bytes_dropped,
            f.wire_packets_dropped,
            f.retransmits,
            f.timeouts,
            f.fast_retransmits,
            f.msgs_sent,
            f.msgs_delivered,
            rtt_mean,
            rtt_max
        );
    }
    s
}

fn timeseries_csv(sim: &Sim) -> String {
    let net = &sim.core.net;
    let mut s = String::from("t_s,entity,id,name,throughput_mbps,queue_bytes,drops\n");
    for r in &sim.samples {
        let name = if r.entity == "flow" {
            let f = &net.flows[r.id as usize];
            format!("{}->{}", net.name(f.src), net.name(f.dst))
        } else {
            let p = &net.ports[r.id as usize];
            format!("{}->{}", net.name(p.from), net.name(p.to))
        };
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{}",
            r.t.as_secs_f64(),
            r.entity,
            r.id,
            name,
            r.throughput_mbps,
            r.queue_bytes,
            r.drops
        );
    }
    s
}

fn ports_csv(sim: &Sim) -> String {
    let net = &sim.core.net;
    let now = sim.core.now;
    let secs = now.as_secs_f64();
    let mut s = String::from(
        "port,from,to,rate_bps,buffer_bytes,admitted_bytes,admitted_packets,dropped_bytes,dropped_packets,max_queue_bytes,utilization\n",
    );
    for (i, p) in net.ports.iter().enumerate() {
        // bytes whose serialisation ended by `now` (admitted ones may still wait)
        let busy = p.busy_until.saturating_since(now);
        let unsent_bits = (busy.as_secs_f64() * p.rate_bps as f64).min(p.stats.admitted_bytes as f64 * 8.0);
        let sent_bytes = (p.stats.admitted_bytes as f64 - unsent_bits / 8.0).max(0.0);
        let util = if secs > 0.0 {
            (sent_bytes * 8.0 / (p.rate_bps as f64 * secs)).min(1.0)
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "{i},{},{},{},{},{},{},{},{},{},{}",
            net.name(p.from),
            net.name(p.to),
            p.rate_bps,
            p.buffer_bytes,
            p.stats.admitted_bytes,
            p.stats.admitted_packets,
            p.stats.dropped_bytes,
            p.stats.dropped_packets,
            p.stats.max_backlog_bytes,
            util
        );
    }
    s
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

/// Gather every output of a finished run.
pub fn collect(sim: &Sim, stats: RunStats, seed: u64, name: &str, scenario_text: &str) -> RunOutput {
    let mut apps_csv = String::from("app,kind,metric,value\n");
    let mut samples_csv = String::from("app,kind,x,value\n");
    let mut summaries: Vec<(u32, &'static str, Vec<Metric>)> = Vec::new();
    for (i, a) in sim.apps.iter().enumerate() {
        let m = a.summary(&sim.core);
        for (k, v) in &m {
            let _ = writeln!(apps_csv, "{i},{},{k},{v}", a.kind());
        }
        for (x, v) in a.samples() {
            let _ = writeln!(samples_csv, "{i},{},{x},{v}", a.kind());
        }
        summaries.push((i as u32, a.kind(), m));
    }
    if let Some(x) = &sim.core.xco {
        // the XCo control plane reports as one more "app"
        let i = sim.apps.len();
        let m = x.summary();
        for (k, v) in &m {
            let _ = writeln!(apps_csv, "{i},xco,{k},{v}");
        }
        summaries.push((i as u32, "xco", m));
    }
    let meta_json = format!(
        "{{\n  \"xco_version\": {},\n  \"scenario\": {},\n  \"seed\": {},\n  \"sim_end_s\": {},\n  \"events\": {},\n  \"data_packet_hops\": {},\n  \"stop_reason\": {},\n  \"scenario_toml\": {}\n}}\n",
        json_str(env!("CARGO_PKG_VERSION")),
        json_str(name),
        seed,
        stats.end.as_secs_f64(),
        stats.events,
        stats.data_packet_hops,
        json_str(stats.stop_reason),
        json_str(scenario_text)
    );
    let pcaps = sim
        .core
        .net
        .captures
        .iter()
        .map(|c| (c.name.clone(), c.to_pcap()))
        .collect();
    RunOutput {
        flows_csv: flows_csv(sim),
        timeseries_csv: timeseries_csv(sim),
        apps_csv,
        samples_csv,
        ports_csv: ports_csv(sim),
        meta_json,
        pcaps,
        stats,
        app_summaries: summaries,
        seed,
    }
}
