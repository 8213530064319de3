//! Authentication (HMAC-SHA256 with a shared key) and replay protection.

use super::packet::{field, Packet};
use super::repr::Repr;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::HashMap;

type HmacSha256 = Hmac<Sha256>;

/// Why a datagram was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Shorter than a header and a tag.
    Truncated,
    /// Not an XCo control datagram.
    BadMagic,
    /// A protocol version this code does not speak.
    BadVersion(u8),
    /// The header's payload length disagrees with the datagram's size.
    BadLength,
    /// An unknown message type.
    UnknownType(u8),
    /// A payload that does not parse (what was wrong).
    BadPayload(&'static str),
    /// The HMAC does not match: forged, corrupted, or another key.
    BadTag,
    /// A sequence number not above the last one seen from this sender.
    Replay {
        /// Sending host.
        host: u32,
        /// The rejected sequence number.
        seq: u64,
    },
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Truncated => write!(f, "datagram too short"),
            WireError::BadMagic => write!(f, "not an XCo control datagram"),
            WireError::BadVersion(v) => write!(f, "unsupported protocol version {v}"),
            WireError::BadLength => write!(f, "payload length does not match the datagram"),
            WireError::UnknownType(t) => write!(f, "unknown message type {t}"),
            WireError::BadPayload(w) => write!(f, "malformed payload: {w}"),
            WireError::BadTag => write!(f, "authentication failed (wrong key or forged)"),
            WireError::Replay { host, seq } => {
                write!(f, "replayed or stale message from host {host} (seq {seq})")
            }
        }
    }
}

impl std::error::Error for WireError {}

/// Signs outgoing and verifies incoming datagrams with a shared key.
#[derive(Clone)]
pub struct Authenticator {
    mac: HmacSha256,
}

impl Authenticator {
    /// An authenticator for `key` (any length; 32 random bytes recommended).
    pub fn new(key: &[u8]) -> Authenticator {
        Authenticator {
            mac: HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length"),
        }
    }

    /// Encode and sign `repr` into a new datagram.
    pub fn encode(&self, repr: &Repr) -> Vec<u8> {
        let mut buf = vec![0u8; repr.buffer_len()];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        repr.emit(&mut p);
        let mut mac = self.mac.clone();
        mac.update(p.signed_part());
        let tag: [u8; field::TAG_LEN] = mac.finalize().into_bytes().into();
        p.set_tag(&tag);
        buf
    }

    /// Check, authenticate and parse a received datagram (no replay check; see [`ReplayGuard`]).
    pub fn decode(&self, datagram: &[u8]) -> Result<Repr, WireError> {
        let p = Packet::new_checked(datagram)?;
        let mut mac = self.mac.clone();
        mac.update(p.signed_part());
        mac.verify_slice(p.tag()).map_err(|_| WireError::BadTag)?;
        Repr::parse(&p)
    }
}

/// Rejects messages whose sequence number is not above the last accepted one
/// from the same sender. Senders start their sequence numbers from a clock
/// reading (e.g. nanoseconds since the epoch) so a restarted sender is not
/// taken for a replayer.
#[derive(Clone, Debug, Default)]
pub struct ReplayGuard {
    last: HashMap<u32, u64>,
}

impl ReplayGuard {
    /// An empty guard.
    pub fn new() -> ReplayGuard {
        ReplayGuard::default()
    }

    /// Accept `repr` if its sequence number is new for its sender.
    pub fn check(&mut self, repr: &Repr) -> Result<(), WireError> {
        match self.last.get(&repr.host) {
            Some(&last) if repr.seq <= last => Err(WireError::Replay {
                host: repr.host,
                seq: repr.seq,
            }),
            _ => {
                self.last.insert(repr.host, repr.seq);
                Ok(())
            }
        }
    }

    /// Forget a sender (it left).
    pub fn forget(&mut self, host: u32) {
        self.last.remove(&host);
    }
}
