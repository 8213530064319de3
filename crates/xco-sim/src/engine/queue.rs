//! The event queue: a time wheel for the near future, a radix heap beyond.
//!
//! Almost every event of a packet simulation lands within one link delay of
//! the present (a packet arriving at the far end of a link). Those go into a
//! wheel of `2^shift`-picosecond buckets spanning a horizon chosen from the
//! network (a few propagation delays): pushing is an index computation and a
//! `Vec::push`. When the clock reaches a bucket, its handful of entries are
//! stable-sorted into the *run*, which pops in order. Events beyond the
//! horizon (timers) wait in a [`RadixHeap`] and move into the wheel the
//! moment their bucket enters the horizon — before anything else can be
//! pushed into that bucket — so events at equal times pop in the order they
//! were scheduled: the `(time, sequence number)` order of a classic heap,
//! without storing sequence numbers.
//!
//! Cancellable timers go through a small slab with generation counters:
//! cancelling is O(1) and a cancelled timer is skipped when it comes up.

use super::entry::{sort_by_time, Entry};
pub use super::event::Event;
use super::radix::RadixHeap;
use xco_core::Time;

/// Handle of a cancellable event, for [`EventQueue::cancel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerKey {
    slot: u32,
    generation: u32,
}

const GENERATION_MASK: u32 = (1 << 28) - 1;

/// Pending events in `(time, insertion)` order.
pub struct EventQueue {
    shift: u32,
    mask: u64,
    buckets: Vec<Vec<Entry>>,
    /// Bit per bucket slot: non-empty.
    occupied: Vec<u64>,
    /// Absolute index (time >> shift) of the bucket loaded into `run`.
    cur: u64,
    run: Vec<Entry>,
    head: usize,
    overflow: RadixHeap,
    len: usize,
    popped: u64,
    slots: Vec<(u32, Option<Event>)>,
    free_slots: Vec<u32>,
    /// Buckets loaded and entries they held since the last density check.
    loads: u32,
    loaded_entries: u64,
}

