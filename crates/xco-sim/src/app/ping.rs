//! ICMP echo probes at a fixed interval; the destination host answers at once.

use super::{mean, quantile, AppNote, Application, Demand, DemandCx, Env, Metric};
use crate::ctx::Ctx;
use crate::engine::Event;
use crate::net::packet::{Packet, PingHeader, ICMP_HEADER_BYTES, IPV4_HEADER_BYTES};
use crate::stats::{FlowKind, FlowStats};
use crate::xco::Stack;
use xco_core::{Dur, Time};

/// Configuration of a ping app.
#[derive(Clone, Debug)]
pub struct PingConfig {
    /// Prober host node.
    pub src: u32,
    /// Echoing host node.
    pub dst: u32,
    /// Time between probes.
    pub interval: Dur,
    /// Probes to send (`None`: until the run ends).
    pub count: Option<u64>,
    /// ICMP payload bytes (ping's default: 56).
    pub payload_bytes: u32,
}

/// The running application.
pub struct Ping {
    id: u32,
    cfg: PingConfig,
    flow: u32,
    fwd: u32,
    rev: u32,
    sent: u64,
    samples: Vec<(f64, f64)>,
}

impl Ping {
    /// The app with id `id`.
    pub fn new(id: u32, cfg: PingConfig) -> Ping {
        Ping {
            id,
            cfg,
            flow: 0,
            fwd: 0,
            rev: 0,
            sent: 0,
            samples: Vec::new(),
        }
    }

    fn probe(&mut self, cx: &mut Ctx, stack: &mut Stack) {
        let mut p = Packet {
            route: self.fwd,
            ip_bytes: IPV4_HEADER_BYTES + ICMP_HEADER_BYTES + self.cfg.payload_bytes,
            flow: self.flow,
            dst_ep: self.id,
            src_ep: self.id,
            src: self.cfg.src,
            dst: self.cfg.dst,
            ..Packet::EMPTY
        };
        p.set_ping(PingHeader {
            probe: self.sent,
            sent_at: cx.now,
            reply_route: self.rev,
        });
        self.sent += 1;
        let id = cx.net.alloc(p);
        stack.send(cx, id);
        if self.cfg.count.is_none_or(|c| self.sent < c) {
            cx.ev.schedule(
                cx.now + self.cfg.interval,
                Event::App {
                    app: self.id,
                    token: 1,
                },
            );
        }
    }
}

impl Application for Ping {
    fn start(&mut self, env: &mut Env) -> Result<(), String> {
        let (cx, stack) = (&mut *env.cx, &mut *env.stack);
        let h = xco_core::rng::mix64(stack.seed, 0x9_1ce0 + self.id as u64);
        self.fwd = cx.net.route(self.cfg.src, self.cfg.dst, h).map_err(|e| e.0)?;
        self.rev = cx.net.route(self.cfg.dst, self.cfg.src, h).map_err(|e| e.0)?;
        self.flow = cx.net.flows.len() as u32;
        cx.net.flows.push(
            FlowStats::new(
                FlowKind::Ping,
                self.id,
                "probe",
                self.cfg.src,
                self.cfg.dst,
                cx.now,
            )
            .with_route(self.fwd),
        );
        self.probe(cx, stack);
        Ok(())
    }
    fn on_note(&mut self, env: &mut Env, note: AppNote) -> Result<(), String> {
        if let AppNote::PingReply { rtt, .. } = note {
            let f = &mut env.cx.net.flows[self.flow as usize];
            f.rtt_count += 1;
            f.rtt_sum_ps += rtt.ps();
            f.rtt_max_ps = f.rtt_max_ps.max(rtt.ps());
            let sent_at = env.cx.now.ps() - rtt.ps();
            self.samples
                .push((Time(sent_at).as_secs_f64(), rtt.as_secs_f64() * 1e6));
        }
        Ok(())
    }
    fn on_timer(&mut self, env: &mut Env, _token: u32) -> Result<(), String> {
        self.probe(env.cx, env.stack);
        Ok(())
    }
    fn finished(&self) -> bool {
        self.cfg.count.is_some_and(|c| self.samples.len() as u64 >= c)
    }
    fn demand(&self, cx: &DemandCx) -> Demand {
        let interval_s = self.cfg.interval.as_secs_f64().max(1e-12);
        let probes = match self.cfg.count {
            Some(c) => c,
            None => (cx.until_s / interval_s).ceil() as u64,
        };
        let probe_bytes = (IPV4_HEADER_BYTES + ICMP_HEADER_BYTES + self.cfg.payload_bytes) as f64;
        Demand {
            other_flows: 1,
            bytes: 2.0 * probes as f64 * probe_bytes,
            busy_s: if self.cfg.count.is_some() {
                probes as f64 * interval_s
            } else {
                0.0
            },
            samples: probes,
            data_flows: 1.0,
            ..Demand::default()
        }
    }
    fn endless(&self) -> bool {
        self.cfg.count.is_none()
    }
    fn kind(&self) -> &'static str {
        "ping"
    }
    fn summary(&self, _cx: &Ctx) -> Vec<Metric> {
        let rtts: Vec<f64> = self.samples.iter().map(|s| s.1).collect();
        vec![
            ("probes_sent", self.sent as f64),
            ("replies", rtts.len() as f64),
            ("rtt_us_mean", mean(&rtts)),
            ("rtt_us_p99", quantile(&rtts, 0.99)),
            ("rtt_us_max", quantile(&rtts, 1.0)),
        ]
    }
    /// (send time in s, RTT in us) per answered probe.
    fn samples(&self) -> Vec<(f64, f64)> {
        self.samples.clone()
    }
}
