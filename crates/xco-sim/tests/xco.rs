//! XCo in the simulator, end to end: what the spec says coordination does.

use crate::support::{metric, run, xco_metric};

/// 5 senders into one 1 Gb/s port: `udp` of them UDP flat out, the rest TCP;
/// a controller on h6. `xco` is the [xco] section (empty: no coordination).
fn udp_vs_tcp(udp: usize, xco: &str, extra: &str) -> String {
    let mut s = format!(
        r#"[run]
duration_ms = 300
[topology]
kind = "star"
hosts = 7
host_rate = "1Gbps"
link_delay_us = 5
switch_buffer = "128KB"
[output]
timeseries_bin_us = 10000
{extra}
"#
    );
    if udp > 0 {
        s += &format!(
            "[[apps]]\nkind = \"udp\"\nsrc = \"h0..h{}\"\ndst = \"h5\"\n",
            udp - 1
        );
    }
    if udp < 5 {
        s += &format!("[[apps]]\nkind = \"bulk\"\nsrc = \"h{udp}..h4\"\ndst = \"h5\"\n");
    }
    if !xco.is_empty() {
        s += &format!("[xco]\ncontroller = \"h6\"\n{xco}\n");
    }
    s
}

/// Sum of metric over apps of a kind.
fn total(sim: &xco_sim::sim::Sim, kind: &str, name: &str) -> f64 {
    (0..sim.apps.len())
        .filter(|&i| sim.apps[i].kind() == kind)
        .map(|i| metric(sim, i, name))
        .sum()
}

#[test]
fn timeslices_keep_the_link_full_and_tcp_alive_against_udp() {
    let none = run(&udp_vs_tcp(4, "", ""));
    let ts = run(&udp_vs_tcp(4, "mode = \"timeslice\"\nslice_ms = 2", ""));
    let tcp_none = total(&none, "bulk", "goodput_mbps");
    let tcp_ts = total(&ts, "bulk", "goodput_mbps");
    let all_ts = tcp_ts + total(&ts, "udp", "goodput_mbps");
    assert!(
        tcp_none < 10.0,
        "without XCo UDP starves TCP: {tcp_none:.1} Mbit/s"
    );
    assert!(
        total(&none, "udp", "goodput_mbps") < 50.0,
        "and UDP messages lose fragments"
    );
    assert!(
        all_ts > 850.0,
        "timeslices keep application throughput above 85% of the link: {all_ts:.1}"
    );
    assert!(tcp_ts > 100.0, "and the TCP flow above 100 Mbit/s: {tcp_ts:.1}");
}

#[test]
fn rate_limits_land_between_no_coordination_and_timeslices() {
    let all =
        |sim: &xco_sim::sim::Sim| total(sim, "bulk", "goodput_mbps") + total(sim, "udp", "goodput_mbps");
    let none = run(&udp_vs_tcp(4, "", ""));
    let rl = run(&udp_vs_tcp(4, "mode = \"ratelimit\"\nslice_ms = 2", ""));
    let ts = run(&udp_vs_tcp(4, "mode = \"timeslice\"\nslice_ms = 2", ""));
    let tcp = total(&rl, "bulk", "goodput_mbps");
    assert!(tcp > 100.0, "TCP keeps a share under rate limits: {tcp:.1}");
    // UDP sources overflow their own host queues at 1/5 of the link, losing fragments there
    assert!(
        all(&none) < all(&rl) && all(&rl) < all(&ts),
        "none {:.1} < rate limit {:.1} < timeslice {:.1}",
        all(&none),
        all(&rl),
        all(&ts)
    );
}

#[test]
fn work_conservation_gives_slow_senders_unused_slices_to_the_others() {
    // 5 UDP senders over one bottleneck: 3 at 50 Mbit/s, 2 flat out (xco-workconserve)
    let scen = |wc: bool| {
        let mut s = udp_vs_tcp(5, &format!("slice_ms = 2\nwork_conservation = {wc}"), "");
        s = s.replace(
            "[[apps]]\nkind = \"udp\"\nsrc = \"h0..h4\"\ndst = \"h5\"\n",
            "[[apps]]\nkind = \"udp\"\nsrc = \"h0..h2\"\ndst = \"h5\"\nrate = \"50Mbps\"\n\
             [[apps]]\nkind = \"udp\"\nsrc = \"h3..h4\"\ndst = \"h5\"\n",
        );
        run(&s)
    };
    let with = scen(true);
    let without = scen(false);
    let fast = |sim: &xco_sim::sim::Sim| metric(sim, 3, "goodput_mbps") + metric(sim, 4, "goodput_mbps");
    assert!(
        fast(&with) > 1.4 * fast(&without),
        "unlimited senders get the slow senders' spare slices: {:.1} vs {:.1}",
        fast(&with),
        fast(&without)
    );
    assert!(xco_metric(&with, "givebacks") > 10.0);
    assert_eq!(xco_metric(&without, "givebacks"), 0.0);
}

