//! One long TCP transfer: netperf-like (unlimited) or a fixed size (a migration).

use super::{mbps, AppNote, Application, Demand, DemandCx, Env, Metric};
use crate::ctx::Ctx;
use crate::tcp::table::Roles;
use xco_core::Time;

/// Configuration of a bulk transfer.
#[derive(Clone, Debug)]
pub struct BulkConfig {
    /// Sender host node.
    pub src: u32,
    /// Receiver host node.
    pub dst: u32,
    /// Bytes to send (`None`: as many as the run allows).
    pub bytes: Option<u64>,
    /// Stop (close the connection) at this time, if set.
    pub stop: Option<Time>,
}

/// The running application.
pub struct Bulk {
    id: u32,
    cfg: BulkConfig,
    ep: Option<u32>,
    started: Time,
    done: Option<Time>,
    delivered: u64,
}

/// The timer token of a bulk transfer's stop.
const STOP_TOKEN: u32 = 1;

/// Bytes written for an "unlimited" transfer (never reached in a run).
const UNLIMITED_BYTES: u64 = 1 << 50;

impl Bulk {
    /// A bulk app with id `id`.
    pub fn new(id: u32, cfg: BulkConfig) -> Bulk {
        Bulk {
            id,
            cfg,
            ep: None,
            started: Time::ZERO,
            done: None,
            delivered: 0,
        }
    }
}

impl Application for Bulk {
    fn start(&mut self, env: &mut Env) -> Result<(), String> {
        self.started = env.cx.now;
        let roles = Roles {
            client: "bulk",
            server: "ack",
        };
        let (c, _) = env
            .tcp
            .open(env.cx, env.stack, self.id, self.cfg.src, self.cfg.dst, 0, roles)
            .map_err(|e| e.0)?;
        self.ep = Some(c);
        if let Some(stop) = self.cfg.stop {
            env.cx.ev.schedule(
                stop.max(env.cx.now),
                crate::engine::Event::App {
                    app: self.id,
                    token: STOP_TOKEN,
                },
            );
        }
        Ok(())
    }
    fn on_note(&mut self, env: &mut Env, note: AppNote) -> Result<(), String> {
        match note {
            AppNote::Connected { ep, .. } if Some(ep) == self.ep => {
                let bytes = self.cfg.bytes.unwrap_or(UNLIMITED_BYTES);
                env.tcp.write(env.cx, env.stack, ep, bytes);
            }
            AppNote::Delivered { bytes, .. } => {
                self.delivered += bytes;
                if Some(self.delivered) == self.cfg.bytes {
                    self.done = Some(env.cx.now);
                }
            }
            _ => {}
        }
        Ok(())
    }
    fn on_timer(&mut self, env: &mut Env, token: u32) -> Result<(), String> {
        if token == STOP_TOKEN && self.done.is_none() {
            // the flow is removed: both ends close, what is still in flight is discarded
            if let Some(ep) = self.ep {
                env.tcp.close_pair(ep);
            }
            self.done = Some(env.cx.now);
        }
        Ok(())
    }
    fn finished(&self) -> bool {
        self.done.is_some()
    }
    fn demand(&self, cx: &DemandCx) -> Demand {
        let (src, dst) = (self.cfg.src, self.cfg.dst);
        let until_s = self
            .cfg
            .stop
            .map_or(cx.until_s, |t| t.as_secs_f64().min(cx.until_s));
        let line = cx.line_bytes(src, until_s).min(cx.line_bytes(dst, until_s));
        let bytes = self.cfg.bytes.map_or(line, |b| b as f64);
        Demand {
            tcp_connections: 1,
            concurrent: 1,
            flight_bytes: self.cfg.bytes.map_or(f64::INFINITY, |b| b as f64),
            data_flows: 1.0,
            bytes,
            busy_s: self.cfg.bytes.map_or(0.0, |b| {
                cx.line_secs(src, b as f64).max(cx.line_secs(dst, b as f64))
            }),
            ..Demand::default()
        }
    }
    fn endless(&self) -> bool {
        self.cfg.bytes.is_none() && self.cfg.stop.is_none()
    }
    fn kind(&self) -> &'static str {
        if self.cfg.bytes.is_some() {
            "transfer"
        } else {
            "bulk"
        }
    }
    fn summary(&self, cx: &Ctx) -> Vec<Metric> {
        let end = self.done.unwrap_or(cx.now);
        let secs = end.saturating_since(self.started).as_secs_f64();
        let goodput = mbps(self.delivered as f64, secs);
        let mut m = vec![
            ("bytes_delivered", self.delivered as f64),
            ("goodput_mbps", goodput),
        ];
        if let Some(d) = self.done {
            m.push((
                "completion_ms",
                d.saturating_since(self.started).as_secs_f64() * 1e3,
            ));
        }
        m
    }
}

/// A bulk config (helper for the scenario builder).
pub fn bulk_config(src: u32, dst: u32, bytes: Option<u64>) -> BulkConfig {
    BulkConfig {
        src,
        dst,
        bytes,
        stop: None,
    }
}
