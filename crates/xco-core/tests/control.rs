//! The control-plane nodes in named states, driven by hand: datagrams moved
//! between a controller and agents directly (no network), time passed in.
//! The seeded, faulty, hostile version of the same is `tests/dst`.

use xco_core::control::{
    Address, AgentConfig, AgentNode, ControllerConfig, ControllerNode, Origin, DIRECTIVE_MAX_AGE,
};
use xco_core::coord::{CoordConfig, Gate, HostCoordinator, RateBurst};
use xco_core::sched::{BfsPaths, Mode, SchedConfig, SchedTopology, Scheduler};
use xco_core::wire::{host_key, AgentKeys, ControllerKeys, Message, Packet, Repr};
use xco_core::{Dur, Rng, Time};

const MASTER: &[u8] = b"control test master, 32 bytes...";
const NAMES: [&str; 3] = ["h0", "h1", "h2"];
const SLICE: Dur = Dur::from_ms(2);
const LEAD: Dur = Dur::from_us(500);

fn keys() -> ControllerKeys {
    ControllerKeys::new(MASTER, &NAMES)
}

/// Three hosts on one switch, 1 Gbit/s everywhere.
fn controller(run: u64) -> ControllerNode<u32> {
    star_controller(run, &NAMES)
}

/// One host per name on one switch, 1 Gbit/s everywhere.
fn star_controller(run: u64, names: &[&str]) -> ControllerNode<u32> {
    let g = 1_000_000_000;
    let n = names.len() as u32;
    let links: Vec<(u32, u32)> = (0..n).flat_map(|h| [(h, n), (n, h)]).collect();
    let mut is_host = vec![true; n as usize];
    is_host.push(false);
    let topo = SchedTopology::new(
        vec![g; n as usize],
        vec![g; 2 * n as usize],
        Box::new(BfsPaths::new(n as usize + 1, is_host, &links)),
    );
    let sched = Scheduler::new(
        topo,
        SchedConfig {
            mode: Mode::Timeslice,
            slice: SLICE,
            min_active: Dur::from_us(200),
            feedback_timeout: None,
            lead: LEAD,
        },
    );
    ControllerNode::new(
        ControllerConfig::default(),
        sched,
        ControllerKeys::new(MASTER, names),
        run,
    )
}

fn agent(h: u32, now: Time) -> AgentNode<u32> {
    agent_seeded(h, now, u64::from(h) + 1)
}

fn agent_seeded(h: u32, now: Time, seed: u64) -> AgentNode<u32> {
    agent_named(h, NAMES[h as usize], now, seed)
}

/// The agent of host `h`, named `name` (its MAC key derives from the name).
fn agent_named(h: u32, name: &str, now: Time, seed: u64) -> AgentNode<u32> {
    let k = AgentKeys::new(h, &host_key(MASTER, name), &keys().public_key()).unwrap();
    let coord = HostCoordinator::new(
        CoordConfig {
            giveback_hysteresis: Some(Dur::from_us(100)),
            fail_open_after: Dur::from_ms(20),
            report_interval: Dur::from_ms(5),
            rate_burst: RateBurst::PACER,
            on_demand: false,
        },
        u64::MAX,
        now,
    );
    let cfg = AgentConfig {
        addr: h.to_wire(),
        ..AgentConfig::default()
    };
    AgentNode::new(cfg, coord, k, Rng::new(seed))
}

fn msg(d: &[u8]) -> Message {
    Repr::parse(&Packet::new_checked(d).unwrap()).unwrap().msg
}

fn at(us: u64) -> Time {
    Time::ZERO + Dur::from_us(us)
}

/// Move everything `a` (host `h`) sends to `c` as from `from`, and back; returns what `c` sent where.
fn exchange(
    c: &mut ControllerNode<u32>,
    a: &mut AgentNode<u32>,
    from: u32,
    now: Time,
) -> Vec<(u32, Message)> {
    let mut seen = Vec::new();
    for _ in 0..8 {
        let mut moved = false;
        while let Some(d) = a.poll_transmit(now) {
            c.handle_datagram(now, from, &d);
            moved = true;
        }
        while let Some((to, d)) = c.poll_transmit(now) {
            seen.push((to, msg(&d)));
            if to == a.host() {
                a.handle_datagram(now, Origin::Controller, &d);
            }
            moved = true;
        }
        if !moved {
            break;
        }
    }
    seen
}

