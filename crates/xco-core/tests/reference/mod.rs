//! A plain reference implementation of the XCo scheduler, to test the
//! optimised one (`xco_core::sched::Scheduler`) against.
//!
//! It is Algorithm 1 of the XCo spec as written, plus exactly the rules the
//! optimised scheduler documents for the parts the paper leaves out, each
//! written where it applies:
//!
//! - traversal order: the affected node whose oldest waiting V2V flow waited
//!   longest goes first (a flow waits from the start of its last slice, or
//!   from when it became backlogged if it never had one; the flow a node
//!   sends on does not wait), ties in round robin from the node after the
//!   first one scheduled by the previous run; a node's destinations in the
//!   same order, ties in round robin from a pointer that moves past the
//!   destination chosen when it is the oldest;
//! - reservations: a node's oldest flow among those that fit their path on
//!   an idle network (a path, no link of it slower than what the node adds
//!   to alpha there: C_x in the timeslice form), starving (waiting more than
//!   two slices) and not chosen, reserves the links of its path unless one
//!   is held by an older starving flow (a flow that can never fit never
//!   reserves); an older flow takes links over from a
//!   younger one, which then gives up its whole path; a reserved link fits
//!   only its holder; a reservation lapses while its flow leaves the backlog
//!   and holds again when it returns (unless an older flow holds a link of
//!   its path then), and ends when its flow is served;
//! - preemption: a sender is checked as if it sent nowhere and moves to the
//!   destination chosen; the links it leaves still carry what it released
//!   for the old destination until its old slice ends (the drain): they
//!   keep its old contribution (for every node, itself included) until
//!   then, and when that time comes they are freed in a run of Algorithm 1
//!   (with the slices that end then, or alone) whose affected set takes
//!   their contention groups; a sender whose old slice is already over
//!   frees them at once, and they affect their contention groups then;
//! - `min_active`: a node sending for less than that is not affected;
//! - triggers: the three events of the spec, a host leaving (its slice ends
//!   and its backlog empties; the links of a slice not yet over drain until
//!   its end, as a preempted sender's), and every slice the hosts that wait
//!   with backlog; the affected set also takes the contention groups of the
//!   links a trigger's transmission freed;
//! - the rate form: a V2V flow gets its tightest link shared by that link's
//!   contention group (at most C_x), sent when a host's rates change
//!   (recomputed for the trigger and the contention groups of its paths) and
//!   to every backlogged host once a slice; the hybrid form adds to a slice
//!   the rate min(C_x, tightest link on the path), which is also what the
//!   host adds to alpha;
//! - slots and timers: a slice lasts `slice` from its grant; slices due
//!   together end in one run; every `slice` from the first join a tick sends
//!   "wait" to backlogged hosts without a slice that got no directive for a
//!   slice (or refreshes rates); time never goes back (an input stamped
//!   earlier than one seen is taken at the latest instant seen); a host
//!   silent for longer than `feedback_timeout` is dropped as if it left.
//!
//! The data structures are the simplest that do: the contention groups
//! beta and the active groups alpha are recomputed from every host's backlog
//! and destination whenever they are needed, paths are asked of the path
//! provider every time, the affected set is a set searched for its first
//! node, and a node's service history is a list kept up to date.
//!
//! A few details no document states are taken from the optimised code, so
//! that the two can be compared at all; each is marked "(as the scheduler
//! does)" where it is used. Three of them differ from what the scheduler's
//! own module documentation says, and the reference follows the code (the
//! differential test would fail at once otherwise; checked by changing
//! the reference to the documented reading):
//!
//! - a reserved link refuses every flow of any other node, also one older
//!   than the reserving flow, and lets every flow of the holding node
//!   through, also one younger than it (the documentation: a starving flow
//!   reserves its path "against younger flows");
//! - a reservation that holds again when its flow returns keeps the age it
//!   was made with, although a flow that returns without an entry in the
//!   service history is as young as its report (the documentation: a
//!   reservation's `since` is "the flow's age");
//! - in the rate form a change of B_x recomputes the rates of x and of the
//!   contention groups of x's paths as they are after the change: a host
//!   whose share grew because x left a link learns it only from the next
//!   refresh (not documented either way).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use xco_core::sched::{Directive, DirectiveKind, LinkId, Mode, PathProvider, SchedConfig, SchedStats};
use xco_core::{Dur, Time};

/// Entries of a node's service history (the oldest are forgotten), as the
/// scheduler's.
const HISTORY: usize = 64;

/// A reservation made by a starving flow: node `owner`'s flow to `dest`,
/// waiting since `since`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Reservation {
    owner: u32,
    dest: u32,
    since: Time,
}

