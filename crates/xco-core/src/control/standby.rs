//! Hot standby, free of I/O: what a controller knows of its peer and of the
//! terms, and what it saw of the hosts while it did not direct.
//!
//! Two controllers share the master secret (so the signing key: agents
//! trust one public key) and beat to each other every
//! [`StandbyConfig::beat_every`] (MAC'd, [`crate::wire::PeerBeat`]). One
//! directs, holding a term; the other stands by, watching the hosts'
//! confirms (agents send everything to both controllers) so it knows every
//! host's address and session. A standby that hears no beat of a directing
//! peer for [`StandbyConfig::takeover_after`] takes over with a term above
//! every term it knows of (of its own parity: two controllers never hold
//! the same term): a new run, fenced, that challenges every host it saw
//! at once, in the session it watched (no join round: an agent takes a
//! challenge of a term newer than any it has seen for its current
//! session, closes the older term's slice, and confirms). The fence ends
//! when every host of the topology has confirmed (none holds or obeys an
//! older term's slice any more), or, if one does not, one slice plus the
//! lead, a beat and the host lease after the confirm that completed a
//! lease quorum (`super::controller::lease_quorum`). A directing controller that learns of a higher term — from its
//! peer's beat, or from an agent's [`crate::wire::Superseded`] proof, the
//! newer term's own signed datagram — stops directing and stands by
//! instead of fighting.
//!
//! **Leases.** Each beat acks the latest beat its sender accepted from its
//! peer. A standby that acked a beat sent at `t` cannot take over before
//! `t +` [`StandbyConfig::takeover_after`]: until then ([`Peer::lease_until`])
//! the directing controller knows no newer term exists. Without that lease
//! it grants only while every host is heard in its session (see
//! [`super::ControllerNode::may_grant`]). A standby whose takeover comes
//! due after it ran nothing for more than a beat and a half re-checks an
//! eighth of a beat later, after the datagrams waiting for it.
//!
//! While the controllers cannot hear each other but the agents hear both
//! (the split-brain case), the standby takes over, the primary learns of it
//! from an agent's proof and stands by, hears no beat, and takes over again
//! after the silence: each step is fenced and obeyed by term, but each
//! costs a takeover gap. So a controller that learned of a newer term from
//! a proof rather than a beat waits twice as long before its next takeover
//! (up to 32 times `takeover_after`), until it hears a beat again.

use super::Address;
use crate::time::{Dur, Time};
use crate::wire::{term_of, PeerBeat};

/// Settings of the hot standby (see the module documentation).
#[derive(Clone, Debug)]
pub struct StandbyConfig {
    /// Beats to the peer this often.
    pub beat_every: Dur,
    /// A standby takes over after this long without a beat of a directing peer.
    pub takeover_after: Dur,
}

impl Default for StandbyConfig {
    fn default() -> StandbyConfig {
        StandbyConfig {
            beat_every: Dur::from_us(500),
            takeover_after: Dur::from_ms(2),
        }
    }
}

/// Beats whose send times a directing controller keeps, to read its peer's acks.
const SENT_KEPT: usize = 16;

/// The peer controller as this one knows it.
#[derive(Clone, Debug)]
pub struct Peer<A> {
    /// Where beats go.
    pub addr: A,
    /// The peer key ([`crate::wire::peer_key`]).
    pub key: [u8; 32],
    /// Settings.
    pub cfg: StandbyConfig,
    /// This controller's place in the pair (0 or 1): it takes only terms of
    /// this parity, so two controllers never hold the same term.
    pub me: u64,
    /// The latest beat accepted: its run and sequence number.
    last: Option<(u64, u64)>,
    /// When a beat of a directing peer was last accepted (or this node stood by).
    pub heard_at: Time,
    /// When this node beats next.
    pub beat_at: Time,
    /// Beats sent.
    pub seq: u64,
    /// Beats refused (bad MAC, replayed, of an older term than the last).
    pub refused: u64,
    /// Takeovers lost to a newer term this controller could not hear of
    /// from its peer (an agent's proof told it): each doubles the silence it
    /// waits before the next, up to 32 times; a beat resets it.
    pub backoff: u32,
    /// The latest beats sent: (run, sequence number, when).
    sent: std::collections::VecDeque<(u64, u64, Time)>,
    /// The lease: until this instant the peer, standing by, cannot take over
    /// (it acked a beat of this run sent at `t`, and waits `takeover_after`
    /// from a beat's receipt, so from `t` at the earliest).
    pub lease_until: Time,
}

