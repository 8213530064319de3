//! Timing noise (`topology.host_jitter_us`, `switch_jitter_us`): every frame
//! reaches the far end of its link later by a uniform draw from [0, bound],
//! never before the frame ahead of it, from each port's own seeded stream.
//! Pinned through a ping's round trips: without noise every probe sees the
//! same RTT; with noise the RTTs spread over exactly the bounds' range, their
//! mean shifts by the draws' mean, and the same seed gives the same run.

use crate::support::metric;
use xco_sim::scenario::build;

/// h0 pings h1 every 100 us through one switch (four link crossings per
/// round trip: two from a host, two from the switch).
fn ping(host_jitter_us: f64, switch_jitter_us: f64, seed: u64) -> (f64, f64) {
    let text = format!(
        r#"
[run]
duration_ms = 300
[topology]
kind = "star"
hosts = 2
link_delay_us = 10
host_jitter_us = {host_jitter_us}
switch_jitter_us = {switch_jitter_us}
[[apps]]
kind = "ping"
src = "h0"
dst = "h1"
interval_us = 100
"#
    );
    let mut sim = build(&text, Some(seed)).unwrap().sim;
    sim.run().unwrap();
    (metric(&sim, 0, "rtt_us_mean"), metric(&sim, 0, "rtt_us_max"))
}

#[test]
fn without_noise_every_round_trip_takes_the_same_time() {
    let (mean, max) = ping(0.0, 0.0, 1);
    assert!((max - mean).abs() < 1e-6, "mean {mean} max {max}");
}

#[test]
fn noise_spreads_round_trips_over_the_bounds_and_shifts_their_mean() {
    let (base, _) = ping(0.0, 0.0, 1);
    let (mean, max) = ping(20.0, 5.0, 1);
    // each crossing adds U[0, bound]: two host crossings and two switch ones
    let top = 2.0 * 20.0 + 2.0 * 5.0;
    assert!(max <= base + top + 1e-6, "max {max} above base {base} + {top}");
    assert!(
        max > base + 0.8 * top,
        "2,999 probes reach near the top: max {max}"
    );
    // the mean draw is half the bound per crossing
    assert!(
        (mean - (base + top / 2.0)).abs() < 2.0,
        "mean {mean}, base {base}"
    );
}

#[test]
fn the_noise_comes_from_the_seed() {
    assert_eq!(ping(20.0, 5.0, 7), ping(20.0, 5.0, 7));
    assert_ne!(ping(20.0, 5.0, 7), ping(20.0, 5.0, 8));
}

#[test]
fn noise_keeps_a_busy_link_first_in_first_out() {
    // a bulk flow keeps the links busy, so draws larger than a frame time
    // would reorder frames if a frame could overtake the one ahead of it:
    // in order, TCP sees no duplicate ACKs and retransmits nothing
    let text = r#"
[run]
duration_ms = 50
[topology]
kind = "star"
hosts = 2
link_delay_us = 10
host_jitter_us = 100
switch_jitter_us = 100
[[apps]]
kind = "bulk"
src = "h0"
dst = "h1"
"#;
    let mut sim = build(text, Some(3)).unwrap().sim;
    sim.run().unwrap();
    let f = &sim.cx.net.flows[0];
    assert!(f.app_bytes_delivered > 1_000_000, "the flow moved data");
    assert_eq!(f.retransmits, 0, "nothing arrived out of order");
}

#[test]
fn a_bound_outside_its_range_is_an_error_naming_the_field() {
    for (key, v) in [("host_jitter_us", "-1"), ("switch_jitter_us", "5000")] {
        let text = format!(
            "[topology]\nkind = \"star\"\nhosts = 2\n{key} = {v}\n[[apps]]\nkind = \"bulk\"\nsrc = \"h0\"\ndst = \"h1\"\n"
        );
        let e = build(&text, None).err().expect("refused").to_string();
        assert!(e.contains(&format!("topology.{key}")), "{e}");
    }
}

#[test]
fn meta_json_names_the_noise_among_the_run_s_random_draws() {
    let text = |host_us: f64| {
        format!(
            "[run]\nduration_ms = 1\n[topology]\nkind = \"star\"\nhosts = 2\nhost_jitter_us = {host_us}\n\
             [[apps]]\nkind = \"bulk\"\nsrc = \"h0\"\ndst = \"h1\"\n"
        )
    };
    let noisy = xco_sim::run_scenario(&text(5.0), Some(1)).unwrap().meta_json;
    let draw = "topology.host_jitter_us: each frame's extra delay";
    assert!(noisy.contains(draw), "{noisy}");
    let quiet = xco_sim::run_scenario(&text(0.0), Some(1)).unwrap().meta_json;
    assert!(!quiet.contains(draw), "{quiet}");
}
