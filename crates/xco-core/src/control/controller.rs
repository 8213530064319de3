//! The controller on the control plane, free of I/O: every host's session,
//! join challenges, rejoin requests, and the scheduler fed from the hosts'
//! messages. `A` is the driver's address type (a socket address in the
//! daemon, a node number in the harness).
//!
//! - **Joins.** A join changes nothing: it is answered with a signed
//!   challenge sent to the join's source — but a join whose nonce was
//!   challenged within [`ControllerConfig::challenge_every`] is not answered
//!   again, and all challenges share a signing budget
//!   ([`ControllerConfig::challenges_per_s`]): signing costs tens of
//!   microseconds, and anyone can replay a join. The host's session starts at its MAC'd
//!   confirm of a challenge newer than any it confirmed before in this run
//!   ([`crate::wire::AgentSessions`]). The address the host states in its
//!   MAC'd confirm becomes its address: directives go there and nowhere
//!   else, whatever any datagram's source says (a confirm captured and
//!   replayed from elsewhere first still names the genuine agent).
//! - **Unknown sessions.** A host's genuine message in a session this run
//!   does not know (the controller restarted, or the host timed out) gets a
//!   signed rejoin request naming that session (not for a session challenged
//!   within `challenge_every`: its confirm may arrive after the message) — at most once per
//!   [`ControllerConfig::rejoin_every`] per host, to the host's address if
//!   it has one, else to the source.
//! - **Everything else** (leave, heartbeat, report, give-back, rejection
//!   counts) only in the host's session, in order, and becomes a scheduler
//!   call; a give-back older than the latest directive sent to its host
//!   crossed that directive in flight and is ignored (the host obeys the
//!   newer slice, and gives it back in turn); the scheduler's directives are signed when polled, their start
//!   aged by the time since the input they answer.
//! - A host the scheduler drops for silence loses its session and its
//!   address: its next message makes it join again.
//! - **Fence.** A new run grants nothing for one slice plus the lead after
//!   its first input: an agent may still hold a slice the run before it (a
//!   crashed controller) granted. Backlogs reported meanwhile are applied
//!   when the fence ends. (Found by the harness: a restarted controller gave
//!   a link away while an agent still sent on the old run's slice.)
//! - **Terms** ([`crate::wire::peer`]): a run's high half is its term. A
//!   controller that learns of a higher term (its peer's beat, an agent's
//!   superseded proof), or of another run of its own term, stops directing:
//!   it stands by if it has a peer ([`super::standby`]), else it takes a new
//!   term above all it knows (a restarted controller that drew a term
//!   already taken). Every new term is fenced: a term taken over
//!   challenges every host it watched at once (no join round) and its
//!   fence ends when every host of the topology has confirmed it (each
//!   closed the older term's slice as it adopted the new one), or by the
//!   time rule if one does not (one slice, the lead, a beat and the host
//!   lease after the [`lease_quorum`]-th confirm).
//! - **Leases** ([`ControllerNode::may_grant`]): with a peer, directives go
//!   out only while the standby's ack of a recent beat, or recent messages
//!   in this run from a [`lease_quorum`] of the topology's hosts, show no
//!   newer term can be granting.

use super::budget::{Budget, PerSlot};
use super::standby::{Peer, Seen, Watched};
use super::Address;
use crate::sched::{OnDemand, OnDemandConfig, SchedStats, Scheduler};
use crate::time::{Dur, Time};
use crate::wire::{
    peer::{PEER_TYPE, SUPERSEDED_TYPE},
    run_of, term_of, AgentSessions, Checked, ControllerKeys, Echo, Message, Packet, PeerBeat, RejectCounts,
    Repr, WireError, CONTROLLER_ID,
};
use std::collections::VecDeque;

/// Settings of the controller node.
#[derive(Clone, Debug)]
pub struct ControllerConfig {
    /// A join (its nonce) gets a challenge at most this often.
    pub challenge_every: Dur,
    /// Challenges signed a second, at most (all hosts).
    pub challenges_per_s: u64,
    /// A host is asked to join again at most this often.
    pub rejoin_every: Dur,
    /// On-demand coordination ([`crate::sched::ondemand`]; `None`: every pair is coordinated).
    pub on_demand: Option<OnDemandConfig>,
    /// The hosts' lease (with a peer): a directing controller whose peer's
    /// lease ran out grants only while a [`lease_quorum`] of the topology's
    /// hosts were heard in their sessions of its run within this (a few
    /// report intervals); and a new term that not every host confirms waits
    /// this much longer after its quorum's last confirm.
    pub host_lease: Dur,
    /// The agents' `directive_max_age` ([`super::AgentConfig`]): a grant
    /// older than this is refused, so a run's fence includes it (a crashed
    /// run's grant delayed or replayed by that much may still be obeyed).
    pub directive_max_age: Dur,
    /// A planted bug (tests only).
    #[cfg(feature = "mutations")]
    pub mutation: Option<super::Mutation>,
}

impl Default for ControllerConfig {
    fn default() -> ControllerConfig {
        ControllerConfig {
            challenge_every: Dur::from_ms(5),
            challenges_per_s: 2_000,
            rejoin_every: Dur::from_ms(10),
            on_demand: None,
            host_lease: Dur::from_ms(15),
            directive_max_age: super::DIRECTIVE_MAX_AGE,
            #[cfg(feature = "mutations")]
            mutation: None,
        }
    }
}

