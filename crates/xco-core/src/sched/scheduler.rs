//! The XCo controller's scheduling logic, free of I/O and clocks.
//!
//! Input is pushed with `handle_*(now, ...)`; output is pulled with
//! [`Scheduler::poll_directive`] (call until `None` after every `handle_*`)
//! and [`Scheduler::poll_timeout`] (the next instant [`Scheduler::handle_timeout`]
//! must be called). The simulator calls it with virtual time, the controller
//! daemon from a runtime timer: both get the same decisions.
//!
//! Timeslice scheduling is Algorithm 1 of the XCo spec, with the parts the
//! paper omits "for clarity": the traversal order of nodes and of each node's
//! destinations changes from event to event — least recently served V2V flow
//! first: nodes in order of their flow whose last slice began longest ago (or
//! that was never served), each node's destinations in that order too (ties
//! in round robin) — so no schedule repeats
//! forever; and a flow that has waited more than two slices reserves the links
//! of its path against younger flows until it is served (an older starving
//! flow takes over a younger one's reservations, so the oldest always
//! progresses), so no V2V flow starves even where its path crosses links that
//! other senders keep busy at unrelated times; an affected node that is already sending is preempted in
//! favour of the newly computed destination, nodes active for less than
//! `min_active` are not disturbed, and a node leaves the affected set once
//! considered and never re-enters once scheduled (the loop terminates).

use super::directive::{Directive, DirectiveKind};
use super::topology::{LinkId, PathRef, SchedTopology};
use crate::time::{Dur, Time};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

/// The directive form the controller issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One destination per slice at full line rate (the paper's main form).
    Timeslice,
    /// Per V2V flow rates: the tightest link on the path shared equally by its senders.
    RateLimit,
    /// Timeslices with a rate inside the slice: a host faster than a
    /// bottleneck on its path is scheduled at the bottleneck's rate.
    Hybrid,
}

/// Scheduler settings.
#[derive(Clone, Debug)]
pub struct SchedConfig {
    /// Directive form.
    pub mode: Mode,
    /// Timeslice length (1–10 ms in the paper); also the refresh period of rates.
    pub slice: Dur,
    /// Nodes active for less than this are not preempted.
    pub min_active: Dur,
    /// A host whose feedback stops for this long is dropped (`None`: never).
    pub feedback_timeout: Option<Dur>,
}

impl Default for SchedConfig {
    fn default() -> SchedConfig {
        SchedConfig {
            mode: Mode::Timeslice,
            slice: Dur::from_ms(2),
            min_active: Dur::from_us(200),
            feedback_timeout: None,
        }
    }
}

/// Counters for metrics.
#[derive(Clone, Debug, Default)]
pub struct SchedStats {
    /// Scheduling events handled (runs of Algorithm 1 or rate recomputations).
    pub events: u64,
    /// Directives issued.
    pub directives: u64,
    /// Nodes considered inside Algorithm 1, summed over events.
    pub nodes_considered: u64,
    /// Hosts dropped for missing feedback.
    pub hosts_timed_out: u64,
}

#[derive(Clone, Debug, Default)]
struct Node {
    joined: bool,
    /// B_x, sorted.
    backlog: Vec<u32>,
    /// P_xd of each destination in `backlog`.
    bpaths: Vec<PathRef>,
    /// Age of each V2V flow in `backlog`: when its last slice began, or when
    /// it became backlogged if it was never served.
    bwait: Vec<Time>,
    /// When service of each destination last began (kept across give-backs
    /// and re-reports; the oldest entries are forgotten beyond 64).
    served: Vec<(u32, Time)>,
    /// D_x.
    dest: Option<u32>,
    /// P_{x,D_x}.
    path: PathRef,
    /// What x adds to alpha on its path, bit/s.
    contrib_bps: u64,
    active_since: Time,
    expires: Time,
    rot: u32,
    last_feedback: Time,
    last_directive: Time,
    epoch: u64,
    rates: Vec<(u32, u64)>,
}

