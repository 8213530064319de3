//! The NFQUEUE gate: iptables sends the host's coordinated traffic (OUTPUT for
//! its own, FORWARD for its guests') to a netfilter queue; the agent holds
//! each packet's verdict until the directive allows it, then accepts it.
//! Nothing is ever dropped by the agent.
//!
//! - Small packets (ACKs, pings, control) never enter the queue: an iptables
//!   length match returns them before the NFQUEUE rule.
//! - `--queue-bypass`: with no agent bound to the queue (crashed, killed), the
//!   kernel passes the traffic — fail-open for free.
//! - The queue is long (65536) and fails open when full, so an overflow
//!   bypasses coordination rather than dropping. Held packets still belong to
//!   their sockets, so a local sender blocks on its send buffer, as behind a
//!   paused NIC.
//! - Rules live in one chain, `XCO-Q<queue>`, installed atomically with
//!   `iptables-restore --noflush` (one call at start, a few at exit: no
//!   per-packet or per-directive shell-out) and removed on exit; a chain left
//!   by a crashed run is removed before installing.

use super::gate::{parse_ipv4, PacketGate, PacketInfo};
use crate::config::Prefix;
use nfq::{Queue, Verdict};
use std::io::Write;
use std::net::SocketAddr;
use std::os::fd::{BorrowedFd, RawFd};
use std::process::{Command, Stdio};

/// Bytes of each packet copied to the agent: the IPv4 header's fixed part and some.
const COPY_BYTES: u16 = 64;
/// Kernel queue length.
const QUEUE_MAXLEN: u32 = 65536;

/// The NFQUEUE backend.
pub struct NfQueueGate {
    queue: Queue,
    fd: RawFd,
    num: u16,
    chain: String,
    installed: bool,
    /// A chain of this queue's name was found (left by a crashed run) and removed before installing.
    pub removed_stale: bool,
}

/// What to intercept.
pub struct Intercept<'a> {
    /// Destinations to coordinate (other hosts' addresses and guest prefixes).
    pub dests: &'a [Prefix],
    /// Packets of at most this many IP bytes bypass.
    pub bypass_bytes: u32,
    /// The controller's address (its traffic always bypasses).
    pub controller: SocketAddr,
}

fn iptables(args: &[&str]) -> Result<(), String> {
    let out = Command::new("iptables")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run iptables: {e} (install the iptables package)"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "iptables {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Remove `chain` and its jumps; true if there was anything to remove.
fn remove_chain(chain: &str) -> bool {
    let mut found = false;
    for hook in ["OUTPUT", "FORWARD"] {
        while iptables(&["-w", "-D", hook, "-j", chain]).is_ok() {
            found = true;
        }
    }
    found |= iptables(&["-w", "-F", chain]).is_ok();
    found |= iptables(&["-w", "-X", chain]).is_ok();
    found
}

/// socket(2) returns the lowest free descriptor (POSIX); nfq 0.2 does not
/// expose its netlink socket, so find it that way and check it is one.
fn open_queue() -> Result<(Queue, RawFd), String> {
    let probe = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if probe < 0 {
        return Err(format!("open /dev/null: {}", std::io::Error::last_os_error()));
    }
    unsafe { libc::close(probe) };
    let queue =
        Queue::open().map_err(|e| format!("cannot open a netfilter queue socket: {e} (root needed)"))?;
    let opt = |name| {
        let mut v: libc::c_int = -1;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        let r = unsafe {
            libc::getsockopt(
                probe,
                libc::SOL_SOCKET,
                name,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if r == 0 {
            v
        } else {
            -1
        }
    };
    if opt(libc::SO_DOMAIN) != libc::AF_NETLINK || opt(libc::SO_PROTOCOL) != libc::NETLINK_NETFILTER {
        return Err("could not locate the netfilter queue socket (another thread opened files?)".into());
    }
    Ok((queue, probe))
}

impl NfQueueGate {
    /// Bind queue `num` and install the rules that feed it.
    pub fn install(num: u16, what: &Intercept<'_>) -> Result<NfQueueGate, String> {
        let (mut queue, fd) = open_queue()?;
        let e = |what: &str, err: std::io::Error| format!("netfilter queue {num}: {what}: {err}");
        queue
            .bind(num)
            .map_err(|x| e("bind (is another agent using this queue?)", x))?;
        queue
            .set_copy_range(num, COPY_BYTES)
            .map_err(|x| e("copy range", x))?;
        queue
            .set_queue_max_len(num, QUEUE_MAXLEN)
            .map_err(|x| e("queue length", x))?;
        queue
            .set_fail_open(num, true)
            .map_err(|x| e("fail-open flag", x))?;
        queue.set_recv_gso(num, true).map_err(|x| e("GSO flag", x))?;
        queue.set_nonblocking(true);
        let chain = format!("XCO-Q{num}");
        let removed_stale = remove_chain(&chain); // left over from a crashed run
        let mut rules = format!("*filter\n:{chain} - [0:0]\n");
        let c = what.controller;
        rules += &format!("-A {chain} -p udp -d {} --dport {} -j RETURN\n", c.ip(), c.port());
        rules += &format!("-A {chain} -p udp -s {} --sport {} -j RETURN\n", c.ip(), c.port());
        rules += &format!(
            "-A {chain} -m length --length 0:{} -j RETURN\n",
            what.bypass_bytes
        );
        for p in what.dests {
            rules += &format!("-A {chain} -d {p} -j NFQUEUE --queue-num {num} --queue-bypass\n");
        }
        rules += &format!("-I OUTPUT 1 -j {chain}\n-I FORWARD 1 -j {chain}\nCOMMIT\n");
        let mut child = Command::new("iptables-restore")
            .args(["-w", "--noflush"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run iptables-restore: {e} (install the iptables package)"))?;
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(rules.as_bytes())
            .map_err(|e| e.to_string())?;
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "iptables-restore: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(NfQueueGate {
            queue,
            fd,
            num,
            chain,
            installed: true,
            removed_stale,
        })
    }
}

impl PacketGate for NfQueueGate {
    type Packet = nfq::Message;

    fn fd(&self) -> BorrowedFd<'_> {
        // valid for the life of `self.queue`, which owns it
        unsafe { BorrowedFd::borrow_raw(self.fd) }
    }

    fn recv(&mut self) -> std::io::Result<Option<(nfq::Message, PacketInfo)>> {
        match self.queue.recv() {
            Ok(m) => {
                let info = parse_ipv4(m.get_payload(), m.get_original_len());
                Ok(Some((m, info)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn release(&mut self, mut p: nfq::Message) -> std::io::Result<()> {
        p.set_verdict(Verdict::Accept);
        self.queue.verdict(p)
    }

    fn uninstall(&mut self) -> Result<(), String> {
        if self.installed {
            self.installed = false;
            let _ = remove_chain(&self.chain);
            let _ = self.queue.unbind(self.num);
        }
        Ok(())
    }
}

impl Drop for NfQueueGate {
    fn drop(&mut self) {
        let _ = self.uninstall();
    }
}
