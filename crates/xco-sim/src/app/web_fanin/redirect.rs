//! Query redirection in the web fan-in (SICC §Design 6, eqs 7–8): at each
//! period the front-end plans moves with `xco_core::sicc::Redirector` and a
//! hand-over that keeps every object delivered exactly once.
//!
//! The front-end knows, per root hub (a hub streaming to it), the objects
//! its stream still owes (not arrived, never moved: |D_h|) and the bytes it
//! delivered in the period (b_r; measured since the request began when it
//! began within the period; no plan when that look is shorter than half a
//! period, too short to rank hubs). A server counts as in root hub k's swarm
//! when its rack has a hub under k (the driver's choice `ReplicaMap::hub_of`
//! allows); the front-end and a failed hub are never chosen. For each move:
//! 1. the front-end sends the old root hub `Release`;
//! 2. the old hub decides, being the only one that knows: if it already
//!    sent the object, nothing moves; if it holds it queued, it drops it
//!    from the queue; if the object has not reached it yet, it will drop it
//!    on arrival. In the last two cases it sends the new root hub `Adopt`
//!    (the new hub counts one more object and asks the replica holder,
//!    or queues its own copy) and tells the front-end `Released { moved }`.
//! 3. the front-end moves the object to the new stream's count on
//!    `Released { moved: true }` if it has not arrived already.
//!
//! An object is moved at most once.

use super::{Env, FrontEnd, HubSender, Method, Msg, WebFanin, NONE};
use xco_core::sicc::{PendingQuery, ReplicaMap};

/// Replica holders and root hubs as the front-end sees them for one request.
struct Replicas<'a> {
    holders: &'a [u32],
    replicas: usize,
    objs: &'a [u32],
    rack_of: &'a [u32],
    f: &'a FrontEnd,
}

impl ReplicaMap for Replicas<'_> {
    /// `object` is a request index: the holders of its catalogue object.
    fn holders(&self, object: u32) -> &[u32] {
        let o = self.objs[object as usize] as usize;
        &self.holders[o * self.replicas..o * self.replicas + self.replicas]
    }
    fn hub_of(&self, server: u32) -> Option<u32> {
        if server == self.f.host || server == self.f.failed_server {
            return None;
        }
        self.f.rack_root.get(&self.rack_of[server as usize]).copied()
    }
}

impl WebFanin {
    /// Front-end `fe`'s period ended: plan and start the moves (eqs 7–8).
    pub(super) fn plan_redirects(&mut self, env: &mut Env, fe: usize) -> Result<(), String> {
        let now = env.cx.now;
        let f = &mut self.fes[fe];
        // b_r over the period, or since the request began if it began later
        let dt_ns = now.saturating_since(f.period_start).as_ns().max(1);
        f.period_start = now;
        let roots = f.root_servers.len();
        if roots < 2 || f.left == 0 || dt_ns < self.cfg.speed.period_ns / 2 {
            // too short a look to rank hubs by progress: plan at the next period
            f.period_bytes.iter_mut().for_each(|b| *b = 0);
            return Ok(());
        }
        let rates: Vec<u64> = f
            .period_bytes
            .iter()
            .map(|&b| (b as u128 * 8_000_000_000 / dt_ns as u128).min(u64::MAX as u128) as u64)
            .collect();
        f.period_bytes.iter_mut().for_each(|b| *b = 0);
        let mut pending = Vec::new();
        for k in 0..roots as u32 {
            for (i, &o) in f.owner.iter().enumerate() {
                if o == k && f.got[i] == 0 && !f.moved[i] {
                    pending.push(PendingQuery {
                        hub: k,
                        object: i as u32,
                        server: f.asked[i],
                    });
                }
            }
        }
        let map = Replicas {
            holders: &self.holders,
            replicas: self.cfg.replicas as usize,
            objs: &f.objs,
            rack_of: &self.cfg.place.rack_of,
            f,
        };
        let mean = (self.cfg.object_min_bytes as u64 + self.cfg.object_max_bytes as u64) / 2;
        let mut out = Vec::new();
        self.redirector.plan(&rates, &pending, mean, &map, &mut out);
        let (host, req) = (f.host, f.req);
        for r in out {
            let f = &mut self.fes[fe];
            f.moved[r.object as usize] = true;
            f.redirects += 1;
            let m = Msg::Release {
                fe: fe as u32,
                req,
                idx: r.object,
                to_hub: r.to_hub,
                to_hub_server: f.root_servers[r.to_hub as usize],
                to_server: r.to_server,
            };
            let old = f.root_servers[r.from_hub as usize];
            let bytes = self.query_bytes(1);
            self.send(env, host, old, bytes, m)?;
        }
        Ok(())
    }

