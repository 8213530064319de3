//! A host's agent on the control plane, free of I/O: the run it obeys, its
//! joins, the directives it applies to its coordinator, what it rejects.
//!
//! - **Joining.** [`AgentNode::start`] sends a join with a fresh nonce (the
//!   agent's session). An answer to the join before the latest is taken
//!   too (its nonce becomes the session again), so an agent whose joins
//!   wait in its own egress queue longer than the join timeout still gets in. A signed challenge (or, from an older controller, a
//!   hello) echoing that nonce is the only way to adopt a controller run;
//!   the agent answers a challenge with a confirm and only then sends
//!   anything else in the session (reports held back while joining would
//!   reach a controller that does not know the session yet). A join
//!   unanswered for [`AgentConfig::join_timeout`] is sent again with a new
//!   nonce; joins go out at most every [`AgentConfig::join_every`].
//! - **What makes it join again**: only a signed rejoin request naming its
//!   current session (once). A signed message of another run is rejected
//!   and counted, nothing more: a replayed directive or hello of an old run
//!   costs no rejoin. A restarted controller learns of the agent from its
//!   next report (every report interval), which it answers with a rejoin
//!   request naming the report's session.
//! - **Checking.** Datagrams not from the controller's address
//!   ([`Origin::Other`]) are dropped unread; those from it are parsed, and
//!   well-formed ones verified (Ed25519) within a [`Budget`] and dropped
//!   unread beyond it. The driver
//!   serves its packet path and its timers before the control socket, so
//!   a flood of signed junk can cost coordination (the agent fails open) but
//!   not the packets or the fail-open timer.
//! - **Terms** (wire version 4, [`crate::wire::peer`]). The agent keeps the
//!   highest term it has verified a controller's signature on, and that
//!   datagram. A controller message of a lower term, or of another run of
//!   that term, is refused and counted ([`AgentNodeStats::stale_term`]), and
//!   the sender gets the newer term's datagram back as a
//!   [`Superseded`] proof (at most every [`AgentConfig::proof_every`]), so a
//!   stale controller stands down. A term above the run it obeys makes the
//!   agent join once (the new term's answer is the only one it can adopt):
//!   one join per genuine new term, no rejoin storm — unless it is a
//!   **challenge to its current session** (a standby that took over asks
//!   every host it watched, unasked): of the newest run seen and a term
//!   above the run obeyed, it is taken as the answer to the session's
//!   join (once: a replay finds that run adopted), the agent adopts the run
//!   and confirms, with no join round trip. Adopting a
//!   newer term closes the gate the older term opened (and drops its
//!   pending directive): the new controller grants as soon as every host
//!   has confirmed, and so knows no older slice is in force; and it sends
//!   the newer term's datagram as a proof at once, so an older controller
//!   still alive stands down without waiting to be refused. Everything it
//!   sends goes to both controllers (the driver's part): a standby watches.
//! - **Failing open suspends the run**: no directive for the fail-open
//!   time, the agent refuses its run's messages (they may be arbitrarily
//!   late) and joins; a fresh answer lifts it.
//! - **Freshness** (wire version 5). The agent keeps the send time of its
//!   last [`SENT_KEPT`] messages. A directive or ungated set of its run
//!   echoes one of them with the controller's clock readings of its
//!   arrival and of the signing ([`crate::wire::Echo`]); each echo found
//!   bounds the offset of the two clocks from below (the message arrived
//!   after it left), and the agent keeps the run's largest bound, lowered
//!   by [`MAX_DRIFT_PPM`] of the time since its sample. A grant is obeyed
//!   only if `now - (signed + bound)`, the most time that can have passed
//!   since it was signed, is within [`AgentConfig::directive_max_age`];
//!   else it is refused and counted as a replay ([`WireError::Stale`]). A
//!   delayed or replayed grant is thus obeyed at most that long after it
//!   was signed, whichever run it is of and whoever sends it, with no
//!   clock in common; and a report that queued behind the agent's own
//!   data does not age the grants (the bound keeps the run's quickest
//!   sample, such as its confirm's).
//! - **Obeying.** An accepted directive for this host goes to the
//!   [`HostCoordinator`] (epochs checked there again); reports and
//!   give-backs the coordinator asks for are MAC'd and sent; rejection
//!   counts go to the controller at most every [`AgentConfig::rejections_every`].

