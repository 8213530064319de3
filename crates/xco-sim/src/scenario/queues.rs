//! `topology.queue` and `[[topology.queues]]`: which discipline runs each port.
//!
//! Drop-tail is the default. `topology.queue` sets the discipline of every
//! switch output port; `[[topology.queues]]` entries override it for the
//! output ports of chosen switches (`switch = "sb"`, or a prefix: `"e*"`) or
//! for one port (`port = "sb->b0"`, host NICs included). A port entry beats a
//! switch entry, which beats `topology.queue`; two entries of one level for
//! the same port are an error.
//!
//! ```toml
//! [topology]
//! queue = { kind = "red", min_th = "30KB", max_th = "90KB" }
//! [[topology.queues]]
//! port = "sb->b0"
//! kind = "sfq"
//! perturb_ms = 10
//! ```
//!
//! Each entry is a tagged enum read kind by kind, as `[[apps]]` are: the
//! `kind` picks the settings struct, read with unknown fields denied, so a
//! RED setting in an SFQ entry is an error naming `topology.queues[1].max_p`.
//! Every kind takes `buffer` (default: the port's buffer as the topology
//! gives it). The bounds are in `limits.rs`.

use super::limits::{self, MAX_QUEUE_BUCKETS};
use super::units::{bytes, Quantity};
use super::{located, ScenarioError};
use crate::net::onoff::OnOff;
use crate::net::qdisc::{DropTail, Qdisc};
use crate::net::red::{Red, RedConfig};
use crate::net::sfq::{Sfq, SfqAdmission};
use crate::net::step_mark::StepMark;
use crate::net::topology::NodeKind;
use crate::net::Net;
use serde::Deserialize;
use toml::de::{DeTable, DeValue, ValueDeserializer};
use toml::Spanned;
use xco_core::{Dur, Rng};

/// `kind = "droptail"`: the default, written out (to undo a wider setting).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropTailSpec {
    /// The buffer (default: the port's).
    pub buffer: Option<Quantity>,
}

/// `kind = "red"`: RED with ECN marking (`net::red`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    /// The buffer, a hard limit (default: the port's).
    pub buffer: Option<Quantity>,
    /// `min_th`: average backlog where early hits start (required).
    pub min_th: Quantity,
    /// `max_th`: average backlog where `max_p` is reached (required).
    pub max_th: Quantity,
    /// Hit probability at `max_th` (default 0.1).
    pub max_p: Option<f64>,
    /// `w_q`, the average's weight (default 0.002).
    pub weight: Option<f64>,
    /// Gentle mode: the early region reaches to 2 `max_th` (default false).
    pub gentle: Option<bool>,
    /// Byte mode: the probability scaled by frame size over `mean_packet` (default false).
    pub byte_mode: Option<bool>,
    /// The typical frame: idle decay and byte mode's yardstick (default "1000B").
    pub mean_packet: Option<Quantity>,
    /// Mark ECN-capable packets instead of dropping them (default true).
    pub ecn: Option<bool>,
    /// Above the early region drop ECN-capable packets too (default false).
    pub harddrop: Option<bool>,
}

/// `kind = "sfq"`: stochastic fairness queueing (`net::sfq`), a scheduled port.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SfqSpec {
    /// The buffer shared by all buckets (default: the port's).
    pub buffer: Option<Quantity>,
    /// Hash buckets (default 1024).
    pub buckets: Option<u32>,
    /// Round-robin quantum (default one full frame: MTU + 18 bytes).
    pub quantum: Option<Quantity>,
    /// Packets one bucket may hold (default 127, as Linux).
    pub depth_packets: Option<u32>,
    /// Change the hash every this many ms (default 0: never, as Linux's `perturb 0`).
    pub perturb_ms: Option<f64>,
    /// What a tight buffer does with an arrival: `evict-longest` (default,
    /// Linux: admit it, push out of the longest bucket) or `ns2` (ns-2.35's
    /// early drop of the arrival, `net::sfq`).
    pub admission: Option<String>,
}

