//! Algorithm 1 of the XCo spec (timeslice and hybrid forms): collect the
//! affected set A, then give each of its nodes, oldest waiting first, the
//! first destination whose path is feasible, preempting and reserving as the
//! scheduler's module documentation describes.
//!
//! Speed matters here: at a slot boundary every slice expires together and
//! one run considers every backlogged host. So A is collected by one pass
//! over the nodes when the triggers are many (instead of walking every
//! contention group), sorted once rather than kept in a heap, no run
//! allocates, and the feasibility check walks a path from the destination
//! end, where contention usually is.

use super::affected::{key, rotated, Affected};
use super::directive::DirectiveKind;
use super::scheduler::{Mode, Scheduler};
use super::state::{Reservation, NOBODY};
use super::topology::{LinkId, PathRef};
use crate::time::{Dur, Time};

/// Collect A by one pass over all nodes when there are at least
/// `nodes / NODE_SCAN_RATIO` triggers (fewer: walk the contention groups of
/// the links they touch). Either way A is the same set.
const NODE_SCAN_RATIO: usize = 8;

impl Scheduler {
    /// Algorithm 1 for the trigger nodes (already released from alpha, with
    /// their give-backs applied), whose transmissions freed `freed`.
    pub(super) fn algorithm1(&mut self, now: Time, triggers: &[u32], freed: &[LinkId]) {
        self.stats.events += 1;
        self.stamp = self.stamp.wrapping_add(1).max(1);
        // round robin: this event's traversal starts after the node that was
        // served first by the previous one
        let h = self.nodes.len() as u32;
        let rr = self.rr % h.max(1);
        let mut a = std::mem::take(&mut self.scratch.affected);
        a.clear();
        if triggers.len() * NODE_SCAN_RATIO >= self.nodes.len() {
            self.collect_by_nodes(now, triggers, freed, rr, &mut a);
        } else {
            self.collect_by_links(now, triggers, freed, rr, &mut a);
        }
        a.seal();
        let mut scheduled = std::mem::take(&mut self.scratch.scheduled);
        scheduled.clear();
        while let Some(k) = a.pop() {
            let r = rotated(k);
            let x = if r >= h - rr { r - (h - rr) } else { r + rr };
            self.consider(now, x, rr, &mut a, &mut scheduled);
        }
        self.scratch.affected = a;
        let slice = self.cfg.slice;
        let hybrid = self.cfg.mode == Mode::Hybrid;
        for &x in &scheduled {
            let n = &mut self.nodes[x as usize];
            n.in_n = false;
            let kind = DirectiveKind::Slice {
                dest: n.dest,
                len: slice,
                rate_bps: hybrid.then_some(n.contrib_bps),
            };
            let expires = now + slice;
            self.meta[x as usize].expires = expires;
            debug_assert!(self.expiries.back().is_none_or(|b| b.0 <= expires));
            self.expiries.push_back((expires, x));
            self.emit(now, x, kind);
        }
        self.scratch.scheduled = scheduled;
    }

    /// Node `y` may join A: registered, not yet scheduled in this run, and
    /// not sending for less than `min_active`.
    #[inline]
    fn eligible(&self, now: Time, y: u32) -> bool {
        let n = &self.nodes[y as usize];
        n.joined
            && !n.in_n
            && (n.dest.is_none() || now.saturating_since(n.active_since) >= self.cfg.min_active)
    }

    /// The traversal key of node `y`: its oldest waiting flow first, ties in
    /// round robin from `rr`.
    #[inline]
    fn key_of(&self, now: Time, y: u32, rr: u32) -> u128 {
        let r = if y >= rr {
            y - rr
        } else {
            y + (self.nodes.len() as u32 - rr)
        };
        key(self.nodes[y as usize].oldest_wait(now).0, r)
    }

    /// Mark `l` collected in this run; true if it was not yet.
    #[inline]
    fn mark_link(link_stamp: &mut [u32], stamp: u32, l: LinkId) -> bool {
        let s = &mut link_stamp[l as usize];
        let new = *s != stamp;
        *s = stamp;
        new
    }

