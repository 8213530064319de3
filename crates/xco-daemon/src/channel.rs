//! The control channel of a daemon: a non-blocking UDP socket speaking the
//! `xco_core::wire` protocol — every datagram signed (HMAC-SHA256, shared
//! key), sequence-numbered, and checked against replays on receipt. Rejected
//! datagrams are counted by reason and never reach the daemon's logic.

use std::net::{SocketAddr, UdpSocket};
use std::time::{SystemTime, UNIX_EPOCH};
use xco_core::wire::{Authenticator, Message, ReplayGuard, Repr, WireError};

/// The controller's id on the wire.
pub const CONTROLLER_ID: u32 = u32::MAX;

/// Counters of a channel.
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams accepted.
    pub accepted: u64,
    /// Rejected: bad tag (wrong key, forged, corrupted).
    pub rejected_auth: u64,
    /// Rejected: replayed or stale sequence number.
    pub rejected_replay: u64,
    /// Rejected: malformed (short, bad magic/version/length/type/payload).
    pub rejected_malformed: u64,
    /// Send errors (e.g. no route while the peer's network is down).
    pub send_errors: u64,
}

/// A signed, replay-checked UDP endpoint.
pub struct Channel {
    /// The socket.
    pub sock: UdpSocket,
    auth: Authenticator,
    guard: ReplayGuard,
    me: u32,
    seq: u64,
    buf: Vec<u8>,
    /// Counters.
    pub stats: ChannelStats,
}

/// Read a shared key file (at least 16 bytes after trimming whitespace).
pub fn read_key(path: &str) -> Result<Vec<u8>, String> {
    let raw = std::fs::read(path).map_err(|e| format!("key file {path}: {e}"))?;
    let key = raw.trim_ascii().to_vec();
    if key.len() < 16 {
        return Err(format!(
            "key file {path}: {} bytes; at least 16 are needed (make one with `xco-daemon keygen {path}`)",
            key.len()
        ));
    }
    Ok(key)
}

impl Channel {
    /// Bind `local` and speak as `me` with `key`.
    pub fn bind(local: SocketAddr, me: u32, key: &[u8]) -> std::io::Result<Channel> {
        let sock = UdpSocket::bind(local)?;
        sock.set_nonblocking(true)?;
        // start above any sequence number an earlier run of this sender used
        let seq = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        Ok(Channel {
            sock,
            auth: Authenticator::new(key),
            guard: ReplayGuard::new(),
            me,
            seq,
            buf: vec![0; 65536],
            stats: ChannelStats::default(),
        })
    }

    /// Sign and send `msg` to `to`.
    pub fn send(&mut self, to: SocketAddr, msg: Message) {
        self.seq += 1;
        let d = self.auth.encode(&Repr {
            host: self.me,
            seq: self.seq,
            msg,
        });
        match self.sock.send_to(&d, to) {
            Ok(_) => self.stats.sent += 1,
            Err(_) => self.stats.send_errors += 1,
        }
    }

    /// The next datagram: `None` when none is waiting, otherwise the sender
    /// and the checked message or why it was rejected.
    pub fn recv(&mut self) -> Option<(SocketAddr, Result<Repr, WireError>)> {
        loop {
            let (n, from) = match self.sock.recv_from(&mut self.buf) {
                Ok(x) => x,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return None,
                Err(_) => continue, // ICMP errors surfacing on the socket: ignore
            };
            let r = self.auth.decode(&self.buf[..n]).and_then(|r| {
                self.guard.check(&r)?;
                Ok(r)
            });
            match &r {
                Ok(_) => self.stats.accepted += 1,
                Err(WireError::BadTag) => self.stats.rejected_auth += 1,
                Err(WireError::Replay { .. }) => self.stats.rejected_replay += 1,
                Err(_) => self.stats.rejected_malformed += 1,
            }
            return Some((from, r));
        }
    }
}
