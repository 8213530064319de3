//! UDP messages at a set payload rate or flat out (line rate of the NIC).
//!
//! The first message leaves at a random phase within one message gap after
//! the start (seeded), then messages follow at exactly the configured rate.

use super::{mbps, AppNote, Application, Env, Metric};
use crate::engine::Event;
use crate::net::packet::{Packet, PktKind, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::sim::Core;
use crate::stats::{FlowKind, FlowStats};
use crate::udp::{fragment_sizes, UdpSink};
use xco_core::{Dur, Rng, Time};

/// Configuration of a UDP source.
#[derive(Clone, Debug)]
pub struct UdpConfig {
    /// Sender host node.
    pub src: u32,
    /// Receiver host node.
    pub dst: u32,
    /// Application payload rate in bit/s (`None`: flat out at the NIC's line rate).
    pub rate_bps: Option<u64>,
    /// Application bytes per message.
    pub message_bytes: u64,
    /// Messages to send (`None`: until the run ends).
    pub count: Option<u64>,
    /// MTU of the sending host.
    pub mtu_bytes: u32,
}

/// The running application.
pub struct UdpSource {
    id: u32,
    cfg: UdpConfig,
    flow: u32,
    sink: u32,
    route: u32,
    frags: Vec<u32>,
    gap: Dur,
    sent: u64,
    started: Time,
    rng: Rng,
}

impl UdpSource {
    /// The app with id `id`; `rng` draws its start phase.
    pub fn new(id: u32, cfg: UdpConfig, rng: Rng) -> UdpSource {
        let frags = fragment_sizes(cfg.message_bytes, cfg.mtu_bytes).collect();
        UdpSource {
            id,
            cfg,
            flow: 0,
            sink: 0,
            route: 0,
            frags,
            gap: Dur::ZERO,
            sent: 0,
            started: Time::ZERO,
            rng,
        }
    }

    fn send_message(&mut self, core: &mut Core) {
        let n = self.frags.len() as u32;
        let mut app_left = self.cfg.message_bytes;
        for (i, &f) in self.frags.iter().enumerate() {
            let header = if i == 0 { UDP_HEADER_BYTES } else { 0 };
            let app_bytes = ((f - header) as u64).min(app_left);
            app_left -= app_bytes;
            let p = Packet {
                seq: self.sent,
                ack: i as u64,
                route: self.route,
                kind: PktKind::Udp,
                ip_bytes: IPV4_HEADER_BYTES + f,
                payload_bytes: app_bytes as u32,
                flow: self.flow,
                dst_ep: self.sink,
                src_ep: self.id,
                src: self.cfg.src,
                dst: self.cfg.dst,
                wnd: n,
                ..Packet::EMPTY
            };
            let id = core.net.alloc(p);
            core.send(id);
        }
        self.sent += 1;
        let f = &mut core.net.flows[self.flow as usize];
        f.msgs_sent += 1;
        f.app_bytes_written += self.cfg.message_bytes;
        if self.cfg.count.is_none_or(|c| self.sent < c) {
            core.ev.schedule(
                core.now + self.gap,
                Event::App {
                    app: self.id,
                    token: 1,
                },
            );
        }
    }
}

impl Application for UdpSource {
    fn start(&mut self, env: &mut Env) -> Result<(), String> {
        let core = &mut *env.core;
        self.started = core.now;
        let h = xco_core::rng::mix64(core.seed, 0x0d_9000 + self.id as u64);
        self.route = core.net.route(self.cfg.src, self.cfg.dst, h).map_err(|e| e.0)?;
        self.flow = core.net.flows.len() as u32;
        core.net.flows.push(FlowStats::new(
            FlowKind::Udp,
            self.id,
            "udp",
            self.cfg.src,
            self.cfg.dst,
            core.now,
        ));
        self.sink = core.udp_sinks.len() as u32;
        core.udp_sinks
            .push(UdpSink::new(self.flow, self.cfg.message_bytes));
        self.gap = match self.cfg.rate_bps {
            Some(rate) => Dur::serialization(self.cfg.message_bytes, rate),
            None => {
                let nic = core.net.nodes[self.cfg.src as usize].nic;
                let port = &core.net.ports[nic as usize];
                let fr = core.net.framing;
                let wire: u64 = self
                    .frags
                    .iter()
                    .map(|&f| (f + IPV4_HEADER_BYTES + fr.frame_overhead_bytes + fr.gap_bytes) as u64)
                    .sum();
                Dur::serialization(wire, port.rate_bps)
            }
        };
        // a random phase within one message gap: senders started "together"
        // are not locked to the same picosecond (which would make one of them
        // win every freed buffer slot)
        let phase = Dur(self.rng.below(self.gap.ps().max(1)));
        core.ev.schedule(
            core.now + phase,
            Event::App {
                app: self.id,
                token: 1,
            },
        );
        Ok(())
    }
    fn on_note(&mut self, _env: &mut Env, _note: AppNote) -> Result<(), String> {
        Ok(())
    }
    fn on_timer(&mut self, env: &mut Env, _token: u32) -> Result<(), String> {
        self.send_message(env.core);
        Ok(())
    }
    fn finished(&self) -> bool {
        self.cfg.count.is_some_and(|c| self.sent >= c)
    }
    fn endless(&self) -> bool {
        self.cfg.count.is_none()
    }
    fn kind(&self) -> &'static str {
        "udp"
    }
    fn summary(&self, core: &Core) -> Vec<Metric> {
        let f = &core.net.flows[self.flow as usize];
        let secs = core.now.saturating_since(self.started).as_secs_f64();
        let goodput = mbps(f.app_bytes_delivered as f64, secs);
        vec![
            ("msgs_sent", f.msgs_sent as f64),
            ("msgs_delivered", f.msgs_delivered as f64),
            ("goodput_mbps", goodput),
        ]
    }
}
