//! Queue disciplines: the seam between a port and what its buffer does.
//!
//! A port runs in one of two modes (see [`PortMode`]):
//!
//! - **FIFO** — the fast path. An admitted packet is given its serialisation
//!   slot the moment it arrives (right after everything admitted before it),
//!   so the port needs no departure events. The discipline only decides at
//!   arrival: an [`ArrivalHook`]. Drop-tail is the built-in one and is a
//!   `match` arm of [`Qdisc`] (no virtual call); RED, ECN marking and PDN's
//!   drop notification are further arrival hooks.
//! - **Scheduled** — a real queue owned by the discipline (a [`Scheduler`]),
//!   and one pending departure event while the port is busy; at each
//!   departure the discipline picks the next packet. For disciplines that
//!   choose at departure: SFQ, DRR, priorities.
//!
//! Both modes call the arrival hook for *every* arrival, the ones that find
//! the port idle included (so an average can decay over idle time), with the
//! clock, the input the packet came by, the packet itself (mutable, to mark
//! it) and the backlog. The hook answers a [`Verdict`]; drops carry a
//! [`DropReason`], and [`Verdict::DropNotify`] asks the network to record a
//! [`DropNotice`](super::DropNotice) for a notification layer (PDN) to turn
//! into a message toward the sender — as in ns-3's `QueueDisc`, where the
//! discipline sees the whole packet item and reports drops with a reason.

use super::packet::{Packet, PktId};
use xco_core::Time;

/// Why a packet was dropped at a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full (drop-tail overflow).
    TailDrop,
    /// The discipline chose to drop (an early drop, an eviction from a long
    /// SFQ bucket) while the buffer may still have had room.
    Discipline,
}

/// What happens to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Queue it.
    Admit,
    /// Queue it and set the IP header's ECN field to CE (answer this only for
    /// ECN-capable packets: [`Packet::is_ect`]).
    AdmitMarked,
    /// Drop it.
    Drop(DropReason),
    /// Drop it and record a notice for the sender (PDN's hook).
    DropNotify(DropReason),
}

/// Where an arriving packet came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input {
    /// The port (link) the packet arrived by, [`Input::LOCAL_LINK`] if its own host sent it.
    pub link: u32,
    /// Position of that link among the node's inputs (0 for "local" at a host
    /// NIC): the index of per-input counters and per-input discipline state.
    pub index: u32,
}

impl Input {
    /// The `link` of a packet sent by the port's own host.
    pub const LOCAL_LINK: u32 = u32::MAX;
    /// The one input of a host NIC: its own host.
    pub const LOCAL: Input = Input {
        link: Input::LOCAL_LINK,
        index: 0,
    };

    /// True for a packet sent by the port's own host.
    pub fn is_local(&self) -> bool {
        self.link == Input::LOCAL_LINK
    }
}

/// What an arrival hook sees besides the packet.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    /// The clock.
    pub now: Time,
    /// The input the packet came by.
    pub input: Input,
    /// Frame bytes of the packet as stored in buffers.
    pub frame_bytes: u32,
    /// Bytes waiting at `now`, not counting a frame being serialised.
    pub backlog_bytes: u64,
    /// `Some(t)` if the port is idle (nothing serialising, nothing waiting)
    /// and has been since `t`: an admitted packet starts at once.
    pub idle_since: Option<Time>,
}

/// An admitted packet in a scheduled port's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// The packet.
    pub pkt: PktId,
    /// Its frame bytes.
    pub frame_bytes: u32,
    /// Position of its input among the node's inputs (for per-input counters).
    pub input: u32,
}

