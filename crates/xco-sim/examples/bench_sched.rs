//! `cargo run --release -p xco-sim --example bench_sched [k...]`: the `xco bench sched` workload.
fn main() {
    let ks: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    for k in if ks.is_empty() { vec![8, 16, 32] } else { ks } {
        let r = xco_sim::bench::sched_churn(k, 200, 1);
        println!(
            "k={} ({} hosts): {} calls, {:.0} calls/s, p50 {:.1} us, p99 {:.1} us; slot boundary p50 {:.0} us, p99 {:.0} us, worst {:.0} us; busy per slot p50 {:.0} us, p99 {:.0} us; {:.0} senders/slot; hosts considered per slot {:.0} + {:.0} (boundary + churn), {:.0} ns each",
            r.k, r.hosts, r.events, r.events_per_s, r.p50_us, r.p99_us, r.slot_p50_us, r.slot_p99_us, r.max_slot_us, r.busy_p50_us, r.busy_p99_us, r.mean_active, r.boundary_nodes_per_slot, r.churn_nodes_per_slot, r.ns_per_node
        );
    }
}