/// Run the controller's timers from `now` until agent `a` (host `h`) has a
/// directive; returns the instant it did. Panics if none comes within 20 ms.
fn until_directive(c: &mut ControllerNode<u32>, a: &mut AgentNode<u32>, h: u32, now: Time) -> Time {
    let mut t = now;
    while a.coord.stats.directives == 0 {
        t = c.poll_timeout().expect("a deadline").max(t);
        assert!(t < now + Dur::from_ms(20), "no directive by {t}");
        c.handle_timeout(t);
        exchange(c, a, h, t);
    }
    t
}

/// Agent `h` joined controller `c` at `now` (challenge, confirm), with backlog to `dest`.
fn joined(c: &mut ControllerNode<u32>, h: u32, dest: u32, now: Time) -> AgentNode<u32> {
    let mut a = agent(h, now);
    a.start(now);
    a.coord.offer(now, dest, 1, 1500, (1538, 0), false);
    let seen = exchange(c, &mut a, h, now);
    assert!(
        seen.iter().any(|(_, m)| matches!(m, Message::Challenge { .. })),
        "{seen:?}"
    );
    assert_eq!(a.run(), Some(c.run()));
    assert_eq!(c.addr(h), Some(h));
    a
}

#[test]
fn a_host_joins_by_a_challenge_round_and_obeys_its_directives_after_the_fence() {
    let mut c = controller(0x77);
    let t = at(10);
    let mut a = joined(&mut c, 0, 1, t);
    // the report arrived inside the new run's fence (one slice, the lead and the
    // agents' directive age bound): no grant until it ends, then one, sent to the
    // address h0 stated
    assert!(a.coord.state.gate == Gate::Closed);
    let first = until_directive(&mut c, &mut a, 0, t);
    assert!(
        first >= t + SLICE + LEAD + DIRECTIVE_MAX_AGE,
        "a grant at {first}, inside the fence"
    );
}

/// Host 0 joined a fresh controller at 10 us with a backlog; the
/// controller's first directive to it, held back (not delivered), and when
/// it was signed.
fn held_directive() -> (AgentNode<u32>, Vec<u8>, Time) {
    let mut c = controller(0x77);
    let t = at(10);
    let mut a = joined(&mut c, 0, 1, t);
    let mut now = t;
    loop {
        now = c.poll_timeout().expect("a deadline").max(now);
        assert!(now < t + Dur::from_ms(50), "no directive by {now}");
        c.handle_timeout(now);
        while let Some((to, d)) = c.poll_transmit(now) {
            if to == 0 && matches!(msg(&d), Message::Directive(..)) {
                return (a, d, now);
            }
        }
        while let Some(d) = a.poll_transmit(now) {
            c.handle_datagram(now, 0, &d);
        }
    }
}

#[test]
fn a_directive_that_arrives_later_than_its_age_bound_is_refused() {
    // seed 21302: a crashed run's directive, lost, replayed 13 ms later by a
    // hostile host to an agent still in that run. The directive echoes the
    // agent's latest message and the controller's hold of it, so the agent
    // knows how old it may be without a clock in common
    let (mut a, d, signed) = held_directive();
    let Message::Directive(_, echo) = msg(&d) else {
        unreachable!()
    };
    assert_eq!(echo.seq, a.last_sent().0, "it echoes the agent's latest message");
    assert_eq!(echo.signed_ns, signed.ps() / 1000, "and says when it was signed");
    let late = signed + DIRECTIVE_MAX_AGE + Dur::from_ns(1);
    assert!(!a.handle_datagram(late, Origin::Controller, &d));
    assert_eq!((a.stats.stale, a.rejected.replay), (1, 1), "refused, counted");
    assert_eq!(a.coord.stats.directives, 0);
    assert_eq!(a.stats.joins, 1, "and it costs no join");
    // the same directive within the bound is obeyed (the bound counts 1,000 ppm of
    // drift since its sample, the agent's confirm or report at 10 us: 5 us here)
    let (mut a, d, signed) = held_directive();
    let within = signed + (DIRECTIVE_MAX_AGE - Dur::from_us(10));
    assert!(a.handle_datagram(within, Origin::Controller, &d));
    assert_eq!((a.stats.stale, a.coord.stats.directives), (0, 1));
}

