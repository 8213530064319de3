//! `cargo run --release -p xco-bench --example sched_floor [k...]`: the floor
//! under `xco bench sched` — what one greedy pass over the same kind of
//! backlog costs on this machine when written as leanly as it can be.
//!
//! Every host of a k-ary fat-tree has 1–3 random destinations (the
//! benchmark's `random_dests`), each flow an age; one pass sorts the hosts
//! by their oldest flow and gives each, in that order, its oldest flow
//! whose path has room on every link (10 Gb/s everywhere, so one sender
//! per link). Two variants:
//! - *bare*: that and nothing else (no reservations, no preemption, no
//!   service history, no directives, no release of the previous slot);
//! - *with reservations*: also the core of the scheduler's anti-starvation
//!   rule — a link held by another node's starving flow does not fit, a
//!   host's oldest flow that has waited more than two slices and was not
//!   chosen reserves its path unless an older reservation holds a link of
//!   it (taking links over from younger holders, without the scheduler's
//!   clean-up of their other links), and a granted flow ends its own
//!   reservations and becomes the youngest.
//!
//! The scheduler's own boundary cannot be cheaper than the second; the
//! distance between the two is what a leaner implementation could win.
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

const NOBODY: u32 = u32::MAX;
const SLICE_PS: u64 = 1_000_000_000;
/// Every link and every host: one sender fills a link.
const LINK_BPS: u64 = 10_000_000_000;

/// The link state of the variant with reservations.
struct Held {
    by: Vec<u32>,
    since_ps: Vec<u64>,
}

/// A host's oldest flow whose whole path passes `fits` (`usize::MAX`: none)
/// and its oldest flow with that flow's age, in one branch-free pass. The
/// bare pass ignores the second; inlined, its work is dropped.
#[inline(always)]
fn choose(fs: &[Flow], fits: impl Fn(u32) -> bool) -> (usize, usize, u64) {
    let (mut best, mut best_wait) = (usize::MAX, u64::MAX);
    let (mut j0, mut w0) = (0, u64::MAX);
    for (j, f) in fs.iter().enumerate() {
        let mut ok = true;
        for &l in &f.links[..f.len as usize] {
            ok &= fits(l);
        }
        let older = f.wait_ps < w0;
        j0 = if older { j } else { j0 };
        w0 = if older { f.wait_ps } else { w0 };
        let take = ok & (f.wait_ps < best_wait);
        best = if take { j } else { best };
        best_wait = if take { f.wait_ps } else { best_wait };
    }
    (best, j0, w0)
}

/// The bare pass in the order of `order`; returns the number of grants.
fn pass_bare(order: &[(u64, u32)], flows: &[Vec<Flow>], free_bps: &mut [u64]) -> u32 {
    let mut grants = 0;
    for &(_, x) in order {
        let fs = &flows[x as usize];
        let (best, _, _) = choose(fs, |l| free_bps[l as usize] >= LINK_BPS);
        if let Some(f) = fs.get(best) {
            for &l in &f.links[..f.len as usize] {
                free_bps[l as usize] -= LINK_BPS;
            }
            grants += 1;
        }
    }
    grants
}

/// The pass with reservations at `now_ps`; returns the number of grants.
fn pass_reserving(
    order: &[(u64, u32)],
    flows: &mut [Vec<Flow>],
    free_bps: &mut [u64],
    h: &mut Held,
    now_ps: u64,
) -> u32 {
    let mut grants = 0;
    for &(_, x) in order {
        let fs = &mut flows[x as usize];
        let (best, j0, w0) = choose(fs, |l| {
            let by = h.by[l as usize];
            (free_bps[l as usize] >= LINK_BPS) & ((by == NOBODY) | (by == x))
        });
        if j0 != best && now_ps.saturating_sub(w0) > 2 * SLICE_PS {
            let f = fs[j0];
            let mut behind = false;
            for &l in &f.links[..f.len as usize] {
                let (by, since) = (h.by[l as usize], h.since_ps[l as usize]);
                behind |=
                    (by != NOBODY) & (by != x) & ((since < f.wait_ps) | ((since == f.wait_ps) & (by < x)));
            }
            if !behind {
                for &l in &f.links[..f.len as usize] {
                    h.by[l as usize] = x;
                    h.since_ps[l as usize] = f.wait_ps;
                }
            }
        }
        if let Some(f) = fs.get_mut(best) {
            for &l in &f.links[..f.len as usize] {
                free_bps[l as usize] -= LINK_BPS;
                if h.by[l as usize] == x {
                    h.by[l as usize] = NOBODY;
                }
            }
            f.wait_ps = now_ps + 1;
            grants += 1;
        }
    }
    grants
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
                    wait_ps: rng.below(8 * SLICE_PS),
                    len: path.len() as u8,
                    ..Flow::default()
                };
                f.links[..path.len()].copy_from_slice(&path);
                f
            })
            .collect();
        flows.push(fs);
    }
    let links = paths.links() as usize;
    let mut free_bps = vec![LINK_BPS; links];
    for reserving in [false, true] {
        let mut held = Held {
            by: vec![NOBODY; links],
            since_ps: vec![0; links],
        };
        let mut fl = flows.clone();
        let (mut best_sort, mut best_pass, mut grants) = (f64::MAX, f64::MAX, 0);
        for slot in 0..50u64 {
            let now_ps = (8 + slot) * SLICE_PS;
            free_bps.fill(LINK_BPS);
            let t0 = Instant::now();
            let oldest = |fs: &[Flow]| fs.iter().map(|f| f.wait_ps).min().unwrap_or(u64::MAX);
            let mut order: Vec<(u64, u32)> = (0..hosts).map(|x| (oldest(&fl[x as usize]), x)).collect();
            order.sort_unstable();
            let t1 = Instant::now();
            grants = if reserving {
                pass_reserving(&order, &mut fl, &mut free_bps, &mut held, now_ps)
            } else {
                pass_bare(&order, &fl, &mut free_bps)
            };
            let t2 = Instant::now();
            best_sort = best_sort.min((t1 - t0).as_secs_f64() * 1e6);
            best_pass = best_pass.min((t2 - t1).as_secs_f64() * 1e6);
            if !reserving {
                // the next slot: the served flows and a few others are younger
                for fs in fl.iter_mut().step_by(2) {
                    fs[0].wait_ps = now_ps;
                }
            }
        }
        println!(
            "k={k} ({hosts} hosts), {}: best of 50: keys and sort {best_sort:.0} us + pass {best_pass:.0} us ({:.0} ns per host); {grants} senders",
            if reserving { "with reservations" } else { "bare greedy" },
            1e3 * best_pass / hosts as f64
        );
    }
}

fn main() {
    let ks: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    for k in if ks.is_empty() { vec![8, 16, 32] } else { ks } {
        floor(k);
    }
}
