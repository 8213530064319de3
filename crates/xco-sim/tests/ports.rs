//! Ports and queue disciplines: the arrival hook sees every arrival (idle
//! ports too), a scheduled FIFO matches the fast path, SFQ shares fairly
//! where drop-tail does not, ECN marks travel to the receiver and back, and
//! ports count arrivals and drops per input.

use crate::support::{metric, TRANSFER_1MB};
use std::sync::{Arc, Mutex};
use xco_core::Time;
use xco_sim::net::packet::{Packet, PktKind, FLAG_CWR, FLAG_ECE};
use xco_sim::net::qdisc::{Arrival, ArrivalHook, DropReason, Qdisc, Verdict};
use xco_sim::net::scheduled::ScheduledFifo;
use xco_sim::net::sfq::Sfq;
use xco_sim::net::Net;
use xco_sim::scenario::build;
use xco_sim::sim::Sim;

fn sim_of(text: &str) -> Sim {
    build(text, None)
        .unwrap_or_else(|e| panic!("scenario error: {e}"))
        .sim
}

fn port(net: &Net, from: &str, to: &str) -> u32 {
    net.port_between(net.node(from).unwrap(), net.node(to).unwrap())
        .unwrap()
}

fn jain(rates: &[f64]) -> f64 {
    let sum: f64 = rates.iter().sum();
    let sumsq: f64 = rates.iter().map(|r| r * r).sum();
    sum * sum / (rates.len() as f64 * sumsq)
}

/// Drop-tail that also hands every arrival to a closure (shared with the test).
struct Watch<F: FnMut(&Arrival, &mut Packet) -> Option<Verdict> + Send> {
    limit_bytes: u64,
    f: F,
}

impl<F: FnMut(&Arrival, &mut Packet) -> Option<Verdict> + Send> ArrivalHook for Watch<F> {
    fn on_arrival(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict {
        if let Some(v) = (self.f)(a, pkt) {
            return v;
        }
        if a.idle_since.is_none() && a.backlog_bytes + a.frame_bytes as u64 > self.limit_bytes {
            Verdict::Drop(DropReason::TailDrop)
        } else {
            Verdict::Admit
        }
    }
    fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }
}

fn watch<F>(limit_bytes: u64, f: F) -> Qdisc
where
    F: FnMut(&Arrival, &mut Packet) -> Option<Verdict> + Send + 'static,
{
    Qdisc::Fifo(Box::new(Watch { limit_bytes, f }))
}

// ---------------------------------------------------------------------------
// 1. SFQ shares a port fairly between 1 flow on one input and 12 on another

const OUTCAST: &str = r#"
[run]
duration_ms = 1500
[topology]
kind = "two_switch"
hosts_a = 12
hosts_b = 2
link_delay_us = 10
switch_buffer = "64KB"
[tcp]
rto_min_ms = 2
[[apps]]
kind = "bulk"
src = "a*"
dst = "b0"
[[apps]]
kind = "bulk"
src = "b1"
dst = "b0"
[output]
timeseries_bin_us = 0
"#;

/// Goodputs of the 13 flows into b0 with `qdisc` (or drop-tail) at sb -> b0.
fn outcast_rates(qdisc: Option<Qdisc>) -> Vec<f64> {
    let mut sim = sim_of(OUTCAST);
    let bottleneck = port(&sim.cx.net, "sb", "b0");
    if let Some(q) = qdisc {
        sim.cx.net.set_qdisc(bottleneck, q).unwrap();
    }
    sim.run().unwrap();
    let rates: Vec<f64> = (0..13).map(|i| metric(&sim, i, "goodput_mbps")).collect();
    let total: f64 = rates.iter().sum();
    assert!(total > 900.0, "the bottleneck must be full: {total:.0} Mbit/s");
    rates
}

#[test]
fn sfq_gives_one_flow_against_twelve_its_share_and_drop_tail_does_not() {
    let sfq = outcast_rates(Some(Qdisc::Scheduled(Box::new(Sfq::with_limit(64_000, 1)))));
    let tail = outcast_rates(None);
    let (j_sfq, j_tail) = (jain(&sfq), jain(&tail));
    assert!(j_sfq > 0.95, "SFQ: Jain's index {j_sfq:.3} for {sfq:.0?}");
    // Jain's index hides one starved flow among 13: look at the lone flow too
    let lone_share = |r: &[f64]| r[12] / (r.iter().sum::<f64>() / 13.0);
    assert!(lone_share(&sfq) > 0.8, "SFQ: the lone flow gets {sfq:.0?}");
    assert!(
        j_tail < j_sfq - 0.03 && lone_share(&tail) < 0.5,
        "drop-tail: Jain's index {j_tail:.3} for {tail:.0?} (SFQ {j_sfq:.3})"
    );
}

