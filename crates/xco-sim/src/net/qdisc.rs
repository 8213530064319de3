//! Queue disciplines: what a port's buffer does with an arriving packet.
//!
//! Ports are FIFO: a packet that is admitted is assigned its serialisation
//! slot at once (after everything admitted before it), so a port needs no
//! departure events. What varies between disciplines is the *admission*
//! decision at arrival, given the bytes waiting at that instant: drop-tail
//! now; RED, ECN marking and PDN's drop notification are further
//! implementations of [`QueueDiscipline`] (they too decide at arrival).
//! Disciplines that reorder packets at departure (SFQ) need a scheduler that
//! picks at dequeue time; they will come as a port mode of their own.

use xco_core::Time;

/// What happens to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Queue it behind everything admitted before.
    Admit,
    /// Drop it.
    Drop,
}

/// The contract of an admission discipline.
pub trait QueueDiscipline {
    /// Decide on a frame of `frame_bytes` arriving at `now` while
    /// `backlog_bytes` wait (the frame being serialised is not counted).
    fn admit(&mut self, now: Time, frame_bytes: u32, backlog_bytes: u64) -> Verdict;
    /// The buffer size in bytes.
    fn limit_bytes(&self) -> u64;
}

/// Admit while the frame fits in the buffer; drop arrivals that do not fit.
#[derive(Clone, Debug)]
pub struct DropTail {
    limit_bytes: u64,
}

impl DropTail {
    /// A drop-tail buffer of `limit_bytes`.
    pub fn new(limit_bytes: u64) -> DropTail {
        DropTail { limit_bytes }
    }
}

impl QueueDiscipline for DropTail {
    #[inline]
    fn admit(&mut self, _now: Time, frame_bytes: u32, backlog_bytes: u64) -> Verdict {
        if backlog_bytes + frame_bytes as u64 > self.limit_bytes {
            Verdict::Drop
        } else {
            Verdict::Admit
        }
    }
    fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }
}

/// The disciplines a port can run (a `match`, not a virtual call, on the packet path).
#[derive(Clone, Debug)]
pub enum Qdisc {
    /// Byte-limited drop-tail.
    DropTail(DropTail),
}

impl QueueDiscipline for Qdisc {
    #[inline]
    fn admit(&mut self, now: Time, frame_bytes: u32, backlog_bytes: u64) -> Verdict {
        match self {
            Qdisc::DropTail(q) => q.admit(now, frame_bytes, backlog_bytes),
        }
    }
    fn limit_bytes(&self) -> u64 {
        match self {
            Qdisc::DropTail(q) => q.limit_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_tail_admits_exactly_up_to_the_limit() {
        let mut q = DropTail::new(3000);
        assert_eq!(q.admit(Time(0), 1500, 0), Verdict::Admit);
        assert_eq!(q.admit(Time(0), 1500, 1500), Verdict::Admit);
        assert_eq!(q.admit(Time(0), 1, 3000), Verdict::Drop);
        assert_eq!(q.admit(Time(0), 1501, 1500), Verdict::Drop);
    }
}