/// What a link keeps of reservations: the last one made of it, and whether
/// it holds (its flow waits).
#[derive(Clone, Copy, Debug, Default)]
struct LinkRes {
    last: Option<Reservation>,
    holds: bool,
}

impl LinkRes {
    /// The reservation that holds, if any.
    fn live(&self) -> Option<Reservation> {
        self.last.filter(|_| self.holds)
    }

    /// True if the last reservation is node `x`'s flow to `d` (holding or not).
    fn of(&self, x: u32, d: u32) -> bool {
        self.last.is_some_and(|r| r.owner == x && r.dest == d)
    }
}

/// Everything the controller keeps of a host.
#[derive(Clone, Debug, Default)]
struct Host {
    joined: bool,
    /// B_x: each backlogged destination with its flow's age (when its last
    /// slice began, or when it became backlogged if it never had one).
    backlog: BTreeMap<u32, Time>,
    /// D_x.
    dest: Option<u32>,
    /// What x adds to alpha on P_{x,D_x} while it sends, bit/s.
    sending_bps: u64,
    /// When x began sending to D_x.
    active_since: Time,
    /// When x's slice ends.
    expires: Time,
    /// Round-robin pointer: an index into B_x in destination order.
    rot: usize,
    /// Directives sent to x.
    epoch: u64,
    last_directive: Time,
    last_feedback: Time,
    /// When service of each destination last began (at most `HISTORY`).
    served: Vec<(u32, Time)>,
    /// The rates last sent (rate form).
    rates: Vec<(u32, u64)>,
}

/// The reference scheduler. Same inputs and outputs as
/// `xco_core::sched::Scheduler`.
pub struct RefScheduler {
    cfg: SchedConfig,
    /// C_x per host, bit/s.
    host_bps: Vec<u64>,
    /// C_ij per directed link, bit/s.
    link_bps: Vec<u64>,
    paths: Box<dyn PathProvider>,
    hosts: Vec<Host>,
    res: Vec<LinkRes>,
    /// The next run's traversal starts at this node (ties).
    rr: u32,
    /// Slice ends as granted: (instant, host). An entry whose host's slice
    /// ended otherwise (or was granted again) stays until it is due.
    expiries: Vec<(Time, u32)>,
    /// Preempted transmissions draining: (end, host, what it adds to each
    /// link, bit/s, the links it left).
    drains: Vec<(Time, u32, u64, Vec<LinkId>)>,
    next_tick: Option<Time>,
    clock: Time,
    /// The instant of the input being handled.
    input_now: Time,
    out: VecDeque<Directive>,
    stats: SchedStats,
    /// How often each rule made a difference (to check that tests reach them).
    seen: BTreeMap<&'static str, u64>,
}

impl RefScheduler {
    /// Hosts with capacities `host_bps`, links with capacities `link_bps`,
    /// paths from `paths`.
    pub fn new(
        host_bps: Vec<u64>,
        link_bps: Vec<u64>,
        paths: Box<dyn PathProvider>,
        cfg: SchedConfig,
    ) -> Self {
        RefScheduler {
            cfg,
            hosts: vec![Host::default(); host_bps.len()],
            res: vec![LinkRes::default(); link_bps.len()],
            host_bps,
            link_bps,
            paths,
            rr: 0,
            expiries: Vec::new(),
            drains: Vec::new(),
            next_tick: None,
            clock: Time::ZERO,
            input_now: Time::ZERO,
            out: VecDeque::new(),
            stats: SchedStats::default(),
            seen: BTreeMap::new(),
        }
    }

    // ------------------------------------------------------------------
    // what the tests compare

    /// Counters.
    pub fn stats(&self) -> &SchedStats {
        &self.stats
    }

