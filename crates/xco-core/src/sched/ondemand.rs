//! On-demand coordination (the XCo paper's proposed "active" mode): the
//! controller coordinates only the links whose demand exceeds their
//! capacity, and on them only the large V2V flows; every other (source,
//! destination) pair is *ungated*: its host sends to it as if there were no
//! coordinator. Sans I/O, shared by the controller node and the simulator.
//!
//! Input: each host's demand report ([`crate::wire::Message::Demand`]: per
//! destination, the bytes offered to it over the last report interval and
//! the bytes held now) and its backlog reports; output: per host, the set
//! of destinations it may send to ungated ([`OnDemand::poll_ungate`], a
//! signed [`crate::wire::Message::Ungate`] on the wire), and the backlog the
//! scheduler sees (only the coordinated pairs).
//!
//! The decision, made every report interval (the window `W`):
//!
//! - a pair's demand is `max(offered, held) * 8 / W` bit/s; a link's demand
//!   is the sum over the pairs whose path crosses it (small flows included:
//!   they load it too), its *potential* the sum of C_x over their senders;
//! - a link **turns congested** when its demand reaches `congestion_ratio`
//!   of its capacity and its potential exceeds the capacity (senders that
//!   together cannot overrun it never need coordination: one host filling
//!   its own path is not congestion); it **turns calm** only after its
//!   demand stayed below half that, or its potential within its capacity,
//!   for `hold` (hysteresis in level and in time, so it does not flap);
//! - a pair is **coordinated** if a link of its path is congested and it
//!   is either large (`max(offered, held) >= threshold_bytes`) or was
//!   coordinated before: when a link turns congested, small flows that were
//!   sending ungated stay so, and a coordinated flow stays coordinated
//!   while the congestion lasts (its share of a coordinated link may be
//!   small);
//! - every pair starts coordinated (agents hold traffic to a destination
//!   the controller has not ungated), and a pair is ungated only once its
//!   demand was reported for a whole window, so the controller has heard
//!   every host that started sending with it (a synchronized incast is
//!   coordinated from its first burst, as without on-demand).
//!
//! A host's ungated set is its whole state: each [`OnDemand::poll_ungate`]
//! gives the complete set, so a lost or duplicated one does no harm.

use super::scheduler::Scheduler;
use super::topology::LinkId;
use crate::time::{Dur, Time};
use std::collections::VecDeque;

/// On-demand settings (`on_demand`, `threshold_bytes`, `congestion_ratio`,
/// `on_demand_hold_ms` of the shared settings).
#[derive(Clone, Debug, PartialEq)]
pub struct OnDemandConfig {
    /// A pair with at least this many bytes offered (or held) over a window is large.
    pub threshold_bytes: u64,
    /// A link turns congested when its demand reaches this share of its capacity.
    pub congestion_ratio: f64,
    /// The window demand is measured over (the hosts' report interval).
    pub window: Dur,
    /// A congested link turns calm after its demand stayed below half the ratio this long.
    pub hold: Dur,
}

/// One destination of a host's demand report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemandEntry {
    /// Destination host.
    pub dest: u32,
    /// Bytes offered to it (held or passed ungated) over the last window.
    pub offered_bytes: u64,
    /// Bytes held for it now.
    pub held_bytes: u64,
    /// In the host's backlog set B_x (what a backlog report would list).
    pub backlogged: bool,
}

impl DemandEntry {
    fn bytes(&self) -> u64 {
        self.offered_bytes.max(self.held_bytes)
    }
}

/// A reported pair and since when it has been reported without a break.
#[derive(Clone, Copy, Debug)]
struct Pair {
    entry: DemandEntry,
    since: Time,
}

#[derive(Clone, Copy, Debug, Default)]
struct LinkState {
    congested: bool,
    /// While congested: when the link last went calm (`None`: not calm).
    calm_since: Option<Time>,
}

/// Counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OnDemandStats {
    /// Evaluations made.
    pub evaluations: u64,
    /// Links that turned congested.
    pub congested: u64,
    /// Links that turned calm.
    pub calmed: u64,
    /// Ungated sets handed out.
    pub ungates: u64,
}