#[test]
fn an_agent_whose_join_is_answered_after_its_join_timeout_still_gets_in() {
    // sim-network seed 912: the host's joins waited 23 ms in its own NIC queue,
    // longer than the 20-ms join timeout, so every challenge answered a nonce it
    // had already replaced and it never got in
    let mut c = controller(0x77);
    let t = at(10);
    let mut a = agent(0, t);
    a.start(t);
    let first = a.poll_transmit(t).expect("the join");
    let first_nonce = a.session();
    // the join timeout passes unanswered: a new join, a new nonce
    let later = t + AgentConfig::default().join_timeout;
    a.handle_timeout(later);
    let second = a.poll_transmit(later).expect("the join again");
    assert_ne!(a.session(), first_nonce);
    // now the first join reaches the controller; its challenge is taken
    let arrive = later + Dur::from_ms(3);
    c.handle_datagram(arrive, 0, &first);
    let (to, challenge) = c.poll_transmit(arrive).expect("a challenge");
    assert_eq!(to, 0);
    a.handle_datagram(arrive, Origin::Controller, &challenge);
    assert_eq!(
        a.run(),
        Some(c.run()),
        "the run adopted from the earlier join's answer"
    );
    assert_eq!(a.session(), first_nonce, "whose nonce is the session again");
    assert_eq!(a.stats.previous_join_answers, 1);
    // its confirm starts that session at the controller; the second join's late
    // challenge is refused by the agent (a session), and no join follows
    exchange(&mut c, &mut a, 0, arrive);
    assert_eq!(c.addr(0), Some(0));
    c.handle_datagram(arrive, 0, &second);
    let joins = a.stats.joins;
    exchange(&mut c, &mut a, 0, arrive);
    assert_eq!((a.session(), a.stats.joins), (first_nonce, joins));
    a.coord.offer(arrive, 1, 1, 1500, (1538, 0), false);
    until_directive(&mut c, &mut a, 0, arrive);
}

#[test]
fn a_join_replayed_from_another_address_earns_it_a_challenge_only() {
    let mut c = controller(0x77);
    let t = at(10);
    let mut a = joined(&mut c, 0, 1, t);
    // a join of h0 (its MAC, another nonce), captured and replayed by h2 from its own
    // address: a challenge goes there, once; h0's session and address stay
    let mut victim = agent_seeded(0, t, 99);
    victim.start(t);
    let join = victim.poll_transmit(t).unwrap();
    let t2 = t + Dur::from_ms(1);
    c.handle_datagram(t2, 2, &join);
    c.handle_datagram(t2, 2, &join);
    let mut out = Vec::new();
    while let Some((to, d)) = c.poll_transmit(t2) {
        out.push((to, msg(&d)));
    }
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(
        matches!(out[0], (2, Message::Challenge { host: 0, .. })),
        "{out:?}"
    );
    assert_eq!(c.addr(0), Some(0));
    until_directive(&mut c, &mut a, 0, t2);
    assert_eq!(a.stats.joins, 1);
    assert_eq!(c.addr(0), Some(0));
}

