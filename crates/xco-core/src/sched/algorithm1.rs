//! Algorithm 1 of the XCo spec (timeslice and hybrid forms): collect the
//! affected set A, then give each of its nodes, oldest waiting first, the
//! first destination whose path is feasible, preempting and reserving as the
//! scheduler's module documentation describes.
//!
//! Speed matters here: at a slot boundary every slice expires together and
//! one run considers every backlogged host. So A is collected by one pass
//! over the nodes when the triggers are many (instead of walking every
//! contention group) and sorted once rather than kept in a heap; a node's
//! destinations are not sorted at all, but checked in one pass (see
//! [`Scheduler::choose`]). Such a run costs mostly mispredicted branches
//! (whether a path is free is close to a coin toss) and waiting for node
//! and link records, so the feasibility check (one for every node: a
//! sender's own contribution is withdrawn while its flows are checked)
//! and reserving walk every link of the short path without a branch on
//! what the links hold, rather than leaving early; granting and reserving,
//! rarer than checking, are out of line; no run allocates. A path kept in
//! its flow record is padded to six links with a sentinel link that always
//! fits, so its check is a loop of fixed length. The traversal order is
//! known once A is sorted, so the loop asks for the records of the nodes a
//! few places ahead, and for their links a little later, before it needs
//! them: it would otherwise wait on the cache for most of them.

use super::affected::{key, rotated, Affected};
use super::directive::DirectiveKind;
use super::drain::Drain;
use super::scheduler::{Mode, Scheduler};
use super::state::{Flow, Reservation, HISTORY, NOBODY, NOT_SERVED};
use super::topology::LinkId;
use crate::time::{Dur, Time};

/// What considering one node decides.
struct Choice {
    /// Grant this flow (index, contribution in bit/s, first in order).
    grant: Option<(usize, u64, bool)>,
    /// This starving flow reserves its path.
    reserve: Option<usize>,
}

/// Collect A by one pass over all nodes when there are at least
/// `nodes / NODE_SCAN_RATIO` triggers (fewer: walk the contention groups of
/// the links they touch). Either way A is the same set.
const NODE_SCAN_RATIO: usize = 8;

/// How many places ahead in A the loop asks for a node's record, and for
/// the link records of its flows' paths (read from the record asked for
/// earlier).
const PREFETCH_NODES: usize = 8;
const PREFETCH_LINKS: usize = 4;

/// Ask for the cache lines of `v` ahead of use.
#[inline(always)]
pub(super) fn prefetch<T>(v: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = v as *const T as *const i8;
        for off in (0..std::mem::size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch is a hint: it never faults and changes no
            // state the program sees; SSE is part of every x86-64 target
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
        }
    }
}

