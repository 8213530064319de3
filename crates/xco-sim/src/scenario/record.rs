//! The record of what a run actually ran, for `meta.json` (the record itself,
//! [`RunRecord`], is output's: [`crate::output::meta`] writes it).
//!
//! Not the file's text: the scenario as the simulator read it, after every
//! override (the seed given on the command line, a sweep's changes), the seed
//! and where it came from, and the random draws the scenario makes. A seed
//! that changes nothing must not look like a replicate, so a scenario without
//! random draws says so.

use super::schema::Scenario;
use crate::net::topology::{NodeKind, Topology};
use serde_json::Value;

pub use crate::output::meta::{RunRecord, SeedSource};

impl RunRecord {
    /// The record of scenario `sc` (read from `text`) run with `seed`.
    pub fn new(text: &str, sc: &Scenario, topo: &Topology, seed: u64, seed_source: SeedSource) -> RunRecord {
        let mut scenario = toml::from_str::<toml::Table>(text)
            .ok()
            .and_then(|t| serde_json::to_value(t).ok())
            .unwrap_or(Value::Null);
        if let Value::Object(top) = &mut scenario {
            let run = top
                .entry("run")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Value::Object(run) = run {
                run.insert("seed".into(), Value::from(seed));
            }
        }
        RunRecord {
            name: sc.name.clone().unwrap_or_else(|| "scenario".into()),
            seed,
            seed_source,
            scenario,
            random_draws: random_draws(sc, topo),
        }
    }
}

/// The random draws of scenario `sc` on `topo`, one sentence each.
pub fn random_draws(sc: &Scenario, topo: &Topology) -> Vec<String> {
    let mut out = Vec::new();
    if sc.xco.is_none() {
        match multipath(topo) {
            Some(true) => out.push(
                "ECMP: each flow's path among equal-cost paths is a hash of the seed and the flow".into(),
            ),
            None => out.push(
                "ECMP: the topology is too large to check for equal-cost paths; where there are any, \
                 each flow's path is a hash of the seed and the flow"
                    .into(),
            ),
            Some(false) => {}
        }
    }
    for (key, v) in [
        ("host_jitter_us", sc.topology.host_jitter_us),
        ("switch_jitter_us", sc.topology.switch_jitter_us),
    ] {
        if v.is_some_and(|us| us > 0.0) {
            out.push(format!(
                "topology.{key}: each frame's extra delay on its link is drawn from its port's stream of the seed"
            ));
        }
    }
    out.extend(sc.topology.queues.random_draws());
    for (i, a) in sc.apps.iter().enumerate() {
        if let Some(draw) = a.random_draw() {
            out.push(format!("apps[{i}] ({}): {draw}", a.kind()));
        }
    }
    out
}

/// Work above which [`multipath`] gives up (host count times graph size).
const MULTIPATH_WORK_MAX: usize = 20_000_000;

/// True if two hosts have more than one shortest path through switches (so
/// ECMP picks among them); `None` when the topology is too large to check.
pub fn multipath(topo: &Topology) -> Option<bool> {
    let n = topo.nodes.len();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for l in &topo.links {
        adj[l.a].push(l.b);
        adj[l.b].push(l.a);
    }
    let hosts = topo.hosts();
    if hosts.len().saturating_mul(n + 2 * topo.links.len()) > MULTIPATH_WORK_MAX {
        return None;
    }
    let mut dist = vec![u32::MAX; n];
    let mut paths = vec![0u8; n];
    let mut queue = std::collections::VecDeque::new();
    for &src in &hosts {
        dist.iter_mut().for_each(|d| *d = u32::MAX);
        paths.iter_mut().for_each(|p| *p = 0);
        dist[src] = 0;
        paths[src] = 1;
        queue.push_back(src);
        while let Some(u) = queue.pop_front() {
            // paths continue through switches only (as routing does)
            if u != src && topo.nodes[u].kind == NodeKind::Host {
                continue;
            }
            for &v in &adj[u] {
                if dist[v] == u32::MAX {
                    dist[v] = dist[u] + 1;
                    queue.push_back(v);
                }
                if dist[v] == dist[u] + 1 {
                    paths[v] = paths[v].saturating_add(paths[u]).min(2);
                }
            }
        }
        if hosts.iter().any(|&h| h != src && paths[h] >= 2) {
            return Some(true);
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xco_core::Dur;

    #[test]
    fn fat_trees_have_equal_cost_paths_and_stars_do_not() {
        let d = Dur::from_us(1);
        assert_eq!(multipath(&Topology::star(8, 1, d)), Some(false));
        assert_eq!(multipath(&Topology::two_switch(3, 2, 1, 1, 1, d)), Some(false));
        assert_eq!(multipath(&Topology::fat_tree(4, 1, d)), Some(true));
        assert_eq!(multipath(&Topology::fat_tree(2, 1, d)), Some(false));
    }
}
