//! The benchmark workloads behind `xco bench sim`, timed here so that
//! interpreter start-up is never part of the figure.
//!
//! (a) the pdn-goodput NewReno incast sweep (15 points, 20 rounds each)
//!     with the reference setup's TCP settings: MSS 1460 (no timestamps),
//!     a delayed ACK every 2 segments or after 200 ms, 100-byte requests;
//! (b) a k-ary fat-tree TCP permutation: 100 Gb/s links, 1 us per link,
//!     8-packet drop-tail queues, 1500 B packets, every host one long-lived
//!     flow to another host (a random permutation), 10 ms simulated.
//!
//! Either runs its switch ports with drop-tail (the default), RED or SFQ
//! ([`BenchQueue`]); the figures per event and per packet-hop then say
//! what a discipline costs (the traffic differs a little too: the
//! disciplines drop other packets).

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

/// The discipline of every switch port in a benchmark workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchQueue {
    /// Drop-tail (the workloads as they always were).
    DropTail,
    /// RED, thresholds at 1/6 and 1/2 of the buffer, the other settings Floyd & Jacobson's.
    Red,
    /// SFQ with Linux's shape (1024 buckets, one-frame quantum, depth 127), no perturbation.
    Sfq,
}

impl BenchQueue {
    /// Parse `droptail`, `red` or `sfq`.
    pub fn parse(s: &str) -> Result<BenchQueue, String> {
        match s {
            "droptail" => Ok(BenchQueue::DropTail),
            "red" => Ok(BenchQueue::Red),
            "sfq" => Ok(BenchQueue::Sfq),
            _ => Err(format!("unknown queue {s:?}; use droptail, red or sfq")),
        }
    }

    /// The name as parsed.
    pub fn name(self) -> &'static str {
        match self {
            BenchQueue::DropTail => "droptail",
            BenchQueue::Red => "red",
            BenchQueue::Sfq => "sfq",
        }
    }

    /// The `[topology]` line that selects it for switch ports of `buffer_bytes`
    /// (nothing for drop-tail, so those scenarios stay as they were).
    fn topology_line(self, buffer_bytes: u64) -> String {
        match self {
            BenchQueue::DropTail => String::new(),
            BenchQueue::Red => format!(
                "queue = {{ kind = \"red\", min_th = \"{}B\", max_th = \"{}B\" }}\n",
                buffer_bytes / 6,
                buffer_bytes / 2
            ),
            BenchQueue::Sfq => "queue = { kind = \"sfq\" }\n".into(),
        }
    }

    /// A suffix for workload names (empty for drop-tail).
    fn suffix(self) -> String {
        match self {
            BenchQueue::DropTail => String::new(),
            q => format!(", {} switch ports", q.name()),
        }
    }
}

/// The incast points of the reference sweep.
pub const PDN_POINTS: [usize; 15] = [2, 8, 16, 24, 28, 30, 31, 32, 48, 64, 72, 80, 96, 128, 150];

/// Scenario text of one pdn-goodput NewReno point (`n` servers, `rounds`
/// rounds) with the reference setup's TCP settings.
pub fn pdn_scenario(n: usize, rounds: u32) -> String {
    pdn_scenario_with(n, rounds, BenchQueue::DropTail)
}

/// [`pdn_scenario`] with switch ports running `queue`.
pub fn pdn_scenario_with(n: usize, rounds: u32, queue: BenchQueue) -> String {
    let q = queue.topology_line(300_000);
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
{q}[tcp]
rto_min_ms = 200
timestamps = false
delayed_ack = true
delayed_ack_timeout_ms = 200
[[apps]]
kind = "incast"
client = "b0"
servers = "a*"
sru = "10KB"
request = "100B"
rounds = {rounds}
[output]
timeseries_bin_us = 0
"#
    )
}

/// Run workload (a).
pub fn pdn_sweep(rounds: u32) -> Result<BenchResult, String> {
    pdn_sweep_with(rounds, BenchQueue::DropTail)
}