impl Scheduler {
    /// Algorithm 1 for the trigger nodes (already released from alpha, with
    /// their give-backs applied), whose transmissions freed `freed` (with
    /// the links of drains that ended: then perhaps without triggers); if
    /// `waiting`, every registered host with backlog and no slice is a
    /// trigger too (found by the pass that collects A, not listed).
    pub(super) fn algorithm1(&mut self, now: Time, triggers: &[u32], freed: &[LinkId], waiting: bool) {
        self.stamp = self.stamp.wrapping_add(1).max(1);
        // round robin: this event's traversal starts after the node that was
        // served first by the previous one
        let h = self.nodes.len() as u32;
        let rr = self.rr % h.max(1);
        let mut a = std::mem::take(&mut self.scratch.affected);
        a.clear();
        let any_waiting = if waiting || triggers.len() * NODE_SCAN_RATIO >= self.nodes.len() {
            self.collect_by_nodes(now, triggers, freed, waiting, rr, &mut a)
        } else {
            self.collect_by_links(now, triggers, freed, rr, &mut a);
            false
        };
        if triggers.is_empty() && freed.is_empty() && !any_waiting {
            // nothing happened: not a scheduling event (A is empty)
            self.scratch.affected = a;
            return;
        }
        self.stats.events += 1;
        a.seal();
        let mut scheduled = std::mem::take(&mut self.scratch.scheduled);
        scheduled.clear();
        // the node of a key: its index counted from the round-robin start, unrotated
        let node = |k| {
            let r = rotated(k);
            if r >= h - rr {
                r - (h - rr)
            } else {
                r + rr
            }
        };
        while let Some(k) = a.pop() {
            if let Some(kf) = a.initial_ahead(PREFETCH_NODES) {
                prefetch(&self.nodes[node(kf) as usize]);
            }
            if let Some(kf) = a.initial_ahead(PREFETCH_LINKS) {
                for f in self.nodes[node(kf) as usize].flows.iter() {
                    if let Some(p) = f.padded_links() {
                        for &l in p {
                            self.links.prefetch(l);
                        }
                    }
                }
            }
            self.consider(now, node(k), rr, &mut a, &mut scheduled);
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
            n.expires = expires;
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
            for f in self.nodes[t as usize].flows.iter() {
                for &l in f.links(&self.topo) {
                    if Self::mark_link(&mut self.link_stamp, stamp, l) {
                        links.push(l);
                    }
                }
            }
        }
        // the contention groups are scattered in memory: ask for all of
        // them (the vectors, then their members) before reading any
        for &l in &links {
            prefetch(&self.beta[l as usize]);
        }
        for &l in &links {
            if let Some(first) = self.beta[l as usize].first() {
                prefetch(first);
            }
        }
        // the members, each once, their records asked for; then the eligible ones join A
        let mut cand = std::mem::take(&mut self.scratch.candidates);
        cand.clear();
        for &l in &links {
            for &(y, _) in &self.beta[l as usize] {
                if self.a_stamp[y as usize] != stamp {
                    self.a_stamp[y as usize] = stamp;
                    prefetch(&self.nodes[y as usize]);
                    cand.push(y);
                }
            }
        }
        for &y in &cand {
            if self.eligible(now, y) {
                a.push_initial(self.key_of(now, y, rr));
            } else {
                self.a_stamp[y as usize] = 0;
            }
        }
        self.scratch.candidates = cand;
        self.scratch.links = links;
    }

