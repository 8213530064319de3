//! Two-level speed control in the web fan-in (eqs 2–6): one
//! `xco_core::sicc::SpeedControl` per front-end, its period as an app
//! timer, and the aggregation router's queue report: measured at the
//! router's ports into the front-end's rack each period, it reaches the
//! front-end two hops later (never read from the simulator at the
//! front-end). The same period drives query redirection (`redirect.rs`).

use super::{Env, Method, Msg, WebFanin, KIND_SHIFT, PERIOD, REPORT};
use crate::engine::Event;
use xco_core::sicc::{QueueReport, SpeedControl};
use xco_core::{Dur, Time};

impl WebFanin {
    /// Speed control at every front-end: its downlink B_d, the
    /// aggregation router's ports into its rack (S_a: their buffers), the
    /// queue report's travel time, and the first period.
    pub(super) fn start_speed_control(&mut self, env: &mut Env, speed: bool) -> Result<(), String> {
        let now = env.cx.now;
        let ports = &env.cx.net.ports;
        for fe in 0..self.fes.len() {
            let host = self.fes[fe].host;
            let rack = self.cfg.place.rack_of[host as usize];
            let down = &ports[self.cfg.place.down_port[host as usize] as usize];
            let into = self.cfg.place.rack_in_ports[rack as usize].clone();
            if into.is_empty() {
                return Err(format!(
                    "speed control needs an aggregation router above the front-end's rack; host {host} has none"
                ));
            }
            let s_a: u64 = into.iter().map(|&p| ports[p as usize].buffer_bytes).sum();
            // a 64-B report from the router to the front-end: two hops
            let hop = |p: &crate::net::port::Port| p.delay + Dur::serialization(64, p.rate_bps);
            let delay = hop(&ports[into[0] as usize]) + hop(down);
            let sc = SpeedControl::new(self.cfg.speed, down.rate_bps, s_a, 0, now.ps() / 1000);
            let next = Time(sc.next_period_ns() * 1000);
            let f = &mut self.fes[fe];
            f.sc = speed.then_some(sc);
            f.period_start = now;
            f.agg_ports = into;
            f.report_delay = delay;
            env.cx.ev.schedule(
                next,
                Event::App {
                    app: self.id,
                    token: PERIOD << KIND_SHIFT | fe as u32,
                },
            );
        }
        Ok(())
    }

    /// A speed-control period of front-end `fe` ends: the router measures
    /// its queue (the report leaves now and arrives `report_delay` later),
    /// the front-end updates B_p and the hub rates (eqs 2–6) and tells each
    /// hub still sending its rate.
    pub(super) fn on_period(&mut self, env: &mut Env, fe: usize) -> Result<(), String> {
        if self.fes[fe].done {
            return Ok(());
        }
        let now = env.cx.now;
        let now_ns = now.ps() / 1000;
        let q: u64 = self.fes[fe]
            .agg_ports
            .iter()
            .map(|&p| env.cx.net.ports[p as usize].backlog_bytes(now))
            .sum();
        let f = &mut self.fes[fe];
        f.reports.push_back(QueueReport {
            queue_bytes: q,
            measured_at_ns: now_ns,
        });
        env.cx.ev.schedule(
            now + f.report_delay,
            Event::App {
                app: self.id,
                token: REPORT << KIND_SHIFT | fe as u32,
            },
        );
        let next = match f.sc.as_mut() {
            Some(sc) => {
                sc.on_period(now_ns);
                Time(sc.next_period_ns() * 1000)
            }
            None => now + Dur::from_ns(self.cfg.speed.period_ns),
        };
        env.cx.ev.schedule(
            next.max(now + Dur(1)),
            Event::App {
                app: self.id,
                token: PERIOD << KIND_SHIFT | fe as u32,
            },
        );
        let (host, req) = (f.host, f.req);
        if let Method::Sicc { redirect: true, .. } = self.cfg.method {
            self.plan_redirects(env, fe)?;
        }
        if self.fes[fe].sc.is_none() {
            return Ok(());
        }
        for k in 0..self.fes[fe].root_servers.len() {
            let f = &self.fes[fe];
            if f.root_left[k] == 0 {
                continue;
            }
            let rate_bps = f.sc.as_ref().expect("on").hub_rate_bps(k);
            let s = f.root_servers[k];
            self.fes[fe].rate_msgs += 1;
            self.send(
                env,
                host,
                s,
                self.cfg.query_header_bytes as u64,
                Msg::Rate {
                    fe: fe as u32,
                    req,
                    rate_bps,
                },
            )?;
        }
        Ok(())
    }
}
