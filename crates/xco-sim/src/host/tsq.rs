//! TCP Small Queues: how many bytes one TCP socket may have in its host.
//!
//! Linux (`net/ipv4/tcp_output.c`, `tcp_small_queue_check`) charges every
//! skb a socket sends to it (`sk_wmem_alloc`) until the driver's transmit
//! completion frees it, i.e. while it waits in the qdisc or the NIC; the
//! socket stops sending while the charge exceeds
//! `max(2 x skb->truesize, sk_pacing_rate >> sk_pacing_shift)` capped at
//! `net.ipv4.tcp_limit_output_bytes` (1 MiB in current kernels, 256 KiB
//! from Linux 4.2), and
//! `tcp_tsq_handler` resumes it when its packets leave. `sk_pacing_rate` is
//! kept up to date whether or not the socket paces (`tcp_update_pacing_rate`:
//! 200% (slow start) or 120% of `cwnd x mss / srtt`), and the default pacing
//! shift, 10, makes the second term about 1 ms of the rate.
//!
//! Here (`[host] tsq_limit_bytes`, 0: off, the old model) each TCP endpoint
//! on a host XCo does not coordinate has a charge list, a [`crate::host::sndbuf::SendBuffer`]:
//! every frame it hands to [`Stack::send`] (data, retransmissions, ACKs) is
//! charged with the time its host's NIC finishes sending it, and trimmed
//! lazily. Before a segment the endpoint asks [`Stack::tsq_hold`]; an answer
//! is the time enough of its frames have left the NIC, and the endpoint arms
//! its pacing timer for it (one pending event per throttled socket, nothing
//! scheduled per packet). We count frame bytes, not `truesize` (Linux's skb
//! overhead), and the coordinator queue of a coordinated host is not
//! counted: TSQ is not applied there (its per-destination queue bounds the
//! socket instead).

use crate::ctx::Ctx;
use crate::host::{Coordinator, Stack};
use crate::net::packet::{PktId, PktKind};
use crate::net::qdisc::PortMode;
use crate::tcp::pacing::RatePacer;
use xco_core::{Dur, Time};

/// Linux's `sk_pacing_shift` default: the limit holds `rate >> 10` bytes (~1 ms).
pub const PACING_SHIFT: u32 = 10;

/// The TSQ limit, bytes, of a socket whose next frame is `frame_bytes` and
/// whose pacing rate is `rate_bytes_per_s`, capped at `cap_bytes`.
#[inline]
pub fn limit_bytes(frame_bytes: u32, rate_bytes_per_s: u64, cap_bytes: u64) -> u64 {
    (2 * frame_bytes as u64)
        .max(rate_bytes_per_s >> PACING_SHIFT)
        .min(cap_bytes)
}

/// Linux's `sk_pacing_rate` from the window and SRTT (0 before an RTT sample).
pub fn pacing_rate_bytes_per_s(cwnd_bytes: u64, ssthresh_bytes: u64, srtt: Option<Dur>) -> u64 {
    let mut r = RatePacer::default();
    r.update(cwnd_bytes, ssthresh_bytes, srtt);
    r.rate_bytes_per_s
}

impl<C: Coordinator> Stack<C> {
    /// TSQ is on (`[host] tsq_limit_bytes` set): one load and a branch.
    #[inline(always)]
    pub fn tsq_on(&self) -> bool {
        self.hosts.settings.tsq_limit_bytes != 0
    }

    /// With TSQ on, `Some(t)`: TCP endpoint `ep` on `host` holds its limit
    /// in its host and may send its next frame of `frame_bytes` at `t`,
    /// when enough of its frames have left the NIC. `None`: send now.
    /// The caller checks [`Stack::tsq_on`] first (the packet path stays one branch).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn tsq_hold(
        &mut self,
        cx: &mut Ctx,
        host: u32,
        ep: u32,
        frame_bytes: u32,
        cwnd_bytes: u64,
        ssthresh_bytes: u64,
        srtt: Option<Dur>,
    ) -> Option<Time> {
        if !self.tsq_on() || self.xco.as_ref().is_some_and(|x| x.coordinates(host)) {
            return None;
        }
        let rate = pacing_rate_bytes_per_s(cwnd_bytes, ssthresh_bytes, srtt);
        let cap = self.hosts.settings.tsq_limit_bytes;
        let sock = self.hosts.tsq_socket(ep);
        sock.limit_bytes = limit_bytes(frame_bytes, rate, cap);
        sock.writable_at(cx.now)
    }

    /// With TSQ on: hand `pkt` to its host's NIC queue and, if it is a TCP
    /// packet, charge it to its sending endpoint until the NIC has sent it.
    #[inline(never)]
    pub fn tsq_send(&mut self, cx: &mut Ctx, pkt: PktId) {
        let p = &cx.net.pool[pkt];
        let (tcp, host, ep) = (p.kind == PktKind::Tcp, p.src, p.src_ep);
        let bytes = p.ip_bytes + cx.net.framing.frame_overhead_bytes;
        cx.net.host_send(cx.now, &mut cx.ev, pkt);
        if !tcp {
            return;
        }
        let pt = &cx.net.ports[cx.net.nodes[host as usize].nic as usize];
        let done = match pt.mode() {
            PortMode::Fifo => pt.busy_until.max(cx.now),
            // a scheduled NIC's departure is not known yet: not charged
            PortMode::Scheduled => return,
        };
        let sock = self.hosts.tsq_socket(ep);
        // trim what the NIC has sent: a socket that only ACKs is never
        // asked, and its list must not grow
        sock.charged_bytes(cx.now);
        sock.charge(done, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_two_frames_or_a_millisecond_of_the_rate_capped() {
        // no rate yet: two frames
        assert_eq!(limit_bytes(1538, 0, 1 << 20), 3076);
        // 125 MB/s (1 Gbit/s): rate >> 10 = 122,070 bytes (~1 ms)
        assert_eq!(limit_bytes(1538, 125_000_000, 1 << 20), 122_070);
        // capped by tcp_limit_output_bytes
        assert_eq!(limit_bytes(1538, 125_000_000, 65_536), 65_536);
    }

    #[test]
    fn the_pacing_rate_follows_linux_gains() {
        // cwnd 100,000 B, srtt 1 ms, slow start (200%): 200 MB/s
        let r = pacing_rate_bytes_per_s(100_000, u64::MAX, Some(Dur::from_us(1000)));
        assert_eq!(r, 200_000_000);
        // congestion avoidance (120%)
        let r = pacing_rate_bytes_per_s(100_000, 50_000, Some(Dur::from_us(1000)));
        assert_eq!(r, 120_000_000);
        assert_eq!(pacing_rate_bytes_per_s(100_000, 50_000, None), 0);
    }
}
