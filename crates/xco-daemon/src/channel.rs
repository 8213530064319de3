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

fn set_mark(sock: &UdpSocket, mark: u32) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain setsockopt on a socket this function borrows
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MARK,
            (&mark as *const u32).cast(),
            std::mem::size_of::<u32>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        let e = std::io::Error::last_os_error();
        Err(std::io::Error::new(
            e.kind(),
            format!("cannot mark the control socket (SO_MARK needs CAP_NET_ADMIN): {e}"),
        ))
    }
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

    /// Mark every packet sent with firewall mark `mark` (`SO_MARK`: the agents' rules let
    /// exactly this mark pass their gate; setting it needs `CAP_NET_ADMIN`).
    pub fn mark(&self, mark: u32) -> std::io::Result<()> {
        set_mark(&self.sock, mark)
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