/// The controller's scheduler. See the module documentation.
pub struct Scheduler {
    cfg: SchedConfig,
    topo: SchedTopology,
    nodes: Vec<Node>,
    /// beta: per link, hosts with a backlogged destination through it (and how
    /// many). Small vectors: a link's group averages a few hosts, and
    /// Algorithm 1 mostly iterates them.
    beta: Vec<Vec<(u32, u32)>>,
    /// Per link, packed for the feasibility check: capacity, alpha's admitted
    /// load and senders, and the node holding a reservation (if any).
    links: Vec<LinkState>,
    rr: u32,
    /// (expiry, node) in expiry order: every slice has the same length and
    /// slices are granted in time order, so a FIFO keeps them sorted.
    expiries: VecDeque<(Time, u32)>,
    next_tick: Time,
    out: VecDeque<Directive>,
    stats: SchedStats,
    in_n: Vec<bool>,
    /// Membership of the affected set A: `a_stamp[y] == stamp` while y is in A.
    a_stamp: Vec<u32>,
    /// Links already collected in this event: `link_stamp[l] == stamp`.
    link_stamp: Vec<u32>,
    /// Per link: the destination and age of the reserving flow (valid while
    /// `links[l].reserved_by` names a node).
    reservations: Vec<(u32, Time)>,
    /// Scratch for a node's destination order.
    order_scratch: Vec<usize>,
    /// The affected set A (oldest waiting first, then round robin), kept
    /// between events to reuse its memory.
    a_heap: BinaryHeap<Reverse<(Time, u32, u32)>>,
    stamp: u32,
}

impl Scheduler {
    /// A scheduler for `topo`; hosts join with [`handle_join`](Self::handle_join)
    /// or implicitly with their first backlog report.
    pub fn new(topo: SchedTopology, cfg: SchedConfig) -> Scheduler {
        let h = topo.hosts();
        let l = topo.link_bps.len();
        Scheduler {
            cfg,
            nodes: vec![Node::default(); h],
            beta: vec![Vec::new(); l],
            links: topo
                .link_bps
                .iter()
                .map(|&cap| LinkState {
                    cap_bps: cap,
                    load_bps: 0,
                    senders: 0,
                    reserved_by: NOBODY,
                })
                .collect(),
            rr: 0,
            expiries: VecDeque::new(),
            next_tick: Time::NEVER,
            out: VecDeque::new(),
            stats: SchedStats::default(),
            in_n: vec![false; h],
            a_stamp: vec![0; h],
            link_stamp: vec![0; l],
            reservations: vec![(0, Time::ZERO); l],
            a_heap: BinaryHeap::new(),
            order_scratch: Vec::new(),
            stamp: 0,
            topo,
        }
    }

    /// Settings.
    pub fn config(&self) -> &SchedConfig {
        &self.cfg
    }

    /// Counters.
    pub fn stats(&self) -> &SchedStats {
        &self.stats
    }

    /// Capacity admitted on link `l` now, bit/s (sum over its active senders).
    pub fn admitted_bps(&self, l: LinkId) -> u64 {
        self.links[l as usize].load_bps
    }

    /// Senders currently admitted on link `l`.
    pub fn active_senders(&self, l: LinkId) -> u32 {
        self.links[l as usize].senders
    }

    /// Capacity of link `l`, bit/s.
    pub fn link_bps(&self, l: LinkId) -> u64 {
        self.links[l as usize].cap_bps
    }

    /// Number of links.
    pub fn links(&self) -> usize {
        self.links.len()
    }

    /// D_x: where host `x` may send now.
    pub fn dest(&self, x: u32) -> Option<u32> {
        self.nodes[x as usize].dest
    }

    /// B_x: the destinations host `x` has reported backlogged.
    pub fn backlog(&self, x: u32) -> &[u32] {
        &self.nodes[x as usize].backlog
    }

    /// True if host `x` is registered.
    pub fn joined(&self, x: u32) -> bool {
        self.nodes[x as usize].joined
    }

    /// P_sd as the scheduler sees it.
    pub fn path(&mut self, s: u32, d: u32) -> Vec<LinkId> {
        self.topo.path(s, d).to_vec()
    }

    // ------------------------------------------------------------------
    // input

