//! The control channel of a daemon: a non-blocking UDP socket that moves
//! datagrams. What they say, who may say it and in which session is the
//! sans-IO nodes' business (`xco_core::control`); this layer only counts
//! what it sent and received.

use std::net::{SocketAddr, UdpSocket};

/// Counters of a channel.
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received.
    pub received: u64,
    /// Send errors (e.g. no route while the peer's network is down).
    pub send_errors: u64,
}

/// A non-blocking UDP endpoint with a receive buffer allocated once.
pub struct Channel {
    /// The socket.
    pub sock: UdpSocket,
    buf: Vec<u8>,
    /// Counters.
    pub stats: ChannelStats,
}

impl Channel {
    /// A channel bound to `local`.
    pub fn bind(local: SocketAddr) -> std::io::Result<Channel> {
        let sock = UdpSocket::bind(local)?;
        sock.set_nonblocking(true)?;
        Ok(Channel {
            sock,
            buf: vec![0; 65536],
            stats: ChannelStats::default(),
        })
    }

    /// Send `datagram` to `to` (errors are counted, not returned: the
    /// protocol recovers from a lost datagram).
    pub fn send(&mut self, to: SocketAddr, datagram: &[u8]) {
        match self.sock.send_to(datagram, to) {
            Ok(_) => self.stats.sent += 1,
            Err(_) => self.stats.send_errors += 1,
        }
    }

    /// The next datagram and its sender; `None` when none is waiting.
    pub fn recv(&mut self) -> Option<(SocketAddr, &[u8])> {
        loop {
            match self.sock.recv_from(&mut self.buf) {
                Ok((n, from)) => {
                    self.stats.received += 1;
                    return Some((from, &self.buf[..n]));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return None,
                Err(_) => continue, // ICMP errors surfacing on the socket: ignore
            }
        }
    }
}
