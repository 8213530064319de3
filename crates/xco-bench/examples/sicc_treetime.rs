//! `cargo run --release -p xco-bench --example sicc_treetime [--n N] [--racks-per-agg R] [--reps K] [--targets T]`:
//! how long SICC's tree building (Algorithm 1, swarms included) takes for
//! 1,000, 10,000 and 50,000 target servers on one core.
//!
//! The data center is the paper's scalability setup: 50 × 3,000 = 150,000
//! servers, 60 per rack (2,500 racks), R racks per aggregation router
//! (default 50); each target server, drawn at random without repetition,
//! holds 1–10 requested objects (uniform). N defaults to eq 1 at the
//! evaluation's setting: 100-KB edge buffer, 1,500-B packets, equal 1-Gbps
//! links, one request per front-end: 66. Eight instances per size are
//! built in turn; every build is timed alone (after a warm-up) and the
//! minimum, median, p99 and mean are printed (the minimum is the figure
//! least disturbed by other work on a shared machine), with the swarm
//! grouping alone (the linear part) beside them. `root` counts the
//! front-end's children, `over_n` the hubs that took more than N children
//! because every hub of their router was full, `max_kids` the most
//! children of any hub. The target: at most 1 ms at 50,000.
use std::time::Instant;
use xco_core::sicc::{
    hubs_per_request, max_hubs_at_once, AggTree, Swarms, Target, TreeConfig, UplinkReading,
};
use xco_core::Rng;
use xco_sim::bench::{sicc_instance, SICC_PER_RACK as PER_RACK, SICC_SERVERS as SERVERS};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn arg(args: &[String], name: &str) -> Option<u32> {
    let i = args.iter().position(|a| a == name)?;
    Some(
        args.get(i + 1)?
            .parse()
            .unwrap_or_else(|_| panic!("{name} takes a number")),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let m = max_hubs_at_once(
        100_000,
        1500,
        1_000_000_000,
        1_000_000_000,
        UplinkReading::OverDownlink,
    );
    let n = arg(&args, "--n").unwrap_or(hubs_per_request(m, 1));
    let racks_per_agg = arg(&args, "--racks-per-agg").unwrap_or(50).max(1);
    let reps = arg(&args, "--reps");
    println!(
        "SICC tree building: {SERVERS} servers, {PER_RACK} per rack, {racks_per_agg} racks per aggregation router, N = {n}"
    );
    println!(
        "{:>8} {:>6} {:>6} {:>6} {:>7} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "targets",
        "hubs",
        "root",
        "depth",
        "over_n",
        "max_kids",
        "builds",
        "min_us",
        "median_us",
        "p99_us",
        "mean_us",
        "swarms_med_us"
    );
    let cfg = TreeConfig::new(n);
    let sizes: Vec<u32> = match arg(&args, "--targets") {
        Some(t) => vec![t],
        None => vec![1_000, 10_000, 50_000],
    };
    for &count in &sizes {
        let mut rng = Rng::stream(7, count as u64);
        let mut ids: Vec<u32> = (0..SERVERS).collect();
        let sets: Vec<Vec<Target>> = (0..8)
            .map(|_| sicc_instance(&mut rng, &mut ids, count, racks_per_agg))
            .collect();
        let builds = reps.unwrap_or(match count {
            1_000 => 20_000,
            10_000 => 5_000,
            _ => 2_000,
        }) as usize;
        let mut tree = AggTree::new();
        let mut swarms = Swarms::new();
        for s in &sets {
            tree.build(s, &cfg, &mut rng).expect("valid targets");
            swarms.build(s).expect("valid targets");
        }
        let mut tree_us = Vec::with_capacity(builds);
        let mut swarm_us = Vec::with_capacity(builds);
        for i in 0..builds {
            let s = &sets[i % sets.len()];
            let t0 = Instant::now();
            tree.build(s, &cfg, &mut rng).expect("valid targets");
            tree_us.push(t0.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(tree.root_children().len());
            let t0 = Instant::now();
            swarms.build(s).expect("valid targets");
            swarm_us.push(t0.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(swarms.len());
        }
        let mean = tree_us.iter().sum::<f64>() / builds as f64;
        tree_us.sort_by(f64::total_cmp);
        swarm_us.sort_by(f64::total_cmp);
        let kids = |x: u32| tree.children(x).len() as u32;
        println!(
            "{:>8} {:>6} {:>6} {:>6} {:>7} {:>8} {:>8} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>12.1}",
            count,
            tree.hubs(),
            tree.root_children().len(),
            tree.max_depth(),
            (0..tree.hubs() as u32).filter(|&x| kids(x) > n).count(),
            (0..tree.hubs() as u32).map(kids).max().unwrap_or(0),
            builds,
            tree_us[0],
            percentile(&tree_us, 0.5),
            percentile(&tree_us, 0.99),
            mean,
            percentile(&swarm_us, 0.5),
        );
    }
}
