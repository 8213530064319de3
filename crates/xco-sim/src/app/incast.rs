//! Barrier-synchronised fan-in: a client asks N servers for a server request
//! unit (SRU) each; the next round starts when all N have arrived. With
//! `block_bytes`, the same thing is a striped block read (each server sends
//! its 1/N share of a block).

use super::{mbps, mean, quantile, AppNote, Application, Demand, DemandCx, Env, Metric};
use crate::ctx::Ctx;
use crate::engine::Event;
use crate::tcp::table::Roles;
use xco_core::{Dur, Rng, Time};

/// Configuration of an incast application.
#[derive(Clone, Debug)]
pub struct IncastConfig {
    /// Client host node.
    pub client: u32,
    /// Server host nodes.
    pub servers: Vec<u32>,
    /// Bytes each server sends per round.
    pub sru_bytes: u64,
    /// Bytes of the client's request per server per round (0: servers start at the round start).
    pub request_bytes: u64,
    /// Number of rounds.
    pub rounds: u32,
    /// Each server waits U[0, max] before answering.
    pub start_delay_max: Dur,
    /// Keep connections open across rounds (else one connection per request).
    pub reuse_connections: bool,
    /// `incast` or `stripe` (output label only).
    pub label: &'static str,
}

/// The running application.
pub struct Incast {
    id: u32,
    cfg: IncastConfig,
    rng: Rng,
    conns: Vec<(u32, u32)>,
    connected: usize,
    round: u32,
    round_start: Time,
    first_start: Option<Time>,
    last_end: Time,
    req_got: Vec<u64>,
    resp_got: Vec<u64>,
    answered: Vec<bool>,
    done_servers: usize,
    round_times: Vec<f64>,
    finished: bool,
}

impl Incast {
    /// An incast app with id `id` drawing delays from `rng`.
    pub fn new(id: u32, cfg: IncastConfig, rng: Rng) -> Incast {
        let n = cfg.servers.len();
        Incast {
            id,
            cfg,
            rng,
            conns: Vec::new(),
            connected: 0,
            round: 0,
            round_start: Time::ZERO,
            first_start: None,
            last_end: Time::ZERO,
            req_got: vec![0; n],
            resp_got: vec![0; n],
            answered: vec![false; n],
            done_servers: 0,
            round_times: Vec::new(),
            finished: false,
        }
    }

    fn open(&mut self, env: &mut Env, i: usize) -> Result<(u32, u32), String> {
        env.tcp
            .open(
                env.cx,
                env.stack,
                self.id,
                self.cfg.client,
                self.cfg.servers[i],
                i as u32,
                Roles {
                    client: "request",
                    server: "response",
                },
            )
            .map_err(|e| e.0)
    }

    fn begin_round(&mut self, env: &mut Env) -> Result<(), String> {
        let now = env.cx.now;
        self.round_start = now;
        self.first_start.get_or_insert(now);
        self.done_servers = 0;
        self.req_got.iter_mut().for_each(|x| *x = 0);
        self.resp_got.iter_mut().for_each(|x| *x = 0);
        self.answered.iter_mut().for_each(|x| *x = false);
        let n = self.cfg.servers.len();
        if !self.cfg.reuse_connections {
            self.conns.clear();
            for i in 0..n {
                let c = self.open(env, i)?;
                self.conns.push(c);
            }
            return Ok(()); // requests go out as each connection comes up
        }
        for i in 0..n {
            self.request(env, i);
        }
        Ok(())
    }

    fn request(&mut self, env: &mut Env, i: usize) {
        if self.cfg.request_bytes > 0 {
            env.tcp
                .write(env.cx, env.stack, self.conns[i].0, self.cfg.request_bytes);
        } else {
            self.answer(env, i);
        }
    }

    fn answer(&mut self, env: &mut Env, i: usize) {
        if self.answered[i] {
            return;
        }
        self.answered[i] = true;
        let max = self.cfg.start_delay_max.ps();
        if max == 0 {
            env.tcp
                .write(env.cx, env.stack, self.conns[i].1, self.cfg.sru_bytes);
        } else {
            let d = Dur(self.rng.range_inclusive(0, max));
            env.cx.ev.schedule(
                env.cx.now + d,
                Event::App {
                    app: self.id,
                    token: 1 + i as u32,
                },
            );
        }
    }

    fn end_round(&mut self, env: &mut Env) -> Result<(), String> {
        let now = env.cx.now;
        self.round_times
            .push((now - self.round_start).as_secs_f64() * 1e3);
        self.last_end = now;
        self.round += 1;
        if self.round >= self.cfg.rounds {
            self.finished = true;
            return Ok(());
        }
        self.begin_round(env)
    }