/// What happened at the controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControllerEvent<A> {
    /// A host confirmed a challenge: its session started, `from` is the address it stated.
    Joined {
        /// The host.
        host: u32,
        /// Its address from now on.
        from: A,
    },
    /// A host left.
    Left {
        /// The host.
        host: u32,
    },
    /// The scheduler dropped a host whose feedback stopped.
    TimedOut {
        /// The host.
        host: u32,
        /// Hosts timed out so far.
        total: u64,
    },
    /// A datagram was rejected (counted in [`ControllerStats::rejected`]).
    Rejected {
        /// Why.
        why: WireError,
        /// Its source.
        from: A,
    },
    /// This controller directs from now on, in a new term (a standby took
    /// over, or a controller left a term another run holds).
    TookOver {
        /// The new term.
        term: u64,
        /// The new run.
        run: u64,
    },
    /// This controller learned of a higher term and stopped directing.
    SteppedDown {
        /// The term it learned of.
        term: u64,
    },
    /// A host reports more rejections than before.
    AgentRejected {
        /// The host.
        host: u32,
        /// Its cumulative counts.
        counts: RejectCounts,
        /// How many more than its last report.
        new: u64,
    },
}

/// Counters of the controller node (the scheduler counts its own).
#[derive(Clone, Debug, Default)]
pub struct ControllerStats {
    /// Accepted messages by type: join, leave, heartbeat, report, give-back,
    /// rejections, confirm.
    pub msgs: [u64; 7],
    /// Rejected datagrams, by reason.
    pub rejected: RejectCounts,
    /// Datagrams sent.
    pub sent: u64,
    /// Directives for a host without an address (not joined).
    pub undeliverable: u64,
    /// Give-backs older than the latest directive to their host (ignored).
    pub stale_givebacks: u64,
    /// Joins not answered: the same join was challenged lately, or over the signing budget.
    pub challenges_limited: u64,
    /// Timer expiries handled.
    pub timer_fires: u64,
    /// Rejection counts each agent last reported.
    pub agent_rejections: Vec<Option<RejectCounts>>,
    /// Terms taken (a standby's takeovers, new terms after a taken one).
    pub takeovers: u64,
    /// Times this controller stopped directing (it learned of a higher term).
    pub stepped_down: u64,
    /// Superseded proofs checked (a signature each).
    pub proofs: u64,
    /// Superseded proofs not checked (over the per-host or the signing budget).
    pub proofs_limited: u64,
    /// Agents' datagrams a standby watched.
    pub observed: u64,
    /// Fences begun again: a controller of a lower term was still heard directing.
    pub refenced: u64,
    /// Times this controller stood by after running nothing for half the
    /// standby's patience (it may have been superseded meanwhile).
    pub stalled: u64,
    /// Challenges sent unasked at a takeover (to the sessions a standby watched).
    pub takeover_challenges: u64,
    /// Fences of a new term ended early: every host had confirmed the term.
    pub fences_ended_by_confirms: u64,
    /// Times this controller stopped granting: neither its peer's lease nor
    /// every host's held (it may have been superseded); it fenced again.
    pub unleased: u64,
    /// Standby timers that found the node had not run for more than a
    /// beat: the takeover waited for a re-check, after the queued datagrams.
    pub rechecks: u64,
    /// Demand reports accepted (on-demand coordination).
    pub demands: u64,
    /// Ungated sets sent (on-demand coordination).
    pub ungates: u64,
}

/// Names of [`ControllerStats::msgs`], in order.
pub const MESSAGE_NAMES: [&str; 7] = [
    "join",
    "leave",
    "heartbeat",
    "report",
    "giveback",
    "rejections",
    "confirm",
];

/// The controller node. See the module documentation.
pub struct ControllerNode<A> {
    cfg: ControllerConfig,
    /// The scheduler.
    pub sched: Scheduler,
    keys: ControllerKeys,
    sessions: AgentSessions,
    run: u64,
    seq: u64,
    addrs: Vec<Option<A>>,
    joined: Vec<bool>,
    /// Per host, the epoch of the latest directive sent.
    sent_epoch: Vec<u64>,
    /// This run grants nothing before this instant (set at its first input).
    fence_until: Option<Time>,
    fence: Dur,
    /// Backlogs reported while fenced, applied when the fence ends.
    fenced_backlog: Vec<Option<Vec<u32>>>,
    /// Per host, the nonces of its last joins challenged, and when.
    recent_joins: Vec<[(u64, Time); 4]>,
    signing: Budget,
    rejoins: PerSlot,
    timed_out_seen: u64,
    /// The instant of the input the scheduler's pending directives answer.
    input_at: Time,
    out: VecDeque<(A, Vec<u8>)>,
    events: VecDeque<ControllerEvent<A>>,
    /// Counters.
    pub stats: ControllerStats,
    /// On-demand coordination, if on.
    pub on_demand: Option<OnDemand>,
    /// Directs (holds the term of `run`); false: stands by.
    active: bool,
    /// The highest term known of.
    max_term: u64,
    /// The peer controller (hot standby), if any.
    peer: Option<Peer<A>>,
    peer_started: bool,
    /// Per host, what this controller saw of it (the address and session of its latest confirm).
    seen: Vec<Option<Seen<A>>>,
    /// Per host, what a standby saw besides: its latest backlog, a join in flight.
    watched: Vec<Watched<A>>,
    /// A new term's fence waits for these hosts' confirms: when every host
    /// has confirmed, none obeys an older term's slice any more (each closed
    /// it as it adopted this term) and the fence ends. Empty: no early end.
    awaiting: Vec<bool>,
    proofs: PerSlot,
    /// A term taken from a peer: confirms it still needs from distinct
    /// hosts before its fence may end by time (0: none); the fence starts
    /// again at the last of them (see [`ControllerNode::take_over`]).
    confirms_needed: usize,
    /// Per host: it confirmed this term (counted towards `confirms_needed`).
    confirmed_by: Vec<bool>,
    /// Scratch for [`ControllerNode::may_grant`]'s quorum (no allocation per call).
    lease_ends: Vec<Time>,
    /// The instant of the last input (a datagram or a timer).
    last_input: Option<Time>,
    /// When this controller last took a term over.
    took_over_at: Time,
    /// Per host, when a message of its session in this run was last accepted.
    heard: Vec<Time>,
    /// Per host, that message's sequence number (echoed by its grants; 0: none).
    heard_seq: Vec<u64>,
    /// Per host, the sequence number of the latest ungated set sent to it in
    /// its session (0: none).
    ungate_seq: Vec<u64>,
    /// The gap before the current input (see [`ControllerNode::touch`]).
    idle: Dur,
    /// A standby's takeover waits for a re-check at this instant (its timer
    /// found it had not run for more than a beat).
    recheck_at: Option<Time>,
    /// No lease holds ([`ControllerNode::may_grant`]): fenced until one does.
    unleased: bool,
    /// Every host's lease holds until at least this instant.
    fresh_until: Time,
}

