//! The NFQUEUE gate: iptables and ip6tables send the host's coordinated
//! traffic (OUTPUT for its own, FORWARD for its guests'), IPv4 and IPv6 alike,
//! to one netfilter queue; the agent holds each packet's verdict until the
//! directive allows it, then accepts it. Nothing is ever dropped by the agent.
//!
//! - One gate for everything sent to a coordinated destination: the IPv4
//!   addresses and guest prefixes of the other hosts, and their IPv6
//!   addresses and prefixes (`addr6`, link-local ones too) — the same rules
//!   in both families.
//! - Control traffic passes by its socket mark, never by its address: the
//!   daemons mark their control sockets (`SO_MARK`, `control.control_mark`;
//!   setting a mark needs `CAP_NET_ADMIN`, and a packet crossing from a
//!   guest's namespace or VM arrives unmarked), so a guest that spoofs the
//!   controller's address and port is held like any other traffic.
//! - Small packets (ACKs, pings) pass uncounted only within a token bucket:
//!   at most `control.bypass_pps` packets of at most `bypass_bytes` per
//!   second (and family), a burst of 10 ms of them; beyond it they are
//!   queued and counted against the directive like any other packet. A flood
//!   of small packets gets at most `bypass_pps` × `bypass_bytes` past the gate.
//! - `--queue-bypass`: with no agent bound to the queue (crashed, killed), the
//!   kernel passes the traffic — fail-open for free.
//! - GSO packets are queued whole (`NFQA_CFG_F_GSO`): a 64 KB TCP segment is
//!   one message and one verdict, and counts its real length.
//! - The queue fails open (`NFQA_CFG_F_FAIL_OPEN`): when it is full, or the
//!   agent's socket buffer is, the kernel passes the packet rather than
//!   dropping it. A packet passed because the socket was full leaves a gap in
//!   the packet ids, counted as `kernel_bypassed`; the kernel's own drop
//!   counters (`/proc/net/netfilter/nfnetlink_queue`) are shown too. Held
//!   packets still belong to their sockets, so a local sender blocks on its
//!   send buffer, as behind a paused NIC.
//! - Sizes: [`QUEUE_MAXLEN`] packets may await a verdict (everything held plus
//!   what is on its way to the agent): 262,144, about 0.3 s of 1500-byte packets
//!   at 10 Gbit/s (a local TCP sender holds at most its send buffer, 4 MB by
//!   default, about 2,800 such packets); the socket buffer [`RCVBUF_BYTES`]
//!   (32 MiB) holds what arrived while the agent was busy: a queued message
//!   takes about 1 KB of it, so some 30,000 packets, 40 ms of 1500-byte packets
//!   at 10 Gbit/s.
//! - Verdicts are batched ([`super::verdict`]) and sent together, packets read
//!   many per system call ([`super::nfnetlink`]).
//! - Rules live in one chain, `XCO-Q<queue>`, installed atomically with
//!   `iptables-restore --noflush` (one call at start, a few at exit: no
//!   per-packet or per-directive shell-out) and removed on exit; a chain left
//!   by a crashed run is removed before installing.

use super::gate::{parse_ip, GateCounters, PacketGate, PacketInfo};
use super::nfnetlink::{Config, Incoming, NfqSocket, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_GSO};
use super::verdict::{Verdict, VerdictBatcher};
use crate::config::{Prefix, Prefix6};
use std::io::Write;
use std::os::fd::BorrowedFd;
use std::process::{Command, Stdio};

/// Bytes of each packet copied to the agent: the IPv4 header's fixed part and some.
const COPY_BYTES: u32 = 64;
/// Packets that may await a verdict in the kernel (see the module doc).
pub const QUEUE_MAXLEN: u32 = 262_144;
/// The queue socket's receive buffer, bytes (see the module doc).
pub const RCVBUF_BYTES: usize = 32 << 20;
/// Releases that wait for a flush at most: more are sent at once.
const FLUSH_AT: usize = 1024;