    /// A := the eligible members of beta on the links freed by the triggers
    /// and on every path of the triggers' backlogs, walking those links.
    fn collect_by_links(&mut self, now: Time, triggers: &[u32], freed: &[LinkId], rr: u32, a: &mut Affected) {
        let mut links = std::mem::take(&mut self.scratch.links);
        links.clear();
        let stamp = self.stamp;
        for &l in freed {
            if Self::mark_link(&mut self.link_stamp, stamp, l) {
                links.push(l);
            }
        }
        for &t in triggers {
            for f in &self.nodes[t as usize].flows {
                for &l in self.topo.links(f.path) {
                    if Self::mark_link(&mut self.link_stamp, stamp, l) {
                        links.push(l);
                    }
                }
            }
        }
        for &l in &links {
            for i in 0..self.beta[l as usize].len() {
                let y = self.beta[l as usize][i].0;
                if self.a_stamp[y as usize] != stamp && self.eligible(now, y) {
                    self.a_stamp[y as usize] = stamp;
                    a.push_initial(self.key_of(now, y, rr));
                }
            }
        }
        self.scratch.links = links;
    }

    /// The same set as [`collect_by_links`](Self::collect_by_links), by one
    /// pass over the nodes. A node is in beta of a link iff one of its flows'
    /// paths crosses it; so a trigger with a routed flow is in A if eligible
    /// (its own paths are collected), and another node iff one of its paths
    /// crosses a freed link or a link whose beta holds a trigger.
    fn collect_by_nodes(&mut self, now: Time, triggers: &[u32], freed: &[LinkId], rr: u32, a: &mut Affected) {
        let stamp = self.stamp;
        for &t in triggers {
            self.trigger_stamp[t as usize] = stamp;
        }
        let mut freed_marked = false;
        let h = self.nodes.len() as u32;
        for i in 0..h {
            // in round-robin order, so the keys arrive nearly sorted
            let y = if rr + i >= h { rr + i - h } else { rr + i };
            let n = &self.nodes[y as usize];
            if n.flows.is_empty() || !self.eligible(now, y) {
                continue;
            }
            let member = if self.trigger_stamp[y as usize] == stamp {
                n.flows.iter().any(|f| !f.path.is_empty())
            } else {
                if !freed_marked {
                    for &l in freed {
                        self.link_stamp[l as usize] = stamp;
                    }
                    freed_marked = true;
                }
                let n = &self.nodes[y as usize];
                n.flows.iter().any(|f| {
                    self.topo.links(f.path).iter().any(|&l| {
                        self.link_stamp[l as usize] == stamp
                            || self.beta[l as usize]
                                .iter()
                                .any(|&(t, _)| self.trigger_stamp[t as usize] == stamp)
                    })
                })
            };
            if member {
                self.a_stamp[y as usize] = stamp;
                a.push_initial(key(self.nodes[y as usize].oldest_wait(now).0, i));
            }
        }
    }

    /// Add the eligible members of beta on `l` to A while the loop runs.
    fn affect_link(&mut self, now: Time, l: LinkId, rr: u32, a: &mut Affected) {
        let stamp = self.stamp;
        for i in 0..self.beta[l as usize].len() {
            let y = self.beta[l as usize][i].0;
            if self.a_stamp[y as usize] != stamp && self.eligible(now, y) {
                self.a_stamp[y as usize] = stamp;
                a.push(self.key_of(now, y, rr));
            }
        }
    }

    /// What x adds to alpha on `path`, bit/s: C_x, capped in the hybrid form
    /// by the tightest link of the path.
    #[inline]
    fn contribution(&self, x: u32, path: PathRef) -> u64 {
        let cx = self.topo.host_bps[x as usize];
        match self.cfg.mode {
            Mode::Hybrid => self
                .topo
                .links(path)
                .iter()
                .map(|&l| self.topo.link_bps[l as usize])
                .fold(cx, u64::min),
            _ => cx,
        }
    }

    /// F({x} ∪ alpha_ij, C_ij) for every link of `path`, x contributing `c`;
    /// a link reserved for another node's starving flow is full.
    #[inline]
    fn feasible(&self, x: u32, path: PathRef, c: u64) -> bool {
        let n = &self.nodes[x as usize];
        let own = self.topo.links(n.path);
        // the destination end first: that is where contention usually is
        self.topo.links(path).iter().rev().all(|&l| {
            let ls = &self.links[l as usize];
            if ls.held_by != NOBODY && ls.held_by != x {
                return false;
            }
            let mut free = ls.free_bps;
            if own.contains(&l) {
                free += n.contrib_bps; // x is already counted there
            }
            c <= free
        })
    }

