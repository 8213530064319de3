//! Turning a parsed scenario into a runnable [`Sim`], and running it.

use super::limits::{self, count, sim_ms, sim_us, MAX_COUNT, MAX_HOSTS, MAX_SIM_TIME_MS};
use super::record::{RunRecord, SeedSource};
use super::schema::{AppSpec, Scenario};
use super::units::{bytes, rate_bps, HostIndex, Quantity};
use super::{parse, ScenarioError};
use crate::app::{bulk_config, App, Bulk, Incast, Metric, Ping, ShortFlows, UdpSource};
use crate::app::{IncastConfig, PingConfig, ShortFlowsConfig, UdpConfig};
use crate::net::routing::ShortestPathEcmp;
use crate::net::topology::{LinkSpec, NodeKind, Topology};
use crate::net::{Framing, Net, NetConfig};
use crate::output::pcap::CaptureBuffer;
use crate::output::tables;
use crate::sim::{PortSampling, RunStats, Sim};
use crate::tcp::cc::CcKind;
use crate::tcp::TcpConfig;
use crate::xco::{XcoConfig, XcoSim};
use std::collections::HashMap;
use xco_core::sched::Mode;
use xco_core::{Dur, Rng, Time};

/// A scenario ready to run.
pub struct Built {
    /// The simulation.
    pub sim: Sim,
    /// The seed in use.
    pub seed: u64,
    /// The scenario's name.
    pub name: String,
    /// What runs: the scenario after overrides, the seed, the random draws.
    pub record: RunRecord,
}

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
    /// Node addresses and endpoint ports as they appear in pcaps.
    pub hosts_csv: String,
    /// Scenario, seed, version, run statistics.
    pub meta_json: String,
    /// Captured links: (file name, pcap bytes).
    pub pcaps: Vec<(String, Vec<u8>)>,
    /// Counters of the run.
    pub stats: RunStats,
    /// Per app: (id, kind, metrics).
    pub app_summaries: Vec<(u32, &'static str, Vec<Metric>)>,
    /// The seed used.
    pub seed: u64,
}

fn req<'a, T>(v: &'a Option<T>, field: &str, kind: &str) -> Result<&'a T, ScenarioError> {
    v.as_ref()
        .ok_or_else(|| ScenarioError::field(field, format!("is required for kind = \"{kind}\"")))
}