/// Buckets loaded between two density checks.
const DENSITY_WINDOW: u32 = 4096;
/// Mean entries per loaded bucket above which buckets are halved.
const DENSITY_MAX: u64 = 24;
/// The finest wheel the adaptation goes to.
const MAX_LOG2_BUCKETS: u32 = 16;

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl EventQueue {
    /// An empty queue with 1.024 ns buckets and a 4096-bucket horizon.
    pub fn new() -> EventQueue {
        EventQueue::with_wheel(10, 12)
    }

    /// An empty queue with `2^shift` ps buckets and `2^log2_buckets` of them.
    ///
    /// Panics if `log2_buckets` is not in 6..=20 or `shift` over 40.
    pub fn with_wheel(shift: u32, log2_buckets: u32) -> EventQueue {
        assert!(
            (6..=20).contains(&log2_buckets) && shift <= 40,
            "unreasonable wheel"
        );
        let n = 1usize << log2_buckets;
        EventQueue {
            shift,
            mask: (n - 1) as u64,
            buckets: (0..n).map(|_| Vec::new()).collect(),
            occupied: vec![0; n / 64],
            cur: 0,
            run: Vec::new(),
            head: 0,
            overflow: RadixHeap::new(),
            len: 0,
            popped: 0,
            slots: Vec::new(),
            free_slots: Vec::new(),
            loads: 0,
            loaded_entries: 0,
        }
    }

    /// A queue whose buckets are about `bucket_ps` wide and whose horizon
    /// spans at least `horizon_ps`: buckets of a few events each, and nearly
    /// every event within the horizon.
    pub fn for_timescale(bucket_ps: u64, horizon_ps: u64) -> EventQueue {
        let shift = 63 - bucket_ps.max(1).leading_zeros(); // floor(log2)
        let buckets = (horizon_ps >> shift).max(1).next_power_of_two();
        let log2 = buckets.trailing_zeros().clamp(8, 16);
        EventQueue::with_wheel(shift.min(40), log2)
    }

    /// Rebuild the queue with another wheel, keeping every pending event and
    /// its order (for tests and tools that compare configurations).
    pub fn rewheel(&mut self, shift: u32, log2_buckets: u32) {
        let mut fresh = EventQueue::with_wheel(shift, log2_buckets);
        // start the new wheel where this one stands, so entries land in buckets
        fresh.cur = match self.peek_time() {
            Some(t) => (t.0 >> shift).saturating_sub(1),
            None => 0,
        };
        while let Some(e) = self.pop_entry() {
            fresh.push(e);
        }
        fresh.slots = std::mem::take(&mut self.slots);
        fresh.free_slots = std::mem::take(&mut self.free_slots);
        fresh.popped = self.popped;
        *self = fresh;
    }

    #[inline(always)]
    fn n(&self) -> u64 {
        self.mask + 1
    }

    #[inline(always)]
    fn put_in_bucket(&mut self, b: u64, e: Entry) {
        let slot = (b & self.mask) as usize;
        self.buckets[slot].push(e);
        self.occupied[slot / 64] |= 1 << (slot % 64);
    }

    /// Queue `e`: the common case (a bucket of the wheel ahead of the one
    /// being popped) inline, a few instructions; the rest out of line.
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        let b = e.time >> self.shift;
        // b - cur - 1 < n - 1  <=>  cur < b < cur + n (wrapping: b <= cur is huge)
        if b.wrapping_sub(self.cur + 1) < self.mask {
            self.len += 1;
            self.put_in_bucket(b, e);
        } else {
            self.push_cold(e);
        }
    }

    /// [`EventQueue::push`] into the bucket being popped or beyond the horizon.
    #[inline(never)]
    fn push_cold(&mut self, e: Entry) {
        self.len += 1;
        let b = e.time >> self.shift;
        if b <= self.cur {
            // the bucket being popped (or earlier, after a peek): keep the run sorted
            let rest = &self.run[self.head..];
            let at = self.head + rest.partition_point(|x| x.time <= e.time);
            self.run.insert(at, e);
        } else if b < self.cur + self.n() {
            self.put_in_bucket(b, e);
        } else {
            self.overflow.push(e);
        }
    }

    /// Schedule `event` at `time`, which must not be before the last popped event.
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        self.push(Entry::new(time.0, event));
    }

    /// Schedule the [`Event::PipeArrive`] of `port` whose head packet is `pkt`
    /// (always inline: out of line, as the compiler had chosen, it cost
    /// about 21 instructions more per packet-hop at k = 8; docs/speed.md).
    #[inline(always)]
    pub fn schedule_arrival(&mut self, time: Time, port: u32, pkt: u32) {
        self.push(Entry::arrival(time.0, port, pkt));
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
        let generation = self.slots[slot as usize].0;
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
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        loop {
            let e = self.pop_entry()?;
            let event = e.event();
            if let Event::Timer { slot, generation } = event {
                let s = &mut self.slots[slot as usize];
                debug_assert_eq!(s.0, generation);
                let live = s.1.take();
                s.0 = (s.0 + 1) & GENERATION_MASK;
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

    /// The (port, head packet hint) of an event about `d` places after the
    /// next one to pop, if it is a [`Event::PipeArrive`] (for warming caches
    /// ahead: `net::prefetch`). Past the end of the bucket being popped it
    /// looks into the next bucket of the wheel, whose entries are not sorted
    /// yet: the event found there pops within that bucket, soon, but not
    /// necessarily `d` places ahead. Reads only; the order of events does
    /// not depend on it.
    #[inline(always)]
    pub fn arrival_ahead(&self, d: usize) -> Option<(u32, u32)> {
        let i = self.head + d;
        let e = match self.run.get(i) {
            Some(e) => e,
            None => {
                let slot = ((self.cur + 1) & self.mask) as usize;
                self.buckets[slot].get(i - self.run.len())?
            }
        };
        e.as_arrival()
    }

    /// The next occupied bucket after `cur` (absolute index), if the wheel has any.
    fn next_occupied(&self) -> Option<u64> {
        let n = self.n();
        let words = self.occupied.len();
        let start = ((self.cur + 1) & self.mask) as usize;
        let (w0, bit0) = (start / 64, start % 64);
        // the first word from bit0 on, then whole words, then the first word's low bits
        let first = self.occupied[w0] & (!0u64 << bit0);
        let found = if first != 0 {
            Some(w0 * 64 + first.trailing_zeros() as usize)
        } else {
            (1..=words).find_map(|k| {
                let w = (w0 + k) % words;
                let mut bits = self.occupied[w];
                if k == words {
                    bits &= !(!0u64 << bit0); // wrapped back to the first word
                }
                (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
            })
        }?;
        let dist = (found as u64).wrapping_sub(start as u64) & self.mask;
        debug_assert!(dist < n);
        Some(self.cur + 1 + dist)
    }

    /// Load the next non-empty bucket into the run; false if nothing is pending.
    fn advance(&mut self) -> bool {
        self.run.clear();
        self.head = 0;
        let next = match (self.next_occupied(), self.overflow.peek_time()) {
            (Some(b), Some(t)) => b.min(t >> self.shift),
            (Some(b), None) => b,
            (None, Some(t)) => t >> self.shift,
            (None, None) => return false,
        };
        self.cur = next;
        // buckets newly inside the horizon take their overflow entries now,
        // before anything else can be pushed into them
        let end = self.cur + self.n();
        while let Some(t) = self.overflow.peek_time() {
            if t >> self.shift >= end {
                break;
            }
            let e = self.overflow.pop().expect("peeked");
            if e.time >> self.shift == self.cur {
                self.run.push(e);
            } else {
                self.put_in_bucket(e.time >> self.shift, e);
            }
        }
        let slot = (self.cur & self.mask) as usize;
        let mut b = std::mem::take(&mut self.buckets[slot]);
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        if self.run.is_empty() {
            std::mem::swap(&mut self.run, &mut b);
        } else {
            // overflow entries of this bucket were scheduled before the direct ones
            self.run.extend_from_slice(&b);
            b.clear();
        }
        self.buckets[slot] = b;
        sort_by_time(&mut self.run);
        self.loads += 1;
        self.loaded_entries += self.run.len() as u64;
        if self.loads == DENSITY_WINDOW {
            let crowded = self.loaded_entries > DENSITY_MAX * DENSITY_WINDOW as u64;
            self.loads = 0;
            self.loaded_entries = 0;
            let log2 = self.mask.count_ones();
            if crowded && self.shift > 0 && log2 < MAX_LOG2_BUCKETS {
                // crowded buckets: halve their width, keep the horizon
                self.rewheel(self.shift - 1, log2 + 1);
            }
        }
        true
    }

    #[inline]
    fn pop_entry(&mut self) -> Option<Entry> {
        while self.head >= self.run.len() {
            if !self.advance() {
                return None;
            }
        }
        let e = self.run[self.head];
        self.head += 1;
        self.len -= 1;
        Some(e)
    }

    /// Time of the earliest pending event (cancelled ones included).
    pub fn peek_time(&mut self) -> Option<Time> {
        while self.head >= self.run.len() {
            if !self.advance() {
                return None;
            }
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
