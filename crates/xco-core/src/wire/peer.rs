//! Terms, the heartbeat between two controllers, and an agent's proof of a
//! newer term (wire version 4, hot standby).
//!
//! - A **term** is the high 32 bits of a controller run id
//!   ([`term_of`]): a controller that may direct draws a run `term << 32 |
//!   random`, with a term above every term it knows of. Agents obey only the
//!   highest term they have seen signed, and in it only the run they
//!   adopted: a lower term, or another run of the same term, is refused.
//!   The header is unchanged; what changed is that run ids are ordered.
//!   Term 0 is a controller without a standby: its runs are not ordered
//!   (each start is adopted through its challenge, as before terms), and an
//!   agent that has seen a term above 0 refuses it.
//! - **Peer heartbeat** (type 12): controller to controller, MAC'd
//!   (HMAC-SHA256) with a peer key both derive from the master secret they
//!   share ([`peer_key`]); agents cannot make one. Header: host
//!   [`CONTROLLER_ID`], the sender's run, a rising sequence number. Payload:
//!   the highest term the sender knows (u64) and whether it directs (u8, 0
//!   or 1), then, optionally, the **ack**: the run (u64) and sequence number
//!   (u64) of the latest beat the sender accepted from its peer (payload 9
//!   bytes without it, 25 with it). The ack is the directing controller's
//!   lease: a standby that accepted a beat sent at `t` takes over no sooner
//!   than `t` plus its patience ([`crate::control::standby`]). A MAC, not a
//!   signature: two controllers beat a thousand times a second.
//! - **Superseded** (type 13): an agent that refused a controller message of
//!   an older term sends the controller (MAC'd with its host key, in any
//!   session: it may have joined the newer term already) the newer term's
//!   own signed datagram it last verified, whole. The stale controller
//!   checks that signature with its own public key and steps down; a host
//!   can relay only a term that a controller really signed.
//!
//! Neither is a [`Message`](super::Message): the simulator's dispatch never
//! sees them.

use super::auth::WireError;
use super::packet::{field, Packet, HEADER_LEN};

/// The version that added peer beats and superseded proofs (their layout
/// is unchanged since).
const PEER_MIN_VERSION: u8 = 4;
use super::repr::CONTROLLER_ID;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Message type of a peer heartbeat.
pub const PEER_TYPE: u8 = 12;
/// Message type of a superseded proof.
pub const SUPERSEDED_TYPE: u8 = 13;
/// Largest controller datagram a proof carries (a directive of a few
/// hundred rates at most; proofs are of small messages).
pub const MAX_PROOF_BYTES: usize = 1024;
const PEER_PAYLOAD: usize = 9;
const PEER_PAYLOAD_ACK: usize = PEER_PAYLOAD + 16;

/// The term of controller run `run`.
pub fn term_of(run: u64) -> u64 {
    run >> 32
}

/// The run of term `term` (below 2^32) with low bits `low` (random per run).
///
/// Panics if `term` does not fit 32 bits.
pub fn run_of(term: u64, low: u32) -> u64 {
    assert!(term < 1 << 32, "a term fits 32 bits");
    term << 32 | low as u64
}

/// The MAC key two controllers share, derived from the master secret.
pub fn peer_key(master: &[u8]) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(master).expect("HMAC takes keys of any length");
    m.update(b"xco controller peer key v4");
    m.finalize().into_bytes().into()
}

/// A controller's heartbeat to its peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerBeat {
    /// The sender's run (its term: [`term_of`]).
    pub run: u64,
    /// Rising per run.
    pub seq: u64,
    /// The highest term the sender knows of.
    pub term: u64,
    /// The sender directs (holds the term of `run`).
    pub active: bool,
    /// The run and sequence number of the latest beat the sender accepted
    /// from its peer, if any.
    pub ack: Option<(u64, u64)>,
}

fn mac(key: &[u8; 32], b: &[u8]) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    m.update(b);
    m.finalize().into_bytes().into()
}

fn header(buf: &mut [u8], ty: u8, host: u32, run: u64, seq: u64, len: usize) {
    Packet::new_unchecked(&mut buf[..]).set_header(ty, host, run, seq, len as u16);
}

