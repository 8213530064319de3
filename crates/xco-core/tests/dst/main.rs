//! Deterministic simulation testing of the control plane (the FoundationDB /
//! TigerBeetle-VOPR practice): from one seed, a controller and 3 to 6 agents
//! — the `xco_core::control` nodes the daemons drive — run over a seeded
//! network model with injected faults (datagrams lost, duplicated,
//! reordered, delayed; partitions; controller crashes and restarts; agent
//! crashes; pauses; clock offsets and drift; a hostile host that replays,
//! forges, floods and claims backlog to everyone), and invariants are
//! checked after every step ([`check`]).
//!
//! - `cargo test -p xco-core --release --test dst` runs `XCO_DST_SEEDS`
//!   seeds (default 10,000; 300 in a debug build) on two threads.
//! - A failing seed prints the command that replays it with a trace of
//!   every message and fault: `XCO_DST_SEED=<seed> cargo test -p xco-core
//!   --release --test dst replay -- --nocapture`.
//! - `--features mutations` adds tests that plant protocol bugs and require
//!   the harness to find each within a bounded number of seeds.

mod check;
mod net;
mod ondemand;
mod world;

use world::{Setup, Summary, World};

/// Run `seed`; `Err` carries the violation and the replay command.
fn run(setup: Setup, trace: bool) -> Result<Summary, String> {
    let seed = setup.seed;
    World::new(setup, trace).run().map_err(|(v, s)| {
        format!(
            "seed {seed}: {} at {} ({} events)\n  replay: XCO_DST_SEED={seed} cargo test -p xco-core --release --test dst{} replay -- --nocapture",
            v.what,
            v.at,
            s.events,
            if cfg!(feature = "mutations") { " --features mutations" } else { "" },
        )
    })
}

