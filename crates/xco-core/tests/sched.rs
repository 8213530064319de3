//! The XCo scheduler against the spec: the paper's examples, work
//! conservation, the rate and hybrid forms, feedback timeouts, property
//! tests over random topologies with backlog churn, and its decisions pinned
//! by readable logs in `tests/golden/` (one line per input and per
//! directive; `XCO_GOLDEN=update cargo test -p xco-core --test sched`
//! rewrites them after a change made on purpose).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use xco_core::sched::{
    BfsPaths, Directive, DirectiveKind, FatTreePaths, Mode, SchedConfig, SchedTopology, Scheduler,
};
use xco_core::time::PS_PER_MS;
use xco_core::{Dur, Rng, Time};

const G: u64 = 1_000_000_000;

/// A tree network for tests: hosts 0..h, switches after them; links listed as (a, b, bps) both ways.
struct Net {
    hosts: usize,
    switches: usize,
    cables: Vec<(u32, u32, u64)>,
}

impl Net {
    fn topology(&self, host_bps: &[u64]) -> SchedTopology {
        let mut links = Vec::new();
        let mut caps = Vec::new();
        for &(a, b, c) in &self.cables {
            links.push((a, b));
            caps.push(c);
            links.push((b, a));
            caps.push(c);
        }
        let n = self.hosts + self.switches;
        let is_host = (0..n).map(|i| i < self.hosts).collect();
        SchedTopology::new(
            host_bps.to_vec(),
            caps,
            Box::new(BfsPaths::new(n, is_host, &links)),
        )
    }
}

/// Example (a): hosts 0..=5 on one switch (6), host 5 receives.
fn star(n: usize, bps: u64) -> Net {
    let sw = n as u32;
    Net {
        hosts: n,
        switches: 1,
        cables: (0..n as u32).map(|h| (h, sw, bps)).collect(),
    }
}

/// Example (b): 13 senders on switch A, 13 receivers on switch B, A-B at 10 Gb/s.
fn two_switch_13() -> Net {
    let (a, b) = (26u32, 27u32);
    let mut cables = vec![(a, b, 10 * G)];
    for i in 0..13 {
        cables.push((i, a, G));
        cables.push((13 + i, b, G));
    }
    Net {
        hosts: 26,
        switches: 2,
        cables,
    }
}

fn cfg(mode: Mode) -> SchedConfig {
    SchedConfig {
        mode,
        slice: Dur::from_ms(2),
        min_active: Dur::from_us(100),
        feedback_timeout: None,
        lead: Dur::ZERO,
    }
}

/// Drive the scheduler: apply directives, advance to each timeout. Returns
/// per slot (time) the set of (host, dest) sending.
struct Driver {
    s: Scheduler,
    now: Time,
    sending: BTreeMap<u32, u32>,
    log: Vec<Directive>,
}

impl Driver {
    fn new(s: Scheduler) -> Driver {
        Driver {
            s,
            now: Time::ZERO,
            sending: BTreeMap::new(),
            log: Vec::new(),
        }
    }
    fn drain(&mut self) {
        while let Some(d) = self.s.poll_directive() {
            if let DirectiveKind::Slice { dest, .. } = d.kind {
                match dest {
                    Some(dst) => {
                        self.sending.insert(d.host, dst);
                    }
                    None => {
                        self.sending.remove(&d.host);
                    }
                }
            }
            self.log.push(d);
        }
        // senders whose slice ended stop by themselves
        let s = &self.s;
        self.sending.retain(|&h, _| s.dest(h).is_some());
    }
    /// Advance to the next slice boundary: handle timers until a slice is granted.
    fn step(&mut self) {
        for _ in 0..1000 {
            let t = self.s.poll_timeout().expect("a timer is pending");
            self.now = t;
            let before = self.log.len();
            self.s.handle_timeout(t);
            self.drain();
            let granted = self.log[before..]
                .iter()
                .any(|d| matches!(d.kind, DirectiveKind::Slice { dest: Some(_), .. }));
            if granted {
                return;
            }
        }
        panic!("no slice granted in 1000 timer events");
    }
    fn check_capacity(&mut self) {
        let links = self.s.links();
        for l in 0..links as u32 {
            assert!(
                self.s.admitted_bps(l) <= self.s.link_bps(l),
                "link {l}: admitted {} > capacity {}",
                self.s.admitted_bps(l),
                self.s.link_bps(l)
            );
        }
    }
}

#[test]
fn five_hosts_into_one_port_get_exactly_one_sender_per_slot_rotating() {
    let net = star(6, G);
    let mut d = Driver::new(Scheduler::new(net.topology(&[G; 6]), cfg(Mode::Timeslice)));
    for h in 0..5 {
        d.s.handle_backlog(Time::ZERO, h, &[5]);
        d.drain();
    }
    let mut senders = Vec::new();
    for _ in 0..40 {
        assert_eq!(
            d.sending.len(),
            1,
            "exactly one sender at {:?}: {:?}",
            d.now,
            d.sending
        );
        senders.push(*d.sending.keys().next().unwrap());
        d.check_capacity();
        d.step();
    }
    for w in senders.windows(2) {
        assert_ne!(
            w[0], w[1],
            "successive slots go to different senders: {senders:?}"
        );
    }
    for w in senders.windows(5) {
        let set: BTreeSet<u32> = w.iter().copied().collect();
        assert_eq!(
            set.len(),
            5,
            "round robin: every 5 slots all 5 senders: {senders:?}"
        );
    }
}

#[test]
fn with_a_lead_each_slot_is_decided_that_long_before_its_boundary_and_says_so() {
    let lead = Dur::from_us(500);
    let net = star(6, G);
    let with_lead = |lead| SchedConfig {
        lead,
        ..cfg(Mode::Timeslice)
    };
    let mut a = Scheduler::new(net.topology(&[G; 6]), with_lead(Dur::ZERO));
    let mut b = Scheduler::new(net.topology(&[G; 6]), with_lead(lead));
    for h in 0..5 {
        a.handle_backlog(Time::ZERO, h, &[5]);
        b.handle_backlog(Time::ZERO, h, &[5]);
    }
    let first: Vec<Directive> = std::iter::from_fn(|| b.poll_directive()).collect();
    assert!(
        first.iter().all(|d| d.start_in == Dur::ZERO),
        "a report's directive starts at once: {first:?}"
    );
    while a.poll_directive().is_some() {}
    for _ in 0..20 {
        let due = a.poll_timeout().unwrap();
        let early = b.poll_timeout().unwrap();
        assert_eq!(early + lead, due, "the timer fires the lead early");
        a.handle_timeout(due);
        b.handle_timeout(early);
        let da: Vec<Directive> = std::iter::from_fn(|| a.poll_directive()).collect();
        let db: Vec<Directive> = std::iter::from_fn(|| b.poll_directive()).collect();
        assert!(!db.is_empty());
        for (x, y) in da.iter().zip(&db) {
            // the same decisions, for the same slots: only the start differs
            assert_eq!((x.host, x.epoch, &x.kind), (y.host, y.epoch, &y.kind));
            assert_eq!(
                (x.start_in, y.start_in),
                (Dur::ZERO, lead),
                "starts at the boundary"
            );
        }
        assert_eq!(da.len(), db.len());
    }
    // an input that arrives between the decision and the boundary is handled at the
    // boundary, so its directives start there too
    let early = b.poll_timeout().unwrap();
    b.handle_timeout(early);
    while b.poll_directive().is_some() {}
    let sender = (0..5).find(|&h| b.dest(h).is_some()).unwrap();
    b.handle_giveback(early + Dur::from_us(200), sender, 5);
    let d: Vec<Directive> = std::iter::from_fn(|| b.poll_directive()).collect();
    assert!(!d.is_empty(), "the returned slot goes to another host");
    assert!(d.iter().all(|d| d.start_in == Dur::from_us(300)), "{d:?}");
    // a directive sent later than decided starts that much sooner, never before now
    let aged = d[0].clone().aged(Dur::from_us(100));
    assert_eq!(aged.start_in, Dur::from_us(200));
    assert_eq!(d[0].clone().aged(Dur::from_ms(1)).start_in, Dur::ZERO);
}