    /// Application goodput over the completed rounds, Mbit/s (NaN before the first round ends).
    pub fn goodput_mbps(&self) -> f64 {
        let Some(first) = self.first_start else {
            return f64::NAN;
        };
        if self.round == 0 {
            return f64::NAN;
        }
        let elapsed = self.last_end.saturating_since(first).as_secs_f64();
        let bytes = self.round as f64 * self.cfg.servers.len() as f64 * self.cfg.sru_bytes as f64;
        mbps(bytes, elapsed)
    }
}

impl Application for Incast {
    fn start(&mut self, env: &mut Env) -> Result<(), String> {
        if self.cfg.reuse_connections {
            for i in 0..self.cfg.servers.len() {
                let c = self.open(env, i)?;
                self.conns.push(c);
            }
            // the first round starts when every connection is up (see on_note)
            Ok(())
        } else {
            self.begin_round(env)
        }
    }
    fn on_note(&mut self, env: &mut Env, note: AppNote) -> Result<(), String> {
        match note {
            AppNote::Connected { ep, .. } => {
                let tag = env.tcp.eps[ep as usize].tag;
                if self.conns.get(tag as usize).map(|c| c.0) != Some(ep) {
                    return Ok(()); // the server side coming up needs no action
                }
                if self.cfg.reuse_connections {
                    self.connected += 1;
                    if self.connected == self.cfg.servers.len() {
                        self.begin_round(env)?;
                    }
                } else {
                    self.request(env, tag as usize);
                }
            }
            AppNote::Delivered { ep, bytes, .. } => {
                let e = &env.tcp.eps[ep as usize];
                let i = e.tag as usize;
                if self.conns.get(i).map(|c| c.1) == Some(ep) {
                    // server side received (part of) the request
                    self.req_got[i] += bytes;
                    if self.req_got[i] >= self.cfg.request_bytes {
                        self.answer(env, i);
                    }
                } else if self.conns.get(i).map(|c| c.0) == Some(ep) {
                    self.resp_got[i] += bytes;
                    if self.resp_got[i] == self.cfg.sru_bytes {
                        self.done_servers += 1;
                        if !self.cfg.reuse_connections {
                            env.tcp.close_pair(ep);
                        }
                        if self.done_servers == self.cfg.servers.len() {
                            self.end_round(env)?;
                        }
                    }
                }
            }
            AppNote::SendAcked { .. } | AppNote::PingReply { .. } => {}
        }
        Ok(())
    }
    fn on_timer(&mut self, env: &mut Env, token: u32) -> Result<(), String> {
        let i = (token - 1) as usize;
        env.tcp
            .write(env.cx, env.stack, self.conns[i].1, self.cfg.sru_bytes);
        Ok(())
    }
    fn finished(&self) -> bool {
        self.finished
    }
    fn demand(&self, cx: &DemandCx) -> Demand {
        let servers = self.cfg.servers.len() as u64;
        let rounds = self.cfg.rounds as u64;
        let per_round = servers as f64 * (self.cfg.sru_bytes + self.cfg.request_bytes) as f64;
        let responses = servers as f64 * self.cfg.sru_bytes as f64;
        Demand {
            tcp_connections: servers * if self.cfg.reuse_connections { 1 } else { rounds },
            // one round at a time: every server's response and request
            concurrent: servers,
            flight_bytes: per_round,
            bytes: per_round * rounds as f64,
            // every response crosses the client's NIC
            busy_s: cx.line_secs(self.cfg.client, responses * rounds as f64),
            samples: rounds,
            // requests and responses: per round, or all along when connections are kept
            data_flows: 2.0
                * servers as f64
                * if self.cfg.reuse_connections {
                    1.0
                } else {
                    rounds as f64 / 2.0
                },
            ..Demand::default()
        }
    }
    fn endless(&self) -> bool {
        false
    }
    fn kind(&self) -> &'static str {
        self.cfg.label
    }
    fn summary(&self, cx: &Ctx) -> Vec<Metric> {
        let timeouts: u64 = cx
            .net
            .flows
            .iter()
            .filter(|f| f.app == self.id)
            .map(|f| f.timeouts)
            .sum();
        vec![
            ("servers", self.cfg.servers.len() as f64),
            ("rounds_done", self.round as f64),
            ("goodput_mbps", self.goodput_mbps()),
            ("completion_ms_mean", mean(&self.round_times)),
            ("completion_ms_p99", quantile(&self.round_times, 0.99)),
            ("completion_ms_max", quantile(&self.round_times, 1.0)),
            ("timeouts", timeouts as f64),
        ]
    }
    /// (round number, completion time in ms) per finished round.
    fn samples(&self) -> Vec<(f64, f64)> {
        self.round_times
            .iter()
            .enumerate()
            .map(|(i, &t)| (i as f64, t))
            .collect()
    }
}