#[test]
fn hosts_fail_open_when_the_controller_goes_silent() {
    let s = udp_vs_tcp(0, "slice_ms = 2\ncontroller_stop_ms = 100\nfail_open_ms = 10", "");
    let sim = run(&s);
    assert!(
        xco_metric(&sim, "fail_opens") >= 5.0,
        "every coordinated sender failed open"
    );
    // after the controller stopped (100 ms) plus the fail-open delay, traffic still flows
    let net = &sim.cx.net;
    let h5 = net.node("h5").unwrap();
    let port = net.port_between(net.node("s0").unwrap(), h5).unwrap();
    let late: u64 = crate::support::flow_throughput(&sim)
        .iter()
        .filter(|&&(t_s, _, _)| t_s > 0.15)
        .map(|&(_, _, mbps)| (mbps * 1e6) as u64)
        .sum();
    assert!(late > 0, "flows carry data after failing open");
    assert!(net.ports[port as usize].stats.delivered_bytes > 0);
}

fn stripe_scenario(n: usize, xco: &str) -> String {
    format!(
        r#"[run]
mtu_bytes = 9000
[topology]
kind = "star"
hosts = {hosts}
link_delay_us = 5
switch_buffer = "128KB"
[[apps]]
kind = "stripe"
client = "h0"
servers = "h1..h{n}"
block = "1MB"
total = "16MB"
[output]
timeseries_bin_us = 0
{xco}
"#,
        hosts = n + 2,
    )
}

#[test]
fn coordinated_striped_reads_lose_no_packet() {
    // slices to one client never overlap, whatever the slice length or N
    for (n, slice) in [(2, 10), (4, 2), (8, 2)] {
        let xco = format!("[xco]\ncontroller = \"h{}\"\nslice_ms = {slice}", n + 1);
        let sim = run(&stripe_scenario(n, &xco));
        let lost: u64 = sim
            .cx
            .net
            .flows
            .iter()
            .filter(|f| f.role == "response")
            .map(|f| f.wire_packets_dropped)
            .sum();
        assert_eq!(lost, 0, "N = {n}, {slice} ms slices: no drops");
        assert!(metric(&sim, 0, "goodput_mbps") > 600.0);
    }
}

#[test]
fn coordination_beats_no_coordination_for_striped_incast() {
    let scen = stripe_scenario;
    let n = 16;
    let none = metric(&run(&scen(n, "")), 0, "goodput_mbps");
    let ts = metric(
        &run(&scen(
            n,
            &format!("[xco]\ncontroller = \"h{}\"\nslice_ms = 2", n + 1),
        )),
        0,
        "goodput_mbps",
    );
    assert!(
        ts > 2.0 * none,
        "timeslices avoid the incast collapse: {ts:.1} vs {none:.1} Mbit/s"
    );
}

/// A k = 4 fat-tree with long TCP flows across pods and UDP, coordinated by `xco`.
fn fat_tree(xco: &str) -> String {
    let mut s = String::from(
        r#"[run]
duration_ms = 30
[topology]
kind = "fat_tree"
k = 4
host_rate = "10Gbps"
link_delay_us = 1
switch_buffer = "100KB"
[output]
timeseries_bin_us = 0
"#,
    );
    for (src, dst) in [(0, 8), (1, 12), (4, 9), (5, 14), (2, 6), (10, 3)] {
        s += &format!("[[apps]]\nkind = \"bulk\"\nsrc = \"h{src}\"\ndst = \"h{dst}\"\n");
    }
    s += "[[apps]]\nkind = \"udp\"\nsrc = \"h13\"\ndst = \"h7\"\nrate = \"3Gbps\"\n";
    s += &format!("[xco]\ncontroller = \"h15\"\nslice_ms = 1\n{xco}\n");
    s
}

