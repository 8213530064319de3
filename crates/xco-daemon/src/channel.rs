//! The control channel of a daemon: a non-blocking UDP socket that moves
//! datagrams. What they say, who may say it and in which session is the
//! sans-IO nodes' business (`xco_core::control`); this layer only counts
//! what it sent, received and what the kernel dropped.
//!
//! Datagrams are read in batches of at most [`BATCH`] with one `recvmmsg`
//! (a flood costs one system call per batch, not per datagram), and the
//! socket asks the kernel for its drop count (`SO_RXQ_OVFL`): what the
//! socket's buffer could not hold while the daemon read within its budget
//! ([`crate::intake`]) is counted, not silently lost.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;

/// Datagrams one read ([`Channel::recv_batch`]) takes at most.
pub const BATCH: usize = 64;

/// Bytes of each receive buffer: any UDP datagram fits.
const BUF_BYTES: usize = 65536;

/// Counters of a channel.
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received.
    pub received: u64,
    /// Send errors (e.g. no route while the peer's network is down).
    pub send_errors: u64,
    /// Reads (`recvmmsg` calls) that returned at least one datagram.
    pub reads: u64,
    /// Datagrams the kernel dropped at this socket (its buffer full), as
    /// last reported with a received datagram (`SO_RXQ_OVFL`).
    pub kernel_drops: u64,
}

fn setsockopt_u32(sock: &UdpSocket, level: libc::c_int, name: libc::c_int, v: u32) -> std::io::Result<()> {
    // SAFETY: a plain setsockopt on a socket this function borrows
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&v as *const u32).cast(),
            std::mem::size_of::<u32>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn set_mark(sock: &UdpSocket, mark: u32) -> std::io::Result<()> {
    setsockopt_u32(sock, libc::SOL_SOCKET, libc::SO_MARK, mark).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("cannot mark the control socket (SO_MARK needs CAP_NET_ADMIN): {e}"),
        )
    })
}

