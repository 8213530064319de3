//! A monotone radix heap over integer time with FIFO buckets and sorted runs.
//!
//! Nothing is ever pushed before the last time popped. An entry sits in the
//! bucket given by the highest bit in which its time differs from the last
//! popped time; pushing is a bit scan and a `Vec::push`, popping refills from
//! the lowest non-empty bucket. Buckets keep push order and refills preserve
//! it, so equal times pop in push order. A bucket of at most `RUN_MAX`
//! entries is stable-sorted once into the *run* instead of being
//! redistributed bit by bit; later pushes inside the run's range are inserted
//! into it in order, after entries of equal time.

use super::entry::{sort_by_time, Entry};

const BUCKETS: usize = 65;
/// Buckets up to this size become a sorted run instead of being redistributed.
const RUN_MAX: usize = 32;

/// See the module documentation.
pub struct RadixHeap {
    buckets: Vec<Vec<Entry>>,
    run: Vec<Entry>,
    head: usize,
    run_level: usize,
    nonempty: u128,
    last: u64,
    len: usize,
}

impl Default for RadixHeap {
    fn default() -> Self {
        RadixHeap::new()
    }
}

impl RadixHeap {
    /// An empty heap.
    pub fn new() -> RadixHeap {
        RadixHeap {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            run: Vec::new(),
            head: 0,
            run_level: 0,
            nonempty: 0,
            last: 0,
            len: 0,
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

    /// Entries pending.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Add `e`; its time must not be before the last popped time, except
    /// after a [`peek_time`](Self::peek_time) moved the bound forward.
    #[inline]
    pub fn push(&mut self, e: Entry) {
        let t = e.time;
        self.len += 1;
        // `peek_time` may have moved `last` forward; anything earlier precedes
        // every bucket and belongs in the run
        if t < self.last || self.bucket_of(t) < self.run_level {
            let rest = &self.run[self.head..];
            let at = self.head + rest.partition_point(|x| x.time <= t);
            self.run.insert(at, e);
            return;
        }
        let b = self.bucket_of(t);
        self.buckets[b].push(e);
        self.nonempty |= 1u128 << b;
    }

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
            self.buckets[i] = moved;
        }
    }

    /// Remove and return the earliest entry (equal times in push order).
    #[inline]
    pub fn pop(&mut self) -> Option<Entry> {
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

    /// Time of the earliest entry.
    pub fn peek_time(&mut self) -> Option<u64> {
        if self.head >= self.run.len() && !self.refill() {
            return None;
        }
        Some(self.run[self.head].time)
    }
}
