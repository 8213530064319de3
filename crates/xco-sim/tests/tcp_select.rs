//! Per-host (`[[tcp.hosts]]`) and per-app (`[[apps]] tcp = ...`) TCP
//! profiles: in one run a NewReno host and a DCTCP host behave as their
//! own profiles, each end negotiating SACK and ECN as Linux does.

use crate::support::{metric, run};
use xco_sim::scenario::build;
use xco_sim::sim::Sim;
use xco_sim::tcp::congestion::Cc;

/// Bulk senders `srcs` to h2 for 60 ms through a step-marking port (K 30 KB)
/// to h2; `extra` is added at the end.
fn scenario(srcs: &[&str], extra: &str) -> String {
    let mut t = String::from(
        "[run]\nduration_ms = 60\n[topology]\nkind = \"star\"\nhosts = 3\nlink_delay_us = 10\nswitch_buffer = \"300KB\"\n\
         [[topology.queues]]\nport = \"s0->h2\"\nkind = \"step\"\nk = \"30KB\"\n[output]\ntimeseries_bin_us = 0\n",
    );
    for s in srcs {
        t.push_str(&format!(
            "[[apps]]\nkind = \"bulk\"\nsrc = \"{s}\"\ndst = \"h2\"\n"
        ));
    }
    t.push_str(extra);
    t
}

/// The data sender of the connection from host `src`.
fn sender<'a>(sim: &'a Sim, src: &str) -> &'a xco_sim::tcp::endpoint::TcpEndpoint {
    let h = sim.cx.net.node(src).unwrap();
    sim.tcp.eps.iter().find(|e| e.host == h).unwrap()
}

#[test]
fn a_newreno_host_and_a_dctcp_host_run_their_own_profiles_in_one_run() {
    let text = scenario(
        &["h0", "h1"],
        "[[tcp.hosts]]\nhosts = [\"h1\", \"h2\"]\nprofile = \"dctcp\"\n",
    );
    let sim = run(&text);
    let (reno, dctcp) = (sender(&sim, "h0"), sender(&sim, "h1"));
    assert!(
        matches!(reno.congestion_control(), Cc::NewReno(_)),
        "{:?}",
        reno.congestion_control()
    );
    assert!(!sim.stack.tcp.cfg_of(reno.cfg).sack && !sim.stack.tcp.cfg_of(reno.cfg).ecn);
    // h2 runs dctcp too, but against NewReno h0 negotiates no ECN: DCTCP falls back to NewReno
    let h2_of_reno = &sim.tcp.eps[reno.peer_ep as usize];
    assert!(matches!(h2_of_reno.congestion_control(), Cc::NewReno(_)));
    assert!(!sim.stack.tcp.cfg_of(h2_of_reno.cfg).ecn);
    let Cc::Dctcp(d) = dctcp.congestion_control() else {
        panic!("h1 runs {:?}", dctcp.congestion_control())
    };
    let c = sim.stack.tcp.cfg_of(dctcp.cfg);
    assert!(c.ecn && c.sack && c.rack && c.tlp, "the dctcp profile's settings");
    assert!(d.alpha > 0.0 && dctcp.ecn.ece_received > 0, "h1 answers marks");
    assert_eq!(reno.ecn.ece_received, 0, "h0 sends no ECT: nothing marked");
    let flows = &sim.cx.net.flows;
    let port = sim
        .cx
        .net
        .port_between(sim.cx.net.node("s0").unwrap(), sim.cx.net.node("h2").unwrap())
        .unwrap();
    assert!(sim.cx.net.ports[port as usize].stats.marked_packets > 0);
    // NewReno's unmarked packets hold the queue far above K, so DCTCP sees
    // nearly every packet marked and yields: the known coexistence result
    let max_q = sim.cx.net.ports[port as usize].stats.max_backlog_bytes;
    assert!(max_q > 3 * 30_000, "max queue {max_q} B");
    assert!(d.alpha > 0.5, "alpha {}", d.alpha);
    let bytes = |e: &xco_sim::tcp::endpoint::TcpEndpoint| flows[e.tx_flow as usize].app_bytes_delivered;
    assert!(
        bytes(reno) > 2 * bytes(dctcp),
        "NewReno {} B, DCTCP {} B",
        bytes(reno),
        bytes(dctcp)
    );
}