// ---------------------------------------------------------------------------
// 2. the arrival hook sees idle arrivals: a RED average decays over idle time

/// One arrival as the RED test hook saw it.
#[derive(Clone, Copy, Debug)]
struct RedSample {
    t: Time,
    idle: bool,
    avg_bytes: f64,
}

/// RED's average queue (Floyd & Jacobson 1993): an EWMA of the backlog on
/// every arrival at a busy port, and at an idle port `avg *= (1 - w)^m`
/// with `m` the frames the port could have sent while idle.
struct RedAverage {
    weight: f64,
    frame_time_ps: f64,
    avg_bytes: f64,
    log: Arc<Mutex<Vec<RedSample>>>,
}

impl ArrivalHook for RedAverage {
    fn on_arrival(&mut self, a: &Arrival, _pkt: &mut Packet) -> Verdict {
        match a.idle_since {
            Some(since) => {
                let m = a.now.saturating_since(since).ps() as f64 / self.frame_time_ps;
                self.avg_bytes *= (1.0 - self.weight).powf(m);
            }
            None => {
                self.avg_bytes = (1.0 - self.weight) * self.avg_bytes + self.weight * a.backlog_bytes as f64;
            }
        }
        self.log.lock().unwrap().push(RedSample {
            t: a.now,
            idle: a.idle_since.is_some(),
            avg_bytes: self.avg_bytes,
        });
        Verdict::Admit
    }
    fn limit_bytes(&self) -> u64 {
        u64::MAX
    }
}

#[test]
fn the_arrival_hook_sees_idle_arrivals_so_a_red_average_decays() {
    // two transfers build a queue at s0 -> h2; pings arrive long after it drained
    let mut sim = sim_of(
        r#"
[topology]
kind = "star"
hosts = 3
link_delay_us = 10
switch_buffer = "1MB"
[[apps]]
kind = "transfer"
src = "h0"
dst = "h2"
bytes = "2MB"
[[apps]]
kind = "transfer"
src = "h1"
dst = "h2"
bytes = "2MB"
[[apps]]
kind = "ping"
src = "h0"
dst = "h2"
start_ms = 200
interval_us = 20000
count = 3
[output]
timeseries_bin_us = 0
"#,
    );
    let p = port(&sim.cx.net, "s0", "h2");
    let log = Arc::new(Mutex::new(Vec::new()));
    let red = RedAverage {
        weight: 0.002,
        frame_time_ps: sim.cx.net.ports[p as usize].serialization(1538).ps() as f64,
        avg_bytes: 0.0,
        log: log.clone(),
    };
    sim.cx.net.set_qdisc(p, Qdisc::Fifo(Box::new(red))).unwrap();
    sim.run().unwrap();
    let log = log.lock().unwrap();
    let st = sim.cx.net.ports[p as usize].stats;
    assert_eq!(
        log.len() as u64,
        st.arrived_packets,
        "the hook is called for every arrival"
    );
    let idle = log.iter().filter(|s| s.idle).count();
    assert!(
        idle >= 3,
        "the pings (at least) find the port idle: {idle} idle arrivals"
    );
    // the longest gap between arrivals: the average must have decayed across it
    let i = (1..log.len())
        .max_by_key(|&i| log[i].t.saturating_since(log[i - 1].t))
        .unwrap();
    let (before, after) = (log[i - 1], log[i]);
    assert!(after.idle, "the arrival after the gap finds the port idle");
    assert!(
        before.avg_bytes > 10_000.0,
        "the transfers built a queue: average {:.0} B",
        before.avg_bytes
    );
    assert!(
        after.avg_bytes < before.avg_bytes * 0.01,
        "the average decays over {:?} idle: {:.0} B -> {:.0} B",
        after.t.saturating_since(before.t),
        before.avg_bytes,
        after.avg_bytes
    );
}

// ---------------------------------------------------------------------------
// 3. a CE mark set at a switch reaches the receiver and comes back as ECE