fn seeds_wanted() -> u64 {
    let default = if cfg!(debug_assertions) { 300 } else { 10_000 };
    std::env::var("XCO_DST_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Run seeds `first..first + n` on two threads; the failures, in seed order.
fn sweep(first: u64, n: u64, make: impl Fn(u64) -> Setup + Sync) -> Vec<String> {
    let threads = 2;
    let mut fails: Vec<(u64, String)> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|k| {
                let make = &make;
                sc.spawn(move || {
                    (first + k..first + n)
                        .step_by(threads as usize)
                        .filter_map(|seed| run(make(seed), false).err().map(|e| (seed, e)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().expect("a harness thread panicked"))
            .collect()
    });
    fails.sort();
    fails.into_iter().map(|f| f.1).collect()
}

#[test]
fn every_seed_keeps_every_invariant() {
    let n = seeds_wanted();
    let t0 = std::time::Instant::now();
    let fails = sweep(0, n, Setup::draw);
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "dst: {n} seeds in {secs:.1} s ({:.0} seeds/s, 2 threads)",
        n as f64 / secs
    );
    let seeds: Vec<&str> = fails
        .iter()
        .take(20)
        .map(|f| f.split(':').next().unwrap_or(""))
        .collect();
    assert!(
        fails.is_empty(),
        "{} of {n} seeds failed ({}); the first:\n{}",
        fails.len(),
        seeds.join(", "),
        fails[0]
    );
}

#[test]
fn replay() {
    let Some(seed) = std::env::var("XCO_DST_SEED").ok().and_then(|s| s.parse().ok()) else {
        return;
    };
    // XCO_DST_CALM=1: the seed's network without faults (the scenario tests' base)
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
        Ok(sum) => eprintln!("seed {seed} passed: {sum:?}"),
        Err(e) => panic!("{e}"),
    }
}

// --- scenarios: each attack of issue 28, alone ------------------------------------------

/// A calm network with a hostile host doing only `act` often.
fn attack(seed: u64, hostile: u32) -> Setup {
    let mut s = Setup::calm(seed);
    s.hostile = Some(hostile % s.hosts as u32);
    s.hostile_every = xco_core::Dur::from_us(200);
    s
}

#[test]
fn a_hostile_host_that_replays_forges_and_floods_costs_honest_hosts_no_join_and_no_fail_open() {
    for seed in 0..40 {
        let s = attack(seed, seed as u32);
        let hostile = s.hostile.unwrap();
        let sum = run(s, false).unwrap_or_else(|e| panic!("{e}"));
        for (h, &j) in sum.joins.iter().enumerate() {
            if h as u32 != hostile {
                // one join at start: no replayed join, hello, rejoin or directive made another
                assert_eq!(j, 1, "seed {seed}: h{h} joined {j} times: {sum:?}");
                assert_eq!(sum.fail_opens[h], 0, "seed {seed}: h{h} failed open: {sum:?}");
            }
        }
    }
}

#[test]
fn a_flood_of_signed_junk_is_checked_within_the_budget_only() {
    // 300 forged, well-signed directives in 0.9 ms at one victim, again and again
    let mut over = 0;
    for seed in 0..20 {
        let s = attack(seed, 0);
        let sum = run(s, false).unwrap_or_else(|e| panic!("{e}"));
        over += sum.over_budget;
    }
    assert!(
        over > 0,
        "no flood ever exceeded the signature budget: the scenario tests nothing"
    );
}

#[test]
fn calm_runs_never_fail_open_and_every_host_joins_once() {
    for seed in 0..40 {
        let sum = run(Setup::calm(seed), false).unwrap_or_else(|e| panic!("{e}"));
        assert!(sum.fail_opens.iter().all(|&f| f == 0), "seed {seed}: {sum:?}");
        assert!(sum.joins.iter().all(|&j| j == 1), "seed {seed}: {sum:?}");
        assert!(sum.directives_applied > 100, "seed {seed}: {sum:?}");
    }
}

// --- hot standby: each fault alone on a calm network ------------------------------------

/// The longest a standby may take, from the primary's death to the first
/// directive of its term at an agent: the silence it waits for (from the
/// last beat, which left before the crash and took up to a one-way delay),
/// then three one-way delays: its challenge to every host, their confirms
/// (the fence ends at the last; each host's report, or what the standby
/// watched it report, waits for it), the directive — plus what clock drift
/// adds over them.
fn takeover_bound(s: &Setup) -> xco_core::Dur {
    let cfg = xco_core::control::StandbyConfig::default();
    let t = cfg.takeover_after;
    let delays = xco_core::Dur::from_ps(s.net.delay_max.ps() * 4);
    t + delays + xco_core::Dur::from_ps((t + delays).ps() / 1000)
}

/// min, median and max of `xs`, in ms.
fn spread(xs: &mut [f64]) -> String {
    xs.sort_by(f64::total_cmp);
    format!(
        "min {:.2} ms, median {:.2} ms, max {:.2} ms",
        xs[0],
        xs[xs.len() / 2],
        xs[xs.len() - 1]
    )
}

#[test]
fn a_standby_takes_over_from_a_dead_primary_within_its_bound() {
    const SEEDS: u64 = 100;
    let ms = |d: xco_core::Dur| d.ps() as f64 / 1e9;
    let (mut gaps, mut detect, mut slice, mut uncovered) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for seed in 0..SEEDS {
        let s = Setup::scenario("takeover", seed).unwrap();
        let bound = takeover_bound(&s);
        let sum = run(s, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sum.takeovers, 1, "seed {seed}: {sum:?}");
        assert_eq!(
            sum.takeover_gaps.len(),
            1,
            "seed {seed}: no agent obeyed the standby: {sum:?}"
        );
        let gap = sum.takeover_gaps[0];
        assert!(
            gap <= bound,
            "seed {seed}: {gap} from the crash to the standby's first directive, bound {bound}"
        );
        assert!(sum.fail_opens.iter().all(|&f| f == 0), "seed {seed}: {sum:?}");
        assert_eq!(
            sum.takeover_slice.len(),
            1,
            "seed {seed}: no slice of the new term: {sum:?}"
        );
        gaps.push(ms(gap));
        detect.push(ms(sum.takeover_detect[0]));
        slice.push(ms(sum.takeover_slice[0]));
        uncovered.push(ms(sum.takeover_uncovered[0]));
    }
    eprintln!(
        "standby takeover ({SEEDS} calm seeds, an incast, the primary killed at 30 ms, 2-ms slices):\n  \
         crash to the takeover: {}\n  \
         crash to the first directive of the new term at an agent: {}\n  \
         crash to the first slice of the new term in force: {}\n  \
         no slice in force (from the dead term's last slice's end): {}",
        spread(&mut detect),
        spread(&mut gaps),
        spread(&mut slice),
        spread(&mut uncovered)
    );
}

#[test]
fn a_primary_paused_past_the_takeover_returns_stale_and_stands_down() {
    for seed in 0..40 {
        let s = Setup::scenario("pause", seed).unwrap();
        // run() fails if both direct at the end, or an agent obeys the stale one
        let sum = run(s, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sum.takeovers, 1, "seed {seed}: {sum:?}");
    }
}

#[test]
fn a_partition_between_the_controllers_never_makes_two_of_them_obeyed() {
    // the split-brain case: the standby hears no beat and takes over while the
    // primary still reaches every agent
    for seed in 0..40 {
        let s = Setup::scenario("split", seed).unwrap();
        let sum = run(s, false).unwrap_or_else(|e| panic!("{e}"));
        assert!(sum.takeovers >= 1, "seed {seed}: {sum:?}");
    }
}

#[test]
fn a_standby_paused_while_the_primary_lives_resumes_without_taking_over() {
    // resumed, it serves its timer before its socket: the takeover is due, but
    // the primary's beats wait unread; it looks again after reading them
    let mut rechecks = 0;
    for seed in 0..40 {
        let s = Setup::scenario("standby-pause", seed).unwrap();
        let sum = run(s, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sum.takeovers, 0, "seed {seed}: a spurious takeover: {sum:?}");
        rechecks += sum.rechecks;
    }
    assert!(
        rechecks > 0,
        "no standby ever found its takeover due as it resumed: the scenario tests nothing"
    );
}

#[test]
fn a_standby_paused_while_the_primary_dies_still_takes_over_as_it_resumes() {
    for seed in 0..40 {
        let s = Setup::scenario("standby-pause-dead", seed).unwrap();
        let sum = run(s, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sum.takeovers, 1, "seed {seed}: {sum:?}");
        assert_eq!(
            sum.takeover_gaps.len(),
            1,
            "seed {seed}: no agent obeyed the standby: {sum:?}"
        );
    }
}

// --- on-demand coordination (issue 28 item 4) ------------------------------------------

#[test]
fn on_demand_ungates_light_traffic_and_coordinates_a_link_over_capacity_within_its_bound() {
    // light traffic until 40 ms (pairs are ungated), then every honest host
    // sends to h0 at about 0.5 Gbit/s: the link into h0 is over capacity, and
    // every large flow through it must be gated within the bound (checked at
    // every agent step by run())
    let (mut ungated, mut checked) = (0, 0);
    for seed in 0..40 {
        let s = Setup::scenario("ondemand", seed).unwrap();
        let sum = run(s, false).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            sum.over_windows > 0,
            "seed {seed}: no link ever over capacity: {sum:?}"
        );
        assert!(sum.fail_opens.iter().all(|&f| f == 0), "seed {seed}: {sum:?}");
        ungated += sum.ungated_sets;
        checked += sum.on_demand_checked;
    }
    assert!(
        ungated > 0,
        "no pair was ever ungated: the scenario tests nothing"
    );
    assert!(
        checked > 0,
        "no large flow crossed a link over capacity for the bound"
    );
    eprintln!(
        "on-demand: {ungated} ungated sets applied, {checked} large flows checked on links over capacity"
    );
}

#[cfg(feature = "mutations")]
mod mutations {
    use super::*;
    use xco_core::control::Mutation;

    /// The first seed below `limit` the harness fails with mutation `m`.
    fn found(m: &str, limit: u64) {
        let mutation = Mutation::named(m);
        let fails = sweep(0, limit, |seed| {
            let mut s = Setup::draw(seed);
            s.mutation = Some(mutation);
            s
        });
        assert!(
            !fails.is_empty(),
            "mutation {m}: no seed of {limit} failed: the harness misses it"
        );
        eprintln!(
            "mutation {m}: {} of {limit} seeds fail; first: {} (XCO_DST_MUTATION={m})",
            fails.len(),
            fails[0]
        );
    }

    #[test]
    fn accepting_an_old_run_is_found() {
        found("accept-other-run", 2000);
    }

    #[test]
    fn skipping_the_replay_check_is_found() {
        found("skip-replay-check", 2000);
    }

    #[test]
    fn skipping_the_freshness_check_is_found() {
        found("skip-freshness", 10_000);
    }

    #[test]
    fn dropping_the_fail_open_timer_under_load_is_found() {
        found("no-fail-open-under-load", 2000);
    }

    #[test]
    fn obeying_a_lower_term_is_found() {
        found("accept-lower-term", 2000);
    }

    #[test]
    fn taking_over_without_the_fence_is_found() {
        found("takeover-without-fence", 2000);
    }

    #[test]
    fn keeping_the_older_terms_slice_at_a_new_term_is_found() {
        found("keep-gate-at-new-term", 2000);
    }

    #[test]
    fn ending_a_takeovers_fence_at_the_first_confirm_is_found() {
        found("end-fence-at-first-confirm", 2000);
    }

    #[test]
    fn binding_addresses_from_any_source_is_found() {
        found("address-from-any-source", 2000);
    }
}
