//! Queue disciplines: what a port's buffer does with an arriving packet.
//!
//! [`QueueDiscipline`] is the extension point for RED, SFQ, ECN marking and
//! PDN's drop notification; [`Qdisc`] dispatches over the implemented ones
//! with a `match` (no virtual call on the packet path).

use super::packet::PktId;
use std::collections::VecDeque;
use xco_core::Time;

/// The contract every queue discipline meets.
pub trait QueueDiscipline {
    /// Offer `pkt` of `frame_bytes` at `now`; returns the packet to drop, if
    /// any (the arriving one for drop-tail; another one for push-out schemes).
    fn enqueue(&mut self, pkt: PktId, frame_bytes: u32, now: Time) -> Option<PktId>;
    /// The next packet to transmit and its frame bytes.
    fn dequeue(&mut self, now: Time) -> Option<(PktId, u32)>;
    /// Bytes waiting (not counting the packet being serialised).
    fn backlog_bytes(&self) -> u64;
    /// Packets waiting.
    fn backlog_packets(&self) -> usize;
    /// Ids of waiting packets (for conservation checks).
    fn packets(&self) -> Vec<PktId>;
}

/// First-in first-out with a byte limit; arrivals that do not fit are dropped.
pub struct DropTail {
    limit_bytes: u64,
    bytes: u64,
    fifo: VecDeque<(PktId, u32)>,
}

impl DropTail {
    /// A drop-tail buffer of `limit_bytes`.
    pub fn new(limit_bytes: u64) -> DropTail {
        DropTail {
            limit_bytes,
            bytes: 0,
            fifo: VecDeque::new(),
        }
    }
}

impl QueueDiscipline for DropTail {
    #[inline]
    fn enqueue(&mut self, pkt: PktId, frame_bytes: u32, _now: Time) -> Option<PktId> {
        if self.bytes + frame_bytes as u64 > self.limit_bytes {
            return Some(pkt);
        }
        self.bytes += frame_bytes as u64;
        self.fifo.push_back((pkt, frame_bytes));
        None
    }
    #[inline]
    fn dequeue(&mut self, _now: Time) -> Option<(PktId, u32)> {
        let (p, b) = self.fifo.pop_front()?;
        self.bytes -= b as u64;
        Some((p, b))
    }
    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }
    fn backlog_packets(&self) -> usize {
        self.fifo.len()
    }
    fn packets(&self) -> Vec<PktId> {
        self.fifo.iter().map(|&(p, _)| p).collect()
    }
}

/// The queue disciplines a port can run.
pub enum Qdisc {
    /// Byte-limited FIFO dropping arrivals that do not fit.
    DropTail(DropTail),
}

macro_rules! each {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            Qdisc::DropTail($q) => $e,
        }
    };
}

impl QueueDiscipline for Qdisc {
    #[inline]
    fn enqueue(&mut self, pkt: PktId, frame_bytes: u32, now: Time) -> Option<PktId> {
        each!(self, q => q.enqueue(pkt, frame_bytes, now))
    }
    #[inline]
    fn dequeue(&mut self, now: Time) -> Option<(PktId, u32)> {
        each!(self, q => q.dequeue(now))
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        each!(self, q => q.backlog_bytes())
    }
    #[inline]
    fn backlog_packets(&self) -> usize {
        each!(self, q => q.backlog_packets())
    }
    fn packets(&self) -> Vec<PktId> {
        each!(self, q => q.packets())
    }
}