#[test]
fn a_ce_mark_comes_back_as_ece_and_the_sender_answers_with_cwr() {
    let mut sim = sim_of(TRANSFER_1MB);
    sim.stack.tcp.cfg.ecn = true;
    let limit = 1_000_000;
    let net = &mut sim.cx.net;
    let (to_rcv, to_snd, nic) = (
        port(net, "s0", "h1"),
        port(net, "s0", "h0"),
        port(net, "h0", "s0"),
    );
    // the switch marks the 100th ECN-capable data segment
    let marks = Arc::new(Mutex::new(Vec::new()));
    let (m, mut ect_seen) = (marks.clone(), 0);
    let marker = watch(limit, move |a, p| {
        if p.kind == PktKind::Tcp && p.payload_bytes > 0 && p.is_ect() {
            ect_seen += 1;
            if ect_seen == 100 {
                m.lock().unwrap().push(a.now);
                return Some(Verdict::AdmitMarked);
            }
        }
        None
    });
    net.set_qdisc(to_rcv, marker).unwrap();
    // what goes back to the sender: (time, ECE)
    let acks = Arc::new(Mutex::new(Vec::new()));
    let k = acks.clone();
    net.set_qdisc(
        to_snd,
        watch(limit, move |a, p| {
            k.lock().unwrap().push((a.now, p.flags & FLAG_ECE != 0));
            None
        }),
    )
    .unwrap();
    // what the sender sends: (time, CWR, ECT) of data segments
    let data = Arc::new(Mutex::new(Vec::new()));
    let d = data.clone();
    net.set_qdisc(
        nic,
        watch(limit, move |a, p| {
            if p.payload_bytes > 0 {
                d.lock()
                    .unwrap()
                    .push((a.now, p.flags & FLAG_CWR != 0, p.is_ect()));
            }
            None
        }),
    )
    .unwrap();
    sim.run().unwrap();
    let marked_at = *marks.lock().unwrap().first().expect("one segment was marked");
    assert_eq!(sim.cx.net.ports[to_rcv as usize].stats.marked_packets, 1);
    let acks = acks.lock().unwrap();
    let data = data.lock().unwrap();
    assert!(data.iter().all(|&(_, _, ect)| ect), "new data is ECT(0)");
    let first_ece = acks
        .iter()
        .find(|&&(_, ece)| ece)
        .expect("an ACK carries ECE back to the sender")
        .0;
    assert!(first_ece > marked_at);
    assert!(
        acks.iter().filter(|&&(t, ece)| t < marked_at && ece).count() == 0,
        "no ECE before the mark"
    );
    let cwr: Vec<Time> = data.iter().filter(|&&(_, c, _)| c).map(|&(t, _, _)| t).collect();
    assert_eq!(cwr.len(), 1, "one mark, one CWR");
    assert!(cwr[0] > first_ece, "CWR follows ECE");
    assert!(!acks.last().unwrap().1, "the echo stops once CWR arrived");
}

// ---------------------------------------------------------------------------
// 4. the scheduled FIFO gives exactly the fast path's results

const SHARED: &str = r#"
[run]
duration_ms = 300
[topology]
kind = "star"
hosts = 5
link_delay_us = 20
switch_buffer = "100KB"
[[apps]]
kind = "bulk"
src = "h0..h3"
dst = "h4"
[[apps]]
kind = "ping"
src = "h4"
dst = "h0"
interval_us = 777
count = 300
[output]
timeseries_bin_us = 0
"#;

/// (per flow, per port) counters of SHARED, every port scheduled or none.
fn shared_results(scheduled: bool) -> (Vec<[u64; 7]>, Vec<[u64; 6]>) {
    let mut sim = sim_of(SHARED);
    if scheduled {
        let net = &mut sim.cx.net;
        for p in 0..net.ports.len() {
            let limit = net.ports[p].buffer_bytes;
            net.set_qdisc(p as u32, Qdisc::Scheduled(Box::new(ScheduledFifo::new(limit))))
                .unwrap();
        }
    }
    sim.run().unwrap();
    let net = &sim.cx.net;
    let flows = net
        .flows
        .iter()
        .map(|f| {
            [
                f.app_bytes_delivered,
                f.wire_bytes_sent,
                f.wire_bytes_received,
                f.wire_packets_dropped,
                f.retransmits,
                f.timeouts,
                f.rtt_sum_ps,
            ]
        })
        .collect();
    let ports = net
        .ports
        .iter()
        .map(|p| {
            let s = p.stats;
            [
                s.arrived_bytes,
                s.admitted_bytes,
                s.dropped_packets,
                s.delivered_bytes,
                s.max_backlog_bytes,
                s.tail_drop_packets,
            ]
        })
        .collect();
    (flows, ports)
}

