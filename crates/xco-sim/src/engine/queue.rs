//! The event queue: a binary min-heap keyed by `(time, seq)`.

use std::collections::HashSet;
use xco_core::Time;

/// What happens when an event fires; each variant names the element that acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head packet of port `0`'s pipe reaches the far end of the link.
    PipeArrive(u32),
    /// Port `0` finishes serialising a packet and may start the next one.
    PortDepart(u32),
    /// Retransmission-timer check of TCP endpoint `0`.
    TcpRto(u32),
    /// Delayed-ACK timer check of TCP endpoint `0`.
    TcpDelack(u32),
    /// A timer of application `app`, with an app-defined `token`.
    App { app: u32, token: u32 },
    /// Periodic statistics sample.
    Sample,
    /// A test or tool event carrying a tag (never produced by the model).
    Probe(u32),
}

/// Handle of a scheduled event, for [`EventQueue::cancel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerKey(u64);

#[derive(Clone, Copy)]
struct Entry {
    time: u64,
    seq: u64,
    event: Event,
}

impl Entry {
    #[inline(always)]
    fn before(&self, other: &Entry) -> bool {
        (self.time, self.seq) < (other.time, other.seq)
    }
}

/// Pending events in `(time, seq)` order.
#[derive(Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    next_seq: u64,
    cancelled: HashSet<u64>,
    popped: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    /// Schedule `event` at `time`; returns a key that can cancel it.
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) -> TimerKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            time: time.0,
            seq,
            event,
        });
        self.sift_up(self.heap.len() - 1);
        TimerKey(seq)
    }

    /// Withdraw a scheduled event; it will never be returned by [`pop`](Self::pop).
    ///
    /// Cancelling an event that already fired has no effect.
    pub fn cancel(&mut self, key: TimerKey) {
        if key.0 < self.next_seq {
            self.cancelled.insert(key.0);
        }
    }

    /// Remove and return the earliest live event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        loop {
            let top = self.pop_entry()?;
            if !self.cancelled.is_empty() && self.cancelled.remove(&top.seq) {
                continue;
            }
            self.popped += 1;
            return Some((Time(top.time), top.event));
        }
    }

    /// Time of the earliest pending event (cancelled ones included).
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|e| Time(e.time))
    }

    /// Number of pending entries (cancelled ones included until popped).
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events returned by `pop` so far.
    pub fn events_popped(&self) -> u64 {
        self.popped
    }

    #[inline]
    fn pop_entry(&mut self) -> Option<Entry> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.heap[0], last);
        self.sift_down(0);
        Some(top)
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let item = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if item.before(&self.heap[parent]) {
                self.heap[i] = self.heap[parent];
                i = parent;
            } else {
                break;
            }
        }
        self.heap[i] = item;
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let item = self.heap[i];
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.heap[right].before(&self.heap[left]) {
                right
            } else {
                left
            };
            if self.heap[child].before(&item) {
                self.heap[i] = self.heap[child];
                i = child;
            } else {
                break;
            }
        }
        self.heap[i] = item;
    }
}
