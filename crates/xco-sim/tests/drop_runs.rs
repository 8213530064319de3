//! Outcast instrumentation: episodes of k consecutive drops per input port
//! (a constructed drop pattern gives the exact histogram), the queue
//! timeline (its rows replay the port's own counters; the bound cuts it with
//! a note) and the ON/OFF drop model selected from a scenario.

use xco_sim::net::packet::Packet;
use xco_sim::net::qdisc::{Arrival, ArrivalHook, DropReason, Qdisc, Verdict};
use xco_sim::net::Net;
use xco_sim::run_scenario;
use xco_sim::scenario::build;

fn port(net: &Net, from: &str, to: &str) -> u32 {
    net.port_between(net.node(from).unwrap(), net.node(to).unwrap())
        .unwrap()
}

/// Two bulk senders h0, h1 into h2 through s0; a buffer large enough that
/// the buffer itself never drops.
const TWO_INTO_ONE: &str = r#"
[run]
duration_ms = 100
[topology]
kind = "star"
hosts = 3
link_delay_us = 10
switch_buffer = "4MB"
[tcp]
rto_min_ms = 2
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

/// Drops the data frames from one input whose arrival numbers (1-based,
/// counting that input's data frames) are listed; admits everything else.
struct DropListed {
    input: u32,
    listed: Vec<u64>,
    seen: u64,
}