#[test]
fn a_replayed_directive_or_rejoin_about_an_old_session_costs_the_agent_no_join() {
    // a controller of term 1 (one with a standby: its runs are ordered)
    let mut c = controller(xco_core::wire::run_of(1, 0x77));
    let t = at(10);
    let mut a = joined(&mut c, 0, 1, t);
    let old_session = a.session();
    // the controller's datagrams to h0 until its first directive, kept to replay
    let mut sent = Vec::new();
    let mut now = t;
    while a.coord.stats.directives == 0 {
        now = c.poll_timeout().unwrap().max(now);
        c.handle_timeout(now);
        while let Some((_, d)) = c.poll_transmit(now) {
            a.handle_datagram(now, Origin::Controller, &d);
            sent.push(d);
        }
    }
    let joins = a.stats.joins;
    let replays = a.rejected.replay;
    let t4 = now + Dur::from_ms(1);
    for d in &sent {
        a.handle_datagram(t4, Origin::Controller, d);
    }
    assert_eq!(a.stats.joins, joins, "replays made it join");
    assert_eq!(a.rejected.replay, replays + sent.len() as u64);
    // a signed rejoin request of another run of the same term: refused (terms, wire
    // version 4); of a higher term naming another session: the term rose, one join;
    // naming the session it joined then: nothing more (it is joining); the same again later: nothing
    let k = keys();
    let rejoin = |run, seq, session| {
        k.encode(&Repr {
            host: xco_core::wire::CONTROLLER_ID,
            run,
            seq,
            msg: Message::Rejoin { host: 0, session },
        })
    };
    let same_term = xco_core::wire::run_of(1, 0x88);
    a.handle_datagram(t4, Origin::Controller, &rejoin(same_term, 1, old_session));
    assert_eq!(a.stats.joins, joins);
    assert_eq!(a.stats.stale_term, 1, "another run of the term obeyed");
    let newer = xco_core::wire::run_of(2, 0x88);
    a.handle_datagram(
        t4 + Dur::from_ms(20),
        Origin::Controller,
        &rejoin(newer, 2, old_session ^ 1),
    );
    assert_eq!(a.stats.joins, joins + 1, "a higher term: one join");
    let session = a.session();
    a.handle_datagram(
        t4 + Dur::from_ms(40),
        Origin::Controller,
        &rejoin(newer, 3, session ^ 1),
    );
    assert_eq!(a.stats.joins, joins + 1, "the same term again: nothing");
    a.handle_datagram(
        t4 + Dur::from_ms(40),
        Origin::Controller,
        &rejoin(0x77, 9, session),
    );
    assert_eq!(
        a.stats.stale_term, 2,
        "term 0 (a controller alone) refused after a term"
    );
    assert_eq!(a.stats.joins, joins + 1, "the lower term's request costs no join");
}

#[test]
fn a_give_back_that_crossed_a_newer_directive_is_ignored() {
    let mut c = controller(0x77);
    let t = at(10);
    let mut a = joined(&mut c, 0, 1, t);
    let mut now = until_directive(&mut c, &mut a, 0, t);
    // a second directive (the next slot): epochs 1 and 2 were sent
    while a.coord.state.epoch < 2 {
        now = c.poll_timeout().unwrap().max(now);
        c.handle_timeout(now);
        exchange(&mut c, &mut a, 0, now);
    }
    let epoch = a.coord.state.epoch;
    // a give-back of an epoch older than the controller's latest directive to h0
    let k = AgentKeys::new(0, &host_key(MASTER, "h0"), &keys().public_key()).unwrap();
    let gb = |seq, epoch| {
        k.encode(&Repr {
            host: 0,
            run: a.session(),
            seq,
            msg: Message::GiveBack { dest: 1, epoch },
        })
    };
    let before = c.stats.msgs[4];
    c.handle_datagram(now + Dur::from_us(10), 0, &gb(1_000, epoch - 1));
    assert_eq!((c.stats.stale_givebacks, c.stats.msgs[4]), (1, before));
    // of the current epoch, it counts
    c.handle_datagram(now + Dur::from_us(20), 0, &gb(1_001, epoch));
    assert_eq!((c.stats.stale_givebacks, c.stats.msgs[4]), (1, before + 1));
}

