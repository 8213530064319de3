//! `cargo run --release -p xco-bench --example bench [k...]`: the `xco bench sim`
//! workloads without Python.
fn main() {
    let ks: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let show = |r: xco_sim::bench::BenchResult| {
        println!(
            "{}: wall {:.3} s, simulated {:.4} s, {:.2} M events/s, {:.2} M packet-hops/s ({} events, {} hops)",
            r.name,
            r.wall_s,
            r.sim_s,
            r.events_per_s() / 1e6,
            r.hops_per_s() / 1e6,
            r.events,
            r.packet_hops
        )
    };
    show(xco_sim::bench::pdn_sweep(20).unwrap());
    for k in if ks.is_empty() { vec![8] } else { ks } {
        show(xco_sim::bench::fattree_permutation(k, 10.0).unwrap());
    }
}