#[test]
fn a_host_profile_on_both_ends_is_the_run_wide_profile_output_for_output() {
    let wide = run(&scenario(&["h1"], "[tcp]\nprofile = \"dctcp\"\n"));
    let per_host = run(&scenario(
        &["h1"],
        "[[tcp.hosts]]\nhosts = \"h*\"\nprofile = \"dctcp\"\n",
    ));
    assert_ne!(sender(&per_host, "h1").cfg, 0, "the host's own settings");
    for m in ["goodput_mbps", "bytes_delivered"] {
        assert_eq!(metric(&wide, 0, m), metric(&per_host, 0, m), "{m}");
    }
    let (a, b) = (sender(&wide, "h1"), sender(&per_host, "h1"));
    assert_eq!((a.ecn, a.snd_una), (b.ecn, b.snd_una));
}

#[test]
fn an_app_profile_applies_to_both_ends_of_its_connections() {
    let text = scenario(&["h0", "h1"], "").replacen("src = \"h1\"\n", "src = \"h1\"\ntcp = \"linux\"\n", 1)
        + "[[tcp.hosts]]\nhosts = \"h1\"\nprofile = \"dctcp\"\n";
    let sim = run(&text);
    let s = sender(&sim, "h1");
    assert!(
        matches!(s.congestion_control(), Cc::Cubic(_)),
        "the app's beats the host's"
    );
    assert!(matches!(
        sim.tcp.eps[s.peer_ep as usize].congestion_control(),
        Cc::Cubic(_)
    ));
    assert!(sim.stack.tcp.cfg_of(s.cfg).sack);
    assert!(matches!(sender(&sim, "h0").congestion_control(), Cc::NewReno(_)));
}

#[test]
fn tcp_selection_errors_name_the_field() {
    let err = |extra: &str| build(&scenario(&["h0"], extra), None).err().unwrap().to_string();
    let e = err("[[tcp.hosts]]\nhosts = \"h1\"\nprofile = \"bsd\"\n");
    assert!(e.starts_with("tcp.hosts[0].profile:") && e.contains("bsd"), "{e}");
    let e = err("[[tcp.hosts]]\nhosts = \"x*\"\nprofile = \"linux\"\n");
    assert!(e.starts_with("tcp.hosts[0].hosts:"), "{e}");
    let e = err("[[tcp.hosts]]\nhosts = \"h*\"\nprofile = \"linux\"\n[[tcp.hosts]]\nhosts = \"h1\"\nprofile = \"dctcp\"\n");
    assert!(
        e.starts_with("tcp.hosts[1].hosts:") && e.contains("tcp.hosts[0]"),
        "{e}"
    );
    let e = err("[[tcp.hosts]]\nhosts = \"h1\"\nprofile = \"linux\"\ncc = \"cubic\"\n");
    assert!(e.contains("cc"), "{e}");
    let e = err("[tcp]\necn = false\n[[tcp.hosts]]\nhosts = \"h1\"\nprofile = \"dctcp\"\n");
    assert!(e.starts_with("tcp.ecn:"), "{e}");
    let app = |line: &str| {
        let t = scenario(&["h0"], "").replacen("dst = \"h2\"\n", &format!("dst = \"h2\"\n{line}\n"), 1);
        build(&t, None).err().unwrap().to_string()
    };
    let e = app("tcp = \"vegas\"");
    assert!(e.starts_with("apps[0].tcp:") && e.contains("vegas"), "{e}");
    let e = app("tcp = 3");
    assert!(e.starts_with("apps[0].tcp:") && e.contains("string"), "{e}");
}