#[test]
fn two_controllers_that_hear_each_other_keep_one_term() {
    use xco_core::control::{Peer, StandbyConfig};
    use xco_core::wire::{peer_key, run_of};
    let cfg = StandbyConfig::default();
    let known = 1_795_733_241;
    let p0 = Peer::new(0, 1u32, peer_key(MASTER), cfg.clone());
    let p1 = Peer::new(1, 0u32, peer_key(MASTER), cfg.clone());
    let mut nodes = [
        controller(run_of(p0.next_term(known), 0xc5fc)).with_peer(p0, true),
        controller(run_of(known, 0xb8ea)).with_peer(p1, false),
    ];
    let mut now = at(5);
    for _ in 0..2000 {
        now += Dur::from_us(50);
        for i in 0..2 {
            if nodes[i].poll_timeout().is_some_and(|t| t <= now) {
                nodes[i].handle_timeout(now);
            }
            while let Some((to, d)) = nodes[i].poll_transmit(now) {
                nodes[to as usize].handle_datagram(now, i as u32, &d);
            }
        }
    }
    assert!(nodes[0].is_active() && !nodes[1].is_active());
    assert_eq!(nodes[0].stats.takeovers + nodes[1].stats.takeovers, 0);
    // the standby acks the primary's beats: the primary holds a lease, which runs
    // out within the standby's patience once the standby hears nothing more
    let lease = nodes[0].peer().unwrap().lease_until;
    assert!(
        lease > now && lease <= now + cfg.takeover_after,
        "lease to {lease} at {now}"
    );
    let cut = now;
    while !nodes[1].is_active() {
        now += Dur::from_us(50);
        for n in &mut nodes {
            if n.poll_timeout().is_some_and(|t| t <= now) {
                n.handle_timeout(now);
            }
            while n.poll_transmit(now).is_some() {} // lost: the controllers are cut off
        }
    }
    assert_eq!(
        nodes[0].peer().unwrap().lease_until,
        lease,
        "a lease without an ack"
    );
    assert!(
        lease <= now,
        "the standby took over at {now}, inside the lease to {lease}"
    );
    assert!(now >= cut + (cfg.takeover_after - cfg.beat_every));
}

/// Move everything between the live controllers (addresses 10 and 11) and
/// the agents (each sends to both) at `now`, timers due included, until
/// nothing moves.
fn pump_pair(ctl: &mut [ControllerNode<u32>; 2], live: [bool; 2], agents: &mut [AgentNode<u32>], now: Time) {
    for _ in 0..16 {
        let mut moved = false;
        for i in (0..2).filter(|&i| live[i]) {
            if ctl[i].poll_timeout().is_some_and(|t| t <= now) {
                ctl[i].handle_timeout(now);
            }
            while let Some((to, d)) = ctl[i].poll_transmit(now) {
                moved = true;
                match to {
                    10 | 11 if live[to as usize - 10] => {
                        ctl[to as usize - 10].handle_datagram(now, 10 + i as u32, &d)
                    }
                    10 | 11 => {}
                    h => {
                        agents[h as usize].handle_datagram(now, Origin::Controller, &d);
                    }
                }
            }
        }
        for a in agents.iter_mut() {
            if a.poll_timeout() <= now {
                a.handle_timeout(now);
            }
            while let Some(d) = a.poll_transmit(now) {
                moved = true;
                for i in (0..2).filter(|&i| live[i]) {
                    ctl[i].handle_datagram(now, a.host(), &d);
                }
            }
        }
        if !moved {
            break;
        }
    }
}

