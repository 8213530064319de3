//! Field access on a control datagram, in place and bounds-checked.

use super::auth::WireError;

/// Byte offsets of the header fields.
pub mod field {
    use core::ops::Range;
    /// "XC".
    pub const MAGIC: Range<usize> = 0..2;
    /// Protocol version.
    pub const VERSION: usize = 2;
    /// Message type.
    pub const TYPE: usize = 3;
    /// Sending host id (the controller: `CONTROLLER_ID`).
    pub const HOST: Range<usize> = 4..8;
    /// Session: the controller's run id, or the agent's join nonce.
    pub const RUN: Range<usize> = 8..16;
    /// Per-session sequence number.
    pub const SEQ: Range<usize> = 16..24;
    /// Payload length.
    pub const LEN: Range<usize> = 24..26;
    /// First payload byte.
    pub const PAYLOAD: usize = 26;
    /// HMAC-SHA256 tag length (what agents send).
    pub const MAC_LEN: usize = 32;
    /// Ed25519 signature length (what the controller sends).
    pub const SIG_LEN: usize = 64;
}

/// The magic bytes.
pub const MAGIC: [u8; 2] = *b"XC";
/// The protocol version this code sends (5: grants carry their freshness,
/// [`super::repr::Echo`]; 4: terms, peer heartbeats and superseded proofs;
/// 3: directives carry their start; 2: controller signatures, sessions).
pub const VERSION: u8 = 5;
/// The oldest version this code still reads: a version-2 directive has no
/// start and applies on receipt.
pub const MIN_VERSION: u8 = 2;
/// Header bytes before the payload.
pub const HEADER_LEN: usize = field::PAYLOAD;

/// Who may send a message type: the controller (signed) or an agent (MAC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sender {
    /// Directive, hello, rejoin, challenge, ungate: an Ed25519 signature of the controller.
    Controller,
    /// Join, leave, heartbeat, report, give-back, rejections, confirm,
    /// superseded, demand: the host's HMAC.
    Agent,
    /// A controller's heartbeat to its peer: HMAC under the peer key.
    Peer,
}

impl Sender {
    /// The sender of message type `t` (`None`: not a type of this version).
    pub fn of_type(t: u8) -> Option<Sender> {
        match t {
            4 | 7 | 8 | 10 | 15 => Some(Sender::Controller),
            1 | 2 | 3 | 5 | 6 | 9 | 11 | 13 | 14 => Some(Sender::Agent),
            12 => Some(Sender::Peer),
            _ => None,
        }
    }

    /// Bytes of the authentication tag this sender appends.
    pub fn tag_len(self) -> usize {
        match self {
            Sender::Controller => field::SIG_LEN,
            Sender::Agent | Sender::Peer => field::MAC_LEN,
        }
    }
}

/// A control datagram in a buffer.
#[derive(Debug)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap a buffer without checks (use [`new_checked`](Self::new_checked) for received data).
    pub fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap a received buffer: magic, version, type and the lengths are
    /// checked so that every accessor is in bounds.
    pub fn new_checked(buffer: T) -> Result<Packet<T>, WireError> {
        let p = Packet::new_unchecked(buffer);
        p.check()?;
        Ok(p)
    }

    fn check(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN + field::MAC_LEN {
            return Err(WireError::Truncated);
        }
        if b[field::MAGIC] != MAGIC {
            return Err(WireError::BadMagic);
        }
        if !(MIN_VERSION..=VERSION).contains(&b[field::VERSION]) {
            return Err(WireError::BadVersion(b[field::VERSION]));
        }
        let sender = Sender::of_type(self.msg_type()).ok_or(WireError::UnknownType(self.msg_type()))?;
        if b.len() != HEADER_LEN + self.payload_len() + sender.tag_len() {
            return Err(WireError::BadLength);
        }
        Ok(())
    }

    /// Protocol version byte.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }

    /// Message type byte.
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }

    /// Who sends this type (checked packets only: panics on an unknown type).
    pub fn sender(&self) -> Sender {
        Sender::of_type(self.msg_type()).expect("checked packet")
    }

    /// Sending host.
    pub fn host(&self) -> u32 {
        u32::from_be_bytes(self.buffer.as_ref()[field::HOST].try_into().expect("4 bytes"))
    }

    /// Session (controller run id or agent join nonce).
    pub fn run(&self) -> u64 {
        u64::from_be_bytes(self.buffer.as_ref()[field::RUN].try_into().expect("8 bytes"))
    }

    /// Sequence number.
    pub fn seq(&self) -> u64 {
        u64::from_be_bytes(self.buffer.as_ref()[field::SEQ].try_into().expect("8 bytes"))
    }

    /// Payload length from the header.
    pub fn payload_len(&self) -> usize {
        u16::from_be_bytes(self.buffer.as_ref()[field::LEN].try_into().expect("2 bytes")) as usize
    }

    /// The payload.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..HEADER_LEN + self.payload_len()]
    }

    /// Everything the tag covers.
    pub fn signed_part(&self) -> &[u8] {
        &self.buffer.as_ref()[..HEADER_LEN + self.payload_len()]
    }

    /// The tag (signature or MAC) of a checked packet.
    pub fn tag(&self) -> &[u8] {
        let start = HEADER_LEN + self.payload_len();
        &self.buffer.as_ref()[start..start + self.sender().tag_len()]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Write the header (magic, version, type, host, session, sequence number, payload length).
    pub fn set_header(&mut self, msg_type: u8, host: u32, run: u64, seq: u64, payload_len: u16) {
        let b = self.buffer.as_mut();
        b[field::MAGIC].copy_from_slice(&MAGIC);
        b[field::VERSION] = VERSION;
        b[field::TYPE] = msg_type;
        b[field::HOST].copy_from_slice(&host.to_be_bytes());
        b[field::RUN].copy_from_slice(&run.to_be_bytes());
        b[field::SEQ].copy_from_slice(&seq.to_be_bytes());
        b[field::LEN].copy_from_slice(&payload_len.to_be_bytes());
    }

    /// The payload, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let len = self.payload_len();
        &mut self.buffer.as_mut()[HEADER_LEN..HEADER_LEN + len]
    }

    /// Write the tag (its length must be the type's sender's).
    pub fn set_tag(&mut self, tag: &[u8]) {
        let start = HEADER_LEN + self.payload_len();
        self.buffer.as_mut()[start..start + tag.len()].copy_from_slice(tag);
    }
}