use super::budget::Budget;
use crate::coord::{Gate, HostCoordinator};
use crate::rng::Rng;
use crate::sched::Directive;
use crate::time::{Dur, Time};
use crate::wire::{
    peer::MAX_PROOF_BYTES, term_of, Accepted, AgentKeys, ControllerSession, Echo, Message, Packet,
    RejectCounts, Repr, Sender, Superseded, WireError,
};
use std::collections::VecDeque;

/// Messages whose send time an agent keeps, for its grants' echoes (a
/// power of two; at a report a slice and a few give-backs and rejection
/// counts, far more than a grant's age bound spans).
pub const SENT_KEPT: usize = 64;

/// Largest drift of an agent's clock against a controller's, parts per
/// million: each clock may run up to 500 ppm off (the most NTP slews a
/// monotonic clock), so an offset bound sampled `t` ago may be off by
/// `t * 1000 / 10^6` now.
pub const MAX_DRIFT_PPM: i128 = 1000;

/// A lower bound of (this agent's clock - a controller run's clock), from
/// one echo: the message left at `at` here and arrived at `received` there,
/// so the offset is at least `at - received`, less the drift since.
#[derive(Clone, Copy, Debug)]
struct OffsetBound {
    /// The controller run whose clock it bounds.
    run: u64,
    /// `at - received`, in ps.
    low_ps: i128,
    /// When the sampled message left (this clock).
    at: Time,
}

impl OffsetBound {
    /// The bound at `t`: lowered by [`MAX_DRIFT_PPM`] of the time since the sample.
    fn low_at(&self, t: Time) -> i128 {
        self.low_ps - t.saturating_since(self.at).ps() as i128 * MAX_DRIFT_PPM / 1_000_000
    }
}

/// Settings of an agent node.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// Joins at most this often.
    pub join_every: Dur,
    /// A join unanswered this long is sent again (new nonce).
    pub join_timeout: Dur,
    /// Rejection counts go to the controller at most this often (when they changed).
    pub rejections_every: Dur,
    /// Signature checks a second, at most (datagrams from the controller's address).
    pub verify_per_s: u64,
    /// Signature checks at once, at most.
    pub verify_burst: u64,
    /// This agent's control address ([`super::Address::to_wire`]), stated in its confirms.
    pub addr: [u8; crate::wire::ADDR_LEN],
    /// A superseded proof goes out at most this often.
    pub proof_every: Dur,
    /// A grant that may have been signed longer ago than this is refused
    /// (the controller's fence must include it: the settings'
    /// `directive_max_age_ms`).
    pub directive_max_age: Dur,
    /// A planted bug (tests only).
    #[cfg(feature = "mutations")]
    pub mutation: Option<super::Mutation>,
}

impl Default for AgentConfig {
    fn default() -> AgentConfig {
        AgentConfig {
            join_every: Dur::from_ms(10),
            join_timeout: Dur::from_ms(20),
            rejections_every: Dur::from_secs(1),
            verify_per_s: 5_000,
            verify_burst: 64,
            addr: [0; crate::wire::ADDR_LEN],
            proof_every: Dur::from_ms(10),
            directive_max_age: super::DIRECTIVE_MAX_AGE,
            #[cfg(feature = "mutations")]
            mutation: None,
        }
    }
}

/// Where a datagram came from, as the driver sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A controller's configured address (the primary's or the standby's).
    Controller,
    /// Any other address: dropped unread.
    Other,
}

/// What happened at an agent (for logs, metrics and the harness's checks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentEvent {
    /// A join was sent with this nonce.
    Joining {
        /// The new session.
        nonce: u64,
    },
    /// Controller run `run` is obeyed from now on.
    NewRun {
        /// The run.
        run: u64,
    },
    /// A datagram was rejected (counted in [`AgentNode::rejected`]).
    Rejected(WireError),
    /// A datagram was dropped unread: not from the controller's address, or
    /// over the signature budget.
    Dropped {
        /// Why.
        why: &'static str,
    },
    /// A directive was taken (the coordinator applies it at its start).
    Applied {
        /// Its controller run.
        run: u64,
        /// Its sequence number in that run.
        seq: u64,
        /// The directive.
        directive: Directive,
    },
    /// The agent failed open: no directive for the fail-open time while backlogged.
    FailOpen {
        /// Packets held when it did.
        held_pkts: usize,
        /// Since the last directive.
        since_directive: Dur,
    },
    /// A directive after failing open: coordination resumed.
    Resumed {
        /// The directive's epoch.
        epoch: u64,
    },
    /// On-demand coordination: the controller's ungated set was applied.
    Ungated {
        /// How many destinations it ungates.
        dests: usize,
    },
}

