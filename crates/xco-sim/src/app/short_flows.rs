//! K parallel sequences of short TCP transfers: each sequence opens a
//! connection, sends `flow_bytes`, and when the receiver has all of it the
//! connection closes and the next one starts (the "bursts of short TCP flows"
//! of the XCo paper). A flow's completion time runs from its open to the
//! delivery of its last byte at the receiver.

use super::{mbps, mean, quantile, AppNote, Application, Demand, DemandCx, Env, Metric};
use crate::ctx::Ctx;
use crate::engine::Event;
use crate::tcp::table::Roles;
use xco_core::{Dur, Rng, Time};

/// Configuration of the short-flow sequences.
#[derive(Clone, Debug)]
pub struct ShortFlowsConfig {
    /// Sender host node.
    pub src: u32,
    /// Receiver host node.
    pub dst: u32,
    /// Number of parallel sequences (K).
    pub parallel: u32,
    /// Bytes per flow.
    pub flow_bytes: u64,
    /// Flows per sequence (`None`: until the run ends).
    pub flows_per_sequence: Option<u32>,
    /// Sequence starts are spread uniformly over this span after `start`.
    pub start_spread: Dur,
}

/// The running application.
pub struct ShortFlows {
    id: u32,
    cfg: ShortFlowsConfig,
    rng: Rng,
    started: Time,
    current: Vec<(u32, Time)>,
    done_per_seq: Vec<u32>,
    fct_ms: Vec<f64>,
    bytes_done: u64,
    live: u32,
}

impl ShortFlows {
    /// The app with id `id`.
    pub fn new(id: u32, cfg: ShortFlowsConfig, rng: Rng) -> ShortFlows {
        let k = cfg.parallel as usize;
        ShortFlows {
            id,
            cfg,
            rng,
            started: Time::ZERO,
            current: vec![(u32::MAX, Time::ZERO); k],
            done_per_seq: vec![0; k],
            fct_ms: Vec::new(),
            bytes_done: 0,
            live: 0,
        }
    }

    fn next_flow(&mut self, env: &mut Env, seq: u32) -> Result<(), String> {
        let roles = Roles {
            client: "short",
            server: "ack",
        };
        let (c, _) = env
            .tcp
            .open(env.cx, env.stack, self.id, self.cfg.src, self.cfg.dst, seq, roles)
            .map_err(|e| e.0)?;
        self.current[seq as usize] = (c, env.cx.now);
        Ok(())
    }
}

impl Application for ShortFlows {
    fn start(&mut self, env: &mut Env) -> Result<(), String> {
        self.started = env.cx.now;
        self.live = self.cfg.parallel;
        for s in 0..self.cfg.parallel {
            let at = env.cx.now + Dur(self.rng.range_inclusive(0, self.cfg.start_spread.ps()));
            env.cx.ev.schedule(
                at,
                Event::App {
                    app: self.id,
                    token: 1 + s,
                },
            );
        }
        Ok(())
    }
    fn on_note(&mut self, env: &mut Env, note: AppNote) -> Result<(), String> {
        match note {
            AppNote::Connected { ep, .. } => {
                let s = env.tcp.eps[ep as usize].tag as usize;
                if self.current[s].0 == ep {
                    env.tcp.write(env.cx, env.stack, ep, self.cfg.flow_bytes);
                }
            }
            AppNote::Delivered { ep, .. } => {
                // the receiving end of the current flow of sequence `s`
                let e = &env.tcp.eps[ep as usize];
                let s = e.tag as usize;
                let client = e.peer_ep;
                if self.current.get(s).map(|c| c.0) != Some(client) || e.rcv_nxt < self.cfg.flow_bytes {
                    return Ok(());
                }
                let ep = client;
                let now = env.cx.now;
                self.fct_ms.push((now - self.current[s].1).as_secs_f64() * 1e3);
                self.bytes_done += self.cfg.flow_bytes;
                env.tcp.close_pair(ep);
                self.done_per_seq[s] += 1;
                if self
                    .cfg
                    .flows_per_sequence
                    .is_some_and(|n| self.done_per_seq[s] >= n)
                {
                    self.current[s].0 = u32::MAX;
                    self.live -= 1;
                } else {
                    self.next_flow(env, s as u32)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
    fn on_timer(&mut self, env: &mut Env, token: u32) -> Result<(), String> {
        self.next_flow(env, token - 1)
    }
    fn finished(&self) -> bool {
        self.cfg.flows_per_sequence.is_some() && self.live == 0
    }
    fn demand(&self, cx: &DemandCx) -> Demand {
        let size = self.cfg.flow_bytes.max(1) as f64;
        let flows = match self.cfg.flows_per_sequence {
            Some(n) => self.cfg.parallel as u64 * n as u64,
            // until the run's end: no more flows than the line rate carries
            None => (cx.line_bytes(self.cfg.src, cx.until_s) / size).ceil() as u64 + self.cfg.parallel as u64,
        };
        let bytes = flows as f64 * size;
        Demand {
            tcp_connections: flows,
            concurrent: self.cfg.parallel as u64,
            flight_bytes: self.cfg.parallel as f64 * size,
            bytes,
            busy_s: if self.cfg.flows_per_sequence.is_some() {
                cx.line_secs(self.cfg.src, bytes)
                    .max(cx.line_secs(self.cfg.dst, bytes))
            } else {
                0.0
            },
            samples: flows,
            data_flows: flows as f64 / 2.0,
            ..Demand::default()
        }
    }
    fn endless(&self) -> bool {
        self.cfg.flows_per_sequence.is_none()
    }
    fn kind(&self) -> &'static str {
        "short_flows"
    }
    fn summary(&self, cx: &Ctx) -> Vec<Metric> {
        let secs = cx.now.saturating_since(self.started).as_secs_f64();
        let rate = mbps(self.bytes_done as f64, secs);
        vec![
            ("flows_done", self.fct_ms.len() as f64),
            ("goodput_mbps", rate),
            ("fct_ms_mean", mean(&self.fct_ms)),
            ("fct_ms_p99", quantile(&self.fct_ms, 0.99)),
        ]
    }
    /// (flow number, completion time in ms) per finished flow.
    fn samples(&self) -> Vec<(f64, f64)> {
        self.fct_ms
            .iter()
            .enumerate()
            .map(|(i, &t)| (i as f64, t))
            .collect()
    }
}
