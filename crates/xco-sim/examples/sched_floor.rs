//! `cargo run --release -p xco-sim --example sched_floor [k...]`: the floor
//! under `xco bench sched` — what one bare greedy pass over the same kind
//! of backlog costs on this machine.
//!
//! Every host of a k-ary fat-tree has 1–3 random destinations (the
//! benchmark's `random_dests`), each flow an age; one pass sorts the hosts by their oldest
//! flow and gives each, in that order, its oldest flow whose path has room
//! on every link (10 Gb/s everywhere, so one sender per link). That is the
//! core of a slot boundary and nothing else: no reservations, no
//! preemption, no service history, no directives, no release of the
//! previous slot. The scheduler's own boundary cannot be cheaper than this;
//! the distance between the two is what a leaner implementation could win.
use std::time::Instant;
use xco_core::sched::{FatTreePaths, PathProvider};
use xco_core::Rng;

/// One backlogged flow: its age and its path.
#[derive(Clone, Copy, Default)]
struct Flow {
    wait_ps: u64,
    links: [u32; 6],
    len: u8,
}

fn floor(k: u32) {
    let mut paths = FatTreePaths::new(k);
    let hosts = paths.hosts();
    let mut rng = Rng::new(1);
    let mut flows: Vec<Vec<Flow>> = Vec::with_capacity(hosts as usize);
    let mut path = Vec::new();
    for x in 0..hosts {
        let fs = xco_sim::bench::random_dests(&mut rng, x, hosts)
            .into_iter()
            .map(|d| {
                path.clear();
                paths.path(x, d, &mut path);
                let mut f = Flow {
                    wait_ps: rng.below(1 << 40),
                    len: path.len() as u8,
                    ..Flow::default()
                };
                f.links[..path.len()].copy_from_slice(&path);
                f
            })
            .collect();
        flows.push(fs);
    }
    let link_bps = 10_000_000_000u64;
    let mut free_bps = vec![link_bps; paths.links() as usize];
    let (mut best_sort, mut best_pass, mut grants) = (f64::MAX, f64::MAX, 0);
    for _ in 0..50 {
        free_bps.fill(link_bps);
        let t0 = Instant::now();
        let oldest = |fs: &[Flow]| fs.iter().map(|f| f.wait_ps).min().unwrap_or(u64::MAX);
        let mut order: Vec<(u64, u32)> = (0..hosts).map(|x| (oldest(&flows[x as usize]), x)).collect();
        order.sort_unstable();
        let t1 = Instant::now();
        grants = 0;
        for &(_, x) in &order {
            let (mut best, mut best_wait) = (usize::MAX, u64::MAX);
            for (j, f) in flows[x as usize].iter().enumerate() {
                let mut fits = true;
                for &l in &f.links[..f.len as usize] {
                    fits &= free_bps[l as usize] >= link_bps;
                }
                let take = fits & (f.wait_ps < best_wait);
                best = if take { j } else { best };
                best_wait = if take { f.wait_ps } else { best_wait };
            }
            if let Some(f) = flows[x as usize].get(best) {
                for &l in &f.links[..f.len as usize] {
                    free_bps[l as usize] -= link_bps;
                }
                grants += 1;
            }
        }
        let t2 = Instant::now();
        best_sort = best_sort.min((t1 - t0).as_secs_f64() * 1e6);
        best_pass = best_pass.min((t2 - t1).as_secs_f64() * 1e6);
        // the next slot: the served flows and a few others are younger
        for fs in flows.iter_mut().step_by(2) {
            fs[0].wait_ps = rng.below(1 << 40);
        }
    }
    println!(
        "k={k} ({hosts} hosts): bare greedy pass, best of 50: keys and sort {best_sort:.0} us + pass {best_pass:.0} us ({:.0} ns per host); {grants} senders",
        1e3 * best_pass / hosts as f64
    );
}

fn main() {
    let ks: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    for k in if ks.is_empty() { vec![8, 16, 32] } else { ks } {
        floor(k);
    }
}
