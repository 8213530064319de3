//! Sessions and replay windows, free of clocks: nothing on the wire comes
//! from a wall clock, so a clock step cannot stall or unlock anything.
//!
//! - Every controller start draws a random 64-bit **run id** and numbers its
//!   messages 1, 2, ... within it. An agent obeys one run at a time, adopted
//!   only from a signed challenge (or hello) that echoes the nonce of one
//!   of the agent's own two latest joins while it waits for an answer — a
//!   replayed one of an old run fits no current nonce. A signed message of another run is rejected, nothing more; a
//!   restarted controller asks the agent to join again (a rejoin request
//!   naming its session) when the agent's next message reaches it, and one
//!   round trip later the new run is obeyed, whatever either clock says.
//! - Every agent join draws a random nonce, which is the agent's **session**
//!   at the controller: its messages carry it. A join changes nothing at the
//!   controller: it is answered with a signed **challenge** (the nonce and a
//!   number the controller issues once per run, rising), and the session
//!   starts only when the host's MAC'd **confirm** echoes the run and a
//!   challenge newer than any the host confirmed before. So a captured join
//!   or confirm, replayed by anyone, moves no session. The controller then
//!   accepts a host's messages only in that session, with rising sequence
//!   numbers; a message of an unknown session gets a signed rejoin request
//!   naming that session, which the agent obeys only if it is its current
//!   one (a replayed request costs nothing).
//! - State is one slot per host of the topology, allocated up front: ids
//!   outside it are rejected before any state is touched.

use super::auth::WireError;
use super::repr::{Message, Repr};

/// What an agent's session check accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accepted {
    /// A hello to this agent's join: run `run` is obeyed from now on (forget
    /// the previous run's directive epochs).
    NewRun {
        /// The adopted run id.
        run: u64,
    },
    /// A challenge to this agent's join: run `run` is obeyed from now on
    /// (as for a hello), and the agent confirms `challenge`.
    Challenge {
        /// The adopted run id.
        run: u64,
        /// The number to echo in the confirm.
        challenge: u64,
    },
    /// The controller does not know this agent's current session: join again.
    Rejoin,
    /// A message of the obeyed run, in order.
    InRun,
}

/// An agent's view of the controller run it obeys.
#[derive(Clone, Debug)]
pub struct ControllerSession {
    me: u32,
    run: Option<(u64, u64)>,
    /// The nonce of a join not answered yet.
    nonce: Option<u64>,
    /// The nonce of the join before it, if that one was still unanswered
    /// when it was replaced: its answer is taken too (an agent whose own
    /// egress queue holds its joins longer than its join timeout would
    /// otherwise replace every nonce before its answer arrives; found by
    /// the control-plane harness, sim-network seed 912).
    previous: Option<u64>,
    /// The nonce of the latest join (this agent's session), until a rejoin request for it.
    session: Option<u64>,
    /// The run's messages are refused until a fresh answer to a join (the
    /// agent failed open: what it receives of the run may be arbitrarily late).
    suspended: bool,
}

impl ControllerSession {
    /// No run obeyed yet, for host `me`.
    pub fn new(me: u32) -> ControllerSession {
        ControllerSession {
            me,
            run: None,
            nonce: None,
            previous: None,
            session: None,
            suspended: false,
        }
    }

    /// Refuse the run's messages until a hello or challenge answers a join
    /// (then only those sent after that answer: its sequence number is
    /// above theirs). The run stays the one obeyed for the term rules.
    pub fn suspend(&mut self) {
        self.suspended = true;
    }

    /// A join carrying `nonce` is being sent: only a hello or challenge echoing it is accepted.
    pub fn joining(&mut self, nonce: u64) {
        self.previous = self.nonce;
        self.nonce = Some(nonce);
        self.session = Some(nonce);
    }

    /// The agent's session: the nonce of the join whose answer it took, or
    /// of the join it waits on (`None` after a rejoin request for it).
    pub fn session(&self) -> Option<u64> {
        self.session
    }

    /// The agent's session is `nonce` from now on, without a join (the run
    /// stays adopted): a rejoin request must name it. For an agent that
    /// adopted a newer term through a challenge to its old session (a
    /// standby's takeover), so the older term's controller no longer knows
    /// its messages.
    pub fn renew(&mut self, nonce: u64) {
        self.session = Some(nonce);
    }

    /// The run obeyed, if any.
    pub fn run(&self) -> Option<u64> {
        self.run.map(|r| r.0)
    }

    /// True while a join waits for its answer.
    pub fn is_joining(&self) -> bool {
        self.nonce.is_some()
    }