#[test]
fn thirteen_hosts_over_a_10g_uplink_get_ten_per_slot_rotating_through_all() {
    let net = two_switch_13();
    let mut d = Driver::new(Scheduler::new(net.topology(&[G; 26]), cfg(Mode::Timeslice)));
    for h in 0..13 {
        d.s.handle_backlog(Time::ZERO, h, &[13 + h]);
    }
    d.drain();
    let mut count = [0u32; 13];
    let mut previous: Option<BTreeSet<u32>> = None;
    for _ in 0..26 {
        d.step();
        assert_eq!(
            d.sending.len(),
            10,
            "ten senders fill the 10 Gb/s uplink: {:?}",
            d.sending
        );
        d.check_capacity();
        let set: BTreeSet<u32> = d.sending.keys().copied().collect();
        if let Some(p) = &previous {
            assert_ne!(p, &set, "the set of senders rotates");
        }
        for &h in &set {
            count[h as usize] += 1;
        }
        previous = Some(set);
    }
    let (lo, hi) = (count.iter().min().unwrap(), count.iter().max().unwrap());
    assert!(
        *lo >= 18 && hi - lo <= 2,
        "all 13 share the slots evenly: {count:?}"
    );
}

#[test]
fn work_conservation_hands_a_returned_slice_to_another_host_at_once() {
    let net = star(6, G);
    let mut d = Driver::new(Scheduler::new(net.topology(&[G; 6]), cfg(Mode::Timeslice)));
    for h in 0..3 {
        d.s.handle_backlog(Time::ZERO, h, &[5]);
    }
    d.drain();
    let first = *d.sending.keys().next().unwrap();
    let t = Time(Dur::from_us(300).ps());
    d.s.handle_giveback(t, first, 5);
    d.drain();
    assert_eq!(d.sending.len(), 1);
    let next = *d.sending.keys().next().unwrap();
    assert_ne!(next, first, "another backlogged host got the returned capacity");
    let last = d.log.last().unwrap();
    assert_eq!(last.host, next);
    assert!(
        d.s.backlog(first).is_empty(),
        "the give-back removed the destination from B_x"
    );
}

#[test]
fn preemption_moves_a_sender_unless_it_just_started() {
    // host 0 has traffic for 4 and 5 and sends to 4; host 1 then needs 4
    for (min_active, preempted) in [(Dur::from_ms(1), false), (Dur::ZERO, true)] {
        let net = star(6, G);
        let mut c = cfg(Mode::Timeslice);
        c.min_active = min_active;
        let mut d = Driver::new(Scheduler::new(net.topology(&[G; 6]), c));
        d.s.handle_backlog(Time::ZERO, 0, &[4, 5]);
        d.drain();
        assert_eq!(d.s.dest(0), Some(4));
        d.s.handle_backlog(Time(Dur::from_us(10).ps()), 1, &[4]);
        d.drain();
        if preempted {
            assert_eq!(d.s.dest(0), Some(5), "host 0 is moved to its other destination");
        } else {
            assert_eq!(
                d.s.dest(0),
                Some(4),
                "a transmission younger than min_active is left alone"
            );
        }
        assert_eq!(d.s.dest(1), None, "either way host 1 waits for the link to 4");
    }
}

/// Host 0 of a 6-host star sends to 4 from 0 (its slice ends at 2 ms) and
/// has traffic for 5 too; at 500 us host 1 reports backlog for 4, and with
/// `min_active` zero host 0 is moved to 5; then host 0 reports that only 5
/// is left (it released all it had for 4). Returns the scheduler, the link
/// to 4 and the link to 5.
fn preempted_at_500us(mode: Mode, lead: Dur) -> (Scheduler, u32, u32) {
    let net = star(6, G);
    let c = SchedConfig {
        min_active: Dur::ZERO,
        lead,
        ..cfg(mode)
    };
    let mut s = Scheduler::new(net.topology(&[G; 6]), c);
    s.handle_backlog(Time::ZERO, 0, &[4]);
    assert_eq!(s.dest(0), Some(4));
    s.handle_backlog(Time::ZERO, 0, &[4, 5]);
    s.handle_backlog(Time(Dur::from_us(500).ps()), 1, &[4]);
    s.handle_backlog(Time(Dur::from_us(600).ps()), 0, &[5]);
    let (to4, to5) = (*s.path(0, 4).last().unwrap(), *s.path(0, 5).last().unwrap());
    (s, to4, to5)
}

#[test]
fn a_preempted_sender_s_freed_link_is_granted_when_its_old_slice_ends_not_before() {
    for mode in [Mode::Timeslice, Mode::Hybrid] {
        let (mut s, to4, to5) = preempted_at_500us(mode, Dur::ZERO);
        let ds: Vec<Directive> = std::iter::from_fn(|| s.poll_directive()).collect();
        // host 0 moves to 5 at once; the link to 4 still carries what host
        // 0 released for its old slice, so host 1 does not get it yet
        assert_eq!(s.dest(0), Some(5), "{mode:?}");
        assert_eq!(s.dest(1), None, "{mode:?}: {ds:?}");
        let end = Time(Dur::from_ms(2).ps());
        assert_eq!(s.draining(), vec![(0, vec![to4], G, end)], "{mode:?}");
        assert_eq!((s.admitted_bps(to4), s.active_senders(to4)), (G, 1));
        assert_eq!((s.admitted_bps(to5), s.active_senders(to5)), (G, 1));
        assert_eq!(s.poll_timeout(), Some(end), "the drain's end is a deadline");
        // a moment before the old slice's end: still held
        s.handle_timeout(Time(end.ps() - 1));
        assert_eq!(s.dest(1), None, "{mode:?}");
        assert!(s.poll_directive().is_none());
        // at its end the link is free and host 1 gets it at once
        s.handle_timeout(end);
        let ds: Vec<Directive> = std::iter::from_fn(|| s.poll_directive()).collect();
        assert_eq!(s.dest(1), Some(4), "{mode:?}");
        assert!(
            ds.iter().any(|d| d.host == 1
                && d.start_in == Dur::ZERO
                && matches!(d.kind, DirectiveKind::Slice { dest: Some(4), .. })),
            "{mode:?}: {ds:?}"
        );
        assert!(s.draining().is_empty());
        assert_eq!((s.admitted_bps(to4), s.active_senders(to4)), (G, 1));
        assert_eq!(s.dest(0), Some(5), "host 0's new slice goes on");
    }
}