/// `kind = "onoff"`: the TCP Outcast paper's ON/OFF blackout model (`net::onoff`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnOffSpec {
    /// The drop-tail buffer behind the model (default: the port's).
    pub buffer: Option<Quantity>,
    /// Mean OFF time, ms (exponential; default 5, as the paper).
    pub off_mean_ms: Option<f64>,
    /// Data frames dropped in a row in each ON period, m (required).
    pub on_packets: u32,
}

/// `kind = "step"`: DCTCP's K-threshold marking (`net::step_mark`): an
/// ECN-capable arrival is marked CE while more than K bytes wait; the rest
/// is drop-tail.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// The buffer (default: the port's).
    pub buffer: Option<Quantity>,
    /// K in bytes (`"30KB"`); exactly one of `k` and `k_packets`.
    pub k: Option<Quantity>,
    /// K in full frames (MTU + 18 bytes each), as DCTCP's papers give it.
    pub k_packets: Option<u32>,
}

/// One discipline's settings, by `kind`.
#[derive(Clone, Debug)]
pub enum QueueSpec {
    /// `droptail`.
    DropTail(DropTailSpec),
    /// `red`.
    Red(RedSpec),
    /// `sfq`.
    Sfq(SfqSpec),
    /// `onoff`.
    OnOff(OnOffSpec),
    /// `step`.
    Step(StepSpec),
}

/// The kinds, as written in `kind = "..."`.
pub const KINDS: &[&str] = &["droptail", "red", "sfq", "onoff", "step"];

/// What a `[[topology.queues]]` entry applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Every output port of the switches with this name (or name prefix, ending in `*`).
    Switch(String),
    /// One port, as `"from->to"`.
    Port(String),
}

/// One `[[topology.queues]]` entry.
#[derive(Clone, Debug)]
pub struct QueueEntry {
    /// What it applies to.
    pub target: Target,
    /// The discipline.
    pub spec: QueueSpec,
}

/// The disciplines a scenario asks for.
#[derive(Clone, Debug, Default)]
pub struct Queues {
    /// `topology.queue`: every switch port's (None: drop-tail).
    pub default: Option<QueueSpec>,
    /// `[[topology.queues]]`.
    pub entries: Vec<QueueEntry>,
}

impl Queues {
    /// True if every port stays drop-tail with its topology buffer.
    pub fn is_default(&self) -> bool {
        self.default.is_none() && self.entries.is_empty()
    }

    /// The random draws these disciplines make, one sentence each.
    pub fn random_draws(&self) -> Vec<String> {
        let specs = self.default.iter().chain(self.entries.iter().map(|e| &e.spec));
        let (mut red, mut sfq, mut onoff) = (false, false, false);
        for s in specs {
            match s {
                QueueSpec::Red(_) => red = true,
                QueueSpec::Sfq(_) => sfq = true,
                QueueSpec::OnOff(_) => onoff = true,
                QueueSpec::DropTail(_) | QueueSpec::Step(_) => {}
            }
        }
        let mut out = Vec::new();
        if red {
            out.push(
                "RED: each RED port draws its early drops and marks from its own stream of the seed".into(),
            );
        }
        if sfq {
            out.push("SFQ: each SFQ port's flow hash (each period's, when perturbed) is a hash of the seed and the port".into());
        }
        if onoff {
            out.push(
                "ON/OFF: each ON/OFF port draws its exponential OFF times from its own stream of the seed"
                    .into(),
            );
        }
        out
    }
}