/// Run workload (a) with switch ports running `queue`.
pub fn pdn_sweep_with(rounds: u32, queue: BenchQueue) -> Result<BenchResult, String> {
    let t0 = Instant::now();
    let (mut sim_s, mut events, mut hops) = (0.0, 0, 0);
    for n in PDN_POINTS {
        let mut b = build(&pdn_scenario_with(n, rounds, queue), None).map_err(|e| e.to_string())?;
        let st = b.sim.run().map_err(|e| e.0)?;
        sim_s += st.end.as_secs_f64();
        events += st.events;
        hops += st.data_packet_hops;
    }
    Ok(BenchResult {
        name: format!(
            "pdn-goodput newreno sweep ({} points x {rounds} rounds){}",
            PDN_POINTS.len(),
            queue.suffix()
        ),
        wall_s: t0.elapsed().as_secs_f64(),
        sim_s,
        events,
        packet_hops: hops,
    })
}

/// Scenario text of the fat-tree permutation for `k`.
pub fn fattree_scenario(k: usize, sim_ms: f64, seed: u64) -> String {
    fattree_scenario_with(k, sim_ms, seed, BenchQueue::DropTail)
}

/// [`fattree_scenario`] with switch ports running `queue`.
pub fn fattree_scenario_with(k: usize, sim_ms: f64, seed: u64, queue: BenchQueue) -> String {
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
switch_buffer = "{buf}B"
host_buffer = "{buf}B"
{q}[tcp]
rto_min_ms = 1
handshake = false
[output]
timeseries_bin_us = 0
"#,
        buf = 8 * 1518,
        q = queue.topology_line(8 * 1518)
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
    fattree_permutation_with(k, sim_ms, BenchQueue::DropTail, "")
}

/// Run workload (b) for `k` with switch ports running `queue` and extra
/// `[tcp]` lines (e.g. `"sack = true"`) after its own, to measure what a
/// discipline or a TCP feature costs.
pub fn fattree_permutation_with(
    k: usize,
    sim_ms: f64,
    queue: BenchQueue,
    tcp_lines: &str,
) -> Result<BenchResult, String> {
    let text = fattree_scenario_with(k, sim_ms, 1, queue).replacen(
        "handshake = false\n",
        &format!("handshake = false\n{tcp_lines}\n"),
        1,
    );
    let t0 = Instant::now();
    let mut b = build(&text, None).map_err(|e| e.to_string())?;
    let st = b.sim.run().map_err(|e| e.0)?;
    Ok(BenchResult {
        name: format!(
            "fat-tree k={k} ({} hosts) TCP permutation, {sim_ms} ms{}",
            k * k * k / 4,
            queue.suffix()
        ),
        wall_s: t0.elapsed().as_secs_f64(),
        sim_s: st.end.as_secs_f64(),
        events: st.events,
        packet_hops: st.data_packet_hops,
    })
}

/// Figures of the scheduler benchmark.
#[derive(Clone, Debug)]
pub struct SchedBench {
    /// Fat-tree k.
    pub k: u32,
    /// Hosts.
    pub hosts: u32,
    /// Timeslice length, microseconds.
    pub slice_us: f64,
    /// Scheduling calls timed (reports, give-backs, slot boundaries).
    pub events: u64,
    /// Calls per wall-clock second.
    pub events_per_s: f64,
    /// Median time per call, microseconds.
    pub p50_us: f64,
    /// 99th percentile time per call, microseconds.
    pub p99_us: f64,
    /// Median time to process one slot boundary (all expiries of a slot), microseconds.
    pub slot_p50_us: f64,
    /// 99th percentile slot-boundary time, microseconds.
    pub slot_p99_us: f64,
    /// Worst slot-boundary time, microseconds.
    pub max_slot_us: f64,
    /// Mean senders scheduled per slot.
    pub mean_active: f64,
    /// Scheduler time per slot (every call of the slot: its churn and its
    /// boundary), median over slots, microseconds: below the slot length
    /// the scheduler keeps up on one core.
    pub busy_p50_us: f64,
    /// 99th percentile of the same.
    pub busy_p99_us: f64,
    /// Hosts considered by Algorithm 1 at a slot boundary, mean per slot.
    pub boundary_nodes_per_slot: f64,
    /// Hosts considered by Algorithm 1 in the churn between boundaries
    /// (summed over its runs), mean per slot.
    pub churn_nodes_per_slot: f64,
    /// Scheduler time per host considered (all timed time over all
    /// considerations), nanoseconds: the cost the 1-ms budget divides.
    pub ns_per_node: f64,
}