#[test]
fn with_a_lead_a_drain_s_end_is_decided_the_lead_early_and_starts_at_the_old_slice_s_end() {
    let lead = Dur::from_us(300);
    let (mut s, _, _) = preempted_at_500us(Mode::Timeslice, lead);
    while s.poll_directive().is_some() {}
    assert_eq!(s.dest(1), None);
    let end = Time(Dur::from_ms(2).ps());
    let t = s.poll_timeout().unwrap();
    assert_eq!(t, Time(end.ps() - lead.ps()));
    s.handle_timeout(t);
    let ds: Vec<Directive> = std::iter::from_fn(|| s.poll_directive()).collect();
    let to1: Vec<&Directive> = ds.iter().filter(|d| d.host == 1).collect();
    assert_eq!(to1.len(), 1, "{ds:?}");
    assert_eq!(to1[0].start_in, lead, "it starts when the old slice ends");
    assert!(matches!(to1[0].kind, DirectiveKind::Slice { dest: Some(4), .. }));
}

#[test]
fn a_sender_preempted_after_its_slice_ended_frees_its_links_at_once() {
    // host 0's slice to 4 ends at 2 ms, but the timer has not run yet when
    // host 1's report arrives at 2.5 ms: nothing of that slice can still be
    // on the wire, so the link to 4 is host 1's now
    let net = star(6, G);
    let c = SchedConfig {
        min_active: Dur::ZERO,
        ..cfg(Mode::Timeslice)
    };
    let mut s = Scheduler::new(net.topology(&[G; 6]), c);
    s.handle_backlog(Time::ZERO, 0, &[4]);
    s.handle_backlog(Time::ZERO, 0, &[4, 5]);
    s.handle_backlog(Time(Dur::from_us(2500).ps()), 1, &[4]);
    assert_eq!((s.dest(0), s.dest(1)), (Some(5), Some(4)));
    assert!(s.draining().is_empty());
}

#[test]
fn the_links_a_preempted_sender_keeps_do_not_drain() {
    // two switches: hosts 0, 1 on switch 6, hosts 2..5 on switch 7; host 0
    // sends to 2 and is moved to 3: its uplink and the trunk stay its own,
    // only the downlink to 2 drains
    let net = Net {
        hosts: 6,
        switches: 2,
        cables: vec![
            (0, 6, G),
            (1, 6, G),
            (2, 7, G),
            (3, 7, G),
            (4, 7, G),
            (5, 7, G),
            (6, 7, 10 * G),
        ],
    };
    let c = SchedConfig {
        min_active: Dur::ZERO,
        ..cfg(Mode::Timeslice)
    };
    let mut s = Scheduler::new(net.topology(&[G; 6]), c);
    s.handle_backlog(Time::ZERO, 0, &[2]);
    s.handle_backlog(Time::ZERO, 0, &[2, 3]);
    s.handle_backlog(Time(Dur::from_us(100).ps()), 4, &[2]);
    assert_eq!((s.dest(0), s.dest(4)), (Some(3), None));
    let down2 = *s.path(0, 2).last().unwrap();
    let d = s.draining();
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].0, &d[0].1), (0, &vec![down2]));
    let trunk = s.path(0, 2)[1];
    assert_eq!(s.active_senders(trunk), 1, "the trunk counts host 0 once");
}

#[test]
fn rate_limit_gives_each_sender_its_share_of_the_tightest_link() {
    let net = star(6, G);
    let mut s = Scheduler::new(net.topology(&[G; 6]), cfg(Mode::RateLimit));
    for h in 0..5 {
        s.handle_backlog(Time::ZERO, h, &[5]);
    }
    let mut last = BTreeMap::new();
    while let Some(d) = s.poll_directive() {
        if let DirectiveKind::Rates { rates } = d.kind {
            last.insert(d.host, rates);
        }
    }
    for h in 0..5 {
        assert_eq!(last[&h], vec![(5, G / 5)], "1 Gb/s shared by 5 senders");
    }
    let net = two_switch_13();
    let mut s = Scheduler::new(net.topology(&[G; 26]), cfg(Mode::RateLimit));
    for h in 0..13 {
        s.handle_backlog(Time::ZERO, h, &[13 + h]);
    }
    let mut last = BTreeMap::new();
    while let Some(d) = s.poll_directive() {
        if let DirectiveKind::Rates { rates } = d.kind {
            last.insert(d.host, rates);
        }
    }
    for h in 0..13 {
        assert_eq!(last[&h], vec![(13 + h, 10 * G / 13)], "10/13 Gb/s each");
    }
}

#[test]
fn hybrid_schedules_a_host_faster_than_its_bottleneck_and_timeslice_cannot() {
    // host 0 has 10 Gb/s but its destination sits behind a 1 Gb/s link
    let net = Net {
        hosts: 2,
        switches: 1,
        cables: vec![(0, 2, 10 * G), (1, 2, G)],
    };
    for (mode, want) in [(Mode::Timeslice, None), (Mode::Hybrid, Some(1))] {
        let mut s = Scheduler::new(net.topology(&[10 * G, G]), cfg(mode));
        s.handle_backlog(Time::ZERO, 0, &[1]);
        assert_eq!(s.dest(0), want, "{mode:?}");
        if mode == Mode::Hybrid {
            let d = s.poll_directive().unwrap();
            assert_eq!(
                d.kind,
                DirectiveKind::Slice {
                    dest: Some(1),
                    len: Dur::from_ms(2),
                    rate_bps: Some(G)
                }
            );
        }
    }
}

/// Hosts 0..n on one switch (n), host `x`'s cable and C_x at `bps[x]`.
fn star_of(bps: &[u64]) -> (Net, Vec<u64>) {
    let sw = bps.len() as u32;
    let net = Net {
        hosts: bps.len(),
        switches: 1,
        cables: (0..sw).map(|h| (h, sw, bps[h as usize])).collect(),
    };
    (net, bps.to_vec())
}

