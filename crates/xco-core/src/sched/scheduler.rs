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
//! other senders keep busy at unrelated times. A flow behind an older flow's
//! reservation reserves nothing, and one overtaken so gives its whole path
//! up: it cannot be served before the older flow, and holding links for it
//! would only idle them. A flow that cannot fit on its path even on an idle
//! network (it has no path, or, in the timeslice form, a link of its path is
//! slower than its sender's C_x) is never served and reserves nothing: it
//! does not count as its node's oldest flow for reserving, so the node's
//! oldest flow that can fit reserves in its place if it starves (it still
//! counts in the traversal order, which only orders). An affected node that
//! is already sending is preempted in favour of the newly computed
//! destination, nodes active for less than `min_active` are not disturbed,
//! and a node leaves the affected set once considered and never re-enters
//! once scheduled (the loop terminates).
//!
//! A preemption frees the links the node leaves (P_{x,old} − P_{x,new})
//! only when its old slice would have ended (the drain, `drain`): its
//! agent has released into its NIC everything that ends within that
//! slice, and those packets still cross the old path after the node is
//! moved (or all of the slice, if the directive that moves it is lost).
//! Until then the links keep its old contribution; their release at that
//! instant is a scheduling event like a slice's end (its affected set the
//! contention groups of those links), so the capacity is handed on as soon
//! as it is free. A host that leaves, or whose feedback stops, in the
//! middle of a slice drains its whole path the same way (its reports may
//! be lost while its directives are not). A slice given back (event 2)
//! needs no drain: the agent gives back only once its NIC has sent what it
//! released, plus the hysteresis. The rate form has no slices and no
//! preemption.

use super::affected::Affected;
use super::directive::{Directive, DirectiveKind};
use super::drain::Drain;
use super::links::Links;
use super::state::{Flow, Node, NodeMeta, NOBODY, NOT_SERVED};
use super::topology::{LinkId, SchedTopology};
use crate::time::{Dur, Time};
use std::collections::{BinaryHeap, VecDeque};

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
    /// Decide this long before each deadline (slice end, tick): the driver
    /// calls [`Scheduler::handle_timeout`] at [`Scheduler::poll_timeout`],
    /// which is the deadline minus the lead, and the directives then carry
    /// the rest of the way to the deadline in `start_in`, so they reach the
    /// hosts before the slot starts. Zero: decide at the deadline, apply on receipt.
    pub lead: Dur,
}