impl ArrivalHook for DropListed {
    fn on_arrival(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict {
        if a.input.index == self.input && pkt.payload_bytes > 0 {
            self.seen += 1;
            if self.listed.contains(&self.seen) {
                return Verdict::Drop(DropReason::Discipline);
            }
        }
        Verdict::Admit
    }
    fn limit_bytes(&self) -> u64 {
        4_000_000
    }
}

#[test]
fn a_known_drop_pattern_gives_the_exact_run_histogram() {
    let mut sim = build(TWO_INTO_ONE, None).unwrap().sim;
    let net = &mut sim.cx.net;
    let p = port(net, "s0", "h2");
    let from_h1 = net.input_of(port(net, "h1", "s0")).index;
    // runs of 3, 1, 2, 3 and 5 drops, separated by admitted frames of h1
    let listed = vec![10, 11, 12, 20, 30, 31, 40, 41, 42, 50, 51, 52, 53, 54];
    let hook = DropListed {
        input: from_h1,
        listed,
        seen: 0,
    };
    net.set_qdisc(p, Qdisc::Fifo(Box::new(hook))).unwrap();
    sim.run().unwrap();
    let net = &sim.cx.net;
    let rows = net.drop_run_rows();
    assert_eq!(rows.len(), 1, "only h1's input at s0->h2 dropped anything");
    let r = &rows[0];
    assert_eq!((r.port, r.input, r.from_node), (p, from_h1, net.node("h1")));
    assert_eq!(&r.histogram.episodes[..6], &[1, 1, 2, 0, 1, 0]);
    assert!(r.histogram.episodes[6..].iter().all(|&n| n == 0));
    assert_eq!(r.histogram.longest, 5);
}

#[test]
fn drop_runs_are_written_as_a_table() {
    // 12 senders into one 16 KB port: drop-tail drops in runs
    let text = r#"
[run]
duration_ms = 50
[topology]
kind = "star"
hosts = 4
link_delay_us = 10
switch_buffer = "16KB"
[[apps]]
kind = "bulk"
src = ["h0", "h1", "h2"]
dst = "h3"
[output]
timeseries_bin_us = 0
"#;
    let out = run_scenario(text, None).unwrap();
    let mut lines = out.drop_runs_csv.lines();
    assert_eq!(
        lines.next(),
        Some("port,from,to,input,input_from,k,episodes,longest_run")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(!rows.is_empty(), "the port dropped");
    // the episodes times their run lengths add up to the drops per input
    let mut drops = std::collections::BTreeMap::<String, u64>::new();
    for r in &rows {
        assert_eq!((r[1], r[2]), ("s0", "h3"));
        *drops.entry(r[4].to_string()).or_default() +=
            r[5].parse::<u64>().unwrap() * r[6].parse::<u64>().unwrap();
    }
    for line in out.port_inputs_csv.lines().skip(1) {
        let c: Vec<&str> = line.split(',').collect();
        if c[1] == "s0" && c[2] == "h3" && c[7] != "0" {
            assert_eq!(drops[c[4]], c[7].parse::<u64>().unwrap(), "input {}", c[4]);
        }
    }
}

fn timeline_run(max_rows: Option<u32>) -> xco_sim::RunOutput {
    let bound = max_rows
        .map(|n| format!("queue_timeline_max_rows = {n}\n"))
        .unwrap_or_default();
    let text = format!(
        "{}queue_timeline = [\"s0->h2\"]\n{bound}",
        TWO_INTO_ONE.replace("\"4MB\"", "\"16KB\"")
    );
    run_scenario(&text, None).unwrap()
}

#[test]
fn the_queue_timeline_replays_the_ports_counters() {
    let out = timeline_run(None);
    let mut rows = out.queue_timeline_csv.lines();
    assert_eq!(
        rows.next(),
        Some("port,from,to,time_ns,event,input,input_from,frame_bytes,queue_bytes")
    );
    let rows: Vec<Vec<String>> = rows.map(|l| l.split(',').map(String::from).collect()).collect();
    let count = |e: &str| rows.iter().filter(|r| r[4] == e).count() as u64;
    let port_row: Vec<String> = out
        .ports_csv
        .lines()
        .map(String::from)
        .find(|l| l.contains(",s0,h2,"))
        .unwrap()
        .split(',')
        .map(String::from)
        .collect();
    // ports.csv: port,from,to,rate,buffer,admitted_bytes,admitted_packets,dropped_bytes,dropped_packets,max_queue
    let admitted: u64 = port_row[6].parse().unwrap();
    let dropped: u64 = port_row[8].parse().unwrap();
    let max_queue: u64 = port_row[9].parse().unwrap();
    assert!(dropped > 0, "16 KB and two senders: drops");
    assert_eq!(count("enqueue"), admitted);
    assert_eq!(count("drop"), dropped);
    assert!(count("dequeue") <= admitted && count("dequeue") + 20 >= admitted);
    assert_eq!(count("truncated"), 0);
    let times: Vec<f64> = rows.iter().map(|r| r[3].parse().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "rows in time order");
    let peak = rows.iter().map(|r| r[8].parse::<u64>().unwrap()).max().unwrap();
    assert_eq!(
        peak, max_queue,
        "the replayed queue peaks where the port's counter did"
    );
    assert!(rows.iter().any(|r| r[6] == "h0") && rows.iter().any(|r| r[6] == "h1"));
}

#[test]
fn the_bound_cuts_the_timeline_with_a_truncated_row() {
    let out = timeline_run(Some(100));
    let rows: Vec<&str> = out.queue_timeline_csv.lines().skip(1).collect();
    assert!(rows.len() <= 101);
    assert!(rows.last().unwrap().contains(",truncated,"));
    assert_eq!(rows.iter().filter(|r| r.contains(",truncated,")).count(), 1);
}

#[test]
fn the_onoff_model_drops_runs_of_m_frames_of_the_one_sender() {
    for m in [1u32, 4] {
        let text = format!(
            r#"
[run]
duration_ms = 300
[topology]
kind = "star"
hosts = 2
link_delay_us = 10
switch_buffer = "4MB"
[[topology.queues]]
port = "s0->h1"
kind = "onoff"
on_packets = {m}
[tcp]
rto_min_ms = 2
[[apps]]
kind = "bulk"
src = "h0"
dst = "h1"
[output]
timeseries_bin_us = 0
"#
        );
        let out = run_scenario(&text, None).unwrap();
        let rows: Vec<Vec<&str>> = out
            .drop_runs_csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        assert!(
            !rows.is_empty(),
            "m = {m}: ON periods happened in 300 ms of 5 ms OFF"
        );
        // an ON period drops exactly m frames; the buffer never drops; two
        // ON periods merge into one run when the sender sent nothing during
        // the OFF period between them (it waits for its RTO): so every run
        // is a multiple of m, but for one the end of the run may cut, and
        // most are exactly m
        let mut most = (0u64, 0u64);
        let mut cut = 0;
        for r in &rows {
            let k: u64 = r[5].parse().unwrap();
            let n: u64 = r[6].parse().unwrap();
            if k % m as u64 != 0 {
                cut += n;
            }
            most = most.max((n, k));
        }
        assert!(cut <= 1, "m = {m}: {rows:?}");
        assert_eq!(most.1, m as u64, "m = {m}: runs of m are the most common");
        let again = run_scenario(&text, None).unwrap();
        assert_eq!(out.drop_runs_csv, again.drop_runs_csv, "deterministic");
        assert_eq!(out.flows_csv, again.flows_csv, "deterministic");
    }
}

#[test]
fn bad_outcast_settings_name_the_field() {
    let cases = [
        (
            "[output]\nqueue_timeline = [\"s0-h2\"]\n",
            "output.queue_timeline[0]",
        ),
        (
            "[output]\nqueue_timeline = [\"s0->zz\"]\n",
            "output.queue_timeline[0]",
        ),
        (
            "[output]\nqueue_timeline_max_rows = 0\n",
            "output.queue_timeline_max_rows",
        ),
        (
            "[[topology.queues]]\nport = \"s0->h1\"\nkind = \"onoff\"\non_packets = 0\n",
            "topology.queues[0].on_packets",
        ),
        (
            "[[topology.queues]]\nport = \"s0->h1\"\nkind = \"onoff\"\non_packets = 2\noff_mean_ms = -1\n",
            "topology.queues[0].off_mean_ms",
        ),
    ];
    for (extra, field) in cases {
        let text = format!(
            "[run]\nduration_ms = 10\n[topology]\nkind = \"star\"\nhosts = 2\n[[apps]]\nkind = \"bulk\"\nsrc = \"h0\"\ndst = \"h1\"\n{extra}"
        );
        let e = build(&text, None)
            .err()
            .unwrap_or_else(|| panic!("{extra} accepted"));
        assert_eq!(e.field, field, "{e}");
    }
}
