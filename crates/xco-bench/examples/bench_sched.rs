//! `cargo run --release -p xco-bench --example bench_sched [k...] [--slice-ms T]`:
//! the `xco bench sched` workload (timeslices of T ms, default 1).
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut slice_ms = 1;
    let mut ks = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--slice-ms" {
            slice_ms = it.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            if slice_ms == 0 {
                eprintln!("--slice-ms needs a positive whole number of ms");
                std::process::exit(2);
            }
        } else if let Some(k) = a
            .parse::<u32>()
            .ok()
            .filter(|k| k % 2 == 0 && (2..=64).contains(k))
        {
            ks.push(k);
        } else {
            eprintln!("{a}: expected a fat-tree k (an even number from 2 to 64) or --slice-ms T");
            std::process::exit(2);
        }
    }
    for k in if ks.is_empty() { vec![8, 16, 32] } else { ks } {
        let r = xco_sim::bench::sched_churn(k, 200, 1, slice_ms);
        println!(
            "k={} ({} hosts), {slice_ms}-ms slices: {} calls, {:.0} calls/s, p50 {:.1} us, p99 {:.1} us; slot boundary p50 {:.0} us, p99 {:.0} us, worst {:.0} us; busy per slot p50 {:.0} us, p99 {:.0} us; {:.0} senders/slot; hosts considered per slot {:.0} + {:.0} (boundary + churn), {:.0} ns each",
            r.k, r.hosts, r.events, r.events_per_s, r.p50_us, r.p99_us, r.slot_p50_us, r.slot_p99_us, r.max_slot_us, r.busy_p50_us, r.busy_p99_us, r.mean_active, r.boundary_nodes_per_slot, r.churn_nodes_per_slot, r.ns_per_node
        );
    }
}