/// Counters of an agent node.
#[derive(Clone, Debug, Default)]
pub struct AgentNodeStats {
    /// Datagrams accepted.
    pub accepted: u64,
    /// Datagrams sent.
    pub sent: u64,
    /// Dropped unread: not from the controller's address.
    pub foreign: u64,
    /// Dropped unread: over the signature budget.
    pub over_budget: u64,
    /// Joins sent.
    pub joins: u64,
    /// Controller messages refused: of a lower term than the highest seen,
    /// or of another run of that term.
    pub stale_term: u64,
    /// Superseded proofs sent.
    pub proofs: u64,
    /// Ungated sets applied (on-demand coordination).
    pub ungates: u64,
    /// Challenges of a newer term to the current session taken unasked (a standby's takeover).
    pub takeover_challenges: u64,
    /// Grants of an older term (a slice, or rates) closed as a newer term was adopted.
    pub closed_at_new_term: u64,
    /// Grants refused as not shown fresh (counted with the replays too).
    pub stale: u64,
    /// Answers taken to the join before the latest (it was replaced unanswered).
    pub previous_join_answers: u64,
    /// Times the run was suspended at a fail-open (obeyed again after a fresh join).
    pub suspended: u64,
}

/// A host's agent; `P` is the driver's packet handle.
pub struct AgentNode<P> {
    cfg: AgentConfig,
    me: u32,
    /// The gate and the held packets.
    pub coord: HostCoordinator<P>,
    keys: AgentKeys,
    session: ControllerSession,
    rng: Rng,
    /// The session written on what this agent sends (its latest join's nonce).
    nonce: u64,
    seq: u64,
    /// Send time of message `seq`, at `seq % SENT_KEPT` (with its seq).
    sent_at: [(u64, Time); SENT_KEPT],
    /// The latest input's instant (what the messages sent are stamped with).
    clock: Time,
    /// The controller's sequence number of the ungated set applied (0: none
    /// in this run), stated in demand reports.
    ungated_seq: u64,
    /// The run's clock offset bound (freshness), if an echo has given one.
    offset: Option<OffsetBound>,
    joined_at: Option<Time>,
    join_wanted: bool,
    /// Datagrams rejected, by reason (cumulative; sent to the controller).
    pub rejected: RejectCounts,
    rejections_sent: (RejectCounts, Option<Time>),
    verify: Budget,
    /// The highest term seen signed: (term, run, the datagram).
    newest: Option<(u64, u64, Vec<u8>)>,
    proof_at: Option<Time>,
    /// The challenge being accepted came unasked (a takeover): renew the session.
    unasked: bool,
    out: VecDeque<Vec<u8>>,
    events: VecDeque<AgentEvent>,
    /// Counters.
    pub stats: AgentNodeStats,
}

impl<P> AgentNode<P> {
    /// An agent for `keys.host()` around `coord`, drawing nonces from `rng`.
    pub fn new(cfg: AgentConfig, coord: HostCoordinator<P>, keys: AgentKeys, rng: Rng) -> AgentNode<P> {
        let me = keys.host();
        AgentNode {
            verify: Budget::new(cfg.verify_per_s, cfg.verify_burst),
            newest: None,
            proof_at: None,
            unasked: false,
            cfg,
            me,
            coord,
            keys,
            session: ControllerSession::new(me),
            rng,
            nonce: 0,
            seq: 0,
            sent_at: [(0, Time::ZERO); SENT_KEPT],
            clock: Time::ZERO,
            ungated_seq: 0,
            offset: None,
            joined_at: None,
            join_wanted: false,
            rejected: RejectCounts::default(),
            rejections_sent: (RejectCounts::default(), None),
            out: VecDeque::new(),
            events: VecDeque::new(),
            stats: AgentNodeStats::default(),
        }
    }

    /// This host's id.
    pub fn host(&self) -> u32 {
        self.me
    }

    /// The controller run obeyed, if any.
    pub fn run(&self) -> Option<u64> {
        self.session.run()
    }

