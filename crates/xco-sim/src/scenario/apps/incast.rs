//! The scenario's side of `crate::app::incast`: its `[[apps]]` settings,
//! checked field by field, and how they add the app to a simulation.

use super::AppCx;
use crate::app::{App, Incast, IncastConfig};
use crate::scenario::limits::{count, sim_us};
use crate::scenario::units::{bytes, Hosts, Quantity};
use crate::scenario::ScenarioError;
use crate::sim::Sim;
use serde::Deserialize;

/// `[[apps]] kind = "incast"`: N servers each send `sru` bytes per round to one client.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IncastSpec {
    /// Start time, ms (default 0).
    pub start_ms: Option<f64>,
    /// The client host.
    pub client: String,
    /// The servers (not the client).
    pub servers: Hosts,
    /// Bytes per server per round.
    pub sru: Quantity,
    /// Request bytes per server per round (default 0: servers answer at the round start).
    pub request: Option<Quantity>,
    /// Rounds, 1 to 1,000,000 (default 1).
    pub rounds: Option<u32>,
    /// Largest random delay before a server answers, us (default 0: none).
    pub start_delay_max_us: Option<f64>,
    /// Keep connections across rounds (default true).
    pub reuse_connections: Option<bool>,
}

/// `[[apps]] kind = "stripe"`: a striped read of `total` bytes in blocks; each server sends block/N.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StripeSpec {
    /// Start time, ms (default 0).
    pub start_ms: Option<f64>,
    /// The client host.
    pub client: String,
    /// The servers (not the client).
    pub servers: Hosts,
    /// Bytes per block.
    pub block: Quantity,
    /// Bytes to read in all (at least one block, at most 1,000,000 blocks).
    pub total: Quantity,
    /// Request bytes per server per block (default 0).
    pub request: Option<Quantity>,
    /// Largest random delay before a server answers, us (default 0: none).
    pub start_delay_max_us: Option<f64>,
    /// Keep connections across blocks (default true).
    pub reuse_connections: Option<bool>,
}

/// The settings incast and stripe share.
struct FanIn<'a> {
    start_ms: Option<f64>,
    client: &'a str,
    servers: &'a Hosts,
    request: &'a Option<Quantity>,
    start_delay_max_us: Option<f64>,
    reuse_connections: Option<bool>,
}

impl FanIn<'_> {
    /// Add the app once its per-server bytes and rounds are known (`size` names the field they came from).
    fn add(
        &self,
        sim: &mut Sim,
        cx: &AppCx,
        label: &'static str,
        per_server: impl FnOnce(u64) -> Result<(u64, u32), ScenarioError>,
    ) -> Result<(), ScenarioError> {
        let start = cx.start(self.start_ms)?;
        let client = cx.hosts.one(self.client, &cx.field("client"))?;
        let servers = cx.hosts.select(self.servers, &cx.field("servers"))?;
        if servers.contains(&client) {
            return Err(ScenarioError::field(
                &cx.field("servers"),
                "must not include the client".into(),
            ));
        }
        let (sru_bytes, rounds) = per_server(servers.len() as u64)?;
        let cfg = IncastConfig {
            client,
            servers,
            sru_bytes,
            request_bytes: self
                .request
                .as_ref()
                .map(|q| bytes(q, &cx.field("request")))
                .transpose()?
                .unwrap_or(0),
            rounds,
            start_delay_max: sim_us(self.start_delay_max_us, &cx.field("start_delay_max_us"), 0.0)?,
            reuse_connections: self.reuse_connections.unwrap_or(true),
            label,
        };
        let id = sim.next_app_id();
        let rng = cx.rng(sim);
        sim.add_app(App::Incast(Incast::new(id, cfg, rng)), start);
        Ok(())
    }

    fn random_draw(&self) -> Option<String> {
        self.start_delay_max_us
            .filter(|&d| d > 0.0)
            .map(|d| format!("each server's start delay, uniform in [0, {d} us]"))
    }
}

impl IncastSpec {
    fn fan_in(&self) -> FanIn<'_> {
        FanIn {
            start_ms: self.start_ms,
            client: &self.client,
            servers: &self.servers,
            request: &self.request,
            start_delay_max_us: self.start_delay_max_us,
            reuse_connections: self.reuse_connections,
        }
    }

    /// Add the incast to `sim`.
    pub fn add_to(&self, sim: &mut Sim, cx: &AppCx) -> Result<(), ScenarioError> {
        self.fan_in().add(sim, cx, "incast", |_| {
            let sru = bytes(&self.sru, &cx.field("sru"))?;
            if sru == 0 {
                return Err(ScenarioError::field(&cx.field("sru"), "must be positive".into()));
            }
            Ok((
                sru,
                count(self.rounds.unwrap_or(1), &cx.field("rounds"), 1, 1_000_000)?,
            ))
        })
    }

    /// The random draw it makes, if any.
    pub fn random_draw(&self) -> Option<String> {
        self.fan_in().random_draw()
    }
}

impl StripeSpec {
    fn fan_in(&self) -> FanIn<'_> {
        FanIn {
            start_ms: self.start_ms,
            client: &self.client,
            servers: &self.servers,
            request: &self.request,
            start_delay_max_us: self.start_delay_max_us,
            reuse_connections: self.reuse_connections,
        }
    }

    /// Add the striped read to `sim`.
    pub fn add_to(&self, sim: &mut Sim, cx: &AppCx) -> Result<(), ScenarioError> {
        self.fan_in().add(sim, cx, "stripe", |n| {
            let block = bytes(&self.block, &cx.field("block"))?;
            let total = bytes(&self.total, &cx.field("total"))?;
            if block == 0 || total < block {
                return Err(ScenarioError::field(
                    &cx.field("total"),
                    "must be at least one positive block".into(),
                ));
            }
            if total.div_ceil(block) > 1_000_000 {
                return Err(ScenarioError::field(
                    &cx.field("total"),
                    "must be at most 1,000,000 blocks".into(),
                ));
            }
            Ok((block.div_ceil(n), total.div_ceil(block) as u32))
        })
    }

    /// The random draw it makes, if any.
    pub fn random_draw(&self) -> Option<String> {
        self.fan_in().random_draw()
    }
}