fn topology(sc: &Scenario) -> Result<Topology, ScenarioError> {
    let t = &sc.topology;
    let one_g = Quantity::Num(1e9);
    let host_rate = rate_bps(t.host_rate.as_ref().unwrap_or(&one_g), "topology.host_rate")?;
    let delay = limits::us(
        t.link_delay_us,
        "topology.link_delay_us",
        1.0,
        0.0,
        limits::MAX_LINK_DELAY_US,
    )?;
    let rate_or = |q: &Option<Quantity>, field: &str| -> Result<u64, ScenarioError> {
        match q {
            Some(q) => rate_bps(q, field),
            None => Ok(host_rate),
        }
    };
    let count = |v: Option<usize>, field: &str| -> Result<usize, ScenarioError> {
        match v {
            Some(n) if (1..=MAX_HOSTS).contains(&n) => Ok(n),
            Some(n) => Err(ScenarioError::field(
                field,
                format!("must be between 1 and {MAX_HOSTS}, got {n}"),
            )),
            None => Err(ScenarioError::field(
                field,
                format!("is required for kind = \"{}\"", t.kind),
            )),
        }
    };
    let topo = match t.kind.as_str() {
        "star" => Topology::star(count(t.hosts, "topology.hosts")?, host_rate, delay),
        "two_switch" => {
            let (a, b) = (
                count(t.hosts_a, "topology.hosts_a")?,
                count(t.hosts_b, "topology.hosts_b")?,
            );
            if a + b > MAX_HOSTS {
                return Err(ScenarioError::field(
                    "topology.hosts_b",
                    format!("hosts_a + hosts_b must be at most {MAX_HOSTS}, got {}", a + b),
                ));
            }
            Topology::two_switch(
                a,
                b,
                rate_or(&t.rate_a, "topology.rate_a")?,
                rate_or(&t.rate_b, "topology.rate_b")?,
                rate_or(&t.uplink_rate, "topology.uplink_rate")?,
                delay,
            )
        }
        "fat_tree" => {
            let k = t.k.ok_or_else(|| {
                ScenarioError::field("topology.k", "is required for kind = \"fat_tree\"".into())
            })?;
            if k < 2 || k % 2 == 1 || k > 64 {
                return Err(ScenarioError::field(
                    "topology.k",
                    format!("must be an even number from 2 to 64, got {k}"),
                ));
            }
            let mut topo = Topology::fat_tree(k, host_rate, delay);
            let fabric = rate_or(&t.fabric_rate, "topology.fabric_rate")?;
            for l in &mut topo.links {
                if topo.nodes[l.a].kind == NodeKind::Switch && topo.nodes[l.b].kind == NodeKind::Switch {
                    l.rate_bps = fabric;
                }
            }
            topo
        }
        "explicit" => {
            let mut topo = Topology::default();
            if t.nodes.len() > limits::MAX_NODES {
                return Err(ScenarioError::field(
                    "topology.nodes",
                    format!("at most {} nodes, got {}", limits::MAX_NODES, t.nodes.len()),
                ));
            }
            if t.links.len() > limits::MAX_LINKS {
                return Err(ScenarioError::field(
                    "topology.links",
                    format!("at most {} links, got {}", limits::MAX_LINKS, t.links.len()),
                ));
            }
            let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(t.nodes.len());
            for (i, n) in t.nodes.iter().enumerate() {
                let kind = match n.kind.as_str() {
                    "host" => NodeKind::Host,
                    "switch" => NodeKind::Switch,
                    other => {
                        return Err(ScenarioError::field(
                            &format!("topology.nodes[{i}].kind"),
                            format!("unknown node kind {other:?}; use \"host\" or \"switch\""),
                        ))
                    }
                };
                if by_name.insert(n.name.as_str(), topo.nodes.len()).is_some() {
                    return Err(ScenarioError::field(
                        &format!("topology.nodes[{i}].name"),
                        format!("duplicate node name {:?}", n.name),
                    ));
                }
                topo.add_node(n.name.clone(), kind);
            }
            for (i, l) in t.links.iter().enumerate() {
                let f = |s: &str| format!("topology.links[{i}].{s}");
                let find = |name: &str, field: &str| {
                    by_name
                        .get(name)
                        .copied()
                        .ok_or_else(|| ScenarioError::field(&f(field), format!("no node named {name:?}")))
                };
                let (a, b) = (find(&l.a, "a")?, find(&l.b, "b")?);
                topo.links.push(LinkSpec {
                    a,
                    b,
                    rate_bps: rate_bps(&l.rate, &f("rate"))?,
                    delay: match l.delay_us {
                        Some(d) => limits::us(Some(d), &f("delay_us"), 0.0, 0.0, limits::MAX_LINK_DELAY_US)?,
                        None => delay,
                    },
                    buffer_a_bytes: l
                        .buffer_a
                        .as_ref()
                        .map(|q| bytes(q, &f("buffer_a")))
                        .transpose()?,
                    buffer_b_bytes: l
                        .buffer_b
                        .as_ref()
                        .map(|q| bytes(q, &f("buffer_b")))
                        .transpose()?,
                });
            }
            let hosts = topo.hosts().len();
            if hosts > MAX_HOSTS {
                return Err(ScenarioError::field(
                    "topology.nodes",
                    format!("at most {MAX_HOSTS} hosts, got {hosts}"),
                ));
            }
            if hosts == 0 {
                return Err(ScenarioError::field(
                    "topology.nodes",
                    "needs at least one host".into(),
                ));
            }
            topo
        }
        other => {
            return Err(ScenarioError::field(
                "topology.kind",
                format!(
                    "unknown topology {other:?}; use \"star\", \"two_switch\", \"fat_tree\" or \"explicit\""
                ),
            ))
        }
    };
    Ok(topo)
}

