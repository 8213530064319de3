//! Which verdict messages accept a set of released packets: batch verdicts
//! where the kernel allows them, single verdicts elsewhere.
//!
//! The kernel numbers a queue's packets in order (`id`) and keeps the ones
//! awaiting a verdict in that order. A batch verdict (`NFQNL_MSG_VERDICT_BATCH`
//! with id `m`) applies to *every* waiting packet whose id is at most `m` — so
//! it may only be sent when all of those are being released. The batcher keeps
//! the ids the agent has received and not yet verdicted, in order; at a flush,
//! the released packets at the front of that order (before the oldest packet
//! still held) go as one batch verdict, the others as single verdicts (still
//! one `sendmsg` for all of them: see [`super::nfnetlink`]).
//!
//! The common cases are one message: packets passed at once as they arrive, and
//! a gate opening on the oldest held packets of the host.
//!
//! Ids the kernel assigned but never delivered (it passed them itself, failing
//! open because the agent's socket was full) show up as gaps; they are counted
//! ([`VerdictBatcher::gaps`]) and need no verdict.
//!
//! No allocation once the buffers have grown to the largest backlog seen; no I/O.

use std::collections::VecDeque;

/// A verdict message to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accept every waiting packet with an id up to and including this one (a batch verdict).
    UpTo(u32),
    /// Accept this one packet.
    One(u32),
}

/// State of a received packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Held by the agent: no verdict may cover it.
    Waiting,
    /// Released since the last flush: its verdict is still to be sent.
    Released,
    /// Its verdict was sent (it is no longer in the kernel's queue).
    Sent,
}

/// `a` comes after `b` in the kernel's id order (ids wrap around).
pub fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// Turns releases into verdict messages (see the module doc).
#[derive(Debug, Default)]
pub struct VerdictBatcher {
    /// Received packets from the oldest one still waiting, in id order.
    order: VecDeque<(u32, State)>,
    /// Released since the last flush, in release order.
    released: Vec<u32>,
    /// The last id received.
    last: Option<u32>,
    /// Ids never delivered (passed by the kernel itself).
    gaps: u64,
}

impl VerdictBatcher {
    /// An empty batcher.
    pub fn new() -> VerdictBatcher {
        VerdictBatcher::default()
    }

    /// A packet with this id was received (ids arrive in increasing order).
    pub fn received(&mut self, id: u32) {
        if let Some(last) = self.last {
            if after(id, last) {
                self.gaps += u64::from(id.wrapping_sub(last) - 1);
            } else {
                // not newer than the last one: the kernel never does this; keep it out of
                // the order (its release gets a single verdict, and no batch relies on it)
                return;
            }
        }
        self.last = Some(id);
        self.order.push_back((id, State::Waiting));
    }

    /// Packet `id` may go: its verdict is sent at the next [`flush`](Self::flush).
    pub fn release(&mut self, id: u32) {
        if let Some(i) = self.find(id) {
            if self.order[i].1 == State::Waiting {
                self.order[i].1 = State::Released;
            } else {
                return; // released twice: one verdict is enough
            }
        }
        self.released.push(id);
    }

    /// Releases waiting for [`flush`](Self::flush).
    pub fn pending(&self) -> usize {
        self.released.len()
    }