    /// Host `x` registers (again: after a controller restart its soft state is rebuilt from reports).
    pub fn handle_join(&mut self, now: Time, x: u32) {
        let n = &mut self.nodes[x as usize];
        n.joined = true;
        n.last_feedback = now;
        if self.next_tick == Time::NEVER {
            self.next_tick = now + self.cfg.slice;
        }
    }

    /// Host `x` is alive (periodic feedback).
    pub fn handle_feedback(&mut self, now: Time, x: u32) {
        if !self.nodes[x as usize].joined {
            self.handle_join(now, x);
        }
        self.nodes[x as usize].last_feedback = now;
    }

    /// Host `x` leaves: its flows are no longer scheduled.
    pub fn handle_leave(&mut self, now: Time, x: u32) {
        if !self.nodes[x as usize].joined {
            return;
        }
        let freed = self.release(x);
        self.set_backlog(now, x, &[]);
        self.nodes[x as usize].joined = false;
        self.after_change(now, &[x], &freed);
    }

    /// Host `x` reports B_x, the destinations it has backlogged traffic for.
    ///
    /// Per the spec a report that turns an empty backlog non-empty is a
    /// scheduling event; other reports update B_x and the contention groups.
    pub fn handle_backlog(&mut self, now: Time, x: u32, dests: &[u32]) {
        if !self.nodes[x as usize].joined {
            self.handle_join(now, x);
        }
        self.nodes[x as usize].last_feedback = now;
        let mut want: Vec<u32> = dests
            .iter()
            .copied()
            .filter(|&d| d != x && (d as usize) < self.nodes.len())
            .collect();
        // a host holding a slice keeps its destination until it gives the
        // slice back or the slice ends (a report may catch its queue empty)
        if let Some(d) = self.nodes[x as usize].dest {
            want.push(d);
        }
        want.sort_unstable();
        want.dedup();
        let was_empty = self.nodes[x as usize].backlog.is_empty();
        if want == self.nodes[x as usize].backlog {
            return;
        }
        self.set_backlog(now, x, &want);
        match self.cfg.mode {
            Mode::RateLimit => self.recompute_rates(now, &[x]),
            _ => {
                if was_empty && !want.is_empty() {
                    self.algorithm1(now, &[x], &[]); // event 3
                }
            }
        }
    }

    /// Host `x` gives back the rest of its slice to `dest` (work conservation, event 2).
    pub fn handle_giveback(&mut self, now: Time, x: u32, dest: u32) {
        self.nodes[x as usize].last_feedback = now;
        if self.nodes[x as usize].dest != Some(dest) {
            return; // stale: that slice already ended
        }
        let freed = self.release(x);
        let rest: Vec<u32> = self.nodes[x as usize]
            .backlog
            .iter()
            .copied()
            .filter(|&d| d != dest)
            .collect();
        self.set_backlog(now, x, &rest);
        self.algorithm1(now, &[x], &freed);
    }

    /// Handle everything due at `now`: slice expiries (event 1), the periodic
    /// tick (keep-alive directives, rate refresh), feedback timeouts.
    pub fn handle_timeout(&mut self, now: Time) {
        // feedback timeouts
        if let Some(limit) = self.cfg.feedback_timeout {
            let dead: Vec<u32> = (0..self.nodes.len() as u32)
                .filter(|&x| {
                    let n = &self.nodes[x as usize];
                    n.joined && now.saturating_since(n.last_feedback) > limit
                })
                .collect();
            for x in dead {
                self.stats.hosts_timed_out += 1;
                self.handle_leave(now, x);
            }
        }
        // slice expiries that fall due together are one event whose triggers are all of them
        let mut triggers = Vec::new();
        let mut freed = Vec::new();
        while let Some(&(t, x)) = self.expiries.front() {
            if t > now {
                break;
            }
            self.expiries.pop_front();
            let n = &self.nodes[x as usize];
            if n.dest.is_some() && n.expires == t {
                freed.extend(self.release(x));
                triggers.push(x);
            }
        }
        let tick = now >= self.next_tick;
        if tick && self.cfg.mode != Mode::RateLimit {
            // every slice, hosts that wait with backlog are triggers too: the
            // schedule moves on even when no slice ends (e.g. after
            // reservations held links idle); one run together with the expiries
            let mut is_trigger = vec![false; self.nodes.len()];
            for &x in &triggers {
                is_trigger[x as usize] = true;
            }
            for x in 0..self.nodes.len() as u32 {
                let n = &self.nodes[x as usize];
                if n.joined && n.dest.is_none() && !n.backlog.is_empty() && !is_trigger[x as usize] {
                    triggers.push(x);
                }
            }
        }
        if !triggers.is_empty() {
            self.algorithm1(now, &triggers, &freed);
        }
        if tick {
            self.tick(now);
            self.next_tick = now + self.cfg.slice;
        }
    }

