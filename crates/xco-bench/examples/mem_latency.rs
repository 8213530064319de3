//! `cargo run --release -p xco-bench --example mem_latency`: how long one
//! dependent load takes on this machine for working sets from 32 KiB to
//! 64 MiB (a pointer chase through a random cycle of cache lines).
//!
//! The scheduler's slot boundary at k = 32 reads node and link records at
//! random; where the working set crosses the core's private cache, each
//! such read costs many times more. This prints that cliff, so the
//! figures in the README's Speed section can be checked on any machine.
use std::time::Instant;
use xco_core::Rng;

fn main() {
    let mut rng = Rng::new(1);
    let mut kib = 32usize;
    while kib <= 64 * 1024 {
        let lines = kib * 1024 / 64;
        // one u64 per 64-byte line: next[line * 8] is the next line's slot
        let mut next = vec![0usize; lines * 8];
        let mut order: Vec<usize> = (0..lines).collect();
        for i in (1..lines).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for i in 0..lines {
            next[order[i] * 8] = order[(i + 1) % lines] * 8;
        }
        let steps = 4_000_000;
        let mut p = 0usize;
        let t0 = Instant::now();
        for _ in 0..steps {
            p = next[p];
        }
        let ns = t0.elapsed().as_secs_f64() * 1e9 / steps as f64;
        std::hint::black_box(p);
        println!("{kib:>6} KiB: {ns:6.1} ns per dependent load");
        kib *= 2;
    }
}
