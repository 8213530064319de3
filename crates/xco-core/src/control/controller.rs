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

use super::budget::{Budget, PerSlot};
use super::Address;
use crate::sched::{SchedStats, Scheduler};
use crate::time::{Dur, Time};
use crate::wire::{
    AgentSessions, Checked, ControllerKeys, Message, RejectCounts, Repr, WireError, CONTROLLER_ID,
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
}

impl<A: Address> ControllerNode<A> {
    /// A controller of run `run` (random per start: the driver draws it)
    /// over `sched`, signing with `keys`.
    pub fn new(cfg: ControllerConfig, sched: Scheduler, keys: ControllerKeys, run: u64) -> ControllerNode<A> {
        let hosts = keys.hosts();
        let fence = sched.config().slice + sched.config().lead;
        ControllerNode {
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
        }
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
                    let confirming = self.recent_joins[h as usize]
                        .iter()
                        .any(|&(n, t)| n == repr.run && now < t + self.cfg.challenge_every);
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
                let Message::Confirm { addr, .. } = msg else {
                    unreachable!("only a confirm is confirmed")
                };
                let Some(to) = A::from_wire(&addr) else {
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
                self.addrs[h as usize] = Some(from);
                self.joined[h as usize] = true;
                self.sched.handle_join(now, h);
                self.events.push_back(ControllerEvent::Joined { host: h, from });
            }
            (Checked::InSession, msg) => self.in_session(now, h, msg),
        }
    }

    /// One dispatch of every message of an established session.
    fn in_session(&mut self, now: Time, h: u32, msg: Message) {
        let hosts = self.addrs.len();
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
                    self.sched.handle_backlog(now, h, &valid);
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
            | Message::Directive(_)
            | Message::Hello { .. }
            | Message::Rejoin { .. }
            | Message::Challenge { .. } => {}
        }
        self.joined[h as usize] |= self.sched.joined(h);
    }

    fn drop_host(&mut self, h: u32) {
        self.sessions.forget(h);
        self.addrs[h as usize] = None;
        self.joined[h as usize] = false;
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
        let end = *self.fence_until.get_or_insert(now + self.fence);
        now < end
    }

    /// The scheduler's deadline (or the fence's end) passed (call at [`ControllerNode::poll_timeout`]).
    pub fn handle_timeout(&mut self, now: Time) {
        self.input_at = now;
        self.stats.timer_fires += 1;
        if !self.fenced(now) {
            for h in 0..self.fenced_backlog.len() {
                if let Some(dests) = self.fenced_backlog[h].take() {
                    if self.sched.joined(h as u32) {
                        self.sched.handle_backlog(now, h as u32, &dests);
                    }
                }
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
        let fence = match self.fence_until {
            Some(t) if self.fenced_backlog.iter().any(Option::is_some) => Some(t),
            _ => None,
        };
        match (self.sched.poll_timeout(), fence) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next datagram to send and its destination: answers first, then
    /// the scheduler's directives (signed now, their start aged by the time
    /// since the input they answer; those for a host without an address are
    /// counted and dropped).
    pub fn poll_transmit(&mut self, now: Time) -> Option<(A, Vec<u8>)> {
        if let Some(x) = self.out.pop_front() {
            return Some(x);
        }
        while let Some(d) = self.sched.poll_directive() {
            let Some(to) = self.addr(d.host) else {
                self.stats.undeliverable += 1;
                continue;
            };
            let d = d.aged(now.saturating_since(self.input_at));
            self.sent_epoch[d.host as usize] = d.epoch;
            self.send(to, Message::Directive(d));
            return self.out.pop_front();
        }
        None
    }

    /// The next event, oldest first.
    pub fn poll_event(&mut self) -> Option<ControllerEvent<A>> {
        self.events.pop_front()
    }
}
