//! The netfilter queue's netlink protocol, spoken directly (no libnetfilter_queue):
//! configuration, packet messages in, verdicts out.
//!
//! Built for rate: packets are read up to [`SLOTS`] per `recvmmsg` into one
//! buffer allocated at start, parsed in place (only the attributes the agent
//! uses: packet id, the copied IP header, the packet's real length), and
//! verdicts — batch verdicts and single ones, see [`super::verdict`] — are
//! written into one reused buffer and sent together in one `sendmsg` (the
//! kernel processes every netlink message of a datagram). Nothing is allocated
//! per packet.
//!
//! The message layouts are those of `linux/netfilter/nfnetlink_queue.h`; the
//! builders and the parser are plain functions over byte slices, tested on
//! byte fixtures below.

use super::verdict::Verdict;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const NFNL_SUBSYS_QUEUE: u16 = 3;
const NFQNL_MSG_PACKET: u16 = 0;
const NFQNL_MSG_VERDICT: u16 = 1;
const NFQNL_MSG_CONFIG: u16 = 2;
const NFQNL_MSG_VERDICT_BATCH: u16 = 3;

const NFQA_PACKET_HDR: u16 = 1;
const NFQA_VERDICT_HDR: u16 = 2;
const NFQA_PAYLOAD: u16 = 10;
const NFQA_CAP_LEN: u16 = 13;
const NFQA_SKB_INFO: u16 = 14;

const NFQA_CFG_CMD: u16 = 1;
const NFQA_CFG_PARAMS: u16 = 2;
const NFQA_CFG_QUEUE_MAXLEN: u16 = 3;
const NFQA_CFG_MASK: u16 = 4;
const NFQA_CFG_FLAGS: u16 = 5;
const NFQNL_CFG_CMD_BIND: u8 = 1;
const NFQNL_CFG_CMD_UNBIND: u8 = 2;
const NFQNL_COPY_PACKET: u8 = 2;

/// A full queue passes packets instead of dropping them.
pub const NFQA_CFG_F_FAIL_OPEN: u32 = 0x01;
/// GSO packets are queued whole (one message, one verdict for up to 64 KB).
pub const NFQA_CFG_F_GSO: u32 = 0x04;
/// `NFQA_SKB_INFO` flag: the packet is a GSO packet.
const NFQA_SKB_GSO: u32 = 0x02;

const NF_ACCEPT: u32 = 1;
const NLMSG_HDRLEN: usize = 16;
const NFGENMSG_LEN: usize = 4;
const NLA_HDRLEN: usize = 4;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_ERROR: u16 = 2;

/// Messages read per `recvmmsg`.
pub const SLOTS: usize = 64;
/// Bytes per received message: a packet message with a 64-byte copy is about 250.
const SLOT_BYTES: usize = 1024;
/// Bytes of one single verdict message.
pub const VERDICT_BYTES: usize = NLMSG_HDRLEN + NFGENMSG_LEN + NLA_HDRLEN + 8;

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Start a message of `kind` for queue `queue`; returns its start offset (finish with [`end_msg`]).
fn begin_msg(buf: &mut Vec<u8>, kind: u16, flags: u16, queue: u16) -> usize {
    let start = buf.len();
    buf.extend_from_slice(&0u32.to_ne_bytes()); // length, set by end_msg
    buf.extend_from_slice(&((NFNL_SUBSYS_QUEUE << 8) | kind).to_ne_bytes());
    buf.extend_from_slice(&(NLM_F_REQUEST | flags).to_ne_bytes());
    buf.extend_from_slice(&0u32.to_ne_bytes()); // seq
    buf.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel
    buf.extend_from_slice(&[libc::AF_UNSPEC as u8, 0]); // nfgenmsg: family, version 0
    buf.extend_from_slice(&queue.to_be_bytes());
    start
}