impl<A: Address> ControllerNode<A> {
    /// A controller of run `run` (random per start: the driver draws it)
    /// over `sched`, signing with `keys`.
    pub fn new(cfg: ControllerConfig, sched: Scheduler, keys: ControllerKeys, run: u64) -> ControllerNode<A> {
        let hosts = keys.hosts();
        let fence = sched.config().slice + sched.config().lead + cfg.directive_max_age;
        let on_demand = cfg
            .on_demand
            .clone()
            .map(|c| OnDemand::new(c, sched.hosts(), sched.links()));
        ControllerNode {
            on_demand,
            recent_joins: vec![[(0, Time::ZERO); 4]; hosts],
            signing: Budget::new(cfg.challenges_per_s, 64),
            rejoins: PerSlot::new(hosts, cfg.rejoin_every),
            cfg,
            sched,
            keys,
            sessions: AgentSessions::new(hosts, run),
            run,
            seq: 0,
            addrs: vec![None; hosts],
            joined: vec![false; hosts],
            sent_epoch: vec![0; hosts],
            fence_until: None,
            fence,
            fenced_backlog: vec![None; hosts],
            timed_out_seen: 0,
            input_at: Time::ZERO,
            out: VecDeque::new(),
            events: VecDeque::new(),
            stats: ControllerStats {
                agent_rejections: vec![None; hosts],
                ..Default::default()
            },
            active: true,
            max_term: term_of(run),
            peer: None,
            peer_started: false,
            seen: vec![None; hosts],
            watched: (0..hosts).map(|_| Watched::default()).collect(),
            awaiting: Vec::new(),
            proofs: PerSlot::new(hosts, Dur::from_ms(10)),
            confirms_needed: 0,
            confirmed_by: vec![false; hosts],
            lease_ends: Vec::with_capacity(hosts),
            last_input: None,
            took_over_at: Time::ZERO,
            heard: vec![Time::ZERO; hosts],
            heard_seq: vec![0; hosts],
            ungate_seq: vec![0; hosts],
            idle: Dur::ZERO,
            recheck_at: None,
            unleased: false,
            fresh_until: Time::ZERO,
        }
    }

    /// With a peer controller: beats to it, and `active` false: stand by
    /// until it is silent (see [`super::standby`]; the run's term is the
    /// highest this controller knows of).
    pub fn with_peer(mut self, peer: Peer<A>, active: bool) -> ControllerNode<A> {
        self.peer = Some(peer);
        self.active = active;
        self
    }

    /// The highest term the driver knows this controller held (a restarted
    /// daemon's own record): its terms from now on are above it.
    pub fn knowing_term(mut self, term: u64) -> ControllerNode<A> {
        self.max_term = self.max_term.max(term);
        self
    }

    /// True while this controller directs.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// The term of this controller's run.
    pub fn term(&self) -> u64 {
        term_of(self.run)
    }

    /// The highest term this controller knows of.
    pub fn max_term(&self) -> u64 {
        self.max_term
    }

    /// The peer, if any.
    pub fn peer(&self) -> Option<&Peer<A>> {
        self.peer.as_ref()
    }

    fn touch(&mut self, now: Time) {
        let gap = self.last_input.map_or(Dur::ZERO, |t| now.saturating_since(t));
        self.last_input = Some(now);
        self.idle = gap;
        if let (true, Some(p)) = (self.active, &self.peer) {
            // this controller ran nothing for half the peer's patience (a pause, a
            // stall): the standby may have taken over meanwhile, and what it would
            // grant first is stale. Stand by; the beats say who directs, and a dead
            // peer is replaced after the silence, in a new, fenced term.
            if gap.ps() * 2 >= p.cfg.takeover_after.ps() {
                let term = self.max_term;
                self.step_down(now, term);
                self.stats.stalled += 1;
            }
        }
        if !self.peer_started {
            self.peer_started = true;
            if let Some(p) = &mut self.peer {
                p.heard_at = now;
                p.beat_at = now;
            }
        }
    }

    /// A beat from the peer.
    fn peer_beat(&mut self, now: Time, from: A, datagram: &[u8]) {
        let Some(p) = self.peer.as_mut() else {
            return self.reject(WireError::Misdirected, from);
        };
        let b = match PeerBeat::decode(&p.key, datagram) {
            Ok(b) => b,
            Err(e) => return self.reject(e, from),
        };
        if b.run == self.run || !p.accept(&b) {
            return;
        }
        if let (false, Some(ack)) = (b.active, b.ack) {
            // the peer stands by and heard this run's beat: the lease
            p.acked(self.run, ack);
        }
        self.max_term = self.max_term.max(b.term);
        if b.active {
            p.heard_at = now;
            p.backoff = 0;
            let extra = p.cfg.beat_every + self.cfg.host_lease;
            if self.active && term_of(b.run) < term_of(self.run) {
                // a lower term still directs (it has not heard of this one yet):
                // it holds no lease (this controller directs, and acks nothing),
                // so it grants only while a lease quorum of hosts is heard in
                // its run; its grants may run to a slice and the lead after the
                // host lease of the quorum's last move
                self.refence(now, extra);
            }
            self.newer(now, term_of(b.run), b.run);
        }
    }