/// The NFQUEUE backend.
pub struct NfQueueGate {
    sock: NfqSocket,
    batcher: VerdictBatcher,
    num: u16,
    verdict_errors: u64,
    batch_verdicts: u64,
    single_verdicts: u64,
    gso_packets: u64,
    chain: String,
    installed: bool,
    /// The watchdog accepted every packet up to this id (the agent was hung): messages
    /// of those still unread are skipped, they are no longer in the kernel's queue.
    skip_upto: Option<u32>,
    /// A chain of this queue's name was found (left by a crashed run) and removed before installing.
    pub removed_stale: bool,
}

/// What to intercept.
pub struct Intercept<'a> {
    /// IPv4 destinations to coordinate (other hosts' addresses and guest prefixes).
    pub dests: &'a [Prefix],
    /// IPv6 destinations to coordinate (other hosts' `addr6`).
    pub dests6: &'a [Prefix6],
    /// Packets of at most this many IP bytes may bypass ...
    pub bypass_bytes: u32,
    /// ... this many per second and family at most (0: none).
    pub bypass_pps: u32,
    /// The mark of the control sockets: their traffic always passes.
    pub control_mark: u32,
}

/// The token bucket's burst: 10 ms of `pps`, at least 8 packets.
pub fn bypass_burst(pps: u32) -> u32 {
    (pps / 100).max(8)
}

/// The rules of `chain` in one family's `iptables-restore` syntax: control by mark, the
/// small-packet bucket (`hashlimit` named `name`), then the queue for each destination.
fn chain_rules(chain: &str, num: u16, what: &Intercept<'_>, dests: &[String], name: &str) -> String {
    let mut rules = format!("*filter\n:{chain} - [0:0]\n");
    rules += &format!("-A {chain} -m mark --mark {:#x} -j RETURN\n", what.control_mark);
    if what.bypass_pps > 0 {
        rules += &format!(
            "-A {chain} -m length --length 0:{} -m hashlimit --hashlimit-upto {}/sec \
             --hashlimit-burst {} --hashlimit-name {name} -j RETURN\n",
            what.bypass_bytes,
            what.bypass_pps,
            bypass_burst(what.bypass_pps)
        );
    }
    for d in dests {
        rules += &format!("-A {chain} -d {d} -j NFQUEUE --queue-num {num} --queue-bypass\n");
    }
    rules += &format!("-I OUTPUT 1 -j {chain}\n-I FORWARD 1 -j {chain}\nCOMMIT\n");
    rules
}

