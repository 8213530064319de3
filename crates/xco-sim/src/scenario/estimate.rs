//! What a run will cost before it runs: memory in bytes and events in order
//! of magnitude, from counts times the sizes of the structs that hold them.
//!
//! The counts come from the built simulation (nodes, ports, per-input
//! counters, buffers, routing) and from what each application says it will
//! ask for ([`crate::app::Demand`]: connections, flows, bytes, samples). The
//! per-item sizes are `std::mem::size_of` of the real types (a [`Port`], a
//! [`Packet`], a [`TcpEndpoint`], ...), so the estimate follows the code.
//! Where the run decides a count (how many packets are in flight at once)
//! the estimate takes a bound: every switch buffer full of full-size frames,
//! or every TCP window full, whichever is smaller. The routing tables'
//! bound is the router's own (`Router::table_bytes_bound` of `xco_core::routing`).
//!
//! A run that ends when its applications finish has no known end; the
//! estimate then assumes the least time their bytes take at line rate
//! (losses and timeouts make a run longer, and its time series and captures
//! grow with it, up to `output.max_file_bytes`).

use crate::app::{Demand, DemandCx};
use crate::engine::ENTRY_BYTES;
use crate::net::packet::{Packet, SackOption};
use crate::net::port::{InputCount, Port};
use crate::net::topology::NodeKind;
use crate::net::NodeInfo;
use crate::output::human_bytes;
use crate::sim::Sim;
use crate::stats::FlowStats;
use crate::tcp::endpoint::TcpEndpoint;
use crate::tcp::rack::SentRecord;
use crate::xco::coordinator::HostCoord;
use std::mem::size_of;

// Bytes of a row of each CSV table, measured on scenarios/incast.toml and k = 8
// and k = 16 fat-trees (`scripts/memory_estimate.py`; short node names): the
// largest of the three, rounded up.
/// `flows.csv` (100 to 108 B).
const FLOW_ROW_BYTES: u64 = 110;
/// `ports.csv` (64 to 68 B).
const PORT_ROW_BYTES: u64 = 70;
/// `port_inputs.csv` and `drop_runs.csv` (28 to 40 B).
const INPUT_ROW_BYTES: u64 = 40;
/// `hosts.csv`, per node and endpoint (52 to 54 B).
const HOST_ROW_BYTES: u64 = 55;
/// `samples.csv` (`0,incast,3,12.5`).
const SAMPLE_ROW_BYTES: u64 = 30;
/// `timeseries.csv` besides the row's name (`0.001,flow,12,`...`,0,0`: 20 to 24 B).
const TIMESERIES_ROW_BYTES: u64 = 24;

/// One part of the memory estimate.
#[derive(Clone, Debug)]
pub struct Part {
    /// What it is (`ports`, `packets in flight`).
    pub name: &'static str,
    /// How many items.
    pub count: u64,
    /// Bytes per item.
    pub item_bytes: u64,
    /// Bytes in all.
    pub bytes: u64,
    /// What the count is, in words.
    pub what: String,
    /// What to change in the scenario to make it smaller.
    pub change: &'static str,
}

/// The cost of a run, before it runs.
#[derive(Clone, Debug)]
pub struct Estimate {
    /// The parts of the memory, largest first.
    pub parts: Vec<Part>,
    /// Events the run handles, about (an order of magnitude).
    pub events: f64,
    /// Data packets sent, about.
    pub data_packets: f64,
    /// Links a packet crosses at most between two hosts.
    pub hops: u32,
    /// The simulated time the estimate assumes, seconds.
    pub end_s: f64,
    /// True if `end_s` is the scenario's duration (else the least time the apps need).
    pub end_is_duration: bool,
}

impl Estimate {
    /// Bytes of every part.
    pub fn bytes(&self) -> u64 {
        self.parts.iter().map(|p| p.bytes).sum()
    }

    /// The estimate as a few lines of text: the total, the events, then the
    /// parts, largest first.
    pub fn text(&self) -> String {
        let end = if self.end_is_duration {
            format!("{} s simulated (run.duration_ms)", self.end_s)
        } else {
            format!(
                "at least {:.3} s simulated (no duration: the apps' bytes at line rate; \
                 losses make it longer)",
                self.end_s
            )
        };
        let mut s = format!(
            "memory: about {} ({} B); events: about {:.0e} ({:.2e} data packets over up to {} hops); {end}\n",
            human_bytes(self.bytes()),
            self.bytes(),
            self.events.max(1.0),
            self.data_packets,
            self.hops
        );
        for p in &self.parts {
            s.push_str(&format!(
                "  {:<22} {:>10}  {} x {} B: {}\n",
                p.name,
                human_bytes(p.bytes),
                p.count,
                p.item_bytes,
                p.what
            ));
        }
        s
    }
}

