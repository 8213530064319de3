//! SFQ: stochastic fairness queueing, the first scheduled discipline.
//!
//! Arriving packets are hashed by flow into buckets; buckets with packets
//! are served round robin by bytes (deficit round robin with a quantum of
//! one full frame, so flows with different packet sizes get equal bytes).
//! The buffer is one byte limit shared by all buckets; when an arrival does
//! not fit, packets are pushed out of the tail of the *longest* bucket, or
//! the arrival is dropped if its own bucket is the longest — so one heavy
//! flow cannot take the buffer from light ones (the remedy for the TCP
//! Outcast's port blackout, `spec/outcast.md`). A bucket holds at most
//! `depth` packets (Linux's per-flow depth, 127 by default); an arrival to
//! a full bucket is dropped.
//!
//! Perturbation: flows that share a bucket share its turn. As Linux's
//! `perturb`, the hash can change every period so that no two flows stay
//! unlucky for long: the period's number picks the hash (a function of the
//! seed and the period only, so runs stay deterministic), and at the first
//! arrival of a new period every queued packet is moved to its flow's new
//! bucket, in order (as Linux's `sfq_rehash`), so a flow is never reordered.
//!
//! Admission ([`SfqAdmission`]): the default is the above (Linux's). The
//! `Ns2` rule is the SFQ of ns-2.35 (P. McKenney's, `queue/sfq.cc:203-231`),
//! which the TCP Outcast paper's simulations had: counted in packets of one
//! full frame, an arrival is dropped if its bucket already holds at least
//! half of the space left, or more than its fair share (`limit / buckets`)
//! once fewer packets than buckets fit, or if nothing fits; nothing is ever
//! pushed out. (ns-2 hashes source plus destination address; here, as in
//! the default, the flow id.)
//!
//! Left out: Linux's 128-active-flow cap and RED inside buckets. The flow id
//! stands in for the 5-tuple.

use super::packet::Packet;
use super::qdisc::{Arrival, DropReason, Queued, Scheduler, Verdict};
use std::collections::VecDeque;
use xco_core::{Dur, Time};

/// A queued packet and the flow it was hashed by.
#[derive(Clone, Copy, Debug)]
struct Entry {
    q: Queued,
    flow: u32,
}

/// The packets of one hash bucket that has some (Linux's "slot").
#[derive(Clone, Debug, Default)]
struct Bucket {
    queue: VecDeque<Entry>,
    bytes: u64,
    /// Bytes this bucket may still send in its current turn.
    deficit_bytes: u64,
    /// The hash bucket it holds.
    hash: u32,
}

/// What SFQ does with an arrival when the buffer is tight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SfqAdmission {
    /// Admit it and push packets out of the longest bucket (Linux).
    EvictLongest,
    /// ns-2.35's early drop of the arrival, counted in full frames of this size.
    Ns2 {
        /// One full frame, bytes (MTU + 18).
        frame_bytes: u32,
    },
}

/// No slot: the hash bucket is empty.
const NO_SLOT: u32 = u32::MAX;