fn restore(tool: &str, rules: &str) -> Result<(), String> {
    let mut child = Command::new(tool)
        .args(["-w", "--noflush"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {tool}: {e} (install the iptables package)"))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(rules.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{tool}: {}", String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn iptables(tool: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(tool)
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

/// Remove `chain` and its jumps, IPv4 and IPv6; true if there was anything to remove.
pub(super) fn remove_chain(chain: &str) -> bool {
    let mut found = false;
    for tool in ["iptables", "ip6tables"] {
        for hook in ["OUTPUT", "FORWARD"] {
            while iptables(tool, &["-w", "-D", hook, "-j", chain]).is_ok() {
                found = true;
            }
        }
        found |= iptables(tool, &["-w", "-F", chain]).is_ok();
        found |= iptables(tool, &["-w", "-X", chain]).is_ok();
    }
    found
}

impl NfQueueGate {
    /// Bind queue `num` and install the rules that feed it.
    pub fn install(num: u16, what: &Intercept<'_>) -> Result<NfQueueGate, String> {
        let e = |what: &str, err: std::io::Error| format!("netfilter queue {num}: {what}: {err}");
        let mut sock = NfqSocket::open(RCVBUF_BYTES)
            .map_err(|x| e("cannot open a netfilter queue socket (root needed)", x))?;
        sock.configure(num, Config::Bind)
            .map_err(|x| e("bind (is another agent using this queue?)", x))?;
        sock.configure(num, Config::CopyRange(COPY_BYTES))
            .map_err(|x| e("copy range", x))?;
        sock.configure(num, Config::MaxLen(QUEUE_MAXLEN))
            .map_err(|x| e("queue length", x))?;
        let flags = NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO;
        sock.configure(num, Config::Flags { flags, mask: flags })
            .map_err(|x| e("fail-open and GSO flags", x))?;
        let chain = format!("XCO-Q{num}");
        let removed_stale = remove_chain(&chain); // left over from a crashed run
        let v4: Vec<String> = what.dests.iter().map(|p| p.to_string()).collect();
        let v6: Vec<String> = what.dests6.iter().map(|p| p.to_string()).collect();
        restore(
            "iptables-restore",
            &chain_rules(&chain, num, what, &v4, &format!("xco4-q{num}")),
        )?;
        if let Err(e) = restore(
            "ip6tables-restore",
            &chain_rules(&chain, num, what, &v6, &format!("xco6-q{num}")),
        ) {
            remove_chain(&chain);
            return Err(e);
        }
        Ok(NfQueueGate {
            sock,
            batcher: VerdictBatcher::new(),
            num,
            verdict_errors: 0,
            batch_verdicts: 0,
            single_verdicts: 0,
            gso_packets: 0,
            chain,
            installed: true,
            skip_upto: None,
            removed_stale,
        })
    }
}

impl NfQueueGate {
    /// The receive buffer the kernel granted the queue socket, bytes.
    pub fn rcvbuf_bytes(&self) -> usize {
        self.sock.rcvbuf_bytes()
    }

    /// The kernel's counters of this queue: packets awaiting a verdict, and drops
    /// (`queue_dropped + queue_user_dropped`) from `/proc/net/netfilter/nfnetlink_queue`
    /// (zeros if unreadable).
    fn kernel_queue(&self) -> KernelQueue {
        read_kernel_queue(self.num).unwrap_or_default()
    }
}

/// A queue's line of `/proc/net/netfilter/nfnetlink_queue`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct KernelQueue {
    /// The netlink port id of the socket bound to it.
    pub portid: u32,
    /// Packets awaiting a verdict.
    pub queued: u64,
    /// Packets dropped (queue full without fail-open, or undeliverable).
    pub dropped: u64,
    /// The id of the last packet queued (ids count up from it).
    pub id_sequence: u32,
}

/// Queue `num`'s line of this network namespace's `/proc/net/netfilter/nfnetlink_queue`
/// (`None`: no such queue is bound, or the file cannot be read).
pub(super) fn read_kernel_queue(num: u16) -> Option<KernelQueue> {
    let text = std::fs::read_to_string("/proc/net/netfilter/nfnetlink_queue").ok()?;
    kernel_queue(&text, num)
}

/// Queue `num`'s counters in the text of `/proc/net/netfilter/nfnetlink_queue` (fields: queue,
/// peer port id, waiting, copy mode, copy range, queue_dropped, queue_user_dropped,
/// id_sequence, 1).
fn kernel_queue(text: &str, num: u16) -> Option<KernelQueue> {
    let field = |f: &[&str], i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() >= 7 && f[0].parse() == Ok(num))
        .map(|f| KernelQueue {
            portid: field(&f, 1) as u32,
            queued: field(&f, 2),
            dropped: field(&f, 5) + field(&f, 6),
            id_sequence: field(&f, 7) as u32,
        })
}

impl PacketGate for NfQueueGate {
    /// The kernel's packet id.
    type Packet = u32;

    fn fd(&self) -> BorrowedFd<'_> {
        // valid for the life of `self.sock`, which owns it
        unsafe { BorrowedFd::borrow_raw(self.sock.raw_fd()) }
    }

    fn recv(&mut self) -> std::io::Result<Option<(u32, PacketInfo)>> {
        loop {
            match self.sock.next()? {
                None => return Ok(None),
                Some(Incoming::Packet(p)) => {
                    if let Some(upto) = self.skip_upto {
                        if !super::verdict::after(p.id, upto) {
                            continue; // the watchdog accepted it while the agent was hung
                        }
                        self.skip_upto = None;
                    }
                    self.batcher.received(p.id);
                    self.gso_packets += u64::from(p.gso);
                    return Ok(Some((p.id, parse_ip(p.head, p.len as usize))));
                }
                Some(Incoming::Error(e)) if e != 0 => self.verdict_errors += 1,
                Some(_) => {}
            }
        }
    }

    fn release(&mut self, id: u32) -> std::io::Result<()> {
        self.batcher.release(id);
        if self.batcher.pending() >= FLUSH_AT {
            return self.flush();
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let (sock, num) = (&mut self.sock, self.num);
        let (mut batch, mut single, mut err) = (0, 0, None);
        self.batcher.flush(|v| {
            match v {
                Verdict::UpTo(_) => batch += 1,
                Verdict::One(_) => single += 1,
            }
            if let Err(e) = sock.push_verdict(num, v) {
                err = Some(e);
            }
        });
        self.batch_verdicts += batch;
        self.single_verdicts += single;
        let r = self.sock.send_verdicts();
        match err {
            Some(e) => Err(e),
            None => r,
        }
    }

    fn counters(&self) -> GateCounters {
        let q = self.kernel_queue();
        GateCounters {
            verdict_errors: self.verdict_errors,
            batch_verdicts: self.batch_verdicts,
            single_verdicts: self.single_verdicts,
            gso_packets: self.gso_packets,
            recv_calls: self.sock.recv_calls,
            send_calls: self.sock.send_calls,
            kernel_bypassed: self.batcher.gaps(),
            kernel_dropped: q.dropped,
            kernel_queued: q.queued,
            kernel_queue_max: u64::from(QUEUE_MAXLEN),
        }
    }

    fn retake(&mut self, released_upto: u32) -> std::io::Result<()> {
        // every packet the agent had (held, or released with its verdict not yet sent)
        // and every one still unread has been accepted: forget them all
        self.batcher = VerdictBatcher::new();
        self.sock.discard_verdicts();
        self.skip_upto = Some(released_upto);
        // new packets queue again (the watchdog set the queue's length to 0: passed)
        self.sock.send_config(self.num, Config::MaxLen(QUEUE_MAXLEN))
    }

    fn uninstall(&mut self) -> Result<(), String> {
        if self.installed {
            self.installed = false;
            let _ = remove_chain(&self.chain);
            // packets queued before the rules went: accept them (unbinding would drop them)
            while let Ok(Some((id, _))) = self.recv() {
                self.batcher.release(id);
            }
            let _ = self.flush();
            let _ = self.sock.configure(self.num, Config::Unbind);
        }
        Ok(())
    }
}

impl Drop for NfQueueGate {
    fn drop(&mut self) {
        let _ = self.uninstall();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_passes_by_mark_and_small_packets_only_within_the_bucket() {
        let what = Intercept {
            dests: &[],
            dests6: &[],
            bypass_bytes: 128,
            bypass_pps: 5000,
            control_mark: 0x5843_0000,
        };
        let r = chain_rules("XCO-Q7", 7, &what, &["fe80::2/128".into()], "xco6-q7");
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines[2], "-A XCO-Q7 -m mark --mark 0x58430000 -j RETURN");
        assert_eq!(
            lines[3],
            "-A XCO-Q7 -m length --length 0:128 -m hashlimit --hashlimit-upto 5000/sec \
             --hashlimit-burst 50 --hashlimit-name xco6-q7 -j RETURN"
        );
        assert_eq!(
            lines[4],
            "-A XCO-Q7 -d fe80::2/128 -j NFQUEUE --queue-num 7 --queue-bypass"
        );
        // no rule names an address to let through: nothing a sender can spoof
        assert!(!r.contains(" -s "), "{r}");
        let none = chain_rules(
            "XCO-Q7",
            7,
            &Intercept {
                bypass_pps: 0,
                ..what
            },
            &[],
            "x",
        );
        assert!(
            !none.contains("length"),
            "bypass_pps 0: every small packet is counted\n{none}"
        );
        assert_eq!(bypass_burst(100), 8);
        assert_eq!(bypass_burst(1_000_000), 10_000);
    }

    #[test]
    fn reads_the_kernels_counters_of_its_own_queue() {
        let text = "    3  12345     0 2    64     5     1       99  1\n    7  23456     4 2    64     0     2     1000  1\n";
        let q = |portid, queued, dropped, id_sequence| {
            Some(KernelQueue {
                portid,
                queued,
                dropped,
                id_sequence,
            })
        };
        assert_eq!(kernel_queue(text, 7), q(23456, 4, 2, 1000));
        assert_eq!(kernel_queue(text, 3), q(12345, 0, 6, 99));
        assert_eq!(kernel_queue(text, 9), None);
        assert_eq!(kernel_queue("", 7), None);
    }
}