fn tcp_switch_drops(sim: &xco_sim::sim::Sim) -> u64 {
    sim.cx
        .net
        .flows
        .iter()
        .filter(|f| f.kind == xco_sim::stats::FlowKind::Tcp)
        .map(|f| f.wire_packets_dropped)
        .sum()
}

#[test]
fn headroom_for_unscheduled_traffic_keeps_tcp_loss_free_for_at_most_its_share_on_a_fat_tree() {
    // XCo admits coordinated senders up to a link's capacity; ACKs and control
    // bypass it. Keeping 5% free (hybrid pacing at the admitted rate) leaves
    // TCP loss-free, for at most about 5% of the goodput. (The full-capacity
    // schedule lost 8 TCP packets here, the same 8 in 30, 60 or 100 ms, while
    // the simulator dispatched control messages itself and the hosts met the
    // controller with their first backlog; driven through the nodes, with the
    // agents joined by the handshake, it loses none in this run.)
    let full = run(&fat_tree("mode = \"timeslice\""));
    let headroom = run(&fat_tree("mode = \"hybrid\"\ncapacity_headroom = 0.05"));
    assert_eq!(
        tcp_switch_drops(&headroom),
        0,
        "with headroom no TCP packet is lost"
    );
    // the price is at most the headroom itself
    let goodput = |sim: &xco_sim::sim::Sim| total(sim, "bulk", "goodput_mbps");
    assert!(
        goodput(&headroom) > 0.93 * goodput(&full),
        "5% headroom costs at most about 5% goodput: {:.0} vs {:.0}",
        goodput(&headroom),
        goodput(&full)
    );
}

#[test]
fn paced_forms_finish_when_the_nic_is_the_bottleneck() {
    // regression: a paced coordinator whose NIC cannot start a packet before
    // its slice ends must not re-arm its timer at the same instant forever
    for mode in ["hybrid", "ratelimit"] {
        let sim = run(&fat_tree(&format!("mode = \"{mode}\"")));
        assert!(sim.cx.now.as_secs_f64() >= 0.03, "{mode} ran to the end");
    }
}

#[test]
fn xco_takes_the_daemons_settings_vocabulary() {
    // the same keys the daemons' [control] test writes (crates/xco-daemon/src/config.rs)
    let all = "mode = \"hybrid\"\nslice_ms = 4\nmin_active_us = 50\nwork_conservation = true\n\
               giveback_hysteresis_us = 300\nbypass_bytes = 100\nfail_open_ms = 30\n\
               report_interval_ms = 10\nfeedback_timeout_ms = 500\ncapacity_headroom = 0.1\n";
    let built = xco_sim::scenario::build(&udp_vs_tcp(1, all, ""), None).unwrap();
    let s = &built.sim.stack.xco.as_ref().unwrap().cfg.settings;
    assert_eq!(s.mode, xco_core::sched::Mode::Hybrid);
    assert_eq!(
        (s.slice, s.min_active),
        (xco_core::Dur::from_ms(4), xco_core::Dur::from_us(50))
    );
    assert_eq!(s.giveback_hysteresis, Some(xco_core::Dur::from_us(300)));
    assert_eq!(s.bypass.packet_bytes, 100);
    assert_eq!(
        (s.fail_open_after, s.report_interval),
        (xco_core::Dur::from_ms(30), xco_core::Dur::from_ms(10))
    );
    assert_eq!(s.feedback_timeout, xco_core::Dur::from_ms(500));
    assert_eq!(s.capacity_headroom, 0.1);
    // the simulator's old names are gone; errors name the key in [xco]
    let e = xco_sim::scenario::build(&udp_vs_tcp(1, "hysteresis_us = 5", ""), None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("hysteresis_us"), "{e}");
    let e = xco_sim::scenario::build(&udp_vs_tcp(1, "slice_ms = 1e-9", ""), None)
        .err()
        .unwrap();
    assert_eq!(e.field, "xco.slice_ms", "{e}");
}

/// Response packets lost in a striped read.
fn stripe_lost(sim: &xco_sim::sim::Sim) -> u64 {
    sim.cx
        .net
        .flows
        .iter()
        .filter(|f| f.role == "response")
        .map(|f| f.wire_packets_dropped)
        .sum()
}

