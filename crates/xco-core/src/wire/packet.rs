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
    /// Sending host id.
    pub const HOST: Range<usize> = 4..8;
    /// Per-sender sequence number.
    pub const SEQ: Range<usize> = 8..16;
    /// Payload length.
    pub const LEN: Range<usize> = 16..18;
    /// First payload byte.
    pub const PAYLOAD: usize = 18;
    /// HMAC-SHA256 tag length.
    pub const TAG_LEN: usize = 32;
}

/// The magic bytes.
pub const MAGIC: [u8; 2] = *b"XC";
/// The protocol version this code speaks.
pub const VERSION: u8 = 1;
/// Header bytes before the payload.
pub const HEADER_LEN: usize = field::PAYLOAD;

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

    /// Wrap a received buffer: magic, version and the lengths are checked so
    /// that every accessor is in bounds.
    pub fn new_checked(buffer: T) -> Result<Packet<T>, WireError> {
        let p = Packet::new_unchecked(buffer);
        p.check()?;
        Ok(p)
    }

    fn check(&self) -> Result<(), WireError> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN + field::TAG_LEN {
            return Err(WireError::Truncated);
        }
        if b[field::MAGIC] != MAGIC {
            return Err(WireError::BadMagic);
        }
        if b[field::VERSION] != VERSION {
            return Err(WireError::BadVersion(b[field::VERSION]));
        }
        let len = self.payload_len();
        if b.len() != HEADER_LEN + len + field::TAG_LEN {
            return Err(WireError::BadLength);
        }
        Ok(())
    }

    /// Message type byte.
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }

    /// Sending host.
    pub fn host(&self) -> u32 {
        u32::from_be_bytes(self.buffer.as_ref()[field::HOST].try_into().expect("4 bytes"))
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

    /// Everything the HMAC covers.
    pub fn signed_part(&self) -> &[u8] {
        &self.buffer.as_ref()[..HEADER_LEN + self.payload_len()]
    }

    /// The HMAC tag.
    pub fn tag(&self) -> &[u8] {
        let start = HEADER_LEN + self.payload_len();
        &self.buffer.as_ref()[start..start + field::TAG_LEN]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Write the header (magic, version, type, host, sequence number, payload length).
    pub fn set_header(&mut self, msg_type: u8, host: u32, seq: u64, payload_len: u16) {
        let b = self.buffer.as_mut();
        b[field::MAGIC].copy_from_slice(&MAGIC);
        b[field::VERSION] = VERSION;
        b[field::TYPE] = msg_type;
        b[field::HOST].copy_from_slice(&host.to_be_bytes());
        b[field::SEQ].copy_from_slice(&seq.to_be_bytes());
        b[field::LEN].copy_from_slice(&payload_len.to_be_bytes());
    }

    /// The payload, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let len = self.payload_len();
        &mut self.buffer.as_mut()[HEADER_LEN..HEADER_LEN + len]
    }

    /// Write the HMAC tag.
    pub fn set_tag(&mut self, tag: &[u8; field::TAG_LEN]) {
        let start = HEADER_LEN + self.payload_len();
        self.buffer.as_mut()[start..start + field::TAG_LEN].copy_from_slice(tag);
    }
}