fn tcp_config(sc: &Scenario, mtu: u32) -> Result<TcpConfig, ScenarioError> {
    let t = &sc.tcp;
    let mut c = TcpConfig::for_mtu(mtu);
    if t.timestamps == Some(false) {
        c.header_bytes = 40;
        c.mss_bytes = mtu - 40;
    }
    if let Some(iw) = t.initial_cwnd_segments {
        if iw == 0 || iw > 1000 {
            return Err(ScenarioError::field(
                "tcp.initial_cwnd_segments",
                format!("must be 1..1000, got {iw}"),
            ));
        }
        c.initial_cwnd_segments = iw;
    }
    c.rto_min = sim_ms(t.rto_min_ms, "tcp.rto_min_ms", 200.0)?;
    c.rto_initial = sim_ms(t.rto_initial_ms, "tcp.rto_initial_ms", 1000.0)?;
    c.rto_max = sim_ms(t.rto_max_ms, "tcp.rto_max_ms", 60_000.0)?;
    if c.rto_max < c.rto_min || c.rto_max == Dur::ZERO {
        return Err(ScenarioError::field(
            "tcp.rto_max_ms",
            "must be positive and at least tcp.rto_min_ms".into(),
        ));
    }
    if c.rto_initial == Dur::ZERO {
        return Err(ScenarioError::field(
            "tcp.rto_initial_ms",
            "must be positive".into(),
        ));
    }
    c.clock_granularity = limits::us(t.clock_granularity_us, "tcp.clock_granularity_us", 1.0, 0.0, 1e6)?;
    c.delayed_ack = t.delayed_ack.unwrap_or(true);
    c.delayed_ack_timeout = limits::ms(
        t.delayed_ack_timeout_ms,
        "tcp.delayed_ack_timeout_ms",
        40.0,
        0.0,
        60_000.0,
    )?;
    c.handshake = t.handshake.unwrap_or(true);
    if let Some(b) = t.rcv_buf_bytes {
        if b < c.mss_bytes as u64 || b > 1 << 30 {
            return Err(ScenarioError::field(
                "tcp.rcv_buf_bytes",
                format!("must be from one MSS ({} B) to 1 GiB, got {b}", c.mss_bytes),
            ));
        }
        c.rcv_buf_bytes = b;
    }
    c.restart_after_idle = t.restart_after_idle.unwrap_or(true);
    if let Some(name) = &t.cc {
        c.cc = CcKind::from_name(name).ok_or_else(|| {
            ScenarioError::field(
                "tcp.cc",
                format!("unknown congestion control {name:?}; use \"newreno\""),
            )
        })?;
    }
    Ok(c)
}

