//! Turning a parsed scenario into a runnable [`Sim`], and running it.

use super::apps::AppCx;
use super::estimate::Estimate;
use super::limits::{
    self, count, sim_ms, sim_us, MAX_HOSTS, MAX_PDN_QUEUE_NOTICES, MAX_SIM_TIME_MS, MAX_TSQ_LIMIT_BYTES,
    MAX_TXQUEUELEN, MAX_UDP_SNDBUF_BYTES, MIN_TSQ_LIMIT_BYTES, MIN_TXQUEUELEN, MIN_UDP_SNDBUF_BYTES,
};
use super::record::{RunRecord, SeedSource};
use super::schema::{
    CcName, ControlAuth, ControlChannel, NodeKindSpec, Scenario, TimeseriesPorts, TopologyKind,
};
use super::units::{bytes, rate_bps, HostIndex, Hosts, Quantity};
use super::{parse, ScenarioError};
use crate::control::RunControl;
use crate::host::settings::HostSettings;
use crate::net::pcap::CaptureBuffer;
use crate::net::pdn::{PdnConfig, PdnResend};
use crate::net::routing::RoutingMode;
use crate::net::topology::{LinkSpec, NodeKind, Topology};
use crate::net::{Framing, Net, NetConfig};
use crate::output::tables;
pub use crate::output::tables::RunOutput;
use crate::sim::{PortSampling, Sim};
use crate::tcp::cc::CcKind;
use crate::tcp::profile::TcpProfile;
use crate::tcp::TcpConfig;
use crate::xco::{XcoConfig, XcoSim};
use std::collections::HashMap;
use std::sync::Arc;
use xco_core::coord::Settings;
use xco_core::{Dur, Time};

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
    /// True if the run ends at `run.duration_ms` (else when its apps finish,
    /// within the longest simulated time a run may take).
    pub ends_by_duration: bool,
}