/// Read `topology.queue` and `[[topology.queues]]` of `text` (already a valid scenario document).
pub fn read_queues(text: &str) -> Result<Queues, ScenarioError> {
    let doc = DeTable::parse(text).map_err(|e| located(text, e))?;
    let Some(topo) = doc.get_ref().get("topology") else {
        return Ok(Queues::default());
    };
    let DeValue::Table(topo) = topo.get_ref() else {
        return Ok(Queues::default()); // the schema reports it
    };
    let mut out = Queues::default();
    if let Some(q) = topo.get("queue") {
        let DeValue::Table(t) = q.get_ref() else {
            return Err(ScenarioError::field(
                "topology.queue",
                format!(
                    "must be a table like {{ kind = \"red\", ... }}; kinds: {}",
                    KINDS.join(", ")
                ),
            ));
        };
        out.default = Some(read_spec(text, "topology.queue", q.span(), t, &[])?);
    }
    if let Some(qs) = topo.get("queues") {
        let DeValue::Array(items) = qs.get_ref() else {
            return Err(ScenarioError::field(
                "topology.queues",
                "must be an array of tables ([[topology.queues]])".into(),
            ));
        };
        for (i, item) in items.iter().enumerate() {
            let path = format!("topology.queues[{i}]");
            let DeValue::Table(t) = item.get_ref() else {
                return Err(ScenarioError::field(&path, "must be a table".into()));
            };
            let target_of = |key: &str| -> Result<Option<String>, ScenarioError> {
                match t.get(key).map(|v| v.get_ref()) {
                    None => Ok(None),
                    Some(DeValue::String(s)) => Ok(Some(s.trim().to_string())),
                    Some(_) => Err(ScenarioError::field(
                        &format!("{path}.{key}"),
                        "must be a string".into(),
                    )),
                }
            };
            let target = match (target_of("switch")?, target_of("port")?) {
                (Some(s), None) => Target::Switch(s),
                (None, Some(p)) => Target::Port(p),
                _ => {
                    return Err(ScenarioError::field(
                        &path,
                        "needs exactly one of switch = \"NAME\" (or \"PREFIX*\") and port = \"FROM->TO\""
                            .into(),
                    ))
                }
            };
            let spec = read_spec(text, &path, item.span(), t, &["switch", "port"])?;
            out.entries.push(QueueEntry { target, spec });
        }
    }
    Ok(out)
}