/// An admission discipline for a FIFO port: decides at arrival only.
pub trait ArrivalHook: Send {
    /// Decide on `pkt` arriving as `a` describes; called for every arrival,
    /// idle port included. May change `pkt` (e.g. its ECN field).
    fn on_arrival(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict;
    /// The buffer size in bytes.
    fn limit_bytes(&self) -> u64;
}

/// A discipline for a scheduled port: owns the queue, admits at arrival and
/// picks at departure.
pub trait Scheduler: Send {
    /// The arrival hook: decide on `q` (whose packet is `pkt`) arriving as
    /// `a` describes, and on admission (`Admit`, `AdmitMarked`) store `q`.
    /// Queued packets pushed out to make room go to `evicted` (they are
    /// dropped with [`DropReason::Discipline`]).
    fn on_arrival(&mut self, a: &Arrival, q: Queued, pkt: &mut Packet, evicted: &mut Vec<Queued>) -> Verdict;
    /// The departure hook: remove and return the packet to serialise next at `now`.
    fn dequeue(&mut self, now: Time) -> Option<Queued>;
    /// Frame bytes queued.
    fn backlog_bytes(&self) -> u64;
    /// The buffer size in bytes.
    fn limit_bytes(&self) -> u64;
    /// Every queued packet, in no particular order (slow: checks and tools).
    fn queued(&self) -> Vec<Queued>;
    /// Remove every queued packet (test and tool support).
    fn clear(&mut self);
}

/// Admit while the frame fits in the buffer; drop arrivals that do not fit.
/// A frame that finds the port idle goes straight to the wire and is admitted.
#[derive(Clone, Debug)]
pub struct DropTail {
    pub(crate) limit_bytes: u64,
}

impl DropTail {
    /// A drop-tail buffer of `limit_bytes`.
    pub fn new(limit_bytes: u64) -> DropTail {
        DropTail { limit_bytes }
    }
}

impl DropTail {
    /// True if a frame of `frame_bytes` fits behind `backlog_bytes` in `limit_bytes`.
    #[inline(always)]
    pub(crate) fn fits(limit_bytes: u64, backlog_bytes: u64, frame_bytes: u32) -> bool {
        backlog_bytes + frame_bytes as u64 <= limit_bytes
    }
}

impl ArrivalHook for DropTail {
    /// (The network runs this inline on its fast path, in `Net::enqueue_from`.)
    #[inline(always)]
    fn on_arrival(&mut self, a: &Arrival, _pkt: &mut Packet) -> Verdict {
        if a.idle_since.is_none() && !DropTail::fits(self.limit_bytes, a.backlog_bytes, a.frame_bytes) {
            Verdict::Drop(DropReason::TailDrop)
        } else {
            Verdict::Admit
        }
    }
    fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }
}

/// How a port serves its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortMode {
    /// Stamp-at-arrival FIFO: no departure events.
    Fifo,
    /// A real queue and a departure event while busy.
    Scheduled,
}

/// The discipline a port runs: drop-tail is a `match` arm on the packet
/// path; other disciplines are boxed (one virtual call per arrival, and per
/// departure for scheduled ones).
pub enum Qdisc {
    /// Byte-limited drop-tail on a FIFO port (the fast path).
    DropTail(DropTail),
    /// A FIFO port with another arrival hook.
    Fifo(Box<dyn ArrivalHook>),
    /// A scheduled port.
    Scheduled(Box<dyn Scheduler>),
}

impl std::fmt::Debug for Qdisc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Qdisc::DropTail(q) => q.fmt(f),
            Qdisc::Fifo(q) => write!(f, "Fifo(limit {} B)", q.limit_bytes()),
            Qdisc::Scheduled(q) => write!(f, "Scheduled(limit {} B)", q.limit_bytes()),
        }
    }
}

impl Qdisc {
    /// The port mode this discipline needs.
    pub fn mode(&self) -> PortMode {
        match self {
            Qdisc::DropTail(_) | Qdisc::Fifo(_) => PortMode::Fifo,
            Qdisc::Scheduled(_) => PortMode::Scheduled,
        }
    }

    /// The buffer size in bytes.
    pub fn limit_bytes(&self) -> u64 {
        match self {
            Qdisc::DropTail(q) => q.limit_bytes(),
            Qdisc::Fifo(q) => q.limit_bytes(),
            Qdisc::Scheduled(q) => q.limit_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(frame_bytes: u32, backlog_bytes: u64, idle: bool) -> Arrival {
        Arrival {
            now: Time(0),
            input: Input::LOCAL,
            frame_bytes,
            backlog_bytes,
            idle_since: idle.then_some(Time(0)),
        }
    }

    #[test]
    fn drop_tail_admits_exactly_up_to_the_limit() {
        let mut q = DropTail::new(3000);
        let mut pkt = Packet::EMPTY;
        let p = &mut pkt;
        let tail = Verdict::Drop(DropReason::TailDrop);
        assert_eq!(q.on_arrival(&arrival(1500, 0, false), p), Verdict::Admit);
        assert_eq!(q.on_arrival(&arrival(1500, 1500, false), p), Verdict::Admit);
        assert_eq!(q.on_arrival(&arrival(1, 3000, false), p), tail);
        assert_eq!(q.on_arrival(&arrival(1501, 1500, false), p), tail);
    }

    #[test]
    fn drop_tail_sends_a_frame_that_finds_the_port_idle() {
        let mut q = DropTail::new(1000);
        let mut pkt = Packet::EMPTY;
        let p = &mut pkt;
        assert_eq!(q.on_arrival(&arrival(1500, 0, true), p), Verdict::Admit);
        assert_eq!(
            q.on_arrival(&arrival(1500, 0, false), p),
            Verdict::Drop(DropReason::TailDrop)
        );
    }
}