/// The XCo scheduler on a k-ary fat-tree (10 Gb/s everywhere, timeslices
/// of `slice_ms`) under random backlog churn for `slots` slots: in each
/// millisecond one host in 32 changes its backlog, by a new report (1–3
/// random destinations) or by giving its slice back, and the slot boundary
/// expires every slice. The churn is a rate, so a longer slice has more of
/// it per slot. Every scheduler call is timed. `slice_ms` is at least 1.
pub fn sched_churn(k: u32, slots: u32, seed: u64, slice_ms: u32) -> SchedBench {
    assert!(slice_ms >= 1, "a timeslice of at least 1 ms, got {slice_ms}");
    use xco_core::sched::{FatTreePaths, Mode, SchedConfig, SchedTopology, Scheduler};
    use xco_core::{Dur, Rng, Time};
    let paths = FatTreePaths::new(k);
    let hosts = paths.hosts();
    let links = paths.links() as usize;
    let g10 = 10_000_000_000;
    let topo = SchedTopology::new(vec![g10; hosts as usize], vec![g10; links], Box::new(paths));
    let mut s = Scheduler::new(
        topo,
        SchedConfig {
            mode: Mode::Timeslice,
            slice: Dur::from_ms(slice_ms as u64),
            min_active: Dur::from_us(50),
            feedback_timeout: None,
            lead: Dur::ZERO,
        },
    );
    let mut rng = Rng::new(seed);
    let mut times: Vec<f64> = Vec::new();
    let mut slot_times: Vec<f64> = Vec::new();
    let mut active_sum = 0u64;
    let timed = |f: &mut dyn FnMut(), times: &mut Vec<f64>| {
        let t0 = Instant::now();
        f();
        let us = t0.elapsed().as_secs_f64() * 1e6;
        times.push(us);
        us
    };
    // everybody starts backlogged
    for x in 0..hosts {
        let ds = random_dests(&mut rng, x, hosts);
        timed(&mut || s.handle_backlog(Time::ZERO, x, &ds), &mut times);
        while s.poll_directive().is_some() {}
    }
    let wall0 = Instant::now();
    let before = times.len();
    let mut busy: Vec<f64> = Vec::new();
    let (mut boundary_nodes, mut churn_nodes) = (0u64, 0u64);
    for slot in 1..=slots {
        let first_call = times.len();
        let considered = s.stats().nodes_considered;
        let slot_start = Time::ZERO + Dur::from_ms(slot as u64 * slice_ms as u64);
        // churn inside the slot, over its first 90%
        let churn = (hosts * slice_ms / 32).max(1);
        for i in 0..churn {
            let now = slot_start + Dur::from_us(1 + (i as u64 * 900 * slice_ms as u64) / churn as u64);
            let x = rng.below(hosts as u64) as u32;
            if rng.below(2) == 0 {
                if let Some(d) = s.dest(x) {
                    timed(&mut || s.handle_giveback(now, x, d), &mut times);
                }
            } else {
                let ds = random_dests(&mut rng, x, hosts);
                timed(&mut || s.handle_backlog(now, x, &[]), &mut times);
                timed(&mut || s.handle_backlog(now, x, &ds), &mut times);
            }
            while s.poll_directive().is_some() {}
        }
        // the slot boundary: every slice granted a slot ago expires together
        let end = slot_start + Dur::from_ms(slice_ms as u64);
        let at_boundary = s.stats().nodes_considered;
        churn_nodes += at_boundary - considered;
        let us = timed(&mut || s.handle_timeout(end), &mut times);
        boundary_nodes += s.stats().nodes_considered - at_boundary;
        slot_times.push(us);
        busy.push(times[first_call..].iter().sum());
        while s.poll_directive().is_some() {}
        active_sum += (0..hosts).filter(|&x| s.dest(x).is_some()).count() as u64;
    }
    let wall = wall0.elapsed().as_secs_f64();
    let events = (times.len() - before) as u64;
    let mut calls = times[before..].to_vec();
    for v in [&mut calls, &mut slot_times, &mut busy] {
        v.sort_by(|a, b| a.total_cmp(b));
    }
    let q = |p: f64| quantile(&calls, p);
    let sq = |p: f64| quantile(&slot_times, p);
    let bq = |p: f64| quantile(&busy, p);
    SchedBench {
        k,
        hosts,
        slice_us: 1e3 * slice_ms as f64,
        events,
        events_per_s: events as f64 / wall,
        p50_us: q(0.5),
        p99_us: q(0.99),
        slot_p50_us: sq(0.5),
        slot_p99_us: sq(0.99),
        max_slot_us: sq(1.0),
        mean_active: active_sum as f64 / slots as f64,
        busy_p50_us: bq(0.5),
        busy_p99_us: bq(0.99),
        boundary_nodes_per_slot: boundary_nodes as f64 / slots as f64,
        churn_nodes_per_slot: churn_nodes as f64 / slots as f64,
        ns_per_node: 1e3 * calls.iter().sum::<f64>() / (boundary_nodes + churn_nodes).max(1) as f64,
    }
}

