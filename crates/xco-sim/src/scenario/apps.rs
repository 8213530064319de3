//! `[[apps]]`: a tagged enum, one entry per application, read kind by kind.
//!
//! Each entry's `kind` picks a spec struct, in a file of its own beside this
//! one (`scenario/apps/incast.rs` holds `IncastSpec`, the settings of
//! `app/incast.rs`'s application); the struct is read with unknown
//! fields denied, so a field of another kind (`rounds` in a `transfer`) is an
//! error naming `apps[i].rounds`. An entry is read straight from the parsed
//! document (not through serde's buffered tagged-enum path), so an error in a
//! value still knows where it is: `apps[2].count: invalid type ...`.
//!
//! A new kind: its application in `app/`, its spec (serde) and builder in
//! `scenario/apps/`, one arm in [`AppSpec`] and one in the table of
//! [`read_apps`]. The applications never import the scenario layer.

use super::units::{HostIndex, Hosts};
use super::{located, ScenarioError};
mod bulk;
mod incast;
mod ping;
mod short_flows;
mod udp_source;
mod web_fanin;

use crate::sim::Sim;
pub use bulk::{BulkSpec, TransferSpec};
pub use incast::{IncastSpec, StripeSpec};
pub use ping::PingSpec;
use serde::Deserialize;
pub use short_flows::ShortFlowsSpec;
use toml::de::{DeTable, DeValue, ValueDeserializer};
use toml::Spanned;
pub use udp_source::UdpSpec;
pub use web_fanin::WebFaninSpec;
use xco_core::{Dur, Rng, Time};

/// One `[[apps]]` entry, by `kind`.
#[derive(Clone, Debug)]
pub enum AppSpec {
    /// `incast`: barrier-synchronised fan-in.
    Incast(IncastSpec),
    /// `stripe`: striped block reads (each server sends block/N).
    Stripe(StripeSpec),
    /// `bulk`: unlimited TCP transfers.
    Bulk(BulkSpec),
    /// `transfer`: fixed-size TCP transfers.
    Transfer(TransferSpec),
    /// `short_flows`: parallel sequences of short TCP flows.
    ShortFlows(ShortFlowsSpec),
    /// `ping`: ICMP echo probes.
    Ping(PingSpec),
    /// `udp`: UDP messages at a rate or flat out.
    Udp(UdpSpec),
    /// `web_fanin`: front-ends reading many small objects (SICC's workload).
    WebFanin(WebFaninSpec),
}

/// The kinds, as written in `kind = "..."`.
pub const KINDS: &[&str] = &[
    "incast",
    "stripe",
    "bulk",
    "transfer",
    "short_flows",
    "ping",
    "udp",
    "web_fanin",
];

macro_rules! each_spec {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            AppSpec::Incast($s) => $e,
            AppSpec::Stripe($s) => $e,
            AppSpec::Bulk($s) => $e,
            AppSpec::Transfer($s) => $e,
            AppSpec::ShortFlows($s) => $e,
            AppSpec::Ping($s) => $e,
            AppSpec::Udp($s) => $e,
            AppSpec::WebFanin($s) => $e,
        }
    };
}

impl AppSpec {
    /// Add the app(s) of this entry to `sim` (one per selected source where the kind says so).
    pub fn add_to(&self, sim: &mut Sim, cx: &AppCx) -> Result<(), ScenarioError> {
        each_spec!(self, s => s.add_to(sim, cx))
    }

    /// The kind as written (`incast`, `short_flows`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            AppSpec::Incast(_) => "incast",
            AppSpec::Stripe(_) => "stripe",
            AppSpec::Bulk(_) => "bulk",
            AppSpec::Transfer(_) => "transfer",
            AppSpec::ShortFlows(_) => "short_flows",
            AppSpec::Ping(_) => "ping",
            AppSpec::Udp(_) => "udp",
            AppSpec::WebFanin(_) => "web_fanin",
        }
    }

    /// The random draw this entry makes, as a sentence (None: it draws nothing).
    pub fn random_draw(&self) -> Option<String> {
        each_spec!(self, s => s.random_draw())
    }
}