    /// Check an authenticated controller message's session and sequence number.
    pub fn accept(&mut self, repr: &Repr) -> Result<Accepted, WireError> {
        let stale = WireError::Session {
            host: repr.host,
            run: repr.run,
        };
        match repr.msg {
            Message::Hello { host, nonce } | Message::Challenge { host, nonce, .. } => {
                let pending =
                    self.nonce.is_some() && (self.nonce == Some(nonce) || self.previous == Some(nonce));
                if host != self.me || !pending {
                    return Err(stale);
                }
                // the session is the answered join's (its confirm and messages carry it)
                self.session = Some(nonce);
                self.nonce = None;
                self.previous = None;
                self.suspended = false;
                // joining the run it obeys again, the replay window stays where it
                // was: the answer may have been overtaken by newer messages of the run
                // (found by the control-plane harness: a duplicate of one of those
                // was obeyed twice)
                let last = match self.run {
                    Some((run, last)) if run == repr.run => last.max(repr.seq),
                    _ => repr.seq,
                };
                self.run = Some((repr.run, last));
                return Ok(match repr.msg {
                    Message::Challenge { challenge, .. } => Accepted::Challenge {
                        run: repr.run,
                        challenge,
                    },
                    _ => Accepted::NewRun { run: repr.run },
                });
            }
            Message::Rejoin { host, session } => {
                // any run may ask (a restarted controller has a new one), but only
                // about this agent's current session, and only once
                if host != self.me || self.session != Some(session) {
                    return Err(stale);
                }
                if let Some((run, last)) = &mut self.run {
                    if *run == repr.run {
                        if repr.seq <= *last {
                            return Err(WireError::Replay {
                                host: repr.host,
                                seq: repr.seq,
                            });
                        }
                        *last = repr.seq;
                    }
                }
                self.session = None;
                return Ok(Accepted::Rejoin);
            }
            _ => {}
        }
        match &mut self.run {
            Some((run, last)) if *run == repr.run && !self.suspended => {
                if repr.seq <= *last {
                    return Err(WireError::Replay {
                        host: repr.host,
                        seq: repr.seq,
                    });
                }
                *last = repr.seq;
                Ok(Accepted::InRun)
            }
            _ => Err(stale),
        }
    }
}

/// What the controller's session check accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// A join: answer it with a challenge ([`AgentSessions::issue`]); no session changed.
    Join,
    /// A confirm of a fresh challenge: the host's session is now the confirm's.
    Confirmed,
    /// A message of the host's session, in order.
    InSession,
}

/// The controller's view of every host's session: one slot per host id.
#[derive(Clone, Debug)]
pub struct AgentSessions {
    slots: Vec<Option<(u64, u64)>>,
    /// Per host, the newest challenge it confirmed in this run.
    confirmed: Vec<u64>,
    run: u64,
    issued: u64,
}

impl AgentSessions {
    /// Slots for `hosts` hosts (ids 0 to hosts - 1), all empty, of controller run `run`.
    pub fn new(hosts: usize, run: u64) -> AgentSessions {
        AgentSessions {
            slots: vec![None; hosts],
            confirmed: vec![0; hosts],
            run,
            issued: 0,
        }
    }

    /// A new challenge number (each issued once in this run, rising).
    pub fn issue(&mut self) -> u64 {
        self.issued += 1;
        self.issued
    }

    /// Check an authenticated agent message: a join changes nothing (answer
    /// it with a challenge); a confirm of this run's challenge newer than
    /// the host's last confirmed one starts the host's session (its nonce);
    /// anything else must be of that session, in order.
    pub fn check(&mut self, repr: &Repr) -> Result<Checked, WireError> {
        let h = repr.host as usize;
        let slot = self.slots.get_mut(h).ok_or(WireError::UnknownSender(repr.host))?;
        match (slot.as_mut(), &repr.msg) {
            (_, Message::Join) => Ok(Checked::Join),
            (_, Message::Confirm { run, challenge, .. }) => {
                if *run != self.run || *challenge > self.issued || *challenge == 0 {
                    return Err(WireError::Session {
                        host: repr.host,
                        run: repr.run,
                    });
                }
                if *challenge <= self.confirmed[h] {
                    return Err(WireError::Replay {
                        host: repr.host,
                        seq: repr.seq,
                    });
                }
                self.confirmed[h] = *challenge;
                *slot = Some((repr.run, repr.seq));
                Ok(Checked::Confirmed)
            }
            (Some((run, last)), _) if *run == repr.run => {
                if repr.seq <= *last {
                    return Err(WireError::Replay {
                        host: repr.host,
                        seq: repr.seq,
                    });
                }
                *last = repr.seq;
                Ok(Checked::InSession)
            }
            _ => Err(WireError::Session {
                host: repr.host,
                run: repr.run,
            }),
        }
    }

    /// The session a host's messages are accepted in, if any.
    pub fn session(&self, host: u32) -> Option<u64> {
        self.slots.get(host as usize).copied().flatten().map(|s| s.0)
    }

    /// Forget a host's session (it left).
    pub fn forget(&mut self, host: u32) {
        if let Some(s) = self.slots.get_mut(host as usize) {
            *s = None;
        }
    }

    /// Number of slots (fixed: the topology's hosts).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}