    /// How often each rule made a difference, by name.
    pub fn seen(&self) -> &BTreeMap<&'static str, u64> {
        &self.seen
    }

    fn saw(&mut self, what: &'static str) {
        *self.seen.entry(what).or_insert(0) += 1;
    }

    /// D_x.
    pub fn dest(&self, x: u32) -> Option<u32> {
        self.hosts[x as usize].dest
    }

    /// B_x, sorted.
    pub fn backlog(&self, x: u32) -> Vec<u32> {
        self.hosts[x as usize].backlog.keys().copied().collect()
    }

    /// True if host `x` is registered.
    pub fn joined(&self, x: u32) -> bool {
        self.hosts[x as usize].joined
    }

    /// The reservation of link `l` that holds: (node, destination, age).
    pub fn reservation(&self, l: LinkId) -> Option<(u32, u32, Time)> {
        self.res[l as usize].live().map(|r| (r.owner, r.dest, r.since))
    }

    /// Per link with senders: the capacity admitted (the sum over alpha),
    /// and |alpha| (a draining sender counts on the links it left).
    pub fn alpha(&mut self) -> BTreeMap<LinkId, (u64, u32)> {
        let mut alpha = BTreeMap::new();
        for (_, _, bps, links) in &self.drains {
            for &l in links {
                let e = alpha.entry(l).or_insert((0, 0));
                e.0 += bps;
                e.1 += 1;
            }
        }
        for x in 0..self.hosts.len() as u32 {
            if let Some(d) = self.hosts[x as usize].dest {
                let bps = self.hosts[x as usize].sending_bps;
                for l in self.path(x, d) {
                    let e = alpha.entry(l).or_insert((0, 0));
                    e.0 += bps;
                    e.1 += 1;
                }
            }
        }
        alpha
    }

    // ------------------------------------------------------------------
    // input

    fn advance(&mut self, now: Time) -> Time {
        self.input_now = now;
        if now < self.clock {
            self.saw("input stamped before the clock");
        }
        self.clock = self.clock.max(now);
        self.clock
    }

    /// Host `x` registers.
    pub fn handle_join(&mut self, now: Time, x: u32) {
        let now = self.advance(now);
        let host = &mut self.hosts[x as usize];
        host.joined = true;
        host.last_feedback = now;
        if self.next_tick.is_none() {
            self.next_tick = Some(now + self.cfg.slice);
        }
    }

    /// Host `x` is alive.
    pub fn handle_feedback(&mut self, now: Time, x: u32) {
        let now = self.advance(now);
        if !self.hosts[x as usize].joined {
            self.handle_join(now, x);
        }
        self.hosts[x as usize].last_feedback = now;
    }

    /// Host `x` leaves: its slice ends, its backlog empties (a trigger).
    pub fn handle_leave(&mut self, now: Time, x: u32) {
        let now = self.advance(now);
        self.leave(now, x);
    }

    /// Host `x` leaves at the scheduler's time `now` (the input's instant
    /// stays: a feedback timeout found at a deadline handled early starts
    /// its directives at that deadline). A slice not yet over drains its
    /// whole path until its end; one that is over frees it.
    fn leave(&mut self, now: Time, x: u32) {
        if !self.hosts[x as usize].joined {
            return;
        }
        let host = &self.hosts[x as usize];
        let freed = match host.dest {
            Some(d) if host.expires > now => {
                let (end, bps) = (host.expires, host.sending_bps);
                let path = self.path(x, d);
                self.saw("a leaving host's links drain");
                self.drains.push((end, x, bps, path));
                let host = &mut self.hosts[x as usize];
                host.dest = None;
                host.sending_bps = 0;
                Vec::new()
            }
            _ => self.release(x),
        };
        self.set_backlog(now, x, &BTreeSet::new());
        self.hosts[x as usize].joined = false;
        match self.cfg.mode {
            Mode::RateLimit => self.recompute_rates(now, x),
            _ => self.algorithm1(now, &[x], &freed, false),
        }
    }

    /// Host `x` reports B_x. Event 3 if B_x was empty; otherwise only B_x
    /// (and so beta) changes. A host keeps the destination of its slice in
    /// B_x until it gives the slice back or the slice ends.
    pub fn handle_backlog(&mut self, now: Time, x: u32, dests: &[u32]) {
        let now = self.advance(now);
        if !self.hosts[x as usize].joined {
            self.handle_join(now, x);
        }
        self.hosts[x as usize].last_feedback = now;
        let h = self.hosts.len() as u32;
        let mut want: BTreeSet<u32> = dests.iter().copied().filter(|&d| d != x && d < h).collect();
        want.extend(self.hosts[x as usize].dest);
        let was_empty = self.hosts[x as usize].backlog.is_empty();
        if want.iter().eq(self.hosts[x as usize].backlog.keys()) {
            return;
        }
        self.set_backlog(now, x, &want);
        match self.cfg.mode {
            Mode::RateLimit => self.recompute_rates(now, x),
            _ if was_empty && !want.is_empty() => self.algorithm1(now, &[x], &[], false),
            _ => {}
        }
    }

    /// Host `x` gives back the rest of its slice to `dest` (event 2); stale
    /// if x does not send to `dest`.
    pub fn handle_giveback(&mut self, now: Time, x: u32, dest: u32) {
        let now = self.advance(now);
        self.hosts[x as usize].last_feedback = now;
        if self.hosts[x as usize].dest != Some(dest) {
            self.saw("stale give-back");
            return;
        }
        let freed = self.release(x);
        let mut rest: BTreeSet<u32> = self.hosts[x as usize].backlog.keys().copied().collect();
        rest.remove(&dest);
        self.set_backlog(now, x, &rest);
        self.algorithm1(now, &[x], &freed, false);
    }

    /// Every deadline due by `now` plus the lead, each at its own time and
    /// in order (so a late call keeps the slots on their grid), then
    /// feedback timeouts at `now`.
    pub fn handle_timeout(&mut self, now: Time) {
        let ahead = now + self.cfg.lead;
        while let Some(due) = self.poll_deadline().filter(|&d| d <= ahead) {
            self.input_now = now;
            self.clock = self.clock.max(due);
            self.due_at(self.clock);
        }
        self.input_now = now;
        self.clock = self.clock.max(now);
        self.due_at(self.clock);
    }

    /// Everything due at `now`: feedback timeouts (each host as if it
    /// left), then the slices that end (event 1, one run for all of them,
    /// with the waiting hosts if a tick is due), then the tick.
    fn due_at(&mut self, now: Time) {
        if let Some(limit) = self.cfg.feedback_timeout {
            let dead: Vec<u32> = (0..self.hosts.len() as u32)
                .filter(|&x| {
                    let host = &self.hosts[x as usize];
                    host.joined && now.saturating_since(host.last_feedback) > limit
                })
                .collect();
            for x in dead {
                self.saw("feedback timeout");
                self.stats.hosts_timed_out += 1;
                self.leave(now, x);
            }
        }
        let due: Vec<(Time, u32)> = self.expiries.iter().copied().filter(|e| e.0 <= now).collect();
        self.expiries.retain(|e| e.0 > now);
        let mut triggers = Vec::new();
        let mut freed = Vec::new();
        for (t, x) in due {
            let host = &self.hosts[x as usize];
            if host.dest.is_some() && host.expires == t {
                freed.extend(self.release(x));
                triggers.push(x);
            } else {
                self.saw("stale slice end");
            }
        }
        let (ended, draining): (Vec<_>, Vec<_>) = self.drains.drain(..).partition(|d| d.0 <= now);
        self.drains = draining;
        for (_, _, _, links) in ended {
            self.saw("a drain ends");
            if triggers.is_empty() {
                self.saw("a drain's end alone is an event");
            }
            freed.extend(links);
        }
        let tick = self.next_tick.is_some_and(|t| now >= t);
        let waiting = tick && self.cfg.mode != Mode::RateLimit;
        if !triggers.is_empty() || !freed.is_empty() || waiting {
            self.algorithm1(now, &triggers, &freed, waiting);
        }
        if tick {
            self.tick(now);
            self.next_tick = Some(now + self.cfg.slice);
        }
    }

    // ------------------------------------------------------------------
    // output

    /// The next directive to send, if any.
    pub fn poll_directive(&mut self) -> Option<Directive> {
        self.out.pop_front()
    }

    /// When `handle_timeout` must next be called: the earliest slice end
    /// still listed (as the scheduler does, also one that ended otherwise),
    /// drain end or tick.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.poll_deadline()
            .map(|t| Time(t.ps().saturating_sub(self.cfg.lead.ps())))
    }

    fn poll_deadline(&self) -> Option<Time> {
        let drains = self.drains.iter().map(|d| d.0);
        self.expiries
            .iter()
            .map(|e| e.0)
            .chain(drains)
            .chain(self.next_tick)
            .min()
    }

    // ------------------------------------------------------------------
    // the network

    /// P_sd, asked of the provider.
    fn path(&mut self, s: u32, d: u32) -> Vec<LinkId> {
        let mut p = Vec::new();
        self.paths.path(s, d, &mut p);
        p
    }

    /// True if one of host y's backlogged flows crosses a link of `links`
    /// (y is in beta of that link).
    fn in_beta(&mut self, y: u32, links: &BTreeSet<LinkId>) -> bool {
        let dests: Vec<u32> = self.hosts[y as usize].backlog.keys().copied().collect();
        dests
            .into_iter()
            .any(|d| self.path(y, d).iter().any(|l| links.contains(l)))
    }

    /// beta of link `l`.
    fn beta(&mut self, l: LinkId) -> BTreeSet<u32> {
        let one = BTreeSet::from([l]);
        (0..self.hosts.len() as u32)
            .filter(|&y| self.in_beta(y, &one))
            .collect()
    }

    /// |beta| of every link with a backlogged flow.
    fn beta_sizes(&mut self) -> BTreeMap<LinkId, usize> {
        let mut members: BTreeMap<LinkId, BTreeSet<u32>> = BTreeMap::new();
        for y in 0..self.hosts.len() as u32 {
            let dests: Vec<u32> = self.hosts[y as usize].backlog.keys().copied().collect();
            for d in dests {
                for l in self.path(y, d) {
                    members.entry(l).or_default().insert(y);
                }
            }
        }
        members.into_iter().map(|(l, m)| (l, m.len())).collect()
    }

    /// Capacity admitted per link by every sender but `x` (alpha without x;
    /// drains count, x's own too).
    fn admitted_without(&mut self, x: u32) -> BTreeMap<LinkId, u64> {
        let mut load = BTreeMap::new();
        for (_, _, bps, links) in &self.drains {
            for &l in links {
                *load.entry(l).or_insert(0) += bps;
            }
        }
        for y in (0..self.hosts.len() as u32).filter(|&y| y != x) {
            if let Some(d) = self.hosts[y as usize].dest {
                let bps = self.hosts[y as usize].sending_bps;
                for l in self.path(y, d) {
                    *load.entry(l).or_insert(0) += bps;
                }
            }
        }
        load
    }

    // ------------------------------------------------------------------
    // state changes

    /// End x's transmission (alpha loses it); the links it freed.
    fn release(&mut self, x: u32) -> Vec<LinkId> {
        match self.hosts[x as usize].dest.take() {
            Some(d) => {
                self.hosts[x as usize].sending_bps = 0;
                self.path(x, d)
            }
            None => Vec::new(),
        }
    }

    /// Set B_x to `want`. A flow that stays keeps its age; one that comes
    /// back is as old as the start of its last slice if the history still
    /// has it, else it is new. Reservations of the flows that leave lapse;
    /// those of the flows that come back hold again, unless an older flow
    /// holds a link of their path (then they end).
    fn set_backlog(&mut self, now: Time, x: u32, want: &BTreeSet<u32>) {
        let old = self.hosts[x as usize].backlog.clone();
        for &d in old.keys().filter(|d| !want.contains(d)) {
            for l in self.path(x, d) {
                if self.res[l as usize].of(x, d) {
                    if self.res[l as usize].holds {
                        self.saw("reservation lapses");
                    }
                    self.res[l as usize].holds = false;
                }
            }
        }
        let mut backlog = BTreeMap::new();
        for &d in want {
            let wait = match old.get(&d) {
                Some(&w) => w,
                None => {
                    let host = &self.hosts[x as usize];
                    let w = host.served.iter().find(|e| e.0 == d).map_or(now, |e| e.1);
                    if w != now {
                        self.saw("a flow returns as old as its last service");
                    }
                    // a reservation that holds again keeps its age, even if
                    // the flow is new (as the scheduler does)
                    let path = self.path(x, d);
                    let rehold = !self.behind_older(x, &path, w);
                    for l in path {
                        if self.res[l as usize].of(x, d) {
                            self.saw(if rehold {
                                "reservation holds again"
                            } else {
                                "reservation ends behind an older one"
                            });
                            let r = &mut self.res[l as usize];
                            if rehold {
                                r.holds = true;
                            } else {
                                *r = LinkRes::default();
                            }
                        }
                    }
                    w
                }
            };
            backlog.insert(d, wait);
        }
        self.hosts[x as usize].backlog = backlog;
    }

    /// True if a link of `path` (x's flow aged `since`) is held by an older
    /// starving flow of another node (age, then node index, orders them).
    fn behind_older(&self, x: u32, path: &[LinkId], since: Time) -> bool {
        path.iter().any(|&l| {
            self.res[l as usize]
                .live()
                .is_some_and(|r| r.owner != x && (r.since, r.owner) < (since, x))
        })
    }

    /// Node x's starving flow to `d` (aged `since`) reserves its path,
    /// unless it is behind an older flow; younger flows it takes links from
    /// give up their whole paths.
    fn reserve(&mut self, x: u32, d: u32, since: Time) {
        let path = self.path(x, d);
        if self.behind_older(x, &path, since) {
            self.saw("starving flow behind an older one");
            return;
        }
        self.saw("reservation");
        let mut displaced = Vec::new();
        for &l in &path {
            if let Some(r) = self.res[l as usize].live() {
                if r.owner != x {
                    self.saw("reservation taken over");
                    displaced.push((r.owner, r.dest));
                }
            }
            self.res[l as usize] = LinkRes {
                last: Some(Reservation {
                    owner: x,
                    dest: d,
                    since,
                }),
                holds: true,
            };
        }
        for (y, dy) in displaced {
            if self.hosts[y as usize].backlog.contains_key(&dy) {
                for l in self.path(y, dy) {
                    if self.res[l as usize].of(y, dy) {
                        self.res[l as usize] = LinkRes::default();
                    }
                }
            }
        }
    }

    /// Enter the start of service of x's flow to `d` into x's history,
    /// forgetting the entry with the oldest time (the first of equals, the
    /// last entry taking its place, as the scheduler does) when it is full.
    fn remember(&mut self, x: u32, d: u32, began: Time) {
        let served = &mut self.hosts[x as usize].served;
        match served.iter_mut().find(|e| e.0 == d) {
            Some(e) => e.1 = began,
            None => {
                if served.len() >= HISTORY {
                    *self.seen.entry("history forgets").or_insert(0) += 1;
                    let oldest = (0..served.len()).min_by_key(|&i| served[i].1).unwrap();
                    served.swap_remove(oldest);
                }
                served.push((d, began));
            }
        }
    }

    fn emit(&mut self, now: Time, x: u32, kind: DirectiveKind) {
        // a late call: the slice still ends where its slot does
        let late = self.input_now.saturating_since(now);
        let kind = match kind {
            DirectiveKind::Slice { dest, len, rate_bps } if late > Dur::ZERO => DirectiveKind::Slice {
                dest,
                len: (len - late).max(Dur::from_ns(1)),
                rate_bps,
            },
            k => k,
        };
        let start_in = now.saturating_since(self.input_now).min(self.cfg.lead);
        let host = &mut self.hosts[x as usize];
        host.epoch += 1;
        host.last_directive = now;
        self.stats.directives += 1;
        self.out.push_back(Directive {
            host: x,
            epoch: host.epoch,
            start_in,
            kind,
        });
    }

    // ------------------------------------------------------------------
    // Algorithm 1

    /// Node y may be (re)added to A: registered, not in N, and not sending
    /// for less than `min_active`.
    fn eligible(&self, now: Time, y: u32, n: &[u32]) -> bool {
        let host = &self.hosts[y as usize];
        host.joined
            && !n.contains(&y)
            && (host.dest.is_none() || now.saturating_since(host.active_since) >= self.cfg.min_active)
    }

    /// Traversal order of node y: the age of its oldest waiting flow (the
    /// flow it sends on does not wait; `now` if none waits), then its place
    /// in round robin from `rr`.
    fn order_key(&self, now: Time, y: u32, rr: u32) -> (Time, u32) {
        let host = &self.hosts[y as usize];
        let oldest = host
            .backlog
            .iter()
            .filter(|(&d, _)| Some(d) != host.dest)
            .map(|(_, &w)| w)
            .min()
            .unwrap_or(now);
        let h = self.hosts.len() as u32;
        (oldest, (y + h - rr) % h)
    }

    /// Algorithm 1 for the trigger nodes, already out of alpha (their
    /// transmissions freed `freed`) with their give-backs applied; if
    /// `waiting`, every registered host with backlog and no slice is a
    /// trigger too.
    fn algorithm1(&mut self, now: Time, triggers: &[u32], freed: &[LinkId], waiting: bool) {
        let h = self.hosts.len() as u32;
        let mut all: BTreeSet<u32> = triggers.iter().copied().collect();
        let mut any_waiting = false;
        if waiting {
            for y in 0..h {
                let host = &self.hosts[y as usize];
                if host.joined && !host.backlog.is_empty() && host.dest.is_none() {
                    all.insert(y);
                    any_waiting = true;
                }
            }
        }
        if triggers.is_empty() && freed.is_empty() && !any_waiting {
            return; // nothing happened: not a scheduling event
        }
        self.stats.events += 1;
        let rr = self.rr % h.max(1);
        // A := beta of every link of the triggers' backlogged paths and of
        // the links their transmissions freed
        let mut links: BTreeSet<LinkId> = freed.iter().copied().collect();
        for &t in &all {
            let dests: Vec<u32> = self.hosts[t as usize].backlog.keys().copied().collect();
            for d in dests {
                links.extend(self.path(t, d));
            }
        }
        let mut a = BTreeSet::new();
        for y in 0..h {
            if self.in_beta(y, &links) {
                if self.eligible(now, y, &[]) {
                    a.insert(y);
                } else if self.hosts[y as usize].joined {
                    self.saw("min_active protects a sender");
                }
            }
        }
        if any_waiting {
            self.saw("waiting hosts trigger a run");
        }
        // N, in the order its members were scheduled
        let mut n: Vec<u32> = Vec::new();
        while let Some(x) = a.iter().copied().min_by_key(|&y| self.order_key(now, y, rr)) {
            a.remove(&x);
            self.consider(now, x, &mut a, &mut n);
        }
        for x in n {
            let host = &mut self.hosts[x as usize];
            host.expires = now + self.cfg.slice;
            self.expiries.push((host.expires, x));
            let kind = DirectiveKind::Slice {
                dest: host.dest,
                len: self.cfg.slice,
                rate_bps: (self.cfg.mode == Mode::Hybrid).then_some(host.sending_bps),
            };
            self.emit(now, x, kind);
        }
    }

    /// The loop body for node x, just taken from A: D_x := the first of its
    /// destinations, in order, whose path is feasible; its oldest flow, if
    /// starving and not chosen, reserves; x is preempted from its old
    /// destination and joins N.
    fn consider(&mut self, now: Time, x: u32, a: &mut BTreeSet<u32>, n: &mut Vec<u32>) {
        self.stats.nodes_considered += 1;
        let flows: Vec<(u32, Time)> = self.hosts[x as usize]
            .backlog
            .iter()
            .map(|(&d, &w)| (d, w))
            .collect();
        if flows.is_empty() {
            return;
        }
        let dest = self.hosts[x as usize].dest;
        let start = self.hosts[x as usize].rot % flows.len();
        let order: Vec<usize> = (0..flows.len()).map(|i| (start + i) % flows.len()).collect();
        // the flow x sends on waits least
        let age = |j: usize| {
            if Some(flows[j].0) == dest {
                Time::NEVER
            } else {
                flows[j].1
            }
        };
        // feasibility F({x} ∪ alpha_ij, C_ij) on every link of the path, x
        // counted as if it sent nowhere; a reserved link fits every flow of
        // its holder and no flow of another node, whatever their ages (as
        // the scheduler does)
        let cx = self.host_bps[x as usize];
        let load = self.admitted_without(x);
        let mut feasible = Vec::new();
        for &j in &order {
            let path = self.path(x, flows[j].0);
            if path.is_empty() {
                continue; // no route
            }
            let c = match self.cfg.mode {
                Mode::Hybrid => path.iter().map(|&l| self.link_bps[l as usize]).fold(cx, u64::min),
                _ => cx,
            };
            let room = path
                .iter()
                .all(|&l| load.get(&l).copied().unwrap_or(0) + c <= self.link_bps[l as usize]);
            let free = path
                .iter()
                .all(|&l| self.res[l as usize].live().is_none_or(|r| r.owner == x));
            if room && !free {
                self.saw("a reserved link refuses a flow");
            }
            if room && free {
                feasible.push((j, c));
            }
        }
        // min_by_key keeps the first of equals: ties in rotated order
        let oldest = order.iter().copied().min_by_key(|&j| age(j)).unwrap();
        let chosen = feasible.iter().copied().min_by_key(|&(j, _)| age(j));
        // the flow that may reserve: the oldest of those that fit their
        // path on an idle network
        let mut can_fit = Vec::new();
        for &j in &order {
            let path = self.path(x, flows[j].0);
            let c = match self.cfg.mode {
                Mode::Hybrid => path.iter().map(|&l| self.link_bps[l as usize]).fold(cx, u64::min),
                _ => cx,
            };
            if !path.is_empty() && path.iter().all(|&l| c <= self.link_bps[l as usize]) {
                can_fit.push(j);
            } else if Some(flows[j].0) != dest && now.saturating_since(flows[j].1) > self.cfg.slice.doubled()
            {
                self.saw("a flow that can never fit starves");
            }
        }
        if let Some(r) = can_fit.iter().copied().min_by_key(|&j| age(j)) {
            let (d0, w0) = flows[r];
            let starving = Some(d0) != dest && now.saturating_since(w0) > self.cfg.slice.doubled();
            if starving && chosen.map(|c| c.0) != Some(r) {
                if r != oldest {
                    self.saw("an older flow that can never fit does not hide one that can");
                }
                self.reserve(x, d0, w0);
            }
        }
        if let Some((j, c)) = chosen {
            if j == oldest {
                self.hosts[x as usize].rot = j + 1;
            }
            self.grant(now, x, flows[j].0, c, a, n);
        }
    }

    /// D_x := d, contributing `c_bps`: preempt x's old transmission (the
    /// links it no longer uses drain until its old slice ends; if that is
    /// over, they add their contention groups, less N, to A now), admit the
    /// new one, end x's reservations on its path for d, and start the
    /// flow's service (if d is new for x).
    fn grant(&mut self, now: Time, x: u32, d: u32, c_bps: u64, a: &mut BTreeSet<u32>, n: &mut Vec<u32>) {
        if n.is_empty() {
            self.rr = (x + 1) % self.hosts.len() as u32;
        }
        n.push(x);
        let new_path = self.path(x, d);
        let old = self.hosts[x as usize].dest;
        match old {
            Some(o) if o == d => self.saw("a sender keeps its destination"),
            Some(_) => self.saw("preemption"),
            None => {}
        }
        if let Some(o) = old {
            let left: Vec<LinkId> = self
                .path(x, o)
                .into_iter()
                .filter(|l| !new_path.contains(l))
                .collect();
            let (end, bps) = (self.hosts[x as usize].expires, self.hosts[x as usize].sending_bps);
            let drains = end > now;
            if drains && !left.is_empty() {
                self.saw("a preempted sender's links drain");
                self.drains.push((end, x, bps, left.clone()));
            } else if !left.is_empty() {
                self.saw("a preemption after the old slice's end frees at once");
            }
            let free_now = if drains { Vec::new() } else { left };
            for l in free_now {
                for y in self.beta(l) {
                    if !a.contains(&y) && self.eligible(now, y, n) {
                        self.saw("preemption affects a node");
                        a.insert(y);
                    }
                }
            }
        }
        for &l in &new_path {
            if self.res[l as usize]
                .live()
                .is_some_and(|r| r.owner == x && r.dest == d)
            {
                self.saw("a reserving flow is served");
                self.res[l as usize] = LinkRes::default(); // served
            }
        }
        let host = &mut self.hosts[x as usize];
        host.dest = Some(d);
        host.sending_bps = c_bps;
        if old != Some(d) {
            host.active_since = now;
            // it is now the youngest of x's flows, behind every flow that
            // waits since this instant (as the scheduler does)
            let began = now + Dur(1);
            host.backlog.insert(d, began);
            self.remember(x, d, began);
        }
    }

    // ------------------------------------------------------------------
    // the rate form and the tick

    /// Rate form: recompute the rates of trigger x and of the contention
    /// groups of x's paths after the change (as the scheduler does: a host
    /// whose share grew on a link x left waits for the refresh); send those
    /// that changed.
    fn recompute_rates(&mut self, now: Time, x: u32) {
        self.stats.events += 1;
        let mut links = BTreeSet::new();
        let dests: Vec<u32> = self.hosts[x as usize].backlog.keys().copied().collect();
        for d in dests {
            links.extend(self.path(x, d));
        }
        let mut affected = BTreeSet::from([x]);
        for y in 0..self.hosts.len() as u32 {
            if self.in_beta(y, &links) {
                affected.insert(y);
            }
        }
        let beta = self.beta_sizes();
        for y in affected {
            self.send_rates(now, y, false, &beta);
        }
    }

    /// Send host x its rates if they changed (always if `refresh`): per
    /// destination min(C_x, min over the path of C_ij / |beta_ij|), with
    /// |beta| from `beta`.
    fn send_rates(&mut self, now: Time, x: u32, refresh: bool, beta: &BTreeMap<LinkId, usize>) {
        if !self.hosts[x as usize].joined {
            return;
        }
        let dests: Vec<u32> = self.hosts[x as usize].backlog.keys().copied().collect();
        let mut rates = Vec::new();
        for d in dests {
            let mut rate = self.host_bps[x as usize];
            for l in self.path(x, d) {
                let share = self.link_bps[l as usize] / beta.get(&l).copied().unwrap_or(0).max(1) as u64;
                rate = rate.min(share);
            }
            rates.push((d, rate));
        }
        if refresh || rates != self.hosts[x as usize].rates {
            self.saw(if refresh {
                "rates refreshed"
            } else {
                "rates change"
            });
            self.hosts[x as usize].rates = rates.clone();
            self.emit(now, x, DirectiveKind::Rates { rates });
        }
    }

    /// Every slice: rate form, every backlogged host's rates again; slice
    /// forms, "wait" to backlogged hosts without a slice that got no
    /// directive for a slice.
    fn tick(&mut self, now: Time) {
        let beta = match self.cfg.mode {
            Mode::RateLimit => self.beta_sizes(),
            _ => BTreeMap::new(),
        };
        for x in 0..self.hosts.len() as u32 {
            let host = &self.hosts[x as usize];
            if !host.joined || host.backlog.is_empty() {
                continue;
            }
            if self.cfg.mode == Mode::RateLimit {
                self.send_rates(now, x, true, &beta);
            } else if host.dest.is_none() && now.saturating_since(host.last_directive) >= self.cfg.slice {
                let kind = DirectiveKind::Slice {
                    dest: None,
                    len: self.cfg.slice,
                    rate_bps: None,
                };
                self.saw("wait directive");
                self.emit(now, x, kind);
            }
        }
    }
}
