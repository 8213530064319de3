//! TCP profiles: `newreno` is the simulator's TCP as before, `linux` turns
//! on CUBIC, SACK, tail loss probes and quick ACKs; keys override a profile.

use crate::support::{incast, metric, run};
use xco_sim::net::packet::Packet;
use xco_sim::net::qdisc::{Arrival, ArrivalHook, Qdisc, Verdict};
use xco_sim::scenario::build;
use xco_sim::tcp::cc::CcKind;

/// The pdn-goodput incast with extra `[tcp]` lines.
fn incast_with(n: usize, tcp: &str) -> String {
    incast(n, 10, "300KB", 200.0).replacen("[tcp]\n", &format!("[tcp]\n{tcp}\n"), 1)
}

#[test]
fn the_newreno_profile_is_the_old_default_output_for_output() {
    let plain = run(&incast_with(32, ""));
    let named = run(&incast_with(32, "profile = \"newreno\""));
    for m in ["goodput_mbps", "timeouts", "rounds_done"] {
        assert_eq!(metric(&plain, 0, m), metric(&named, 0, m), "{m}");
    }
    assert_eq!(plain.cx.now, named.cx.now);
}

#[test]
fn the_linux_profile_sets_what_it_names_and_keys_override_it() {
    let c = build(&incast_with(2, "profile = \"linux\""), None)
        .unwrap()
        .sim
        .stack
        .tcp
        .cfg;
    assert_eq!(c.cc, CcKind::Cubic);
    assert!(c.sack && c.tlp && c.rack);
    assert_eq!(c.quickack_segments, 16);
    assert_eq!((c.initial_cwnd_segments, c.rto_min.ps()), (10, 200_000_000_000));
    assert!(
        c.delayed_ack && c.restart_after_idle && c.header_bytes == 52,
        "timestamps on"
    );
    let c = build(
        &incast_with(2, "profile = \"linux\"\nsack = false\ncc = \"newreno\""),
        None,
    )
    .unwrap()
    .sim
    .stack
    .tcp
    .cfg;
    assert!(!c.sack && c.tlp && !c.rack, "no SACK: no RACK");
    assert_eq!(c.cc, CcKind::NewReno);
    let e = build(&incast_with(2, "rack = true"), None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.starts_with("tcp.rack:") && e.contains("SACK"), "{e}");
    let c = build(&incast_with(2, "profile = \"dctcp\""), None)
        .unwrap()
        .sim
        .stack
        .tcp
        .cfg;
    assert_eq!(c.cc, CcKind::Dctcp);
    assert!(
        c.ecn && c.sack && c.tlp && c.rack && c.quickack_segments == 16,
        "linux + DCTCP + ECN"
    );
    let e = build(&incast_with(2, "cc = \"dctcp\"\necn = false"), None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("tcp.ecn"), "{e}");
    let e = build(&incast_with(2, "profile = \"bsd\""), None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("tcp.profile") && e.contains("bsd"), "{e}");
}

#[test]
fn in_a_collapsed_incast_the_linux_profile_needs_fewer_timeouts() {
    // the collapse comes from tail losses that NewReno repairs only by timeouts
    let newreno = run(&incast_with(32, ""));
    let linux = run(&incast_with(32, "profile = \"linux\""));
    let (to_n, to_l) = (metric(&newreno, 0, "timeouts"), metric(&linux, 0, "timeouts"));
    let (g_n, g_l) = (
        metric(&newreno, 0, "goodput_mbps"),
        metric(&linux, 0, "goodput_mbps"),
    );
    assert!(to_n > 0.0, "NewReno collapses: {to_n} timeouts");
    assert!(to_l < to_n, "linux {to_l} timeouts vs NewReno {to_n}");
    assert!(g_l > g_n, "linux {g_l:.1} Mbit/s vs NewReno {g_n:.1}");
}

/// Counts pure ACKs crossing a port.
struct CountAcks(std::sync::Arc<std::sync::atomic::AtomicU64>);

impl ArrivalHook for CountAcks {
    fn on_arrival(&mut self, _a: &Arrival, p: &mut Packet) -> Verdict {
        if p.payload_bytes == 0 {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Verdict::Admit
    }
    fn limit_bytes(&self) -> u64 {
        1 << 30
    }
}

fn acks_for_20_segments(tcp: &str) -> u64 {
    let text = format!(
        "[topology]\nkind = \"star\"\nhosts = 2\n[[apps]]\nkind = \"transfer\"\nsrc = \"h0\"\n\
         dst = \"h1\"\nbytes = \"28960B\"\n[tcp]\nhandshake = false\n{tcp}\n[output]\ntimeseries_bin_us = 0\n"
    );
    let mut sim = build(&text, None).unwrap().sim;
    let n = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let net = &mut sim.cx.net;
    let port = net
        .port_between(net.node("s0").unwrap(), net.node("h0").unwrap())
        .unwrap();
    net.set_qdisc(port, Qdisc::Fifo(Box::new(CountAcks(n.clone()))))
        .unwrap();
    sim.run().unwrap();
    n.load(std::sync::atomic::Ordering::Relaxed)
}

#[test]
fn quick_acks_answer_every_early_segment() {
    // 20 segments: every other one ACKed when delaying, the first 16 each at once in quick-ACK mode
    let delayed = acks_for_20_segments("");
    let quick = acks_for_20_segments("quickack_segments = 16");
    // (the last ACK is still on its way when the run ends)
    assert_eq!(delayed, 9);
    assert_eq!(
        quick - delayed,
        16 - 8,
        "16 ACKs for the first 16 segments instead of 8"
    );
}

// ---------------------------------------------------------------------------
// A profile's `apps` table reaches every [[apps]] entry (the `paper` profile
// of the PDN experiments sets how its applications used TCP)

#[test]
fn a_profile_sets_app_keys_in_every_app_and_only_when_chosen() {
    use xco_sim::scenario::apps::AppSpec;
    let text = |profile: &str| {
        format!(
            r#"
[run]
{profile}
[topology]
kind = "star"
hosts = 4
[[apps]]
kind = "incast"
client = "h0"
servers = "h1..h3"
sru = "10KB"
reuse_connections = true
[[apps]]
kind = "incast"
client = "h1"
servers = "h2..h3"
sru = "10KB"
[profiles.paper.apps]
reuse_connections = false
"#
        )
    };
    let reuse = |t: &str| -> Vec<Option<bool>> {
        xco_sim::scenario::parse(t)
            .unwrap()
            .apps
            .iter()
            .map(|a| match a {
                AppSpec::Incast(s) => s.reuse_connections,
                _ => panic!("an incast app"),
            })
            .collect()
    };
    assert_eq!(reuse(&text("")), vec![Some(true), None]);
    assert_eq!(
        reuse(&text("profile = \"paper\"")),
        vec![Some(false), Some(false)]
    );
    // a key no app has is an error naming it
    let bad = text("profile = \"paper\"").replace("reuse_connections = false", "reuse_conections = false");
    let e = xco_sim::scenario::parse(&bad).expect_err("refused").to_string();
    assert!(e.contains("reuse_conections"), "{e}");
}
