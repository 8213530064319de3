//! SICC's hubs in the web fan-in: per request, the front-end builds the
//! swarms and Algorithm 1's tree (`xco_core::sicc::AggTree`), fails the
//! largest swarm's hub when asked (the backup takes over), draws which hubs
//! are overloaded, and asks each root hub; a hub asks its child hubs and
//! swarm members, queues its own objects first and then what arrives, and
//! streams the queue to its parent through its paced sender
//! ([`super::pacing::HubSender`]).

use super::{Env, HubSender, Msg, WebFanin, KIND_SHIFT, NONE, SEND};
use crate::engine::Event;
use xco_core::sicc::{hubs_per_request, max_hubs_at_once, Parent, Proximity, Target, TreeConfig};
use xco_core::Time;

impl WebFanin {
    pub(super) fn sicc_begin(
        &mut self,
        env: &mut Env,
        fe: usize,
        req: u32,
        proximity: bool,
        multi_tree: bool,
    ) -> Result<(), String> {
        let host = self.fes[fe].host;
        let place = &self.cfg.place;
        let f = &mut self.fes[fe];
        let targets: Vec<Target> = f
            .targets
            .iter()
            .zip(&f.target_objs)
            .map(|(&s, objs)| Target {
                server: s,
                rack: place.rack_of[s as usize],
                agg: place.agg_of(s),
                objects: objs.len() as u32,
            })
            .collect();
        let n = match self.cfg.hubs_per_request {
            Some(n) => n,
            None => {
                let down = &env.cx.net.ports[place.down_port[host as usize] as usize];
                let nic = &env.cx.net.ports[place.nic_port[host as usize] as usize];
                let m = max_hubs_at_once(
                    down.buffer_bytes,
                    self.cfg.mean_packet_bytes as u64,
                    nic.rate_bps,
                    down.rate_bps,
                    self.cfg.uplink_reading,
                );
                hubs_per_request(m, 1)
            }
        };
        let cfg = TreeConfig {
            max_children: if multi_tree { n } else { u32::MAX },
            proximity: if proximity {
                Proximity::Aggregation
            } else {
                Proximity::Random
            },
        };
        f.tree
            .build(&targets, &cfg, &mut self.rng)
            .map_err(|e| e.to_string())?;
        let mut refetch: Vec<u32> = Vec::new();
        f.refetched.clear();
        f.refetched.resize(f.objs.len(), false);
        f.failed_server = u32::MAX;
        if self.cfg.fail_largest_hub && f.tree.hubs() > 0 {
            let h = (0..f.tree.hubs() as u32)
                .max_by_key(|&h| (f.tree.swarm(h).objects, std::cmp::Reverse(h)))
                .expect("a hub");
            let failed = f.tree.swarm(h).hub;
            if f.tree.fail_hub(h).is_ok() {
                f.failovers += 1;
                f.failed_server = failed;
                let t = f
                    .targets
                    .binary_search(&failed)
                    .expect("the failed hub is a target");
                refetch = f.target_objs[t].clone();
            }
        }
        f.parent_of.clear();
        f.hub_index.clear();
        for h in 0..f.tree.hubs() as u32 {
            let s = f.tree.swarm(h).hub;
            let p = match f.tree.parent(h) {
                Parent::FrontEnd => host,
                Parent::Hub(p) => f.tree.swarm(p).hub,
            };
            f.parent_of.insert(s, p);
            f.hub_index.insert(s, h);
        }
        // which hubs are overloaded in this request (the service model)
        let p = self.cfg.overload_ppm as u64;
        f.overloaded.clear();
        for _ in 0..f.tree.hubs() {
            f.overloaded.push(p > 0 && self.rng.below(1_000_000) < p);
        }
        let roots: Vec<u32> = f.tree.root_children().to_vec();
        f.root_pos.clear();
        f.root_servers.clear();
        f.root_left.clear();
        for (k, &h) in roots.iter().enumerate() {
            let s = f.tree.swarm(h).hub;
            f.root_pos.insert(s, k as u32);
            f.root_servers.push(s);
            f.root_left.push(f.tree.subtree_objects(h));
        }
        // which root stream owes each object; each rack's root (redirection's swarms)
        f.owner.clear();
        f.owner.resize(f.objs.len(), NONE);
        f.moved.clear();
        f.moved.resize(f.objs.len(), false);
        f.period_bytes.clear();
        f.period_bytes.resize(roots.len(), 0);
        f.rack_root.clear();
        f.redirects = 0;
        f.period_start = env.cx.now;
        for h in 0..f.tree.hubs() as u32 {
            let mut r = h;
            while let Parent::Hub(p) = f.tree.parent(r) {
                r = p;
            }
            let k = f.root_pos[&f.tree.swarm(r).hub];
            f.rack_root.insert(f.tree.swarm(h).rack, k);
            for m in f.tree.members(h) {
                let t = f.targets.binary_search(&m.server).expect("a member is a target");
                for &i in &f.target_objs[t] {
                    f.owner[i as usize] = k;
                }
            }
        }
        if let Some(sc) = &mut f.sc {
            sc.start_request(roots.len());
        }
        for (k, h) in roots.into_iter().enumerate() {
            let f = &self.fes[fe];
            let s = f.tree.swarm(h).hub;
            let rate_bps = f.sc.as_ref().map_or(0, |sc| sc.hub_rate_bps(k));
            let bytes = self.query_bytes(f.tree.subtree_objects(h));
            self.send(
                env,
                host,
                s,
                bytes,
                Msg::HubQuery {
                    fe: fe as u32,
                    req,
                    hub: h,
                    rate_bps,
                },
            )?;
        }
        // a failed hub's objects: asked of another holder, straight from the front-end
        if !refetch.is_empty() {
            let failed_targets = refetch.len();
            let r = self.cfg.replicas as usize;
            for i in refetch {
                let o = self.fes[fe].objs[i as usize] as usize;
                let failed = self.fes[fe].asked[i as usize];
                let alt = self.holders[o * r..o * r + r]
                    .iter()
                    .copied()
                    .find(|&s| s != failed && s != host);
                let Some(alt) = alt else {
                    return Err(format!("object {o} has no live holder besides the front-end"));
                };
                self.fes[fe].asked[i as usize] = alt;
                self.fes[fe].refetched[i as usize] = true;
                let m = Msg::Query {
                    fe: fe as u32,
                    req,
                    idx: vec![i],
                    reply_to: host,
                };
                let bytes = self.query_bytes(1);
                self.send(env, host, alt, bytes, m)?;
            }
            let _ = failed_targets;
        }
        Ok(())
    }