    /// One step of the loop: give node `x` (just taken from A) its first
    /// feasible destination, oldest waiting first; reserve for its starving
    /// flow; preempt its old transmission.
    fn consider(&mut self, now: Time, x: u32, rr: u32, a: &mut Affected, scheduled: &mut Vec<u32>) {
        let xi = x as usize;
        self.a_stamp[xi] = 0;
        self.stats.nodes_considered += 1;
        let nb = self.nodes[xi].flows.len();
        if nb == 0 {
            return;
        }
        // destinations oldest waiting first (the one being sent to last),
        // ties in round robin from the pointer
        let mut order = std::mem::take(&mut self.scratch.order);
        order.clear();
        {
            let n = &self.nodes[xi];
            let rot = n.rot as usize;
            let start = if rot < nb { rot } else { rot % nb };
            for (j, f) in n.flows.iter().enumerate() {
                let w = if Some(f.dest) == n.dest {
                    Time::NEVER
                } else {
                    f.wait
                };
                let r = if j >= start { j - start } else { j + nb - start };
                order.push(key(w.0, r as u32));
            }
            order.sort_unstable();
            for k in order.iter_mut() {
                let r = rotated(*k) as usize + start;
                *k = if r >= nb { r - nb } else { r } as u128;
            }
        }
        // a flow that has waited more than two slices keeps its path for
        // itself: links it cannot get now are not handed to younger flows
        let starving = {
            let n = &self.nodes[xi];
            let f = n.flows[order[0] as usize];
            (Some(f.dest) != n.dest && now.saturating_since(f.wait) > self.cfg.slice.doubled())
                .then_some((f.dest, f.path, f.wait))
        };
        let mut chosen = None;
        for (i, &j) in order.iter().enumerate() {
            let f = self.nodes[xi].flows[j as usize];
            if f.path.is_empty() {
                continue;
            }
            let c = self.contribution(x, f.path);
            if self.feasible(x, f.path, c) {
                chosen = Some((f.dest, f.path, c, j as usize));
                if i == 0 {
                    self.nodes[xi].rot = (j + 1) as u32;
                }
                break;
            }
        }
        self.scratch.order = order;
        if let Some((sd, r, since)) = starving {
            if chosen.is_none_or(|(d, ..)| d != sd) {
                self.reserve(x, sd, r, since);
            }
        }
        let Some((d, path, c, j)) = chosen else { return };
        // preempt x's old transmission; capacity it frees affects more nodes
        let n = &self.nodes[xi];
        let (old_dest, old_path, old_c) = (n.dest, n.path, n.contrib_bps);
        for &l in self.topo.links(old_path) {
            let ls = &mut self.links[l as usize];
            ls.free_bps += old_c;
            ls.senders -= 1;
        }
        self.nodes[xi].in_n = true;
        for i in 0..self.topo.links(old_path).len() {
            let l = self.topo.links(old_path)[i];
            if !self.topo.links(path).contains(&l) {
                self.affect_link(now, l, rr, a);
            }
        }
        for &l in self.topo.links(path) {
            let ls = &mut self.links[l as usize];
            ls.free_bps -= c;
            ls.senders += 1;
            if ls.held_by == x && self.reservations[l as usize].dest == d {
                // served: the reservation ends (it holds, as x waited for d)
                ls.held_by = NOBODY;
                self.reservations[l as usize].owner = NOBODY;
            }
        }
        let n = &mut self.nodes[xi];
        if old_dest != Some(d) {
            n.active_since = now;
            // service of this flow begins: it is now the youngest of the
            // node's flows, behind every flow that waits since this instant
            let began = now + Dur(1);
            n.flows[j].wait = began;
            let served = &mut self.meta[xi].served;
            match served.iter_mut().find(|e| e.0 == d) {
                Some(e) => e.1 = began,
                None => {
                    if served.len() >= 64 {
                        let oldest = (0..served.len()).min_by_key(|&i| served[i].1).unwrap_or(0);
                        served.swap_remove(oldest);
                    }
                    served.push((d, began));
                }
            }
        }
        n.dest = Some(d);
        n.path = path;
        n.contrib_bps = c;
        if scheduled.is_empty() {
            self.rr = (x + 1) % self.nodes.len() as u32;
        }
        scheduled.push(x);
    }

    /// Reserve the path `r` of x's starving flow to `d` (age `since`); an
    /// older starving flow takes over a younger one's links.
    fn reserve(&mut self, x: u32, d: u32, r: PathRef, since: Time) {
        for &l in self.topo.links(r) {
            let l = l as usize;
            let holder = self.links[l].held_by;
            let take = holder == NOBODY || holder == x || {
                let res = &self.reservations[l];
                // (age, node) is a total order: one oldest flow, no standoff
                (since, x) < (res.since, res.owner)
            };
            if take {
                self.links[l].held_by = x;
                self.reservations[l] = Reservation {
                    owner: x,
                    dest: d,
                    since,
                };
            }
        }
    }
}