/// A backlog report of the scheduler benchmark: 1–3 random destinations
/// for host `x` among `hosts` (never `x` itself; `hosts` at least 2).
pub fn random_dests(rng: &mut xco_core::Rng, x: u32, hosts: u32) -> Vec<u32> {
    let n = 1 + rng.below(3);
    (0..n)
        .map(|_| (x + 1 + rng.below(hosts as u64 - 1) as u32) % hosts)
        .collect()
}

/// The `p` quantile (0 to 1) of `sorted`, which is sorted and not empty.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    sorted[((p * sorted.len() as f64) as usize).min(sorted.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_tail_workloads_are_unchanged_and_the_others_run_their_discipline() {
        use crate::net::qdisc::Qdisc;
        assert!(!pdn_scenario(8, 2).contains("queue"));
        assert!(!fattree_scenario(4, 1.0, 1).contains("queue"));
        for (q, want) in [(BenchQueue::Red, "fifo"), (BenchQueue::Sfq, "scheduled")] {
            for text in [pdn_scenario_with(8, 2, q), fattree_scenario_with(4, 1.0, 1, q)] {
                let b = build(&text, None).unwrap();
                let net = &b.sim.cx.net;
                let sw = net
                    .nodes
                    .iter()
                    .position(|n| n.name.starts_with('s') || n.name.starts_with('e'))
                    .unwrap() as u32;
                for p in net.ports.iter().filter(|p| p.from == sw) {
                    let got = match p.qdisc() {
                        Qdisc::DropTail(_) => "droptail",
                        Qdisc::Fifo(_) => "fifo",
                        Qdisc::Scheduled(_) => "scheduled",
                    };
                    assert_eq!(got, want, "{}", q.name());
                }
            }
            assert_eq!(BenchQueue::parse(q.name()), Ok(q));
        }
        assert!(BenchQueue::parse("fq").is_err());
    }

    #[test]
    fn a_slot_busy_time_includes_its_boundary() {
        let r = sched_churn(4, 30, 1, 1);
        // each slot's busy time is its churn calls plus its boundary call,
        // so every quantile of it is at least the boundary's
        assert!(r.busy_p50_us >= r.slot_p50_us, "{r:?}");
        assert!(r.busy_p99_us >= r.slot_p99_us, "{r:?}");
        assert!(r.busy_p99_us >= r.busy_p50_us && r.busy_p50_us > 0.0, "{r:?}");
        // every backlogged host is considered at a boundary (16 hosts)
        assert!(
            r.boundary_nodes_per_slot > 8.0 && r.boundary_nodes_per_slot <= 16.0,
            "{r:?}"
        );
        assert!(r.ns_per_node > 0.0, "{r:?}");
    }

    #[test]
    fn the_churn_is_a_rate_so_a_longer_slice_has_more_of_it() {
        let (short, long) = (sched_churn(8, 30, 1, 1), sched_churn(8, 30, 1, 4));
        assert_eq!((short.slice_us, long.slice_us), (1e3, 4e3));
        // 4 vs 16 churn events a slot (128 hosts): about four times the calls
        assert!(long.events > 2 * short.events, "{short:?}\n{long:?}");
        assert!(long.busy_p50_us >= long.slot_p50_us, "{long:?}");
    }
}