/// Build a runnable simulation from scenario text; `seed` overrides `run.seed`.
pub fn build(text: &str, seed: Option<u64>) -> Result<Built, ScenarioError> {
    let sc = parse(text)?;
    let seed_source = match (seed, sc.run.seed) {
        (Some(_), _) => SeedSource::Override,
        (None, Some(_)) => SeedSource::File,
        (None, None) => SeedSource::Default,
    };
    let seed = seed.or(sc.run.seed).unwrap_or(1);
    let mtu = sc.run.mtu_bytes.unwrap_or(1500);
    if !(576..=65_535).contains(&mtu) {
        return Err(ScenarioError::field(
            "run.mtu_bytes",
            format!("must be 576..65535, got {mtu}"),
        ));
    }
    let topo = topology(&sc)?;
    let t = &sc.topology;
    let cfg = NetConfig {
        switch_buffer_bytes: match &t.switch_buffer {
            Some(q) => bytes(q, "topology.switch_buffer")?,
            None => 300_000,
        },
        host_buffer_bytes: match &t.host_buffer {
            Some(q) => bytes(q, "topology.host_buffer")?,
            None => 1000 * (mtu as u64 + 18),
        },
        framing: Framing::default(),
    };
    let mut net = Net::new(&topo, cfg, Box::new(ShortestPathEcmp::default()))
        .map_err(|e| ScenarioError::field("topology", e.0))?;
    net.pair_routing = sc.xco.is_some();
    let tcp = tcp_config(&sc, mtu)?;
    let mut sim = Sim::new(net, tcp, seed);
    let hosts = HostIndex::new(
        topo.hosts()
            .into_iter()
            .map(|i| (topo.nodes[i].name.clone(), i as u32)),
    );
    if let Some(x) = &sc.xco {
        let cfg = xco_config(x, &sim, &hosts)?;
        let core = &mut sim.core;
        let mut plane = XcoSim::new(&mut core.net, cfg, Time::ZERO);
        plane.start(Time::ZERO, &mut core.ev);
        core.xco = Some(Box::new(plane));
    }
    let duration = match sc.run.duration_ms {
        Some(d) => {
            let d = sim_ms(Some(d), "run.duration_ms", 0.0)?;
            if d == Dur::ZERO {
                return Err(ScenarioError::field("run.duration_ms", "must be positive".into()));
            }
            sim.stop_at = Some(Time::ZERO + d);
            Some(d)
        }
        None => None,
    };
    for (i, a) in sc.apps.iter().enumerate() {
        add_apps(&mut sim, a, i, &hosts, seed, mtu, duration)?;
    }
    if sc.apps.is_empty() {
        return Err(ScenarioError::field(
            "apps",
            "the scenario has no [[apps]]; add at least one".into(),
        ));
    }
    if sim.stop_at.is_none() {
        if let Some(a) = sim.apps.iter().find(|a| a.endless()) {
            return Err(ScenarioError::field(
                "run.duration_ms",
                format!(
                    "is required: an app of kind \"{}\" has no end (give it bytes/count, or set a duration)",
                    a.kind()
                ),
            ));
        }
        // every app has an end, but no run goes on past the longest simulated time
        sim.stop_at = Some(Time::ZERO + Dur::from_secs_f64(MAX_SIM_TIME_MS / 1e3));
    }
    // outputs
    let o = &sc.output;
    let bin = sim_us(o.timeseries_bin_us, "output.timeseries_bin_us", 1000.0)?;
    let bin_us = bin.as_secs_f64() * 1e6;
    if bin > Dur::ZERO && bin_us < limits::MIN_BIN_US {
        return Err(ScenarioError::field(
            "output.timeseries_bin_us",
            format!(
                "must be 0 (off) or at least {} us, got {bin_us}",
                limits::MIN_BIN_US
            ),
        ));
    }
    if let (Some(d), true) = (duration, bin > Dur::ZERO) {
        let bins = d.as_secs_f64() * 1e6 / bin_us;
        if bins > limits::MAX_BINS {
            return Err(ScenarioError::field(
                "output.timeseries_bin_us",
                format!(
                    "gives {bins:.0} bins in run.duration_ms; at most {:e} (use a longer bin)",
                    limits::MAX_BINS
                ),
            ));
        }
    }
    let ports = match o.timeseries_ports.as_deref().unwrap_or("switches") {
        "switches" => PortSampling::Switches,
        "all" => PortSampling::All,
        "none" => PortSampling::None,
        other => {
            return Err(ScenarioError::field(
                "output.timeseries_ports",
                format!("unknown value {other:?}; use \"switches\", \"all\" or \"none\""),
            ))
        }
    };
    if bin > Dur::ZERO {
        sim.sample_every(bin, ports);
    }
    if let Some(snap) = o.capture_snaplen {
        count(snap, "output.capture_snaplen", 1, 262_144)?;
    }
    for (i, c) in o.capture.iter().enumerate() {
        let field = format!("output.capture[{i}]");
        let (from, to) = c
            .split_once("->")
            .ok_or_else(|| ScenarioError::field(&field, format!("{c:?} is not a link like \"sa->sb\"")))?;
        let net = &mut sim.core.net;
        let (f, t) = (net.node(from.trim()), net.node(to.trim()));
        let (Some(f), Some(t)) = (f, t) else {
            return Err(ScenarioError::field(
                &field,
                format!("{c:?} names an unknown node"),
            ));
        };
        let port = net
            .port_between(f, t)
            .ok_or_else(|| ScenarioError::field(&field, format!("{c:?}: the two nodes are not linked")))?;
        let name = format!("{}-{}.pcap", from.trim(), to.trim());
        net.ports[port as usize].capture = Some(net.captures.len() as u32);
        net.captures.push(CaptureBuffer::new(
            name,
            o.capture_snaplen,
            mtu,
            sim.core.tcp_cfg.header_bytes,
        ));
    }
    let record = RunRecord::new(text, &sc, &topo, seed, seed_source);
    Ok(Built {
        sim,
        seed,
        name: record.name.clone(),
        record,
    })
}

