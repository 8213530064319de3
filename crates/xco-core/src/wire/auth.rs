//! Authentication: who may say what.
//!
//! - The controller holds one **master secret**. From it come its Ed25519
//!   signing key (`HMAC-SHA256(master, "xco controller signing key v2")` is
//!   the seed) and every host's MAC key (`HMAC-SHA256(master, "xco host key
//!   v2" 0 name)`), so the controller keeps one file and no per-host state.
//! - Controller messages (directive, hello, rejoin) carry an Ed25519
//!   signature. An agent holds only the controller's **public** key: it can
//!   check directives but not make one.
//! - Agent messages carry HMAC-SHA256 under that host's own key. A host
//!   knows only its own key, so it cannot speak for another host; the
//!   controller derives the key of the id in the header — an id outside the
//!   topology is rejected before any key or state is looked at.
//!
//! Sequence numbers and sessions are checked by [`super::session`].
//!
//! **Keyed mode (simulation only).** [`ControllerKeys::keyed`] and
//! [`AgentKeys::keyed`] tag controller messages with HMAC-SHA512 under one
//! key derived from the master secret ([`keyed_controller_key`]) instead of
//! signing them: the same 64 tag bytes (so the same datagram sizes), the
//! same checks, about fifty times less CPU than an Ed25519 signature and
//! its strict verification. Every agent then holds a key that can direct
//! every host, so it is no protection against a host; it exists for the
//! simulator's `[xco] auth = "keyed"` setting (its default is Ed25519, the
//! protocol). The daemons never build keyed keys.

use super::packet::{Packet, Sender};
use super::peer::{Superseded, SUPERSEDED_TYPE};
use super::repr::{Repr, CONTROLLER_ID};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use hmac::{Hmac, Mac};
use sha2::{Sha256, Sha512};

type HmacSha256 = Hmac<Sha256>;
type HmacSha512 = Hmac<Sha512>;

/// Fewest bytes of a master secret or host key (256 bits).
pub const MIN_KEY_BYTES: usize = 32;

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
    /// A message this side never receives (an agent's message at an agent,
    /// or a controller's at the controller).
    Misdirected,
    /// A sender id outside the topology.
    UnknownSender(u32),
    /// The signature or MAC does not match: forged, corrupted, or another key.
    BadTag,
    /// A sequence number not above the last one seen in this session.
    Replay {
        /// Sending host.
        host: u32,
        /// The rejected sequence number.
        seq: u64,
    },
    /// A session that is not the established one: a directive of another
    /// controller run, a hello to an old join, a message of an agent
    /// session the controller does not know.
    Session {
        /// Sending host.
        host: u32,
        /// Its session (run id or join nonce).
        run: u64,
    },
    /// A grant (directive or ungated set) the agent cannot show to be
    /// fresh: no echo of this agent's recent messages has yet bounded its
    /// run's clock, or it may have been signed longer ago than the agent's
    /// `directive_max_age` (delayed, or held and replayed; see
    /// [`super::repr::Echo`]).
    Stale {
        /// The echoed sequence number of the agent's message (0: none).
        echo: u64,
        /// The directive's age, at most, in ns (`u64::MAX`: unknown).
        age_ns: u64,
    },
}

impl WireError {
    /// True for the errors counted as malformed (not authentication, replay or session).
    pub fn is_malformed(&self) -> bool {
        !matches!(
            self,
            WireError::BadTag
                | WireError::Replay { .. }
                | WireError::Stale { .. }
                | WireError::Session { .. }
                | WireError::UnknownSender(_)
        )
    }
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
            WireError::Misdirected => write!(f, "a message this side does not receive"),
            WireError::UnknownSender(h) => write!(f, "sender id {h} is not a host of the topology"),
            WireError::BadTag => write!(f, "authentication failed (wrong key or forged)"),
            WireError::Replay { host, seq } => {
                write!(f, "replayed or stale message from host {host} (seq {seq})")
            }
            WireError::Session { host, run } => {
                write!(
                    f,
                    "message from host {host} of session {run:#x}, not the established one"
                )
            }
            WireError::Stale {
                echo,
                age_ns: u64::MAX,
            } => {
                write!(
                    f,
                    "grant not shown fresh: it echoes message {echo}, not one sent lately"
                )
            }
            WireError::Stale { echo, age_ns } => {
                write!(
                    f,
                    "grant too old: up to {age_ns} ns since it was signed (echoes message {echo})"
                )
            }
        }
    }
}

impl std::error::Error for WireError {}

fn hmac(key: &[u8]) -> HmacSha256 {
    HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length")
}

fn derive(master: &[u8], label: &[&[u8]]) -> [u8; 32] {
    let mut m = hmac(master);
    for part in label {
        m.update(part);
    }
    m.finalize().into_bytes().into()
}

/// The MAC key of host `name`, derived from the controller's master secret.
pub fn host_key(master: &[u8], name: &str) -> [u8; 32] {
    derive(master, &[b"xco host key v2\0", name.as_bytes()])
}