impl<A: Address> Peer<A> {
    /// The peer at `addr` of controller `me` (0 or 1) of the pair, beats under `key`.
    pub fn new(me: u64, addr: A, key: [u8; 32], cfg: StandbyConfig) -> Peer<A> {
        Peer {
            addr,
            key,
            cfg,
            me: me & 1,
            last: None,
            heard_at: Time::ZERO,
            beat_at: Time::ZERO,
            seq: 0,
            refused: 0,
            backoff: 0,
            sent: std::collections::VecDeque::with_capacity(SENT_KEPT),
            lease_until: Time::ZERO,
        }
    }

    /// The latest beat accepted from the peer (run, sequence number): the ack
    /// this controller's beats carry.
    pub fn ack(&self) -> Option<(u64, u64)> {
        self.last
    }

    /// Beat `seq` of run `run` leaves at `now` (its send time is kept for the ack).
    pub fn sending(&mut self, run: u64, seq: u64, now: Time) {
        if self.sent.len() == SENT_KEPT {
            self.sent.pop_front();
        }
        self.sent.push_back((run, seq, now));
    }

    /// The peer, standing by, acked beat `ack`: if it is one of this run's
    /// kept beats, the lease runs to its send time plus the peer's patience
    /// (less what clock drift of 1,000 ppm between the two takes from it).
    pub fn acked(&mut self, run: u64, ack: (u64, u64)) {
        if ack.0 != run {
            return;
        }
        if let Some(&(_, _, at)) = self.sent.iter().find(|s| (s.0, s.1) == ack) {
            let t = self.cfg.takeover_after;
            let until = at + (t - Dur::from_ps(t.ps() / 1000));
            self.lease_until = self.lease_until.max(until);
        }
    }

    /// A beat arrived: true if it is new (of the run of the last, later; or
    /// of a higher term). A replay of an old beat, or of another run of the
    /// same term, is refused: it cannot keep a dead peer alive.
    pub fn accept(&mut self, b: &PeerBeat) -> bool {
        let fresh = match self.last {
            None => true,
            Some((run, seq)) => (run == b.run && b.seq > seq) || term_of(b.run) > term_of(run),
        };
        if fresh {
            self.last = Some((b.run, b.seq));
        } else {
            self.refused += 1;
        }
        fresh
    }

    /// The lowest term above `max` this controller may take (its parity).
    pub fn next_term(&self, max: u64) -> u64 {
        let t = max + 1;
        if t % 2 == self.me {
            t
        } else {
            t + 1
        }
    }

    /// The instant a standby takes over if nothing is heard.
    pub fn takeover_at(&self) -> Time {
        self.heard_at + Dur::from_ps(self.cfg.takeover_after.ps() << self.backoff.min(5))
    }
}

/// What a standby saw of a host: its address and session from its latest
/// confirm (the run it confirmed and the challenge order it: replays move nothing).
#[derive(Clone, Copy, Debug)]
pub struct Seen<A> {
    /// The address the host stated.
    pub addr: A,
    /// Its session (the confirm's nonce).
    pub session: u64,
    /// The run and challenge it confirmed.
    pub confirmed: (u64, u64),
}

impl<A> Seen<A> {
    /// True if a confirm of (run, challenge) is newer than this one.
    pub fn older_than(&self, run: u64, challenge: u64) -> bool {
        let (r, c) = self.confirmed;
        term_of(run) > term_of(r) || (run == r && challenge > c)
    }
}

/// What a standby saw of a host besides its confirm (see [`Seen`]): its
/// latest backlog in the confirmed session, and a join not confirmed yet.
/// At a takeover the backlog waits for the fence's end (the host's own
/// report in the new term replaces it), and a join in flight is challenged
/// too.
#[derive(Clone, Debug)]
pub struct Watched<A> {
    /// The sequence number of the latest message taken from the confirmed
    /// session (older ones, replays, move nothing).
    pub seq: u64,
    /// The destinations it last reported backlogged.
    pub backlog: Option<Vec<u32>>,
    /// The nonce and source of the latest join seen after that confirm.
    pub join: Option<(u64, A)>,
}

impl<A> Default for Watched<A> {
    fn default() -> Watched<A> {
        Watched {
            seq: 0,
            backlog: None,
            join: None,
        }
    }
}