#[test]
fn a_flow_that_can_never_fit_does_not_starve_one_that_can() {
    // host 0 (10 Gb/s) and host 1 (1 Gb/s) both want host 3 (1 Gb/s): in
    // the timeslice form host 0 adds its full 10 Gb/s, which host 3's port
    // can never admit; its flow waits forever but must not reserve host
    // 3's port against host 1, which would then never be served again
    let (net, bps) = star_of(&[10 * G, G, G, G]);
    let mut d = Driver::new(Scheduler::new(net.topology(&bps), cfg(Mode::Timeslice)));
    d.s.handle_backlog(Time::ZERO, 0, &[3]);
    d.s.handle_backlog(Time::ZERO, 1, &[3]);
    d.drain();
    let end = Time(Dur::from_ms(200).ps());
    let mut grants = vec![Time::ZERO];
    let mut reserved = None;
    assert_eq!(d.s.dest(1), Some(3));
    while d.now < end {
        let t = d.s.poll_timeout().expect("a timer is pending");
        d.now = t;
        let before = d.log.len();
        d.s.handle_timeout(t);
        d.drain();
        for dir in &d.log[before..] {
            if let DirectiveKind::Slice { dest, .. } = dir.kind {
                assert!(dir.host != 0 || dest.is_none(), "host 0 cannot fit: {dir:?}");
                if dir.host == 1 && dest == Some(3) {
                    grants.push(t);
                }
            }
        }
        d.check_capacity();
        for l in 0..d.s.links() as u32 {
            if d.s.reservation(l).is_some_and(|r| r.0 == 0) {
                reserved.get_or_insert((t, l));
            }
        }
    }
    let slice = cfg(Mode::Timeslice).slice;
    for w in grants.windows(2) {
        assert!(
            w[1].saturating_since(w[0]) <= Dur(3 * slice.ps()),
            "host 1 waits from {:?} to {:?}; granted at {grants:?}",
            w[0],
            w[1]
        );
    }
    assert!(
        grants
            .last()
            .is_some_and(|&t| end.saturating_since(t) <= Dur(3 * slice.ps())),
        "host 1 is no longer served after {:?}",
        grants.last()
    );
    assert_eq!(reserved, None, "host 0's flow reserved (at, link)");
}

#[test]
fn a_flow_that_can_never_fit_does_not_keep_a_younger_one_of_its_node_from_reserving() {
    // host 0 (10 Gb/s) wants host 1 (1 Gb/s: can never fit) and host 5
    // (10 Gb/s), both since 1 us; hosts 2, 3, 4 (10 Gb/s) want host 5 since
    // 0 and take its port in turn at 0, 2 and 4 ms, and host 2 again at 6 ms
    // (its flow is older than host 0's). Then host 0's flow to 5 has
    // waited more than two slices and is not chosen: it reserves its path,
    // although its flow to 1 is as old and comes first in its order (that
    // one would hold host 0's uplink and host 1's port in vain, for ever)
    let (net, bps) = star_of(&[10 * G, G, 10 * G, 10 * G, 10 * G, 10 * G]);
    let mut s = Scheduler::new(net.topology(&bps), cfg(Mode::Timeslice));
    let at = |us: u64| Time(Dur::from_us(us).ps());
    for x in [2, 3, 4] {
        s.handle_backlog(at(0), x, &[5]);
    }
    s.handle_backlog(at(1), 0, &[1, 5]);
    let mut granted = Vec::new();
    while let Some(t) = s.poll_timeout().filter(|&t| t <= at(6000)) {
        s.handle_timeout(t);
        while s.poll_directive().is_some() {}
        granted.push(s.dest(2).or(s.dest(3)).or(s.dest(4)));
        assert_eq!(s.dest(0), None);
    }
    assert_eq!(s.dest(2), Some(5), "host 2 sends at 6 ms; granted {granted:?}");
    let (up0, down1, down5) = (s.path(0, 5)[0], s.path(0, 1)[1], s.path(0, 5)[1]);
    assert_eq!(s.reservation(down5).map(|r| (r.0, r.1)), Some((0, 5)));
    assert_eq!(s.reservation(up0).map(|r| (r.0, r.1)), Some((0, 5)));
    assert_eq!(s.reservation(down1), None, "host 0's flow to 1 reserves nothing");
    // so host 0 is served next, before the younger flows of hosts 3 and 4
    s.handle_timeout(at(8000));
    assert_eq!(s.dest(0), Some(5));
}

#[test]
fn a_host_whose_feedback_stops_is_dropped_and_its_capacity_reused() {
    let net = star(6, G);
    let mut c = cfg(Mode::Timeslice);
    c.feedback_timeout = Some(Dur::from_ms(5));
    c.slice = Dur::from_ms(10);
    let mut s = Scheduler::new(net.topology(&[G; 6]), c);
    s.handle_backlog(Time::ZERO, 0, &[5]);
    s.handle_backlog(Time::ZERO, 1, &[5]);
    assert_eq!(s.dest(0), Some(5));
    // host 1 keeps reporting, host 0 goes silent
    for ms in 1..=7u64 {
        s.handle_feedback(Time(Dur::from_ms(ms).ps()), 1);
        s.handle_timeout(Time(Dur::from_ms(ms).ps()));
    }
    assert!(!s.joined(0), "host 0 was dropped");
    assert_eq!(s.stats().hosts_timed_out, 1);
    // it may still be sending (only its reports may be lost): its link
    // drains until its slice's end at 10 ms, then goes to host 1
    assert_eq!(s.dest(1), None, "host 0's slice still runs");
    let end = Time(Dur::from_ms(10).ps());
    assert_eq!(
        s.draining().iter().map(|d| (d.0, d.3)).collect::<Vec<_>>(),
        vec![(0, end)]
    );
    for ms in 8..=9u64 {
        s.handle_feedback(Time(Dur::from_ms(ms).ps()), 1);
        s.handle_timeout(Time(Dur::from_ms(ms).ps()));
        assert_eq!(s.dest(1), None);
    }
    s.handle_timeout(end);
    assert_eq!(s.dest(1), Some(5), "its capacity went to host 1");
}

#[test]
fn a_feedback_timeout_found_at_a_deadline_decided_early_starts_its_directives_then() {
    // host 0's slice ends at 2 ms, the deadline handled the lead early at
    // 1.5 ms; its feedback stopped at 0, so that run drops it: the link it
    // held goes to host 1 from 2 ms (the lead after the call), not at once
    let net = star(6, G);
    let lead = Dur::from_us(500);
    let mut c = cfg(Mode::Timeslice);
    c.feedback_timeout = Some(Dur::from_ms(1));
    c.lead = lead;
    let mut s = Scheduler::new(net.topology(&[G; 6]), c);
    s.handle_backlog(Time::ZERO, 0, &[5]);
    s.handle_backlog(Time::ZERO, 1, &[5]);
    while s.poll_directive().is_some() {}
    assert_eq!((s.dest(0), s.dest(1)), (Some(5), None));
    s.handle_feedback(Time(Dur::from_ms(1).ps()), 1);
    let t = s.poll_timeout().unwrap();
    assert_eq!(t, Time(Dur::from_us(1500).ps()));
    s.handle_timeout(t);
    assert!(!s.joined(0) && s.dest(1) == Some(5));
    let ds: Vec<Directive> = std::iter::from_fn(|| s.poll_directive()).collect();
    let to1: Vec<&Directive> = ds.iter().filter(|d| d.host == 1).collect();
    assert_eq!(to1.len(), 1, "{ds:?}");
    assert_eq!(to1[0].start_in, lead, "{ds:?}");
}

// ---------------------------------------------------------------------------
// property tests over random trees with backlog churn