    /// Packets received and not yet released.
    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.order.iter().filter(|e| e.1 == State::Waiting).count()
    }

    /// Ids the kernel assigned but never delivered (it passed those packets without asking).
    pub fn gaps(&self) -> u64 {
        self.gaps
    }

    /// Emit the verdicts of every release since the last flush: at most one
    /// [`Verdict::UpTo`] first, then [`Verdict::One`]s in release order.
    pub fn flush(&mut self, mut emit: impl FnMut(Verdict)) {
        if self.released.is_empty() {
            return;
        }
        // the front run of released (or already sent) packets: one batch verdict covers it
        let start = self.order.front().map(|e| e.0);
        let mut upto = None;
        while let Some(&(id, st)) = self.order.front() {
            if st == State::Waiting {
                break;
            }
            if st == State::Released {
                upto = Some(id);
            }
            self.order.pop_front();
        }
        if let Some(m) = upto {
            emit(Verdict::UpTo(m));
        }
        for k in 0..self.released.len() {
            let id = self.released[k];
            if start.is_some_and(|s| !after(s, id)) && upto.is_some_and(|m| !after(id, m)) {
                continue; // covered by the batch verdict
            }
            if let Some(i) = self.find(id) {
                self.order[i].1 = State::Sent;
            }
            emit(Verdict::One(id));
        }
        self.released.clear();
    }

    /// Index of `id` in the order (binary search: ids are increasing).
    fn find(&self, id: u32) -> Option<usize> {
        let &(first, _) = self.order.front()?;
        let key = id.wrapping_sub(first);
        if (key as i32) < 0 {
            return None;
        }
        let i = self
            .order
            .binary_search_by_key(&key, |&(x, _)| x.wrapping_sub(first))
            .ok()?;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flush(b: &mut VerdictBatcher) -> Vec<Verdict> {
        let mut v = Vec::new();
        b.flush(|x| v.push(x));
        v
    }

    fn received(ids: impl IntoIterator<Item = u32>) -> VerdictBatcher {
        let mut b = VerdictBatcher::new();
        for id in ids {
            b.received(id);
        }
        b
    }

    #[test]
    fn packets_passed_as_they_arrive_are_one_batch_verdict() {
        let mut b = received(1..=100);
        for id in 1..=100 {
            b.release(id);
        }
        assert_eq!(flush(&mut b), vec![Verdict::UpTo(100)]);
        assert_eq!(b.waiting(), 0);
        assert_eq!(flush(&mut b), vec![], "nothing released since");
    }

    #[test]
    fn a_held_packet_stops_the_batch_and_later_releases_go_singly() {
        // 1..=3 pass, 4 is held (a closed destination), 5 and 6 pass
        let mut b = received(1..=6);
        for id in [1, 2, 3, 5, 6] {
            b.release(id);
        }
        assert_eq!(
            flush(&mut b),
            vec![Verdict::UpTo(3), Verdict::One(5), Verdict::One(6)]
        );
        assert_eq!(b.waiting(), 1);
        // 4's gate opens: it is now the front, and 5, 6 were already sent
        b.received(7);
        b.release(4);
        b.release(7);
        assert_eq!(flush(&mut b), vec![Verdict::UpTo(7)]);
        assert_eq!(b.waiting(), 0);
    }

    #[test]
    fn a_batch_never_covers_a_packet_still_held() {
        // held: 2 and 5; released: the rest, in a scrambled order
        let mut b = received(1..=8);
        for id in [3, 1, 8, 4, 6, 7] {
            b.release(id);
        }
        let v = flush(&mut b);
        assert_eq!(
            v,
            vec![
                Verdict::UpTo(1),
                Verdict::One(3),
                Verdict::One(8),
                Verdict::One(4),
                Verdict::One(6),
                Verdict::One(7)
            ]
        );
        for x in &v {
            if let Verdict::UpTo(m) = *x {
                assert!(m < 2, "a batch up to {m} would accept held packet 2");
            }
        }
        // releasing 5 then 2: 2 is the front now; everything up to 8 has gone or goes now
        b.release(5);
        assert_eq!(flush(&mut b), vec![Verdict::One(5)]);
        b.release(2);
        assert_eq!(flush(&mut b), vec![Verdict::UpTo(2)]);
        assert_eq!(b.waiting(), 0);
    }

    #[test]
    fn every_release_gets_exactly_one_verdict() {
        // a deterministic pseudo-random mix of holds and releases over 2000 packets
        let mut b = VerdictBatcher::new();
        let mut held: Vec<u32> = Vec::new();
        let mut covered = std::collections::BTreeSet::new();
        let mut sent_upto = 0u32;
        let mut x = 12345u64;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for id in 1..=2000u32 {
            b.received(id);
            if rnd() % 3 == 0 {
                held.push(id);
            } else {
                b.release(id);
            }
            if rnd() % 5 == 0 && !held.is_empty() {
                let k = (rnd() % held.len() as u64) as usize;
                b.release(held.swap_remove(k));
            }
            if rnd() % 7 == 0 || id == 2000 {
                if id == 2000 {
                    for h in held.drain(..) {
                        b.release(h);
                    }
                }
                let waiting: Vec<u32> = (1..=id).filter(|i| !covered.contains(i)).collect();
                let mut now = Vec::new();
                b.flush(|v| now.push(v));
                for v in now {
                    match v {
                        Verdict::UpTo(m) => {
                            assert!(m > sent_upto || sent_upto == 0);
                            sent_upto = m;
                            for i in waiting.iter().copied().filter(|&i| i <= m) {
                                assert!(!held.contains(&i), "batch up to {m} covers held {i}");
                                covered.insert(i);
                            }
                        }
                        Verdict::One(i) => assert!(covered.insert(i), "{i} verdicted twice"),
                    }
                }
            }
        }
        assert_eq!(covered.len(), 2000, "every packet got its verdict");
        assert_eq!(b.waiting(), 0);
    }

    #[test]
    fn ids_wrap_around() {
        let start = u32::MAX - 2;
        let ids: Vec<u32> = (0..6).map(|k| start.wrapping_add(k)).collect();
        let mut b = received(ids.iter().copied());
        // hold the second; release the rest
        for &id in ids.iter().filter(|&&i| i != ids[1]) {
            b.release(id);
        }
        assert_eq!(
            flush(&mut b),
            vec![
                Verdict::UpTo(ids[0]),
                Verdict::One(ids[2]),
                Verdict::One(ids[3]),
                Verdict::One(ids[4]),
                Verdict::One(ids[5])
            ]
        );
        b.release(ids[1]);
        assert_eq!(flush(&mut b), vec![Verdict::UpTo(ids[1])]);
        assert_eq!(b.gaps(), 0);
    }

    #[test]
    fn ids_never_delivered_are_counted_and_need_no_verdict() {
        let mut b = received([1, 2, 6, 7]);
        assert_eq!(b.gaps(), 3, "3, 4 and 5 were passed by the kernel");
        for id in [1, 2, 6, 7] {
            b.release(id);
        }
        assert_eq!(flush(&mut b), vec![Verdict::UpTo(7)]);
    }

    #[test]
    fn an_unknown_or_repeated_release_is_sent_once_as_a_single_verdict() {
        let mut b = received([10, 11]);
        b.release(3); // never received
        b.release(10);
        b.release(10);
        assert_eq!(flush(&mut b), vec![Verdict::UpTo(10), Verdict::One(3)]);
        assert_eq!(b.waiting(), 1);
    }
}
