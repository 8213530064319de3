//! `[topology] kind = "tree3"`: reading a three-tier tree from the scenario
//! (racks of servers under ToR switches, ToRs under aggregation switches,
//! cores on top; `net::topology::Tree3` builds it). The ToR
//! over-subscription is a ratio of rates, met by a whole number of ToR
//! uplinks: servers per rack × edge rate = ratio × uplinks × uplink rate.

use super::limits::{self, MAX_HOSTS};
use super::schema::{Ratio, TopologySpec};
use super::units::{bytes, rate_bps};
use super::ScenarioError;
use crate::net::topology::{Topology, Tree3};
use xco_core::Dur;

/// The largest number of switches of one tier (and parallel uplinks of a ToR).
const MAX_SWITCHES: usize = 100_000;

fn need(v: Option<usize>, field: &str, max: usize) -> Result<usize, ScenarioError> {
    match v {
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(ScenarioError::field(
            field,
            format!("must be between 1 and {max}, got {n}"),
        )),
        None => Err(ScenarioError::field(
            field,
            "is required for kind = \"tree3\"".into(),
        )),
    }
}

/// The over-subscription as the number x of "1:x".
fn ratio(r: &Ratio, field: &str) -> Result<f64, ScenarioError> {
    let x = match r {
        Ratio::Num(x) => *x,
        Ratio::Text(s) => {
            let bad =
                || ScenarioError::field(field, format!("cannot read {s:?} as a ratio; write e.g. \"1:4\""));
            let (a, b) = s.split_once(':').ok_or_else(bad)?;
            let a: f64 = a.trim().parse().map_err(|_| bad())?;
            let b: f64 = b.trim().parse().map_err(|_| bad())?;
            if a <= 0.0 {
                return Err(bad());
            }
            b / a
        }
    };
    if !(x.is_finite() && (1.0..=1e6).contains(&x)) {
        return Err(ScenarioError::field(
            field,
            format!("must be 1:1 or more over-subscribed (1:x, x from 1 to 1e6), got 1:{x}"),
        ));
    }
    Ok(x)
}

fn buffer(q: &Option<super::units::Quantity>, field: &str, default: u64) -> Result<u64, ScenarioError> {
    let b = match q {
        Some(q) => bytes(q, field)?,
        None => default,
    };
    if b == 0 {
        return Err(ScenarioError::field(field, "must be a positive size".into()));
    }
    Ok(b)
}

/// The tree3 of `t`; `host_rate_bps` is `topology.host_rate`, `switch_buffer_bytes` the default buffer.
pub fn tree3(
    t: &TopologySpec,
    host_rate_bps: u64,
    switch_buffer_bytes: u64,
    delay: Dur,
) -> Result<Topology, ScenarioError> {
    let spr = need(t.servers_per_rack, "topology.servers_per_rack", MAX_HOSTS)?;
    let racks = need(t.racks, "topology.racks", MAX_SWITCHES)?;
    let rpa = need(t.racks_per_agg, "topology.racks_per_agg", MAX_SWITCHES)?;
    let cores = need(Some(t.cores.unwrap_or(1)), "topology.cores", MAX_SWITCHES)?;
    if spr.saturating_mul(racks) > MAX_HOSTS {
        return Err(ScenarioError::field(
            "topology.racks",
            format!(
                "servers_per_rack x racks must be at most {MAX_HOSTS}, got {}",
                spr * racks
            ),
        ));
    }
    if racks % rpa != 0 {
        return Err(ScenarioError::field(
            "topology.racks_per_agg",
            format!("must divide topology.racks ({racks}), got {rpa}"),
        ));
    }
    let up_bps = match &t.tor_uplink_rate {
        Some(q) => rate_bps(q, "topology.tor_uplink_rate")?,
        None => host_rate_bps,
    };
    let core_bps = match &t.agg_core_rate {
        Some(q) => rate_bps(q, "topology.agg_core_rate")?,
        None => up_bps,
    };
    let x = match &t.tor_oversubscription {
        Some(r) => ratio(r, "topology.tor_oversubscription")?,
        None => 1.0,
    };
    // servers' rate over x, in uplinks of up_bps: must be whole
    let links = spr as f64 * host_rate_bps as f64 / (x * up_bps as f64);
    let whole = links.round();
    if whole < 1.0 || (links - whole).abs() > 1e-9 * links.max(1.0) || whole > MAX_SWITCHES as f64 {
        return Err(ScenarioError::field(
            "topology.tor_oversubscription",
            format!(
                "1:{x} needs {links} uplinks of {up_bps} bit/s per rack ({spr} servers at {host_rate_bps} bit/s); \
                 only a whole number from 1 to {MAX_SWITCHES} can be built (change tor_uplink_rate)"
            ),
        ));
    }
    let s = Tree3 {
        servers_per_rack: spr,
        racks,
        racks_per_agg: rpa,
        cores,
        edge_rate_bps: host_rate_bps,
        tor_uplinks: whole as usize,
        tor_uplink_rate_bps: up_bps,
        agg_core_rate_bps: core_bps,
        edge_buffer_bytes: buffer(&t.edge_buffer, "topology.edge_buffer", switch_buffer_bytes)?,
        agg_buffer_bytes: buffer(&t.agg_buffer, "topology.agg_buffer", switch_buffer_bytes)?,
        core_buffer_bytes: buffer(&t.core_buffer, "topology.core_buffer", switch_buffer_bytes)?,
    };
    let n_links = racks * (spr + s.tor_uplinks) + racks / rpa * cores;
    if n_links > limits::MAX_LINKS {
        return Err(ScenarioError::field(
            "topology.racks",
            format!(
                "the tree has {n_links} links; at most {} are allowed",
                limits::MAX_LINKS
            ),
        ));
    }
    Ok(Topology::tree3(&s, delay))
}