#[test]
fn a_standby_that_takes_over_challenges_every_host_it_watched_and_grants_once_all_confirmed() {
    use xco_core::control::{AgentEvent, Peer, StandbyConfig};
    use xco_core::wire::{peer_key, run_of, term_of};
    let cfg = StandbyConfig::default();
    let mut ctl = [
        controller(run_of(2, 0xaa)).with_peer(Peer::new(0, 11, peer_key(MASTER), cfg.clone()), true),
        controller(run_of(2, 0xbb)).with_peer(Peer::new(1, 10, peer_key(MASTER), cfg.clone()), false),
    ];
    let mut agents: Vec<AgentNode<u32>> = (0..3).map(|h| agent(h, at(0))).collect();
    for a in agents.iter_mut() {
        a.start(at(0));
    }
    // h0 and h1 send (to h1 and h2: no link shared), never released here: backlogged throughout
    agents[0].coord.offer(at(0), 1, 1, 1500, (1538, 0), false);
    agents[1].coord.offer(at(0), 2, 2, 1500, (1538, 0), false);
    let mut now = at(0);
    while now < at(5000) {
        pump_pair(&mut ctl, [true, true], &mut agents, now);
        now += Dur::from_us(50);
    }
    let primary = ctl[0].run();
    assert!(matches!(agents[0].coord.state.gate, Gate::Open { dest: 1, .. }));
    assert!(agents.iter().all(|a| a.run() == Some(primary)));
    let joins: Vec<u64> = agents.iter().map(|a| a.stats.joins).collect();
    for a in agents.iter_mut() {
        while a.poll_event().is_some() {}
    }
    // kill -9 of the primary: the standby takes over after its silence
    while !ctl[1].is_active() {
        now += Dur::from_us(50);
        assert!(
            now < at(5000) + cfg.takeover_after + Dur::from_ms(1),
            "no takeover by {now}"
        );
        pump_pair(&mut ctl, [false, true], &mut agents, now);
    }
    let s = &ctl[1];
    assert_eq!(
        term_of(s.run()),
        3,
        "the standby's term: odd, above the primary's"
    );
    // every host was challenged in the session the standby watched: each confirmed
    // without a join, and h0 closed the primary's slice as it adopted the new term
    assert_eq!(s.stats.takeover_challenges, 3);
    assert_eq!(agents.iter().map(|a| a.stats.joins).collect::<Vec<_>>(), joins);
    assert!(agents.iter().all(|a| a.run() == Some(s.run())));
    assert_eq!(agents[0].stats.closed_at_new_term, 1);
    // the last confirm ended the fence: the backlogs the standby watched were
    // granted at the same instant, not one slice and the lead later
    assert_eq!(s.stats.fences_ended_by_confirms, 1);
    for h in [0, 1] {
        let got = std::iter::from_fn(|| agents[h].poll_event())
            .any(|e| matches!(e, AgentEvent::Applied { run, .. } if run == s.run()));
        assert!(
            got,
            "h{h} got no directive of the new term at the takeover ({now})"
        );
    }
    assert!(matches!(agents[0].coord.state.gate, Gate::Open { dest: 1, .. }));
}

#[test]
fn an_agent_that_failed_open_obeys_its_run_again_only_after_a_fresh_join() {
    let mut c = controller(0x77);
    let t = at(10);
    let mut a = joined(&mut c, 0, 1, t);
    // the controller's first directives to h0, held back (a partition)
    let mut held = Vec::new();
    let mut now = t;
    while held.is_empty() {
        now = c.poll_timeout().expect("a deadline").max(now);
        assert!(now < t + Dur::from_ms(20), "no directive by {now}");
        c.handle_timeout(now);
        while let Some((_, d)) = c.poll_transmit(now) {
            if matches!(msg(&d), Message::Directive(..)) {
                held.push(d);
            }
        }
    }
    // no directive for the fail-open time while backlogged: it fails open, suspends
    // its run and joins
    let mut now = t;
    while a.coord.state.gate != Gate::FailOpen {
        now = a.poll_timeout().max(now);
        assert!(now < t + Dur::from_ms(40), "no fail-open by {now}");
        a.handle_timeout(now);
    }
    assert_eq!(a.stats.suspended, 1);
    assert_eq!(a.stats.joins, 2);
    // the held directive arrives now, late: refused, though of the run it obeyed
    let session_rejections = a.rejected.session;
    a.handle_datagram(now, Origin::Controller, &held[0]);
    assert_eq!(a.coord.stats.directives, 0, "a late directive obeyed");
    assert_eq!(a.rejected.session, session_rejections + 1);
    // the join's fresh answer lifts the suspension; the held directive, older than
    // that answer, stays refused; the controller's next one is obeyed
    exchange(&mut c, &mut a, 0, now);
    assert_eq!(a.run(), Some(c.run()));
    let replays = a.rejected.replay;
    a.handle_datagram(now, Origin::Controller, &held[0]);
    assert_eq!(
        a.coord.stats.directives, 0,
        "a directive older than the fresh answer obeyed"
    );
    assert_eq!(a.rejected.replay, replays + 1);
    until_directive(&mut c, &mut a, 0, now);
}

