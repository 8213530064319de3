//! The scenario's side of `crate::app::ping`: its `[[apps]]` settings,
//! checked field by field, and how they add the app to a simulation.

use super::AppCx;
use crate::app::{App, Ping, PingConfig};
use crate::scenario::limits::{self, count, MAX_PROBES, MAX_SIM_TIME_MS};
use crate::scenario::units::Hosts;
use crate::scenario::ScenarioError;
use crate::sim::Sim;
use serde::Deserialize;

/// `[[apps]] kind = "ping"`: ICMP echo probes from each source to `dst`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PingSpec {
    /// Start time, ms (default 0).
    pub start_ms: Option<f64>,
    /// The prober(s).
    pub src: Hosts,
    /// The host that echoes.
    pub dst: String,
    /// Time between probes, us (default 1000, at least 1).
    pub interval_us: Option<f64>,
    /// Probes to send, 1 to 10^7 (default: until the run ends, at most 10^7 in it).
    pub count: Option<u64>,
}

impl PingSpec {
    /// Add one prober per source to `sim`.
    pub fn add_to(&self, sim: &mut Sim, cx: &AppCx) -> Result<(), ScenarioError> {
        let start = cx.start(self.start_ms)?;
        for (src, dst) in cx.pairs(&self.src, &self.dst)? {
            let interval = limits::us(
                self.interval_us,
                &cx.field("interval_us"),
                1000.0,
                1.0,
                MAX_SIM_TIME_MS * 1e3,
            )?;
            if let Some(c) = self.count {
                count(c, &cx.field("count"), 1, MAX_PROBES as u64)?;
            }
            let probes = match (self.count, cx.duration) {
                (Some(c), _) => c as f64,
                (None, Some(d)) => d.as_secs_f64() / interval.as_secs_f64(),
                (None, None) => 0.0, // endless: rejected for want of a duration
            };
            if probes > MAX_PROBES {
                return Err(ScenarioError::field(
                    &cx.field(if self.count.is_some() {
                        "count"
                    } else {
                        "interval_us"
                    }),
                    format!(
                        "gives {probes:.0} probes; at most {MAX_PROBES:e} (fewer probes or a longer interval)"
                    ),
                ));
            }
            let id = sim.next_app_id();
            let cfg = PingConfig {
                src,
                dst,
                interval,
                count: self.count,
                payload_bytes: 56,
            };
            sim.add_app(App::Ping(Ping::new(id, cfg)), start);
        }
        Ok(())
    }

    /// Pings draw nothing.
    pub fn random_draw(&self) -> Option<String> {
        None
    }
}