#[test]
fn a_scheduled_fifo_gives_the_fast_paths_results() {
    let (fast_flows, fast_ports) = shared_results(false);
    let (sched_flows, sched_ports) = shared_results(true);
    assert!(
        fast_ports.iter().map(|p| p[2]).sum::<u64>() > 0,
        "the run must drop packets"
    );
    assert_eq!(fast_flows, sched_flows, "per-flow results");
    assert_eq!(fast_ports, sched_ports, "per-port counters");
}

// ---------------------------------------------------------------------------
// 5. per-input counters

const TWO_INTO_ONE: &str = r#"
[run]
duration_ms = 200
[topology]
kind = "star"
hosts = 3
link_delay_us = 10
switch_buffer = "40KB"
[[apps]]
kind = "bulk"
src = "h0"
dst = "h2"
[[apps]]
kind = "bulk"
src = "h1"
dst = "h2"
[output]
timeseries_bin_us = 0
"#;

#[test]
fn ports_count_arrivals_and_drops_per_input() {
    let mut sim = sim_of(TWO_INTO_ONE);
    sim.run().unwrap();
    let net = &sim.cx.net;
    let p = port(net, "s0", "h2");
    let st = net.ports[p as usize].stats;
    let inputs = &net.input_stats(p);
    assert_eq!(inputs.len(), 3, "one input per link into s0");
    let input_of = |host: &str| net.input_of(port(net, host, "s0")).index as usize;
    let (i0, i1, i2) = (input_of("h0"), input_of("h1"), input_of("h2"));
    assert_eq!(
        inputs.iter().map(|c| c.arrived_packets).sum::<u64>(),
        st.arrived_packets
    );
    assert_eq!(
        inputs.iter().map(|c| c.arrived_bytes).sum::<u64>(),
        st.arrived_bytes
    );
    assert_eq!(
        inputs.iter().map(|c| c.dropped_packets).sum::<u64>(),
        st.dropped_packets
    );
    assert_eq!(
        inputs.iter().map(|c| c.dropped_bytes).sum::<u64>(),
        st.dropped_bytes
    );
    assert_eq!(inputs[i2].arrived_packets, 0, "nothing from h2 goes back to h2");
    // every drop of the run happens here; each input's drops are its sender's losses
    let all_drops: u64 = net.ports.iter().map(|p| p.stats.dropped_packets).sum();
    assert!(st.dropped_packets > 0 && all_drops == st.dropped_packets);
    for (host, i) in [("h0", i0), ("h1", i1)] {
        let h = net.node(host).unwrap();
        let lost: u64 = net
            .flows
            .iter()
            .filter(|f| f.src == h)
            .map(|f| f.wire_packets_dropped)
            .sum();
        assert_eq!(inputs[i].dropped_packets, lost, "drops charged to {host}'s input");
    }
    // the rows name the neighbour; a host NIC has one input, its own host
    let rows = net.input_rows();
    assert!(rows
        .iter()
        .any(|r| r.port == p && r.from_node == net.node("h1") && r.stats == inputs[i1]));
    let nic = port(net, "h0", "s0");
    let nic_rows: Vec<_> = rows.iter().filter(|r| r.port == nic).collect();
    assert_eq!(nic_rows.len(), 1);
    assert_eq!(nic_rows[0].from_node, None);
    assert_eq!(
        nic_rows[0].stats.arrived_packets,
        net.ports[nic as usize].stats.arrived_packets
    );
}