/// The on-demand decision. See the module documentation.
pub struct OnDemand {
    cfg: OnDemandConfig,
    /// Per host: when its latest demand report came, and its pairs (sorted by destination).
    demand: Vec<(Time, Vec<Pair>)>,
    /// Per host: the backlog it last reported (all destinations).
    backlog: Vec<Vec<u32>>,
    /// Per host: the destinations it may send to ungated (sorted).
    ungated: Vec<Vec<u32>>,
    links: Vec<LinkState>,
    next_eval: Time,
    out: VecDeque<(u32, Vec<u32>)>,
    link_demand_bps: Vec<u64>,
    link_potential_bps: Vec<u64>,
    link_sender: Vec<u32>,
    path: Vec<LinkId>,
    /// Counters.
    pub stats: OnDemandStats,
}

/// A demand report older than this many windows counts as none (the host stopped sending).
const STALE_WINDOWS: u64 = 2;

impl OnDemand {
    /// The decision for `hosts` hosts over `links` links.
    pub fn new(cfg: OnDemandConfig, hosts: usize, links: usize) -> OnDemand {
        OnDemand {
            cfg,
            demand: vec![(Time::ZERO, Vec::new()); hosts],
            backlog: vec![Vec::new(); hosts],
            ungated: vec![Vec::new(); hosts],
            links: vec![LinkState::default(); links],
            next_eval: Time::NEVER,
            out: VecDeque::new(),
            link_demand_bps: vec![0; links],
            link_potential_bps: vec![0; links],
            link_sender: vec![u32::MAX; links],
            path: Vec::new(),
            stats: OnDemandStats::default(),
        }
    }

    fn stale_after(&self) -> Dur {
        Dur::from_ps(self.cfg.window.ps().saturating_mul(STALE_WINDOWS))
    }

    /// Settings.
    pub fn config(&self) -> &OnDemandConfig {
        &self.cfg
    }

    /// True if link `l` is congested (coordinated).
    pub fn congested(&self, l: LinkId) -> bool {
        self.links[l as usize].congested
    }

    /// The destinations host `x` may send to ungated.
    pub fn ungated(&self, x: u32) -> &[u32] {
        &self.ungated[x as usize]
    }

    /// True if the pair (x, d) is coordinated (not ungated).
    pub fn coordinated(&self, x: u32, d: u32) -> bool {
        self.ungated[x as usize].binary_search(&d).is_err()
    }

    /// Host `x` reports its demand at `now` (destinations outside the hosts are ignored).
    pub fn handle_demand(&mut self, now: Time, x: u32, entries: &[DemandEntry]) {
        let hosts = self.demand.len() as u32;
        let stale_after = self.stale_after();
        let (at, old) = &mut self.demand[x as usize];
        let fresh = now.saturating_since(*at) <= stale_after;
        let mut pairs: Vec<Pair> = entries
            .iter()
            .filter(|e| e.dest != x && e.dest < hosts && e.bytes() > 0)
            .map(|&entry| {
                let since = old
                    .iter()
                    .find(|p| p.entry.dest == entry.dest)
                    .filter(|_| fresh)
                    .map_or(now, |p| p.since);
                Pair { entry, since }
            })
            .collect();
        pairs.sort_unstable_by_key(|p| p.entry.dest);
        pairs.dedup_by_key(|p| p.entry.dest);
        *at = now;
        *old = pairs;
        if self.next_eval == Time::NEVER {
            self.next_eval = now + self.cfg.window;
        }
    }

    /// Host `x` reports its backlog `dests` at `now`: the scheduler sees
    /// only its coordinated pairs.
    ///
    /// A backlog for a destination the host should send to ungated says it
    /// did not get its set (the datagram was lost): the set is sent again.
    pub fn handle_backlog(&mut self, now: Time, x: u32, dests: &[u32], sched: &mut Scheduler) {
        if dests.iter().any(|&d| !self.coordinated(x, d)) {
            self.resend(x);
        }
        let b = &mut self.backlog[x as usize];
        b.clear();
        b.extend_from_slice(dests);
        self.feed(now, x, sched);
    }

    /// Host `x` did not get its latest set (lost, or reordered behind a
    /// newer datagram): it is sent again, unless already on its way out.
    pub fn resend(&mut self, x: u32) {
        if !self.out.iter().any(|o| o.0 == x) {
            self.out.push_back((x, self.ungated[x as usize].clone()));
        }
    }