#[test]
fn rate_limited_incast_loses_only_when_n_exceeds_the_switch_buffer_in_frames() {
    // docs/xco-incast-order.md: rate limiting holds each server to 1/N of
    // the link, so the port toward the client never fills from rates; what
    // it cannot stop is the first frame of every server's part arriving at
    // once when a block's requests go out together (HTB's default bucket,
    // 1,600 B, is less than a frame: one frame each). A 128 KB port holds 14
    // jumbo frames (9,038 B), a 64 KB one 7: with N = 8 servers the first
    // loses nothing and the second loses frames, while timeslices (one
    // sender at a time) lose nothing with either.
    let rl = |n: usize, buf: &str| {
        let xco = format!(
            "[xco]\ncontroller = \"h{}\"\nmode = \"ratelimit\"\nslice_ms = 2",
            n + 1
        );
        run(&stripe_scenario(n, &xco).replace("128KB", buf))
    };
    assert_eq!(stripe_lost(&rl(8, "128KB")), 0, "8 frames fit in 14");
    assert!(stripe_lost(&rl(8, "64KB")) > 0, "8 frames do not fit in 7");
    let ts = run(&stripe_scenario(8, "[xco]\ncontroller = \"h9\"\nslice_ms = 2").replace("128KB", "64KB"));
    assert_eq!(stripe_lost(&ts), 0);
}

#[test]
fn the_simulators_rate_limiter_gets_the_burst_tc_gives_an_htb_class() {
    use xco_core::coord::bucket::{tc_default_burst_bytes, HIGH_RES_HZ};
    use xco_core::coord::{RateBurst, Settings, SettingsSpec};
    let burst_of = |keys: &str| {
        let xco = format!("[xco]\ncontroller = \"h9\"\nmode = \"ratelimit\"\n{keys}");
        let built = xco_sim::scenario::build(&stripe_scenario(8, &xco), None).unwrap();
        let x = built.sim.stack.xco.as_ref().unwrap();
        let coord = x.coords.iter().flatten().next().expect("a coordinated host");
        (x.cfg.settings.rate_burst, coord.node.coord.state.cfg.rate_burst)
    };
    // the default: the daemons' [control] without the keys resolves to the
    // same (one Settings::resolve for both), and each rate's depth is tc's
    let (settings, coord) = burst_of("");
    assert_eq!(settings, coord, "the coordinators run with the resolved setting");
    assert_eq!(
        coord,
        Settings::resolve(&SettingsSpec::default()).unwrap().rate_burst
    );
    assert_eq!(coord, RateBurst::Tc { hz: HIGH_RES_HZ });
    for rate in [62_500_000, 125_000_000, 500_000_000, 1_000_000_000] {
        assert_eq!(coord.bytes(rate), tc_default_burst_bytes(rate, HIGH_RES_HZ));
        assert_eq!(
            coord.bytes(rate),
            1600,
            "rate / 10^9 is under a byte at these rates"
        );
    }
    assert_eq!(burst_of("rate_burst_bytes = 0").1, RateBurst::PACER);
    assert_eq!(burst_of("rate_burst_hz = 250").1, RateBurst::Tc { hz: 250 });
    let e = xco_sim::scenario::build(
        &stripe_scenario(
            8,
            "[xco]\ncontroller = \"h9\"\nrate_burst_bytes = 0\nrate_burst_hz = 250",
        ),
        None,
    )
    .err()
    .unwrap();
    assert_eq!(e.field, "xco.rate_burst_hz", "{e}");
}

#[test]
fn rate_limited_striped_reads_lose_frames_once_the_bucket_holds_more_than_one() {
    // docs/xco-incast-order.md: the order of the incast figure depends on
    // whether a server's bucket lets a second jumbo frame follow the first
    // at a block's start. tc's default on a high-resolution-timer kernel
    // (1,600 B) does not, nor does the ideal pacer: N = 8 loses nothing. A
    // bucket of one frame (9,038 B) does, and so does tc's default on a
    // kernel whose get_hz() is HZ = 1000 (rate / 1000 + 1,600 B).
    let rl = |n: usize, keys: &str| {
        let xco = format!(
            "[xco]\ncontroller = \"h{}\"\nmode = \"ratelimit\"\nslice_ms = 2\n{keys}",
            n + 1
        );
        stripe_lost(&run(&stripe_scenario(n, &xco)))
    };
    assert_eq!(rl(8, ""), 0, "tc's default, high-resolution timers");
    assert_eq!(rl(8, "rate_burst_bytes = 0"), 0, "the ideal pacer");
    assert!(
        rl(8, "rate_burst_bytes = 9038") > 0,
        "a second frame per server overflows"
    );
    assert!(rl(4, "rate_burst_hz = 1000") > 0, "a jiffy's tokens at HZ = 1000");
}