    /// At old root hub `host`: hand object `idx` over unless it was sent.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn on_release(
        &mut self,
        env: &mut Env,
        host: u32,
        fe: u32,
        req: u32,
        idx: u32,
        to_hub: u32,
        to_hub_server: u32,
        to_server: u32,
    ) -> Result<(), String> {
        let moved = match self.sender_of.get(&(fe, host)).copied() {
            None => false, // done: everything was sent
            Some(slot) => {
                let s = self.senders[slot].as_mut().expect("live sender");
                if s.req != req || s.has_sent(idx) {
                    false
                } else {
                    if !s.remove(idx) {
                        // not here yet: drop it when it comes
                        s.expect_fewer();
                        self.dropped.insert((fe, req, idx, host));
                    }
                    self.pump(env, slot)?;
                    true
                }
            }
        };
        let fe_host = self.fes[fe as usize].host;
        let hdr = self.cfg.query_header_bytes as u64;
        if moved {
            self.send(
                env,
                host,
                to_hub_server,
                hdr,
                Msg::Adopt {
                    fe,
                    req,
                    idx,
                    server: to_server,
                },
            )?;
        }
        self.send(
            env,
            host,
            fe_host,
            hdr,
            Msg::Released {
                fe,
                req,
                idx,
                to_hub,
                moved,
            },
        )
    }

    /// At the front-end: the old root hub answered a `Release`.
    pub(super) fn on_released(&mut self, fe: u32, req: u32, idx: u32, to_hub: u32, moved: bool) {
        let f = &mut self.fes[fe as usize];
        if req != f.req || !moved || f.got[idx as usize] > 0 {
            return;
        }
        let old = f.owner[idx as usize];
        if old != NONE {
            f.root_done_one(old);
        }
        f.owner[idx as usize] = to_hub;
        f.root_left[to_hub as usize] += 1;
    }

    /// At new root hub `host`: forward object `idx` too, asking `server` for it.
    pub(super) fn on_adopt(
        &mut self,
        env: &mut Env,
        host: u32,
        fe: u32,
        req: u32,
        idx: u32,
        server: u32,
    ) -> Result<(), String> {
        let slot = match self.sender_of.get(&(fe, host)).copied() {
            Some(slot) => {
                self.senders[slot].as_mut().expect("live sender").expect_more();
                slot
            }
            None => {
                // it had finished: a new stream to the front-end, as TCP allows
                let fe_host = self.fes[fe as usize].host;
                let burst = self.hub_burst_bytes(env, host, fe_host)?;
                let sender = HubSender::new(fe, req, host, fe_host, 1, 0, burst, env.cx.now);
                let slot = self.add_sender(sender);
                self.sender_of.insert((fe, host), slot);
                slot
            }
        };
        if server == host {
            let o = self.fes[fe as usize].objs[idx as usize];
            let b = self.size_bytes[o as usize];
            self.senders[slot].as_mut().expect("live sender").push(idx, b);
            return self.pump(env, slot);
        }
        debug_assert!(matches!(self.cfg.method, Method::Sicc { .. }));
        let m = Msg::Query {
            fe,
            req,
            idx: vec![idx],
            reply_to: host,
        };
        let bytes = self.query_bytes(1);
        self.send(env, host, server, bytes, m)
    }
}
