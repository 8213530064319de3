//! The affected set A of one run of Algorithm 1, in traversal order: the node
//! with the oldest waiting flow first, ties in round robin.
//!
//! Most members are known before the loop starts (the contention groups of
//! the links the triggers touch); they are sorted once (by buckets of age: at
//! a slot boundary that is every backlogged host). The few that join
//! while the loop runs (capacity freed by a preemption) go into a small heap.
//! Popping takes the smaller head of the two, so the order is exactly that of
//! one priority queue over all members, at a fraction of the cost.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Traversal key: (age in picoseconds, rotated node index) packed into one
/// integer, so that comparing keys compares ages first. Keys of distinct
/// nodes differ (the rotated index is unique).
pub(super) type Key = u128;

/// The key of a node whose oldest waiting flow has age `wait_ps` and whose
/// index, counted from the round-robin start, is `rotated`.
#[inline]
pub(super) fn key(wait_ps: u64, rotated: u32) -> Key {
    (u128::from(wait_ps) << 32) | u128::from(rotated)
}

/// The rotated node index of `k`.
#[inline]
pub(super) fn rotated(k: Key) -> u32 {
    k as u32
}

/// A priority queue of node keys, smallest first. See the module documentation.
#[derive(Default)]
pub(super) struct Affected {
    /// Members known when the loop starts; sorted by [`seal`](Self::seal).
    initial: Vec<Key>,
    /// The sort's second buffer.
    spare: Vec<Key>,
    /// The sort's bucket starts and fill positions (kept so no run allocates).
    at: Vec<u32>,
    fill: Vec<u32>,
    /// Next unpopped entry of `initial`.
    next: usize,
    /// Members added after [`seal`](Self::seal).
    added: BinaryHeap<Reverse<Key>>,
}

impl Affected {
    /// Empty the set (keeping its memory).
    pub fn clear(&mut self) {
        self.initial.clear();
        self.next = 0;
        self.added.clear();
    }

    /// Add a member before the loop starts.
    pub fn push_initial(&mut self, k: Key) {
        self.initial.push(k);
    }

    /// Sort the initial members; call once, before the first [`pop`](Self::pop).
    pub fn seal(&mut self) {
        if self.initial.len() < BUCKET_MIN {
            self.initial.sort_unstable();
        } else {
            sort_by_age(&mut self.initial, &mut self.spare, &mut self.at, &mut self.fill);
        }
    }

    /// Add a member while the loop runs.
    pub fn push(&mut self, k: Key) {
        self.added.push(Reverse(k));
    }

    /// The initial member `ahead` places after the next one, if any (to
    /// prefetch what the loop reads of it).
    #[inline]
    pub fn initial_ahead(&self, ahead: usize) -> Option<Key> {
        self.initial.get(self.next + ahead).copied()
    }

    /// Remove and return the smallest key.
    pub fn pop(&mut self) -> Option<Key> {
        let a = self.initial.get(self.next).copied();
        let b = self.added.peek().map(|r| r.0);
        match (a, b) {
            (Some(x), Some(y)) if y < x => self.added.pop().map(|r| r.0),
            (Some(x), _) => {
                self.next += 1;
                Some(x)
            }
            (None, _) => self.added.pop().map(|r| r.0),
        }
    }
}

/// Below this many keys a comparison sort is as fast.
const BUCKET_MIN: usize = 512;

/// Buckets of the first pass of [`sort_by_age`] (a power of two).
const BUCKETS: usize = 2048;

/// Sort `keys` by age, ties by rotated index, with `spare` as the second
/// buffer and `at`, `fill` for the bucket positions. One stable pass
/// distributes the keys into buckets by the top bits of their age; a
/// bucket already in order is done (pushed in rotated order, as by a pass
/// over all nodes, a bucket of one age is), others are sorted on their own.
fn sort_by_age(keys: &mut Vec<Key>, spare: &mut Vec<Key>, at: &mut Vec<u32>, fill: &mut Vec<u32>) {
    let n = keys.len();
    let age = |k: Key| (k >> 32) as u64;
    let lo = keys.iter().map(|&k| age(k)).min().unwrap_or(0);
    let hi = keys.iter().map(|&k| age(k)).max().unwrap_or(0);
    let bits = 64 - (hi - lo).leading_zeros();
    let shift = bits.saturating_sub(BUCKETS.trailing_zeros());
    let bucket = |k: Key| ((age(k) - lo) >> shift) as usize;
    at.clear();
    at.resize(BUCKETS + 1, 0);
    for &k in keys.iter() {
        at[bucket(k) + 1] += 1;
    }
    for b in 1..=BUCKETS {
        at[b] += at[b - 1];
    }
    if spare.len() < n {
        spare.resize(n, 0);
    }
    spare.truncate(n);
    fill.clear();
    fill.extend_from_slice(at);
    for &k in keys.iter() {
        let b = bucket(k);
        spare[fill[b] as usize] = k;
        fill[b] += 1;
    }
    std::mem::swap(keys, spare);
    for b in 0..BUCKETS {
        let run = &mut keys[at[b] as usize..at[b + 1] as usize];
        if run.windows(2).any(|w| w[0] > w[1]) {
            run.sort_unstable();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_the_order_of_one_priority_queue() {
        let mut a = Affected::default();
        for (i, w) in [5u64, 1, 9, 1, 3].into_iter().enumerate() {
            a.push_initial(key(w, i as u32));
        }
        a.seal();
        let mut out = vec![a.pop().unwrap()];
        for (i, w) in [0u64, 4, 10].into_iter().enumerate() {
            a.push(key(w, 10 + i as u32));
        }
        while let Some(k) = a.pop() {
            out.push(k);
        }
        let want = [(1, 1), (0, 10), (1, 3), (3, 4), (4, 11), (5, 0), (9, 2), (10, 12)];
        assert_eq!(out, want.map(|(w, r)| key(w, r)));
        assert_eq!(rotated(key(7, 42)), 42);
    }

    #[test]
    fn the_bucket_sort_sorts_by_age_then_index() {
        let mut rng = crate::Rng::new(3);
        for n in [600, 3000, 5000] {
            let mut keys: Vec<Key> = (0..n)
                .map(|i| {
                    let age = [rng.below(50), 7 + rng.below(1 << 40), u64::MAX - rng.below(3)][i % 3];
                    key(age, i as u32)
                })
                .collect();
            let mut want = keys.clone();
            want.sort_unstable();
            let (mut spare, mut at, mut next) = (Vec::new(), vec![9; 3], Vec::new());
            sort_by_age(&mut keys, &mut spare, &mut at, &mut next);
            assert_eq!(keys, want);
        }
    }
}