impl Default for SchedConfig {
    fn default() -> SchedConfig {
        SchedConfig {
            mode: Mode::Timeslice,
            slice: Dur::from_ms(2),
            min_active: Dur::from_us(200),
            feedback_timeout: None,
            lead: Dur::ZERO,
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

/// The controller's scheduler. See the module documentation.
pub struct Scheduler {
    pub(super) cfg: SchedConfig,
    pub(super) topo: SchedTopology,
    /// Per node, what Algorithm 1 reads.
    pub(super) nodes: Vec<Node>,
    /// Per node, the rest.
    pub(super) meta: Vec<NodeMeta>,
    /// beta: per link, hosts with a backlogged destination through it (and how
    /// many). Small vectors: a link's group averages a few hosts, and
    /// Algorithm 1 mostly iterates them.
    pub(super) beta: Vec<Vec<(u32, u32)>>,
    /// Per link, what Algorithm 1 reads and updates: free capacity, |alpha|,
    /// the holder of a live reservation and the last reservation made of it
    /// by a starving flow.
    pub(super) links: Links,
    /// The capacity of the slowest link: a host no faster fits every path.
    pub(super) slowest_link_bps: u64,
    /// Round robin: the next run's traversal starts at this node.
    pub(super) rr: u32,
    /// (expiry, node) in expiry order: every slice has the same length and
    /// slices are granted in time order, so a FIFO keeps them sorted.
    pub(super) expiries: VecDeque<(Time, u32)>,
    /// Preempted transmissions still draining, earliest end first (see `drain`).
    pub(super) drains: BinaryHeap<Drain>,
    next_tick: Time,
    /// The scheduler's time: the latest instant an input was stamped with,
    /// or a deadline decided ahead of time (up to the lead past `input_now`).
    clock: Time,
    /// The instant the input being handled was stamped with (directives
    /// start `clock - input_now` after it, at most the lead).
    input_now: Time,
    out: VecDeque<Directive>,
    pub(super) stats: SchedStats,
    /// Per-run marks (`== stamp` while set): membership of the affected set
    /// A, links collected, trigger nodes.
    pub(super) a_stamp: Vec<u32>,
    pub(super) link_stamp: Vec<u32>,
    pub(super) trigger_stamp: Vec<u32>,
    pub(super) stamp: u32,
    /// Scratch kept between calls to reuse its memory.
    pub(super) scratch: Scratch,
}

/// Buffers reused across calls (no allocation per event in steady state).
#[derive(Default)]
pub(super) struct Scratch {
    /// The affected set A.
    pub affected: Affected,
    /// The set N, in the order its members were scheduled.
    pub scheduled: Vec<u32>,
    /// Links collected for A.
    pub links: Vec<LinkId>,
    /// Members of the contention groups of those links, each once.
    pub candidates: Vec<u32>,
    /// Trigger nodes and links freed by them.
    triggers: Vec<u32>,
    freed: Vec<LinkId>,
    /// The flows being built by `set_backlog`.
    flows: Vec<Flow>,
    /// A backlog report being normalised.
    want: Vec<u32>,
    /// Reservations taken over by an older flow: (owner, destination).
    pub displaced: Vec<(u32, u32)>,
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
            meta: vec![NodeMeta::default(); h],
            beta: vec![Vec::new(); l],
            links: Links::new(&topo.link_bps),
            slowest_link_bps: topo.link_bps.iter().copied().min().unwrap_or(u64::MAX),
            rr: 0,
            expiries: VecDeque::new(),
            drains: BinaryHeap::new(),
            next_tick: Time::NEVER,
            clock: Time::ZERO,
            input_now: Time::ZERO,
            out: VecDeque::new(),
            stats: SchedStats::default(),
            a_stamp: vec![0; h],
            link_stamp: vec![0; l],
            trigger_stamp: vec![0; h],
            stamp: 0,
            scratch: Scratch::default(),
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
        self.topo.link_bps[l as usize] - self.links.free_bps(l)
    }

    /// Senders currently admitted on link `l`.
    pub fn active_senders(&self, l: LinkId) -> u32 {
        self.links.senders(l)
    }

    /// The live reservation of link `l` by a starving flow, if any: (the
    /// node, its destination, the flow's age).
    pub fn reservation(&self, l: LinkId) -> Option<(u32, u32, Time)> {
        let r = self.links.res(l);
        (self.links.held_by(l) != NOBODY).then_some((r.owner, r.dest, r.since))
    }

    /// Preempted transmissions still draining, each as (the preempted
    /// node, the links it still holds, what it adds to each, bit/s, and
    /// until when), earliest end first: they count in
    /// [`admitted_bps`](Self::admitted_bps) and
    /// [`active_senders`](Self::active_senders) until then.
    pub fn draining(&self) -> Vec<(u32, Vec<LinkId>, u64, Time)> {
        let mut d: Vec<&Drain> = self.drains.iter().collect();
        d.sort_unstable_by(|a, b| b.cmp(a));
        d.iter()
            .map(|d| (d.node, d.links(&self.topo).collect(), d.contrib_bps, d.end))
            .collect()
    }

    /// Capacity of link `l`, bit/s.
    pub fn link_bps(&self, l: LinkId) -> u64 {
        self.topo.link_bps[l as usize]
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
        &self.meta[x as usize].backlog
    }

    /// True if host `x` is registered.
    pub fn joined(&self, x: u32) -> bool {
        self.nodes[x as usize].joined
    }

    /// P_sd as the scheduler sees it.
    pub fn path(&mut self, s: u32, d: u32) -> Vec<LinkId> {
        self.topo.path(s, d).to_vec()
    }

    /// P_sd into `out` (cleared first).
    pub fn path_into(&mut self, s: u32, d: u32, out: &mut Vec<LinkId>) {
        out.clear();
        out.extend_from_slice(self.topo.path(s, d));
    }

    /// C_x: host `x`'s outgoing capacity, bit/s.
    pub fn host_bps(&self, x: u32) -> u64 {
        self.topo.host_bps[x as usize]
    }

    /// Number of hosts.
    pub fn hosts(&self) -> usize {
        self.nodes.len()
    }

    // ------------------------------------------------------------------
    // input

    /// The scheduler's time at an input stamped `now`: time never goes
    /// back (slices must expire in the order they were granted), so an
    /// instant earlier than one already seen is taken as that one. A driver
    /// that calls `handle_timeout` late, at the instant `poll_timeout` gave,
    /// after later inputs, is so still served in order.
    fn advance(&mut self, now: Time) -> Time {
        self.advance_ahead(now, Dur::ZERO)
    }

    /// [`advance`](Self::advance) to `now + ahead`: the scheduler decides
    /// for that instant (a deadline it handles its lead early). Inputs that
    /// arrive before the real time catches up are handled at the scheduler's
    /// time, so their directives start then too.
    fn advance_ahead(&mut self, now: Time, ahead: Dur) -> Time {
        self.input_now = now;
        self.clock = self.clock.max(now + ahead);
        self.clock
    }

    /// The scheduler's time (at least the latest input's instant).
    pub fn now(&self) -> Time {
        self.clock
    }

    /// Host `x` registers (again: after a controller restart its soft state is rebuilt from reports).
    pub fn handle_join(&mut self, now: Time, x: u32) {
        let now = self.advance(now);
        self.nodes[x as usize].joined = true;
        self.meta[x as usize].last_feedback = now;
        if self.next_tick == Time::NEVER {
            self.next_tick = now + self.cfg.slice;
        }
    }

    /// Host `x` is alive (periodic feedback).
    pub fn handle_feedback(&mut self, now: Time, x: u32) {
        let now = self.advance(now);
        if !self.nodes[x as usize].joined {
            self.handle_join(now, x);
        }
        self.meta[x as usize].last_feedback = now;
    }

    /// Host `x` leaves: its flows are no longer scheduled (the links of
    /// its slice drain until the slice's end).
    pub fn handle_leave(&mut self, now: Time, x: u32) {
        let now = self.advance(now);
        self.leave(now, x);
    }

    /// [`handle_leave`](Self::handle_leave) at the scheduler's time `now`,
    /// keeping the input's instant (a feedback timeout found by a deadline
    /// handled the lead early: its directives start then too).
    fn leave(&mut self, now: Time, x: u32) {
        if !self.nodes[x as usize].joined {
            return;
        }
        let mut freed = std::mem::take(&mut self.scratch.freed);
        freed.clear();
        self.release_draining(now, x, &mut freed);
        self.set_backlog(now, x, &[]);
        self.nodes[x as usize].joined = false;
        match self.cfg.mode {
            Mode::RateLimit => self.recompute_rates(now, &[x]),
            _ => self.algorithm1(now, &[x], &freed, false),
        }
        self.scratch.freed = freed;
    }

    /// Host `x` reports B_x, the destinations it has backlogged traffic for.
    ///
    /// Per the spec a report that turns an empty backlog non-empty is a
    /// scheduling event; other reports update B_x and the contention groups.
    pub fn handle_backlog(&mut self, now: Time, x: u32, dests: &[u32]) {
        let now = self.advance(now);
        if !self.nodes[x as usize].joined {
            self.handle_join(now, x);
        }
        self.meta[x as usize].last_feedback = now;
        let h = self.nodes.len();
        let mut want = std::mem::take(&mut self.scratch.want);
        want.clear();
        want.extend(dests.iter().copied().filter(|&d| d != x && (d as usize) < h));
        // a host holding a slice keeps its destination until it gives the
        // slice back or the slice ends (a report may catch its queue empty)
        if let Some(d) = self.nodes[x as usize].dest {
            want.push(d);
        }
        want.sort_unstable();
        want.dedup();
        let was_empty = self.meta[x as usize].backlog.is_empty();
        if want != self.meta[x as usize].backlog {
            self.set_backlog(now, x, &want);
            match self.cfg.mode {
                Mode::RateLimit => self.recompute_rates(now, &[x]),
                _ => {
                    if was_empty && !want.is_empty() {
                        self.algorithm1(now, &[x], &[], false); // event 3
                    }
                }
            }
        }
        self.scratch.want = want;
    }

    /// Host `x` gives back the rest of its slice to `dest` (work conservation, event 2).
    pub fn handle_giveback(&mut self, now: Time, x: u32, dest: u32) {
        let now = self.advance(now);
        self.meta[x as usize].last_feedback = now;
        if self.nodes[x as usize].dest != Some(dest) {
            return; // stale: that slice already ended
        }
        let mut freed = std::mem::take(&mut self.scratch.freed);
        freed.clear();
        self.release(x, &mut freed);
        let mut rest = std::mem::take(&mut self.scratch.want);
        rest.clear();
        rest.extend(
            self.meta[x as usize]
                .backlog
                .iter()
                .copied()
                .filter(|&d| d != dest),
        );
        self.set_backlog(now, x, &rest);
        self.scratch.want = rest;
        self.algorithm1(now, &[x], &freed, false);
        self.scratch.freed = freed;
    }

    /// Handle everything due by `now` plus the lead: slice expiries (event
    /// 1), the periodic tick (keep-alive directives, rate refresh), feedback
    /// timeouts. The directives it makes start the lead after `now`.
    ///
    /// The scheduler's time becomes the deadline it handles, even when the
    /// call comes late (a loaded controller's timer): slots stay on their
    /// grid instead of drifting by every lateness, the directives of a late
    /// call start at once, and their slices are shortened by the lateness
    /// so they still end on the grid.
    pub fn handle_timeout(&mut self, now: Time) {
        let ahead = now + self.cfg.lead;
        // each deadline due by then at its own time, in order
        while let Some(due) = self.next_deadline().filter(|&d| d <= ahead) {
            self.input_now = now;
            self.clock = self.clock.max(due);
            self.due_at(self.clock);
        }
        self.input_now = now;
        self.clock = self.clock.max(now);
        self.due_at(self.clock); // feedback timeouts at the input's instant
    }

    /// Feedback timeouts, slice expiries and the tick due at `now` (the scheduler's time).
    fn due_at(&mut self, now: Time) {
        // feedback timeouts (a silent host may still be sending: its links drain)
        if let Some(limit) = self.cfg.feedback_timeout {
            let dead: Vec<u32> = (0..self.nodes.len() as u32)
                .filter(|&x| {
                    self.nodes[x as usize].joined
                        && now.saturating_since(self.meta[x as usize].last_feedback) > limit
                })
                .collect();
            for x in dead {
                self.stats.hosts_timed_out += 1;
                self.leave(now, x);
            }
        }
        // slice expiries that fall due together are one event whose triggers are all of them
        let mut triggers = std::mem::take(&mut self.scratch.triggers);
        let mut freed = std::mem::take(&mut self.scratch.freed);
        triggers.clear();
        freed.clear();
        while let Some(&(t, x)) = self.expiries.front() {
            if t > now {
                break;
            }
            self.expiries.pop_front();
            let n = &self.nodes[x as usize];
            if n.dest.is_some() && n.expires == t {
                self.release(x, &mut freed);
                triggers.push(x);
            }
        }
        // preempted slices that end now: what their senders released has
        // left, their links are free (an event, as a slice end is)
        while let Some(d) = self.drains.peek().filter(|d| d.end <= now).copied() {
            self.drains.pop();
            for l in d.links(&self.topo) {
                self.links.withdraw(l, d.contrib_bps);
                freed.push(l);
            }
        }
        let tick = now >= self.next_tick;
        // every slice, hosts that wait with backlog are triggers too: the
        // schedule moves on even when no slice ends (e.g. after
        // reservations held links idle); one run together with the expiries
        let waiting = tick && self.cfg.mode != Mode::RateLimit;
        if !triggers.is_empty() || !freed.is_empty() || waiting {
            self.algorithm1(now, &triggers, &freed, waiting);
        }
        self.scratch.triggers = triggers;
        self.scratch.freed = freed;
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

    /// When [`handle_timeout`](Self::handle_timeout) must next be called:
    /// the next deadline minus the lead.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next_deadline()
            .map(|t| Time(t.ps().saturating_sub(self.cfg.lead.ps())))
    }

    /// The next slice expiry, drain end or tick.
    fn next_deadline(&self) -> Option<Time> {
        // (a drain ends when its preempted slice would have: that slice's
        // expiry is still listed, so this changes nothing but is cheap)
        let exp = match (self.expiries.front(), self.drains.peek()) {
            (Some(e), Some(d)) => Some(e.0.min(d.end)),
            (e, d) => e.map(|e| e.0).or(d.map(|d| d.end)),
        };
        let tick = (self.next_tick != Time::NEVER).then_some(self.next_tick);
        match (exp, tick) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ------------------------------------------------------------------
    // state changes

    /// Set B_x to `want` (sorted, no duplicates), with paths and ages, and
    /// update the contention groups.
    pub(super) fn set_backlog(&mut self, now: Time, x: u32, want: &[u32]) {
        let xi = x as usize;
        let mut old = std::mem::take(&mut self.nodes[xi].flows);
        for f in old.iter() {
            if want.binary_search(&f.dest).is_ok() {
                continue;
            }
            if f.history != NOT_SERVED {
                self.meta[xi].served[f.history as usize].1 = f.wait; // the entry is current again
            }
            for &l in f.links(&self.topo) {
                if self.links.res(l).of(x, f.dest) {
                    self.links.set_holder(l, NOBODY); // the flow no longer waits
                }
                let m = &mut self.beta[l as usize];
                if let Some(i) = m.iter().position(|&(y, _)| y == x) {
                    m[i].1 -= 1;
                    if m[i].1 == 0 {
                        m.swap_remove(i);
                    }
                }
            }
        }
        let mut flows = std::mem::take(&mut self.scratch.flows);
        flows.clear();
        for &d in want {
            // a flow keeps its age while it stays backlogged; one that comes
            // back is as old as the start of its last slice
            let kept = old.binary_search_by_key(&d, |f| f.dest).ok().map(|i| old[i]);
            let f = match kept {
                Some(f) => f,
                None => {
                    let path = self.topo.path_ref(x, d);
                    let served = &self.meta[xi].served;
                    let f = match served.iter().position(|e| e.0 == d) {
                        Some(i) => Flow::new(d, served[i].1, i as u8, path, &self.topo),
                        None => Flow::new(d, now, NOT_SERVED, path, &self.topo),
                    };
                    // it waits again: its reservation holds again, unless
                    // an older flow reserved a link of its path meanwhile
                    let rehold = !self.behind_older(x, &f);
                    for &l in f.links(&self.topo) {
                        if self.links.res(l).of(x, d) {
                            if rehold {
                                self.links.set_holder(l, x);
                            } else {
                                self.links.clear(l);
                            }
                        }
                        let m = &mut self.beta[l as usize];
                        match m.iter_mut().find(|(y, _)| *y == x) {
                            Some(e) => e.1 += 1,
                            None => m.push((x, 1)),
                        }
                    }
                    f
                }
            };
            flows.push(f);
        }
        old.set(&flows);
        self.nodes[xi].flows = old;
        self.scratch.flows = flows;
        let b = &mut self.meta[xi].backlog;
        b.clear();
        b.extend_from_slice(want);
    }

    /// Node x's flow to `d` as a record: from B_x (its path without a
    /// lookup), else from the topology.
    pub(super) fn flow_to(&mut self, x: u32, d: u32) -> Flow {
        match self.nodes[x as usize].flows.iter().find(|f| f.dest == d) {
            Some(f) => *f,
            None => {
                let path = self.topo.path_ref(x, d);
                Flow::new(d, Time::ZERO, NOT_SERVED, path, &self.topo)
            }
        }
    }

    /// End x's transmission: remove it from alpha; append the links it freed to `freed`.
    fn release(&mut self, x: u32, freed: &mut Vec<LinkId>) {
        let Some(d) = self.nodes[x as usize].dest else {
            return;
        };
        let f = self.flow_to(x, d);
        let n = &mut self.nodes[x as usize];
        n.dest = None;
        let c = std::mem::take(&mut n.contrib_bps);
        let links = f.links(&self.topo);
        for &l in links {
            self.links.withdraw(l, c);
        }
        freed.extend_from_slice(links);
    }

    /// End x's transmission for good (x leaves): if its slice has not
    /// ended, the links of its path drain until the slice's end (a host
    /// that left, or fell silent, may still be sending what its agent
    /// released, or all of its slice if it only lost its feedback); else
    /// as [`release`](Self::release).
    fn release_draining(&mut self, now: Time, x: u32, freed: &mut Vec<LinkId>) {
        let n = &self.nodes[x as usize];
        match n.dest {
            Some(d) if n.expires > now => {
                let (end, old) = (n.expires, self.flow_to(x, d));
                let n = &mut self.nodes[x as usize];
                n.dest = None;
                let contrib_bps = std::mem::take(&mut n.contrib_bps);
                self.drains.push(Drain {
                    end,
                    node: x,
                    contrib_bps,
                    old,
                    new: Flow::default(),
                });
            }
            _ => self.release(x, freed),
        }
    }

    pub(super) fn emit(&mut self, now: Time, x: u32, kind: DirectiveKind) {
        // decided for a slot that began before the input's instant (a late
        // timer): the slice still ends where the slot does
        let kind = match kind {
            DirectiveKind::Slice { dest, len, rate_bps } if self.input_now > now => DirectiveKind::Slice {
                dest,
                len: (len - self.input_now.saturating_since(now)).max(Dur::from_ns(1)),
                rate_bps,
            },
            k => k,
        };
        let n = &mut self.nodes[x as usize];
        n.epoch += 1;
        n.last_directive = now;
        self.stats.directives += 1;
        self.out.push_back(Directive {
            host: x,
            epoch: n.epoch,
            // (an input stamped before an earlier one is not a lead: at most the lead)
            start_in: now.saturating_since(self.input_now).min(self.cfg.lead),
            kind,
        });
    }

    /// Periodic work: in the rate form, refresh every backlogged host's rates;
    /// in the slice forms, tell backlogged hosts without a slice to keep
    /// waiting (so their fail-open timers see a live controller).
    fn tick(&mut self, now: Time) {
        for x in 0..self.nodes.len() as u32 {
            let n = &self.nodes[x as usize];
            if !n.joined || n.flows.count() == 0 {
                continue;
            }
            match self.cfg.mode {
                Mode::RateLimit => self.send_rates(now, x, true),
                _ => {
                    let waited = now.saturating_since(n.last_directive);
                    if n.dest.is_none() && waited >= self.cfg.slice {
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