    /// An agent's proof of a newer term: checked within the budgets, then
    /// believed. Only a proof that would change something is checked (a
    /// term above all known, or, while directing, another run of this term
    /// or a higher one): agents that adopt a new term send one each to both
    /// controllers, and all but the first tell nothing new. A host whose
    /// proof fails its signature check is not heard again for
    /// `proofs`' interval.
    fn superseded(&mut self, now: Time, from: A, datagram: &[u8]) {
        let s = match self.keys.decode_superseded(datagram) {
            Ok(s) => s,
            Err(e) => return self.reject(e, from),
        };
        let Ok(p) = Packet::new_checked(&s.proof[..]) else {
            return self.reject(WireError::BadPayload("superseded proof"), from);
        };
        let (run, term) = (p.run(), term_of(p.run()));
        let news = term > self.max_term || (self.active && term >= term_of(self.run) && run != self.run);
        if !news {
            return;
        }
        if !self.proofs.ready(s.host as usize, now) || !self.signing.take(now) {
            self.stats.proofs_limited += 1;
            return;
        }
        self.stats.proofs += 1;
        match self.keys.verify_signed(&s.proof) {
            Ok(r) if r.host == CONTROLLER_ID => {
                let was_active = self.active;
                self.newer(now, term_of(r.run), r.run);
                if was_active && !self.active {
                    // the peer directs, and only the agents could tell: wait longer
                    if let Some(p) = &mut self.peer {
                        p.backoff += 1;
                    }
                }
            }
            Ok(_) => {}
            Err(e) => {
                self.proofs.allow(s.host as usize, now);
                self.reject(e, from)
            }
        }
    }

    /// Run `run` of term `term` exists: a directing controller whose term it
    /// beats stands by (or, without a peer, takes a new term); one whose own
    /// term another run holds takes a new term.
    fn newer(&mut self, now: Time, term: u64, run: u64) {
        self.max_term = self.max_term.max(term);
        let mine = (term_of(self.run), self.run);
        if !self.active || term < mine.0 || run == self.run {
            return;
        }
        if (term, run) > mine && self.peer.is_some() {
            self.step_down(now, term);
        } else {
            self.take_over(now);
        }
    }

    /// Evidence that a controller of a lower term still directs: grant
    /// nothing until one slice plus the lead (plus `extra`) from now. Hosts
    /// keep their sessions; the scheduler forgets what it granted and the
    /// backlogs wait for the fence's end.
    fn refence(&mut self, now: Time, extra: Dur) {
        let until = now + self.fence + extra;
        if self.fence_until.is_some_and(|t| t >= until) {
            return;
        }
        #[cfg(feature = "mutations")]
        if self.cfg.mutation == Some(super::Mutation::TakeoverWithoutFence) {
            return;
        }
        self.fence_until = Some(until);
        for h in 0..self.addrs.len() as u32 {
            if self.sched.joined(h) {
                self.sched.handle_leave(now, h);
                self.sched.handle_join(now, h);
            }
        }
        while self.sched.poll_directive().is_some() {}
        self.stats.refenced += 1;
    }

    /// The backlogs reported while fenced go to the scheduler (the fence ended).
    fn apply_fenced(&mut self, now: Time) {
        for h in 0..self.fenced_backlog.len() {
            if let Some(dests) = self.fenced_backlog[h].take() {
                if self.sched.joined(h as u32) {
                    self.backlog(now, h as u32, &dests);
                }
            }
        }
    }

    /// Host `h` confirmed this run: if the fence of a new term waited for it
    /// and it was the last, every host has closed the older term's slice and
    /// refuses that term from now on, so the fence ends now.
    fn confirmed_term(&mut self, now: Time, h: u32) {
        let Some(w) = self.awaiting.get_mut(h as usize) else {
            return;
        };
        *w = false;
        #[cfg(feature = "mutations")]
        if self.cfg.mutation == Some(super::Mutation::EndFenceAtFirstConfirm) {
            self.awaiting.iter_mut().for_each(|w| *w = false);
        }
        if self.awaiting.iter().any(|&w| w) {
            return;
        }
        self.awaiting.clear();
        // every host left the older term: no quorum is needed any more
        self.confirms_needed = 0;
        if self.fence_until.is_some_and(|t| t > now) {
            self.fence_until = Some(now);
            self.stats.fences_ended_by_confirms += 1;
        }
        self.apply_fenced(now);
    }

    /// Forget every host and every directive not sent yet.
    fn drop_all(&mut self, now: Time) {
        self.awaiting.clear();
        for h in 0..self.addrs.len() as u32 {
            if self.sched.joined(h) {
                self.sched.handle_leave(now, h);
            }
            self.sessions.forget(h);
            self.addrs[h as usize] = None;
            self.joined[h as usize] = false;
            self.fenced_backlog[h as usize] = None;
            self.sent_epoch[h as usize] = 0;
            self.heard[h as usize] = Time::ZERO; // heard in a run no more
            self.heard_seq[h as usize] = 0;
            self.ungate_seq[h as usize] = 0;
        }
        self.fresh_until = Time::ZERO;
        while self.sched.poll_directive().is_some() {}
        self.out.clear();
        if let Some(od) = &mut self.on_demand {
            *od = OnDemand::new(od.config().clone(), self.sched.hosts(), self.sched.links());
        }
    }

    fn step_down(&mut self, now: Time, term: u64) {
        self.drop_all(now);
        self.active = false;
        self.fence_until = None;
        self.stats.stepped_down += 1;
        if let Some(p) = &mut self.peer {
            // the newer term's controller was alive just now
            p.heard_at = now;
        }
        self.events.push_back(ControllerEvent::SteppedDown { term });
    }