/// The key controller messages are tagged with in keyed mode (simulation
/// only; see the module documentation), derived from the master secret.
pub fn keyed_controller_key(master: &[u8]) -> [u8; 32] {
    derive(master, &[b"xco keyed controller key v1 (simulation only)"])
}

/// How controller messages are authenticated.
#[derive(Clone)]
enum ControllerTag {
    /// Ed25519: the protocol.
    Signed(SigningKey),
    /// HMAC-SHA512 under [`keyed_controller_key`] (simulation only).
    Keyed(Hmac<Sha512>),
}

/// How an agent checks controller messages.
#[derive(Clone)]
enum ControllerCheck {
    /// The controller's Ed25519 public key.
    Signed(VerifyingKey),
    /// HMAC-SHA512 under [`keyed_controller_key`] (simulation only).
    Keyed(Hmac<Sha512>),
}

fn check_controller_tag(check: &ControllerCheck, p: &Packet<&[u8]>) -> Result<(), WireError> {
    match check {
        ControllerCheck::Signed(key) => {
            let sig = Signature::from_slice(p.tag()).map_err(|_| WireError::BadTag)?;
            key.verify_strict(p.signed_part(), &sig)
                .map_err(|_| WireError::BadTag)
        }
        ControllerCheck::Keyed(mac) => {
            let mut m = mac.clone();
            m.update(p.signed_part());
            m.verify_slice(p.tag()).map_err(|_| WireError::BadTag)
        }
    }
}