fn xco_config(x: &super::schema::XcoSpec, sim: &Sim, hosts: &HostIndex) -> Result<XcoConfig, ScenarioError> {
    let f = |s: &str| format!("xco.{s}");
    let mode = match x.mode.as_deref().unwrap_or("timeslice") {
        "timeslice" => Mode::Timeslice,
        "ratelimit" => Mode::RateLimit,
        "hybrid" => Mode::Hybrid,
        other => {
            return Err(ScenarioError::field(
                &f("mode"),
                format!("unknown mode {other:?}; use \"timeslice\", \"ratelimit\" or \"hybrid\""),
            ))
        }
    };
    let slice = limits::ms(
        x.slice_ms,
        &f("slice_ms"),
        2.0,
        limits::MIN_SLICE_MS,
        limits::MAX_SLICE_MS,
    )?;
    let controller = hosts.one(&x.controller, &f("controller"))?;
    let out_of_band = match x.control.as_deref().unwrap_or("inband") {
        "inband" => {
            if x.control_latency_us.is_some() {
                return Err(ScenarioError::field(
                    &f("control_latency_us"),
                    "applies only to control = \"outofband\"".into(),
                ));
            }
            None
        }
        "outofband" => Some(limits::us(
            x.control_latency_us,
            &f("control_latency_us"),
            20.0,
            0.0,
            1e6,
        )?),
        other => {
            return Err(ScenarioError::field(
                &f("control"),
                format!("unknown control channel {other:?}; use \"inband\" or \"outofband\""),
            ))
        }
    };
    let mut coordinated = vec![false; sim.core.net.nodes.len()];
    let chosen: Vec<u32> = match &x.hosts {
        Some(sel) => hosts.select(sel, &f("hosts"))?,
        None => hosts
            .names()
            .iter()
            .filter_map(|h| hosts.node(h))
            .filter(|&n| n != controller)
            .collect(),
    };
    for h in chosen {
        coordinated[h as usize] = true;
    }
    let capacity_headroom = x.capacity_headroom.unwrap_or(0.0);
    if !(0.0..=0.5).contains(&capacity_headroom) {
        return Err(ScenarioError::field(
            &f("capacity_headroom"),
            format!("must be a fraction from 0 to 0.5, got {capacity_headroom}"),
        ));
    }
    if capacity_headroom > 0.0 && mode == Mode::Timeslice {
        return Err(ScenarioError::field(
            &f("capacity_headroom"),
            "needs mode = \"hybrid\" or \"ratelimit\": a timeslice sends at full line rate, which headroom would never admit".into(),
        ));
    }
    let work_conservation = x.work_conservation.unwrap_or(true);
    if !work_conservation && x.hysteresis_us.is_some() {
        return Err(ScenarioError::field(
            &f("hysteresis_us"),
            "applies only with work_conservation = true".into(),
        ));
    }
    Ok(XcoConfig {
        mode,
        slice,
        min_active: limits::us(x.min_active_us, &f("min_active_us"), 100.0, 0.0, 1e6)?,
        giveback_hysteresis: if work_conservation {
            Some(limits::us(x.hysteresis_us, &f("hysteresis_us"), 200.0, 0.0, 1e6)?)
        } else {
            None
        },
        controller,
        out_of_band,
        bypass_flow_bytes: count(
            x.bypass_flow_bytes.unwrap_or(0),
            &f("bypass_flow_bytes"),
            0,
            limits::MAX_BYTES as u64,
        )?,
        fail_open_after: limits::ms(
            x.fail_open_after_ms,
            &f("fail_open_after_ms"),
            5.0 * slice.as_secs_f64() * 1e3,
            limits::MIN_XCO_PERIOD_MS,
            MAX_SIM_TIME_MS,
        )?,
        v2v_queue_bytes: match &x.v2v_queue {
            Some(q) => bytes(q, &f("v2v_queue"))?,
            None => 4_000_000,
        },
        report_interval: limits::ms(
            x.report_interval_ms,
            &f("report_interval_ms"),
            4.0 * slice.as_secs_f64() * 1e3,
            limits::MIN_XCO_PERIOD_MS,
            MAX_SIM_TIME_MS,
        )?,
        coordinated,
        capacity_headroom,
        controller_stop: x
            .controller_stop_ms
            .map(|v| sim_ms(Some(v), &f("controller_stop_ms"), 0.0).map(|d| Time::ZERO + d))
            .transpose()?,
    })
}

