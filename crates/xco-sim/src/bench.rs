//! The benchmark workloads behind `xco bench sim`, timed here so that
//! interpreter start-up is never part of the figure.
//!
//! (a) the pdn-goodput NewReno incast sweep (15 points, 20 rounds each);
//! (b) a k-ary fat-tree TCP permutation: 100 Gb/s links, 1 us per link,
//!     8-packet drop-tail queues, 1500 B packets, every host one long-lived
//!     flow to another host (a random permutation), 10 ms simulated.

use crate::scenario::build;
use std::time::Instant;

/// Figures of one benchmark run.
#[derive(Clone, Debug)]
pub struct BenchResult {
    /// Workload name.
    pub name: String,
    /// Wall-clock seconds of simulation (building included, interpreter excluded).
    pub wall_s: f64,
    /// Simulated seconds (summed over runs of a sweep).
    pub sim_s: f64,
    /// Events handled.
    pub events: u64,
    /// Data packets that crossed a link.
    pub packet_hops: u64,
}

impl BenchResult {
    /// Events per wall-clock second.
    pub fn events_per_s(&self) -> f64 {
        self.events as f64 / self.wall_s
    }
    /// Data packet-hops per wall-clock second.
    pub fn hops_per_s(&self) -> f64 {
        self.packet_hops as f64 / self.wall_s
    }
}

/// The incast points of the reference sweep.
pub const PDN_POINTS: [usize; 15] = [2, 8, 16, 24, 28, 30, 31, 32, 48, 64, 72, 80, 96, 128, 150];

/// Scenario text of one pdn-goodput NewReno point (`n` servers, `rounds` rounds).
pub fn pdn_scenario(n: usize, rounds: u32) -> String {
    format!(
        r#"name = "pdn-goodput-newreno-{n}"
[run]
seed = 1
[topology]
kind = "two_switch"
hosts_a = {n}
hosts_b = 1
host_rate = "1Gbps"
link_delay_us = 16.667
switch_buffer = "300KB"
[tcp]
rto_min_ms = 200
[[apps]]
kind = "incast"
client = "b0"
servers = "a*"
sru = "10KB"
request = 64
rounds = {rounds}
[output]
timeseries_bin_us = 0
"#
    )
}

/// Run workload (a).
pub fn pdn_sweep(rounds: u32) -> Result<BenchResult, String> {
    let t0 = Instant::now();
    let (mut sim_s, mut events, mut hops) = (0.0, 0, 0);
    for n in PDN_POINTS {
        let mut b = build(&pdn_scenario(n, rounds), None).map_err(|e| e.to_string())?;
        let st = b.sim.run().map_err(|e| e.0)?;
        sim_s += st.end.as_secs_f64();
        events += st.events;
        hops += st.data_packet_hops;
    }
    Ok(BenchResult {
        name: format!(
            "pdn-goodput newreno sweep ({} points x {rounds} rounds)",
            PDN_POINTS.len()
        ),
        wall_s: t0.elapsed().as_secs_f64(),
        sim_s,
        events,
        packet_hops: hops,
    })
}

/// Scenario text of the fat-tree permutation for `k`.
pub fn fattree_scenario(k: usize, sim_ms: f64, seed: u64) -> String {
    let hosts = k * k * k / 4;
    // a random derangement-ish permutation from the seed: shift by a random offset per block
    let mut rng = xco_core::Rng::new(seed);
    let mut perm: Vec<usize> = (0..hosts).collect();
    for i in (1..hosts).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        perm.swap(i, j);
    }
    for i in 0..hosts {
        if perm[i] == i {
            let j = (i + 1) % hosts;
            perm.swap(i, j);
        }
    }
    let mut s = format!(
        r#"name = "fattree-permutation-k{k}"
[run]
seed = {seed}
duration_ms = {sim_ms}
mtu_bytes = 1500
[topology]
kind = "fat_tree"
k = {k}
host_rate = "100Gbps"
link_delay_us = 1
switch_buffer = {buf}
host_buffer = {buf}
[tcp]
rto_min_ms = 1
handshake = false
[output]
timeseries_bin_us = 0
"#,
        buf = 8 * 1518
    );
    for (i, &d) in perm.iter().enumerate() {
        s.push_str(&format!(
            "[[apps]]\nkind = \"bulk\"\nsrc = \"h{i}\"\ndst = \"h{d}\"\n"
        ));
    }
    s
}

/// Run workload (b) for `k`.
pub fn fattree_permutation(k: usize, sim_ms: f64) -> Result<BenchResult, String> {
    let text = fattree_scenario(k, sim_ms, 1);
    let t0 = Instant::now();
    let mut b = build(&text, None).map_err(|e| e.to_string())?;
    let st = b.sim.run().map_err(|e| e.0)?;
    Ok(BenchResult {
        name: format!(
            "fat-tree k={k} ({} hosts) TCP permutation, {sim_ms} ms",
            k * k * k / 4
        ),
        wall_s: t0.elapsed().as_secs_f64(),
        sim_s: st.end.as_secs_f64(),
        events: st.events,
        packet_hops: st.data_packet_hops,
    })
}