/// Read the discipline of table `t` at `path`, leaving out `kind` and `skip`.
fn read_spec(
    text: &str,
    path: &str,
    span: std::ops::Range<usize>,
    t: &DeTable<'_>,
    skip: &[&str],
) -> Result<QueueSpec, ScenarioError> {
    let kind_field = format!("{path}.kind");
    let kind = super::apps::tagged_kind(t, &kind_field, KINDS)?;
    let rest: DeTable = t
        .iter()
        .filter(|(k, _)| {
            let key: &str = k.get_ref();
            key != "kind" && !skip.contains(&key)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let de = || ValueDeserializer::from(Spanned::new(span.clone(), DeValue::Table(rest.clone())));
    fn read<'de, T: Deserialize<'de>>(
        text: &str,
        path: &str,
        de: ValueDeserializer<'de>,
    ) -> Result<T, ScenarioError> {
        T::deserialize(de).map_err(|e| {
            let mut err = located(text, e);
            // name the entry even where the reader's span cannot
            if !err.field.starts_with(path) {
                err.field = if err.field.is_empty() {
                    path.to_string()
                } else {
                    format!("{path}.{}", err.field.rsplit('.').next().unwrap_or_default())
                };
            }
            err
        })
    }
    Ok(match kind.as_str() {
        "droptail" => QueueSpec::DropTail(read(text, path, de())?),
        "red" => QueueSpec::Red(read(text, path, de())?),
        "sfq" => QueueSpec::Sfq(read(text, path, de())?),
        "onoff" => QueueSpec::OnOff(read(text, path, de())?),
        "step" => QueueSpec::Step(read(text, path, de())?),
        other => {
            return Err(ScenarioError::field(
                &kind_field,
                format!("unknown queue kind {other:?}; use {}", KINDS.join(", ")),
            ))
        }
    })
}

/// A discipline checked and in units, before it meets a port.
#[derive(Clone, Debug)]
enum Resolved {
    DropTail {
        buffer: Option<u64>,
    },
    Red {
        buffer: Option<u64>,
        cfg: RedConfig,
    },
    Step {
        buffer: Option<u64>,
        k_bytes: u64,
    },
    Sfq {
        buffer: Option<u64>,
        buckets: u32,
        quantum_bytes: u32,
        depth_packets: u32,
        perturb: Dur,
        admission: SfqAdmission,
    },
    OnOff {
        buffer: Option<u64>,
        off_mean: Dur,
        on_packets: u32,
    },
}

fn resolve(spec: &QueueSpec, path: &str, mtu: u32) -> Result<Resolved, ScenarioError> {
    let f = |k: &str| format!("{path}.{k}");
    let buffer = |b: &Option<Quantity>| b.as_ref().map(|q| bytes(q, &f("buffer"))).transpose();
    Ok(match spec {
        QueueSpec::DropTail(d) => Resolved::DropTail {
            buffer: buffer(&d.buffer)?,
        },
        QueueSpec::Red(r) => {
            let mean = match &r.mean_packet {
                Some(q) => bytes(q, &f("mean_packet"))?,
                None => 1000,
            };
            let mean = limits::count(
                mean,
                &f("mean_packet"),
                limits::MIN_RED_MEAN_PACKET_BYTES,
                limits::MAX_RED_MEAN_PACKET_BYTES,
            )?;
            let cfg = RedConfig {
                limit_bytes: 0, // the port's, set per port
                min_th_bytes: bytes(&r.min_th, &f("min_th"))?,
                max_th_bytes: bytes(&r.max_th, &f("max_th"))?,
                max_p: limits::fraction(r.max_p, &f("max_p"), 0.1)?,
                weight: limits::fraction(r.weight, &f("weight"), 0.002)?,
                gentle: r.gentle.unwrap_or(false),
                byte_mode: r.byte_mode.unwrap_or(false),
                mean_frame_bytes: mean as u32,
                ecn: r.ecn.unwrap_or(true),
                harddrop: r.harddrop.unwrap_or(false),
            };
            if cfg.min_th_bytes > cfg.max_th_bytes {
                return Err(ScenarioError::field(
                    &f("max_th"),
                    format!(
                        "must be at least min_th ({} B), got {} B",
                        cfg.min_th_bytes, cfg.max_th_bytes
                    ),
                ));
            }
            Resolved::Red {
                buffer: buffer(&r.buffer)?,
                cfg,
            }
        }
        QueueSpec::Step(st) => {
            let k_bytes = match (&st.k, st.k_packets) {
                (Some(k), None) => bytes(k, &f("k"))?,
                (None, Some(n)) => {
                    limits::count(n as u64, &f("k_packets"), 1, limits::MAX_STEP_K_PACKETS)?
                        * (mtu as u64 + 18)
                }
                _ => {
                    return Err(ScenarioError::field(
                        &f("k"),
                        "needs exactly one of k = \"BYTES\" and k_packets = N".into(),
                    ))
                }
            };
            Resolved::Step {
                buffer: buffer(&st.buffer)?,
                k_bytes,
            }
        }
        QueueSpec::Sfq(s) => {
            let buckets = limits::count(
                s.buckets.unwrap_or(1024),
                &f("buckets"),
                1,
                limits::MAX_SFQ_BUCKETS as u64,
            )?;
            let full_frame = mtu + 18; // the MTU in an Ethernet frame
            let quantum = match &s.quantum {
                Some(q) => bytes(q, &f("quantum"))?,
                None => full_frame as u64,
            };
            let quantum = limits::count(quantum, &f("quantum"), 1, limits::MAX_SFQ_QUANTUM_BYTES)?;
            let depth = limits::count(
                s.depth_packets.unwrap_or(Sfq::DEFAULT_DEPTH_PACKETS),
                &f("depth_packets"),
                1,
                limits::MAX_SFQ_DEPTH_PACKETS,
            )?;
            let admission = match s.admission.as_deref() {
                None | Some("evict-longest") => SfqAdmission::EvictLongest,
                Some("ns2") => SfqAdmission::Ns2 {
                    frame_bytes: full_frame,
                },
                Some(other) => {
                    return Err(ScenarioError::field(
                        &f("admission"),
                        format!("unknown admission {other:?}: use \"evict-longest\" or \"ns2\""),
                    ))
                }
            };
            Resolved::Sfq {
                buffer: buffer(&s.buffer)?,
                buckets,
                quantum_bytes: quantum as u32,
                depth_packets: depth,
                perturb: limits::sim_ms(s.perturb_ms, &f("perturb_ms"), 0.0)?,
                admission,
            }
        }
        QueueSpec::OnOff(o) => {
            let off_mean = limits::sim_ms(o.off_mean_ms, &f("off_mean_ms"), 5.0)?;
            if off_mean == Dur::ZERO {
                return Err(ScenarioError::field(&f("off_mean_ms"), "must be positive".into()));
            }
            Resolved::OnOff {
                buffer: buffer(&o.buffer)?,
                off_mean,
                on_packets: limits::count(o.on_packets, &f("on_packets"), 1, limits::MAX_ONOFF_ON_PACKETS)?,
            }
        }
    })
}

/// Random stream of RED draws at port `p` (one per port).
fn red_stream(seed: u64, p: u32) -> Rng {
    Rng::stream(seed, 0x5ED0_0000_0000 + p as u64)
}

/// Random stream of the ON/OFF model's OFF times at port `p`.
fn onoff_stream(seed: u64, p: u32) -> Rng {
    Rng::stream(seed, 0x0F0F_0000_0000 + p as u64)
}

/// Seed of SFQ's hash at port `p`.
fn sfq_seed(seed: u64, p: u32) -> u64 {
    xco_core::rng::mix64(seed, 0x5F90_0000_0000 + p as u64)
}

/// Give every port of `net` the discipline `queues` asks for (ports left
/// alone stay drop-tail); `seed` is the run's, `mtu` every host's.
pub fn apply(queues: &Queues, net: &mut Net, seed: u64, mtu: u32) -> Result<(), ScenarioError> {
    if queues.is_default() {
        return Ok(());
    }
    let n_ports = net.ports.len();
    // per port: (level, index of the spec in `resolved`): 0 default, 1 switch, 2 port
    let mut choice: Vec<Option<(u8, usize)>> = vec![None; n_ports];
    let mut resolved: Vec<(String, Resolved)> = Vec::new();
    if let Some(d) = &queues.default {
        resolved.push(("topology.queue".into(), resolve(d, "topology.queue", mtu)?));
        for (p, c) in choice.iter_mut().enumerate() {
            if net.nodes[net.ports[p].from as usize].kind == NodeKind::Switch {
                *c = Some((0, 0));
            }
        }
    }
    for (i, e) in queues.entries.iter().enumerate() {
        let path = format!("topology.queues[{i}]");
        let r = resolve(&e.spec, &path, mtu)?;
        let at = resolved.len();
        resolved.push((path.clone(), r));
        let (level, ports) = match &e.target {
            Target::Switch(name) => (1u8, switch_ports(net, name, &format!("{path}.switch"))?),
            Target::Port(name) => (2u8, vec![one_port(net, name, &format!("{path}.port"))?]),
        };
        for p in ports {
            if let Some((l, j)) = choice[p as usize] {
                if l == level {
                    return Err(ScenarioError::field(
                        &path,
                        format!(
                            "port {} already has its discipline from {}",
                            port_name(net, p),
                            resolved[j].0
                        ),
                    ));
                }
                if l > level {
                    continue;
                }
            }
            choice[p as usize] = Some((level, at));
        }
    }
    // SFQ's buckets cost memory on every port: bound them all together
    let mut buckets_total = 0u64;
    for (p, c) in choice.iter().enumerate() {
        if let Some((_, j)) = c {
            if let Resolved::Sfq { buckets, .. } = &resolved[*j].1 {
                buckets_total += *buckets as u64;
                if buckets_total > MAX_QUEUE_BUCKETS {
                    return Err(ScenarioError::field(
                        &resolved[*j].0,
                        format!(
                            "SFQ buckets over all ports exceed {MAX_QUEUE_BUCKETS} (at port {}); use fewer buckets or fewer SFQ ports",
                            port_name(net, p as u32)
                        ),
                    ));
                }
            }
        }
    }
    for (p, c) in choice.iter().enumerate() {
        let Some((_, j)) = c else { continue };
        let p = p as u32;
        let (rate_bps, own_buffer) = (net.ports[p as usize].rate_bps, net.ports[p as usize].buffer_bytes);
        let qdisc = match &resolved[*j].1 {
            Resolved::DropTail { buffer } => Qdisc::DropTail(DropTail::new(buffer.unwrap_or(own_buffer))),
            Resolved::Red { buffer, cfg } => {
                let cfg = RedConfig {
                    limit_bytes: buffer.unwrap_or(own_buffer),
                    ..cfg.clone()
                };
                Qdisc::Fifo(Box::new(Red::new(cfg, rate_bps, red_stream(seed, p))))
            }
            Resolved::Step { buffer, k_bytes } => {
                let limit = buffer.unwrap_or(own_buffer);
                if *k_bytes >= limit {
                    return Err(ScenarioError::field(
                        &format!("{}.k", resolved[*j].0),
                        format!(
                            "K ({k_bytes} B) must be below the buffer ({limit} B) of port {}",
                            port_name(net, p)
                        ),
                    ));
                }
                Qdisc::Fifo(Box::new(StepMark::new(*k_bytes, limit)))
            }
            Resolved::Sfq {
                buffer,
                buckets,
                quantum_bytes,
                depth_packets,
                perturb,
                admission,
            } => Qdisc::Scheduled(Box::new(
                Sfq::new(
                    buffer.unwrap_or(own_buffer),
                    *buckets,
                    *quantum_bytes,
                    sfq_seed(seed, p),
                )
                .with_depth(*depth_packets)
                .with_perturbation(*perturb)
                .with_admission(*admission),
            )),
            Resolved::OnOff {
                buffer,
                off_mean,
                on_packets,
            } => Qdisc::Fifo(Box::new(OnOff::new(
                buffer.unwrap_or(own_buffer),
                *off_mean,
                *on_packets,
                onoff_stream(seed, p),
            ))),
        };
        net.set_qdisc(p, qdisc)
            .map_err(|e| ScenarioError::field(&resolved[*j].0, e.0))?;
    }
    Ok(())
}

fn port_name(net: &Net, p: u32) -> String {
    let pt = &net.ports[p as usize];
    format!("{}->{}", net.name(pt.from), net.name(pt.to))
}

/// The output ports of the switches `name` selects (a name, or a prefix ending in `*`).
fn switch_ports(net: &Net, name: &str, field: &str) -> Result<Vec<u32>, ScenarioError> {
    let matches = |n: &str| match name.strip_suffix('*') {
        Some(prefix) => n.starts_with(prefix),
        None => n == name,
    };
    let chosen: Vec<bool> = net
        .nodes
        .iter()
        .map(|n| n.kind == NodeKind::Switch && matches(&n.name))
        .collect();
    if !chosen.contains(&true) {
        let why = match net.node(name) {
            Some(_) => format!("{name:?} is a host; give its NIC as port = \"{name}->...\""),
            None => format!("{name:?} names no switch"),
        };
        return Err(ScenarioError::field(field, why));
    }
    Ok((0..net.ports.len() as u32)
        .filter(|&p| chosen[net.ports[p as usize].from as usize])
        .collect())
}

/// The port written as `"from->to"`.
fn one_port(net: &Net, name: &str, field: &str) -> Result<u32, ScenarioError> {
    let (from, to) = name
        .split_once("->")
        .ok_or_else(|| ScenarioError::field(field, format!("{name:?} is not a port like \"sb->b0\"")))?;
    let (Some(f), Some(t)) = (net.node(from.trim()), net.node(to.trim())) else {
        return Err(ScenarioError::field(
            field,
            format!("{name:?} names an unknown node"),
        ));
    };
    net.port_between(f, t)
        .ok_or_else(|| ScenarioError::field(field, format!("{name:?}: the two nodes are not linked")))
}