/// The node of the required host named in `v`.
fn one_host(v: &Option<String>, field: &str, kind: &str, hosts: &HostIndex) -> Result<u32, ScenarioError> {
    hosts.one(req(v, field, kind)?, field)
}

fn add_apps(
    sim: &mut Sim,
    a: &AppSpec,
    i: usize,
    hosts: &HostIndex,
    seed: u64,
    mtu: u32,
    duration: Option<Dur>,
) -> Result<(), ScenarioError> {
    let f = |s: &str| format!("apps[{i}].{s}");
    let kind = a.kind.as_str();
    let start = Time::ZERO + sim_ms(a.start_ms, &f("start_ms"), 0.0)?;
    let rng = |sim: &Sim| Rng::stream(seed, 1000 + sim.next_app_id() as u64);
    let allowed: &[&str] = match kind {
        "incast" => &[
            "client",
            "servers",
            "sru",
            "request",
            "rounds",
            "start_delay_max_us",
            "reuse_connections",
        ],
        "stripe" => &[
            "client",
            "servers",
            "block",
            "total",
            "request",
            "start_delay_max_us",
            "reuse_connections",
        ],
        "bulk" => &["src", "dst"],
        "transfer" => &["src", "dst", "bytes"],
        "short_flows" => &[
            "src",
            "dst",
            "parallel",
            "flow",
            "flows_per_sequence",
            "start_spread_us",
        ],
        "ping" => &["src", "dst", "interval_us", "count"],
        "udp" => &["src", "dst", "rate", "message", "count"],
        other => {
            return Err(ScenarioError::field(
                &f("kind"),
                format!(
                "unknown app kind {other:?}; use incast, stripe, bulk, transfer, short_flows, ping or udp"
            ),
            ))
        }
    };
    check_fields(a, allowed, &f, kind)?;
    match kind {
        "incast" | "stripe" => {
            let client = one_host(&a.client, &f("client"), kind, hosts)?;
            let servers = hosts.select(req(&a.servers, &f("servers"), kind)?, &f("servers"))?;
            if servers.contains(&client) {
                return Err(ScenarioError::field(
                    &f("servers"),
                    "must not include the client".into(),
                ));
            }
            let n = servers.len() as u64;
            let (sru_bytes, rounds) = if kind == "incast" {
                let sru = bytes(req(&a.sru, &f("sru"), kind)?, &f("sru"))?;
                (sru, count(a.rounds.unwrap_or(1), &f("rounds"), 1, 1_000_000)?)
            } else {
                let block = bytes(req(&a.block, &f("block"), kind)?, &f("block"))?;
                let total = bytes(req(&a.total, &f("total"), kind)?, &f("total"))?;
                if block == 0 || total < block {
                    return Err(ScenarioError::field(
                        &f("total"),
                        "must be at least one positive block".into(),
                    ));
                }
                if total.div_ceil(block) > 1_000_000 {
                    return Err(ScenarioError::field(
                        &f("total"),
                        "must be at most 1,000,000 blocks".into(),
                    ));
                }
                (block.div_ceil(n), total.div_ceil(block) as u32)
            };
            if sru_bytes == 0 || rounds == 0 {
                return Err(ScenarioError::field(
                    &f(if kind == "incast" { "sru" } else { "block" }),
                    "must be positive (and rounds >= 1)".into(),
                ));
            }
            let cfg = IncastConfig {
                client,
                servers,
                sru_bytes,
                request_bytes: a
                    .request
                    .as_ref()
                    .map(|q| bytes(q, &f("request")))
                    .transpose()?
                    .unwrap_or(0),
                rounds,
                start_delay_max: sim_us(a.start_delay_max_us, &f("start_delay_max_us"), 0.0)?,
                reuse_connections: a.reuse_connections.unwrap_or(true),
                label: if kind == "incast" { "incast" } else { "stripe" },
            };
            let id = sim.next_app_id();
            let r = rng(sim);
            sim.add_app(App::Incast(Incast::new(id, cfg, r)), start);
        }
        _ => {
            let dst = one_host(&a.dst, &f("dst"), kind, hosts)?;
            let srcs = hosts.select_names(req(&a.src, &f("src"), kind)?, &f("src"))?;
            for s in srcs {
                let src = hosts.node(&s).expect("a selected host");
                if src == dst {
                    return Err(ScenarioError::field(
                        &f("src"),
                        format!("{s:?} is also the destination"),
                    ));
                }
                let id = sim.next_app_id();
                let app = match kind {
                    "bulk" | "transfer" => {
                        let b = if kind == "transfer" {
                            Some(bytes(req(&a.bytes, &f("bytes"), kind)?, &f("bytes"))?)
                        } else {
                            None
                        };
                        if b == Some(0) {
                            return Err(ScenarioError::field(&f("bytes"), "must be positive".into()));
                        }
                        App::Bulk(Bulk::new(id, bulk_config(src, dst, b)))
                    }
                    "short_flows" => {
                        let parallel = *req(&a.parallel, &f("parallel"), kind)?;
                        let flow = bytes(req(&a.flow, &f("flow"), kind)?, &f("flow"))?;
                        if flow == 0 {
                            return Err(ScenarioError::field(&f("flow"), "must be positive".into()));
                        }
                        count(parallel, &f("parallel"), 1, 100_000)?;
                        if let Some(n) = a.flows_per_sequence {
                            count(n, &f("flows_per_sequence"), 1, MAX_COUNT)?;
                        }
                        let cfg = ShortFlowsConfig {
                            src,
                            dst,
                            parallel,
                            flow_bytes: flow,
                            flows_per_sequence: a.flows_per_sequence,
                            start_spread: sim_us(a.start_spread_us, &f("start_spread_us"), 0.0)?,
                        };
                        App::ShortFlows(ShortFlows::new(id, cfg, rng(sim)))
                    }
                    "ping" => {
                        let interval = limits::us(
                            a.interval_us,
                            &f("interval_us"),
                            1000.0,
                            1.0,
                            MAX_SIM_TIME_MS * 1e3,
                        )?;
                        if let Some(c) = a.count {
                            count(c, &f("count"), 1, limits::MAX_PROBES as u64)?;
                        }
                        let probes = match (a.count, duration) {
                            (Some(c), _) => c as f64,
                            (None, Some(d)) => d.as_secs_f64() / interval.as_secs_f64(),
                            (None, None) => 0.0, // endless: rejected below for want of a duration
                        };
                        if probes > limits::MAX_PROBES {
                            return Err(ScenarioError::field(
                                &f(if a.count.is_some() { "count" } else { "interval_us" }),
                                format!(
                                    "gives {probes:.0} probes; at most {:e} (fewer probes or a longer interval)",
                                    limits::MAX_PROBES
                                ),
                            ));
                        }
                        App::Ping(Ping::new(
                            id,
                            PingConfig {
                                src,
                                dst,
                                interval,
                                count: a.count,
                                payload_bytes: 56,
                            },
                        ))
                    }
                    _ => {
                        let rate_bps = match &a.rate {
                            None => None,
                            Some(Quantity::Text(s)) if s.trim() == "line" => None,
                            Some(q) => Some(rate_bps(q, &f("rate"))?),
                        };
                        let message_bytes = match &a.message {
                            Some(q) => bytes(q, &f("message"))?,
                            None => 65_507,
                        };
                        if message_bytes == 0 || message_bytes > 65_507 {
                            return Err(ScenarioError::field(
                                &f("message"),
                                format!("must be 1..65507 bytes (one UDP datagram), got {message_bytes}"),
                            ));
                        }
                        if let Some(r) = rate_bps {
                            let per_s = r as f64 / (8.0 * message_bytes as f64);
                            if per_s > limits::MAX_UDP_MSGS_PER_S {
                                return Err(ScenarioError::field(
                                    &f("rate"),
                                    format!(
                                        "sends {per_s:e} messages per second; at most {:e} (raise message or lower rate)",
                                        limits::MAX_UDP_MSGS_PER_S
                                    ),
                                ));
                            }
                        }
                        if let Some(c) = a.count {
                            count(c, &f("count"), 1, limits::MAX_COUNT * 1000)?;
                        }
                        App::Udp(UdpSource::new(
                            id,
                            UdpConfig {
                                src,
                                dst,
                                rate_bps,
                                message_bytes,
                                count: a.count,
                                mtu_bytes: mtu,
                            },
                            rng(sim),
                        ))
                    }
                };
                sim.add_app(app, start);
            }
        }
    }
    Ok(())
}

