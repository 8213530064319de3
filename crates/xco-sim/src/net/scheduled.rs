//! The reference scheduled discipline: a byte-limited drop-tail FIFO run in
//! scheduled mode (a real queue, one departure event while busy).
//!
//! It decides exactly as the FIFO fast path's drop-tail does, so on the same
//! traffic a port running it gives the same results as a fast-path port: the
//! check that scheduled mode itself adds nothing (`tests/ports.rs`).

use super::packet::Packet;
use super::qdisc::{Arrival, DropReason, Queued, Scheduler, Verdict};
use std::collections::VecDeque;
use xco_core::Time;

/// Drop-tail FIFO with a queue of its own.
#[derive(Clone, Debug)]
pub struct ScheduledFifo {
    limit_bytes: u64,
    queue: VecDeque<Queued>,
    backlog_bytes: u64,
}

impl ScheduledFifo {
    /// A FIFO of `limit_bytes`.
    pub fn new(limit_bytes: u64) -> ScheduledFifo {
        ScheduledFifo {
            limit_bytes,
            queue: VecDeque::new(),
            backlog_bytes: 0,
        }
    }
}

impl Scheduler for ScheduledFifo {
    fn on_arrival(
        &mut self,
        a: &Arrival,
        q: Queued,
        _pkt: &mut Packet,
        _evicted: &mut Vec<Queued>,
    ) -> Verdict {
        if a.idle_since.is_none() && a.backlog_bytes + a.frame_bytes as u64 > self.limit_bytes {
            return Verdict::Drop(DropReason::TailDrop);
        }
        self.queue.push_back(q);
        self.backlog_bytes += q.frame_bytes as u64;
        Verdict::Admit
    }
    fn dequeue(&mut self, _now: Time) -> Option<Queued> {
        let q = self.queue.pop_front()?;
        self.backlog_bytes -= q.frame_bytes as u64;
        Some(q)
    }
    fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }
    fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }
    fn queued(&self) -> Vec<Queued> {
        self.queue.iter().copied().collect()
    }
    fn clear(&mut self) {
        self.queue.clear();
        self.backlog_bytes = 0;
    }
}