    /// Hub `hub` of front-end `fe`'s tree (at `server`) was asked.
    pub(super) fn on_hub_query(
        &mut self,
        env: &mut Env,
        server: u32,
        fe: usize,
        req: u32,
        hub: u32,
        rate_bps: u64,
    ) -> Result<(), String> {
        let parent = self.fes[fe].parent_of[&server];
        let rate = self.hub_rate(env, fe, hub, server, rate_bps);
        let expected = self.fes[fe].tree.subtree_objects(hub);
        let burst = self.hub_burst_bytes(env, server, parent)?;
        let sender = HubSender::new(fe as u32, req, server, parent, expected, rate, burst, env.cx.now);
        let slot = self.add_sender(sender);
        if self.sender_of.insert((fe as u32, server), slot).is_some() {
            return Err(format!("host {server} is asked twice to be a hub of one request"));
        }
        let children: Vec<u32> = self.fes[fe].tree.children(hub).to_vec();
        for c in children {
            let s = self.fes[fe].tree.swarm(c).hub;
            let bytes = self.query_bytes(self.fes[fe].tree.subtree_objects(c));
            self.send(
                env,
                server,
                s,
                bytes,
                Msg::HubQuery {
                    fe: fe as u32,
                    req,
                    hub: c,
                    rate_bps: 0,
                },
            )?;
        }
        let members: Vec<u32> = self.fes[fe].tree.members(hub).iter().map(|m| m.server).collect();
        for s in members {
            if s == server {
                continue;
            }
            let t = self.fes[fe]
                .targets
                .binary_search(&s)
                .expect("a member is a target");
            self.ask_target(env, fe, t, server)?;
        }
        // its own objects first, to its parent
        let t = self.fes[fe]
            .targets
            .binary_search(&server)
            .expect("a hub is a target");
        let own = self.fes[fe].target_objs[t].clone();
        for i in own {
            let o = self.fes[fe].objs[i as usize];
            let b = self.size_bytes[o as usize];
            self.senders[slot].as_mut().expect("live sender").push(i, b);
        }
        self.pump(env, slot)
    }