#[test]
fn at_the_largest_n_rate_limits_lose_first_frames_where_timeslices_lose_none() {
    // The XCo paper: at the largest N timeslices beat rate limits, which beat
    // none. What makes rate limits lose there (docs/xco-incast-order.md) is
    // the first frame of every server's part arriving at once: 16 jumbo
    // frames into a 14-frame port; timeslices send one server at a time and
    // lose nothing. Whether those few losses cost a timeout (and so the
    // order of the two) depends on which frames are lost: since a
    // coordinator keeps every pending directive until its start (seed 6975
    // of the control-plane harness), rate limits lose 8 frames here and
    // recover by fast retransmit at most seeds (measured, seeds 1-8: 980
    // Mbit/s at 6, 154 and 352 at two); before, pending rate directives
    // superseded by later ones were lost, stale rates overran the port
    // (15-151 drops, 39-395 Mbit/s at seeds 1-8). So the losses are
    // asserted, not the order.
    let n = 16;
    let xco = |mode: &str| {
        format!(
            "[xco]\ncontroller = \"h{}\"\nmode = \"{mode}\"\nslice_ms = 2",
            n + 1
        )
    };
    let none = run(&stripe_scenario(n, ""));
    let rl = run(&stripe_scenario(n, &xco("ratelimit")));
    let ts = run(&stripe_scenario(n, &xco("timeslice")));
    let g = |sim: &xco_sim::sim::Sim| metric(sim, 0, "goodput_mbps");
    eprintln!(
        "N = 16: none {:.1}, ratelimit {:.1} ({} lost), timeslice {:.1} Mbit/s ({} lost)",
        g(&none),
        g(&rl),
        stripe_lost(&rl),
        g(&ts),
        stripe_lost(&ts)
    );
    assert_eq!(stripe_lost(&ts), 0, "one server at a time: nothing lost");
    assert!(
        stripe_lost(&rl) > 0,
        "the first frames of a block overflow the port"
    );
    assert!(
        g(&ts) > 5.0 * g(&none) && g(&rl) > g(&none),
        "both beat no coordination"
    );
}

#[test]
fn timeslices_lose_a_give_back_hysteresis_per_server_part() {
    // below N = 16 rate limiting wins because each server's part (1 MB / N)
    // is shorter than a slice and the slice is handed on only after the
    // give-back hysteresis: a shorter hysteresis gives a faster read. Not at
    // every start phase: the agents start at seeded times over one join
    // timeout (XcoSim::start), and at some phases a 50-us hysteresis gives a
    // slice back inside a server's ACK-clocked gap (measured, seeds 1-6:
    // 1.41x at four, 0.94x at seeds 1 and 6), so the claim is judged over
    // six seeds: it must hold at most of them
    let n = 16;
    let ts = |h: u32, seed: u64| {
        let xco = format!(
            "[xco]\ncontroller = \"h{}\"\nslice_ms = 2\ngiveback_hysteresis_us = {h}",
            n + 1
        );
        let text = stripe_scenario(n, &xco).replacen("[run]\n", &format!("[run]\nseed = {seed}\n"), 1);
        metric(&run(&text), 0, "goodput_mbps")
    };
    let ratios: Vec<f64> = (1..=6).map(|seed| ts(50, seed) / ts(200, seed)).collect();
    eprintln!("N = 16 timeslices, goodput with a 50-us over a 200-us hysteresis, seeds 1-6: {ratios:.3?}");
    let faster = ratios.iter().filter(|&&r| r > 1.1).count();
    assert!(
        faster > ratios.len() / 2,
        "50 us faster by > 10 % at {faster} of 6 seeds: {ratios:.3?}"
    );
}