fn put_attr(buf: &mut Vec<u8>, kind: u16, value: &[u8]) {
    buf.extend_from_slice(&((NLA_HDRLEN + value.len()) as u16).to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(value);
    buf.resize(align4(buf.len()), 0);
}

fn end_msg(buf: &mut [u8], start: usize) {
    let len = (buf.len() - start) as u32;
    buf[start..start + 4].copy_from_slice(&len.to_ne_bytes());
}

/// Append the verdict message `v` (accept) for queue `queue` to `buf`.
pub fn put_verdict(buf: &mut Vec<u8>, queue: u16, v: Verdict) {
    let (kind, id) = match v {
        Verdict::UpTo(id) => (NFQNL_MSG_VERDICT_BATCH, id),
        Verdict::One(id) => (NFQNL_MSG_VERDICT, id),
    };
    let start = begin_msg(buf, kind, 0, queue);
    let mut hdr = [0u8; 8];
    hdr[..4].copy_from_slice(&NF_ACCEPT.to_be_bytes());
    hdr[4..].copy_from_slice(&id.to_be_bytes());
    put_attr(buf, NFQA_VERDICT_HDR, &hdr);
    end_msg(buf, start);
}

/// A configuration of queue `queue`.
#[derive(Clone, Copy, Debug)]
pub enum Config {
    /// Bind the socket to the queue.
    Bind,
    /// Unbind it.
    Unbind,
    /// Copy this many bytes of each packet.
    CopyRange(u32),
    /// At most this many packets wait for a verdict.
    MaxLen(u32),
    /// Set `flags` (`NFQA_CFG_F_*`) within `mask`.
    Flags { flags: u32, mask: u32 },
}

/// Append configuration message `c` of queue `queue` to `buf` (`ack`: the kernel
/// acknowledges it; without, it answers only an error).
pub fn put_config(buf: &mut Vec<u8>, queue: u16, c: Config, ack: bool) {
    let start = begin_msg(buf, NFQNL_MSG_CONFIG, if ack { NLM_F_ACK } else { 0 }, queue);
    match c {
        Config::Bind | Config::Unbind => {
            let cmd = if matches!(c, Config::Bind) {
                NFQNL_CFG_CMD_BIND
            } else {
                NFQNL_CFG_CMD_UNBIND
            };
            put_attr(buf, NFQA_CFG_CMD, &[cmd, 0, 0, 0]);
        }
        Config::CopyRange(n) => {
            let mut p = [0u8; 5];
            p[..4].copy_from_slice(&n.to_be_bytes());
            p[4] = NFQNL_COPY_PACKET;
            put_attr(buf, NFQA_CFG_PARAMS, &p);
        }
        Config::MaxLen(n) => put_attr(buf, NFQA_CFG_QUEUE_MAXLEN, &n.to_be_bytes()),
        Config::Flags { flags, mask } => {
            put_attr(buf, NFQA_CFG_FLAGS, &flags.to_be_bytes());
            put_attr(buf, NFQA_CFG_MASK, &mask.to_be_bytes());
        }
    }
    end_msg(buf, start);
}

/// A queued packet as the agent needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMsg<'a> {
    /// The kernel's id of the packet (its verdict names it).
    pub id: u32,
    /// The copied head of the packet (from its IP header).
    pub head: &'a [u8],
    /// The packet's real length: the whole GSO packet for a GSO packet.
    pub len: u32,
    /// A GSO packet (several segments on the wire).
    pub gso: bool,
}

/// One netlink message from the queue socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Incoming<'a> {
    /// A packet awaiting its verdict.
    Packet(PacketMsg<'a>),
    /// The kernel refused a request (errno; 0 is an acknowledgement).
    Error(i32),
    /// Anything else (ignored).
    Other,
}

fn u16_ne(b: &[u8]) -> u16 {
    u16::from_ne_bytes([b[0], b[1]])
}

fn u32_ne(b: &[u8]) -> u32 {
    u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
}

fn u32_be(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Split a received datagram into its netlink messages (a truncated tail is dropped).
pub fn messages(mut buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        if buf.len() < NLMSG_HDRLEN {
            return None;
        }
        let len = u32_ne(buf) as usize;
        if len < NLMSG_HDRLEN || len > buf.len() {
            return None;
        }
        let (m, rest) = buf.split_at(len);
        buf = rest.get(align4(len) - len..).unwrap_or(&[]);
        Some(m)
    })
}

