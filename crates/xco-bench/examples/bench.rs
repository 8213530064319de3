//! `cargo run --release -p xco-bench --example bench [--queue droptail|red|sfq] [k...] [--tcp LINE]...`:
//! the `xco bench sim` workloads without Python; each `--tcp` line (e.g.
//! `"sack = true"`) is added to workload (b)'s `[tcp]` table.
use xco_sim::bench::BenchQueue;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut queue = BenchQueue::DropTail;
    let mut ks = Vec::new();
    let mut tcp = String::new();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--queue" {
            let name = args.get(i + 1).map(String::as_str).unwrap_or("");
            queue = BenchQueue::parse(name).unwrap_or_else(|e| {
                eprintln!("bench: --queue: {e}");
                std::process::exit(2)
            });
            i += 2;
        } else if args[i] == "--tcp" && i + 1 < args.len() {
            tcp.push_str(&args[i + 1]);
            tcp.push('\n');
            i += 2;
        } else {
            ks.extend(args[i].parse::<usize>().ok());
            i += 1;
        }
    }
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
    show(xco_sim::bench::pdn_sweep_with(20, queue).unwrap());
    for k in if ks.is_empty() { vec![8] } else { ks } {
        show(xco_sim::bench::fattree_permutation_with(k, 10.0, queue, &tcp).unwrap());
    }
}