fn random_tree(rng: &mut Rng) -> (Net, Vec<u64>) {
    let switches = 1 + rng.below(5) as usize;
    let hosts = 3 + rng.below(14) as usize;
    let caps = [G, 10 * G, 40 * G];
    let mut cables = Vec::new();
    for s in 1..switches {
        let parent = rng.below(s as u64) as u32;
        cables.push((
            (hosts + s) as u32,
            (hosts as u32) + parent,
            caps[rng.below(3) as usize],
        ));
    }
    let mut host_bps = Vec::new();
    for h in 0..hosts {
        let sw = hosts as u32 + rng.below(switches as u64) as u32;
        let c = [G, G, 10 * G][rng.below(3) as usize];
        host_bps.push(c);
        cables.push((h as u32, sw, c));
    }
    (
        Net {
            hosts,
            switches,
            cables,
        },
        host_bps,
    )
}

/// Cross-check alpha against the nodes' destinations and drains, and
/// capacity on every link.
fn check_invariants(s: &mut Scheduler, hosts: usize) {
    let links = s.links();
    let mut load = vec![0u64; links];
    // a preempted node's old links, until its old slice ends
    for (x, left, _, end) in s.draining() {
        assert!(!left.is_empty(), "host {x} drains no link");
        assert!(
            end > s.now() || s.poll_timeout().is_some_and(|t| t <= end),
            "host {x}'s drain ended at {end} and was not freed"
        );
        for l in left {
            load[l as usize] += 1;
        }
    }
    for x in 0..hosts as u32 {
        if let Some(d) = s.dest(x) {
            assert!(
                s.backlog(x).contains(&d),
                "host {x} sends to {d}, which is not in B_x"
            );
            let path = s.path(x, d);
            for l in path {
                load[l as usize] += 1;
            }
        }
    }
    for l in 0..links as u32 {
        assert_eq!(
            s.active_senders(l) as u64,
            load[l as usize],
            "alpha of link {l} matches the nodes and drains"
        );
        assert!(s.admitted_bps(l) <= s.link_bps(l), "link {l} over capacity");
    }
    // a reservation holds while its flow waits
    for l in 0..links as u32 {
        let Some((y, d, _)) = s.reservation(l) else {
            continue;
        };
        assert!(
            s.backlog(y).contains(&d) && s.dest(y) != Some(d),
            "link {l} reserved for {y} -> {d}, which does not wait"
        );
    }
}

#[test]
fn property_capacity_is_never_exceeded_under_churn() {
    for case in 0..150u64 {
        let mut rng = Rng::new(case);
        let (net, host_bps) = random_tree(&mut rng);
        let mode = [Mode::Timeslice, Mode::Hybrid][case as usize % 2];
        let mut s = Scheduler::new(net.topology(&host_bps), cfg(mode));
        let h = net.hosts as u32;
        let mut now = Time::ZERO;
        for _ in 0..300 {
            now += Dur::from_us(rng.below(3000));
            let x = rng.below(h as u64) as u32;
            match rng.below(4) {
                0 | 1 => {
                    let k = rng.below(4);
                    let ds: Vec<u32> = (0..k).map(|_| rng.below(h as u64) as u32).collect();
                    s.handle_backlog(now, x, &ds);
                }
                2 => {
                    if let Some(d) = s.dest(x) {
                        s.handle_giveback(now, x, d);
                    }
                }
                _ => {
                    if let Some(t) = s.poll_timeout() {
                        if t <= now {
                            s.handle_timeout(now);
                        }
                    }
                }
            }
            while s.poll_directive().is_some() {}
            check_invariants(&mut s, net.hosts);
        }
    }
}

#[test]
fn property_no_backlogged_flow_starves_and_schedules_change() {
    for case in 0..150u64 {
        let mut rng = Rng::new(1000 + case);
        let (net, host_bps) = random_tree(&mut rng);
        let h = net.hosts as u32;
        // hybrid: every pair is schedulable (timeslice cannot schedule a host faster than its bottleneck)
        let mut d = Driver::new(Scheduler::new(net.topology(&host_bps), cfg(Mode::Hybrid)));
        let mut pairs = BTreeSet::new();
        let mut max_b = 1;
        for x in 0..h {
            let k = 1 + rng.below(3);
            let ds: Vec<u32> = (0..k)
                .map(|_| rng.below(h as u64) as u32)
                .filter(|&y| y != x)
                .collect();
            for &y in &ds {
                pairs.insert((x, y));
            }
            max_b = max_b.max(ds.len());
            d.s.handle_backlog(Time::ZERO, x, &ds);
        }
        d.drain();
        let bound = 2 * h as usize * max_b + 4;
        let mut served = BTreeSet::new();
        let mut schedules = Vec::new();
        for _ in 0..bound * 4 {
            for (&x, &y) in &d.sending {
                served.insert((x, y));
            }
            schedules.push((d.now, d.sending.clone()));
            d.step();
            check_invariants(&mut d.s, net.hosts);
        }
        let starved: Vec<_> = pairs.difference(&served).collect();
        assert!(
            starved.is_empty(),
            "case {case}: never scheduled {starved:?}; pairs {pairs:?} cables {:?} hosts {host_bps:?}",
            net.cables
        );
        // a schedule that leaves backlogged pairs unserved does not persist:
        // it changes within 2H slices of time (a starving flow's reservation
        // may keep links idle, and so the rest of the schedule, while its path clears)
        let limit = Dur(cfg(Mode::Hybrid).slice.ps() * 2 * h as u64);
        let mut since = schedules[0].0;
        for w in schedules.windows(2) {
            let covered: BTreeSet<(u32, u32)> = w[0].1.iter().map(|(&x, &y)| (x, y)).collect();
            if w[0].1 != w[1].1 || covered == pairs {
                since = w[1].0;
            }
            let held = w[1].0.saturating_since(since);
            assert!(held <= limit, "case {case}: a partial schedule held for {held}");
        }
    }
}

#[test]
fn fat_tree_paths_work_with_the_scheduler_at_scale() {
    // k = 16: 1024 hosts; every host backlogged to one random host; capacity holds
    let k = 16;
    let p = FatTreePaths::new(k);
    let hosts = p.hosts() as usize;
    let links = p.links() as usize;
    let topo = SchedTopology::new(vec![G; hosts], vec![G; links], Box::new(p));
    let mut s = Scheduler::new(topo, cfg(Mode::Timeslice));
    let mut rng = Rng::new(5);
    for x in 0..hosts as u32 {
        let y = (x + 1 + rng.below(hosts as u64 - 1) as u32) % hosts as u32;
        s.handle_backlog(Time::ZERO, x, &[y]);
    }
    for _ in 0..20 {
        let t = s.poll_timeout().unwrap();
        s.handle_timeout(t);
        while s.poll_directive().is_some() {}
        check_invariants(&mut s, hosts);
    }
    let active = (0..hosts as u32).filter(|&x| s.dest(x).is_some()).count();
    assert!(
        active > hosts / 4,
        "a full-bisection fat-tree carries many senders at once: {active}"
    );
}