/// One UDP sender (the UDP app's multi-frame datagrams) into h5 at line
/// rate, 2-ms slices, control out of band with a 200-µs trip, the given lead.
fn one_udp_sender(lead_us: u32) -> String {
    udp_vs_tcp(5, "", "").replace("src = \"h0..h4\"", "src = \"h0\"")
        + &format!(
            "[xco]\ncontroller = \"h6\"\nmode = \"timeslice\"\nslice_ms = 2\ncontrol = \"outofband\"\n\
             control_latency_us = 200\ndirective_lead_us = {lead_us}\n"
        )
}

#[test]
fn slots_decided_ahead_reach_the_hosts_before_the_boundary_and_open_at_the_same_instants() {
    // a constant 200-µs trip: without a lead a slot's directive arrives a trip after its
    // boundary; with a 500-µs lead it arrives before and waits for its start (receipt plus
    // its offset = the boundary plus the trip), so the gates open at the same instants
    let late = run(&one_udp_sender(0));
    let ahead = run(&one_udp_sender(500));
    let d = |s: &xco_sim::sim::Sim| xco_metric(s, "directives");
    let early = |s: &xco_sim::sim::Sim| xco_metric(s, "directives_ahead");
    assert_eq!(early(&late), 0.0, "no lead: every directive applies on receipt");
    assert!(d(&ahead) > 100.0);
    assert!(
        early(&ahead) >= d(&ahead) - 2.0,
        "with the lead every slot but the first is decided ahead: {} of {}",
        early(&ahead),
        d(&ahead)
    );
    assert_eq!(d(&late), d(&ahead), "the same slots");
    let g = |s: &xco_sim::sim::Sim| total(s, "udp", "goodput_mbps");
    assert!(
        (g(&late) - g(&ahead)).abs() < 0.005 * g(&late),
        "the same instants, the same goodput: {:.1} vs {:.1} Mbit/s",
        g(&late),
        g(&ahead)
    );
}

#[test]
fn on_demand_ungates_a_lone_sender_and_keeps_coordinating_udp_against_tcp() {
    // one TCP sender: nobody can overrun its path, so it is ungated after a window
    let one = |od: &str| {
        let s = format!(
            "[run]\nduration_ms = 100\n[topology]\nkind = \"star\"\nhosts = 3\nhost_rate = \"1Gbps\"\n\
             link_delay_us = 5\nswitch_buffer = \"128KB\"\n[[apps]]\nkind = \"bulk\"\nsrc = \"h0\"\n\
             dst = \"h1\"\n[xco]\ncontroller = \"h2\"\nslice_ms = 2\n{od}\n"
        );
        run(&s)
    };
    let lone = one("on_demand = true");
    assert!(xco_metric(&lone, "ungated_sets") >= 1.0);
    let ungated = xco_metric(&lone, "ungated_packets");
    assert_eq!(xco_metric(&lone, "links_congested"), 0.0);
    let off = one("");
    let held_off = xco_metric(&off, "held_packets");
    assert!(
        ungated > 0.6 * held_off,
        "after its first windows the flow is ungated: {ungated} packets of {held_off} \
         (those held without on-demand)"
    );
    // four UDP senders and a TCP one into one port: the link is congested from
    // the start and stays coordinated, with the same result as without on-demand
    let ts = "mode = \"timeslice\"\nslice_ms = 2";
    let base = run(&udp_vs_tcp(4, ts, ""));
    let od = run(&udp_vs_tcp(4, &format!("{ts}\non_demand = true"), ""));
    assert!(xco_metric(&od, "links_congested") >= 1.0);
    assert_eq!(xco_metric(&od, "ungated_packets"), 0.0);
    for kind in ["bulk", "udp"] {
        assert_eq!(
            total(&od, kind, "goodput_mbps"),
            total(&base, kind, "goodput_mbps"),
            "{kind} goodput"
        );
    }
}