/// Read the `[[apps]]` entries of `text` (already a valid scenario
/// document), and each entry's `tcp` key (a TCP profile name, any kind).
pub fn read_apps(text: &str) -> Result<(Vec<AppSpec>, Vec<Option<String>>), ScenarioError> {
    let doc = DeTable::parse(text).map_err(|e| located(text, e))?;
    let Some(apps) = doc.get_ref().get("apps") else {
        return Ok((Vec::new(), Vec::new()));
    };
    let DeValue::Array(items) = apps.get_ref() else {
        return Err(ScenarioError::field(
            "apps",
            "must be an array of tables ([[apps]])".into(),
        ));
    };
    let mut out = Vec::with_capacity(items.len());
    let mut tcp = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let DeValue::Table(table) = item.get_ref() else {
            return Err(ScenarioError::field(
                &format!("apps[{i}]"),
                "must be a table".into(),
            ));
        };
        let kind_field = format!("apps[{i}].kind");
        let kind = tagged_kind(table, &kind_field, KINDS)?;
        tcp.push(match table.get("tcp").map(|v| v.get_ref()) {
            None => None,
            Some(DeValue::String(s)) => Some(s.to_string()),
            Some(_) => {
                return Err(ScenarioError::field(
                    &format!("apps[{i}].tcp"),
                    "must be a TCP profile name (a string)".into(),
                ))
            }
        });
        let rest: DeTable = table
            .iter()
            .filter(|(k, _)| k.get_ref() != "kind" && k.get_ref() != "tcp")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let de = || ValueDeserializer::from(Spanned::new(item.span(), DeValue::Table(rest.clone())));
        fn read<'de, T: Deserialize<'de>>(
            text: &str,
            de: ValueDeserializer<'de>,
        ) -> Result<T, ScenarioError> {
            T::deserialize(de).map_err(|e| located(text, e))
        }
        out.push(match kind.as_str() {
            "incast" => AppSpec::Incast(read(text, de())?),
            "stripe" => AppSpec::Stripe(read(text, de())?),
            "bulk" => AppSpec::Bulk(read(text, de())?),
            "transfer" => AppSpec::Transfer(read(text, de())?),
            "short_flows" => AppSpec::ShortFlows(read(text, de())?),
            "ping" => AppSpec::Ping(read(text, de())?),
            "udp" => AppSpec::Udp(read(text, de())?),
            "web_fanin" => AppSpec::WebFanin(read(text, de())?),
            other => {
                return Err(ScenarioError::field(
                    &kind_field,
                    format!("unknown app kind {other:?}; use {}", KINDS.join(", ")),
                ))
            }
        });
    }
    Ok((out, tcp))
}

/// What building one `[[apps]]` entry needs.
pub struct AppCx<'a> {
    /// Index of the entry (`apps[i]`).
    pub index: usize,
    /// The topology's hosts.
    pub hosts: &'a HostIndex,
    /// The run's seed.
    pub seed: u64,
    /// Every host's MTU, bytes.
    pub mtu_bytes: u32,
    /// `run.duration_ms`, if set.
    pub duration: Option<Dur>,
}

impl AppCx<'_> {
    /// The key path of field `name` of this entry (`apps[2].sru`).
    pub fn field(&self, name: &str) -> String {
        format!("apps[{}].{name}", self.index)
    }

    /// The start time from `start_ms` (bounded like every simulated time).
    pub fn start(&self, start_ms: Option<f64>) -> Result<Time, ScenarioError> {
        Ok(Time::ZERO + super::limits::sim_ms(start_ms, &self.field("start_ms"), 0.0)?)
    }

    /// The random stream of the next app added to `sim` (as every app has drawn it so far).
    pub fn rng(&self, sim: &Sim) -> Rng {
        Rng::stream(self.seed, 1000 + sim.next_app_id() as u64)
    }

    /// (source, destination) nodes of a `src`/`dst` entry: one per selected source,
    /// none of them the destination.
    pub fn pairs(&self, src: &Hosts, dst: &str) -> Result<Vec<(u32, u32)>, ScenarioError> {
        let d = self.hosts.one(dst, &self.field("dst"))?;
        let mut out = Vec::new();
        for s in self.hosts.select_names(src, &self.field("src"))? {
            let n = self.hosts.node(&s).expect("a selected host");
            if n == d {
                return Err(ScenarioError::field(
                    &self.field("src"),
                    format!("{s:?} is also the destination"),
                ));
            }
            out.push((n, d));
        }
        Ok(out)
    }
}

/// The `kind` of a tagged table (an `[[apps]]` entry, a port discipline):
/// a string, required; `kind_field` names it in errors, `kinds` lists the choices.
pub(crate) fn tagged_kind(
    t: &DeTable<'_>,
    kind_field: &str,
    kinds: &[&str],
) -> Result<String, ScenarioError> {
    match t.get("kind").map(|k| k.get_ref()) {
        Some(DeValue::String(s)) => Ok(s.to_string()),
        Some(_) => Err(ScenarioError::field(kind_field, "must be a string".into())),
        None => Err(ScenarioError::field(
            kind_field,
            format!("is required: one of {}", kinds.join(", ")),
        )),
    }
}