/// One size of SICC's tree-building benchmark (`sicc-treetime`).
#[derive(Clone, Debug)]
pub struct TreeTimes {
    /// Target servers per request.
    pub targets: u32,
    /// N (eq 1 at the evaluation's setting: 66).
    pub max_children: u32,
    /// Hubs of the last instance built.
    pub hubs: u32,
    /// Depth of the last instance's tree.
    pub depth: u32,
    /// Wall time of every build (swarms and Algorithm 1), ns, in build order.
    pub build_ns: Vec<u64>,
}

/// Servers of the SICC scalability data center, 60 per rack.
pub const SICC_SERVERS: u32 = 150_000;
/// Servers per rack there.
pub const SICC_PER_RACK: u32 = 60;

/// One random SICC request: `count` distinct target servers drawn from
/// `ids` (all server ids, shuffled further in place: a partial
/// Fisher-Yates, so successive calls draw fresh sets), each holding 1–10
/// requested objects, `racks_per_agg` racks per aggregation router.
pub fn sicc_instance(
    rng: &mut xco_core::Rng,
    ids: &mut [u32],
    count: u32,
    racks_per_agg: u32,
) -> Vec<xco_core::sicc::Target> {
    for i in 0..count as usize {
        let j = i + rng.below((ids.len() - i) as u64) as usize;
        ids.swap(i, j);
    }
    ids[..count as usize]
        .iter()
        .map(|&server| {
            let rack = server / SICC_PER_RACK;
            xco_core::sicc::Target {
                server,
                rack,
                agg: rack / racks_per_agg,
                objects: rng.range_inclusive(1, 10) as u32,
            }
        })
        .collect()
}

/// Time SICC's tree building (swarms and Algorithm 1, `xco_core::sicc::AggTree`)
/// for `targets` target servers of the paper's scalability data center
/// (150,000 servers, 60 per rack, `racks_per_agg` racks per aggregation
/// router), each holding 1–10 requested objects, N = 66 (eq 1 at a 100-KB
/// edge buffer, 1,500-B packets, equal links, one request at a time):
/// `instances` random instances from `seed`, each built `reps` times after a
/// warm-up build, every build timed alone. The instances are deterministic
/// in `seed`; the times are this machine's (`crates/xco-bench/examples/sicc_treetime.rs`
/// is the same measurement without Python).
pub fn sicc_tree_times(
    targets: u32,
    racks_per_agg: u32,
    instances: u32,
    reps: u32,
    seed: u64,
) -> Result<TreeTimes, String> {
    use xco_core::sicc::{hubs_per_request, max_hubs_at_once, AggTree, TreeConfig, UplinkReading};
    const SERVERS: u32 = SICC_SERVERS;
    const PER_RACK: u32 = SICC_PER_RACK;
    if targets == 0 || targets > SERVERS {
        return Err(format!("targets must be from 1 to {SERVERS}, got {targets}"));
    }
    if racks_per_agg == 0 || racks_per_agg > SERVERS / PER_RACK {
        return Err(format!(
            "racks_per_agg must be from 1 to {}, got {racks_per_agg}",
            SERVERS / PER_RACK
        ));
    }
    let n = hubs_per_request(
        max_hubs_at_once(
            100_000,
            1_500,
            1_000_000_000,
            1_000_000_000,
            UplinkReading::OverDownlink,
        ),
        1,
    );
    let cfg = TreeConfig::new(n);
    let mut rng = xco_core::Rng::new(seed);
    let mut ids: Vec<u32> = (0..SERVERS).collect();
    let mut tree = AggTree::new();
    let mut out = TreeTimes {
        targets,
        max_children: n,
        hubs: 0,
        depth: 0,
        build_ns: Vec::with_capacity((instances * reps) as usize),
    };
    for _ in 0..instances {
        let t = sicc_instance(&mut rng, &mut ids, targets, racks_per_agg);
        let mut build_rng = xco_core::Rng::new(seed);
        tree.build(&t, &cfg, &mut build_rng).map_err(|e| e.to_string())?; // warm-up
        for _ in 0..reps {
            let start = Instant::now();
            tree.build(&t, &cfg, &mut build_rng).map_err(|e| e.to_string())?;
            out.build_ns.push(start.elapsed().as_nanos() as u64);
        }
        out.hubs = tree.hubs() as u32;
        out.depth = tree.max_depth();
    }
    Ok(out)
}
