//! Sessions and replay windows, free of clocks: nothing on the wire comes
//! from a wall clock, so a clock step cannot stall or unlock anything.
//!
//! - Every controller start draws a random 64-bit **run id** and numbers its
//!   messages 1, 2, ... within it. An agent obeys one run at a time, adopted
//!   only from a signed hello that echoes the nonce of the agent's own
//!   latest join — a replayed hello of an old run fits no current nonce.
//!   A signed message of another run (the controller restarted) is rejected
//!   and tells the agent to join again; one round trip later the new run is
//!   obeyed, whatever either clock says.
//! - Every agent join draws a random nonce, which is the agent's **session**
//!   at the controller: its messages carry it, and the controller accepts a
//!   host's messages only in the session of the host's latest join, with
//!   rising sequence numbers. A message of an unknown session gets a signed
//!   rejoin request.
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
    /// A message of the obeyed run, in order.
    InRun,
}

/// An agent's view of the controller run it obeys.
#[derive(Clone, Debug)]
pub struct ControllerSession {
    me: u32,
    run: Option<(u64, u64)>,
    nonce: Option<u64>,
}

impl ControllerSession {
    /// No run obeyed yet, for host `me`.
    pub fn new(me: u32) -> ControllerSession {
        ControllerSession {
            me,
            run: None,
            nonce: None,
        }
    }

    /// A join carrying `nonce` is being sent: only a hello echoing it is accepted.
    pub fn joining(&mut self, nonce: u64) {
        self.nonce = Some(nonce);
    }

    /// The run obeyed, if any.
    pub fn run(&self) -> Option<u64> {
        self.run.map(|r| r.0)
    }

    /// Check an authenticated controller message's session and sequence number.
    pub fn accept(&mut self, repr: &Repr) -> Result<Accepted, WireError> {
        let stale = WireError::Session {
            host: repr.host,
            run: repr.run,
        };
        if let Message::Hello { host, nonce } = repr.msg {
            if host != self.me || self.nonce != Some(nonce) {
                return Err(stale);
            }
            self.nonce = None;
            self.run = Some((repr.run, repr.seq));
            return Ok(Accepted::NewRun { run: repr.run });
        }
        match &mut self.run {
            Some((run, last)) if *run == repr.run => {
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

/// The controller's view of every host's session: one slot per host id.
#[derive(Clone, Debug)]
pub struct AgentSessions {
    slots: Vec<Option<(u64, u64)>>,
}

impl AgentSessions {
    /// Slots for `hosts` hosts (ids 0 to hosts - 1), all empty.
    pub fn new(hosts: usize) -> AgentSessions {
        AgentSessions {
            slots: vec![None; hosts],
        }
    }

    /// Check an authenticated agent message: a join starts the host's
    /// session (its nonce); anything else must be of that session, in order.
    pub fn check(&mut self, repr: &Repr) -> Result<(), WireError> {
        let slot = self
            .slots
            .get_mut(repr.host as usize)
            .ok_or(WireError::UnknownSender(repr.host))?;
        match (slot.as_mut(), &repr.msg) {
            (Some((run, last)), _) if *run == repr.run => {
                if repr.seq <= *last {
                    return Err(WireError::Replay {
                        host: repr.host,
                        seq: repr.seq,
                    });
                }
                *last = repr.seq;
                Ok(())
            }
            (_, Message::Join) => {
                *slot = Some((repr.run, repr.seq));
                Ok(())
            }
            _ => Err(WireError::Session {
                host: repr.host,
                run: repr.run,
            }),
        }
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
