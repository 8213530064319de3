//! The host's NIC as the agent's coordinator sees it: a model of when the
//! NIC will have sent what was released (the kernel's queue is not visible
//! from here), and the gate that hands released packets back to the kernel.
//!
//! A packet the agent sees may be many frames on the wire: a TCP GSO packet
//! (up to 64 KB, cut into segments at the device) or a UDP datagram (IP
//! fragments it after the agent's hook, so the agent only ever sees it
//! whole); [`frames`] gives the coordinator its frames, so the shared
//! slice-end rule (`xco_core::coord::HostCoordinator::pump`: the last frame
//! must start before the slice ends, also on an idle NIC) holds it back
//! rather than let it run into the next sender's slice.

use super::gate::PacketGate;
use super::AgentStats;
use std::time::Instant;
use xco_core::coord::Egress;
use xco_core::{Dur, Time};

/// Bytes on the wire of an IP packet of `ip_bytes` (Ethernet header per
/// 1500-byte fragment/segment), and of them those before its last frame starts.
pub(super) fn frames(ip_bytes: u32) -> (u64, u64) {
    let frames = (ip_bytes as u64).div_ceil(1500).max(1);
    let wire = ip_bytes as u64 + 14 * frames;
    (wire, wire - wire.min(1514))
}

/// A held packet: the gate's handle, its destination host, when it was intercepted.
pub(super) type Held<P> = (P, u32, Time);

/// The host's NIC as the coordinator sees it: a model of when it will have
/// sent everything released so far (the kernel's queue is not visible from
/// here), and the gate that hands packets to the kernel.
pub(super) struct Nic<'a, G: PacketGate> {
    /// Hands released packets back to the kernel.
    pub gate: &'a mut G,
    /// The host's link rate.
    pub nic_bps: u64,
    /// When the NIC will have sent everything released so far.
    pub free_at: &'a mut Time,
    /// The agent's counters of released traffic.
    pub stats: &'a mut AgentStats,
    /// Hand the next release's verdict to the kernel at once (the first packet a
    /// directive lets go does not wait for the others' verdicts), and note when.
    pub first_at: Option<Option<Instant>>,
}