    /// The same set as [`collect_by_links`](Self::collect_by_links), by one
    /// pass over the nodes. A node is in beta of a link iff one of its flows'
    /// paths crosses it; so a trigger with a routed flow is in A if eligible
    /// (its own paths are collected), and another node iff one of its paths
    /// crosses a freed link or a link whose beta holds a trigger. If
    /// `waiting`, a host with backlog and no slice is a trigger too; true
    /// if there was such a host.
    fn collect_by_nodes(
        &mut self,
        now: Time,
        triggers: &[u32],
        freed: &[LinkId],
        waiting: bool,
        rr: u32,
        a: &mut Affected,
    ) -> bool {
        let stamp = self.stamp;
        let mut any_waiting = false;
        // a host with backlog in beta is registered, so a member t of beta
        // waits iff it has no slice
        let is_trigger = |s: &Scheduler, t: u32| {
            s.trigger_stamp[t as usize] == stamp || (waiting && s.nodes[t as usize].dest.is_none())
        };
        for &t in triggers {
            self.trigger_stamp[t as usize] = stamp;
        }
        let mut freed_marked = false;
        let h = self.nodes.len() as u32;
        for i in 0..h {
            // in round-robin order, so the keys arrive nearly sorted
            let y = if rr + i >= h { rr + i - h } else { rr + i };
            let n = &self.nodes[y as usize];
            let flows: &[Flow] = &n.flows;
            if flows.is_empty() {
                continue;
            }
            let waits = waiting && n.joined && n.dest.is_none();
            any_waiting |= waits;
            if !self.eligible(now, y) {
                continue;
            }
            // the age key (as `Node::oldest_wait`) and whether any flow has a path, in one pass
            let (mut oldest, mut any_other, mut routed) = (Time::NEVER, false, false);
            for f in flows {
                routed |= f.routed();
                if Some(f.dest) != n.dest {
                    any_other = true;
                    oldest = oldest.min(f.wait);
                }
            }
            let member = if waits || self.trigger_stamp[y as usize] == stamp {
                routed
            } else {
                if !freed_marked {
                    for &l in freed {
                        self.link_stamp[l as usize] = stamp;
                    }
                    freed_marked = true;
                }
                let n = &self.nodes[y as usize];
                // from the destination end: a trigger wanting the same destination is the likely find
                n.flows.iter().any(|f| {
                    f.links(&self.topo).iter().rev().any(|&l| {
                        self.link_stamp[l as usize] == stamp
                            || self.beta[l as usize].iter().any(|&(t, _)| is_trigger(self, t))
                    })
                })
            };
            if member {
                self.a_stamp[y as usize] = stamp;
                a.push_initial(key(if any_other { oldest } else { now }.0, i));
            }
        }
        any_waiting
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

    /// One step of the loop: give node `x` (just taken from A) its first
    /// feasible destination, oldest waiting first; reserve for its starving
    /// flow; preempt its old transmission.
    fn consider(&mut self, now: Time, x: u32, rr: u32, a: &mut Affected, scheduled: &mut Vec<u32>) {
        let xi = x as usize;
        self.a_stamp[xi] = 0;
        self.stats.nodes_considered += 1;
        // a sender is checked as if it sent nowhere: its own links count
        // without its contribution while its flows are checked
        let own = self.nodes[xi]
            .dest
            .map(|d| (self.flow_to(x, d), self.nodes[xi].contrib_bps));
        if let Some((f, own_bps)) = &own {
            for &l in f.links(&self.topo) {
                self.links.withdraw(l, *own_bps);
            }
        }
        let c = self.choose(now, x);
        if let Some((f, own_bps)) = &own {
            for &l in f.links(&self.topo) {
                self.links.admit(l, *own_bps);
            }
        }
        if let Some(j0) = c.reserve {
            let f = self.nodes[xi].flows[j0];
            self.reserve(x, &f);
        }
        if let Some((j, bps, first)) = c.grant {
            if first {
                self.nodes[xi].rot = (j + 1) as u32;
            }
            self.grant(now, x, j, bps, rr, a, scheduled);
        }
    }

    /// What considering node `x` decides (reading only): the first feasible
    /// of its flows in destination order, and whether its oldest flow,
    /// starving and not chosen, reserves its path (if it can never fit,
    /// another flow may: see [`reserving`](Self::reserving)).
    ///
    /// The order is by age (the flow x sends on last), ties in round robin
    /// from the pointer. Link state does not change while x's own flows are
    /// checked, so the first feasible flow in that order is the feasible
    /// flow with the smallest key: no sort. One pass checks every flow (most
    /// nodes considered at a slot boundary get none, so every flow is
    /// checked anyway) and keeps the smallest key and the smallest feasible
    /// one without branching on either.
    #[inline]
    fn choose(&self, now: Time, x: u32) -> Choice {
        let n = &self.nodes[x as usize];
        let flows: &[Flow] = &n.flows;
        let nb = flows.len();
        let mut choice = Choice {
            grant: None,
            reserve: None,
        };
        if nb == 0 {
            return choice;
        }
        let rot = n.rot as usize;
        let start = if rot < nb { rot } else { rot % nb };
        let cx = self.topo.host_bps[x as usize];
        let hybrid = self.cfg.mode == Mode::Hybrid;
        // the oldest flow (j0, age w0) and the oldest feasible one (jg, wg),
        // contributing cg; the flows are visited in rotated order from the
        // pointer and only a strictly older flow replaces, so ties go to the
        // first in that order; the flow x sends on is the youngest
        let (mut j0, mut w0) = (start, u64::MAX);
        let (mut jg, mut wg, mut cg) = (usize::MAX, u64::MAX, 0);
        let mut j = start;
        for _ in 0..nb {
            let f = &flows[j];
            let w = if Some(f.dest) == n.dest {
                u64::MAX
            } else {
                f.wait.0
            };
            let older = w < w0;
            j0 = if older { j } else { j0 };
            w0 = if older { w } else { w0 };
            // what x adds to alpha on the path: C_x, in the hybrid form at
            // most the path's tightest link
            let c = if hybrid {
                f.links(&self.topo)
                    .iter()
                    .map(|&l| self.topo.link_bps[l as usize])
                    .fold(cx, u64::min)
            } else {
                cx
            };
            // two calls, so the one on the padded array is of fixed length
            let fits = match f.padded_links() {
                Some(p) => self.links.fits(p, x, c),
                None => self.links.fits(f.links(&self.topo), x, c),
            };
            let take = f.routed() & ((w < wg) | (jg == usize::MAX)) & fits;
            jg = if take { j } else { jg };
            wg = if take { w } else { wg };
            cg = if take { c } else { cg };
            j += 1;
            if j == nb {
                j = 0;
            }
        }
        if jg != usize::MAX {
            choice.grant = Some((jg, cg, jg == j0));
        }
        // a flow that has waited more than two slices keeps its path for
        // itself: links it cannot get now are not handed to younger flows
        let f0 = &flows[j0];
        if Some(f0.dest) != n.dest && now.saturating_since(f0.wait) > self.cfg.slice.doubled() && jg != j0 {
            // a host no faster than the slowest link fits any path (on a
            // loaded network most nodes considered get here); else see
            // whether the flow can ever fit, out of line
            choice.reserve = if cx <= self.slowest_link_bps && f0.routed() {
                Some(j0)
            } else {
                self.reserving(now, x, start, j0, jg)
            };
        }
        choice
    }

    /// Which flow of node `x` reserves, its oldest flow `j0` starving and
    /// not chosen (`jg` is): `j0` if it fits its path on an idle network;
    /// else (rare) the oldest flow that does, if it starves and is not
    /// chosen. A flow that can never fit is never served: holding links
    /// for it would idle them for ever, and it must not keep the node's
    /// other flows from reserving. Ties as in [`choose`](Self::choose):
    /// the first in rotated order from `start`.
    #[inline(never)]
    fn reserving(&self, now: Time, x: u32, start: usize, j0: usize, jg: usize) -> Option<usize> {
        let n = &self.nodes[x as usize];
        let flows: &[Flow] = &n.flows;
        if self.fits_idle(x, &flows[j0]) {
            return Some(j0);
        }
        let nb = flows.len();
        let mut oldest: Option<usize> = None;
        for i in 0..nb {
            let j = (start + i) % nb;
            let f = &flows[j];
            if Some(f.dest) != n.dest && self.fits_idle(x, f) && oldest.is_none_or(|o| f.wait < flows[o].wait)
            {
                oldest = Some(j);
            }
        }
        oldest.filter(|&j| j != jg && now.saturating_since(flows[j].wait) > self.cfg.slice.doubled())
    }

    /// True if node `x`'s flow `f` fits its path on an idle network: it has
    /// a path, and no link of it is slower than what x adds to alpha there
    /// (C_x; in the hybrid form at most the path's tightest link, so
    /// always). A timeslice sender faster than a link of its path never fits.
    fn fits_idle(&self, x: u32, f: &Flow) -> bool {
        let links = f.links(&self.topo);
        let cx = self.topo.host_bps[x as usize];
        let c = if self.cfg.mode == Mode::Hybrid {
            links
                .iter()
                .map(|&l| self.topo.link_bps[l as usize])
                .fold(cx, u64::min)
        } else {
            cx
        };
        f.routed() && links.iter().all(|&l| c <= self.topo.link_bps[l as usize])
    }

    /// Give node `x` its flow `j` (contributing `c`): preempt its old
    /// transmission, admit the new one, start the flow's service, and add x
    /// to N. The links the old transmission leaves drain until its slice's
    /// end (see `drain`): they stay admitted and affect more nodes when
    /// the drain ends; a slice already over frees them at once, and the
    /// capacity affects more nodes now, as the spec's loop says.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn grant(
        &mut self,
        now: Time,
        x: u32,
        j: usize,
        c: u64,
        rr: u32,
        a: &mut Affected,
        scheduled: &mut Vec<u32>,
    ) {
        let xi = x as usize;
        let f = self.nodes[xi].flows[j];
        let d = f.dest;
        let old = self.nodes[xi].dest.map(|d| self.flow_to(x, d));
        let old_c = self.nodes[xi].contrib_bps;
        let old_dest = self.nodes[xi].dest;
        self.nodes[xi].in_n = true;
        if let Some(o) = &old {
            let end = self.nodes[xi].expires;
            let drains = end > now;
            let mut left = false;
            for i in 0..o.links(&self.topo).len() {
                let l = o.links(&self.topo)[i];
                let kept = f.links(&self.topo).contains(&l);
                left |= !kept;
                if kept || !drains {
                    self.links.withdraw(l, old_c);
                }
                if !kept && !drains {
                    self.affect_link(now, l, rr, a);
                }
            }
            if left && drains {
                self.drains.push(Drain {
                    end,
                    node: x,
                    contrib_bps: old_c,
                    old: *o,
                    new: f,
                });
            }
        }
        for &l in f.links(&self.topo) {
            self.links.admit(l, c);
            if self.links.held_by(l) == x && self.links.res(l).dest == d {
                // served: the reservation ends (it holds, as x waited for d)
                self.links.clear(l);
            }
        }
        let n = &mut self.nodes[xi];
        n.dest = Some(d);
        n.contrib_bps = c;
        if old_dest != Some(d) {
            n.active_since = now;
            // service of this flow begins: it is now the youngest of the
            // node's flows, behind every flow that waits since this instant
            let began = now + Dur(1);
            n.flows[j].wait = began; // its history entry, if any, is this wait
            if n.flows[j].history == NOT_SERVED {
                self.remember(x, j, began);
            }
        }
        if scheduled.is_empty() {
            self.rr = (x + 1) % self.nodes.len() as u32;
        }
        scheduled.push(x);
    }

