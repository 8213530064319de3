//! The scenario's side of `crate::app::udp_source`: its `[[apps]]` settings,
//! checked field by field, and how they add the app to a simulation.

use super::AppCx;
use crate::app::{App, UdpConfig, UdpSource};
use crate::scenario::limits::{count, MAX_COUNT, MAX_UDP_MSGS_PER_S};
use crate::scenario::units::{bytes, rate_bps, Quantity};
use crate::scenario::ScenarioError;
use crate::sim::Sim;
use serde::Deserialize;

/// `[[apps]] kind = "udp"`: UDP messages from each source to `dst`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpSpec {
    /// Start time, ms (default 0).
    pub start_ms: Option<f64>,
    /// The sender(s).
    pub src: crate::scenario::units::Hosts,
    /// The receiver.
    pub dst: String,
    /// Payload rate, or `"line"` for flat out (default); at most 10^9 messages per second.
    pub rate: Option<Quantity>,
    /// Bytes per message, 1 to 65507 (default 65507, the largest UDP datagram).
    pub message: Option<Quantity>,
    /// Messages to send (default: until the run ends).
    pub count: Option<u64>,
}

impl UdpSpec {
    /// Add one source per sender to `sim`.
    pub fn add_to(&self, sim: &mut Sim, cx: &AppCx) -> Result<(), ScenarioError> {
        let start = cx.start(self.start_ms)?;
        for (src, dst) in cx.pairs(&self.src, &self.dst)? {
            let rate_bps = match &self.rate {
                None => None,
                Some(Quantity::Text(s)) if s.trim() == "line" => None,
                Some(q) => Some(rate_bps(q, &cx.field("rate"))?),
            };
            let message_bytes = match &self.message {
                Some(q) => bytes(q, &cx.field("message"))?,
                None => 65_507,
            };
            if message_bytes == 0 || message_bytes > 65_507 {
                return Err(ScenarioError::field(
                    &cx.field("message"),
                    format!("must be 1..65507 bytes (one UDP datagram), got {message_bytes}"),
                ));
            }
            if let Some(r) = rate_bps {
                let per_s = r as f64 / (8.0 * message_bytes as f64);
                if per_s > MAX_UDP_MSGS_PER_S {
                    return Err(ScenarioError::field(
                        &cx.field("rate"),
                        format!(
                            "sends {per_s:e} messages per second; at most {MAX_UDP_MSGS_PER_S:e} \
                             (raise message or lower rate)"
                        ),
                    ));
                }
            }
            if let Some(c) = self.count {
                count(c, &cx.field("count"), 1, MAX_COUNT * 1000)?;
            }
            let id = sim.next_app_id();
            let cfg = UdpConfig {
                src,
                dst,
                rate_bps,
                message_bytes,
                count: self.count,
                mtu_bytes: cx.mtu_bytes,
                blocking: sim.stack.hosts.settings.blocking_udp,
                sndbuf_bytes: sim.stack.hosts.settings.udp_sndbuf_bytes,
            };
            let rng = cx.rng(sim);
            sim.add_app(App::Udp(UdpSource::new(id, cfg, rng)), start);
        }
        Ok(())
    }

    /// Every source starts at a random phase.
    pub fn random_draw(&self) -> Option<String> {
        Some("each source's first message, at a uniform phase within one message gap".into())
    }
}