/// The longest host-to-host distance in links seen from the first host (the
/// longest path a packet takes, for routings that take shortest paths; the
/// climbs of equal-length routing are at most this long too in a fat-tree).
fn max_hops(sim: &Sim) -> u32 {
    let g = sim.cx.net.router().graph();
    let Some(first) = (0..g.nodes() as u32).find(|&n| g.is_host(n)) else {
        return 1;
    };
    let mut dist = vec![u32::MAX; g.nodes()];
    let mut queue = std::collections::VecDeque::from([first]);
    dist[first as usize] = 0;
    let mut far = 1;
    while let Some(u) = queue.pop_front() {
        for &(_, v) in g.out(u) {
            if dist[v as usize] == u32::MAX {
                dist[v as usize] = dist[u as usize] + 1;
                if g.is_host(v) {
                    far = far.max(dist[v as usize]);
                } else {
                    queue.push_back(v);
                }
            }
        }
    }
    far
}

fn part(name: &'static str, count: u64, item_bytes: u64, what: String, change: &'static str) -> Part {
    Part {
        name,
        count,
        item_bytes,
        bytes: count.saturating_mul(item_bytes),
        what,
        change,
    }
}

/// The estimate of running `sim` as built (before its first event);
/// `ends_by_duration`: the run stops at `run.duration_ms`.
pub fn estimate(sim: &Sim, ends_by_duration: bool) -> Estimate {
    let net = &sim.cx.net;
    let cfg = &sim.stack.tcp.cfg;
    let until_s = sim.stop_at.map_or(3600.0, |t| t.as_secs_f64());
    let mut nic_bps = vec![0u64; net.nodes.len()];
    for (i, n) in net.nodes.iter().enumerate() {
        if n.kind == NodeKind::Host {
            nic_bps[i] = net.ports[n.nic as usize].rate_bps;
        }
    }
    let cx = DemandCx {
        until_s,
        nic_bps: &nic_bps,
    };
    let demands: Vec<Demand> = sim.apps.iter().map(|a| a.demand(&cx)).collect();
    let demand = demands.iter().fold(Demand::default(), |a, d| Demand {
        tcp_connections: a.tcp_connections + d.tcp_connections,
        other_flows: a.other_flows + d.other_flows,
        bytes: a.bytes + d.bytes,
        busy_s: a.busy_s.max(d.busy_s),
        samples: a.samples + d.samples,
        data_flows: a.data_flows + d.data_flows,
        unresponsive: a.unresponsive || d.unresponsive,
        concurrent: a.concurrent + d.concurrent,
        flight_bytes: a.flight_bytes + d.flight_bytes,
    });
    let end_s = if ends_by_duration {
        until_s
    } else {
        demand.busy_s.min(until_s)
    };
    let hops = max_hops(sim);
    let n_nodes = net.nodes.len() as u64;
    let n_ports = net.ports.len() as u64;
    let mtu = sim.stack.tcp.cfg.mss_bytes as u64 + cfg.header_bytes as u64;
    let frame = mtu + net.framing.frame_overhead_bytes as u64;
    let mut parts = Vec::new();

    // the network as built
    let names: u64 = net.nodes.iter().map(|n| n.name.len() as u64).sum();
    parts.push(part(
        "nodes",
        n_nodes,
        (size_of::<NodeInfo>() + 2 * size_of::<Vec<u32>>() + 2 * size_of::<Vec<u32>>() + 2) as u64
            + names / n_nodes.max(1),
        format!("{n_nodes} hosts and switches (names, wiring, host queues)"),
        "fewer hosts (topology.hosts, topology.k)",
    ));
    parts.push(part(
        "ports",
        n_ports,
        (size_of::<Port>() + 3 * size_of::<u32>()) as u64,
        format!("{n_ports} output ports (two per link)"),
        "fewer hosts (topology.hosts, topology.k)",
    ));
    let inputs: u64 = net.ports.iter().map(|p| p.n_inputs as u64).sum();
    parts.push(part(
        "per-input counters",
        inputs,
        (2 * size_of::<InputCount>() + size_of::<crate::net::drop_runs::RunState>()) as u64,
        "(port, input) pairs counted apart (port_inputs.csv, drop_runs.csv)".to_string(),
        "fewer hosts (topology.hosts, topology.k)",
    ));
    parts.push(part(
        "routing tables",
        1,
        net.router().table_bytes_bound(),
        format!("the router's bound ({})", net.router().mode().name()),
        "fewer switches or hosts",
    ));

    // flows and their transport state
    let conns = demand.tcp_connections;
    let flows = 2 * conns + demand.other_flows;
    parts.push(part(
        "flows",
        flows,
        size_of::<FlowStats>() as u64,
        format!(
            "{conns} TCP connections (two flows each) and {} other flows",
            demand.other_flows
        ),
        "fewer flows (apps' servers, rounds, flows_per_sequence; a longer-lived connection)",
    ));
    parts.push(part(
        "TCP endpoints",
        2 * conns,
        size_of::<TcpEndpoint>() as u64,
        format!("{conns} connections x 2 ends"),
        "fewer flows (apps' servers, rounds, flows_per_sequence)",
    ));
    let path_bytes = (hops as u64 * 4) * 2 + size_of::<Vec<u32>>() as u64 + 8;
    let paths = if net.pair_routing {
        conns.min((nic_bps.iter().filter(|&&r| r > 0).count() as u64).pow(2)) * 2
    } else {
        2 * conns + demand.other_flows
    };
    parts.push(part(
        "routes",
        paths,
        path_bytes,
        format!("stored paths of up to {hops} hops, interned"),
        "fewer flows",
    ));

    // packets in flight: every buffer full, or every window full, whichever is less
    let queued: u64 = net
        .ports
        .iter()
        .map(|p| {
            let by_bytes = p.buffer_bytes / frame.max(1) + 1;
            let limit = if p.limit_packets > 0 {
                p.limit_packets as u64
            } else {
                by_bytes
            };
            // packets on the wire: the link's bandwidth-delay product in frames
            let wire = (p.rate_bps as f64 * p.delay.as_secs_f64() / 8.0 / frame as f64).ceil() as u64;
            by_bytes.min(limit) + wire
        })
        .sum();
    let v2v: u64 = sim.stack.xco.as_ref().map_or(0, |x| {
        let hosts = x.cfg.coordinated.iter().filter(|&&c| c).count() as u64;
        hosts * (x.cfg.v2v_queue_bytes / frame.max(1) + 1)
    });
    let buffers = queued + v2v;
    let window_segments =
        (cfg.rcv_buf_bytes / cfg.mss_bytes.max(1) as u64).max(cfg.initial_cwnd_segments as u64);
    // each app's connections open at once, each window full or all the bytes
    // the app has out at once, whichever is less; plus their ACKs
    let windows: u64 = demands
        .iter()
        .map(|d| {
            let by_window = d.concurrent.saturating_mul(window_segments);
            let by_bytes = (d.flight_bytes / cfg.mss_bytes.max(1) as f64)
                .ceil()
                .min(u64::MAX as f64) as u64;
            let segments = by_window.min(by_bytes.saturating_add(d.concurrent));
            segments + segments / 2 + 2 * d.concurrent + 4 * d.other_flows
        })
        .sum();
    let in_flight = if demand.unresponsive {
        buffers
    } else {
        buffers.min(windows)
    };
    let sack = sim.stack.tcp.cfg.sack || sim.stack.tcp.alt.iter().any(|c| c.sack);
    let packet_bytes = (size_of::<Packet>() + 4 + if sack { size_of::<SackOption>() } else { 0 }) as u64;
    parts.push(part(
        "packets in flight",
        in_flight,
        packet_bytes,
        if in_flight == buffers {
            format!("every buffer full of {frame}-B frames, plus the wires ({buffers} frames)")
        } else {
            format!(
                "every TCP window full (up to {window_segments} segments of {} B), or every byte \
                 the apps have out at once, and the ACKs ({windows} packets)",
                cfg.mss_bytes
            )
        },
        "smaller buffers (topology.switch_buffer, topology.host_buffer, host.txqueuelen) or fewer flows",
    ));
    let rack = sim.stack.tcp.cfg.rack || sim.stack.tcp.alt.iter().any(|c| c.rack);
    if rack {
        parts.push(part(
            "RACK sent records",
            in_flight.min(conns.saturating_mul(window_segments)),
            size_of::<SentRecord>() as u64,
            "one per segment sent and not yet acknowledged".to_string(),
            "fewer flows or smaller windows (tcp.rcv_buf_bytes)",
        ));
    }
    if let Some(x) = &sim.stack.xco {
        let hosts = x.cfg.coordinated.iter().filter(|&&c| c).count() as u64;
        parts.push(part(
            "XCo coordinators",
            hosts,
            size_of::<HostCoord>() as u64,
            "coordinated hosts (their queued packets are counted in flight)".to_string(),
            "fewer coordinated hosts (xco.hosts)",
        ));
    }
    let pending = n_ports + 3 * 2 * conns + sim.apps.len() as u64 + n_nodes;
    parts.push(part(
        "event queue",
        pending + (1 << 16),
        ENTRY_BYTES as u64 * 2,
        "pending events (a pipe's head packet, three timers per TCP end, apps) and the wheel".to_string(),
        "fewer flows or ports",
    ));

    let payload = cfg.mss_bytes.max(1) as f64;
    let data_packets = demand.bytes / payload;
    let acks = if cfg.delayed_ack { 0.5 } else { 1.0 };

    // outputs: the time series and captures grow with the run, up to their limit
    let limit = sim.timeseries.limit_bytes();
    if let Some(bin_s) = sim.sample_bin().map(|b| b.as_secs_f64()) {
        let sampled_ports = match sim.port_sampling() {
            crate::sim::PortSampling::None => 0,
            crate::sim::PortSampling::All => n_ports,
            crate::sim::PortSampling::Switches => net
                .ports
                .iter()
                .filter(|p| net.nodes[p.from as usize].kind == NodeKind::Switch)
                .count() as u64,
        };
        let bins = (end_s / bin_s).ceil() as u64;
        let name = 2 * (names / n_nodes.max(1)) + 2;
        let rows = demand.data_flows.ceil() as u64 + sampled_ports;
        let per_s = rows as f64 * (TIMESERIES_ROW_BYTES + name) as f64 / bin_s;
        let text = (bins * rows * (TIMESERIES_ROW_BYTES + name)).min(limit);
        // its text and the copy handed to Python
        parts.push(part(
            "time series",
            2,
            text,
            format!(
                "{bins} bins x {rows} rows of ~{} B, {} more per simulated second (text and \
                 Python's copy; at most {} each by output.max_file_bytes)",
                TIMESERIES_ROW_BYTES + name,
                human_bytes(per_s as u64),
                human_bytes(limit)
            ),
            "a longer output.timeseries_bin_us, output.timeseries_ports = \"none\", or output.max_file_bytes",
        ));
    }
    for (i, c) in net.captures.iter().enumerate() {
        let port = net.ports.iter().find(|p| p.capture == i as u32);
        let rate = port.map_or(0, |p| p.rate_bps);
        let min_frame = 64 + net.framing.gap_bytes as u64;
        // no more than the link carries, nor than the run sends (data and ACKs)
        let carried = rate as f64 * end_s / 8.0 / min_frame as f64;
        let packets = carried
            .min(data_packets * (1.0 + acks) + demand.samples as f64)
            .ceil() as u64;
        let record_file = 16 + 54;
        let records = packets.min(c.limit_bytes() / record_file);
        parts.push(part(
            "capture",
            records,
            (size_of::<(xco_core::Time, Packet)>() + 1 + 2 * record_file as usize) as u64,
            format!("{}: packets kept until its end or its limit", c.name),
            "fewer captured links (output.capture) or output.max_file_bytes",
        ));
    }
    let endpoints = 2 * conns + 2 * demand.other_flows;
    parts.push(part(
        "output tables",
        2,
        flows * FLOW_ROW_BYTES
            + n_ports * PORT_ROW_BYTES
            + inputs * INPUT_ROW_BYTES
            + (n_nodes + endpoints) * HOST_ROW_BYTES
            + demand.samples * SAMPLE_ROW_BYTES,
        "flows.csv, ports.csv, port_inputs.csv, hosts.csv, samples.csv (text and Python's copy)".to_string(),
        "fewer flows or ports",
    ));
    parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));

    // events: each data packet's hops, its share of an ACK's hops, a timer per segment
    let events = data_packets * (hops as f64 * (1.0 + acks) + 1.0)
        + sim.sample_bin().map_or(0.0, |b| end_s / b.as_secs_f64());
    Estimate {
        parts,
        events,
        data_packets,
        hops,
        end_s,
        end_is_duration: ends_by_duration,
    }
}