    /// Hub `hub`'s sending rate: what speed control assigned (0: none), an
    /// overloaded hub's fraction of it (or of its line rate without one).
    pub(super) fn hub_rate(&self, env: &Env, fe: usize, hub: u32, server: u32, assigned_bps: u64) -> u64 {
        if !self.fes[fe]
            .overloaded
            .get(hub as usize)
            .copied()
            .unwrap_or(false)
        {
            return assigned_bps;
        }
        let base = if assigned_bps > 0 {
            assigned_bps
        } else {
            env.cx.net.ports[self.cfg.place.nic_port[server as usize] as usize].rate_bps
        };
        (base as u128 * self.cfg.overload_fraction_ppm as u128 / 1_000_000).max(1) as u64
    }

    /// How many payload bytes a hub at `from` streaming to `to` gathers
    /// before it writes: one MSS of that connection with compression (the
    /// packet it fills), else 1 (each object goes as soon as its rate allows).
    pub(super) fn hub_burst_bytes(&mut self, env: &mut Env, from: u32, to: u32) -> Result<u64, String> {
        if !self.cfg.compression {
            return Ok(1);
        }
        let ep = self.ep(env, from, to)?;
        Ok(env.tcp.eps[ep as usize].win.mss)
    }

    /// Put `sender` in a free slot; returns the slot.
    pub(super) fn add_sender(&mut self, sender: HubSender) -> usize {
        match self.free_senders.pop() {
            Some(i) => {
                self.senders[i] = Some(sender);
                i
            }
            None => {
                self.senders.push(Some(sender));
                self.senders.len() - 1
            }
        }
    }

    /// Send what hub sender `slot` may send now (packed up to one MSS per
    /// write with compression, else one object per write); arm its timer
    /// for the rest.
    pub(super) fn pump(&mut self, env: &mut Env, slot: usize) -> Result<(), String> {
        let now = env.cx.now;
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        let s = self.senders[slot].as_mut().expect("live sender");
        let wake = s.ready(now, &mut ready);
        let (from, to, fe, req) = (s.server, s.parent, s.fe, s.req);
        let done = s.is_done();
        let rearm = match wake {
            Some(t) if s.wake_at == Time::NEVER || s.wake_at <= now || t < s.wake_at => {
                s.wake_at = t;
                Some(t)
            }
            _ => None,
        };
        if !ready.is_empty() {
            let ep = self.ep(env, from, to)?;
            if self.cfg.compression {
                // packet compression: next-fit in forwarding order, at most one
                // MSS of payload per write (`xco_core::sicc::pack`'s rule)
                let payload = env.tcp.eps[ep as usize].win.mss.max(1);
                let mut k = 0;
                while k < ready.len() {
                    let mut bytes = ready[k].1 as u64;
                    let mut end = k + 1;
                    while end < ready.len() && bytes + ready[end].1 as u64 <= payload {
                        bytes += ready[end].1 as u64;
                        end += 1;
                    }
                    let m = if end == k + 1 {
                        Msg::Object {
                            fe,
                            req,
                            idx: ready[k].0,
                        }
                    } else {
                        Msg::Batch {
                            fe,
                            req,
                            idx: ready[k..end].iter().map(|&(i, _)| i).collect(),
                        }
                    };
                    self.msgs.send(env, ep, bytes, m);
                    k = end;
                }
            } else {
                for &(i, b) in &ready {
                    self.msgs.send(env, ep, b as u64, Msg::Object { fe, req, idx: i });
                }
            }
        }
        self.ready = ready;
        if done {
            self.senders[slot] = None;
            self.free_senders.push(slot);
            self.sender_of.remove(&(fe, from));
        } else if let Some(t) = rearm {
            env.cx.ev.schedule(
                t,
                Event::App {
                    app: self.id,
                    token: SEND << KIND_SHIFT | slot as u32,
                },
            );
        }
        Ok(())
    }
}
