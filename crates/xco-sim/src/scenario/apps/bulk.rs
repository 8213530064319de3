//! The scenario's side of `crate::app::bulk`: its `[[apps]]` settings,
//! checked field by field, and how they add the app to a simulation.

use super::AppCx;
use crate::app::{bulk_config, App, Bulk, BulkConfig};
use crate::scenario::units::{bytes, Hosts, Quantity};
use crate::scenario::ScenarioError;
use crate::sim::Sim;
use serde::Deserialize;
use xco_core::Time;

/// `[[apps]] kind = "bulk"`: one unlimited TCP transfer per source (needs `run.duration_ms`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BulkSpec {
    /// Start time, ms (default 0).
    pub start_ms: Option<f64>,
    /// Stop time, ms: the connection closes (the flow is removed); default: runs to the end.
    pub stop_ms: Option<f64>,
    /// The sender(s): one host, a range `"a0..a31"`, a prefix `"a*"` or a list.
    pub src: Hosts,
    /// The receiver.
    pub dst: String,
}

/// `[[apps]] kind = "transfer"`: one TCP transfer of `bytes` per source.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferSpec {
    /// Start time, ms (default 0).
    pub start_ms: Option<f64>,
    /// The sender(s).
    pub src: Hosts,
    /// The receiver.
    pub dst: String,
    /// Bytes to send (positive).
    pub bytes: Quantity,
}

fn add_transfers(
    sim: &mut Sim,
    cx: &AppCx,
    start_ms: Option<f64>,
    src: &Hosts,
    dst: &str,
    size: Option<u64>,
    stop_ms: Option<f64>,
) -> Result<(), ScenarioError> {
    let start = cx.start(start_ms)?;
    let stop = match stop_ms {
        None => None,
        Some(ms) => {
            let field = cx.field("stop_ms");
            let t = Time::ZERO + crate::scenario::limits::sim_ms(Some(ms), &field, 0.0)?;
            if t <= start {
                return Err(ScenarioError::field(
                    &field,
                    format!("must be after start_ms, got {ms}"),
                ));
            }
            Some(t)
        }
    };
    for (src, dst) in cx.pairs(src, dst)? {
        let id = sim.next_app_id();
        let cfg = BulkConfig {
            stop,
            ..bulk_config(src, dst, size)
        };
        sim.add_app(App::Bulk(Bulk::new(id, cfg)), start);
    }
    Ok(())
}

impl BulkSpec {
    /// Add one bulk transfer per source to `sim`.
    pub fn add_to(&self, sim: &mut Sim, cx: &AppCx) -> Result<(), ScenarioError> {
        add_transfers(sim, cx, self.start_ms, &self.src, &self.dst, None, self.stop_ms)
    }

    /// Bulk transfers draw nothing.
    pub fn random_draw(&self) -> Option<String> {
        None
    }
}

impl TransferSpec {
    /// Add one transfer per source to `sim`.
    pub fn add_to(&self, sim: &mut Sim, cx: &AppCx) -> Result<(), ScenarioError> {
        let size = bytes(&self.bytes, &cx.field("bytes"))?;
        if size == 0 {
            return Err(ScenarioError::field(
                &cx.field("bytes"),
                "must be positive".into(),
            ));
        }
        add_transfers(sim, cx, self.start_ms, &self.src, &self.dst, Some(size), None)
    }

    /// Transfers draw nothing.
    pub fn random_draw(&self) -> Option<String> {
        None
    }
}
