//! Test helpers: a TCP sender in a named state, and scenario runners.

use xco_core::{Dur, Time};
use xco_sim::net::packet::{Packet, PktKind, SackOption, FLAG_ACK, FLAG_SACK};
use xco_sim::net::routing::RoutingMode;
use xco_sim::net::topology::Topology;
use xco_sim::net::{Framing, Net, NetConfig};
use xco_sim::scenario::build;
use xco_sim::sim::Sim;
use xco_sim::tcp::endpoint::TcpEndpoint;
use xco_sim::tcp::table::Roles;
use xco_sim::tcp::TcpConfig;

/// A sender whose segments never reach anybody: the test plays the receiver.
pub struct Sender {
    pub sim: Sim,
    pub ep: u32,
    nic: u32,
    pub mss: u64,
}

/// A sender on an established connection (no handshake), nothing sent yet.
pub fn sender_established(cfg: TcpConfig) -> Sender {
    let topo = Topology::star(2, 1_000_000_000, Dur::from_secs(100_000));
    let net = Net::new(
        &topo,
        NetConfig {
            switch_buffer_bytes: 10_000_000,
            host_buffer_bytes: 100_000_000,
            framing: Framing::default(),
        },
        RoutingMode::Ecmp,
        1,
    )
    .unwrap();
    let mss = cfg.mss_bytes as u64;
    let mut sim = Sim::new(
        net,
        TcpConfig {
            handshake: false,
            ..cfg
        },
        1,
    );
    let h0 = sim.cx.net.node("h0").unwrap();
    let h1 = sim.cx.net.node("h1").unwrap();
    let roles = Roles {
        client: "data",
        server: "ack",
    };
    let (ep, _) = sim
        .tcp
        .open(&mut sim.cx, &mut sim.stack, 0, h0, h1, 0, roles)
        .unwrap();
    sim.stack.notes.clear();
    let nic = sim.cx.net.nodes[h0 as usize].nic;
    Sender { sim, ep, nic, mss }
}

impl Sender {
    pub fn ep(&self) -> &TcpEndpoint {
        &self.sim.tcp.eps[self.ep as usize]
    }
    pub fn write(&mut self, bytes: u64) {
        self.sim
            .tcp
            .write(&mut self.sim.cx, &mut self.sim.stack, self.ep, bytes);
    }
    /// Data segments sent since the last call, as (seq, len).
    pub fn drain(&mut self) -> Vec<(u64, u64)> {
        self.sim
            .cx
            .net
            .take_packets(self.nic)
            .into_iter()
            .filter(|p| p.kind == PktKind::Tcp && p.payload_bytes > 0)
            .map(|p| (p.seq, p.payload_bytes as u64))
            .collect()
    }
    /// Data segments sent since the last call, as (seq, len, time TCP sent it).
    pub fn drain_timed(&mut self) -> Vec<(u64, u64, Time)> {
        self.sim
            .cx
            .net
            .take_packets(self.nic)
            .into_iter()
            .filter(|p| p.kind == PktKind::Tcp && p.payload_bytes > 0)
            .map(|p| (p.seq, p.payload_bytes as u64, Time(p.ts_val)))
            .collect()
    }
    /// Deliver a cumulative ACK for `ack` (echoing `ts_ecr`, 0 for none).
    pub fn ack_with_ts(&mut self, ack: u64, ts_ecr: u64) {
        let e = &self.sim.tcp.eps[self.ep as usize];
        let p = Packet {
            ack,
            flags: FLAG_ACK,
            ts_ecr,
            wnd: 1 << 30,
            flow: e.rx_flow,
            dst_ep: self.ep,
            src_ep: e.peer_ep,
            ip_bytes: 52,
            ..Packet::EMPTY
        };
        let (cx, stack) = (&mut self.sim.cx, &mut self.sim.stack);
        self.sim.tcp.eps[self.ep as usize].on_segment(cx, stack, u32::MAX, &p);
    }
    /// Deliver an ACK for `ack` carrying SACK `blocks` (as a receiver sends
    /// it: through the packet pool's option table).
    pub fn ack_sack(&mut self, ack: u64, blocks: &[(u64, u64)]) {
        self.ack_sack_ts(ack, blocks, 0);
    }
    /// [`Sender::ack_sack`] echoing `ts_ecr` (0 for none).
    pub fn ack_sack_ts(&mut self, ack: u64, blocks: &[(u64, u64)], ts_ecr: u64) {
        let e = &self.sim.tcp.eps[self.ep as usize];
        let mut opt = SackOption::default();
        opt.blocks[..blocks.len()].copy_from_slice(blocks);
        opt.len = blocks.len() as u8;
        let p = Packet {
            ack,
            flags: FLAG_ACK | FLAG_SACK,
            ts_ecr,
            wnd: 1 << 30,
            flow: e.rx_flow,
            dst_ep: self.ep,
            src_ep: e.peer_ep,
            ip_bytes: 52 + opt.wire_bytes(),
            ..Packet::EMPTY
        };
        let (cx, stack) = (&mut self.sim.cx, &mut self.sim.stack);
        let id = cx.net.alloc(p);
        cx.net.pool.set_sack(id, opt);
        cx.net.release(id);
        self.sim.tcp.eps[self.ep as usize].on_segment(cx, stack, id, &p);
    }
    pub fn ack(&mut self, ack: u64) {
        self.ack_with_ts(ack, 0);
    }
    pub fn now(&self) -> Time {
        self.sim.cx.now
    }
    pub fn advance(&mut self, d: Dur) {
        let t = self.sim.cx.now + d;
        self.sim.run_until(t).unwrap();
    }
    pub fn retransmits(&self) -> u64 {
        self.sim.cx.net.flows[self.ep().tx_flow as usize].retransmits
    }
}

