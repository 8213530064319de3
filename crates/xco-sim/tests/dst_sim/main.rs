//! The control plane's deterministic simulation harness
//! (`crates/xco-core/tests/dst`: the same world, faults and invariants,
//! its files included by path) on the simulator's packet network
//! ([`simnet`]): control datagrams and the agents' data share drop-tail
//! queues and links of the seed's capacities.
//!
//! - `cargo test -p xco-sim --release --test dst_sim` runs `XCO_DST_SIM_SEEDS`
//!   seeds (default 5,000; 100 in a debug build) on two threads; the seeds
//!   of [`KNOWN`] must fail as reported, every other must keep every invariant.
//! - A failing seed prints the command that replays it with a trace of
//!   every message and fault: `xco dst --network sim --replay SEED`, or
//!   `XCO_DST_SEED=SEED cargo test -p xco-sim --release --test dst_sim replay -- --nocapture`.
//! - `--features mutations` adds tests that plant protocol bugs and require
//!   the harness to find each on this network within a bounded number of seeds.

#[allow(dead_code)]
#[path = "../../../xco-core/tests/dst/check.rs"]
mod check;
#[allow(dead_code)]
#[path = "../../../xco-core/tests/dst/net.rs"]
mod net;
#[allow(dead_code)]
#[path = "../../../xco-core/tests/dst/ondemand.rs"]
mod ondemand;
#[allow(dead_code)]
mod simnet;
#[allow(dead_code)]
#[path = "../../../xco-core/tests/dst/world.rs"]
mod world;

use simnet::{SimNet, SimStats};
use world::{Setup, Summary, World, QUIET, RESUME};

/// Run `setup` on the sim network; `Err` carries the violation and the replay command.
fn run(setup: Setup, trace: bool) -> Result<(Summary, SimStats), String> {
    let seed = setup.seed;
    let mut wire = SimNet::new(&setup, QUIET, QUIET + RESUME);
    wire.trace = trace;
    let stats = wire.stats.clone();
    let r = World::on(setup, trace, Box::new(wire)).run();
    let st = stats.borrow().clone();
    r.map(|s| (s, st)).map_err(|(v, s)| {
        format!(
            "seed {seed}: {} at {} ({} events)\n  replay: xco dst --network sim --replay {seed}{}",
            v.what,
            v.at,
            s.events,
            if cfg!(feature = "mutations") {
                " (with --features mutations: XCO_DST_MUTATION=NAME XCO_DST_SEED=SEED cargo test -p xco-sim --release --features mutations --test dst_sim replay -- --nocapture)"
            } else {
                ""
            },
        )
    })
}

/// Seeds below [`seeds_wanted`]'s default that break an invariant on this
/// network for a cause found and not fixed here (docs/control-plane.md, "The
/// harness on the simulator's network"): (seed, invariant). None now: the
/// two it held (3029, 4470: no-drop) were a slice cut short by a preemption
/// that starts at once while the packets its holder's agent had released
/// for the rest of the slice still waited in its NIC's queue; the scheduler
/// now keeps the links a preemption frees until the preempted slice's end
/// (`xco_core::sched`, the drain).
const KNOWN: &[(u64, &str)] = &[];