#[test]
fn drop_notify_is_counted_and_noted_with_its_input() {
    let mut sim = sim_of(TWO_INTO_ONE);
    let net = &mut sim.cx.net;
    let p = port(net, "s0", "h2");
    let from_h1 = net.input_of(port(net, "h1", "s0"));
    // drop every 50th data packet from h1 and ask for a notification
    let mut n = 0;
    let hook = watch(10_000_000, move |a, pkt| {
        if a.input == from_h1 && pkt.payload_bytes > 0 {
            n += 1;
            if n % 50 == 0 {
                return Some(Verdict::DropNotify(DropReason::Discipline));
            }
        }
        None
    });
    net.set_qdisc(p, hook).unwrap();
    sim.run().unwrap();
    let net = &sim.cx.net;
    let st = net.ports[p as usize].stats;
    let inputs = &net.input_stats(p);
    assert!(st.notify_packets > 0);
    assert_eq!(st.notify_packets, st.dropped_packets);
    assert_eq!(st.discipline_drop_packets, st.dropped_packets);
    assert_eq!(st.tail_drop_packets, 0);
    assert_eq!(net.drop_notices.len() as u64, st.notify_packets);
    assert!(net
        .drop_notices
        .iter()
        .all(|d| d.port == p && d.input == from_h1 && d.packet.src == net.node("h1").unwrap()));
    assert_eq!(inputs[from_h1.index as usize].dropped_packets, st.dropped_packets);
    let from_h0 = net.input_of(port(net, "h0", "s0"));
    assert_eq!(inputs[from_h0.index as usize].dropped_packets, 0);
}

#[test]
fn a_switch_larger_than_the_counting_limit_reports_port_totals_as_one_input() {
    // a star's hub of 130 ports: per-input counters would grow with the
    // square of its ports, so its ports count totals only
    let hosts = xco_sim::net::MAX_COUNTED_INPUTS + 2;
    let mut sim = sim_of(&format!(
        "[topology]\nkind = \"star\"\nhosts = {hosts}\n[[apps]]\nkind = \"transfer\"\n\
         src = \"h0..h9\"\ndst = \"h{}\"\nbytes = \"20KB\"\n[output]\ntimeseries_bin_us = 0\n",
        hosts - 1
    ));
    sim.run().unwrap();
    let net = &sim.cx.net;
    let p = port(net, "s0", &format!("h{}", hosts - 1));
    let st = net.ports[p as usize].stats;
    let inputs = net.input_stats(p);
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].arrived_packets, st.arrived_packets);
    assert!(st.arrived_packets > 0);
    // its one row names no neighbour: it is every input's total
    let rows: Vec<_> = net.input_rows().into_iter().filter(|r| r.port == p).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].from_node, None);
}

fn fat_tree_sim(k: usize) -> Sim {
    sim_of(&format!(
        "[run]\nduration_ms = 1\n[topology]\nkind = \"fat_tree\"\nk = {k}\nhost_rate = \"10Gbps\"\n\
         [[apps]]\nkind = \"bulk\"\nsrc = \"h0\"\ndst = \"h1\"\n"
    ))
}

#[test]
fn a_fabric_past_the_pair_budget_counts_port_totals_not_each_input() {
    // k = 16: 320 switches of 16 ports, 81,920 (port, input) pairs: counted
    let net = &fat_tree_sim(16).cx.net;
    let edge_up = port(net, "e0_0", "g0_0");
    assert_eq!(
        net.input_stats(edge_up).len(),
        16,
        "one row per input of a 16-port switch"
    );
    // k = 20: 500 switches of 20 ports, 200,000 pairs > MAX_COUNTED_PAIRS:
    // one row of totals per port
    let net = &fat_tree_sim(20).cx.net;
    let edge_up = port(net, "e0_0", "g0_0");
    assert_eq!(net.input_stats(edge_up).len(), 1, "the port's totals only");
}

#[test]
fn prefetching_changes_no_result_and_is_on_only_for_a_large_fabric() {
    // a k = 16 fat-tree (6,144 ports) prefetches by default, a k = 4 one not
    assert!(!fat_tree_sim(4).prefetch);
    let text = xco_sim::bench::fattree_scenario(16, 0.2, 1);
    let mut outs = Vec::new();
    for prefetch in [true, false] {
        let mut b = build(&text, None).unwrap();
        assert!(b.sim.prefetch, "on by default at k = 16");
        b.sim.prefetch = prefetch;
        let st = b.sim.run().unwrap();
        assert!(
            st.data_packet_hops > 100_000,
            "the fabric is busy: {}",
            st.data_packet_hops
        );
        let o = xco_sim::output::tables::collect(&b.sim, st, &b.record, None);
        outs.push((o.flows_csv, o.ports_csv, o.meta_json));
    }
    assert!(outs[0] == outs[1], "prefetching changed a result");
}
