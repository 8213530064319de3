//! UDP messages at a set payload rate or flat out (line rate of the NIC).
//!
//! The first message leaves at a random phase within one message gap after
//! the start (seeded), then messages follow at exactly the configured rate.

use super::{mbps, AppNote, Application, Demand, DemandCx, Env, Metric};
use crate::ctx::Ctx;
use crate::engine::Event;
use crate::host::sndbuf::SendBuffer;
use crate::host::udp_socket::Room;
use crate::net::packet::{Packet, UdpHeader, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::stats::{FlowKind, FlowStats};
use crate::udp::{fragment_sizes, UdpSink};
use crate::xco::Stack;
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
    /// Writes block until the whole message fits (`[host] blocking_udp`);
    /// otherwise messages leave on the source's clock and a full host queue
    /// loses fragments.
    pub blocking: bool,
    /// The socket's send buffer, bytes (with `blocking`).
    pub sndbuf_bytes: u64,
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
    /// Frame bytes of each fragment, and of a whole message.
    frag_frames: Vec<u32>,
    msg_frame_bytes: u64,
    sock: SendBuffer,
}

impl UdpSource {
    /// The app with id `id`; `rng` draws its start phase.
    pub fn new(id: u32, cfg: UdpConfig, rng: Rng) -> UdpSource {
        let frags = fragment_sizes(cfg.message_bytes, cfg.mtu_bytes).collect();
        let sock = SendBuffer::new(cfg.sndbuf_bytes);
        UdpSource {
            frag_frames: Vec::new(),
            msg_frame_bytes: 0,
            sock,
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

    fn send_message(&mut self, cx: &mut Ctx, stack: &mut Stack) {
        let n = self.frags.len() as u32;
        let mut app_left = self.cfg.message_bytes;
        for (i, &f) in self.frags.iter().enumerate() {
            let header = if i == 0 { UDP_HEADER_BYTES } else { 0 };
            let app_bytes = ((f - header) as u64).min(app_left);
            app_left -= app_bytes;
            let mut p = Packet {
                route: self.route,
                ip_bytes: IPV4_HEADER_BYTES + f,
                payload_bytes: app_bytes as u32,
                flow: self.flow,
                dst_ep: self.sink,
                src_ep: self.id,
                src: self.cfg.src,
                dst: self.cfg.dst,
                ..Packet::EMPTY
            };
            p.set_udp(UdpHeader {
                message: self.sent,
                fragment: i as u32,
                fragments: n,
            });
            let id = cx.net.alloc(p);
            if self.cfg.blocking {
                stack.udp_send(cx, self.cfg.src, &mut self.sock, id, self.frag_frames[i]);
            } else {
                stack.send(cx, id);
            }
        }
        self.sent += 1;
        let f = &mut cx.net.flows[self.flow as usize];
        f.msgs_sent += 1;
        f.app_bytes_written += self.cfg.message_bytes;
        if self.cfg.count.is_none_or(|c| self.sent < c) {
            cx.ev.schedule(
                cx.now + self.gap,
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
        let (cx, stack) = (&mut *env.cx, &mut *env.stack);
        self.started = cx.now;
        let h = xco_core::rng::mix64(stack.seed, 0x0d_9000 + self.id as u64);
        self.route = cx.net.route(self.cfg.src, self.cfg.dst, h).map_err(|e| e.0)?;
        self.flow = cx.net.flows.len() as u32;
        cx.net.flows.push(
            FlowStats::new(FlowKind::Udp, self.id, "udp", self.cfg.src, self.cfg.dst, cx.now)
                .with_route(self.route),
        );
        self.sink = stack.udp_sinks.len() as u32;
        stack
            .udp_sinks
            .push(UdpSink::new(self.flow, self.cfg.message_bytes));
        let overhead = IPV4_HEADER_BYTES + cx.net.framing.frame_overhead_bytes;
        self.frag_frames = self.frags.iter().map(|&f| f + overhead).collect();
        self.msg_frame_bytes = self.frag_frames.iter().map(|&f| f as u64).sum();
        self.gap = match self.cfg.rate_bps {
            Some(rate) => Dur::serialization(self.cfg.message_bytes, rate),
            None => {
                let nic = cx.net.nodes[self.cfg.src as usize].nic;
                let port = &cx.net.ports[nic as usize];
                let fr = cx.net.framing;
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
        cx.ev.schedule(
            cx.now + phase,
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
        let (cx, stack) = (&mut *env.cx, &mut *env.stack);
        if self.cfg.blocking {
            let (frames, n) = (self.msg_frame_bytes, self.frags.len() as u32);
            match stack.udp_room(cx, self.cfg.src, self.cfg.dst, self.id, &mut self.sock, frames, n) {
                Room::Now => {}
                Room::At(t) => {
                    // the write blocks until the socket buffer or the NIC queue frees up
                    cx.ev.schedule(
                        t,
                        Event::App {
                            app: self.id,
                            token: 1,
                        },
                    );
                    return Ok(());
                }
                Room::Woken => return Ok(()), // the coordinator wakes the write
            }
        }
        self.send_message(cx, stack);
        Ok(())
    }
    fn finished(&self) -> bool {
        self.cfg.count.is_some_and(|c| self.sent >= c)
    }
    fn demand(&self, cx: &DemandCx) -> Demand {
        let src = self.cfg.src;
        let line = cx.nic_bps[src as usize] as f64;
        let rate = self.cfg.rate_bps.map_or(line, |r| (r as f64).min(line));
        let until = rate * cx.until_s / 8.0;
        let (bytes, busy_s) = match self.cfg.count {
            Some(n) => {
                let b = n as f64 * self.cfg.message_bytes as f64;
                (b, b * 8.0 / rate.max(1.0))
            }
            None => (until, 0.0),
        };
        Demand {
            other_flows: 1,
            bytes,
            busy_s,
            unresponsive: true,
            data_flows: 1.0,
            ..Demand::default()
        }
    }
    fn endless(&self) -> bool {
        self.cfg.count.is_none()
    }
    fn kind(&self) -> &'static str {
        "udp"
    }
    fn summary(&self, cx: &Ctx) -> Vec<Metric> {
        let f = &cx.net.flows[self.flow as usize];
        let secs = cx.now.saturating_since(self.started).as_secs_f64();
        let goodput = mbps(f.app_bytes_delivered as f64, secs);
        vec![
            ("msgs_sent", f.msgs_sent as f64),
            ("msgs_delivered", f.msgs_delivered as f64),
            ("goodput_mbps", goodput),
        ]
    }
}
