//! # xco-bench — the benchmark-only programs
//!
//! The shipping crates (`xco-core`, `xco-sim`, `xco-daemon`, `xco-py`) carry
//! only what users run; the speed studies live here as examples, each a
//! `cargo run --release -p xco-bench --example NAME` away:
//! - `bench` — the `xco bench sim` workloads without Python;
//! - `bench_sched` — the `xco bench sched` workload;
//! - `sched_floor` — what one lean greedy pass over the same backlog costs
//!   (the floor under a scheduler slot boundary);
//! - `mem_latency` — the dependent-load latency per working-set size (the
//!   cache cliff the k = 32 slot boundary sits on).
//!
//! What they measured is written up in `docs/speed.md`.