    /// Host `x` left or was dropped: forget its demand and its ungated set
    /// (it starts coordinated when it comes back).
    pub fn forget(&mut self, x: u32) {
        self.demand[x as usize] = (Time::ZERO, Vec::new());
        self.backlog[x as usize].clear();
        self.ungated[x as usize].clear();
    }

    fn feed(&mut self, now: Time, x: u32, sched: &mut Scheduler) {
        let want: Vec<u32> = self.backlog[x as usize]
            .iter()
            .copied()
            .filter(|&d| self.coordinated(x, d))
            .collect();
        sched.handle_backlog(now, x, &want);
    }

    /// When [`OnDemand::handle_timeout`] is next due (the next evaluation).
    pub fn poll_timeout(&self) -> Option<Time> {
        (self.next_eval != Time::NEVER).then_some(self.next_eval)
    }

    /// An evaluation due at `now` is skipped (the controller grants nothing
    /// now: a fence): the next is one window later.
    pub fn defer(&mut self, now: Time) {
        if now >= self.next_eval {
            self.next_eval = now + self.cfg.window;
        }
    }

    /// Evaluate if due at `now`: update the links' congestion and every
    /// host's ungated set; a host whose set changed gets its new set
    /// ([`OnDemand::poll_ungate`]) and the scheduler its coordinated backlog.
    pub fn handle_timeout(&mut self, now: Time, sched: &mut Scheduler) {
        if now < self.next_eval {
            return;
        }
        self.next_eval = now + self.cfg.window;
        self.stats.evaluations += 1;
        self.measure(now, sched);
        self.update_links(now, sched);
        for x in 0..self.demand.len() as u32 {
            self.decide(now, x, sched);
        }
    }

    /// Each link's demand and potential from the fresh reports.
    fn measure(&mut self, now: Time, sched: &mut Scheduler) {
        self.link_demand_bps.iter_mut().for_each(|v| *v = 0);
        self.link_potential_bps.iter_mut().for_each(|v| *v = 0);
        self.link_sender.iter_mut().for_each(|v| *v = u32::MAX);
        let window_ps = self.cfg.window.ps().max(1) as u128;
        let stale_after = self.stale_after();
        for x in 0..self.demand.len() {
            let (at, pairs) = &self.demand[x];
            if pairs.is_empty() || now.saturating_since(*at) > stale_after {
                continue;
            }
            let c_x = sched.host_bps(x as u32);
            for p in pairs {
                let bps = (p.entry.bytes() as u128 * 8 * crate::time::PS_PER_S as u128 / window_ps)
                    .min(u64::MAX as u128) as u64;
                sched.path_into(x as u32, p.entry.dest, &mut self.path);
                for &l in &self.path {
                    let l = l as usize;
                    self.link_demand_bps[l] = self.link_demand_bps[l].saturating_add(bps);
                    if self.link_sender[l] != x as u32 {
                        self.link_sender[l] = x as u32;
                        self.link_potential_bps[l] = self.link_potential_bps[l].saturating_add(c_x);
                    }
                }
            }
        }
    }

    fn update_links(&mut self, now: Time, sched: &Scheduler) {
        for l in 0..self.links.len() {
            let cap = sched.link_bps(l as LinkId);
            let demand = self.link_demand_bps[l] as f64;
            let overrun = self.link_potential_bps[l] > cap;
            let over = overrun && demand >= self.cfg.congestion_ratio * cap as f64;
            let calm = !overrun || demand < self.cfg.congestion_ratio / 2.0 * cap as f64;
            let s = &mut self.links[l];
            if !s.congested {
                if over {
                    *s = LinkState {
                        congested: true,
                        calm_since: None,
                    };
                    self.stats.congested += 1;
                }
            } else if !calm {
                s.calm_since = None;
            } else {
                let since = *s.calm_since.get_or_insert(now);
                if now.saturating_since(since) >= self.cfg.hold {
                    *s = LinkState::default();
                    self.stats.calmed += 1;
                }
            }
        }
    }

