//! SFQ: stochastic fairness queueing, the first scheduled discipline.
//!
//! Arriving packets are hashed by flow into buckets; buckets with packets
//! are served round robin by bytes (deficit round robin with a quantum of
//! one full frame, so flows with different packet sizes get equal bytes).
//! The buffer is one byte limit shared by all buckets; when an arrival does
//! not fit, packets are pushed out of the tail of the *longest* bucket, or
//! the arrival is dropped if its own bucket is the longest — so one heavy
//! flow cannot take the buffer from light ones (the remedy for the TCP
//! Outcast's port blackout, `spec/outcast.md`).
//!
//! Left out for now: hash perturbation (Linux rehashes every `perturb`
//! seconds so colliding flows do not stay unlucky; here the hash is fixed by
//! a seed), Linux's per-slot depth limit and its 128-active-flow cap, and
//! RED inside buckets. The flow id stands in for the 5-tuple.

use super::packet::Packet;
use super::qdisc::{Arrival, DropReason, Queued, Scheduler, Verdict};
use std::collections::VecDeque;
use xco_core::Time;

#[derive(Clone, Debug, Default)]
struct Bucket {
    queue: VecDeque<Queued>,
    bytes: u64,
    /// Bytes this bucket may still send in its current turn.
    deficit_bytes: u64,
}

/// Stochastic fairness queueing with deficit round robin.
#[derive(Clone, Debug)]
pub struct Sfq {
    limit_bytes: u64,
    quantum_bytes: u64,
    seed: u64,
    buckets: Vec<Bucket>,
    /// Buckets with packets, in round-robin order (the front is served).
    active: VecDeque<u32>,
    backlog_bytes: u64,
}

impl Sfq {
    /// An SFQ of `limit_bytes` in all, `buckets` hash buckets (at least 1), a
    /// round-robin quantum of `quantum_bytes` (a full frame), hashing with `seed`.
    pub fn new(limit_bytes: u64, buckets: u32, quantum_bytes: u32, seed: u64) -> Sfq {
        Sfq {
            limit_bytes,
            quantum_bytes: quantum_bytes.max(1) as u64,
            seed,
            buckets: vec![Bucket::default(); buckets.max(1) as usize],
            active: VecDeque::new(),
            backlog_bytes: 0,
        }
    }

    /// Linux's shape: 1024 buckets, a quantum of one 1500-byte-MTU Ethernet frame (1518 B).
    pub fn with_limit(limit_bytes: u64, seed: u64) -> Sfq {
        Sfq::new(limit_bytes, 1024, 1518, seed)
    }

    /// The bucket of `pkt`.
    pub fn bucket_of(&self, pkt: &Packet) -> u32 {
        (xco_core::rng::mix64(self.seed, pkt.flow as u64) % self.buckets.len() as u64) as u32
    }

    /// The active bucket holding the most bytes (the first of equals).
    fn longest(&self) -> Option<u32> {
        let mut best: Option<(u32, u64)> = None;
        for &b in &self.active {
            let bytes = self.buckets[b as usize].bytes;
            if best.is_none_or(|(_, x)| bytes > x) {
                best = Some((b, bytes));
            }
        }
        best.map(|(b, _)| b)
    }

    fn remove_active(&mut self, b: u32) {
        if let Some(i) = self.active.iter().position(|&x| x == b) {
            self.active.remove(i);
        }
    }
}

impl Scheduler for Sfq {
    fn on_arrival(&mut self, a: &Arrival, q: Queued, pkt: &mut Packet, evicted: &mut Vec<Queued>) -> Verdict {
        let b = self.bucket_of(pkt);
        let frame = q.frame_bytes as u64;
        while a.idle_since.is_none() && self.backlog_bytes + frame > self.limit_bytes {
            let own = self.buckets[b as usize].bytes + frame;
            let victim = match self.longest() {
                Some(l) if l != b && self.buckets[l as usize].bytes > own => l,
                _ => return Verdict::Drop(DropReason::TailDrop),
            };
            let bk = &mut self.buckets[victim as usize];
            let out = bk.queue.pop_back().expect("an active bucket has packets");
            bk.bytes -= out.frame_bytes as u64;
            self.backlog_bytes -= out.frame_bytes as u64;
            if bk.queue.is_empty() {
                bk.deficit_bytes = 0;
                self.remove_active(victim);
            }
            evicted.push(out);
        }
        let bk = &mut self.buckets[b as usize];
        if bk.queue.is_empty() {
            bk.deficit_bytes = self.quantum_bytes;
            self.active.push_back(b);
        }
        bk.queue.push_back(q);
        bk.bytes += frame;
        self.backlog_bytes += frame;
        Verdict::Admit
    }