/// Stochastic fairness queueing with deficit round robin.
///
/// As Linux lays it out: the hash table holds only a slot index per bucket
/// (4 bytes), and slots (queues) exist for buckets that hold packets, so a
/// port of 1024 buckets keeps a 4 KB table in cache, not 48 KB of queues.
#[derive(Clone, Debug)]
pub struct Sfq {
    limit_bytes: u64,
    quantum_bytes: u64,
    seed: u64,
    /// Packets a bucket may hold.
    depth_packets: u32,
    admission: SfqAdmission,
    /// The hash changes every period (`None`: never).
    perturb: Option<Dur>,
    /// The period whose hash is in use.
    period: u64,
    /// The hash seed of that period.
    hash_seed: u64,
    /// Per hash bucket: its slot, or [`NO_SLOT`].
    table: Vec<u32>,
    /// Slots, in use or free.
    slots: Vec<Bucket>,
    /// Free slots.
    free: Vec<u32>,
    /// Slots with packets, in round-robin order (the front is served).
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
            depth_packets: Sfq::DEFAULT_DEPTH_PACKETS,
            admission: SfqAdmission::EvictLongest,
            perturb: None,
            period: 0,
            hash_seed: Sfq::period_seed(seed, 0),
            table: vec![NO_SLOT; buckets.max(1) as usize],
            slots: Vec::new(),
            free: Vec::new(),
            active: VecDeque::new(),
            backlog_bytes: 0,
        }
    }

    /// Linux's per-flow depth limit, packets.
    pub const DEFAULT_DEPTH_PACKETS: u32 = 127;

    /// Linux's shape: 1024 buckets, a quantum of one 1500-byte-MTU Ethernet
    /// frame (1518 B), depth 127, no perturbation.
    pub fn with_limit(limit_bytes: u64, seed: u64) -> Sfq {
        Sfq::new(limit_bytes, 1024, 1518, seed)
    }

    /// This SFQ with buckets of at most `depth_packets` packets (at least 1).
    pub fn with_depth(mut self, depth_packets: u32) -> Sfq {
        self.depth_packets = depth_packets.max(1);
        self
    }

    /// This SFQ with admission rule `admission`.
    pub fn with_admission(mut self, admission: SfqAdmission) -> Sfq {
        self.admission = admission;
        self
    }

    /// ns-2.35's admission (`queue/sfq.cc:214-219`): drop the arrival to a
    /// bucket of `used` packets when `left` packets fit in the buffer.
    fn ns2_drops(&self, used: u64, frame_bytes: u32) -> bool {
        let frame = frame_bytes.max(1) as u64;
        let limit = self.limit_bytes / frame;
        let buckets = self.table.len() as u64;
        let left = limit as i64 - (self.backlog_bytes / frame) as i64;
        let fair = (limit / buckets) as i64;
        let used = used as i64;
        used >= (left >> 1) || (left < buckets as i64 && used > fair) || left <= 0
    }

    /// This SFQ with its hash changed every `period` (zero: never); set it
    /// before any packet arrives.
    pub fn with_perturbation(mut self, period: Dur) -> Sfq {
        self.perturb = (period > Dur::ZERO).then_some(period);
        self
    }

    fn period_seed(seed: u64, period: u64) -> u64 {
        xco_core::rng::mix64(seed, period)
    }

    /// The bucket of flow `flow` under the hash in use.
    #[inline]
    fn bucket_of_flow(&self, flow: u32) -> u32 {
        let h = xco_core::rng::mix64(self.hash_seed, flow as u64);
        // multiply-shift: uniform over the buckets without a division
        ((h as u128 * self.table.len() as u128) >> 64) as u32
    }

    /// The bucket of `pkt` under the hash in use.
    pub fn bucket_of(&self, pkt: &Packet) -> u32 {
        self.bucket_of_flow(pkt.flow)
    }

    /// Packets queued in the bucket of `pkt` (test support).
    pub fn bucket_len(&self, pkt: &Packet) -> usize {
        match self.table[self.bucket_of(pkt) as usize] {
            NO_SLOT => 0,
            s => self.slots[s as usize].queue.len(),
        }
    }

    /// Change to the hash of the period holding `now`, if that is a new one:
    /// every queued packet moves to its flow's new bucket, keeping each
    /// flow's order (buckets are reactivated in the order they are served).
    fn perturb_if_due(&mut self, now: Time) {
        let Some(p) = self.perturb else { return };
        let period = now.ps() / p.ps();
        if period == self.period {
            return;
        }
        self.period = period;
        self.hash_seed = Sfq::period_seed(self.seed, period);
        if self.backlog_bytes == 0 {
            return;
        }
        let mut moving = Vec::new();
        while let Some(s) = self.active.pop_front() {
            let bk = &mut self.slots[s as usize];
            moving.extend(bk.queue.drain(..));
            self.release(s);
        }
        for m in moving {
            let b = self.bucket_of_flow(m.flow);
            self.push(b, m);
        }
    }

    /// Empty slot `s`: its bucket has no slot any more, the slot is free.
    fn release(&mut self, s: u32) {
        let bk = &mut self.slots[s as usize];
        bk.bytes = 0;
        bk.deficit_bytes = 0;
        self.table[bk.hash as usize] = NO_SLOT;
        self.free.push(s);
    }

    /// Append `m` to bucket `b` (giving it a slot and a turn if it had none),
    /// without any limit check.
    fn push(&mut self, b: u32, m: Entry) {
        let mut s = self.table[b as usize];
        if s == NO_SLOT {
            s = self.free.pop().unwrap_or_else(|| {
                self.slots.push(Bucket::default());
                self.slots.len() as u32 - 1
            });
            self.table[b as usize] = s;
            let bk = &mut self.slots[s as usize];
            bk.hash = b;
            bk.deficit_bytes = self.quantum_bytes;
            self.active.push_back(s);
        }
        let bk = &mut self.slots[s as usize];
        bk.bytes += m.q.frame_bytes as u64;
        bk.queue.push_back(m);
    }

    /// The active slot holding the most bytes (the first of equals).
    fn longest(&self) -> Option<u32> {
        let mut best: Option<(u32, u64)> = None;
        for &s in &self.active {
            let bytes = self.slots[s as usize].bytes;
            if best.is_none_or(|(_, x)| bytes > x) {
                best = Some((s, bytes));
            }
        }
        best.map(|(s, _)| s)
    }

    fn remove_active(&mut self, s: u32) {
        if let Some(i) = self.active.iter().position(|&x| x == s) {
            self.active.remove(i);
        }
    }
}

