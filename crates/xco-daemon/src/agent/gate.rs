//! How an agent holds and releases a host's outgoing packets.
//!
//! The agent's logic only needs three things from the mechanism: packets to
//! coordinate arrive one at a time with their destination and size, each can
//! be released later (in any order across destinations), and everything
//! installed can be removed. NFQUEUE with deferred verdicts is the default
//! backend ([`super::nfqueue`]); a tc-BPF program stamping departure times
//! (EDT, with the fq qdisc) would be a faster one where the kernel has fq.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::BorrowedFd;

/// What the agent needs to know of an intercepted packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketInfo {
    /// IP destination, IPv4 or IPv6 (`None`: neither, or truncated; released at once).
    pub dst: Option<IpAddr>,
    /// IP packet length, bytes (a GSO super-packet counts whole).
    pub ip_bytes: u32,
}

/// Counters of an interception mechanism (zero where it has no such thing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateCounters {
    /// Verdicts the kernel refused (a verdict for a packet it no longer holds).
    pub verdict_errors: u64,
    /// Batch verdict messages sent (each accepts a run of packets).
    pub batch_verdicts: u64,
    /// Single verdict messages sent.
    pub single_verdicts: u64,
    /// System calls that read packets.
    pub recv_calls: u64,
    /// System calls that sent verdicts.
    pub send_calls: u64,
    /// Packets intercepted whole as GSO packets (several segments on the wire each).
    pub gso_packets: u64,
    /// Packets the kernel passed without asking the agent (its socket was full: fail-open).
    pub kernel_bypassed: u64,
    /// Packets the kernel dropped at the queue (full without fail-open, or undeliverable).
    pub kernel_dropped: u64,
    /// Packets awaiting a verdict in the kernel now (held, and on their way to the agent).
    pub kernel_queued: u64,
    /// At most this many may await a verdict; beyond it the kernel passes packets (fail-open).
    pub kernel_queue_max: u64,
}

/// A packet interception mechanism.
pub trait PacketGate {
    /// A held packet.
    type Packet;
    /// Descriptor that becomes readable when packets wait.
    fn fd(&self) -> BorrowedFd<'_>;
    /// The next intercepted packet (`Ok(None)`: none waiting).
    fn recv(&mut self) -> std::io::Result<Option<(Self::Packet, PacketInfo)>>;
    /// Let a packet continue on its way: at once, or at the latest at the next
    /// [`flush`](Self::flush) (a mechanism may batch its verdicts).
    fn release(&mut self, p: Self::Packet) -> std::io::Result<()>;
    /// Complete every release so far (call before waiting for events).
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    /// The mechanism's counters.
    fn counters(&self) -> GateCounters {
        GateCounters::default()
    }
    /// The watchdog released the host while the agent was hung: every packet up to
    /// kernel id `released_upto` has gone, and new ones pass without asking. Forget
    /// the packets the gate knew and hold new ones again.
    fn retake(&mut self, released_upto: u32) -> std::io::Result<()> {
        let _ = released_upto;
        Ok(())
    }
    /// Remove everything the gate installed (idempotent).
    fn uninstall(&mut self) -> Result<(), String>;
}

/// IP destination (IPv4 or IPv6) and total length of a packet starting at its IP header.
pub fn parse_ip(head: &[u8], orig_len: usize) -> PacketInfo {
    let dst = match head.first().map(|b| b >> 4) {
        Some(4) if head.len() >= 20 => {
            Some(IpAddr::V4(Ipv4Addr::new(head[16], head[17], head[18], head[19])))
        }
        Some(6) if head.len() >= 40 => {
            let mut a = [0u8; 16];
            a.copy_from_slice(&head[24..40]);
            Some(IpAddr::V6(Ipv6Addr::from(a)))
        }
        _ => None,
    };
    PacketInfo {
        dst,
        ip_bytes: orig_len.min(u32::MAX as usize) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_destination_of_ipv4_and_ipv6() {
        let mut h = [0u8; 40];
        h[0] = 0x45;
        h[16..20].copy_from_slice(&[10, 0, 0, 7]);
        assert_eq!(
            parse_ip(&h, 1500).dst,
            Some(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7)))
        );
        assert_eq!(parse_ip(&h[..19], 1500).dst, None, "truncated");
        h[0] = 0x60;
        let fe80: Ipv6Addr = "fe80::1:2".parse().unwrap();
        h[24..40].copy_from_slice(&fe80.octets());
        assert_eq!(parse_ip(&h, 1500).dst, Some(IpAddr::V6(fe80)));
        assert_eq!(parse_ip(&h[..39], 1500).dst, None, "truncated IPv6");
        h[0] = 0x50;
        assert_eq!(parse_ip(&h, 1500).dst, None, "neither");
        assert_eq!(parse_ip(&[], 0).dst, None);
    }

    #[test]
    fn any_prefix_of_any_header_parses_without_panicking() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            let mut h = [0u8; 64];
            for b in h.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            for n in 0..=h.len() {
                let p = parse_ip(&h[..n], n);
                assert_eq!(p.ip_bytes as usize, n);
            }
        }
    }
}
