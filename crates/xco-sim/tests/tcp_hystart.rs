//! HyStart++ (RFC 9406) on a whole connection: behind a slow bottleneck
//! with a deep buffer the queue, and so the RTT, grows during slow start;
//! with `hystart = true` CUBIC leaves slow start (CSS, then congestion
//! avoidance) before the first loss and loses fewer packets than without.

use xco_core::{Dur, Time};
use xco_sim::scenario::build;
use xco_sim::sim::Sim;
use xco_sim::tcp::congestion::Cc;
use xco_sim::tcp::hystart::Phase;

/// One bulk sender a0 -> b0: 1 Gbit/s host links, a 100 Mbit/s uplink
/// with a 5 MB buffer, 5 ms per link (RTT 30 ms, so RttThresh = 4 ms,
/// a queue of 50 KB at the bottleneck).
fn scenario(hystart: bool) -> Sim {
    let text = format!(
        "[run]\nduration_ms = 3000\n[topology]\nkind = \"two_switch\"\nhosts_a = 1\nhosts_b = 1\n\
         link_delay_us = 5000\nhost_rate = \"1Gbps\"\nuplink_rate = \"100Mbps\"\nswitch_buffer = \"5MB\"\n\
         [tcp]\nprofile = \"linux\"\nhystart = {hystart}\n\
         [[apps]]\nkind = \"bulk\"\nsrc = \"a0\"\ndst = \"b0\"\n[output]\ntimeseries_bin_us = 0\n"
    );
    build(&text, None).unwrap().sim
}

fn drops(sim: &Sim) -> u64 {
    sim.cx.net.ports.iter().map(|p| p.stats.dropped_packets).sum()
}

/// What one run showed, sampled every millisecond.
#[derive(Debug, Default)]
struct Seen {
    /// When the sender was first seen in CSS, and the drops by then.
    css: Option<(Time, u64)>,
    /// When HyStart++ first ended, the drops by then, cwnd == ssthresh then.
    done: Option<(Time, u64, bool)>,
    /// When the first drop was seen.
    first_drop: Option<Time>,
    /// Drops over the whole run.
    drops: u64,
}

fn run(hystart: bool) -> Seen {
    let mut sim = scenario(hystart);
    let mut seen = Seen::default();
    let end = Time::ZERO + Dur::from_ms(3000);
    let mut now = Time::ZERO;
    while now < end {
        now += Dur::from_ms(1);
        sim.run_until(now).unwrap();
        let d = drops(&sim);
        if d > 0 && seen.first_drop.is_none() {
            seen.first_drop = Some(now);
        }
        let Some(ep) = sim.tcp.eps.first() else { continue };
        let Cc::Cubic(c) = ep.congestion_control() else {
            panic!("the linux profile runs CUBIC")
        };
        match c.hystart.as_ref().map(|h| h.phase) {
            Some(Phase::Css) if seen.css.is_none() => seen.css = Some((now, d)),
            Some(Phase::Done) if seen.done.is_none() => {
                seen.done = Some((now, d, ep.win.ssthresh < u64::MAX / 2))
            }
            _ => {}
        }
    }
    seen.drops = drops(&sim);
    seen
}

#[test]
fn with_hystart_cubic_leaves_slow_start_before_the_first_loss_and_loses_less() {
    let plain = run(false);
    let hy = run(true);
    // without: slow start overshoots the 5 MB buffer
    assert!(plain.css.is_none() && plain.done.is_none());
    let first_plain = plain.first_drop.expect("plain slow start fills the buffer");
    // with: CSS, then congestion avoidance, both before any drop
    let (t_css, d_css) = hy.css.expect("the RTT growth moved the sender into CSS");
    assert_eq!(d_css, 0, "CSS began before the first loss");
    let (t_done, d_done, ssthresh_set) = hy.done.expect("HyStart++ ended");
    assert_eq!(d_done, 0, "congestion avoidance began before the first loss");
    assert!(ssthresh_set, "left CSS with ssthresh = cwnd");
    assert!(t_css < t_done, "{hy:?}");
    assert!(
        t_css < first_plain,
        "left slow start before plain slow start lost: {hy:?} vs {plain:?}"
    );
    assert!(hy.first_drop.is_none_or(|t| t > t_done), "{hy:?}");
    assert!(
        hy.drops < plain.drops,
        "fewer losses: {} with HyStart++, {} without",
        hy.drops,
        plain.drops
    );
}

#[test]
fn hystart_needs_cubic_and_the_error_names_the_field() {
    let text = "[topology]\nkind = \"star\"\nhosts = 2\n[tcp]\nhystart = true\n\
                [[apps]]\nkind = \"bulk\"\nsrc = \"h0\"\ndst = \"h1\"\n";
    let e = build(text, None)
        .err()
        .expect("newreno has no HyStart++")
        .to_string();
    assert!(e.contains("tcp.hystart"), "{e}");
}