    /// Enter the service of x's flow `j` (not in the history) beginning at
    /// `began` into x's service history, forgetting the oldest entry when full.
    fn remember(&mut self, x: u32, j: usize, began: Time) {
        let flows = &mut self.nodes[x as usize].flows;
        let served = &mut self.meta[x as usize].served;
        if served.len() >= HISTORY {
            // an entry's time: the wait of the backlogged flow it belongs to, else its own
            let mut time = [Time::ZERO; HISTORY];
            for (t, e) in time.iter_mut().zip(served.iter()) {
                *t = e.1;
            }
            for f in flows.iter().filter(|f| f.history != NOT_SERVED) {
                time[f.history as usize] = f.wait;
            }
            let mut oldest = 0;
            for i in 1..served.len() {
                if time[i] < time[oldest] {
                    oldest = i;
                }
            }
            let last = served.len() - 1;
            served.swap_remove(oldest);
            for f in flows.iter_mut() {
                if f.history as usize == oldest {
                    f.history = NOT_SERVED;
                } else if f.history as usize == last {
                    f.history = oldest as u8;
                }
            }
        }
        served.push((flows[j].dest, began));
        flows[j].history = (served.len() - 1) as u8;
    }

    /// True if a link of the path of x's flow `f` is held by an older
    /// starving flow: `f` cannot be served before that flow.
    pub(super) fn behind_older(&self, x: u32, f: &Flow) -> bool {
        f.links(&self.topo).iter().any(|&l| {
            // a live reservation names its holder (`res.owner == held_by`)
            let (held, r) = (self.links.held_by(l), self.links.res(l));
            let older = (r.since < f.wait) | ((r.since == f.wait) & (r.owner < x));
            (held != NOBODY) & (held != x) & older
        })
    }