/// The address in `ss`, if it is IPv4 or IPv6.
fn socket_addr(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match ss.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in
            let a = unsafe { &*(ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(SocketAddr::new(ip.into(), u16::from_be(a.sin_port)))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6
            let a = unsafe { &*(ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            let ip = Ipv6Addr::from(a.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                u16::from_be(a.sin6_port),
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// A non-blocking UDP endpoint with its receive buffers allocated once.
pub struct Channel {
    /// The socket.
    pub sock: UdpSocket,
    /// [`BATCH`] buffers of [`BUF_BYTES`] (zeroed lazily by the allocator: a
    /// buffer costs memory only as far as datagrams reach into it).
    bufs: Vec<u8>,
    /// The last batch: sender, buffer and length of each datagram.
    got: Vec<(SocketAddr, usize, usize)>,
    /// Counters.
    pub stats: ChannelStats,
}

impl Channel {
    /// A channel bound to `local`.
    pub fn bind(local: SocketAddr) -> std::io::Result<Channel> {
        let sock = UdpSocket::bind(local)?;
        sock.set_nonblocking(true)?;
        setsockopt_u32(&sock, libc::SOL_SOCKET, libc::SO_RXQ_OVFL, 1)?;
        Ok(Channel {
            sock,
            bufs: vec![0; BATCH * BUF_BYTES],
            got: Vec::with_capacity(BATCH),
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

    /// Read at most `max` (and at most [`BATCH`]) waiting datagrams with one
    /// `recvmmsg`; returns how many it took from the socket (0: none
    /// waiting). Read them with [`Channel::datagram`] (a datagram of another
    /// address family than IP's is taken and skipped).
    pub fn recv_batch(&mut self, max: usize) -> usize {
        self.got.clear();
        let want = max.min(BATCH);
        if want == 0 {
            return 0;
        }
        // SAFETY: all-zero is a valid value of these plain C structs
        let mut addrs: [libc::sockaddr_storage; BATCH] = unsafe { std::mem::zeroed() };
        let mut iovs: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
        let mut hdrs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
        // room for one SO_RXQ_OVFL message (a u32) per datagram, aligned for cmsghdr
        let mut ctl = [[0u64; 8]; BATCH];
        let base = self.bufs.as_mut_ptr();
        for i in 0..want {
            iovs[i] = libc::iovec {
                // SAFETY: buffer i lies inside `bufs` (BATCH * BUF_BYTES bytes)
                iov_base: unsafe { base.add(i * BUF_BYTES) }.cast(),
                iov_len: BUF_BYTES,
            };
            let h = &mut hdrs[i].msg_hdr;
            h.msg_name = (&mut addrs[i] as *mut libc::sockaddr_storage).cast();
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_iov = &mut iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = ctl[i].as_mut_ptr().cast();
            h.msg_controllen = std::mem::size_of_val(&ctl[i]) as _;
        }
        let n = loop {
            // SAFETY: `want` headers, each pointing at buffers that live through the call
            let r = unsafe {
                libc::recvmmsg(
                    self.sock.as_raw_fd(),
                    hdrs.as_mut_ptr(),
                    want as libc::c_uint,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                )
            };
            if r >= 0 {
                break r as usize;
            }
            match std::io::Error::last_os_error().kind() {
                std::io::ErrorKind::WouldBlock => return 0,
                std::io::ErrorKind::Interrupted => continue,
                // ICMP errors surfacing on the socket: try again (each is reported once)
                _ => continue,
            }
        };
        for i in 0..n {
            let h = &hdrs[i];
            let Some(from) = socket_addr(&addrs[i]) else {
                continue;
            };
            self.got.push((from, i, (h.msg_len as usize).min(BUF_BYTES)));
            // SAFETY: the kernel wrote msg_controllen bytes of control messages into ctl[i]
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_RXQ_OVFL {
                        let drops = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<u32>());
                        self.stats.kernel_drops = self.stats.kernel_drops.max(u64::from(drops));
                    }
                    c = libc::CMSG_NXTHDR(&h.msg_hdr, c);
                }
            }
        }
        self.stats.received += self.got.len() as u64;
        self.stats.reads += 1;
        n
    }

    /// Datagrams of the last batch (their senders known: at most what
    /// [`Channel::recv_batch`] returned).
    pub fn batch_len(&self) -> usize {
        self.got.len()
    }

    /// The `i`-th datagram of the last batch and its sender.
    ///
    /// Panics if `i >= self.batch_len()`.
    pub fn datagram(&self, i: usize) -> (SocketAddr, &[u8]) {
        let (from, b, n) = self.got[i];
        (from, &self.bufs[b * BUF_BYTES..b * BUF_BYTES + n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_reads_what_waits_up_to_its_limit_with_senders() {
        let mut c = Channel::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let to = c.sock.local_addr().unwrap();
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        for i in 0..70u8 {
            s.send_to(&[i; 3], to).unwrap();
        }
        assert_eq!(c.recv_batch(5), 5);
        assert_eq!(c.datagram(4), (s.local_addr().unwrap(), &[4u8; 3][..]));
        assert_eq!(c.recv_batch(1000), BATCH);
        assert_eq!(c.datagram(0).1, &[5u8; 3][..]);
        assert_eq!(c.recv_batch(1000), 1);
        assert_eq!(c.datagram(0).1, &[69u8; 3][..]);
        assert_eq!(c.recv_batch(1000), 0);
        assert_eq!((c.stats.received, c.stats.reads), (70, 3));
    }

    #[test]
    fn the_kernel_s_drops_are_counted() {
        let mut c = Channel::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        setsockopt_u32(&c.sock, libc::SOL_SOCKET, libc::SO_RCVBUF, 4096).unwrap();
        let to = c.sock.local_addr().unwrap();
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        // far more than a 4-KB buffer holds
        for _ in 0..200 {
            s.send_to(&[0; 500], to).unwrap();
        }
        let mut got = 0;
        while c.recv_batch(BATCH) > 0 {
            got += c.batch_len() as u64;
        }
        assert!(got < 200, "{got}");
        // drops are reported with the datagrams received after them
        s.send_to(&[0; 500], to).unwrap();
        assert_eq!(c.recv_batch(BATCH), 1);
        assert_eq!(c.stats.kernel_drops, 200 - got, "{:?}", c.stats);
    }
}
