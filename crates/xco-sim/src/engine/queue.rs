//! The event queue: a radix heap over integer time with FIFO buckets.
//!
//! Simulated time never goes backwards, so the queue is *monotone*: nothing
//! is ever scheduled before the last event popped. A radix heap exploits
//! that: an entry sits in the bucket given by the highest bit in which its
//! time differs from the last popped time; pushing is a bit scan and a
//! `Vec::push`, popping refills bucket 0 from the lowest non-empty bucket.
//! Each bucket is kept in push order and refills preserve that order, so
//! events at equal times pop in the order they were scheduled — the
//! `(time, sequence number)` order of a classic heap, without storing or
//! comparing sequence numbers.
//!
//! One refinement keeps the constant small: when the lowest non-empty bucket
//! holds only a few entries it is not redistributed bit by bit; it is
//! stable-sorted once into the *run*, a sorted vector that pops in order.
//! Entries scheduled later inside the run's time range are inserted into it
//! in order (after entries of equal time), so the FIFO rule still holds.
//!
//! Cancellable timers go through a small slab with generation counters:
//! cancelling is O(1) and a cancelled timer is skipped when it comes up.

use xco_core::Time;

/// What happens when an event fires; each variant names the element that acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head packet of port `0`'s pipe reaches the far end of the link.
    PipeArrive(u32),
    /// The oldest packet waiting in host `0`'s NIC queue starts serialising
    /// (wakes TCP senders blocked on a full NIC queue).
    NicRoom(u32),
    /// Retransmission-timer check of TCP endpoint `0`.
    TcpRto(u32),
    /// Delayed-ACK timer check of TCP endpoint `0`.
    TcpDelack(u32),
    /// A timer of application `app`, with an app-defined `token` (below 2^29).
    App {
        /// Application index.
        app: u32,
        /// App-defined token.
        token: u32,
    },
    /// Periodic statistics sample.
    Sample,
    /// A test or tool event carrying a tag (never produced by the model).
    Probe(u32),
    /// Internal: a cancellable timer, resolved through the slab.
    #[doc(hidden)]
    Timer {
        /// Slab slot.
        slot: u32,
        /// Generation the slot had when scheduled.
        generation: u32,
    },
}

/// Handle of a cancellable event, for [`EventQueue::cancel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerKey {
    slot: u32,
    generation: u32,
}

/// A queue entry: time and the event packed into one word (16 bytes in all).
#[derive(Clone, Copy)]
struct Entry {
    time: u64,
    packed: u64,
}

impl Entry {
    #[inline(always)]
    fn new(time: u64, event: Event) -> Entry {
        let (tag, a, b): (u64, u32, u32) = match event {
            Event::PipeArrive(x) => (0, x, 0),
            Event::NicRoom(x) => (1, x, 0),
            Event::TcpRto(x) => (2, x, 0),
            Event::TcpDelack(x) => (3, x, 0),
            Event::App { app, token } => (4, app, token),
            Event::Sample => (5, 0, 0),
            Event::Probe(x) => (6, x, 0),
            Event::Timer { slot, generation } => (7, slot, generation),
        };
        // tag: 3 bits; a: 32 bits; b: 29 bits (app tokens and timer generations fit)
        debug_assert!(b < 1 << 29, "event payload too large");
        Entry {
            time,
            packed: tag | (a as u64) << 3 | ((b as u64) & ((1 << 29) - 1)) << 35,
        }
    }

    #[inline(always)]
    fn event(&self) -> Event {
        let a = (self.packed >> 3) as u32;
        let b = (self.packed >> 35) as u32;
        match self.packed & 7 {
            0 => Event::PipeArrive(a),
            1 => Event::NicRoom(a),
            2 => Event::TcpRto(a),
            3 => Event::TcpDelack(a),
            4 => Event::App { app: a, token: b },
            5 => Event::Sample,
            6 => Event::Probe(a),
            _ => Event::Timer {
                slot: a,
                generation: b,
            },
        }
    }
}