#[test]
fn property_no_starvation_when_unrelated_events_interleave_on_a_fat_tree() {
    // reports arrive at scattered times, so slices expire at unrelated times
    // and events from different parts of the fabric interleave
    for case in 0..60u64 {
        let mut rng = Rng::new(7000 + case);
        let p = FatTreePaths::new(4);
        let hosts = p.hosts();
        let links = p.links() as usize;
        let topo = SchedTopology::new(vec![G; hosts as usize], vec![G; links], Box::new(p));
        let mut d = Driver::new(Scheduler::new(topo, cfg(Mode::Timeslice)));
        let mut pairs = BTreeSet::new();
        let mut order: Vec<u32> = (0..hosts).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for (i, &x) in order.iter().enumerate() {
            let k = 1 + rng.below(3);
            let ds: Vec<u32> = (0..k)
                .map(|_| rng.below(hosts as u64) as u32)
                .filter(|&y| y != x)
                .collect();
            pairs.extend(ds.iter().map(|&y| (x, y)));
            let t = Time(Dur::from_us(137 * i as u64 + rng.below(100)).ps());
            d.s.handle_backlog(t, x, &ds);
            d.drain();
        }
        let mut served = BTreeSet::new();
        for _ in 0..400 {
            for (&x, &y) in &d.sending {
                served.insert((x, y));
            }
            // the first timeouts are overdue, earlier than the last
            // report: the scheduler takes them at the latest instant it saw
            // (with debug assertions, the order of expiries is checked)
            let t = d.s.poll_timeout().unwrap();
            d.now = t;
            d.s.handle_timeout(t);
            d.drain();
            check_invariants(&mut d.s, hosts as usize);
        }
        let starved: Vec<_> = pairs.difference(&served).collect();
        assert!(starved.is_empty(), "case {case}: never scheduled {starved:?}");
    }
}

#[test]
fn a_report_that_misses_the_current_destination_does_not_end_the_slice() {
    // a periodic report can catch the slice's queue empty for an instant; only
    // a give-back (or the end of the slice) frees the link for another host
    let net = star(6, G);
    let mut d = Driver::new(Scheduler::new(net.topology(&[G; 6]), cfg(Mode::Timeslice)));
    d.s.handle_backlog(Time::ZERO, 0, &[5]);
    d.s.handle_backlog(Time::ZERO, 1, &[5]);
    d.drain();
    assert_eq!(d.s.dest(0), Some(5));
    d.s.handle_backlog(Time(Dur::from_us(500).ps()), 0, &[]);
    d.drain();
    assert_eq!(d.s.dest(0), Some(5), "host 0 still holds its slice");
    assert_eq!(d.s.dest(1), None, "so host 1 must not be granted the same link");
}

#[test]
fn paths_longer_than_a_fat_tree_s_are_scheduled_like_short_ones() {
    // hosts 0..3 on switch 4, a chain of switches 4..=11, host 3 on switch 11:
    // paths of nine links (the scheduler keeps short paths inline, long ones apart)
    let mut cables: Vec<(u32, u32, u64)> = (0..3).map(|h| (h, 4, G)).collect();
    cables.extend((4..11).map(|s| (s, s + 1, 10 * G)));
    cables.push((3, 11, G));
    let net = Net {
        hosts: 4,
        switches: 8,
        cables,
    };
    let mut d = Driver::new(Scheduler::new(net.topology(&[G; 4]), cfg(Mode::Timeslice)));
    assert_eq!(d.s.path(0, 3).len(), 9);
    for h in 0..3 {
        d.s.handle_backlog(Time::ZERO, h, &[3]);
    }
    d.drain();
    let mut senders = Vec::new();
    for _ in 0..12 {
        assert_eq!(
            d.sending.len(),
            1,
            "one sender into host 3's port: {:?}",
            d.sending
        );
        senders.push(*d.sending.keys().next().unwrap());
        check_invariants(&mut d.s, 4);
        d.step();
    }
    for w in senders.windows(3) {
        let set: BTreeSet<u32> = w.iter().copied().collect();
        assert_eq!(set.len(), 3, "round robin over all three: {senders:?}");
    }
}

// ---------------------------------------------------------------------------
// decisions pinned by reference output: readable logs compared with the
// files under tests/golden/ (`XCO_GOLDEN=update` rewrites them)

/// `t` in milliseconds, exactly: `1.000100ms` (to the picosecond if it is
/// not a whole number of nanoseconds).
fn ms(t: Time) -> String {
    let (whole, ps) = (t.ps() / PS_PER_MS, t.ps() % PS_PER_MS);
    if ps % 1000 == 0 {
        format!("{whole}.{:06}ms", ps / 1000)
    } else {
        format!("{whole}.{ps:09}ms")
    }
}

/// `[3,40]`.
fn list(xs: &[u32]) -> String {
    let xs: Vec<String> = xs.iter().map(u32::to_string).collect();
    format!("[{}]", xs.join(","))
}

/// A directive as one log line: `host=12 epoch=7 slice dest=3 len=1.000ms`
/// (` rate=<bit/s>` in the hybrid form, `dest=-` for "wait"), or
/// `host=12 epoch=7 rates {3:500000000, 40:1000000000}`.
fn directive_line(d: &Directive) -> String {
    match &d.kind {
        DirectiveKind::Slice { dest, len, rate_bps } => {
            let dest = dest.map_or_else(|| "-".to_string(), |y| y.to_string());
            let rate = rate_bps.map_or_else(String::new, |r| format!(" rate={r}"));
            format!(
                "host={} epoch={} slice dest={dest} len={len}{rate}",
                d.host, d.epoch
            )
        }
        DirectiveKind::Rates { rates } => {
            let rates: Vec<String> = rates.iter().map(|(y, r)| format!("{y}:{r}")).collect();
            format!("host={} epoch={} rates {{{}}}", d.host, d.epoch, rates.join(", "))
        }
    }
}

/// A scheduler whose every input is written to a text log as one line
/// (`t=<stamp> <input> next=<poll_timeout>`), followed by one line per
/// directive it caused (`  -> ...`); [`state`](Self::state) adds a line
/// with every host's destination and the counters if they changed.
struct Logged {
    s: Scheduler,
    hosts: u32,
    text: String,
    /// The last state line written, without its label.
    last_state: String,
    /// The destinations each host was granted a slice to.
    granted: Vec<BTreeSet<u32>>,
}

