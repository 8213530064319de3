//! `xco-daemon dst`: the control plane's deterministic simulation harness
//! (`crates/xco-core/tests/dst`, the same files, compiled into this binary)
//! as a command, for more seeds than `cargo test` runs and for replaying one
//! seed with a trace of every message and fault.
//!
//! - `xco-daemon dst --seeds N [--start S] [--threads T]` runs seeds
//!   `S..S+N` on `T` threads (default 2); exit 0 if every invariant held,
//!   1 if a seed failed (each failure and the command that replays it are printed).
//! - `xco-daemon dst --replay SEED [--calm | --scenario NAME]` runs one seed
//!   with the trace on standard error and its setup and summary on standard output.
//! - `--network sim` runs them on the simulator's packet network
//!   (`crates/xco-sim/tests/dst_sim`: control datagrams and the agents' data
//!   share drop-tail queues and links) instead of the model network.

use crate::simnet::SimNet;
use crate::world::{Setup, World, QUIET, RESUME};
use std::time::Instant;

/// What `dst` was asked to do.
pub enum DstCmd {
    /// Seeds `start..start + n` on `threads` threads.
    Sweep {
        /// First seed.
        start: u64,
        /// How many.
        n: u64,
        /// Threads.
        threads: u64,
        /// On the simulator's packet network.
        sim: bool,
    },
    /// One seed with a trace.
    Replay {
        /// The seed.
        seed: u64,
        /// On the simulator's packet network.
        sim: bool,
        /// `None`: the seed's drawn faults; `calm`, or a scenario's name.
        setup: Option<String>,
    },
}

fn setup(seed: u64, which: Option<&str>) -> Result<Setup, String> {
    match which {
        None => Ok(Setup::draw(seed)),
        Some("calm") => Ok(Setup::calm(seed)),
        Some(name) => Setup::scenario(name, seed).map_err(|e| format!("--scenario: {e}")),
    }
}

/// One seed (on the sim network if `sim`); `Err`: the violation, when, and how to replay it.
fn run_one(s: Setup, sim: bool, trace: bool, replay_hint: &str) -> Result<String, String> {
    let seed = s.seed;
    let (world, stats) = if sim {
        let mut wire = SimNet::new(&s, QUIET, QUIET + RESUME);
        wire.trace = trace;
        let stats = wire.stats.clone();
        (World::on(s, trace, Box::new(wire)), Some(stats))
    } else {
        (World::new(s, trace), None)
    };
    let network = if sim { " --network sim" } else { "" };
    match world.run() {
        Ok(sum) => Ok(match stats {
            Some(st) => format!("{sum:?}\nnetwork: {:?}", st.borrow()),
            None => format!("{sum:?}"),
        }),
        Err((v, sum)) => Err(format!(
            "seed {seed}: {} at {} ({} events)\n  replay: xco dst{network} --replay {seed}{replay_hint}",
            v.what, v.at, sum.events
        )),
    }
}

/// Run `cmd`; the exit code (0: every seed kept every invariant; 1: one did not).
pub fn run(cmd: DstCmd) -> Result<u8, String> {
    match cmd {
        DstCmd::Replay {
            seed,
            sim,
            setup: which,
        } => {
            let s = setup(seed, which.as_deref())?;
            println!("{s:#?}");
            let hint = match which.as_deref() {
                None => String::new(),
                Some("calm") => " --calm".into(),
                Some(n) => format!(" --scenario {n}"),
            };
            match run_one(s, sim, true, &hint) {
                Ok(sum) => {
                    println!("seed {seed} passed: {sum}");
                    Ok(0)
                }
                Err(e) => {
                    println!("{e}");
                    Ok(1)
                }
            }
        }
        DstCmd::Sweep {
            start,
            n,
            threads,
            sim,
        } => {
            if n == 0 {
                return Err("--seeds: 0 seeds; give at least 1".into());
            }
            if !(1..=256).contains(&threads) {
                return Err(format!("--threads: {threads}; 1 to 256"));
            }
            if start.checked_add(n).is_none() {
                return Err(format!("--start {start} --seeds {n}: past the last seed"));
            }
            let t0 = Instant::now();
            let mut fails: Vec<(u64, String)> = std::thread::scope(|sc| {
                let hs: Vec<_> = (0..threads)
                    .map(|k| {
                        sc.spawn(move || {
                            (start + k..start + n)
                                .step_by(threads as usize)
                                .filter_map(|seed| {
                                    run_one(Setup::draw(seed), sim, false, "")
                                        .err()
                                        .map(|e| (seed, e))
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                hs.into_iter()
                    .flat_map(|h| {
                        h.join()
                            .unwrap_or_else(|_| vec![(u64::MAX, "a harness thread panicked".into())])
                    })
                    .collect()
            });
            fails.sort();
            let secs = t0.elapsed().as_secs_f64();
            for (_, f) in &fails {
                println!("{f}");
            }
            println!(
                "dst: seeds {start}..{} on the {} network: {} of {n} failed, in {secs:.1} s ({:.0} seeds/s, {threads} threads)",
                start + n,
                if sim { "sim" } else { "model" },
                fails.len(),
                n as f64 / secs.max(1e-9)
            );
            Ok(u8::from(!fails.is_empty()))
        }
    }
}