    /// Host `x`'s ungated set: the pairs it reported for a whole window
    /// whose path is calm, or that are small and were ungated already;
    /// pairs ungated before stay so while their path is calm.
    fn decide(&mut self, now: Time, x: u32, sched: &mut Scheduler) {
        let xi = x as usize;
        let fresh = now.saturating_since(self.demand[xi].0) <= self.stale_after();
        let mut next: Vec<u32> = Vec::new();
        let mut candidates: Vec<(u32, Option<Pair>)> = self.ungated[xi].iter().map(|&d| (d, None)).collect();
        if fresh {
            for p in &self.demand[xi].1 {
                match candidates.iter_mut().find(|c| c.0 == p.entry.dest) {
                    Some(c) => c.1 = Some(*p),
                    None => candidates.push((p.entry.dest, Some(*p))),
                }
            }
        }
        for (d, pair) in candidates {
            let was_ungated = self.ungated[xi].binary_search(&d).is_ok();
            sched.path_into(x, d, &mut self.path);
            let congested = self.path.iter().any(|&l| self.links[l as usize].congested);
            let large = pair.is_some_and(|p| p.entry.bytes() >= self.cfg.threshold_bytes);
            let ungate = if congested {
                was_ungated && !large
            } else {
                was_ungated || pair.is_some_and(|p| now.saturating_since(p.since) >= self.cfg.window)
            };
            if ungate {
                next.push(d);
            }
        }
        next.sort_unstable();
        if next != self.ungated[xi] {
            self.ungated[xi] = next.clone();
            self.stats.ungates += 1;
            self.out.push_back((x, next));
            self.feed(now, x, sched);
        }
    }

