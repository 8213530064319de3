//! DCTCP (RFC 8257) against a K-threshold marking port: the queue stays
//! near K, alpha converges to the marked fraction, the link stays busy.

use std::sync::{Arc, Mutex};
use xco_core::Time;
use xco_sim::net::packet::Packet;
use xco_sim::net::qdisc::{Arrival, ArrivalHook, Qdisc, Verdict};
use xco_sim::net::step_mark::StepMark;
use xco_sim::scenario::build;
use xco_sim::tcp::congestion::Cc;

/// What the bottleneck saw after the warm-up.
#[derive(Default)]
struct Seen {
    backlog_sum: f64,
    arrivals: u64,
    max_backlog: u64,
    ect: u64,
    marked: u64,
}

/// The step marker, recording the queue at each data arrival after `from`.
struct Watched {
    inner: StepMark,
    from: Time,
    seen: Arc<Mutex<Seen>>,
}

impl ArrivalHook for Watched {
    fn on_arrival(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict {
        let v = self.inner.on_arrival(a, pkt);
        if a.now >= self.from && pkt.payload_bytes > 0 {
            let mut s = self.seen.lock().unwrap();
            s.backlog_sum += a.backlog_bytes as f64;
            s.arrivals += 1;
            s.max_backlog = s.max_backlog.max(a.backlog_bytes);
            s.ect += u64::from(pkt.is_ect());
            s.marked += u64::from(v == Verdict::AdmitMarked);
        }
        v
    }
    fn limit_bytes(&self) -> u64 {
        self.inner.limit_bytes
    }
}

const SENDERS: usize = 4;
const K_BYTES: u64 = 30_000;

#[test]
fn dctcp_holds_the_queue_near_k_with_alpha_at_the_marked_fraction() {
    let mut text = String::from(
        "[run]\nduration_ms = 120\n[topology]\nkind = \"star\"\nhosts = 5\nlink_delay_us = 10\nswitch_buffer = \"300KB\"\n\
         [tcp]\ncc = \"dctcp\"\n[output]\ntimeseries_bin_us = 0\n",
    );
    for i in 0..SENDERS {
        text.push_str(&format!(
            "[[apps]]\nkind = \"bulk\"\nsrc = \"h{i}\"\ndst = \"h4\"\n"
        ));
    }
    let mut sim = build(&text, None).unwrap().sim;
    assert!(sim.stack.tcp.cfg.ecn, "dctcp implies ECN");
    let warm = Time::ZERO + xco_core::Dur::from_ms(20);
    let end = Time::ZERO + xco_core::Dur::from_ms(120);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let net = &mut sim.cx.net;
    let port = net
        .port_between(net.node("s0").unwrap(), net.node("h4").unwrap())
        .unwrap();
    let hook = Watched {
        inner: StepMark::new(K_BYTES, 300_000),
        from: warm,
        seen: seen.clone(),
    };
    net.set_qdisc(port, Qdisc::Fifo(Box::new(hook))).unwrap();
    sim.run_until(warm).unwrap();
    let wire0 = sim.cx.net.ports[port as usize].stats.delivered_bytes;
    sim.run_until(end).unwrap();
    let wire1 = sim.cx.net.ports[port as usize].stats.delivered_bytes;
    let s = seen.lock().unwrap();
    let mean_backlog = s.backlog_sum / s.arrivals as f64;
    let f = s.marked as f64 / s.ect as f64;
    let utilisation = (wire1 - wire0) as f64 * 8.0 / (1e9 * 0.1);
    let alphas: Vec<f64> = (0..SENDERS)
        .map(|i| match sim.tcp.eps[2 * i].congestion_control() {
            Cc::Dctcp(d) => d.alpha,
            other => panic!("not DCTCP: {other:?}"),
        })
        .collect();
    let mean_alpha = alphas.iter().sum::<f64>() / SENDERS as f64;
    let drops: u64 = sim
        .cx
        .net
        .flows
        .iter()
        .map(|fl| fl.timeouts + fl.fast_retransmits)
        .sum();
    assert_eq!(drops, 0, "marking, not loss, controls the queue");
    assert!(
        (0.75 * K_BYTES as f64..1.25 * K_BYTES as f64).contains(&mean_backlog),
        "mean queue {mean_backlog:.0} B, K {K_BYTES} B"
    );
    assert!(s.max_backlog < 3 * K_BYTES, "max queue {} B", s.max_backlog);
    assert!(f > 0.01 && f < 0.9, "packets marked, not all: {f:.4}");
    // alpha is an EWMA (g = 1/16) of each sender's marked fraction: the
    // mean within 15% of the port's, every sender's within 25%
    assert!(
        (mean_alpha - f).abs() < 0.15 * f,
        "alpha {mean_alpha:.4} vs marked fraction {f:.4}"
    );
    for a in &alphas {
        assert!((a - f).abs() < 0.25 * f, "a sender's alpha {a:.4} vs {f:.4}");
    }
    assert!(utilisation > 0.9, "bottleneck busy {utilisation:.3} of the time");
}

/// Four DCTCP senders to h4 through `s0->h4` with the given
/// `[[topology.queues]]` settings for that port.
fn step_scenario(queue: &str) -> String {
    let mut text = format!(
        "[run]\nduration_ms = 120\n[topology]\nkind = \"star\"\nhosts = 5\nlink_delay_us = 10\nswitch_buffer = \"300KB\"\n\
         [[topology.queues]]\nport = \"s0->h4\"\nkind = \"step\"\n{queue}\n\
         [tcp]\nprofile = \"dctcp\"\n[output]\ntimeseries_bin_us = 0\n"
    );
    for i in 0..SENDERS {
        text.push_str(&format!(
            "[[apps]]\nkind = \"bulk\"\nsrc = \"h{i}\"\ndst = \"h4\"\n"
        ));
    }
    text
}

#[test]
fn the_step_queue_key_marks_at_k_and_dctcp_keeps_the_queue_there() {
    for queue in ["k = \"30KB\"", "k_packets = 20"] {
        let mut sim = build(&step_scenario(queue), None).unwrap().sim;
        let port = {
            let net = &sim.cx.net;
            net.port_between(net.node("s0").unwrap(), net.node("h4").unwrap())
                .unwrap()
        };
        let warm = Time::ZERO + xco_core::Dur::from_ms(20);
        sim.run_until(warm).unwrap();
        let before = sim.cx.net.ports[port as usize].stats;
        sim.cx.net.ports[port as usize].stats.max_backlog_bytes = 0;
        sim.run_until(Time::ZERO + xco_core::Dur::from_ms(120)).unwrap();
        let after = &sim.cx.net.ports[port as usize].stats;
        let marked = after.marked_packets - before.marked_packets;
        let arrived = after.arrived_packets - before.arrived_packets;
        let utilisation = (after.delivered_bytes - before.delivered_bytes) as f64 * 8.0 / (1e9 * 0.1);
        assert!(
            marked > 0 && marked < arrived,
            "{queue}: {marked} of {arrived} marked"
        );
        assert_eq!(after.dropped_packets, 0, "{queue}: marks, not drops");
        // K = 30 KB (20 frames of 1518 B = 30,360 B): the queue stays within a few K
        assert!(
            after.max_backlog_bytes < 3 * K_BYTES,
            "{queue}: max queue {} B",
            after.max_backlog_bytes
        );
        assert!(utilisation > 0.9, "{queue}: bottleneck busy {utilisation:.3}");
    }
    // without the key the same run fills the 300 KB buffer with drop-tail
    let plain = step_scenario("k = \"30KB\"").replace("kind = \"step\"\nk = \"30KB\"", "kind = \"droptail\"");
    let mut sim = build(&plain, None).unwrap().sim;
    sim.run().unwrap();
    let net = &sim.cx.net;
    let port = net
        .port_between(net.node("s0").unwrap(), net.node("h4").unwrap())
        .unwrap();
    assert_eq!(net.ports[port as usize].stats.marked_packets, 0);
    assert!(net.ports[port as usize].stats.max_backlog_bytes > 3 * K_BYTES);
}

#[test]
fn step_queue_errors_name_the_field() {
    let err = |q: &str| build(&step_scenario(q), None).err().unwrap().to_string();
    let e = err("k = \"30KB\"\nk_packets = 20");
    assert!(
        e.starts_with("topology.queues[0].k:") && e.contains("exactly one"),
        "{e}"
    );
    let e = err("");
    assert!(e.starts_with("topology.queues[0].k:"), "{e}");
    let e = err("k = \"400KB\"");
    assert!(
        e.starts_with("topology.queues[0].k:") && e.contains("below the buffer"),
        "{e}"
    );
    let e = err("k_packets = 0");
    assert!(e.starts_with("topology.queues[0].k_packets:"), "{e}");
    let e = err("k = \"30KB\"\nmax_p = 0.1");
    assert!(e.contains("topology.queues[0].max_p"), "{e}");
}