    /// Reserve the path of x's starving flow `f`. If `f` is behind an older
    /// flow it reserves nothing (it cannot be served first, and holding its
    /// other links would only idle them); otherwise it takes its whole
    /// path: each link is free, x's own (perhaps for another of its flows:
    /// this one takes it over) or held by a younger flow, which then gives
    /// up all of its path. (age, node) is a total order, so the oldest
    /// starving flow is never behind: it holds its whole path and
    /// progresses.
    #[inline(never)]
    fn reserve(&mut self, x: u32, f: &Flow) {
        if self.behind_older(x, f) {
            return;
        }
        let res = Reservation {
            owner: x,
            dest: f.dest,
            since: f.wait,
        };
        let mut displaced = std::mem::take(&mut self.scratch.displaced);
        displaced.clear();
        for &l in f.links(&self.topo) {
            let held = self.links.held_by(l);
            if held != NOBODY && held != x {
                displaced.push((held, self.links.res(l).dest));
            }
            self.links.reserve(l, res);
        }
        // a younger flow that lost links to f is behind f now
        for &(y, dy) in &displaced {
            if let Some(g) = self.nodes[y as usize].flows.iter().find(|g| g.dest == dy) {
                for &l in g.links(&self.topo) {
                    if self.links.res(l).of(y, dy) {
                        self.links.clear(l);
                    }
                }
            }
        }
        self.scratch.displaced = displaced;
    }
}

#[cfg(test)]
mod tests {
    use super::super::scheduler::SchedConfig;
    use super::super::topology::{BfsPaths, SchedTopology};
    use super::*;

    const G: u64 = 1_000_000_000;