impl Scheduler for Sfq {
    fn on_arrival(&mut self, a: &Arrival, q: Queued, pkt: &mut Packet, evicted: &mut Vec<Queued>) -> Verdict {
        self.perturb_if_due(a.now);
        let b = self.bucket_of(pkt);
        let frame = q.frame_bytes as u64;
        let (own_len, own_bytes) = match self.table[b as usize] {
            NO_SLOT => (0, 0),
            s => (self.slots[s as usize].queue.len(), self.slots[s as usize].bytes),
        };
        if own_len >= self.depth_packets as usize {
            return Verdict::Drop(DropReason::Discipline);
        }
        if let SfqAdmission::Ns2 { frame_bytes } = self.admission {
            let full = self.backlog_bytes + frame > self.limit_bytes;
            if full {
                return Verdict::Drop(DropReason::TailDrop); // ns-2 never pushes out
            }
            if a.idle_since.is_none() && self.ns2_drops(own_len as u64, frame_bytes) {
                return Verdict::Drop(DropReason::Discipline);
            }
        }
        let own_slot = self.table[b as usize];
        while a.idle_since.is_none() && self.backlog_bytes + frame > self.limit_bytes {
            let own = own_bytes + frame;
            let victim = match self.longest() {
                Some(l) if l != own_slot && self.slots[l as usize].bytes > own => l,
                _ => return Verdict::Drop(DropReason::TailDrop),
            };
            let bk = &mut self.slots[victim as usize];
            let out = bk.queue.pop_back().expect("an active slot has packets").q;
            bk.bytes -= out.frame_bytes as u64;
            self.backlog_bytes -= out.frame_bytes as u64;
            if bk.queue.is_empty() {
                self.remove_active(victim);
                self.release(victim);
            }
            evicted.push(out);
        }
        self.push(b, Entry { q, flow: pkt.flow });
        self.backlog_bytes += frame;
        Verdict::Admit
    }