impl Logged {
    fn new(s: Scheduler, hosts: u32, header: &str) -> Logged {
        let mut l = Logged {
            s,
            hosts,
            text: String::new(),
            last_state: String::new(),
            granted: vec![BTreeSet::new(); hosts as usize],
        };
        l.header(header);
        l
    }
    fn header(&mut self, header: &str) {
        for line in header.lines() {
            let _ = writeln!(self.text, "# {line}");
        }
    }
    fn backlog(&mut self, now: Time, x: u32, ds: &[u32]) {
        self.s.handle_backlog(now, x, ds);
        self.record(now, &format!("backlog host={x} dests={}", list(ds)));
    }
    fn giveback(&mut self, now: Time, x: u32, d: u32) {
        self.s.handle_giveback(now, x, d);
        self.record(now, &format!("giveback host={x} dest={d}"));
    }
    fn leave(&mut self, now: Time, x: u32) {
        self.s.handle_leave(now, x);
        self.record(now, &format!("leave host={x}"));
    }
    fn feedback(&mut self, now: Time, x: u32) {
        self.s.handle_feedback(now, x);
        self.record(now, &format!("feedback host={x}"));
    }
    fn timeout(&mut self, now: Time) {
        self.s.handle_timeout(now);
        self.record(now, "timeout");
    }
    fn record(&mut self, now: Time, input: &str) {
        let next = self.s.poll_timeout().map_or_else(|| "-".to_string(), ms);
        let _ = writeln!(self.text, "t={} {input} next={next}", ms(now));
        while let Some(d) = self.s.poll_directive() {
            if let DirectiveKind::Slice { dest: Some(y), .. } = d.kind {
                self.granted[d.host as usize].insert(y);
            }
            let _ = writeln!(self.text, "  -> {}", directive_line(&d));
        }
    }
    /// `<label> dests=3,-,40,... events=.. directives=.. considered=.. timed_out=..`
    /// (each host's destination, `-` for none, and the counters), unless
    /// nothing changed since the last one.
    fn state(&mut self, label: &str) {
        let dests: Vec<String> = (0..self.hosts)
            .map(|x| self.s.dest(x).map_or_else(|| "-".to_string(), |d| d.to_string()))
            .collect();
        let st = self.s.stats();
        let state = format!(
            "dests={} events={} directives={} considered={} timed_out={}",
            dests.join(","),
            st.events,
            st.directives,
            st.nodes_considered,
            st.hosts_timed_out
        );
        if state != self.last_state {
            let _ = writeln!(self.text, "{label} {state}");
            self.last_state = state;
        }
    }
}

/// A fat-tree under churn (`churn` events per slot): reports, give-backs,
/// leaves, slot boundaries where every slice ends, timeouts inside slots; a
/// state line per slot.
fn churn_log(k: u32, busy: u32, slots: u32, churn: u32, seed: u64, mode: Mode, min_active_us: u64) -> Logged {
    let paths = FatTreePaths::new(k);
    let hosts = paths.hosts();
    let links = paths.links() as usize;
    let g10 = 10 * G;
    let mut rng = Rng::new(seed);
    let host_bps: Vec<u64> = (0..hosts)
        .map(|_| {
            if mode == Mode::Hybrid && rng.below(4) == 0 {
                4 * g10
            } else {
                g10
            }
        })
        .collect();
    let fast: Vec<String> = (0..hosts)
        .filter(|&x| host_bps[x as usize] > g10)
        .map(|x| x.to_string())
        .collect();
    let header = format!(
        "fat-tree k={k} ({hosts} hosts), links 10 Gb/s, hosts 10 Gb/s (40 Gb/s: [{}])\n\
         mode {mode:?}, slice 1 ms, min_active {min_active_us} us, seed {seed}, {slots} slots, {churn} events per slot",
        fast.join(",")
    );
    let topo = SchedTopology::new(host_bps, vec![g10; links], Box::new(paths));
    let cfg = SchedConfig {
        mode,
        slice: Dur::from_ms(1),
        min_active: Dur::from_us(min_active_us),
        feedback_timeout: None,
        lead: Dur::ZERO,
    };
    let mut s = Logged::new(Scheduler::new(topo, cfg), hosts, &header);
    let dests = |rng: &mut Rng, x: u32| -> Vec<u32> {
        (0..1 + rng.below(3))
            .map(|_| (x + 1 + rng.below(hosts as u64 - 1) as u32) % hosts)
            .collect()
    };
    for x in 0..busy {
        let ds = dests(&mut rng, x);
        s.backlog(Time::ZERO, x, &ds);
    }
    for slot in 1..=slots {
        let start = Time::ZERO + Dur::from_ms(slot as u64);
        for i in 0..churn {
            let now = start + Dur::from_us(1 + (i as u64 * 900) / churn as u64);
            let x = rng.below(busy as u64) as u32;
            match rng.below(5) {
                0 | 1 => {
                    if let Some(d) = s.s.dest(x) {
                        s.giveback(now, x, d);
                    }
                }
                2 => {
                    let ds = dests(&mut rng, x);
                    s.backlog(now, x, &ds);
                }
                3 if rng.below(8) == 0 => s.leave(now, x),
                _ => {
                    s.backlog(now, x, &[]);
                    let ds = dests(&mut rng, x);
                    s.backlog(now, x, &ds);
                }
            }
        }
        if rng.below(4) == 0 {
            let t = start + Dur::from_us(950);
            if s.s.poll_timeout().is_some_and(|p| p <= t) {
                s.timeout(t);
            }
        }
        s.timeout(start + Dur::from_ms(1));
        s.state(&format!("slot {slot}"));
    }
    s
}

/// A random tree of switches with hosts on them (`deep`: mostly a chain of
/// switches, so paths are longer than a fat-tree's).
fn tree_net(rng: &mut Rng, deep: bool) -> (Net, Vec<u64>) {
    if !deep {
        return random_tree(rng);
    }
    let switches = 2 + rng.below(12) as usize;
    let hosts = 3 + rng.below(14) as usize;
    let mut cables = Vec::new();
    for s in 1..switches {
        let parent = if rng.below(4) != 0 {
            s as u64 - 1
        } else {
            rng.below(s as u64)
        };
        cables.push((
            (hosts + s) as u32,
            hosts as u32 + parent as u32,
            [G, 10 * G][rng.below(2) as usize],
        ));
    }
    let mut host_bps = Vec::new();
    for h in 0..hosts {
        let c = [G, 10 * G][rng.below(2) as usize];
        host_bps.push(c);
        cables.push((h as u32, hosts as u32 + rng.below(switches as u64) as u32, c));
    }
    (
        Net {
            hosts,
            switches,
            cables,
        },
        host_bps,
    )
}