#[test]
fn without_its_standby_a_controller_stays_leased_while_a_quorum_of_hosts_is_heard() {
    use xco_core::control::{lease_quorum, Peer, StandbyConfig};
    use xco_core::wire::{peer_key, run_of};
    const SIX: [&str; 6] = ["h0", "h1", "h2", "h3", "h4", "h5"];
    assert_eq!(
        (1..=8).map(lease_quorum).collect::<Vec<_>>(),
        [1, 2, 3, 3, 4, 4, 5, 5],
        "more than half of hosts + 1, at most all"
    );
    // six hosts on one switch; a primary whose standby never answers (dead
    // from the start): it grants on the hosts' lease only
    let peer = Peer::new(0, 99u32, peer_key(MASTER), StandbyConfig::default());
    let cfg = ControllerConfig::default();
    let mut c = star_controller(run_of(2, 0x51), &SIX).with_peer(peer, true);
    let mut agents: Vec<AgentNode<u32>> = (0..6u32)
        .map(|h| {
            let mut a = agent_named(h, SIX[h as usize], at(0), u64::from(h) + 7);
            a.start(at(0));
            a
        })
        .collect();
    // run with the hosts in `live` talking; true if the controller may grant at the end
    let mut now = at(0);
    let mut run_for = |c: &mut ControllerNode<u32>, live: &[bool; 6], ms: u64| {
        let end = now + Dur::from_ms(ms);
        while now < end {
            now += Dur::from_us(250);
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
            for (h, a) in agents.iter_mut().enumerate().filter(|(h, _)| live[*h]) {
                if a.poll_timeout() <= now {
                    a.handle_timeout(now);
                }
                while let Some(d) = a.poll_transmit(now) {
                    c.handle_datagram(now, h as u32, &d);
                }
            }
            // to the hosts that listen; lost to silent ones and to the dead standby
            while let Some((to, d)) = c.poll_transmit(now) {
                if (to as usize) < 6 && live[to as usize] {
                    agents[to as usize].handle_datagram(now, Origin::Controller, &d);
                }
            }
        }
        (c.may_grant(now), now)
    };
    let lease_ms = cfg.host_lease.ps() / Dur::from_ms(1).ps();
    let (leased, t) = run_for(&mut c, &[true; 6], 50);
    assert!(leased, "all six heard: leased");
    assert!(
        c.peer().unwrap().lease_until <= t,
        "no standby lease: the hosts' lease is the one tested"
    );
    // (unleased while fewer than four had joined, at the start)
    let unleased = c.stats.unleased;
    // one host silent (dead, or hostile): five heard of the four needed
    let one_silent = [true, true, true, true, true, false];
    assert!(
        run_for(&mut c, &one_silent, 10 * lease_ms).0,
        "one silent host stopped the grants"
    );
    assert_eq!(
        c.stats.unleased, unleased,
        "one silent host stopped the grants for a while"
    );
    // three silent: three heard of four needed; the grants stop within a host lease and a report interval
    let three_silent = [true, true, true, false, false, false];
    assert!(
        !run_for(&mut c, &three_silent, lease_ms + 6).0,
        "no quorum, still leased"
    );
    assert_eq!(c.stats.unleased, unleased + 1);
    // a fourth host heard again: leased again
    let four = [true, true, true, true, false, false];
    assert!(run_for(&mut c, &four, 10).0, "a quorum again, still unleased");
}