    /// The highest term seen signed by a controller (0: none yet).
    pub fn max_term(&self) -> u64 {
        self.newest.as_ref().map_or(0, |n| n.0)
    }

    /// The latest message sent: its sequence number and when (what a
    /// controller's grant echoes; 0 before any).
    pub fn last_sent(&self) -> (u64, Time) {
        self.sent_at[self.seq as usize % SENT_KEPT]
    }

    /// The session (nonce of the latest join).
    pub fn session(&self) -> u64 {
        self.nonce
    }

    /// Start: the coordinator's report timer and the first join.
    pub fn start(&mut self, now: Time) {
        self.clock = now;
        self.coord.start(now);
        self.join(now);
    }

    /// Leave: tell the controller (the driver releases what is held).
    pub fn leave(&mut self) {
        self.send(Message::Leave);
    }

    /// The next sequence number, its send time kept for grants' echoes.
    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.sent_at[self.seq as usize % SENT_KEPT] = (self.seq, self.clock);
        self.seq
    }

    fn send(&mut self, mut msg: Message) {
        if let Message::Demand { ungated_seq, .. } = &mut msg {
            *ungated_seq = self.ungated_seq;
        }
        self.next_seq();
        let repr = Repr {
            host: self.me,
            run: self.nonce,
            seq: self.seq,
            msg,
        };
        self.out.push_back(self.keys.encode(&repr));
        self.stats.sent += 1;
    }

    /// Start a new session (at most every `join_every`: sooner, it waits).
    fn join(&mut self, now: Time) {
        if self.joined_at.is_some_and(|t| now < t + self.cfg.join_every) {
            self.join_wanted = true;
            return;
        }
        self.join_wanted = false;
        let nonce = self.draw_nonce();
        self.nonce = nonce;
        self.joined_at = Some(now);
        self.session.joining(nonce);
        self.stats.joins += 1;
        self.send(Message::Join);
        self.events.push_back(AgentEvent::Joining { nonce });
    }

    /// A new session nonce (not 0, not the current one).
    fn draw_nonce(&mut self) -> u64 {
        loop {
            let n = self.rng.next_u64();
            if n != 0 && n != self.nonce {
                return n;
            }
        }
    }

    fn reject(&mut self, e: WireError) {
        let c = &mut self.rejected;
        match e {
            WireError::BadTag => c.auth += 1,
            WireError::Replay { .. } | WireError::Stale { .. } => c.replay += 1,
            WireError::Session { .. } | WireError::UnknownSender(_) => c.session += 1,
            _ => c.malformed += 1,
        }
        self.events.push_back(AgentEvent::Rejected(e));
    }

    /// A datagram arrived at `now` from `origin`. Returns true if a
    /// directive was taken: run a release pass.
    pub fn handle_datagram(&mut self, now: Time, origin: Origin, datagram: &[u8]) -> bool {
        self.clock = now;
        if origin == Origin::Other {
            self.stats.foreign += 1;
            self.events.push_back(AgentEvent::Dropped {
                why: "not from the controller's address",
            });
            return false;
        }
        // malformed input costs no signature check
        let parsed = Packet::new_checked(datagram).and_then(|p| {
            if p.sender() != Sender::Controller {
                return Err(WireError::Misdirected);
            }
            Repr::parse(&p).map(|_| p.version())
        });
        let version = match parsed {
            Ok(v) => v,
            Err(e) => {
                self.reject(e);
                return false;
            }
        };
        if !self.verify.take(now) {
            self.stats.over_budget += 1;
            self.events.push_back(AgentEvent::Dropped {
                why: "over the signature budget",
            });
            return false;
        }
        let repr = match self.keys.decode(datagram) {
            Ok(r) => r,
            Err(e) => {
                self.reject(e);
                return false;
            }
        };
        // terms (version 4 on: older controllers' run ids are not ordered)
        let term_rose = match version {
            4.. => match self.term_ok(now, &repr, datagram) {
                Some(rose) => rose,
                None => return false,
            },
            _ => false,
        };
        if version >= 4 {
            self.challenged_unasked(&repr);
        }
        let took = self.accept(now, repr);
        // a higher term than the run obeyed: join it (once per new term), unless
        // this very message made the agent join or adopt it
        if term_rose && self.run().is_some_and(|r| term_of(r) < self.max_term()) && !self.session.is_joining()
        {
            self.join(now);
        }
        took
    }

    /// A challenge for this agent's current session, though it is not
    /// joining, of a term above the run it obeys (and, checked before, the
    /// newest run it has seen signed): a standby took over and asks it to
    /// confirm. It is taken as the answer to the session's join — once: a
    /// replay finds the run adopted, or a newer one seen.
    fn challenged_unasked(&mut self, repr: &Repr) {
        if let Message::Challenge { host, nonce, .. } = repr.msg {
            let above = term_of(repr.run) > self.run().map_or(0, term_of);
            if above && host == self.me && nonce != 0 && nonce == self.nonce && !self.session.is_joining() {
                self.session.joining(nonce);
                self.join_wanted = false;
                self.unasked = true;
                self.stats.takeover_challenges += 1;
            }
        }
    }

    fn accept(&mut self, now: Time, repr: Repr) -> bool {
        let prev = self.session.run();
        let accepted = self.session.accept(&repr);
        // (a planted bug that lets a directive through lets it past the freshness
        // check too: version 5's freshness alone refuses what these two let
        // through, and so masks them; docs/control-plane.md "Planted bugs")
        #[allow(unused_mut)]
        let mut let_through = false;
        #[cfg(feature = "mutations")]
        let accepted = match (accepted, self.cfg.mutation, &repr.msg) {
            (
                Err(WireError::Session { .. }),
                Some(super::Mutation::AcceptOtherRun),
                Message::Directive(..),
            )
            | (
                Err(WireError::Replay { .. }),
                Some(super::Mutation::SkipReplayCheck),
                Message::Directive(..),
            ) => {
                let_through = true;
                Ok(Accepted::InRun)
            }
            (a, ..) => a,
        };
        match accepted {
            Err(e) => {
                self.reject(e);
                false
            }
            Ok(Accepted::NewRun { run }) => {
                self.stats.accepted += 1;
                self.take_answered_session();
                if self.adopt(run, prev) {
                    self.prove(now, true);
                }
                false
            }
            Ok(Accepted::Challenge { run, challenge }) => {
                self.stats.accepted += 1;
                self.take_answered_session();
                let newer = self.adopt(run, prev);
                if std::mem::take(&mut self.unasked) {
                    // a new session for the new term, stated in the confirm: the
                    // older term's controller, if alive, no longer knows this
                    // agent's messages and asks it to rejoin, which it refuses
                    // with a proof (as after a join)
                    let n = self.draw_nonce();
                    self.nonce = n;
                    self.session.renew(n);
                }
                self.send(Message::Confirm {
                    run,
                    challenge,
                    addr: self.cfg.addr,
                });
                if newer {
                    // the older term's controller may be alive (cut off from the
                    // new one): it stands down at this proof, not at its next
                    // directive this agent refuses
                    self.prove(now, true);
                }
                false
            }
            Ok(Accepted::Rejoin) => {
                self.stats.accepted += 1;
                self.join(now);
                false
            }
            Ok(Accepted::InRun) => {
                self.stats.accepted += 1;
                match repr.msg {
                    Message::Directive(d, echo) => {
                        (let_through || self.fresh(now, repr.run, echo))
                            && self.directive(now, repr.run, repr.seq, d)
                    }
                    Message::Ungate { host, dests, echo } => {
                        self.fresh(now, repr.run, echo) && self.ungate(repr.seq, host, &dests)
                    }
                    _ => false,
                }
            }
        }
    }

    /// True if a grant of run `run` arriving at `now` with `echo` was
    /// signed within `directive_max_age`; else it is refused and counted.
    fn fresh(&mut self, now: Time, run: u64, echo: Echo) -> bool {
        #[cfg(feature = "mutations")]
        if self.cfg.mutation == Some(super::Mutation::SkipFreshness) {
            return true;
        }
        let ps_of_ns = |ns: u64| i128::from(ns) * crate::time::PS_PER_NS as i128;
        let mut known = self.offset.filter(|o| o.run == run);
        let (seq, sent) = self.sent_at[echo.seq as usize % SENT_KEPT];
        if echo.seq != 0 && seq == echo.seq {
            // message `seq` left at `sent` here and arrived at `received` there
            let sample = OffsetBound {
                run,
                low_ps: sent.ps() as i128 - ps_of_ns(echo.received_ns),
                at: sent,
            };
            if known.is_none_or(|o| sample.low_ps > o.low_at(sent)) {
                known = Some(sample);
                self.offset = known;
            }
        }
        // signed at `signed_ns` there: at `signed + bound` here, or later
        let age_ps = known.map(|o| now.ps() as i128 - (ps_of_ns(echo.signed_ns) + o.low_at(now)));
        if age_ps.is_some_and(|a| a <= self.cfg.directive_max_age.ps() as i128) {
            return true;
        }
        self.stats.stale += 1;
        self.reject(WireError::Stale {
            echo: echo.seq,
            age_ns: age_ps.map_or(u64::MAX, |a| {
                (a.max(0) / crate::time::PS_PER_NS as i128).min(u64::MAX as i128 - 1) as u64
            }),
        });
        false
    }

    /// The answer taken was to the join before the latest (whose nonce the
    /// session check accepts too): that join's nonce is the session again.
    fn take_answered_session(&mut self) {
        if let Some(n) = self.session.session() {
            if n != self.nonce {
                self.nonce = n;
                self.stats.previous_join_answers += 1;
            }
        }
    }

    /// The term check of a verified controller message: `None` (refused,
    /// counted, a proof sent back) if a higher term, or another run of the
    /// same term, was seen; `Some(true)`: a higher term, remembered.
    fn term_ok(&mut self, now: Time, repr: &Repr, datagram: &[u8]) -> Option<bool> {
        let term = term_of(repr.run);
        if term == 0 && self.newest.is_none() {
            // term 0: a controller without a standby (runs not ordered, as before terms)
            return Some(false);
        }
        match &self.newest {
            Some((t, run, _)) if term < *t || (term == *t && repr.run != *run) => {
                #[cfg(feature = "mutations")]
                if self.cfg.mutation == Some(super::Mutation::AcceptLowerTerm) {
                    return Some(false);
                }
                self.stats.stale_term += 1;
                self.reject(WireError::Session {
                    host: repr.host,
                    run: repr.run,
                });
                self.prove(now, false);
                None
            }
            Some((t, ..)) if term == *t => Some(false),
            _ => {
                self.newest = Some((term, repr.run, datagram.to_vec()));
                Some(true)
            }
        }
    }

    /// Send the newest term's signed datagram as a [`Superseded`] proof (to
    /// both controllers: the driver's part): as a refusal's answer, at most
    /// every `proof_every`; at the adoption of a newer term (`adopted`: once
    /// per genuine term), regardless.
    fn prove(&mut self, now: Time, adopted: bool) {
        let fits = self.newest.as_ref().is_some_and(|n| n.2.len() <= MAX_PROOF_BYTES);
        if fits && (adopted || self.proof_at.is_none_or(|p| now >= p + self.cfg.proof_every)) {
            if !adopted {
                self.proof_at = Some(now);
            }
            let proof = self.newest.as_ref().expect("seen").2.clone();
            self.next_seq();
            let s = Superseded {
                host: self.me,
                session: self.nonce,
                seq: self.seq,
                proof,
            };
            self.out.push_back(self.keys.encode_superseded(&s));
            self.stats.sent += 1;
            self.stats.proofs += 1;
        }
    }

    /// A run is obeyed from now on (`prev` before it): its directive epochs
    /// start anew, and the controller learns the backlog in the new
    /// session. A newer term than `prev`'s closes the older term's slice:
    /// its controller is dead or superseded, and the new one grants once
    /// every host has confirmed (so, once none holds an older slice).
    /// True if the term is newer.
    fn adopt(&mut self, run: u64, prev: Option<u64>) -> bool {
        let newer = prev.is_some_and(|p| term_of(run) > term_of(p));
        #[allow(unused_mut)]
        let mut close = newer;
        #[cfg(feature = "mutations")]
        if self.cfg.mutation == Some(super::Mutation::KeepGateAtNewTerm) {
            close = false;
        }
        // (a slice, or rates: both the older term's grants)
        if close && matches!(self.coord.state.gate, Gate::Open { .. } | Gate::Rated) {
            self.coord.state.gate = Gate::Closed;
            self.coord.state.giveback_at = None;
            self.stats.closed_at_new_term += 1;
        }
        self.coord.state.reset_epoch();
        // on-demand: a new session starts with every destination coordinated
        // (the controller's ungated sets begin empty too)
        self.coord.set_ungated(&[]);
        self.ungated_seq = 0;
        self.coord.request_report();
        self.events.push_back(AgentEvent::NewRun { run });
        newer
    }

    /// The controller's whole set of destinations to send to ungated
    /// (on-demand coordination); true: held packets may go, run a release pass.
    fn ungate(&mut self, seq: u64, host: u32, dests: &[u32]) -> bool {
        if host != self.me {
            self.reject(WireError::BadPayload("ungate for another host"));
            return false;
        }
        self.ungated_seq = seq;
        self.stats.ungates += 1;
        self.coord.set_ungated(dests);
        self.events.push_back(AgentEvent::Ungated { dests: dests.len() });
        true
    }

    fn directive(&mut self, now: Time, run: u64, seq: u64, d: Directive) -> bool {
        if d.host != self.me {
            self.reject(WireError::BadPayload("directive for another host"));
            return false;
        }
        let was_open = self.coord.state.gate == Gate::FailOpen;
        // it takes effect `start_in` after now on this host's clock (pending until then)
        if !self.coord.receive(now, d.epoch, d.start_in, &d.kind) {
            return false;
        }
        if was_open {
            self.events.push_back(AgentEvent::Resumed { epoch: d.epoch });
        }
        self.events.push_back(AgentEvent::Applied {
            run,
            seq,
            directive: d,
        });
        true
    }

    /// Timers due at `now` (call at [`AgentNode::poll_timeout`]): the
    /// coordinator's (slice end, give-back, fail-open, reports), deferred
    /// and unanswered joins, rejection counts. Run a release pass after.
    pub fn handle_timeout(&mut self, now: Time) {
        self.clock = now;
        #[cfg(feature = "mutations")]
        if self.cfg.mutation == Some(super::Mutation::NoFailOpenUnderLoad) && self.coord.held().count() > 8 {
            self.coord.state.last_directive = now;
        }
        if self.coord.on_timer(now) {
            self.events.push_back(AgentEvent::FailOpen {
                held_pkts: self.coord.held().count(),
                since_directive: now.saturating_since(self.coord.state.last_directive),
            });
            // no directive for the fail-open time: the run may be dead and a newer
            // term direct this host's links, and what arrives of the run now may
            // be arbitrarily late (delayed, or replayed after a partition): obey
            // it again only after a fresh answer to a join
            self.session.suspend();
            self.stats.suspended += 1;
            if !self.session.is_joining() {
                self.join(now);
            }
        }
        let unanswered =
            self.session.is_joining() && self.joined_at.is_some_and(|t| now >= t + self.cfg.join_timeout);
        if self.join_wanted || unanswered {
            self.join(now);
        }
        let (sent, at) = self.rejections_sent;
        if self.rejected != sent
            && !self.session.is_joining()
            && at.is_none_or(|t| now >= t + self.cfg.rejections_every)
        {
            self.rejections_sent = (self.rejected, Some(now));
            self.send(Message::Rejections(self.rejected));
        }
    }

    /// The next instant [`AgentNode::handle_timeout`] has work.
    pub fn poll_timeout(&self) -> Time {
        let mut t = self.coord.next_deadline();
        if let Some(j) = self.joined_at {
            if self.join_wanted {
                t = t.min(j + self.cfg.join_every);
            } else if self.session.is_joining() {
                t = t.min(j + self.cfg.join_timeout);
            }
        }
        let (sent, at) = self.rejections_sent;
        if self.rejected != sent && !self.session.is_joining() {
            t = t.min(at.map_or(Time::ZERO, |a| a + self.cfg.rejections_every));
        }
        t
    }

    /// The next datagram for the controller: the node's own messages first,
    /// then the coordinator's reports and give-backs (not while a join is
    /// unanswered: the controller would not know the session; the backlog
    /// is reported once the run is adopted).
    pub fn poll_transmit(&mut self, now: Time) -> Option<Vec<u8>> {
        self.clock = now;
        if let Some(d) = self.out.pop_front() {
            return Some(d);
        }
        while let Some(m) = self.coord.poll_message(now) {
            if self.session.is_joining() {
                continue;
            }
            self.send(m);
            return self.out.pop_front();
        }
        None
    }

    /// The next event, oldest first.
    pub fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.pop_front()
    }
}