    fn dequeue(&mut self, _now: Time) -> Option<Queued> {
        loop {
            let b = *self.active.front()?;
            let bk = &mut self.buckets[b as usize];
            let head = *bk.queue.front().expect("an active bucket has packets");
            if bk.deficit_bytes < head.frame_bytes as u64 {
                bk.deficit_bytes += self.quantum_bytes;
                self.active.rotate_left(1);
                continue;
            }
            bk.queue.pop_front();
            bk.deficit_bytes -= head.frame_bytes as u64;
            bk.bytes -= head.frame_bytes as u64;
            self.backlog_bytes -= head.frame_bytes as u64;
            if bk.queue.is_empty() {
                bk.deficit_bytes = 0;
                self.active.pop_front();
            }
            return Some(head);
        }
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }
    fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }
    fn queued(&self) -> Vec<Queued> {
        self.active
            .iter()
            .flat_map(|&b| self.buckets[b as usize].queue.iter().copied())
            .collect()
    }
    fn clear(&mut self) {
        for &b in &self.active {
            let bk = &mut self.buckets[b as usize];
            bk.queue.clear();
            bk.bytes = 0;
            bk.deficit_bytes = 0;
        }
        self.active.clear();
        self.backlog_bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::qdisc::Input;

    fn busy(frame_bytes: u32, backlog_bytes: u64) -> Arrival {
        Arrival {
            now: Time(0),
            input: Input::LOCAL,
            frame_bytes,
            backlog_bytes,
            idle_since: None,
        }
    }

    fn offer(s: &mut Sfq, id: u32, flow: u32, bytes: u32, evicted: &mut Vec<Queued>) -> Verdict {
        let mut p = Packet {
            flow,
            ..Packet::EMPTY
        };
        let q = Queued {
            pkt: id,
            frame_bytes: bytes,
            input: 0,
        };
        s.on_arrival(&busy(bytes, s.backlog_bytes()), q, &mut p, evicted)
    }

    #[test]
    fn buckets_take_turns_by_bytes() {
        let mut s = Sfq::new(1 << 20, 64, 1500, 7);
        let mut ev = Vec::new();
        // flow 1 queues four big frames, then flow 2 two small ones
        for i in 0..4 {
            offer(&mut s, i, 1, 1500, &mut ev);
        }
        offer(&mut s, 10, 2, 500, &mut ev);
        offer(&mut s, 11, 2, 500, &mut ev);
        assert_ne!(
            s.bucket_of(&Packet {
                flow: 1,
                ..Packet::EMPTY
            }),
            s.bucket_of(&Packet {
                flow: 2,
                ..Packet::EMPTY
            })
        );
        let order: Vec<u32> = std::iter::from_fn(|| s.dequeue(Time(0)).map(|q| q.pkt)).collect();
        assert_eq!(order, vec![0, 10, 11, 1, 2, 3]);
        assert_eq!(s.backlog_bytes(), 0);
    }

    #[test]
    fn a_full_buffer_pushes_out_the_longest_bucket() {
        let mut s = Sfq::new(6000, 64, 1500, 7);
        let mut ev = Vec::new();
        for i in 0..4 {
            assert_eq!(offer(&mut s, i, 1, 1500, &mut ev), Verdict::Admit);
        }
        // the heavy flow's own arrival is dropped...
        assert_eq!(
            offer(&mut s, 4, 1, 1500, &mut ev),
            Verdict::Drop(DropReason::TailDrop)
        );
        assert!(ev.is_empty());
        // ...a light flow's arrival pushes the heavy flow's newest packet out
        assert_eq!(offer(&mut s, 5, 2, 1500, &mut ev), Verdict::Admit);
        assert_eq!(ev.iter().map(|q| q.pkt).collect::<Vec<_>>(), vec![3]);
        assert_eq!(s.backlog_bytes(), 6000);
    }
}