    /// Hosts 0, 1, 2 on switch 6 and hosts 3, 4, 5 on switch 7, one trunk
    /// between the switches, 1 Gb/s everywhere. A = 0 -> 3 and B = 1 -> 4
    /// share the trunk; B and C = 5 -> 4 share the downlink to 4, which A
    /// does not cross. A has waited longest, then B; both starve.
    fn abc() -> (Scheduler, [u32; 3], Time) {
        let mut cables = vec![(6, 7)];
        cables.extend((0..3).map(|h| (h, 6)).chain((3..6).map(|h| (h, 7))));
        let links: Vec<(u32, u32)> = cables.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
        let is_host = (0..8).map(|v| v < 6).collect();
        let topo = SchedTopology::new(
            vec![G; 6],
            vec![G; links.len()],
            Box::new(BfsPaths::new(8, is_host, &links)),
        );
        let mut s = Scheduler::new(topo, SchedConfig::default());
        s.set_backlog(Time::ZERO, 0, &[3]);
        s.set_backlog(Time::ZERO, 1, &[4]);
        s.nodes[1].flows[0].wait = Time(Dur::from_us(1).ps());
        for x in [0, 1] {
            s.nodes[x].joined = true;
        }
        let (trunk, down3) = (s.path(0, 3)[1], s.path(0, 3)[2]);
        let down4 = s.path(1, 4)[2];
        assert_eq!(s.path(1, 4)[1], trunk);
        assert_eq!(s.path(5, 4), vec![s.path(5, 4)[0], down4]);
        (s, [trunk, down3, down4], Time(Dur::from_ms(10).ps()))
    }

    #[test]
    fn a_flow_behind_an_older_reservation_reserves_nothing() {
        let (mut s, [trunk, down3, down4], now) = abc();
        let (fa, fb) = (s.nodes[0].flows[0], s.nodes[1].flows[0]);
        s.reserve(0, &fa);
        assert_eq!(s.reservation(trunk).map(|r| r.0), Some(0));
        assert_eq!(s.reservation(down3).map(|r| r.0), Some(0));
        // B cannot be served before A: holding the downlink to 4 would only idle it
        s.reserve(1, &fb);
        assert_eq!(s.reservation(trunk).map(|r| r.0), Some(0));
        assert_eq!(s.reservation(down4), None);
        // so C, younger than both, is served there at once
        s.handle_backlog(now, 5, &[4]);
        assert_eq!(s.dest(5), Some(4));
        assert_eq!(s.dest(1), None, "B is still behind A on the trunk");
    }

    #[test]
    fn an_older_flow_takes_over_and_the_younger_gives_up_its_whole_path() {
        let (mut s, [trunk, _, down4], now) = abc();
        let (fa, fb) = (s.nodes[0].flows[0], s.nodes[1].flows[0]);
        s.reserve(1, &fb);
        assert_eq!(s.reservation(trunk).map(|r| r.0), Some(1));
        assert_eq!(s.reservation(down4).map(|r| r.0), Some(1));
        s.reserve(0, &fa);
        assert_eq!(s.reservation(trunk).map(|r| r.0), Some(0));
        assert_eq!(s.reservation(down4), None, "B released the links A did not need");
        s.handle_backlog(now, 5, &[4]);
        assert_eq!(s.dest(5), Some(4));
    }

    #[test]
    fn a_flow_that_returns_behind_an_older_reservation_does_not_hold_again() {
        let (mut s, [trunk, _, down4], now) = abc();
        let (fa, fb) = (s.nodes[0].flows[0], s.nodes[1].flows[0]);
        s.reserve(1, &fb);
        // B leaves the backlog (its reservation lapses), A reserves, B returns
        s.set_backlog(now, 1, &[]);
        assert_eq!(s.reservation(down4), None);
        s.reserve(0, &fa);
        s.set_backlog(now, 1, &[4]);
        assert_eq!(s.reservation(trunk).map(|r| r.0), Some(0));
        assert_eq!(
            s.reservation(down4),
            None,
            "B is behind A: its old hold would idle the link"
        );
        // without A's reservation it would have held again
        let (mut s, [_, _, down4], now) = abc();
        let fb = s.nodes[1].flows[0];
        s.reserve(1, &fb);
        s.set_backlog(now, 1, &[]);
        s.set_backlog(now, 1, &[4]);
        assert_eq!(s.reservation(down4).map(|r| r.0), Some(1));
    }
}