impl<G: PacketGate> Egress<Held<G::Packet>> for Nic<'_, G> {
    fn free_at(&self, now: Time) -> Time {
        (*self.free_at).max(now)
    }
    fn rate_bps(&self) -> u64 {
        self.nic_bps
    }
    fn has_room(&mut self, _now: Time, _bytes: u32) -> bool {
        true
    }
    fn send(&mut self, now: Time, (p, dst, at): Held<G::Packet>, bytes: u32, wire_bytes: u64) {
        *self.free_at = self.free_at(now) + Dur::serialization(wire_bytes, self.nic_bps);
        if self.gate.release(p).is_err() {
            self.stats.release_errors += 1;
        }
        if self.first_at == Some(None) {
            if self.gate.flush().is_err() {
                self.stats.release_errors += 1;
            }
            self.first_at = Some(Some(Instant::now()));
        }
        self.stats.released_bytes += bytes as u64;
        let d = &mut self.stats.per_dest[dst as usize];
        d.released_pkts += 1;
        d.released_bytes += bytes as u64;
        self.stats.verdict_latency.record(now.saturating_since(at));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::gate::PacketInfo;
    use crate::agent::DestStats;
    use std::os::fd::BorrowedFd;
    use xco_core::coord::{CoordConfig, HostCoordinator, Offer};
    use xco_core::sched::DirectiveKind;

    /// A gate that records the packets it released.
    #[derive(Default)]
    struct Recorder {
        released: Vec<u32>,
    }

    impl PacketGate for Recorder {
        type Packet = u32;
        fn fd(&self) -> BorrowedFd<'_> {
            // never polled here
            unsafe { BorrowedFd::borrow_raw(0) }
        }
        fn recv(&mut self) -> std::io::Result<Option<(u32, PacketInfo)>> {
            Ok(None)
        }
        fn release(&mut self, p: u32) -> std::io::Result<()> {
            self.released.push(p);
            Ok(())
        }
        fn uninstall(&mut self) -> Result<(), String> {
            Ok(())
        }
    }

    const DATAGRAM: u32 = 65_535; // 45 fragments, 5.3 ms to its last frame at 100 Mbit/s
    const MTU: u32 = 1500;

    /// A host at 100 Mbit/s with a coordinator holding `packets` for host 1.
    struct Host {
        core: HostCoordinator<Held<u32>>,
        gate: Recorder,
        free_at: Time,
        stats: AgentStats,
    }

    fn host_holding(packets: &[u32]) -> Host {
        let cfg = CoordConfig {
            giveback_hysteresis: None,
            fail_open_after: Dur::from_ms(1000),
            report_interval: Dur::from_ms(1000),
            rate_burst: xco_core::coord::RateBurst::PACER,
            on_demand: false,
        };
        let mut core = HostCoordinator::new(cfg, u64::MAX, Time::ZERO);
        core.start(Time::ZERO);
        for (id, &bytes) in packets.iter().enumerate() {
            let id = id as u32;
            let held = core.offer(Time::ZERO, 1, (id, 1, Time::ZERO), bytes, frames(bytes), false);
            assert!(matches!(held, Offer::Held));
        }
        Host {
            core,
            gate: Recorder::default(),
            free_at: Time::ZERO,
            stats: AgentStats {
                per_dest: vec![DestStats::default(); 2],
                ..Default::default()
            },
        }
    }

    impl Host {
        /// A slice of `len` to host 1 opens at `at`; release what it allows.
        fn slice(&mut self, epoch: u64, at: Time, len: Dur) {
            let kind = DirectiveKind::Slice {
                dest: Some(1),
                len,
                rate_bps: None,
            };
            assert!(self.core.apply(at, epoch, &kind));
            self.pump(at);
        }

        fn pump(&mut self, now: Time) {
            let mut nic = Nic {
                gate: &mut self.gate,
                nic_bps: 100_000_000,
                free_at: &mut self.free_at,
                stats: &mut self.stats,
                first_at: None,
            };
            self.core.pump(now, &mut nic);
        }
    }

    fn ms(x: f64) -> Time {
        Time::ZERO + Dur::from_us((x * 1000.0) as u64)
    }

    #[test]
    fn a_datagram_that_would_spill_into_the_next_slice_waits_even_on_an_idle_nic() {
        let ten = Dur::from_ms(10);
        let mut h = host_holding(&[DATAGRAM, DATAGRAM, MTU]);
        h.slice(1, ms(0.0), ten);
        assert_eq!(
            h.gate.released,
            vec![0],
            "the first ends at 5.3 ms; the second would at 10.7"
        );
        // the NIC has sent the first: idle, 4.5 ms of the slice left, the datagram needs 5.3
        h.pump(ms(5.5));
        assert_eq!(
            h.gate.released,
            vec![0],
            "held for the next slice, not spilled into another's"
        );
        assert_eq!(h.core.held().count(), 2);
        h.slice(2, ms(50.0), ten);
        assert_eq!(
            h.gate.released,
            vec![0, 1, 2],
            "the next slice takes it, and the frame behind it"
        );
    }

    #[test]
    fn single_frames_go_until_the_slice_ends() {
        let ten = Dur::from_ms(10);
        let mut h = host_holding(&[MTU, MTU]);
        h.slice(1, ms(0.0), ten);
        assert_eq!(h.gate.released, vec![0, 1]);
        let mut h = host_holding(&[MTU]);
        h.slice(1, ms(0.0), ten);
        h.pump(ms(9.9));
        assert_eq!(h.gate.released, vec![0]);
    }

    #[test]
    fn a_packet_longer_than_a_slice_goes_alone_on_an_idle_nic() {
        // 2-ms slices: a 64-KB datagram (5.3 ms) could never fit one; it goes, the next waits
        let two = Dur::from_ms(2);
        let mut h = host_holding(&[DATAGRAM, DATAGRAM]);
        h.slice(1, ms(0.0), two);
        assert_eq!(h.gate.released, vec![0]);
        h.slice(2, ms(10.0), two);
        assert_eq!(h.gate.released, vec![0, 1]);
    }

    #[test]
    fn counts_the_frames_of_a_packet() {
        assert_eq!(frames(1500), (1514, 0));
        assert_eq!(frames(60), (74, 0));
        assert_eq!(frames(3000), (3028, 1514));
        assert_eq!(frames(DATAGRAM), (65_535 + 44 * 14, 65_535 + 44 * 14 - 1514));
    }
}