/// Stable insertion sort by time: buckets are small and nearly sorted.
#[inline]
fn sort_by_time(v: &mut [Entry]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].time > x.time {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

const BUCKETS: usize = 65;
/// Buckets up to this size become a sorted run instead of being redistributed.
const RUN_MAX: usize = 32;

/// Pending events in `(time, insertion)` order.
pub struct EventQueue {
    buckets: Vec<Vec<Entry>>,
    /// The sorted run (entries whose bucket is below `run_level`).
    run: Vec<Entry>,
    /// Read position in the run.
    head: usize,
    /// New entries whose bucket is below this level belong in the run.
    run_level: usize,
    /// Bit `i` set when bucket `i` is non-empty.
    nonempty: u128,
    last: u64,
    len: usize,
    popped: u64,
    slots: Vec<(u32, Option<Event>)>,
    free_slots: Vec<u32>,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> EventQueue {
        EventQueue {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            run: Vec::new(),
            head: 0,
            run_level: 0,
            nonempty: 0,
            last: 0,
            len: 0,
            popped: 0,
            slots: Vec::new(),
            free_slots: Vec::new(),
        }
    }

    #[inline(always)]
    fn bucket_of(&self, time: u64) -> usize {
        let x = time ^ self.last;
        if x == 0 {
            0
        } else {
            64 - x.leading_zeros() as usize
        }
    }

    /// Schedule `event` at `time`, which must not be before the last popped event.
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        let t = time.0;
        self.len += 1;
        // `peek_time` may have moved `last` past the clock; anything earlier
        // than `last` precedes every bucket and belongs in the run
        let b = if t < self.last { 0 } else { self.bucket_of(t) };
        if b < self.run_level || t < self.last {
            // inside the run's range: insert after every entry of time <= t
            let rest = &self.run[self.head..];
            let at = self.head + rest.partition_point(|e| e.time <= t);
            self.run.insert(at, Entry::new(t, event));
            return;
        }
        self.buckets[b].push(Entry::new(t, event));
        self.nonempty |= 1u128 << b;
    }

    /// Schedule `event` at `time` so that it can be withdrawn with [`cancel`](Self::cancel).
    pub fn schedule_cancellable(&mut self, time: Time, event: Event) -> TimerKey {
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.slots.push((0, None));
                (self.slots.len() - 1) as u32
            }
        };
        let generation = self.slots[slot as usize].0 & ((1 << 29) - 1);
        self.slots[slot as usize].1 = Some(event);
        self.schedule(time, Event::Timer { slot, generation });
        TimerKey { slot, generation }
    }

    /// Withdraw a cancellable event; it will never be returned by [`pop`](Self::pop).
    ///
    /// Cancelling an event that already fired or was cancelled has no effect.
    pub fn cancel(&mut self, key: TimerKey) {
        if let Some(s) = self.slots.get_mut(key.slot as usize) {
            if s.0 == key.generation && s.1.is_some() {
                s.1 = None;
            }
        }
    }

    /// Remove and return the earliest live event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        loop {
            let e = self.pop_entry()?;
            let event = e.event();
            if let Event::Timer { slot, generation } = event {
                let s = &mut self.slots[slot as usize];
                debug_assert_eq!(s.0, generation);
                let live = s.1.take();
                s.0 = (s.0 + 1) & ((1 << 29) - 1);
                self.free_slots.push(slot);
                match live {
                    Some(ev) => {
                        self.popped += 1;
                        return Some((Time(e.time), ev));
                    }
                    None => continue,
                }
            }
            self.popped += 1;
            return Some((Time(e.time), event));
        }
    }

    /// Make the run non-empty from the lowest non-empty bucket; false if nothing is pending.
    fn refill(&mut self) -> bool {
        self.run.clear();
        self.head = 0;
        self.run_level = 0;
        loop {
            if self.nonempty == 0 {
                return false;
            }
            let i = self.nonempty.trailing_zeros() as usize;
            let mut moved = std::mem::take(&mut self.buckets[i]);
            self.nonempty &= !(1u128 << i);
            let min = moved.iter().map(|e| e.time).min().expect("non-empty bucket");
            self.last = min;
            if moved.len() <= RUN_MAX || i == 0 {
                // entries of equal time are in push order: a stable sort keeps it
                sort_by_time(&mut moved);
                std::mem::swap(&mut self.run, &mut moved);
                self.buckets[i] = moved;
                self.run_level = i;
                return true;
            }
            for e in moved.drain(..) {
                let b = self.bucket_of(e.time);
                debug_assert!(b < i);
                self.buckets[b].push(e);
                self.nonempty |= 1u128 << b;
            }
            // keep the allocation for the next time this bucket fills
            self.buckets[i] = moved;
        }
    }

    #[inline]
    fn pop_entry(&mut self) -> Option<Entry> {
        if self.head >= self.run.len() && !self.refill() {
            return None;
        }
        let e = self.run[self.head];
        self.head += 1;
        self.len -= 1;
        if e.time > self.last {
            self.last = e.time;
        }
        Some(e)
    }

    /// Time of the earliest pending event (cancelled ones included).
    pub fn peek_time(&mut self) -> Option<Time> {
        if self.head >= self.run.len() && !self.refill() {
            return None;
        }
        Some(Time(self.run[self.head].time))
    }

    /// Number of pending entries (cancelled ones included until popped).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events returned by `pop` so far.
    pub fn events_popped(&self) -> u64 {
        self.popped
    }
}