/// Parse one netlink message (never panics on malformed input).
pub fn parse(msg: &[u8]) -> Incoming<'_> {
    if msg.len() < NLMSG_HDRLEN {
        return Incoming::Other;
    }
    let kind = u16_ne(&msg[4..]);
    if kind == NLMSG_ERROR {
        return match msg.get(NLMSG_HDRLEN..NLMSG_HDRLEN + 4) {
            Some(e) => Incoming::Error(-(u32_ne(e) as i32)),
            None => Incoming::Other,
        };
    }
    if kind != (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET {
        return Incoming::Other;
    }
    let mut attrs = msg.get(NLMSG_HDRLEN + NFGENMSG_LEN..).unwrap_or(&[]);
    let (mut id, mut head, mut cap_len, mut gso) = (None, &[][..], None, false);
    while attrs.len() >= NLA_HDRLEN {
        let len = u16_ne(attrs) as usize;
        if len < NLA_HDRLEN || len > attrs.len() {
            break;
        }
        let kind = u16_ne(&attrs[2..]) & 0x3fff;
        let value = &attrs[NLA_HDRLEN..len];
        match kind {
            NFQA_PACKET_HDR if value.len() >= 4 => id = Some(u32_be(value)),
            NFQA_PAYLOAD => head = value,
            NFQA_CAP_LEN if value.len() >= 4 => cap_len = Some(u32_be(value)),
            NFQA_SKB_INFO if value.len() >= 4 => gso = u32_be(value) & NFQA_SKB_GSO != 0,
            _ => {}
        }
        attrs = attrs.get(align4(len)..).unwrap_or(&[]);
    }
    match id {
        Some(id) => Incoming::Packet(PacketMsg {
            id,
            head,
            // the kernel sends the real length only when it copied less than the packet
            len: cap_len.unwrap_or(head.len() as u32),
            gso,
        }),
        None => Incoming::Other,
    }
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// The netlink port id of socket `fd`.
pub fn portid_of(fd: RawFd) -> io::Result<u32> {
    let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
    check(unsafe { libc::getsockname(fd, (&mut addr as *mut libc::sockaddr_nl).cast(), &mut len) })?;
    Ok(addr.nl_pid)
}

/// A netlink socket of the netfilter queue subsystem, with its buffers.
pub struct NfqSocket {
    fd: OwnedFd,
    /// [`SLOTS`] receive slots of [`SLOT_BYTES`].
    rx: Box<[u8]>,
    /// Bytes received in each slot by the last `recvmmsg`, and whether the message was longer.
    rx_len: [usize; SLOTS],
    rx_trunc: [bool; SLOTS],
    /// Slots filled by the last `recvmmsg`, the one being parsed, and the offset in it.
    rx_n: usize,
    rx_slot: usize,
    rx_off: usize,
    /// Verdicts waiting to be sent.
    tx: Vec<u8>,
    /// `recvmmsg` calls that returned messages.
    pub recv_calls: u64,
    /// `sendmsg` calls that carried verdicts.
    pub send_calls: u64,
    /// Messages longer than a receive slot (parsed as far as they arrived).
    pub truncated: u64,
}

impl NfqSocket {
    /// Open and bind a socket; ask for a receive buffer of `rcvbuf_bytes` (root may exceed
    /// `net.core.rmem_max`).
    pub fn open(rcvbuf_bytes: usize) -> io::Result<NfqSocket> {
        let fd = check(unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                libc::NETLINK_NETFILTER,
            )
        })?;
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        check(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        })?;
        let s = NfqSocket::with_fd(fd, SLOTS * SLOT_BYTES);
        // with fail-open, an overflow of this buffer passes packets (the kernel numbers them,
        // so the agent sees the gap); no ENOBUFS error is wanted on top
        s.setsockopt(libc::SOL_NETLINK, libc::NETLINK_NO_ENOBUFS, 1)?;
        let want = rcvbuf_bytes.min(i32::MAX as usize) as libc::c_int;
        if s.setsockopt(libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, want)
            .is_err()
        {
            s.setsockopt(libc::SOL_SOCKET, libc::SO_RCVBUF, want)?;
        }
        Ok(s)
    }

    /// The agent's queue socket, inherited by its watchdog (which only sends on it:
    /// no receive buffer).
    pub fn inherited(fd: OwnedFd) -> NfqSocket {
        NfqSocket::with_fd(fd, 0)
    }

    fn with_fd(fd: OwnedFd, rx_bytes: usize) -> NfqSocket {
        NfqSocket {
            fd,
            rx: vec![0u8; rx_bytes].into_boxed_slice(),
            rx_len: [0; SLOTS],
            rx_trunc: [false; SLOTS],
            rx_n: 0,
            rx_slot: 0,
            rx_off: 0,
            tx: Vec::with_capacity(64 * 1024),
            recv_calls: 0,
            send_calls: 0,
            truncated: 0,
        }
    }

    fn setsockopt(&self, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
        check(unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        })
        .map(|_| ())
    }

    /// The receive buffer the kernel granted, bytes.
    pub fn rcvbuf_bytes(&self) -> usize {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if r == 0 {
            v.max(0) as usize
        } else {
            0
        }
    }

    /// The socket's descriptor.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Send configuration `c` of queue `queue` and wait (at most 2 s) for the kernel's answer.
    /// Call before packets are queued to it (anything else read meanwhile is discarded).
    pub fn configure(&mut self, queue: u16, c: Config) -> io::Result<()> {
        let mut buf = Vec::with_capacity(64);
        put_config(&mut buf, queue, c, true);
        self.send(&buf)?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        let mut rx = [0u8; 8192];
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let mut pfd = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            if check(unsafe { libc::poll(&mut pfd, 1, left.as_millis() as libc::c_int) })? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no answer from the kernel",
                ));
            }
            let n = check(unsafe {
                libc::recv(self.fd.as_raw_fd(), rx.as_mut_ptr().cast(), rx.len(), 0) as libc::c_int
            })?;
            for m in messages(&rx[..n as usize]) {
                if let Incoming::Error(e) = parse(m) {
                    return if e == 0 {
                        Ok(())
                    } else {
                        Err(io::Error::from_raw_os_error(e))
                    };
                }
            }
        }
    }

    /// Send configuration `c` of queue `queue` without waiting: the kernel applies it
    /// before this returns, and answers only an error, which arrives among the packets
    /// (safe while packets are queued, unlike [`configure`](Self::configure)).
    pub fn send_config(&self, queue: u16, c: Config) -> io::Result<()> {
        let mut buf = Vec::with_capacity(64);
        put_config(&mut buf, queue, c, false);
        self.send(&buf)
    }

    /// Send verdict `v` of queue `queue` at once, on its own.
    pub fn send_verdict_now(&self, queue: u16, v: Verdict) -> io::Result<()> {
        let mut buf = Vec::with_capacity(VERDICT_BYTES);
        put_verdict(&mut buf, queue, v);
        self.send(&buf)
    }

    /// The socket's netlink port id (the kernel names a queue's owner by it).
    pub fn portid(&self) -> io::Result<u32> {
        portid_of(self.fd.as_raw_fd())
    }

    fn send(&self, buf: &[u8]) -> io::Result<()> {
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        let n = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                buf.as_ptr().cast(),
                buf.len(),
                0,
                (&addr as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// The next message (`Ok(None)`: nothing waiting). Reads up to [`SLOTS`] messages per system call.
    pub fn next(&mut self) -> io::Result<Option<Incoming<'_>>> {
        loop {
            while self.rx_slot < self.rx_n {
                let base = self.rx_slot * SLOT_BYTES;
                let end = base + self.rx_len[self.rx_slot];
                let from = (base + self.rx_off).min(end);
                if self.rx_trunc[self.rx_slot] {
                    // larger than a slot: parse what arrived (the packet id comes first, so
                    // the packet still gets its verdict), then go on with the next slot
                    self.rx_slot += 1;
                    self.rx_off = 0;
                    self.truncated += 1;
                    return Ok(Some(parse(&self.rx[from..end])));
                }
                if let Some(len) = messages(&self.rx[from..end]).next().map(<[u8]>::len) {
                    self.rx_off += align4(len);
                    return Ok(Some(parse(&self.rx[from..from + len])));
                }
                self.rx_slot += 1;
                self.rx_off = 0;
            }
            if !self.recv_batch()? {
                return Ok(None);
            }
        }
    }

    /// One `recvmmsg`; false if nothing was waiting.
    fn recv_batch(&mut self) -> io::Result<bool> {
        let base = self.rx.as_mut_ptr();
        let mut iov: [libc::iovec; SLOTS] = unsafe { std::mem::zeroed() };
        let mut hdrs: [libc::mmsghdr; SLOTS] = unsafe { std::mem::zeroed() };
        for i in 0..SLOTS {
            iov[i] = libc::iovec {
                iov_base: unsafe { base.add(i * SLOT_BYTES) }.cast(),
                iov_len: SLOT_BYTES,
            };
            hdrs[i].msg_hdr.msg_iov = &mut iov[i];
            hdrs[i].msg_hdr.msg_iovlen = 1;
        }
        let n = unsafe {
            libc::recvmmsg(
                self.fd.as_raw_fd(),
                hdrs.as_mut_ptr(),
                SLOTS as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(false),
                _ => Err(e),
            };
        }
        self.recv_calls += 1;
        for (i, h) in hdrs.iter().take(n as usize).enumerate() {
            // a truncated message keeps its first attributes (the packet id comes first)
            self.rx_len[i] = (h.msg_len as usize).min(SLOT_BYTES);
            self.rx_trunc[i] = h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
        }
        self.rx_n = n as usize;
        self.rx_slot = 0;
        self.rx_off = 0;
        Ok(n > 0)
    }

    /// Queue verdict `v` of queue `queue` for the next [`send_verdicts`](Self::send_verdicts)
    /// (which it calls itself when its buffer is full).
    pub fn push_verdict(&mut self, queue: u16, v: Verdict) -> io::Result<()> {
        if self.tx.len() + VERDICT_BYTES > self.tx.capacity() {
            self.send_verdicts()?;
        }
        put_verdict(&mut self.tx, queue, v);
        Ok(())
    }

    /// Forget the verdicts queued and not yet sent.
    pub fn discard_verdicts(&mut self) {
        self.tx.clear();
    }

    /// Send every queued verdict in one `sendmsg`.
    pub fn send_verdicts(&mut self) -> io::Result<()> {
        if self.tx.is_empty() {
            return Ok(());
        }
        let r = self.send(&self.tx);
        self.tx.clear();
        self.send_calls += 1;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_verdict_is_the_kernels_layout() {
        let mut b = Vec::new();
        put_verdict(&mut b, 7, Verdict::One(0x01020304));
        assert_eq!(b.len(), VERDICT_BYTES);
        let mut want = Vec::new();
        want.extend_from_slice(&32u32.to_ne_bytes()); // nlmsg_len
        want.extend_from_slice(&0x0301u16.to_ne_bytes()); // NFNL_SUBSYS_QUEUE << 8 | NFQNL_MSG_VERDICT
        want.extend_from_slice(&1u16.to_ne_bytes()); // NLM_F_REQUEST
        want.extend_from_slice(&[0; 8]); // seq, pid
        want.extend_from_slice(&[0, 0, 0, 7]); // AF_UNSPEC, version 0, queue 7 (big-endian)
        want.extend_from_slice(&12u16.to_ne_bytes()); // nla_len
        want.extend_from_slice(&2u16.to_ne_bytes()); // NFQA_VERDICT_HDR
        want.extend_from_slice(&[0, 0, 0, 1, 1, 2, 3, 4]); // NF_ACCEPT, id (big-endian)
        assert_eq!(b, want);
    }

    #[test]
    fn a_batch_verdict_differs_only_in_its_type() {
        let (mut one, mut batch) = (Vec::new(), Vec::new());
        put_verdict(&mut one, 7, Verdict::One(9));
        put_verdict(&mut batch, 7, Verdict::UpTo(9));
        assert_eq!(u16_ne(&batch[4..]), 0x0303, "NFQNL_MSG_VERDICT_BATCH");
        assert_eq!(one[6..], batch[6..]);
    }

    #[test]
    fn verdicts_concatenate_into_one_datagram() {
        let mut b = Vec::new();
        for v in [Verdict::UpTo(5), Verdict::One(8), Verdict::One(9)] {
            put_verdict(&mut b, 1, v);
        }
        let ids: Vec<u32> = messages(&b).map(|m| u32_be(&m[m.len() - 4..])).collect();
        assert_eq!(ids, vec![5, 8, 9]);
    }

    #[test]
    fn a_configuration_sent_without_waiting_asks_for_no_acknowledgement() {
        let (mut acked, mut quiet) = (Vec::new(), Vec::new());
        put_config(&mut acked, 3, Config::MaxLen(0), true);
        put_config(&mut quiet, 3, Config::MaxLen(0), false);
        assert_eq!(u16_ne(&quiet[6..]), NLM_F_REQUEST, "no NLM_F_ACK");
        assert_eq!(acked[8..], quiet[8..], "the same message otherwise");
        assert_eq!(
            &quiet[20..28],
            &[8, 0, 3, 0, 0, 0, 0, 0][..],
            "QUEUE_MAXLEN 0, big-endian"
        );
    }

    #[test]
    fn flag_configuration_carries_flags_and_mask() {
        let mut b = Vec::new();
        let f = NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO;
        put_config(&mut b, 3, Config::Flags { flags: f, mask: f }, true);
        assert_eq!(u16_ne(&b[4..]), 0x0302, "NFQNL_MSG_CONFIG");
        assert_eq!(u16_ne(&b[6..]), NLM_F_REQUEST | NLM_F_ACK);
        // attributes: FLAGS then MASK, both big-endian 5
        assert_eq!(&b[20..32], &[8, 0, 5, 0, 0, 0, 0, 5, 8, 0, 4, 0][..]);
        assert_eq!(&b[32..], &[0, 0, 0, 5][..]);
        assert_eq!(u32_ne(&b) as usize, b.len());
    }

    /// A packet message as the kernel builds it: header, then the attributes.
    fn packet_msg(id: u32, payload: &[u8], cap_len: Option<u32>, skb_info: Option<u32>) -> Vec<u8> {
        let mut b = Vec::new();
        let start = begin_msg(&mut b, NFQNL_MSG_PACKET, 0, 7);
        let mut hdr = id.to_be_bytes().to_vec();
        hdr.extend_from_slice(&[0x08, 0x00, 3]); // ETH_P_IP, hook LOCAL_OUT
        put_attr(&mut b, NFQA_PACKET_HDR, &hdr);
        put_attr(&mut b, 6, &2u32.to_be_bytes()); // IFINDEX_OUTDEV (ignored)
        if let Some(c) = cap_len {
            put_attr(&mut b, NFQA_CAP_LEN, &c.to_be_bytes());
        }
        if let Some(s) = skb_info {
            put_attr(&mut b, NFQA_SKB_INFO, &s.to_be_bytes());
        }
        put_attr(&mut b, NFQA_PAYLOAD, payload);
        end_msg(&mut b, start);
        b
    }

    #[test]
    fn a_gso_packet_counts_its_real_length_not_the_copied_head() {
        let head = [0x45u8; 64];
        let m = packet_msg(42, &head, Some(65_226), Some(NFQA_SKB_GSO));
        match parse(&m) {
            Incoming::Packet(p) => {
                assert_eq!((p.id, p.len, p.gso), (42, 65_226, true));
                assert_eq!(p.head, &head[..]);
            }
            x => panic!("{x:?}"),
        }
        // a packet shorter than the copy range has no CAP_LEN: its payload is all of it
        let m = packet_msg(43, &[0x45; 40], None, None);
        assert!(matches!(
            parse(&m),
            Incoming::Packet(PacketMsg {
                id: 43,
                len: 40,
                gso: false,
                ..
            })
        ));
    }

    #[test]
    fn errors_and_acknowledgements_are_read() {
        let mut b = Vec::new();
        b.extend_from_slice(&36u32.to_ne_bytes());
        b.extend_from_slice(&NLMSG_ERROR.to_ne_bytes());
        b.extend_from_slice(&[0; 10]);
        b.extend_from_slice(&(-libc::ENOENT).to_ne_bytes());
        b.extend_from_slice(&[0; 16]); // the request's header
        assert_eq!(parse(&b), Incoming::Error(libc::ENOENT));
        b[16..20].copy_from_slice(&0i32.to_ne_bytes());
        assert_eq!(parse(&b), Incoming::Error(0));
    }

    #[test]
    fn malformed_messages_never_panic() {
        let good = packet_msg(1, &[0x45; 64], Some(1500), None);
        for cut in 0..good.len() {
            let _ = parse(&good[..cut]);
            let _ = messages(&good[..cut]).count();
        }
        let mut bad = good.clone();
        bad[20] = 0xff; // first attribute longer than the message
        assert_eq!(parse(&bad), Incoming::Other);
        let mut zero = good.clone();
        zero[20] = 0;
        zero[21] = 0; // a zero-length attribute stops the walk
        assert_eq!(parse(&zero), Incoming::Other);
    }
}