fn encode_with(repr: &Repr, tag: impl FnOnce(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let mut buf = vec![0u8; repr.buffer_len()];
    let mut p = Packet::new_unchecked(&mut buf[..]);
    repr.emit(&mut p);
    let t = tag(p.signed_part());
    p.set_tag(&t);
    buf
}

/// The controller's keys: its signing key and every host's MAC key.
#[derive(Clone)]
pub struct ControllerKeys {
    signing: ControllerTag,
    hosts: Vec<HmacSha256>,
}

impl ControllerKeys {
    /// Keys from the master secret for hosts named `hosts` (ids in that order).
    ///
    /// Panics if `master` is shorter than [`MIN_KEY_BYTES`] (check key files before).
    pub fn new(master: &[u8], hosts: &[&str]) -> ControllerKeys {
        assert!(master.len() >= MIN_KEY_BYTES, "master secret too short");
        let seed = derive(master, &[b"xco controller signing key v2"]);
        ControllerKeys {
            signing: ControllerTag::Signed(SigningKey::from_bytes(&seed)),
            hosts: hosts.iter().map(|n| hmac(&host_key(master, n))).collect(),
        }
    }

    /// Keys of keyed mode (simulation only: controller messages tagged with
    /// HMAC-SHA512 under [`keyed_controller_key`], not signed; see the
    /// module documentation) from the master secret for hosts named `hosts`.
    ///
    /// Panics if `master` is shorter than [`MIN_KEY_BYTES`].
    pub fn keyed(master: &[u8], hosts: &[&str]) -> ControllerKeys {
        assert!(master.len() >= MIN_KEY_BYTES, "master secret too short");
        let key = keyed_controller_key(master);
        ControllerKeys {
            signing: ControllerTag::Keyed(HmacSha512::new_from_slice(&key).expect("any length")),
            hosts: hosts.iter().map(|n| hmac(&host_key(master, n))).collect(),
        }
    }

    /// Number of hosts (ids 0 to hosts - 1).
    pub fn hosts(&self) -> usize {
        self.hosts.len()
    }

    /// The public key agents verify directives with.
    ///
    /// Panics in keyed mode (there is none: [`AgentKeys::keyed`]).
    pub fn public_key(&self) -> [u8; 32] {
        match &self.signing {
            ControllerTag::Signed(k) => k.verifying_key().to_bytes(),
            ControllerTag::Keyed(_) => panic!("keyed mode has no public key"),
        }
    }

    fn check(&self) -> ControllerCheck {
        match &self.signing {
            ControllerTag::Signed(k) => ControllerCheck::Signed(k.verifying_key()),
            ControllerTag::Keyed(m) => ControllerCheck::Keyed(m.clone()),
        }
    }

    /// Encode and sign a controller message.
    ///
    /// Panics if `repr` is an agent's message or not sent as [`CONTROLLER_ID`].
    pub fn encode(&self, repr: &Repr) -> Vec<u8> {
        assert!(
            repr.msg.sender() == Sender::Controller && repr.host == CONTROLLER_ID,
            "the controller signs only its own messages"
        );
        encode_with(repr, |b| match &self.signing {
            ControllerTag::Signed(k) => k.sign(b).to_bytes().to_vec(),
            ControllerTag::Keyed(m) => {
                let mut m = m.clone();
                m.update(b);
                m.finalize().into_bytes().to_vec()
            }
        })
    }

    /// Check, authenticate (with the sending host's key) and parse an agent's
    /// superseded proof (type 13; the proof inside is not checked here: see
    /// [`ControllerKeys::verify_signed`]).
    pub fn decode_superseded(&self, datagram: &[u8]) -> Result<Superseded, WireError> {
        let p = Packet::new_checked(datagram)?;
        if p.msg_type() != SUPERSEDED_TYPE {
            return Err(WireError::Misdirected);
        }
        let mac = self
            .hosts
            .get(p.host() as usize)
            .ok_or(WireError::UnknownSender(p.host()))?;
        let mut mac = mac.clone();
        mac.update(p.signed_part());
        mac.verify_slice(p.tag()).map_err(|_| WireError::BadTag)?;
        Superseded::parse(&p)
    }

    /// Check, verify (this key's own signature, as an agent would) and parse
    /// a controller datagram: one controller checks what the other signed.
    pub fn verify_signed(&self, datagram: &[u8]) -> Result<Repr, WireError> {
        let p = Packet::new_checked(datagram)?;
        if p.sender() != Sender::Controller {
            return Err(WireError::Misdirected);
        }
        check_controller_tag(&self.check(), &p)?;
        Repr::parse(&p)
    }

    /// Check, authenticate (with the sending host's key) and parse an agent's datagram.
    pub fn decode(&self, datagram: &[u8]) -> Result<Repr, WireError> {
        let p = Packet::new_checked(datagram)?;
        if p.sender() != Sender::Agent || p.msg_type() == SUPERSEDED_TYPE {
            return Err(WireError::Misdirected);
        }
        let mac = self
            .hosts
            .get(p.host() as usize)
            .ok_or(WireError::UnknownSender(p.host()))?;
        let mut mac = mac.clone();
        mac.update(p.signed_part());
        mac.verify_slice(p.tag()).map_err(|_| WireError::BadTag)?;
        Repr::parse(&p)
    }
}

/// An agent's keys: its own MAC key and the controller's public key.
#[derive(Clone)]
pub struct AgentKeys {
    host: u32,
    mac: HmacSha256,
    controller: ControllerCheck,
}

impl AgentKeys {
    /// Keys of host `host`: its MAC key and the controller's public key
    /// (`Err`: not a valid Ed25519 public key).
    ///
    /// Panics if `host_key` is shorter than [`MIN_KEY_BYTES`] (check key files before).
    pub fn new(host: u32, host_key: &[u8], controller_public: &[u8; 32]) -> Result<AgentKeys, String> {
        assert!(host_key.len() >= MIN_KEY_BYTES, "host key too short");
        let controller = VerifyingKey::from_bytes(controller_public)
            .map_err(|_| "not a valid Ed25519 public key".to_string())?;
        Ok(AgentKeys {
            host,
            mac: hmac(host_key),
            controller: ControllerCheck::Signed(controller),
        })
    }

    /// Keys of host `host` in keyed mode (simulation only; see the module
    /// documentation): its MAC key and [`keyed_controller_key`].
    ///
    /// Panics if `host_key` is shorter than [`MIN_KEY_BYTES`].
    pub fn keyed(host: u32, host_key: &[u8], controller_key: &[u8]) -> AgentKeys {
        assert!(host_key.len() >= MIN_KEY_BYTES, "host key too short");
        AgentKeys {
            host,
            mac: hmac(host_key),
            controller: ControllerCheck::Keyed(
                HmacSha512::new_from_slice(controller_key).expect("any length"),
            ),
        }
    }

    /// This host's id.
    pub fn host(&self) -> u32 {
        self.host
    }

    /// Encode and MAC one of this host's messages.
    ///
    /// Panics if `repr` is a controller's message or sent under another id.
    pub fn encode(&self, repr: &Repr) -> Vec<u8> {
        assert!(
            repr.msg.sender() == Sender::Agent && repr.host == self.host,
            "an agent authenticates only its own messages"
        );
        encode_with(repr, |b| {
            let mut m = self.mac.clone();
            m.update(b);
            m.finalize().into_bytes().to_vec()
        })
    }

    /// Encode and MAC a superseded proof of this host.
    ///
    /// Panics if `s` is not this host's, or its proof is over [`super::peer::MAX_PROOF_BYTES`].
    pub fn encode_superseded(&self, s: &Superseded) -> Vec<u8> {
        assert_eq!(s.host, self.host, "an agent authenticates only its own messages");
        let mut b = s.emit_untagged();
        let mut m = self.mac.clone();
        m.update(&b);
        b.extend_from_slice(&m.finalize().into_bytes());
        b
    }

    /// Check, verify (the controller's signature) and parse a controller datagram.
    pub fn decode(&self, datagram: &[u8]) -> Result<Repr, WireError> {
        let p = Packet::new_checked(datagram)?;
        if p.sender() != Sender::Controller {
            return Err(WireError::Misdirected);
        }
        check_controller_tag(&self.controller, &p)?;
        Repr::parse(&p)
    }
}