#[test]
fn the_simulators_agents_join_by_the_handshake_and_obey_only_the_controllers_signed_run() {
    use xco_core::sched::{Directive, DirectiveKind};
    use xco_core::wire::{ControllerKeys, Echo, Message, Repr, CONTROLLER_ID};
    use xco_core::{Dur, Time};
    use xco_sim::xco::channel::Datagram;
    let mut built = xco_sim::scenario::build(&udp_vs_tcp(0, "slice_ms = 2", ""), None).unwrap();
    let sim = &mut built.sim;
    let mut t = Time::ZERO + Dur::from_ms(50);
    sim.run_until(t).unwrap();
    let node = |name: &str| sim.cx.net.node(name).unwrap();
    let (h0, h1, h5, h6) = (node("h0"), node("h1"), node("h5"), node("h6"));
    let x = sim.stack.xco.as_ref().unwrap();
    let run = x.controller().run();
    // every agent joined once, by the challenge round over the control network,
    // and the controller sends its directives to the address it confirmed
    for n in ["h0", "h1", "h2", "h3", "h4", "h5"].map(node) {
        let a = x.agent(n).expect("h0..h5 are coordinated");
        assert_eq!(a.stats.joins, 1, "node {n} joined once");
        assert_eq!(a.run(), Some(run), "node {n} obeys the controller's run");
        assert_eq!(x.controller().addr(x.host_index(n)), Some(n));
    }
    assert!(x.agent(h6).is_none(), "the controller's host is not coordinated");
    let host = x.host_index(h0);
    let names: Vec<String> = (0..7).map(|i| format!("h{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let forger = ControllerKeys::new(&[7u8; 32], &names);
    // (fresh: it echoes h0's latest message as received at once and signs
    // now, on the simulator's one clock, as the controller's own grants do)
    let (last_seq, last_at) = x.agent(h0).unwrap().last_sent();
    let echo = Echo {
        seq: last_seq,
        received_ns: last_at.ps() / 1000,
        signed_ns: sim.cx.now.ps() / 1000,
    };
    let directive = |keys: &ControllerKeys, run: u64| {
        keys.encode(&Repr {
            host: CONTROLLER_ID,
            run,
            seq: 1 << 40,
            msg: Message::Directive(
                Directive {
                    host,
                    epoch: 1 << 40,
                    start_in: Dur::ZERO,
                    kind: DirectiveKind::Slice {
                        dest: Some(x.host_index(h5)),
                        len: Dur::from_ms(2),
                        rate_bps: None,
                    },
                },
                echo,
            ),
        })
    };
    let other_run = directive(x.keys(), run ^ 1);
    let forged = directive(&forger, run);
    let genuine = directive(x.keys(), run);
    // (what h0's agent counts: whether it took the injected directive (its
    // epoch), rejections by session and signature, datagrams dropped unread, joins)
    let counts = |sim: &xco_sim::sim::Sim| {
        let a = sim.stack.xco.as_ref().unwrap().agent(h0).unwrap();
        (
            a.coord.state.epoch == 1 << 40,
            a.rejected.session,
            a.rejected.auth,
            a.stats.foreign,
            a.stats.joins,
        )
    };
    let mut deliver = |sim: &mut xco_sim::sim::Sim, from: u32, bytes: Vec<u8>| {
        let d = Datagram {
            from,
            to: h0,
            to_controller: false,
            bytes,
        };
        let now = sim.cx.now;
        sim.stack
            .xco
            .as_mut()
            .unwrap()
            .send_datagram(now, &mut sim.cx.ev, &mut sim.cx.net, d);
        t += Dur::from_us(100);
        sim.run_until(t).unwrap();
    };
    let (applied, session, auth, foreign, joins) = counts(sim);
    assert!(!applied);
    deliver(sim, h6, other_run);
    assert_eq!(
        counts(sim),
        (applied, session + 1, auth, foreign, joins),
        "a directive of another run, signed with the controller's key: refused, no rejoin"
    );
    deliver(sim, h6, forged);
    assert_eq!(
        counts(sim),
        (applied, session + 1, auth + 1, foreign, joins),
        "a directive of the run signed with another key: refused"
    );
    deliver(sim, h1, genuine.clone());
    assert_eq!(
        counts(sim),
        (applied, session + 1, auth + 1, foreign + 1, joins),
        "a genuine directive from another host's address: dropped unread"
    );
    deliver(sim, h6, genuine);
    assert_eq!(
        counts(sim),
        (true, session + 1, auth + 1, foreign + 1, joins),
        "the same from the controller's address is obeyed"
    );
}

#[test]
fn keyed_auth_changes_no_output_only_the_cost_of_authenticating_directives() {
    // the same datagram sizes and the same checks: every table is the same,
    // in band (the control packets' sizes cross the switches) and for every form
    for xco in [
        "mode = \"timeslice\"\nslice_ms = 2",
        "mode = \"ratelimit\"\nslice_ms = 2",
    ] {
        let signed = xco_sim::run_scenario(&udp_vs_tcp(2, xco, ""), None).unwrap();
        let keyed = udp_vs_tcp(2, &format!("{xco}\nauth = \"keyed\""), "");
        let keyed = xco_sim::run_scenario(&keyed, None).unwrap();
        assert!(signed.apps_csv.contains("xco,directives,"));
        assert_eq!(signed.flows_csv, keyed.flows_csv, "{xco}");
        assert_eq!(signed.apps_csv, keyed.apps_csv, "{xco}");
        assert_eq!(signed.ports_csv, keyed.ports_csv, "{xco}");
        assert_eq!(signed.timeseries_csv, keyed.timeseries_csv, "{xco}");
    }
    let keyed_cfg = |auth: &str| {
        let built = xco_sim::scenario::build(&udp_vs_tcp(0, auth, ""), None).unwrap();
        let x = built.sim.stack.xco.as_ref().unwrap();
        // keyed: the controller's keys have no public key to hand the agents
        let keys = x.keys().clone();
        let has_public = std::panic::catch_unwind(move || keys.public_key()).is_ok();
        (x.cfg.keyed, has_public)
    };
    assert_eq!(keyed_cfg("auth = \"keyed\""), (true, false));
    assert_eq!(keyed_cfg("slice_ms = 2"), (false, true), "Ed25519 by default");
    assert_eq!(keyed_cfg("auth = \"ed25519\""), (false, true));
    let e = xco_sim::scenario::build(&udp_vs_tcp(0, "auth = \"hmac\"", ""), None)
        .err()
        .unwrap();
    assert!(e.field.starts_with("xco"), "{e}");
}

#[test]
fn a_controller_stopped_at_t_0_stops_in_the_run_not_in_the_joins_before_it() {
    // the agents join before t = 0 whatever the stop time; the stopped
    // controller then directs nothing and the senders fail open by their own timers
    let s = udp_vs_tcp(0, "slice_ms = 2\ncontroller_stop_ms = 0\nfail_open_ms = 10", "");
    let sim = run(&s);
    assert!(xco_metric(&sim, "joined_before_us") > 0.0);
    assert!(xco_metric(&sim, "joins") >= 6.0, "every agent joined");
    assert_eq!(
        xco_metric(&sim, "directives"),
        0.0,
        "a stopped controller directs nothing"
    );
    assert!(xco_metric(&sim, "fail_opens") >= 5.0, "every sender failed open");
}

#[test]
fn three_thousand_agents_all_join_in_band_before_the_run() {
    // sicc-latency's tree (3,000 hosts, 1 Gbit/s, 100 KB edge buffers), the
    // controller on h0, control in-band. Started at one instant, every
    // agent's joins and periodic messages left in step and the same agents
    // lost every race for the controller's port: from 1,200 agents on, some
    // never joined and the build failed after 60 simulated seconds (and
    // with thousands of agents some report is always in flight, so
    // "settled" must not wait for none)
    let text = r#"[run]
duration_ms = 1
[topology]
kind = "tree3"
servers_per_rack = 60
racks = 50
racks_per_agg = 10
cores = 1
host_rate = "1Gbps"
tor_uplink_rate = "1Gbps"
tor_oversubscription = "1:4"
agg_core_rate = "10Gbps"
edge_buffer = "100KB"
agg_buffer = "1MB"
core_buffer = "1MB"
link_delay_us = 5
[[apps]]
kind = "bulk"
src = "h1"
dst = "h2"
stop_ms = 1
[output]
timeseries_bin_us = 0
[xco]
controller = "h0"
auth = "keyed"
"#;
    let sim = run(text);
    let joins = xco_metric(&sim, "joins");
    let joined_before_us = xco_metric(&sim, "joined_before_us");
    eprintln!("3,000 agents: {joins} joins, joined {joined_before_us} us before t = 0");
    assert!(joins >= 2999.0, "every agent joined: {joins}");
    assert!(joined_before_us > 0.0);
}
