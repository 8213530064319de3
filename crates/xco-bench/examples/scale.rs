//! `cargo run --release -p xco-bench --example scale [K] [SIM_MS] [on|off]`: build a
//! k-ary fat-tree with one bulk TCP flow per host (workload (b), the random
//! permutation) and run `SIM_MS` of simulated time (default k = 84, 148,176
//! hosts, 1 ms), printing the peak memory after each phase (the kernel's
//! VmHWM of this process) and the routing state's bytes. `on`/`off` forces
//! the run loop's prefetching (default: the simulator's choice for the size).
//!
//! The figures in docs/speed.md's "Memory at scale" come from this program.
use std::time::Instant;
use xco_sim::bench::fattree_scenario;
use xco_sim::scenario::build;

/// The process's peak resident memory so far, bytes (Linux `VmHWM`).
fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let k: usize = args
        .first()
        .map_or(84, |a| a.parse().expect("K: an even integer"));
    let sim_ms: f64 = args.get(1).map_or(1.0, |a| a.parse().expect("SIM_MS: a number"));
    let hosts = k * k * k / 4;
    let t0 = Instant::now();
    let text = fattree_scenario(k, sim_ms, 1);
    println!(
        "k = {k}: {hosts} hosts, {} switches, one bulk flow per host, {sim_ms} ms; seed 1",
        5 * k * k / 4
    );
    println!(
        "scenario text {} MB, peak {}",
        text.len() / 1_000_000,
        gib(peak_rss_bytes())
    );
    let mut b = build(&text, None).unwrap_or_else(|e| panic!("{e}"));
    match args.get(2).map(String::as_str) {
        Some("on") => b.sim.prefetch = true,
        Some("off") => b.sim.prefetch = false,
        _ => {}
    }
    println!("prefetching: {}", if b.sim.prefetch { "on" } else { "off" });
    drop(text);
    let built = t0.elapsed().as_secs_f64();
    println!("built in {built:.1} s, peak {}", gib(peak_rss_bytes()));
    let st = b.sim.run().unwrap_or_else(|e| panic!("{}", e.0));
    let ran = t0.elapsed().as_secs_f64() - built;
    println!(
        "ran in {ran:.1} s: {} events, {} packet-hops ({:.1} M hops/s); routing state {:.1} MB; peak {}",
        st.events,
        st.data_packet_hops,
        st.data_packet_hops as f64 / ran / 1e6,
        b.sim.cx.net.router().bytes() as f64 / 1e6,
        gib(peak_rss_bytes())
    );
}