fn seeds_wanted() -> u64 {
    let default = if cfg!(debug_assertions) { 100 } else { 5_000 };
    std::env::var("XCO_DST_SIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Totals of the network's measurements over a sweep.
#[derive(Default)]
struct Totals {
    control_sent: u64,
    control_dropped: u64,
    data_sent: u64,
    data_dropped: u64,
    data_dropped_resumed: u64,
    seeds_dropping_resumed: u64,
    /// The largest share of its bound a controller's datagram's delay took, percent.
    delay_share_max: u64,
    /// Every run's delay bound, µs.
    bounds_us: Vec<u64>,
}

impl Totals {
    fn add(&mut self, s: &SimStats) {
        self.control_sent += s.control_sent;
        self.control_dropped += s.control_dropped;
        self.data_sent += s.data_sent;
        self.data_dropped += s.data_dropped;
        self.data_dropped_resumed += s.data_dropped_resumed;
        self.seeds_dropping_resumed += u64::from(s.data_dropped_resumed > 0);
        let share = s.ctl_delay_max.ps() * 100 / s.delay_bound.ps().max(1);
        self.delay_share_max = self.delay_share_max.max(share);
        self.bounds_us.push(s.delay_bound.ps() / 1_000_000);
    }

    /// Min, median and max of the runs' delay bounds.
    fn bounds(&mut self) -> String {
        let b = &mut self.bounds_us;
        b.sort_unstable();
        match b.len() {
            0 => "none".into(),
            n => format!("min {} us, median {} us, max {} us", b[0], b[n / 2], b[n - 1]),
        }
    }
}

/// Run seeds `first..first + n` on two threads; the failures in seed order, and the totals.
fn sweep(first: u64, n: u64, make: impl Fn(u64) -> Setup + Sync) -> (Vec<String>, Totals) {
    let threads = 2;
    type Share = (Vec<(u64, String)>, Vec<SimStats>);
    let per: Vec<Share> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|k| {
                let make = &make;
                sc.spawn(move || {
                    let (mut fails, mut stats) = (Vec::new(), Vec::new());
                    for seed in (first + k..first + n).step_by(threads as usize) {
                        match run(make(seed), false) {
                            Ok((_, st)) => stats.push(st),
                            Err(e) => fails.push((seed, e)),
                        }
                    }
                    (fails, stats)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("a harness thread panicked"))
            .collect()
    });
    let mut totals = Totals::default();
    let mut fails = Vec::new();
    for (f, st) in per {
        fails.extend(f);
        st.iter().for_each(|s| totals.add(s));
    }
    fails.sort();
    (fails.into_iter().map(|f| f.1).collect(), totals)
}

#[test]
fn every_seed_keeps_every_invariant_on_the_sim_network() {
    let n = seeds_wanted();
    let t0 = std::time::Instant::now();
    let (fails, mut t) = sweep(0, n, Setup::draw);
    let secs = t0.elapsed().as_secs_f64();
    let bounds = t.bounds();
    eprintln!(
        "dst on the sim network: {n} seeds in {secs:.1} s ({:.1} seeds/s, 2 threads); \
         control datagrams {} ({} dropped by full queues), data packets {} ({} dropped; \
         {} after coordination resumed, in {} seeds); a controller's datagram took at most {} % of its delay bound \
         (bounds: {})",
        n as f64 / secs,
        t.control_sent,
        t.control_dropped,
        t.data_sent,
        t.data_dropped,
        t.data_dropped_resumed,
        t.seeds_dropping_resumed,
        t.delay_share_max,
        bounds,
    );
    // the known findings fail as they were found, and nothing else fails
    let known = |f: &String| {
        KNOWN
            .iter()
            .any(|(seed, inv)| f.starts_with(&format!("seed {seed}: {inv}: ")))
    };
    for &(seed, inv) in KNOWN.iter().filter(|k| k.0 < n) {
        assert!(
            fails.iter().any(|f| f.starts_with(&format!("seed {seed}: {inv}: "))),
            "seed {seed} no longer breaks {inv}: remove it from KNOWN (crates/xco-sim/tests/dst_sim/main.rs) and from docs/control-plane.md"
        );
    }
    for f in fails.iter().filter(|f| known(f)) {
        eprintln!("known, not fixed: {f}");
    }
    let fails: Vec<String> = fails.into_iter().filter(|f| !known(f)).collect();
    let seeds: Vec<&str> = fails
        .iter()
        .take(20)
        .map(|f| f.split(':').next().unwrap_or(""))
        .collect();
    assert!(
        fails.is_empty(),
        "{} of {n} seeds failed on the sim network ({}); the first:\n{}",
        fails.len(),
        seeds.join(", "),
        fails[0]
    );
    // the network carried what it should: data shared its queues with control
    assert!(t.data_sent > 0 && t.control_sent > 0);
}

#[test]
fn replay() {
    let Some(seed) = std::env::var("XCO_DST_SEED").ok().and_then(|s| s.parse().ok()) else {
        return;
    };
    #[allow(unused_mut)]
    let mut s = match std::env::var("XCO_DST_SCENARIO").as_deref() {
        Ok(x) => Setup::scenario(x, seed).unwrap_or_else(|e| panic!("XCO_DST_SCENARIO: {e}")),
        Err(_) if std::env::var("XCO_DST_CALM").is_ok() => Setup::calm(seed),
        Err(_) => Setup::draw(seed),
    };
    #[cfg(feature = "mutations")]
    {
        s.mutation = std::env::var("XCO_DST_MUTATION")
            .ok()
            .map(|m| xco_core::control::Mutation::named(&m));
    }
    eprintln!("{s:#?}");
    match run(s, true) {
        Ok((sum, st)) => eprintln!("seed {seed} passed: {sum:?}\n{st:?}"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn calm_runs_on_the_sim_network_never_fail_open_and_drop_no_control_datagram() {
    for seed in 0..40 {
        let (sum, st) = run(Setup::calm(seed), false).unwrap_or_else(|e| panic!("{e}"));
        assert!(sum.fail_opens.iter().all(|&f| f == 0), "seed {seed}: {sum:?}");
        assert!(sum.joins.iter().all(|&j| j == 1), "seed {seed}: {sum:?}");
        assert!(sum.directives_applied > 100, "seed {seed}: {sum:?}");
        assert_eq!(st.control_dropped, 0, "seed {seed}: {st:?}");
        assert!(st.data_delivered > 0, "seed {seed}: {st:?}");
    }
}

#[test]
fn a_standby_takes_over_on_the_sim_network() {
    for seed in 0..20 {
        let s = Setup::scenario("takeover", seed).unwrap();
        let (sum, _) = run(s, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sum.takeovers, 1, "seed {seed}: {sum:?}");
        assert_eq!(sum.takeover_gaps.len(), 1, "seed {seed}: {sum:?}");
        assert!(sum.fail_opens.iter().all(|&f| f == 0), "seed {seed}: {sum:?}");
    }
}

#[cfg(feature = "mutations")]
mod mutations {
    use super::*;
    use xco_core::control::Mutation;

    /// Some seed below `limit` breaks a protocol invariant on the sim network
    /// with mutation `m` and passes without it. A no-drop failure does not
    /// count: drops are the data path's symptom, not a protocol invariant
    /// (a mutation that only moved the schedule met a slice cut short, now
    /// fixed, on other seeds).
    fn found(m: &str, limit: u64) {
        found_in(m, limit, Setup::draw)
    }

    /// [`found`] among the setups `make` builds.
    fn found_in(m: &str, limit: u64, make: impl Fn(u64) -> Setup + Sync) {
        let mutation = Mutation::named(m);
        let (fails, _) = sweep(0, limit, |seed| {
            let mut s = make(seed);
            s.mutation = Some(mutation);
            s
        });
        // a seed that fails without the mutation too (a known finding) finds nothing
        let fails: Vec<String> = fails
            .into_iter()
            .filter(|f| !f.contains(": no-drop: "))
            .filter(|f| {
                let seed: u64 = f["seed ".len()..f.find(':').expect("seed N: ...")]
                    .parse()
                    .expect("a seed");
                run(make(seed), false).is_ok()
            })
            .collect();
        assert!(
            !fails.is_empty(),
            "mutation {m}: no seed of {limit} failed on the sim network: the harness misses it"
        );
        eprintln!(
            "mutation {m} on the sim network: {} of {limit} seeds fail; first: {}",
            fails.len(),
            fails[0]
        );
    }

    #[test]
    fn accepting_an_old_run_is_found() {
        found("accept-other-run", 1000);
    }

    #[test]
    fn skipping_the_replay_check_is_found() {
        found("skip-replay-check", 1000);
    }

    #[test]
    fn dropping_the_fail_open_timer_under_load_is_found() {
        found("no-fail-open-under-load", 1000);
    }

    #[test]
    fn obeying_a_lower_term_is_found() {
        found("accept-lower-term", 1000);
    }

    // not here: keep-gate-at-new-term and end-fence-at-first-confirm, which no
    // protocol invariant finds on this network in 5,000 drawn seeds (nor 500
    // of each standby scenario): the capacity check's allowance is this
    // network's delay bound, median 0.9 ms against the model's 60-400 µs, and
    // the overlaps they cause hide within it (docs/control-plane.md); and
    // takeover-without-fence, found in 1 of 1,000 seeds before the quorum
    // lease and the drains, 1 of 5,000 after (seed 2831; 0 of 300 of the
    // takeover and split scenarios): the model network finds all three; nor
    // skip-freshness (0 of 5,000 drawn seeds; the model network: 3 of 10,000)

    /// Explore: `XCO_DST_MUTATION=NAME XCO_DST_MUTATION_SEEDS=N` runs N seeds
    /// with mutation NAME (of scenario `XCO_DST_SCENARIO`, if set) and prints
    /// what fails (no assertion: a search, not a test).
    #[test]
    fn explore() {
        let (Ok(m), Some(n)) = (
            std::env::var("XCO_DST_MUTATION"),
            std::env::var("XCO_DST_MUTATION_SEEDS")
                .ok()
                .and_then(|n| n.parse().ok()),
        ) else {
            return;
        };
        let mutation = Mutation::named(&m);
        let scenario = std::env::var("XCO_DST_SCENARIO").ok();
        let (fails, _) = sweep(0, n, |seed| {
            let mut s = match &scenario {
                Some(x) => Setup::scenario(x, seed).unwrap_or_else(|e| panic!("XCO_DST_SCENARIO: {e}")),
                None => Setup::draw(seed),
            };
            s.mutation = Some(mutation);
            s
        });
        for f in &fails {
            eprintln!("{m}: {}", f.lines().next().unwrap_or(""));
        }
        eprintln!("{m}: {} of {n} seeds fail", fails.len());
    }

    #[test]
    fn binding_addresses_from_any_source_is_found() {
        found("address-from-any-source", 1000);
    }
}