    fn dequeue(&mut self, _now: Time) -> Option<Queued> {
        loop {
            let s = *self.active.front()?;
            let bk = &mut self.slots[s as usize];
            let head = bk.queue.front().expect("an active slot has packets").q;
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
                self.active.pop_front();
                self.release(s);
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
            .flat_map(|&s| self.slots[s as usize].queue.iter().map(|m| m.q))
            .collect()
    }
    fn clear(&mut self) {
        while let Some(s) = self.active.pop_front() {
            self.slots[s as usize].queue.clear();
            self.release(s);
        }
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

    fn flow_pkt(flow: u32) -> Packet {
        Packet {
            flow,
            ..Packet::EMPTY
        }
    }

    /// Offer packet `id` of `flow` at `now` with a busy port.
    fn offer_at(s: &mut Sfq, now: Time, id: u32, flow: u32, evicted: &mut Vec<Queued>) -> Verdict {
        let mut p = flow_pkt(flow);
        let q = Queued {
            pkt: id,
            frame_bytes: 1500,
            input: 0,
        };
        let a = Arrival {
            now,
            ..busy(1500, s.backlog_bytes())
        };
        s.on_arrival(&a, q, &mut p, evicted)
    }

    #[test]
    fn ns2_admission_drops_the_arrival_of_a_bucket_holding_half_the_space_left() {
        // 10 full frames of buffer, 4 buckets: fair share 2 frames
        let frame = 1500;
        let mut s =
            Sfq::new(10 * frame as u64, 4, frame, 7).with_admission(SfqAdmission::Ns2 { frame_bytes: frame });
        let mut ev = Vec::new();
        let (a, b) = flows_in_two_buckets(&s);
        // bucket a takes three (used 0, 1, 2 below half of 10, 9, 8 left) ...
        for i in 0..3 {
            assert_eq!(offer(&mut s, i, a, frame, &mut ev), Verdict::Admit, "packet {i}");
        }
        // ... and the fourth is dropped on arrival: 3 >= (10 - 3) / 2, with 7 frames free
        assert_eq!(
            offer(&mut s, 3, a, frame, &mut ev),
            Verdict::Drop(DropReason::Discipline)
        );
        // an empty bucket still gets in, and nothing is ever pushed out
        assert_eq!(offer(&mut s, 6, b, frame, &mut ev), Verdict::Admit);
        assert!(ev.is_empty());
    }

    /// Two flows in different buckets.
    fn flows_in_two_buckets(s: &Sfq) -> (u32, u32) {
        (1..1000)
            .find(|&b| s.bucket_of_flow(b) != s.bucket_of_flow(0))
            .map(|b| (0, b))
            .unwrap()
    }

    #[test]
    fn a_bucket_holds_at_most_depth_packets() {
        let mut s = Sfq::new(1 << 30, 64, 1500, 7).with_depth(3);
        let mut ev = Vec::new();
        for i in 0..3 {
            assert_eq!(offer(&mut s, i, 1, 1500, &mut ev), Verdict::Admit);
        }
        assert_eq!(
            offer(&mut s, 3, 1, 1500, &mut ev),
            Verdict::Drop(DropReason::Discipline)
        );
        assert_eq!(
            offer(&mut s, 4, 2, 1500, &mut ev),
            Verdict::Admit,
            "another flow's bucket has room"
        );
        s.dequeue(Time(0));
        assert_eq!(
            offer(&mut s, 5, 1, 1500, &mut ev),
            Verdict::Admit,
            "room again once one left"
        );
        assert!(ev.is_empty());
    }

    /// Two flows that share a bucket under period 0's hash with `buckets` buckets.
    fn colliding_flows(s: &Sfq) -> (u32, u32) {
        for a in 0..1000 {
            for b in a + 1..1000 {
                if s.bucket_of_flow(a) == s.bucket_of_flow(b) {
                    return (a, b);
                }
            }
        }
        unreachable!("1000 flows in a few buckets collide")
    }

    #[test]
    fn perturbation_rehashes_queued_packets_without_reordering_a_flow() {
        let period = Dur::from_ms(1);
        let mut s = Sfq::new(1 << 30, 16, 1500, 3).with_perturbation(period);
        let mut ev = Vec::new();
        // 8 flows, 5 packets each, queued in period 0; ids say (flow, order)
        for k in 0..5 {
            for f in 0..8 {
                offer_at(&mut s, Time(0), f * 100 + k, f, &mut ev);
            }
        }
        let before: Vec<u32> = (0..8).map(|f| s.bucket_of_flow(f)).collect();
        // an arrival in period 3 changes the hash
        offer_at(&mut s, Time::ZERO + Dur::from_us(3500), 8 * 100, 8, &mut ev);
        let after: Vec<u32> = (0..8).map(|f| s.bucket_of_flow(f)).collect();
        assert_ne!(before, after, "a new period, a new hash");
        // every flow's packets now sit in its new bucket
        for f in 0..8 {
            assert!(s.bucket_len(&flow_pkt(f)) >= 5, "flow {f}");
        }
        let out: Vec<u32> = std::iter::from_fn(|| s.dequeue(Time(0)).map(|q| q.pkt)).collect();
        assert_eq!(out.len(), 41);
        for f in 0..9 {
            let mine: Vec<u32> = out.iter().copied().filter(|&id| id / 100 == f).collect();
            let mut sorted = mine.clone();
            sorted.sort();
            assert_eq!(mine, sorted, "flow {f} stays in order");
        }
        assert_eq!(s.backlog_bytes(), 0);
    }

    /// Packets each of three always-backlogged flows sends through `s` in
    /// `n` departures of 12 us (1500 B at 1 Gbit/s), refilling the one that sent.
    fn saturated_shares(mut s: Sfq, flows: [u32; 3], n: u32) -> [u64; 3] {
        let mut ev = Vec::new();
        let mut id = 0;
        for &f in &flows {
            for _ in 0..4 {
                offer_at(&mut s, Time(0), id, f, &mut ev);
                id += 1;
            }
        }
        let mut owner = std::collections::HashMap::new();
        for i in 0..id {
            owner.insert(i, flows[(i / 4) as usize]);
        }
        let mut sent = [0u64; 3];
        for k in 0..n {
            let now = Time::ZERO + Dur::from_us(12 * k as u64);
            let q = s.dequeue(now).expect("always backlogged");
            let f = owner[&q.pkt];
            let i = flows.iter().position(|&x| x == f).unwrap();
            sent[i] += 1;
            owner.insert(id, f);
            offer_at(&mut s, now, id, f, &mut ev);
            id += 1;
        }
        assert!(ev.is_empty());
        sent
    }

    #[test]
    fn perturbation_ends_an_unlucky_collision() {
        // 4 buckets: two of three flows share one and get a quarter each
        let fixed = Sfq::new(1 << 30, 4, 1500, 5);
        let (a, b) = colliding_flows(&fixed);
        let c = (0..1000)
            .find(|&f| fixed.bucket_of_flow(f) != fixed.bucket_of_flow(a))
            .unwrap();
        let n = 60_000;
        let stuck = saturated_shares(fixed, [a, b, c], n);
        let quarter = n as f64 / 4.0;
        assert!((stuck[0] as f64 - quarter).abs() < 0.02 * quarter, "{stuck:?}");
        assert!(
            (stuck[2] as f64 - 2.0 * quarter).abs() < 0.02 * quarter,
            "{stuck:?}"
        );
        // rehashing every 1 ms (83 departures): over 720 ms each gets close to a third
        let perturbed = Sfq::new(1 << 30, 4, 1500, 5).with_perturbation(Dur::from_ms(1));
        let shares = saturated_shares(perturbed, [a, b, c], n);
        let third = n as f64 / 3.0;
        for s in shares {
            assert!((s as f64 - third).abs() < 0.1 * third, "{shares:?}");
        }
    }
}