/// Reject fields that do not apply to the app's kind (they would be silently ignored).
fn check_fields(
    a: &AppSpec,
    allowed: &[&str],
    f: &dyn Fn(&str) -> String,
    kind: &str,
) -> Result<(), ScenarioError> {
    let present: [(&str, bool); 22] = [
        ("client", a.client.is_some()),
        ("servers", a.servers.is_some()),
        ("src", a.src.is_some()),
        ("dst", a.dst.is_some()),
        ("sru", a.sru.is_some()),
        ("block", a.block.is_some()),
        ("total", a.total.is_some()),
        ("request", a.request.is_some()),
        ("rounds", a.rounds.is_some()),
        ("start_delay_max_us", a.start_delay_max_us.is_some()),
        ("reuse_connections", a.reuse_connections.is_some()),
        ("bytes", a.bytes.is_some()),
        ("parallel", a.parallel.is_some()),
        ("flow", a.flow.is_some()),
        ("flows_per_sequence", a.flows_per_sequence.is_some()),
        ("start_spread_us", a.start_spread_us.is_some()),
        ("interval_us", a.interval_us.is_some()),
        ("count", a.count.is_some()),
        ("rate", a.rate.is_some()),
        ("message", a.message.is_some()),
        ("start_ms", false),
        ("kind", false),
    ];
    for (name, is_set) in present {
        if is_set && !allowed.contains(&name) {
            return Err(ScenarioError::field(
                &f(name),
                format!(
                    "does not apply to kind = \"{kind}\" (allowed: {})",
                    allowed.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Parse, build and run a scenario; `seed` overrides `run.seed`.
pub fn run_scenario(text: &str, seed: Option<u64>) -> Result<RunOutput, ScenarioError> {
    run_scenario_with(text, seed, None)
}

/// [`run_scenario`], naming the source's commit (when known) in `meta.json`.
pub fn run_scenario_with(
    text: &str,
    seed: Option<u64>,
    source_commit: Option<&str>,
) -> Result<RunOutput, ScenarioError> {
    let Built { mut sim, record, .. } = build(text, seed)?;
    let stats = sim.run().map_err(|e| ScenarioError::field("", e.0))?;
    Ok(tables::collect(&sim, stats, &record, source_commit))
}