    /// Direct from now on in a term above every term known: a new run,
    /// fenced; every host seen is challenged at once in the session it was
    /// seen in (its confirm starts its session here: no join round trip),
    /// and a join seen in flight is answered too. The fence ends when every
    /// host has confirmed ([`ControllerNode::confirmed_term`]), or after
    /// its time.
    fn take_over(&mut self, now: Time) {
        self.drop_all(now);
        self.max_term = match &self.peer {
            Some(p) => p.next_term(self.max_term),
            None => self.max_term + 1,
        };
        self.run = run_of(self.max_term, self.run as u32);
        self.active = true;
        if let Some(p) = &mut self.peer {
            p.lease_until = Time::ZERO; // a new run: its lease comes from acks of its own beats
        }
        self.sessions = AgentSessions::new(self.addrs.len(), self.run);
        self.seq = 0;
        self.recent_joins
            .iter_mut()
            .for_each(|r| *r = [(0, Time::ZERO); 4]);
        #[allow(unused_mut)]
        let mut fence = self.fence;
        #[cfg(feature = "mutations")]
        if self.cfg.mutation == Some(super::Mutation::TakeoverWithoutFence) {
            fence = Dur::ZERO;
        }
        self.fence_until = Some(now + fence);
        // a controller of the old term that cannot hear this one (the
        // controllers cut off from each other) grants only while it hears a
        // lease quorum of hosts in its run; a host that confirms this term
        // leaves that run: so, unless every host confirms first, the fence
        // holds until a lease quorum confirmed and starts again at the last
        // of them, with one beat for that confirm's trip (two quorums of
        // `lease_quorum` share an honest host, whichever single host lies)
        self.confirms_needed = if self.peer.is_some() {
            lease_quorum(self.addrs.len())
        } else {
            0
        };
        self.confirmed_by.iter_mut().for_each(|c| *c = false);
        self.awaiting = vec![true; self.addrs.len()];
        self.took_over_at = now;
        self.stats.takeovers += 1;
        self.events.push_back(ControllerEvent::TookOver {
            term: self.max_term,
            run: self.run,
        });
        for h in 0..self.seen.len() {
            let w = std::mem::take(&mut self.watched[h]);
            let mut challenged = None;
            if let Some(s) = self.seen[h] {
                self.challenge(now, h as u32, s.session, s.addr);
                challenged = Some(s.session);
                // its report in this term replaces it; until then, what it last reported
                self.fenced_backlog[h] = w.backlog;
            }
            if let Some((nonce, from)) = w.join.filter(|j| Some(j.0) != challenged) {
                self.challenge(now, h as u32, nonce, from);
            }
        }
    }

    /// Challenge host `h`'s session `nonce` unasked, at `to` (a takeover).
    /// A message of that session that overtakes the confirm is not answered
    /// with a rejoin request (as after a join).
    fn challenge(&mut self, now: Time, h: u32, nonce: u64, to: A) {
        let recent = &mut self.recent_joins[h as usize];
        recent.rotate_right(1);
        recent[0] = (nonce, now);
        let challenge = self.sessions.issue();
        self.stats.takeover_challenges += 1;
        self.send(
            to,
            Message::Challenge {
                host: h,
                nonce,
                challenge,
            },
        );
    }

