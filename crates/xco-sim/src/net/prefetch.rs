//! Cache warming for the packet arrivals that come next.
//!
//! A hop touches memory at places no hardware prefetcher can guess: the
//! arriving link's port, the packet at the head of its pipe, and the port
//! the packet's route names next. In a fabric whose ports and packets do
//! not fit the caches (a k = 24 fat-tree has 20,736 ports and a third of a
//! million packets in flight), each is a miss to memory, and the time per
//! hop grows with the network. The event queue knows which arrivals come
//! next, so the run loop asks for their memory a few events ahead, in
//! stages, each stage reading only what an earlier stage brought in:
//!
//! | events ahead | what is fetched | read to find it |
//! |---|---|---|
//! | [`FAR`] | the port's three hot lines and the packet | the event (it carries the packet's id) |
//! | [`MID`] | the pipe's head entry and the packet's next route entry | the port and packet (fetched at `FAR`) |
//! | [`NEXT`] | the next port's hot lines | the route entry (fetched at `MID`) |
//!
//! Near the end of the wheel bucket being popped the stages look into the
//! next bucket, whose events are not sorted yet: what they fetch there is
//! for an event that pops within that bucket, a few places off the stage's
//! distance (a k = 24 fabric's buckets hold about ten events, so without
//! this half the arrivals found nothing fetched at the first stage; with it
//! a k = 24 run took 0.83x the CPU time: docs/speed.md). Nothing is
//! fetched for other events. Prefetches change no state: results are
//! identical with and without them. The run loop turns them on only for networks larger than
//! the caches ([`Net::prefetch_pays`]): for a small one they are pure cost.

use super::Net;
use crate::engine::EventQueue;

/// Events ahead at which the arriving port's lines and the packet are fetched.
pub const FAR: usize = 4;
/// Events ahead at which the pipe's head and the packet's route entry are fetched.
pub const MID: usize = 2;
/// Events ahead (0: the next one) at which the packet's next port is fetched.
pub const NEXT: usize = 0;

/// Ports from which prefetching is on: a k = 12 fat-tree (2,592 ports) ran
/// in 0.89x the time with it, k = 16 (6,144) in 0.66x; at k = 8 (768 ports)
/// and below the gain was within this machine's noise, so small networks
/// (and the small benchmark workloads) run the plain loop (docs/speed.md).
pub const PREFETCH_MIN_PORTS: usize = 1024;

#[inline(always)]
fn touch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults, whatever the address,
    // and has no effect a program can observe but time.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl Net {
    /// True if this network is large enough for [`Net::prefetch_ahead`] to pay.
    pub fn prefetch_pays(&self) -> bool {
        self.ports.len() >= PREFETCH_MIN_PORTS
    }

    /// Warm the caches for the arrivals among the next events of `ev`.
    #[inline(always)]
    pub fn prefetch_ahead(&self, ev: &EventQueue) {
        if let Some((port, pkt)) = ev.arrival_ahead(FAR) {
            self.prefetch_port(port);
            if let Some(p) = self.pool.get(pkt) {
                touch(p);
            }
        }
        if let Some((port, pkt)) = ev.arrival_ahead(MID) {
            if let Some(head) = self.ports[port as usize].pipe.front() {
                touch(head);
            }
            if let Some(p) = self.pool.get(pkt) {
                if let Some(next) = self.routes.ports.get(p.route as usize + p.hop as usize + 1) {
                    touch(next);
                }
            }
        }
        if let Some((_, pkt)) = ev.arrival_ahead(NEXT) {
            if let Some(p) = self.pool.get(pkt) {
                if let Some(&next) = self.routes.ports.get(p.route as usize + p.hop as usize + 1) {
                    self.prefetch_port(next);
                }
            }
        }
    }

    /// Fetch the three hot cache lines of `port` (arrival, queues, counters).
    #[inline(always)]
    fn prefetch_port(&self, port: u32) {
        if let Some(pt) = self.ports.get(port as usize) {
            let base = pt as *const _ as *const u8;
            touch(base);
            touch(base.wrapping_add(64));
            touch(base.wrapping_add(128));
        }
    }
}