/// How to run a scenario, beyond its text.
#[derive(Clone, Debug, Default)]
pub struct RunOptions<'a> {
    /// Overrides `run.seed`.
    pub seed: Option<u64>,
    /// The source's git commit, when known (recorded in `meta.json`).
    pub source_commit: Option<&'a str>,
    /// Stops the run from another thread and receives its progress.
    pub control: Option<Arc<RunControl>>,
    /// Overrides `output.max_file_bytes`.
    pub max_file_bytes: Option<u64>,
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
                format!("is required for kind = \"{}\"", t.kind.name()),
            )),
        }
    };
    let topo = match t.kind {
        TopologyKind::Star => Topology::star(count(t.hosts, "topology.hosts")?, host_rate, delay),
        TopologyKind::TwoSwitch => {
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
        TopologyKind::FatTree => {
            let k = t.k.ok_or_else(|| {
                ScenarioError::field("topology.k", "is required for kind = \"fat_tree\"".into())
            })?;
            if k < 2 || k % 2 == 1 || k > limits::MAX_FAT_TREE_K {
                return Err(ScenarioError::field(
                    "topology.k",
                    format!(
                        "must be an even number from 2 to {}, got {k}",
                        limits::MAX_FAT_TREE_K
                    ),
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
        TopologyKind::Tree3 => {
            let default_buffer = match &t.switch_buffer {
                Some(q) => bytes(q, "topology.switch_buffer")?,
                None => 300_000,
            };
            super::tree3::tree3(t, host_rate, default_buffer, delay)?
        }
        TopologyKind::Explicit => {
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
                let kind = match n.kind {
                    NodeKindSpec::Host => NodeKind::Host,
                    NodeKindSpec::Switch => NodeKind::Switch,
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
    };
    Ok(topo)
}

/// `[host]`: the host model (absent: the old one).
fn host_settings(sc: &Scenario) -> Result<HostSettings, ScenarioError> {
    let mut h = HostSettings::default();
    let Some(spec) = &sc.host else {
        return Ok(h);
    };
    if let Some(n) = spec.txqueuelen {
        h.txqueuelen = Some(count(n, "host.txqueuelen", MIN_TXQUEUELEN, MAX_TXQUEUELEN)?);
    }
    h.blocking_udp = spec.blocking_udp.unwrap_or(false);
    if let Some(q) = &spec.udp_sndbuf {
        let b = bytes(q, "host.udp_sndbuf")?;
        h.udp_sndbuf_bytes = count(b, "host.udp_sndbuf", MIN_UDP_SNDBUF_BYTES, MAX_UDP_SNDBUF_BYTES)?;
    }
    if let Some(q) = &spec.tsq_limit_bytes {
        let b = bytes(q, "host.tsq_limit_bytes")?;
        if b != 0 {
            h.tsq_limit_bytes = count(
                b,
                "host.tsq_limit_bytes",
                MIN_TSQ_LIMIT_BYTES,
                MAX_TSQ_LIMIT_BYTES,
            )?;
        }
    }
    Ok(h)
}

fn tcp_config(sc: &Scenario, mtu: u32) -> Result<TcpConfig, ScenarioError> {
    tcp_config_from(sc, mtu, sc.tcp.profile.as_deref(), "tcp.profile")
}

/// `[tcp]` starting from profile `name` (None: `newreno`), `field` naming it in errors.
fn tcp_config_from(
    sc: &Scenario,
    mtu: u32,
    name: Option<&str>,
    field: &str,
) -> Result<TcpConfig, ScenarioError> {
    let t = &sc.tcp;
    let profile = match name {
        None => TcpProfile::NewReno,
        Some(name) => TcpProfile::from_name(name).ok_or_else(|| {
            ScenarioError::field(
                field,
                format!("unknown profile {name:?} (known: {})", TcpProfile::NAMES),
            )
        })?,
    };
    let mut c = profile.config(mtu);
    if t.timestamps == Some(false) {
        c.header_bytes = 40;
        c.mss_bytes = mtu - 40;
        c.timestamps = false;
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
    c.delayed_ack = t.delayed_ack.unwrap_or(c.delayed_ack);
    c.delayed_ack_timeout = limits::ms(
        t.delayed_ack_timeout_ms,
        "tcp.delayed_ack_timeout_ms",
        40.0,
        0.0,
        60_000.0,
    )?;
    c.handshake = t.handshake.unwrap_or(c.handshake);
    if let Some(b) = t.rcv_buf_bytes {
        if b < c.mss_bytes as u64 || b > 1 << 30 {
            return Err(ScenarioError::field(
                "tcp.rcv_buf_bytes",
                format!("must be from one MSS ({} B) to 1 GiB, got {b}", c.mss_bytes),
            ));
        }
        c.rcv_buf_bytes = b;
    }
    c.restart_after_idle = t.restart_after_idle.unwrap_or(c.restart_after_idle);
    c.limited_transmit = t.limited_transmit.unwrap_or(c.limited_transmit);
    c.sack = t.sack.unwrap_or(c.sack);
    c.tlp = t.tlp.unwrap_or(c.tlp);
    c.rack = match t.rack {
        Some(true) if !c.sack => {
            return Err(ScenarioError::field(
                "tcp.rack",
                "RACK needs SACK: set tcp.sack = true (or a profile with it)".into(),
            ))
        }
        Some(r) => r,
        None => c.rack && c.sack,
    };
    c.prr = match t.prr {
        Some(true) if !c.sack => return Err(ScenarioError::field(
            "tcp.prr",
            "proportional rate reduction runs in SACK recovery: set tcp.sack = true (or a profile with it)"
                .into(),
        )),
        Some(p) => p,
        None => c.prr && c.sack,
    };
    c.pacing = t.pacing.unwrap_or(c.pacing);
    if let Some(q) = t.quickack_segments {
        if q > 1_000_000 {
            return Err(ScenarioError::field(
                "tcp.quickack_segments",
                format!("must be at most 1000000, got {q}"),
            ));
        }
        c.quickack_segments = q;
    }
    if let Some(name) = t.cc {
        c.cc = match name {
            CcName::Newreno => CcKind::NewReno,
            CcName::Cubic => CcKind::Cubic,
            CcName::Dctcp => CcKind::Dctcp,
        };
    }
    c.ecn = t.ecn.unwrap_or(c.ecn || c.cc == CcKind::Dctcp);
    if c.cc == CcKind::Dctcp && !c.ecn {
        return Err(ScenarioError::field(
            "tcp.ecn",
            "DCTCP needs ECN: tcp.ecn = false contradicts tcp.cc = \"dctcp\"".into(),
        ));
    }
    // HyStart++ is part of CUBIC's slow start; hosts whose profile
    // (`[[tcp.hosts]]`) runs another algorithm go without it
    c.hystart = t.hystart.unwrap_or(c.hystart) && c.cc == CcKind::Cubic;
    if t.hystart == Some(true) && c.cc != CcKind::Cubic && field == "tcp.profile" {
        return Err(ScenarioError::field(
            "tcp.hystart",
            "HyStart++ is built for CUBIC only: set tcp.cc = \"cubic\" (or profile \"linux\")".into(),
        ));
    }
    Ok(c)
}

/// `[[tcp.hosts]]`: give the chosen hosts their profile's settings.
fn select_host_tcp(sc: &Scenario, sim: &mut Sim, hosts: &HostIndex, mtu: u32) -> Result<(), ScenarioError> {
    let mut by: Vec<Option<usize>> = vec![None; sim.cx.net.nodes.len()];
    for (i, e) in sc.tcp.hosts.iter().enumerate() {
        let field = format!("tcp.hosts[{i}]");
        let c = tcp_config_from(sc, mtu, Some(&e.profile), &format!("{field}.profile"))?;
        let idx = sim.stack.tcp.index(c);
        for n in hosts.select(&e.hosts, &format!("{field}.hosts"))? {
            if let Some(j) = by[n as usize] {
                return Err(ScenarioError::field(
                    &format!("{field}.hosts"),
                    format!(
                        "host {:?} already has its profile from tcp.hosts[{j}]",
                        sim.cx.net.nodes[n as usize].name
                    ),
                ));
            }
            by[n as usize] = Some(i);
            let sel = &mut sim.stack.tcp.select.host;
            if sel.is_empty() {
                sel.resize(by.len(), 0);
            }
            sel[n as usize] = idx;
        }
    }
    Ok(())
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
    let host_model = host_settings(&sc)?;
    let t = &sc.topology;
    let cfg = NetConfig {
        switch_buffer_bytes: match &t.switch_buffer {
            Some(q) => bytes(q, "topology.switch_buffer")?,
            None => 300_000,
        },
        host_buffer_bytes: match &t.host_buffer {
            Some(q) => bytes(q, "topology.host_buffer")?,
            None => host_model.txqueuelen.unwrap_or(1000) as u64 * (mtu as u64 + 18),
        },
        framing: Framing::default(),
    };
    // `ecmp-pair`: ECMP hashed on the host pair, as XCo's controller routes
    let pair_ecmp = t.routing.as_deref() == Some("ecmp-pair");
    let routing = match &t.routing {
        Some(_) if pair_ecmp => RoutingMode::Ecmp,
        Some(name) => RoutingMode::parse(name).map_err(|_| {
            ScenarioError::field(
                "topology.routing",
                format!(
                    "'{name}' is not a routing mode (one of: {}, ecmp-pair)",
                    RoutingMode::NAMES.join(", ")
                ),
            )
        })?,
        None => RoutingMode::Ecmp,
    };
    if routing.per_packet() && sc.xco.is_some() {
        return Err(ScenarioError::field(
            "topology.routing",
            format!(
                "'{}' sprays each packet over another path, so XCo cannot schedule it; \
                 use equal-length-flow or equal-length-dest with [xco]",
                routing.name()
            ),
        ));
    }
    let hosts = HostIndex::new(
        topo.hosts()
            .into_iter()
            .map(|i| (topo.nodes[i].name.clone(), i as u32)),
    );
    // the network (built a second time, without traffic, for XCo's joins before t = 0)
    let txqueuelen = host_model.txqueuelen;
    let make_net = || -> Result<Net, ScenarioError> {
        let mut net =
            Net::new(&topo, cfg, routing, seed).map_err(|e| ScenarioError::field("topology", e.0))?;
        net.pair_routing = pair_ecmp || sc.xco.is_some();
        let jitter = |v: Option<f64>, field: &str| limits::us(v, field, 0.0, 0.0, limits::MAX_JITTER_US);
        net.set_jitter(
            jitter(t.host_jitter_us, "topology.host_jitter_us")?,
            jitter(t.switch_jitter_us, "topology.switch_jitter_us")?,
            seed,
        );
        // port disciplines first: PDN then refuses switches that run another than drop-tail
        super::queues::apply(&t.queues, &mut net, seed, mtu)?;
        if let Some(p) = &sc.pdn {
            let cfg = pdn_config(p, &topo, &hosts)?;
            net.enable_pdn(cfg)
                .map_err(|e| ScenarioError::field("pdn", e.0))?;
        }
        if let Some(n) = txqueuelen {
            net.set_host_txqueuelen(n);
        }
        Ok(net)
    };
    let net = make_net()?;
    let tcp = tcp_config(&sc, mtu)?;
    let mut sim = Sim::new(net, tcp, seed);
    select_host_tcp(&sc, &mut sim, &hosts, mtu)?;
    sim.stack.hosts.settings = host_model;
    if let Some(x) = &sc.xco {
        let cfg = xco_config(x, &sim, &hosts, seed)?;
        let plane = if x.join_before_start.unwrap_or(true) {
            // the agents join over a copy of the network before its traffic starts
            // (`controller_stop_ms` is a time of the run, not of the joins before it)
            let mut cfg = cfg;
            let stop = cfg.controller_stop.take();
            let mut warm = Sim::new(make_net()?, tcp_config(&sc, mtu)?, seed);
            let mut plane = join_before_start(&mut warm, cfg)?;
            plane.cfg.controller_stop = stop;
            plane.carry_over(warm.cx.now, &mut sim.cx.ev, &mut sim.cx.net)
        } else {
            let mut plane = XcoSim::new(&mut sim.cx.net, cfg, Time::ZERO);
            plane.start(Time::ZERO, &mut sim.cx.ev);
            plane
        };
        sim.stack.xco = Some(Box::new(plane));
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
    for (index, a) in sc.apps.iter().enumerate() {
        let cx = AppCx {
            index,
            hosts: &hosts,
            seed,
            mtu_bytes: mtu,
            duration,
        };
        let first = sim.next_app_id();
        a.add_to(&mut sim, &cx)?;
        if let Some(name) = &sc.app_tcp[index] {
            let c = tcp_config_from(&sc, mtu, Some(name), &format!("apps[{index}].tcp"))?;
            let idx = sim.stack.tcp.index(c);
            let (first, last) = (first as usize, sim.next_app_id() as usize);
            let sel = &mut sim.stack.tcp.select.app;
            sel.resize(last.max(sel.len()), None);
            sel[first..last].fill(Some(idx));
        }
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
    let ports = match o.timeseries_ports.unwrap_or(TimeseriesPorts::Switches) {
        TimeseriesPorts::Switches => PortSampling::Switches,
        TimeseriesPorts::All => PortSampling::All,
        TimeseriesPorts::None => PortSampling::None,
    };
    if bin > Dur::ZERO {
        sim.sample_every(bin, ports);
    }
    let max_file_bytes = match &o.max_file_bytes {
        None => limits::DEFAULT_MAX_FILE_BYTES,
        Some(q) => count(
            bytes(q, "output.max_file_bytes")?,
            "output.max_file_bytes",
            limits::MIN_MAX_FILE_BYTES,
            limits::MAX_BYTES as u64,
        )?,
    };
    sim.set_max_file_bytes(max_file_bytes);
    if let Some(snap) = o.capture_snaplen {
        count(snap, "output.capture_snaplen", 1, 262_144)?;
    }
    for (i, c) in o.capture.iter().enumerate() {
        let field = format!("output.capture[{i}]");
        let net = &mut sim.cx.net;
        let port = link_port(net, c, &field)?;
        let pt = &net.ports[port as usize];
        let name = format!("{}-{}.pcap", net.name(pt.from), net.name(pt.to));
        let timeline = net.ports[port as usize].timeline;
        net.ports[port as usize].set_taps(net.captures.len() as u32, timeline);
        let mut capture = CaptureBuffer::new(name, o.capture_snaplen, mtu, sim.stack.tcp.cfg.header_bytes);
        capture.set_limit(max_file_bytes);
        net.captures.push(capture);
    }
    let max_rows = count(
        o.queue_timeline_max_rows.unwrap_or(100_000),
        "output.queue_timeline_max_rows",
        1,
        limits::MAX_TIMELINE_ROWS,
    )?;
    for (i, c) in o.queue_timeline.iter().enumerate() {
        let field = format!("output.queue_timeline[{i}]");
        let net = &mut sim.cx.net;
        let port = link_port(net, c, &field)?;
        if net.ports[port as usize].timeline != crate::net::port::NO_TAP {
            return Err(ScenarioError::field(&field, format!("{c:?} is listed twice")));
        }
        let capture = net.ports[port as usize].capture;
        net.ports[port as usize].set_taps(capture, net.timelines.len() as u32);
        net.timelines
            .push(crate::net::timeline::QueueTimeline::new(port, max_rows as usize));
    }
    let record = RunRecord::new(text, &sc, &topo, seed, seed_source);
    Ok(Built {
        sim,
        seed,
        name: record.name.clone(),
        record,
        ends_by_duration: duration.is_some(),
    })
}

/// `[pdn]` as the network's PDN settings.
fn pdn_config(
    p: &super::schema::PdnSpec,
    topo: &Topology,
    hosts: &HostIndex,
) -> Result<PdnConfig, ScenarioError> {
    let n = topo.nodes.len();
    let mut cfg = PdnConfig {
        switches: vec![false; n],
        hosts: vec![false; n],
        queue_limit: p.queue_notices.unwrap_or(64),
        resend: match p.resend.as_deref() {
            None => PdnResend::AtOnce,
            Some(name) => PdnResend::parse(name).ok_or_else(|| {
                ScenarioError::field(
                    "pdn.resend",
                    format!("unknown rule {name:?}; one of {}", PdnResend::NAMES.join(", ")),
                )
            })?,
        },
    };
    if cfg.queue_limit == 0 || cfg.queue_limit > MAX_PDN_QUEUE_NOTICES {
        return Err(ScenarioError::field(
            "pdn.queue_notices",
            format!(
                "must be 1..{MAX_PDN_QUEUE_NOTICES} notifications, got {}",
                cfg.queue_limit
            ),
        ));
    }
    let all = Hosts::One("*".into());
    for h in hosts.select(p.hosts.as_ref().unwrap_or(&all), "pdn.hosts")? {
        cfg.hosts[h as usize] = true;
    }
    let switches: Vec<(usize, &str)> = (0..n)
        .filter(|&i| topo.nodes[i].kind == NodeKind::Switch)
        .map(|i| (i, topo.nodes[i].name.as_str()))
        .collect();
    let names: Vec<String> = match p.switches.as_ref().unwrap_or(&all) {
        Hosts::One(s) => vec![s.clone()],
        Hosts::Many(v) => v.clone(),
    };
    for name in names {
        if name == "*" {
            switches.iter().for_each(|&(i, _)| cfg.switches[i] = true);
            continue;
        }
        match switches.iter().find(|&&(_, s)| s == name) {
            Some(&(i, _)) => cfg.switches[i] = true,
            None => {
                return Err(ScenarioError::field(
                    "pdn.switches",
                    format!("{name:?} is not a switch of the topology (\"*\" selects every switch)"),
                ))
            }
        }
    }
    Ok(cfg)
}

/// Run XCo's control plane alone on `warm` (a copy of the run's network,
/// without traffic) from t = 0 until every agent has joined and the
/// controller's fence is over ([`XcoSim::settled`]); `warm`'s clock then
/// says how long it took.
fn join_before_start(warm: &mut Sim, cfg: XcoConfig) -> Result<XcoSim, ScenarioError> {
    const STEP: Dur = Dur::from_us(100);
    const LIMIT: Dur = Dur::from_secs(60);
    let mut plane = XcoSim::new(&mut warm.cx.net, cfg, Time::ZERO);
    plane.start(Time::ZERO, &mut warm.cx.ev);
    warm.stack.xco = Some(Box::new(plane));
    loop {
        let now = warm.cx.now;
        if warm.stack.xco.as_ref().is_some_and(|x| x.settled(now)) {
            break;
        }
        if now >= Time::ZERO + LIMIT {
            return Err(ScenarioError::field(
                "xco.join_before_start",
                "the agents did not all join within 60 simulated seconds".into(),
            ));
        }
        warm.run_until(now + STEP)
            .map_err(|e| ScenarioError::field("xco", e.0))?;
    }
    Ok(*warm.stack.xco.take().expect("set above"))
}

fn xco_config(
    x: &super::schema::XcoSpec,
    sim: &Sim,
    hosts: &HostIndex,
    seed: u64,
) -> Result<XcoConfig, ScenarioError> {
    let f = |s: &str| format!("xco.{s}");
    let settings =
        Settings::resolve(&x.settings_spec()).map_err(|e| ScenarioError::field(&f(e.key), e.problem))?;
    let controller = hosts.one(&x.controller, &f("controller"))?;
    let out_of_band = match x.control.unwrap_or(ControlChannel::Inband) {
        ControlChannel::Inband => {
            if x.control_latency_us.is_some() {
                return Err(ScenarioError::field(
                    &f("control_latency_us"),
                    "applies only to control = \"outofband\"".into(),
                ));
            }
            None
        }
        ControlChannel::Outofband => Some(limits::us(
            x.control_latency_us,
            &f("control_latency_us"),
            20.0,
            0.0,
            1e6,
        )?),
    };
    let mut coordinated = vec![false; sim.cx.net.nodes.len()];
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
    Ok(XcoConfig {
        settings,
        controller,
        out_of_band,
        v2v_queue_bytes: match &x.v2v_queue {
            Some(q) => bytes(q, &f("v2v_queue"))?,
            None => 4_000_000,
        },
        coordinated,
        controller_stop: x
            .controller_stop_ms
            .map(|v| sim_ms(Some(v), &f("controller_stop_ms"), 0.0).map(|d| Time::ZERO + d))
            .transpose()?,
        seed,
        keyed: x.auth == Some(ControlAuth::Keyed),
    })
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
    run_scenario_opts(
        text,
        &RunOptions {
            seed,
            source_commit,
            ..RunOptions::default()
        },
    )
}

/// Parse, build and run a scenario as `opts` say. A run whose control is
/// stopped ends early with `stop_reason` `interrupted` and the outputs of
/// what it simulated so far (`meta.json` then says `"interrupted": true`).
pub fn run_scenario_opts(text: &str, opts: &RunOptions) -> Result<RunOutput, ScenarioError> {
    run_built(build(text, opts.seed)?, opts)
}

/// Run a built scenario as `opts` say (their seed is the one it was built with).
pub fn run_built(built: Built, opts: &RunOptions) -> Result<RunOutput, ScenarioError> {
    let Built {
        mut sim,
        record,
        ends_by_duration,
        ..
    } = built;
    if let Some(b) = opts.max_file_bytes {
        let field = "output.max_file_bytes";
        sim.set_max_file_bytes(count(
            b,
            field,
            limits::MIN_MAX_FILE_BYTES,
            limits::MAX_BYTES as u64,
        )?);
    }
    if let Some(c) = &opts.control {
        c.set_end(sim.stop_at.unwrap_or(Time::NEVER), ends_by_duration);
        sim.control = Some(Arc::clone(c));
    }
    let stats = sim.run().map_err(|e| ScenarioError::field("", e.0))?;
    Ok(tables::collect_moving(
        &mut sim,
        stats,
        &record,
        opts.source_commit,
    ))
}

/// The cost estimate of a scenario (built, not run); `seed` overrides `run.seed`.
pub fn estimate(text: &str, seed: Option<u64>) -> Result<Estimate, ScenarioError> {
    let b = build(text, seed)?;
    Ok(b.estimate())
}

impl Built {
    /// What running it will cost (`scenario::estimate`).
    pub fn estimate(&self) -> Estimate {
        super::estimate::estimate(&self.sim, self.ends_by_duration)
    }
}

/// The output port of link `c`, written "from->to" in scenario `field`.
fn link_port(net: &Net, c: &str, field: &str) -> Result<u32, ScenarioError> {
    let (from, to) = c
        .split_once("->")
        .ok_or_else(|| ScenarioError::field(field, format!("{c:?} is not a link like \"sa->sb\"")))?;
    let (Some(f), Some(t)) = (net.node(from.trim()), net.node(to.trim())) else {
        return Err(ScenarioError::field(
            field,
            format!("{c:?} names an unknown node"),
        ));
    };
    net.port_between(f, t)
        .ok_or_else(|| ScenarioError::field(field, format!("{c:?}: the two nodes are not linked")))
}