    /// The next host whose ungated set changed, with the whole set.
    pub fn poll_ungate(&mut self) -> Option<(u32, Vec<u32>)> {
        self.out.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{BfsPaths, SchedConfig, SchedTopology};

    const G: u64 = 1_000_000_000;
    const W_MS: u64 = 8;

    /// Hosts 0..3 on one switch (node 4), 1 Gbit/s everywhere; links:
    /// host i -> switch is 2i, switch -> host i is 2i + 1.
    fn star() -> Scheduler {
        let mut links = Vec::new();
        for h in 0..4 {
            links.push((h, 4));
            links.push((4, h));
        }
        let paths = BfsPaths::new(5, vec![true, true, true, true, false], &links);
        let topo = SchedTopology::new(vec![G; 4], vec![G; links.len()], Box::new(paths));
        Scheduler::new(topo, SchedConfig::default())
    }

    fn od() -> OnDemand {
        OnDemand::new(
            OnDemandConfig {
                threshold_bytes: 15_000,
                congestion_ratio: 0.9,
                window: Dur::from_ms(W_MS),
                hold: Dur::from_ms(40),
            },
            4,
            8,
        )
    }

    /// Bytes over one window at `mbps`.
    fn at_mbps(mbps: u64) -> u64 {
        mbps * 1_000_000 / 8 * W_MS / 1000
    }

    fn report(o: &mut OnDemand, now: Time, x: u32, flows: &[(u32, u64)]) {
        let e: Vec<DemandEntry> = flows
            .iter()
            .map(|&(dest, b)| DemandEntry {
                dest,
                offered_bytes: b,
                held_bytes: 0,
                backlogged: false,
            })
            .collect();
        o.handle_demand(now, x, &e);
    }

    fn ms(t: u64) -> Time {
        Time::ZERO + Dur::from_ms(t)
    }

    #[test]
    fn one_sender_filling_its_path_is_ungated_after_a_window() {
        let (mut s, mut o) = (star(), od());
        report(&mut o, ms(0), 0, &[(1, at_mbps(1000))]);
        o.handle_timeout(ms(W_MS), &mut s);
        assert_eq!(
            o.poll_ungate(),
            Some((0, vec![1])),
            "a whole window heard, nothing can overrun"
        );
        assert!(!o.congested(3), "one host cannot overrun the receiver's link");
    }

    #[test]
    fn a_new_pair_waits_a_whole_window_so_a_synchronized_incast_stays_coordinated() {
        let (mut s, mut o) = (star(), od());
        report(&mut o, ms(3), 0, &[(3, at_mbps(400))]);
        o.handle_timeout(ms(W_MS), &mut s);
        assert_eq!(o.poll_ungate(), None, "heard for 5 ms only: still coordinated");
        // the others' first reports come within the window
        report(&mut o, ms(9), 1, &[(3, at_mbps(400))]);
        report(&mut o, ms(10), 2, &[(3, at_mbps(400))]);
        report(&mut o, ms(11), 0, &[(3, at_mbps(400))]);
        o.handle_timeout(ms(2 * W_MS), &mut s);
        assert!(o.congested(7), "1.2 Gbit/s into a 1-Gbit/s link");
        assert_eq!(o.poll_ungate(), None, "nobody is ungated");
    }

    #[test]
    fn congestion_has_hysteresis_in_level_and_time() {
        let (mut s, mut o) = (star(), od());
        let mut t = 0;
        let mut tick = |o: &mut OnDemand, s: &mut Scheduler, mbps: u64| {
            report(o, ms(t), 0, &[(3, at_mbps(mbps))]);
            report(o, ms(t), 1, &[(3, at_mbps(mbps))]);
            t += W_MS;
            o.handle_timeout(ms(t), s);
            o.congested(7)
        };
        assert!(!tick(&mut o, &mut s, 300), "600 of 1000 Mbit/s: calm");
        assert_eq!(o.poll_ungate(), Some((0, vec![3])));
        assert_eq!(o.poll_ungate(), Some((1, vec![3])));
        assert!(tick(&mut o, &mut s, 460), "920 Mbit/s >= 90 %: congested");
        assert_eq!(o.poll_ungate(), Some((0, vec![])), "large flows are coordinated");
        assert_eq!(o.poll_ungate(), Some((1, vec![])));
        // below the entry level but above half of it: stays congested however long
        for _ in 0..10 {
            assert!(tick(&mut o, &mut s, 300), "600 Mbit/s is above 45 %: no flapping");
        }
        // below half: calm only after the hold (40 ms: five windows)
        for i in 0..5 {
            assert!(tick(&mut o, &mut s, 100), "calm for {} ms of 40", i * W_MS);
        }
        assert!(!tick(&mut o, &mut s, 100), "calm for the hold: ungated again");
        assert_eq!(o.poll_ungate(), Some((0, vec![3])));
        // one window back above half resets the hold
        assert!(tick(&mut o, &mut s, 460));
        o.poll_ungate();
        o.poll_ungate();
        assert!(tick(&mut o, &mut s, 100));
        assert!(
            tick(&mut o, &mut s, 300),
            "above half again: the calm time starts over"
        );
        for _ in 0..5 {
            assert!(tick(&mut o, &mut s, 100));
        }
        assert!(!tick(&mut o, &mut s, 100));
        assert_eq!(o.stats.congested, 2);
        assert_eq!(o.stats.calmed, 2);
    }

    #[test]
    fn small_ungated_flows_stay_ungated_when_their_link_turns_congested() {
        let (mut s, mut o) = (star(), od());
        for t in [0, W_MS] {
            report(&mut o, ms(t), 0, &[(3, at_mbps(5))]);
            report(&mut o, ms(t), 1, &[(3, at_mbps(100))]);
            o.handle_timeout(ms(t + W_MS), &mut s);
        }
        assert_eq!((o.ungated(0), o.ungated(1)), (&[3][..], &[3][..]));
        report(&mut o, ms(2 * W_MS), 0, &[(3, at_mbps(5))]);
        report(&mut o, ms(2 * W_MS), 1, &[(3, at_mbps(500))]);
        report(&mut o, ms(2 * W_MS), 2, &[(3, at_mbps(500))]);
        o.handle_timeout(ms(3 * W_MS), &mut s);
        assert!(o.congested(7));
        assert_eq!(
            o.ungated(0),
            &[3],
            "5 Mbit/s: 5,000 B a window, under the threshold"
        );
        assert!(o.coordinated(1, 3) && o.coordinated(2, 3));
    }

    #[test]
    fn backlog_of_ungated_pairs_does_not_reach_the_scheduler() {
        let (mut s, mut o) = (star(), od());
        report(&mut o, ms(0), 0, &[(1, at_mbps(800)), (2, at_mbps(800))]);
        report(&mut o, ms(0), 3, &[(2, at_mbps(800))]);
        o.handle_timeout(ms(W_MS), &mut s);
        assert!(o.congested(5), "1.6 Gbit/s into h2");
        assert_eq!(o.ungated(0), &[1]);
        assert_eq!(o.poll_ungate(), Some((0, vec![1])));
        o.handle_backlog(ms(W_MS), 0, &[1, 2], &mut s);
        assert_eq!(s.backlog(0), &[2], "only the coordinated pair is scheduled");
        assert_eq!(
            o.poll_ungate(),
            Some((0, vec![1])),
            "h0 holds traffic for h1: it lost its set, which goes again"
        );
        o.forget(0);
        assert!(o.ungated(0).is_empty());
    }
}
