//! The scenario's side of `crate::app::short_flows`: its `[[apps]]` settings,
//! checked field by field, and how they add the app to a simulation.

use super::AppCx;
use crate::app::{App, ShortFlows, ShortFlowsConfig};
use crate::scenario::limits::{count, sim_us, MAX_COUNT};
use crate::scenario::units::{bytes, Hosts, Quantity};
use crate::scenario::ScenarioError;
use crate::sim::Sim;
use serde::Deserialize;

/// `[[apps]] kind = "short_flows"`: `parallel` sequences of `flow`-byte TCP flows per source.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShortFlowsSpec {
    /// Start time, ms (default 0).
    pub start_ms: Option<f64>,
    /// The sender(s).
    pub src: Hosts,
    /// The receiver.
    pub dst: String,
    /// Parallel sequences K, 1 to 100,000.
    pub parallel: u32,
    /// Bytes per flow (positive).
    pub flow: Quantity,
    /// Flows per sequence, 1 to 10^9 (default: until the run ends).
    pub flows_per_sequence: Option<u32>,
    /// Sequence starts spread uniformly over this span, us (default 0).
    pub start_spread_us: Option<f64>,
}

impl ShortFlowsSpec {
    /// Add one app per source to `sim`.
    pub fn add_to(&self, sim: &mut Sim, cx: &AppCx) -> Result<(), ScenarioError> {
        let start = cx.start(self.start_ms)?;
        for (src, dst) in cx.pairs(&self.src, &self.dst)? {
            let flow = bytes(&self.flow, &cx.field("flow"))?;
            if flow == 0 {
                return Err(ScenarioError::field(&cx.field("flow"), "must be positive".into()));
            }
            count(self.parallel, &cx.field("parallel"), 1, 100_000)?;
            if let Some(n) = self.flows_per_sequence {
                count(n, &cx.field("flows_per_sequence"), 1, MAX_COUNT)?;
            }
            let cfg = ShortFlowsConfig {
                src,
                dst,
                parallel: self.parallel,
                flow_bytes: flow,
                flows_per_sequence: self.flows_per_sequence,
                start_spread: sim_us(self.start_spread_us, &cx.field("start_spread_us"), 0.0)?,
            };
            let id = sim.next_app_id();
            let rng = cx.rng(sim);
            sim.add_app(App::ShortFlows(ShortFlows::new(id, cfg, rng)), start);
        }
        Ok(())
    }

    /// The random draw it makes, if any.
    pub fn random_draw(&self) -> Option<String> {
        self.start_spread_us
            .filter(|&d| d > 0.0)
            .map(|d| format!("each sequence's start, uniform in [0, {d} us]"))
    }
}