/// A random tree (`deep`: mostly a chain of switches, paths longer than a
/// fat-tree's) under `events` random events of every kind, timers fired in
/// time order; a state line after every event. Also returns the longest path.
fn tree_log(seed: u64, mode: Mode, deep: bool, events: u32) -> (Logged, usize) {
    let mut rng = Rng::new(seed);
    let (net, host_bps) = tree_net(&mut rng, deep);
    let hosts = net.hosts as u32;
    let cfg = SchedConfig {
        mode,
        slice: Dur::from_ms(2),
        min_active: Dur::from_us([0, 100, 1500][seed as usize % 3]),
        feedback_timeout: (seed % 2 == 0).then_some(Dur::from_ms(7)),
        lead: Dur::ZERO,
    };
    // the longest path, asked of a topology of its own (a lookup may change
    // what the scheduler's topology keeps)
    let mut longest = 0;
    let mut topo = net.topology(&host_bps);
    for a in 0..hosts {
        for b in (0..hosts).filter(|&b| b != a) {
            longest = longest.max(topo.path(a, b).len());
        }
    }
    let cables: Vec<String> = net
        .cables
        .iter()
        .map(|&(a, b, c)| format!("{a}-{b}:{}G", c / G))
        .collect();
    let header = format!(
        "seed {seed}: {} tree, {hosts} hosts (0..{hosts}), {} switches, longest path {longest} links\n\
         cables {}\n\
         mode {mode:?}, slice 2 ms, min_active {}, feedback_timeout {}, {events} events",
        if deep { "deep" } else { "random" },
        net.switches,
        cables.join(" "),
        cfg.min_active,
        cfg.feedback_timeout
            .map_or_else(|| "none".to_string(), |t| t.to_string()),
    );
    let mut s = Logged::new(Scheduler::new(net.topology(&host_bps), cfg), hosts, &header);
    let mut now = Time::ZERO;
    for i in 0..events {
        now += Dur::from_us(rng.below(1500));
        while let Some(t) = s.s.poll_timeout().filter(|&t| t < now) {
            s.timeout(t);
        }
        let x = rng.below(hosts as u64) as u32;
        match rng.below(7) {
            0 | 1 => {
                let ds: Vec<u32> = (0..rng.below(4))
                    .map(|_| rng.below(hosts as u64) as u32)
                    .collect();
                s.backlog(now, x, &ds);
            }
            2 => {
                let d = s.s.dest(x).unwrap_or(rng.below(hosts as u64) as u32);
                s.giveback(now, x, d);
            }
            3 => s.feedback(now, x),
            4 if rng.below(5) == 0 => s.leave(now, x),
            _ => {
                if s.s.poll_timeout().is_some_and(|t| t <= now) {
                    s.timeout(now);
                }
            }
        }
        s.state(&format!("event {i}"));
    }
    (s, longest)
}

/// Compare `got` with the stored log `name` (or, with `XCO_GOLDEN=update`,
/// store it). On a difference: the file and its first differing lines.
fn golden(name: &str, got: &str) -> Result<(), String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var("XCO_GOLDEN").as_deref() == Ok("update") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return Ok(());
    }
    let want = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (XCO_GOLDEN=update writes it)", path.display()))?;
    if want == got {
        return Ok(());
    }
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let first = (0..w.len().max(g.len()))
        .find(|&i| w.get(i) != g.get(i))
        .unwrap_or(w.len());
    let mut msg = format!(
        "{} differs from the output from line {} on ({} lines stored, {} produced; \
         XCO_GOLDEN=update rewrites it if the change is on purpose):\n",
        path.display(),
        first + 1,
        w.len(),
        g.len()
    );
    // two lines of context, then up to six lines from the first difference
    for i in first.saturating_sub(2)..(first + 6).min(w.len().max(g.len())) {
        match (w.get(i), g.get(i)) {
            (Some(a), Some(b)) if a == b => {
                let _ = writeln!(msg, "  {:>6}   {a}", i + 1);
            }
            (a, b) => {
                for (sign, l) in [('-', a), ('+', b)] {
                    if let Some(l) = l {
                        let _ = writeln!(msg, "  {:>6} {sign} {l}", i + 1);
                    }
                }
            }
        }
    }
    Err(msg)
}

/// The churn cases: (log, k, busy hosts, slots, events per slot, seed, mode, min_active in us).
#[allow(clippy::type_complexity)]
const CHURN_CASES: [(&str, u32, u32, u32, u32, u64, Mode, u64); 5] = [
    ("churn_k4_timeslice.log", 4, 16, 40, 2, 1, Mode::Timeslice, 50),
    ("churn_k4_hybrid.log", 4, 16, 40, 2, 2, Mode::Hybrid, 0),
    ("churn_k8_timeslice.log", 8, 128, 10, 16, 3, Mode::Timeslice, 0),
    ("churn_k8_hybrid.log", 8, 128, 10, 16, 4, Mode::Hybrid, 300),
    // hosts see more destinations than their service history keeps (64
    // entries): a few busy hosts churn through destinations all over the tree
    ("churn_k8_history.log", 8, 4, 80, 16, 5, Mode::Timeslice, 50),
];

/// Seeds of the tree cases, `TREE_EVENTS` events each: the mode is
/// `seed % 3` (timeslice, hybrid, rate limit), the tree is deep if the seed
/// is odd, feedback times out if it is even; one log per mode.
const TREE_SEEDS: std::ops::Range<u64> = 0..18;
const TREE_EVENTS: u32 = 100;
const MODES: [(Mode, &str); 3] = [
    (Mode::Timeslice, "timeslice"),
    (Mode::Hybrid, "hybrid"),
    (Mode::RateLimit, "ratelimit"),
];

/// The log of the tree cases of `mode` (index into `MODES`), and the longest
/// path of their deep trees.
fn trees_log(mode: usize) -> (String, usize) {
    let mut text = String::new();
    let mut longest = 0;
    for seed in TREE_SEEDS.filter(|s| *s % 3 == mode as u64) {
        let deep = seed % 2 == 1;
        let (l, p) = tree_log(seed, MODES[mode].0, deep, TREE_EVENTS);
        if deep {
            longest = longest.max(p);
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text += &l.text;
    }
    (text, longest)
}

#[test]
fn decisions_match_the_reference_logs() {
    // every input, directive and next timeout, and the state after each
    // slot or event, against tests/golden/*.log; a behaviour change shows
    // here (rewrite the logs with XCO_GOLDEN=update only on purpose, and
    // read the diff)
    let mut errors = Vec::new();
    for (name, k, busy, slots, churn, seed, mode, min_active_us) in CHURN_CASES {
        let l = churn_log(k, busy, slots, churn, seed, mode, min_active_us);
        if busy < k * k * k / 4 {
            let most = l.granted.iter().map(BTreeSet::len).max().unwrap_or(0);
            assert!(most > 64, "{name}: a host was granted only {most} destinations");
        }
        errors.extend(golden(name, &l.text).err());
    }
    for (i, (mode, name)) in MODES.iter().enumerate() {
        let (text, longest) = trees_log(i);
        assert!(
            longest > 6,
            "{mode:?}: no deep tree has a path longer than six links"
        );
        errors.extend(golden(&format!("trees_{name}.log"), &text).err());
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn an_input_stamped_before_one_already_seen_is_taken_at_the_latest_instant() {
    // host 1's report arrives stamped 1 ms after the scheduler saw 5 ms: its
    // slice starts at 5 ms and ends at 7 ms, not at 3 ms (behind slices
    // granted later than it, which would keep it past its end)
    let net = star(3, G);
    let mut s = Scheduler::new(net.topology(&[G; 3]), cfg(Mode::Timeslice));
    let ms = |m: u64| Time(Dur::from_ms(m).ps());
    s.handle_join(ms(5), 0);
    s.handle_backlog(ms(1), 1, &[2]);
    assert_eq!(s.dest(1), Some(2));
    assert_eq!(s.poll_timeout(), Some(ms(7)));
}