/// Build and run a scenario, returning the finished simulation.
pub fn run(text: &str) -> Sim {
    let mut b = build(text, None).unwrap_or_else(|e| panic!("scenario error: {e}"));
    b.sim.run().unwrap();
    b.sim
}

/// Metric `name` of app `app` after the run.
pub fn metric(sim: &Sim, app: usize, name: &str) -> f64 {
    sim.apps[app]
        .summary(&sim.cx)
        .into_iter()
        .find(|(k, _)| *k == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
        .1
}

/// The time series' flow rows after the run: (bin end in s, flow id, Mbit/s).
pub fn flow_throughput(sim: &Sim) -> Vec<(f64, u32, f64)> {
    sim.timeseries
        .text()
        .lines()
        .skip(1)
        .filter_map(|line| {
            // t_s,entity,id,name,throughput_mbps,queue_bytes,drops (names here have no commas)
            let c: Vec<&str> = line.split(',').collect();
            (c[1] == "flow").then(|| {
                (
                    c[0].parse().unwrap(),
                    c[2].parse().unwrap(),
                    c[4].parse().unwrap(),
                )
            })
        })
        .collect()
}

/// The pdn-goodput incast with `n` servers and overrides appended to [tcp]/[topology].
pub fn incast(n: usize, rounds: u32, buffer: &str, rto_min_ms: f64) -> String {
    format!(
        r#"[topology]
kind = "two_switch"
hosts_a = {n}
hosts_b = 1
link_delay_us = 16.667
switch_buffer = "{buffer}"
[tcp]
rto_min_ms = {rto_min_ms}
[[apps]]
kind = "incast"
client = "b0"
servers = "a*"
sru = "10KB"
request = "64B"
rounds = {rounds}
[output]
timeseries_bin_us = 0
"#
    )
}

/// Metric `name` of the XCo control plane after the run.
pub fn xco_metric(sim: &Sim, name: &str) -> f64 {
    sim.stack
        .xco
        .as_ref()
        .expect("the scenario runs XCo")
        .summary()
        .into_iter()
        .find(|(k, _)| *k == name)
        .unwrap_or_else(|| panic!("no XCo metric {name}"))
        .1
}

/// One 1 MB TCP transfer h0 -> h1 on a two-host star (10 us links, 1 MB buffer).
pub const TRANSFER_1MB: &str = r#"
[topology]
kind = "star"
hosts = 2
link_delay_us = 10
switch_buffer = "1MB"
[[apps]]
kind = "transfer"
src = "h0"
dst = "h1"
bytes = "1MB"
[output]
timeseries_bin_us = 0
"#;