    /// A standby watches the hosts: the address and session of each one's
    /// latest confirm, its latest backlog in that session, a join in flight.
    fn observe(&mut self, from: A, datagram: &[u8]) {
        let Ok(repr) = self.keys.decode(datagram) else {
            return;
        };
        self.stats.observed += 1;
        let h = repr.host as usize;
        let hosts = self.addrs.len();
        let in_session = self.seen[h].is_some_and(|s| s.session == repr.run);
        let w = &mut self.watched[h];
        match repr.msg {
            Message::Confirm { run, challenge, addr } => {
                if let Some(a) = A::from_wire(&addr) {
                    if self.seen[h].is_none_or(|s| s.older_than(run, challenge)) {
                        self.seen[h] = Some(Seen {
                            addr: a,
                            session: repr.run,
                            confirmed: (run, challenge),
                        });
                        w.seq = repr.seq;
                        w.backlog = None;
                        w.join = w.join.filter(|j| j.0 != repr.run);
                    }
                }
            }
            Message::Join => w.join = Some((repr.run, from)),
            msg if in_session && repr.seq > w.seq => {
                w.seq = repr.seq;
                match msg {
                    Message::Report { dests } => {
                        w.backlog = Some(dests.into_iter().filter(|&d| (d as usize) < hosts).collect());
                    }
                    Message::Demand { entries, .. } => {
                        w.backlog = Some(
                            entries
                                .iter()
                                .filter(|e| e.backlogged && (e.dest as usize) < hosts)
                                .map(|e| e.dest)
                                .collect(),
                        );
                    }
                    Message::GiveBack { dest, .. } => {
                        if let Some(b) = &mut w.backlog {
                            b.retain(|&d| d != dest);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn beat(&mut self, now: Time) {
        let (run, term, active) = (self.run, self.max_term, self.active);
        let Some(p) = self.peer.as_mut() else { return };
        if now < p.beat_at {
            return;
        }
        p.beat_at = now + p.cfg.beat_every;
        p.seq += 1;
        p.sending(run, p.seq, now);
        let b = PeerBeat {
            run,
            seq: p.seq,
            term,
            active,
            ack: p.ack(),
        };
        self.out.push_back((p.addr, b.encode(&p.key)));
        self.stats.sent += 1;
    }

    /// Settings.
    pub fn config(&self) -> &ControllerConfig {
        &self.cfg
    }

    /// This run's id.
    pub fn run(&self) -> u64 {
        self.run
    }

    /// The scheduler's counters.
    pub fn sched_stats(&self) -> &SchedStats {
        self.sched.stats()
    }

    /// Host `h`'s address (bound at its confirm), if it has one.
    pub fn addr(&self, h: u32) -> Option<A> {
        self.addrs.get(h as usize).copied().flatten()
    }

    fn send(&mut self, to: A, msg: Message) {
        self.seq += 1;
        let repr = Repr {
            host: CONTROLLER_ID,
            run: self.run,
            seq: self.seq,
            msg,
        };
        self.out.push_back((to, self.keys.encode(&repr)));
        self.stats.sent += 1;
    }

    fn reject(&mut self, why: WireError, from: A) {
        let c = &mut self.stats.rejected;
        match why {
            WireError::BadTag => c.auth += 1,
            WireError::Replay { .. } => c.replay += 1,
            WireError::Session { .. } | WireError::UnknownSender(_) => c.session += 1,
            _ => c.malformed += 1,
        }
        self.events.push_back(ControllerEvent::Rejected { why, from });
    }

    /// A datagram from `from` arrived at `now`.
    pub fn handle_datagram(&mut self, now: Time, from: A, datagram: &[u8]) {
        self.input_at = now;
        self.touch(now);
        match datagram.get(3) {
            Some(&PEER_TYPE) => return self.peer_beat(now, from, datagram),
            Some(&SUPERSEDED_TYPE) => return self.superseded(now, from, datagram),
            _ => {}
        }
        if !self.active {
            return self.observe(from, datagram);
        }
        let repr = match self.keys.decode(datagram) {
            Ok(r) => r,
            Err(e) => return self.reject(e, from),
        };
        let h = repr.host;
        let checked = match self.sessions.check(&repr) {
            Ok(c) => c,
            Err(e) => {
                if let (WireError::Session { .. }, false) = (&e, matches!(repr.msg, Message::Confirm { .. }))
                {
                    // a genuine host (its MAC checked) in a session this run does not
                    // know — unless it was just challenged: its confirm may be on the
                    // way behind this message (reordered)
                    // (or, after a takeover, challenged unasked: its confirm states a
                    // new session, which its other messages may overtake)
                    let confirming = self.recent_joins[h as usize]
                        .iter()
                        .any(|&(n, t)| n == repr.run && now < t + self.cfg.challenge_every)
                        || (self.awaiting.get(h as usize) == Some(&true)
                            && now < self.took_over_at + self.cfg.challenge_every);
                    if !confirming {
                        self.ask_rejoin(now, h, repr.run, from);
                    }
                }
                return self.reject(e, from);
            }
        };
        #[cfg(feature = "mutations")]
        if self.cfg.mutation == Some(super::Mutation::AddressFromAnySource) {
            self.addrs[h as usize] = Some(from);
        }
        match (checked, repr.msg) {
            (Checked::Join, _) => {
                self.stats.msgs[0] += 1;
                // a join challenged lately (a duplicate, or a replay) is not answered
                // again; new ones within the signing budget
                let recent = &mut self.recent_joins[h as usize];
                let dup = recent
                    .iter()
                    .any(|&(n, t)| n == repr.run && now < t + self.cfg.challenge_every);
                if dup || !self.signing.take(now) {
                    self.stats.challenges_limited += 1;
                    return;
                }
                recent.rotate_right(1);
                recent[0] = (repr.run, now);
                let challenge = self.sessions.issue();
                self.send(
                    from,
                    Message::Challenge {
                        host: h,
                        nonce: repr.run,
                        challenge,
                    },
                );
            }
            (Checked::Confirmed, msg) => {
                self.stats.msgs[6] += 1;
                let Message::Confirm { addr, .. } = &msg else {
                    unreachable!("only a confirm is confirmed")
                };
                let Some(to) = A::from_wire(addr) else {
                    // its own MAC'd words: a host that cannot say where it is gets nothing
                    return self.reject(WireError::BadPayload("confirm address"), from);
                };
                #[cfg(feature = "mutations")]
                let to = if self.cfg.mutation == Some(super::Mutation::AddressFromAnySource) {
                    from
                } else {
                    to
                };
                let from = to;
                if let Message::Confirm { run, challenge, .. } = msg {
                    self.seen[h as usize] = Some(Seen {
                        addr: to,
                        session: repr.run,
                        confirmed: (run, challenge),
                    });
                    self.watched[h as usize] = Watched {
                        seq: repr.seq,
                        ..Watched::default()
                    };
                }
                self.addrs[h as usize] = Some(from);
                self.joined[h as usize] = true;
                self.heard[h as usize] = now;
                self.heard_seq[h as usize] = repr.seq;
                if let Some(od) = &mut self.on_demand {
                    od.forget(h); // the agent's new session starts with every pair coordinated
                }
                self.ungate_seq[h as usize] = 0;
                if self.confirms_needed > 0 && !std::mem::replace(&mut self.confirmed_by[h as usize], true) {
                    self.confirms_needed -= 1;
                    if self.confirms_needed == 0 {
                        // the old term's controller, if alive, holds no standby lease
                        // any more (the peer took over after its silence), so it grants
                        // only while a lease quorum of hosts is heard in its run: a
                        // quorum has now left it, so it grants nothing after one host
                        // lease from now (plus a beat for this confirm's trip)
                        let beat = self.peer.as_ref().map_or(Dur::ZERO, |p| p.cfg.beat_every);
                        self.refence(now, beat + self.cfg.host_lease);
                    }
                }
                self.sched.handle_join(now, h);
                self.events.push_back(ControllerEvent::Joined { host: h, from });
                self.confirmed_term(now, h);
            }
            (Checked::InSession, msg) => {
                self.heard_seq[h as usize] = repr.seq;
                self.in_session(now, h, msg)
            }
        }
    }

    /// One dispatch of every message of an established session.
    fn in_session(&mut self, now: Time, h: u32, msg: Message) {
        let hosts = self.addrs.len();
        self.heard[h as usize] = now;
        match msg {
            Message::Leave => {
                self.stats.msgs[1] += 1;
                self.sched.handle_leave(now, h);
                self.drop_host(h);
                self.events.push_back(ControllerEvent::Left { host: h });
            }
            Message::Heartbeat => {
                self.stats.msgs[2] += 1;
                self.sched.handle_feedback(now, h);
            }
            Message::Report { dests } => {
                self.stats.msgs[3] += 1;
                self.sched.handle_feedback(now, h);
                let valid: Vec<u32> = dests.into_iter().filter(|&d| (d as usize) < hosts).collect();
                if self.fenced(now) {
                    // grants wait for the fence; the latest backlog is kept for then
                    self.fenced_backlog[h as usize] = Some(valid);
                } else {
                    self.backlog(now, h, &valid);
                }
            }
            Message::Demand { entries, ungated_seq } => {
                // a backlog report with the demand (on-demand coordination)
                self.stats.msgs[3] += 1;
                self.sched.handle_feedback(now, h);
                if let Some(od) = &mut self.on_demand {
                    self.stats.demands += 1;
                    od.handle_demand(now, h, &entries);
                    if ungated_seq < self.ungate_seq[h as usize] {
                        // its latest set was lost, or came behind a newer datagram
                        od.resend(h);
                    }
                }
                let valid: Vec<u32> = entries
                    .iter()
                    .filter(|e| e.backlogged && (e.dest as usize) < hosts)
                    .map(|e| e.dest)
                    .collect();
                if self.fenced(now) {
                    self.fenced_backlog[h as usize] = Some(valid);
                } else {
                    self.backlog(now, h, &valid);
                }
            }
            Message::GiveBack { dest, epoch } => {
                if epoch != 0 && epoch < self.sent_epoch[h as usize] {
                    // it crossed a newer directive (decided ahead) in flight: the
                    // host obeys that one, and gives it back in turn if it has nothing
                    self.stats.stale_givebacks += 1;
                } else if (dest as usize) < hosts && !self.fenced(now) {
                    self.stats.msgs[4] += 1;
                    self.sched.handle_giveback(now, h, dest);
                }
            }
            Message::Rejections(c) => {
                self.stats.msgs[5] += 1;
                let before = self.stats.agent_rejections[h as usize].unwrap_or_default();
                if c.total() > before.total() {
                    self.events.push_back(ControllerEvent::AgentRejected {
                        host: h,
                        counts: c,
                        new: c.total() - before.total(),
                    });
                }
                self.stats.agent_rejections[h as usize] = Some(c);
            }
            // joins and confirms are checked above; the keys accept agents' message types only
            Message::Join
            | Message::Confirm { .. }
            | Message::Directive(..)
            | Message::Hello { .. }
            | Message::Rejoin { .. }
            | Message::Challenge { .. }
            | Message::Ungate { .. } => {}
        }
        self.joined[h as usize] |= self.sched.joined(h);
    }

    /// Host `h`'s backlog to the scheduler: with on-demand coordination,
    /// only its coordinated pairs.
    fn backlog(&mut self, now: Time, h: u32, dests: &[u32]) {
        match &mut self.on_demand {
            Some(od) => od.handle_backlog(now, h, dests, &mut self.sched),
            None => self.sched.handle_backlog(now, h, dests),
        }
    }

    fn drop_host(&mut self, h: u32) {
        if let Some(od) = &mut self.on_demand {
            od.forget(h);
        }
        self.ungate_seq[h as usize] = 0;
        self.sessions.forget(h);
        self.addrs[h as usize] = None;
        self.joined[h as usize] = false;
        self.heard_seq[h as usize] = 0;
    }

    /// The freshness a grant to `h` signed at `now` carries: the host's
    /// latest message accepted, when, and now (this node's clock, ns).
    fn echo(&self, now: Time, h: u32) -> Echo {
        let ns = |t: Time| t.ps() / crate::time::PS_PER_NS;
        Echo {
            seq: self.heard_seq[h as usize],
            received_ns: ns(self.heard[h as usize]),
            signed_ns: ns(now),
        }
    }

    fn ask_rejoin(&mut self, now: Time, host: u32, session: u64, from: A) {
        if !self.rejoins.allow(host as usize, now) {
            return;
        }
        let to = self.addr(host).unwrap_or(from);
        self.send(to, Message::Rejoin { host, session });
    }

    /// True while this run grants nothing: from its first input for one
    /// slice plus the lead, the time a slice granted by the run before it
    /// (a crashed controller) may still hold at an agent.
    fn fenced(&mut self, now: Time) -> bool {
        // without a lease this controller may have been superseded: it fences
        // again (the scheduler forgets what it granted, which ends within a
        // slice and the lead) and grants nothing until a lease holds
        let leased = self.may_grant(now);
        if !leased && !self.unleased {
            self.refence(now, Dur::ZERO);
            self.stats.unleased += 1;
        }
        self.unleased = !leased;
        let end = *self.fence_until.get_or_insert(now + self.fence);
        // (a term short of its quorum's confirms is fenced whatever the time)
        let quorum_due = self.confirms_needed > 0;
        if now >= end && !quorum_due {
            // the fence ended by its time and this term may grant: a fence begun
            // again later (which forgets the grants) must not end at a confirm
            // (found by the harness, seed 3390 and four more of 10,000)
            self.awaiting.clear();
        }
        now < end || self.unleased || quorum_due
    }

    /// The scheduler's deadline (or the fence's end) passed (call at [`ControllerNode::poll_timeout`]).
    pub fn handle_timeout(&mut self, now: Time) {
        self.input_at = now;
        self.stats.timer_fires += 1;
        self.touch(now);
        self.beat(now);
        if self.recheck_at.is_some_and(|t| now >= t) {
            self.recheck_at = None;
        }
        if !self.active {
            let Some(p) = self.peer.as_ref().filter(|p| now >= p.takeover_at()) else {
                return;
            };
            // this node ran nothing for more than a beat (descheduled, a stall):
            // the peer's beats may wait unread (a driver serves its timer first),
            // so silence it did not watch is no death: look again after the
            // driver has delivered what waits
            let beat = p.cfg.beat_every;
            if self.idle > beat + Dur::from_ps(beat.ps() / 2) {
                self.recheck_at = Some(now + Dur::from_ps(beat.ps() / 8));
                self.stats.rechecks += 1;
                return;
            }
            self.take_over(now);
            self.beat(now);
        }
        if self.fenced(now) {
            if let Some(od) = &mut self.on_demand {
                od.defer(now); // its deadline passes too (no busy loop through the fence)
            }
        } else {
            self.apply_fenced(now);
            if let Some(od) = &mut self.on_demand {
                od.handle_timeout(now, &mut self.sched);
            }
        }
        self.sched.handle_timeout(now);
        let timed_out = self.sched.stats().hosts_timed_out;
        if timed_out > self.timed_out_seen {
            self.timed_out_seen = timed_out;
            for h in 0..self.joined.len() as u32 {
                if self.joined[h as usize] && !self.sched.joined(h) {
                    self.drop_host(h);
                    self.events.push_back(ControllerEvent::TimedOut {
                        host: h,
                        total: timed_out,
                    });
                }
            }
        }
    }

    /// The next instant [`ControllerNode::handle_timeout`] is due.
    pub fn poll_timeout(&self) -> Option<Time> {
        let peer = self.peer.as_ref().map(|p| {
            if self.active {
                p.beat_at
            } else {
                let at = p.beat_at.min(p.takeover_at());
                self.recheck_at.map_or(at, |r| r.max(at))
            }
        });
        if !self.active {
            return peer;
        }
        let own = self.own_timeout();
        match (own, peer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn own_timeout(&self) -> Option<Time> {
        let fence = match self.fence_until {
            // (unleased, or short of the quorum's confirms, the fence ends at
            // an input that renews a lease or confirms: no timer)
            Some(t)
                if !self.unleased
                    && self.confirms_needed == 0
                    && self.fenced_backlog.iter().any(Option::is_some) =>
            {
                Some(t)
            }
            _ => None,
        };
        let od = self.on_demand.as_ref().and_then(OnDemand::poll_timeout);
        [self.sched.poll_timeout(), fence, od].into_iter().flatten().min()
    }

    /// The next datagram to send and its destination: answers first, then
    /// the scheduler's directives (signed now, their start aged by the time
    /// since the input they answer; those for a host without an address are
    /// counted and dropped).
    pub fn poll_transmit(&mut self, now: Time) -> Option<(A, Vec<u8>)> {
        if let Some(x) = self.out.pop_front() {
            return Some(x);
        }
        if !self.active {
            return None;
        }
        while let Some((host, dests)) = self.on_demand.as_mut().and_then(OnDemand::poll_ungate) {
            let Some(to) = self.addr(host) else {
                continue; // it starts coordinated when it joins
            };
            self.stats.ungates += 1;
            let echo = self.echo(now, host);
            self.send(to, Message::Ungate { host, dests, echo });
            self.ungate_seq[host as usize] = self.seq;
            return self.out.pop_front();
        }
        while let Some(d) = self.sched.poll_directive() {
            let Some(to) = self.addr(d.host) else {
                self.stats.undeliverable += 1;
                continue;
            };
            let d = d.aged(now.saturating_since(self.input_at));
            self.sent_epoch[d.host as usize] = d.epoch;
            let echo = self.echo(now, d.host);
            self.send(to, Message::Directive(d, echo));
            return self.out.pop_front();
        }
        None
    }

    /// True if this controller may grant now: it has no peer, or its peer,
    /// standing by, acked a beat recent enough that it cannot have taken over
    /// (the lease), or a [`lease_quorum`] of the topology's hosts were heard
    /// in their sessions of this run within the host lease (a host that
    /// adopted a newer term sends nothing more in this run's sessions). A
    /// controller cut off from its standby thus stops granting within one
    /// host lease of the moment a quorum has left it for a newer term,
    /// however many of the agents' proofs are lost; a new term that not
    /// every host confirms waits that long after its quorum's last confirm
    /// (see `take_over`). A quorum, not every host: one silent host (dead,
    /// or hostile) cannot stop the grants of a controller whose standby is
    /// gone.
    pub fn may_grant(&mut self, now: Time) -> bool {
        let Some(p) = &self.peer else { return true };
        if now < p.lease_until || now < self.fresh_until {
            return true;
        }
        // the quorum's lease ends at the q-th latest end of a host's lease
        // (kept: a host heard later only moves it later; a host gone stops
        // being heard, so its own lease runs out by itself)
        let q = lease_quorum(self.heard.len());
        if q == 0 {
            return true;
        }
        self.lease_ends.clear();
        self.lease_ends.extend(self.heard.iter().map(|&t| {
            if t == Time::ZERO {
                t
            } else {
                t + self.cfg.host_lease
            }
        }));
        let (_, qth, _) = self.lease_ends.select_nth_unstable_by(q - 1, |a, b| b.cmp(a));
        self.fresh_until = *qth;
        now < self.fresh_until
    }

    /// The next event, oldest first.
    pub fn poll_event(&mut self) -> Option<ControllerEvent<A>> {
        self.events.pop_front()
    }
}

/// Hosts of a topology of `hosts` whose recent messages lease a controller
/// without its standby's ack, and whose confirms a new term needs before
/// its fence may end by time: more than half of `hosts + 1`, so any two
/// such sets share at least two hosts, one of them honest whichever single
/// host lies to both controllers (and all hosts, for three or fewer).
pub fn lease_quorum(hosts: usize) -> usize {
    if hosts == 0 {
        return 0;
    }
    (hosts.div_ceil(2) + 1).min(hosts)
}