impl PeerBeat {
    /// Encode and MAC with `key` ([`peer_key`]).
    pub fn encode(&self, key: &[u8; 32]) -> Vec<u8> {
        let len = if self.ack.is_some() {
            PEER_PAYLOAD_ACK
        } else {
            PEER_PAYLOAD
        };
        let mut b = vec![0u8; HEADER_LEN + len + field::MAC_LEN];
        header(&mut b, PEER_TYPE, CONTROLLER_ID, self.run, self.seq, len);
        b[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&self.term.to_be_bytes());
        b[HEADER_LEN + 8] = self.active as u8;
        if let Some((run, seq)) = self.ack {
            b[HEADER_LEN + 9..HEADER_LEN + 17].copy_from_slice(&run.to_be_bytes());
            b[HEADER_LEN + 17..HEADER_LEN + 25].copy_from_slice(&seq.to_be_bytes());
        }
        let t = mac(key, &b[..HEADER_LEN + len]);
        b[HEADER_LEN + len..].copy_from_slice(&t);
        b
    }

    /// Check, authenticate with `key` and parse a peer heartbeat.
    pub fn decode(key: &[u8; 32], datagram: &[u8]) -> Result<PeerBeat, WireError> {
        let p = Packet::new_checked(datagram)?;
        if p.msg_type() != PEER_TYPE {
            return Err(WireError::Misdirected);
        }
        if p.version() < PEER_MIN_VERSION {
            return Err(WireError::BadVersion(p.version()));
        }
        let len = p.payload_len();
        if !(len == PEER_PAYLOAD || len == PEER_PAYLOAD_ACK) || p.host() != CONTROLLER_ID {
            return Err(WireError::BadPayload("peer heartbeat"));
        }
        let want = mac(key, p.signed_part());
        if !constant_eq(&want, p.tag()) {
            return Err(WireError::BadTag);
        }
        let pl = p.payload();
        let active = match pl[8] {
            0 => false,
            1 => true,
            _ => return Err(WireError::BadPayload("peer heartbeat active flag")),
        };
        let word = |at: usize| u64::from_be_bytes(pl[at..at + 8].try_into().expect("8 bytes"));
        Ok(PeerBeat {
            run: p.run(),
            seq: p.seq(),
            term: word(0),
            active,
            ack: (len == PEER_PAYLOAD_ACK).then(|| (word(9), word(17))),
        })
    }
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// An agent's proof that a newer term exists: the signed datagram it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superseded {
    /// The relaying host.
    pub host: u32,
    /// Its session (any: not checked).
    pub session: u64,
    /// Rising per agent incarnation.
    pub seq: u64,
    /// A controller datagram, signed (checked by the receiver, not here).
    pub proof: Vec<u8>,
}

impl Superseded {
    /// The datagram without its tag (the sender's key appends it).
    ///
    /// Panics if the proof is longer than [`MAX_PROOF_BYTES`].
    pub fn emit_untagged(&self) -> Vec<u8> {
        assert!(self.proof.len() <= MAX_PROOF_BYTES, "proof too long");
        let n = self.proof.len();
        let mut b = vec![0u8; HEADER_LEN + n];
        header(&mut b, SUPERSEDED_TYPE, self.host, self.session, self.seq, n);
        b[HEADER_LEN..].copy_from_slice(&self.proof);
        b
    }

    /// Parse a checked packet of type 13 (the tag is checked by [`super::auth`]).
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Superseded, WireError> {
        if p.msg_type() != SUPERSEDED_TYPE {
            return Err(WireError::Misdirected);
        }
        if p.version() < PEER_MIN_VERSION {
            return Err(WireError::BadVersion(p.version()));
        }
        if p.payload_len() > MAX_PROOF_BYTES {
            return Err(WireError::BadPayload("proof over 1024 bytes"));
        }
        if p.host() == CONTROLLER_ID {
            return Err(WireError::BadPayload("sender id does not fit the message type"));
        }
        Ok(Superseded {
            host: p.host(),
            session: p.run(),
            seq: p.seq(),
            proof: p.payload().to_vec(),
        })
    }
}