    // ------------------------------------------------------------------
    // output

    /// The next directive to send, if any.
    pub fn poll_directive(&mut self) -> Option<Directive> {
        self.out.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called.
    pub fn poll_timeout(&self) -> Option<Time> {
        let exp = self.expiries.front().map(|r| r.0);
        let tick = (self.next_tick != Time::NEVER).then_some(self.next_tick);
        match (exp, tick) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ------------------------------------------------------------------
    // state changes

    fn set_backlog(&mut self, now: Time, x: u32, want: &[u32]) {
        let old = std::mem::take(&mut self.nodes[x as usize].backlog);
        let old_paths = std::mem::take(&mut self.nodes[x as usize].bpaths);
        let old_wait = std::mem::take(&mut self.nodes[x as usize].bwait);
        for (&d, &r) in old.iter().zip(&old_paths) {
            if want.contains(&d) {
                continue;
            }
            for &l in self.topo.links(r) {
                let m = &mut self.beta[l as usize];
                if let Some(i) = m.iter().position(|&(y, _)| y == x) {
                    m[i].1 -= 1;
                    if m[i].1 == 0 {
                        m.swap_remove(i);
                    }
                }
            }
        }
        let mut paths = Vec::with_capacity(want.len());
        let mut waits = Vec::with_capacity(want.len());
        for &d in want {
            let r = self.topo.path_ref(x, d);
            paths.push(r);
            // a flow keeps its age while it stays backlogged; one that comes
            // back is as old as the start of its last slice
            let n = &self.nodes[x as usize];
            let age = match old.iter().position(|&o| o == d) {
                Some(i) => old_wait[i],
                None => n.served.iter().find(|e| e.0 == d).map_or(now, |e| e.1),
            };
            waits.push(age);
            if !old.contains(&d) {
                for &l in self.topo.links(r) {
                    let m = &mut self.beta[l as usize];
                    match m.iter_mut().find(|(y, _)| *y == x) {
                        Some(e) => e.1 += 1,
                        None => m.push((x, 1)),
                    }
                }
            }
        }
        let n = &mut self.nodes[x as usize];
        n.backlog = want.to_vec();
        n.bpaths = paths;
        n.bwait = waits;
    }

    /// Age key of node `y` for the affected set: its oldest waiting flow
    /// (the one it is sending to does not wait).
    fn oldest_wait(&self, now: Time, y: u32) -> Time {
        let n = &self.nodes[y as usize];
        n.backlog
            .iter()
            .zip(&n.bwait)
            .filter(|(&d, _)| Some(d) != n.dest)
            .map(|(_, &w)| w)
            .min()
            .unwrap_or(now)
    }

    /// End x's transmission: remove it from alpha; returns the links it freed.
    fn release(&mut self, x: u32) -> Vec<LinkId> {
        let n = &mut self.nodes[x as usize];
        if n.dest.take().is_none() {
            return Vec::new();
        }
        let path = std::mem::take(&mut n.path);
        let c = std::mem::take(&mut n.contrib_bps);
        let links = self.topo.links(path);
        for &l in links {
            let ls = &mut self.links[l as usize];
            ls.load_bps -= c;
            ls.senders -= 1;
        }
        links.to_vec()
    }

    fn after_change(&mut self, now: Time, triggers: &[u32], freed: &[LinkId]) {
        match self.cfg.mode {
            Mode::RateLimit => self.recompute_rates(now, triggers),
            _ => self.algorithm1(now, triggers, freed),
        }
    }

    fn eligible(&self, now: Time, y: u32) -> bool {
        let n = &self.nodes[y as usize];
        n.joined
            && !self.in_n[y as usize]
            && (n.dest.is_none() || now.saturating_since(n.active_since) >= self.cfg.min_active)
    }

    fn contribution(&self, x: u32, path: PathRef) -> u64 {
        let cx = self.topo.host_bps[x as usize];
        match self.cfg.mode {
            Mode::Hybrid => self
                .topo
                .links(path)
                .iter()
                .map(|&l| self.links[l as usize].cap_bps)
                .fold(cx, u64::min),
            _ => cx,
        }
    }

    /// F({x} ∪ alpha_ij, C_ij) for every link of `path`, x contributing `c`;
    /// a link reserved in this event for another node's starving flow is full.
    fn feasible(&self, x: u32, path: PathRef, c: u64) -> bool {
        let n = &self.nodes[x as usize];
        let own = self.topo.links(n.path);
        self.topo.links(path).iter().all(|&l| {
            let ls = &self.links[l as usize];
            if ls.reserved_by != NOBODY && ls.reserved_by != x {
                let (rd, _) = self.reservations[l as usize];
                if self.reservation_live(ls.reserved_by, rd) {
                    return false;
                }
            }
            let mut load = ls.load_bps;
            if own.contains(&l) {
                load -= n.contrib_bps; // x is already counted there
            }
            load + c <= ls.cap_bps
        })
    }

    /// True while node `x` still waits to send to `d` (its reservation holds).
    fn reservation_live(&self, x: u32, d: u32) -> bool {
        let n = &self.nodes[x as usize];
        n.joined && n.dest != Some(d) && n.backlog.contains(&d)
    }

    /// Add the eligible members of beta on `links` to the affected set A.
    fn affect(
        &mut self,
        now: Time,
        links: &[LinkId],
        a: &mut BinaryHeap<Reverse<(Time, u32, u32)>>,
        rr: u32,
    ) {
        let h = self.nodes.len() as u32;
        for &l in links {
            for &(y, _) in &self.beta[l as usize] {
                if self.a_stamp[y as usize] != self.stamp && self.eligible(now, y) {
                    self.a_stamp[y as usize] = self.stamp;
                    // the node with the oldest waiting flow first, ties in round robin
                    let waited = self.oldest_wait(now, y);
                    a.push(Reverse((waited, (y + h - rr) % h, y)));
                }
            }
        }
    }

    /// Algorithm 1 for the trigger nodes (already released from alpha, with
    /// their give-backs applied), whose transmissions freed `freed`.
    fn algorithm1(&mut self, now: Time, triggers: &[u32], freed: &[LinkId]) {
        self.stats.events += 1;
        self.stamp = self.stamp.wrapping_add(1).max(1);
        // round robin: this event's traversal starts after the node that was
        // served first by the previous one
        let h = self.nodes.len() as u32;
        let rr = self.rr % h.max(1);
        let mut a = std::mem::take(&mut self.a_heap);
        a.clear();
        let mut links: Vec<LinkId> = Vec::new();
        let stamp = self.stamp;
        let mut collect = |l: LinkId, link_stamp: &mut Vec<u32>| {
            if link_stamp[l as usize] != stamp {
                link_stamp[l as usize] = stamp;
                links.push(l);
            }
        };
        for &l in freed {
            collect(l, &mut self.link_stamp);
        }
        for &t in triggers {
            for &r in &self.nodes[t as usize].bpaths {
                for &l in self.topo.links(r) {
                    collect(l, &mut self.link_stamp);
                }
            }
        }
        self.affect(now, &links, &mut a, rr);
        let mut scheduled: Vec<u32> = Vec::new();
        while let Some(Reverse((_, _, x))) = a.pop() {
            self.a_stamp[x as usize] = 0;
            self.stats.nodes_considered += 1;
            let nb = self.nodes[x as usize].backlog.len();
            if nb == 0 {
                continue;
            }
            // destinations oldest waiting first (the one being sent to last),
            // ties in round robin from the pointer
            let start = self.nodes[x as usize].rot as usize % nb;
            let mut order = std::mem::take(&mut self.order_scratch);
            order.clear();
            {
                let n = &self.nodes[x as usize];
                order.extend(0..nb);
                order.sort_by_key(|&j| {
                    let w = if Some(n.backlog[j]) == n.dest {
                        Time::NEVER
                    } else {
                        n.bwait[j]
                    };
                    (w, (j + nb - start) % nb)
                });
            }
            let mut chosen = None;
            // a flow that has waited more than two slices keeps its path for
            // itself: links it cannot get now are not handed to younger flows
            let starving = {
                let n = &self.nodes[x as usize];
                let j = order[0];
                (Some(n.backlog[j]) != n.dest && now.saturating_since(n.bwait[j]) > self.cfg.slice.doubled())
                    .then_some((n.backlog[j], n.bpaths[j], n.bwait[j]))
            };
            for (i, &j) in order.iter().enumerate() {
                let r = self.nodes[x as usize].bpaths[j];
                if r.is_empty() {
                    continue;
                }
                let c = self.contribution(x, r);
                if self.feasible(x, r, c) {
                    chosen = Some((self.nodes[x as usize].backlog[j], r, c));
                    if i == 0 {
                        self.nodes[x as usize].rot = (j + 1) as u32;
                    }
                    break;
                }
            }
            self.order_scratch = order;
            if let Some((sd, r, since)) = starving {
                if chosen.as_ref().is_none_or(|&(d, _, _)| d != sd) {
                    // reserve the path; an older starving flow takes over a younger one's links
                    for i in 0..self.topo.links(r).len() {
                        let l = self.topo.links(r)[i] as usize;
                        let rx = self.links[l].reserved_by;
                        let take = if rx == NOBODY {
                            true
                        } else {
                            let (rd, w) = self.reservations[l];
                            // (age, node) is a total order: one oldest flow, no standoff
                            !self.reservation_live(rx, rd) || (since, x) < (w, rx) || rx == x
                        };
                        if take {
                            self.links[l].reserved_by = x;
                            self.reservations[l] = (sd, since);
                        }
                    }
                }
            }
            let Some((d, path, c)) = chosen else { continue };
            // preempt x's old transmission; capacity it frees affects more nodes
            let old_dest = self.nodes[x as usize].dest;
            let old_path = self.nodes[x as usize].path;
            let old_c = self.nodes[x as usize].contrib_bps;
            for &l in self.topo.links(old_path) {
                let ls = &mut self.links[l as usize];
                ls.load_bps -= old_c;
                ls.senders -= 1;
            }
            self.in_n[x as usize] = true;
            let new_links = self.topo.links(path).to_vec();
            let freed_now: Vec<LinkId> = self
                .topo
                .links(old_path)
                .iter()
                .copied()
                .filter(|l| !new_links.contains(l))
                .collect();
            self.affect(now, &freed_now, &mut a, rr);
            for &l in &new_links {
                let ls = &mut self.links[l as usize];
                ls.load_bps += c;
                ls.senders += 1;
                if ls.reserved_by == x && self.reservations[l as usize].0 == d {
                    ls.reserved_by = NOBODY;
                }
            }
            let n = &mut self.nodes[x as usize];
            if old_dest != Some(d) {
                n.active_since = now;
                // service of this flow begins: it is now the youngest of the
                // node's flows, behind every flow that waits since this instant
                let began = now + Dur(1);
                if let Some(i) = n.backlog.iter().position(|&b| b == d) {
                    n.bwait[i] = began;
                }
                match n.served.iter_mut().find(|e| e.0 == d) {
                    Some(e) => e.1 = began,
                    None => {
                        if n.served.len() >= 64 {
                            let oldest = (0..n.served.len()).min_by_key(|&i| n.served[i].1).unwrap_or(0);
                            n.served.swap_remove(oldest);
                        }
                        n.served.push((d, began));
                    }
                }
            }
            n.dest = Some(d);
            n.path = path;
            n.contrib_bps = c;
            if scheduled.is_empty() {
                self.rr = (x + 1) % h;
            }
            scheduled.push(x);
        }
        self.a_heap = a;
        for x in scheduled {
            self.in_n[x as usize] = false;
            let slice = self.cfg.slice;
            let hybrid = self.cfg.mode == Mode::Hybrid;
            let n = &mut self.nodes[x as usize];
            n.expires = now + slice;
            debug_assert!(self.expiries.back().is_none_or(|b| b.0 <= n.expires));
            self.expiries.push_back((n.expires, x));
            let kind = DirectiveKind::Slice {
                dest: n.dest,
                len: slice,
                rate_bps: hybrid.then_some(n.contrib_bps),
            };
            self.emit(now, x, kind);
        }
    }

    fn emit(&mut self, now: Time, x: u32, kind: DirectiveKind) {
        let n = &mut self.nodes[x as usize];
        n.epoch += 1;
        n.last_directive = now;
        self.stats.directives += 1;
        self.out.push_back(Directive {
            host: x,
            epoch: n.epoch,
            kind,
        });
    }

    /// Rate-limit form: rate of V2V flow (x, d) = min over P_xd of C_ij / |beta_ij|, at most C_x.
    fn recompute_rates(&mut self, now: Time, triggers: &[u32]) {
        self.stats.events += 1;
        let mut affected: BTreeSet<u32> = triggers.iter().copied().collect();
        for &t in triggers {
            for &r in &self.nodes[t as usize].bpaths {
                for &l in self.topo.links(r) {
                    affected.extend(self.beta[l as usize].iter().map(|&(y, _)| y));
                }
            }
        }
        for x in affected {
            self.send_rates(now, x, false);
        }
    }

    fn rates_of(&self, x: u32) -> Vec<(u32, u64)> {
        let cx = self.topo.host_bps[x as usize];
        let n = &self.nodes[x as usize];
        n.backlog
            .iter()
            .zip(&n.bpaths)
            .map(|(&d, &r)| {
                let rate = self
                    .topo
                    .links(r)
                    .iter()
                    .map(|&l| self.links[l as usize].cap_bps / self.beta[l as usize].len().max(1) as u64)
                    .fold(cx, u64::min);
                (d, rate)
            })
            .collect()
    }

    fn send_rates(&mut self, now: Time, x: u32, refresh: bool) {
        if !self.nodes[x as usize].joined {
            return;
        }
        let rates = self.rates_of(x);
        if refresh || rates != self.nodes[x as usize].rates {
            self.nodes[x as usize].rates = rates.clone();
            self.emit(now, x, DirectiveKind::Rates { rates });
        }
    }

    /// Periodic work: in the rate form, refresh every backlogged host's rates;
    /// in the slice forms, tell backlogged hosts without a slice to keep
    /// waiting (so their fail-open timers see a live controller).
    fn tick(&mut self, now: Time) {
        for x in 0..self.nodes.len() as u32 {
            let n = &self.nodes[x as usize];
            if !n.joined || n.backlog.is_empty() {
                continue;
            }
            match self.cfg.mode {
                Mode::RateLimit => self.send_rates(now, x, true),
                _ => {
                    if n.dest.is_none() && now.saturating_since(n.last_directive) >= self.cfg.slice {
                        let kind = DirectiveKind::Slice {
                            dest: None,
                            len: self.cfg.slice,
                            rate_bps: None,
                        };
                        self.emit(now, x, kind);
                    }
                }
            }
        }
    }
}

const NOBODY: u32 = u32::MAX;

/// What the feasibility check reads of one link, in one cache-friendly record.
#[derive(Clone, Copy, Debug)]
struct LinkState {
    /// C_ij, bit/s.
    cap_bps: u64,
    /// Capacity admitted to alpha_ij, bit/s.
    load_bps: u64,
    /// |alpha_ij|.
    senders: u32,
    /// Node whose starving flow reserved the link, or `NOBODY`.
    reserved_by: u32,
}
