//! The harness's network and clocks: a seeded event queue over true time
//! (picoseconds, ordered by (time, sequence number) so equal times pop in
//! insertion order), per-node clocks with an offset and a drift, and the
//! faults a datagram can meet (loss, duplication, delay, so reordering, and
//! partitions). This is a simple model of the control network, not the
//! simulator's packet network: one-way delays are drawn per datagram, no
//! queue or link is modelled.
//!
//! How datagrams travel is a [`Transport`]: this model ([`Model`]) is one;
//! `crates/xco-sim/tests/dst_sim/simnet.rs` puts them (and the agents' data)
//! on the simulator's packet network instead.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use xco_core::{Dur, Rng, Time};

/// A node's address: agents are their host id, the controller [`CTL`], its
/// standby [`CTL2`].
pub type Addr = u32;
/// The controller's address (the primary when there is a standby).
pub const CTL: Addr = u32::MAX - 1;
/// The standby controller's address.
pub const CTL2: Addr = u32::MAX - 2;

/// True for a controller's address.
pub fn is_ctl(a: Addr) -> bool {
    a == CTL || a == CTL2
}

/// A node's monotonic clock: `offset + t * (1 + drift_ppm / 1e6)` at true time `t`.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// Reading at true time zero, ps.
    pub offset_ps: u64,
    /// Rate error, parts per million (NTP slews at most 500).
    pub drift_ppm: i64,
}

impl Clock {
    /// The reading at true time `t`.
    pub fn local(&self, t: Time) -> Time {
        let t = t.ps() as i128;
        Time((self.offset_ps as i128 + t + t * self.drift_ppm as i128 / 1_000_000) as u64)
    }

    /// The first true instant whose reading is at least `local` (`Time::NEVER` stays never).
    pub fn true_at(&self, local: Time) -> Time {
        if local == Time::NEVER {
            return Time::NEVER;
        }
        let l = local.ps() as i128 - self.offset_ps as i128;
        if l <= 0 {
            return Time::ZERO;
        }
        let mut t = (l * 1_000_000 / (1_000_000 + self.drift_ppm as i128)).max(0) as u64;
        while self.local(Time(t)) < local {
            t += 1;
        }
        Time(t)
    }
}

/// An event at a true time.
pub struct Scheduled<E> {
    pub at: Time,
    seq: u64,
    pub ev: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<E> Eq for Scheduled<E> {}
impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Scheduled<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        // a max-heap: the earliest (time, seq) is the greatest
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// The event queue.
pub struct Queue<E> {
    heap: BinaryHeap<Scheduled<E>>,
    seq: u64,
}

impl<E> Queue<E> {
    pub fn new() -> Queue<E> {
        Queue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }

    pub fn push(&mut self, at: Time, ev: E) {
        self.seq += 1;
        self.heap.push(Scheduled {
            at,
            seq: self.seq,
            ev,
        });
    }

    pub fn pop(&mut self) -> Option<Scheduled<E>> {
        self.heap.pop()
    }

    /// The time of the next event (`Time::NEVER`: none).
    pub fn peek_at(&self) -> Time {
        self.heap.peek().map_or(Time::NEVER, |e| e.at)
    }
}

/// A datagram a transport delivered.
pub struct Arrival {
    /// True time of arrival.
    pub at: Time,
    /// The source address it carries.
    pub from: Addr,
    pub to: Addr,
    pub bytes: Vec<u8>,
}

/// How the harness's datagrams (and, on a packet network, the agents' data
/// packets) travel. The world sends through it and, between its own
/// events, runs the transport's events up to its next one ([`Transport::advance`]).
pub trait Transport {
    /// The network's name (`model` or `sim`), for replay commands.
    fn name(&self) -> &'static str;
    /// The longest one-way delay of a controller's datagram to an agent
    /// (the checks' allowance starts from it).
    fn delay_bound(&self) -> Dur;
    /// Put `bytes` on the network at `t`, sent by node `wire_from` with the
    /// source address `from`, to `to`; the arrival times known at once
    /// (the world schedules them), others come out of [`Transport::advance`].
    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        rng: &mut Rng,
        t: Time,
        wire_from: Addr,
        from: Addr,
        to: Addr,
        bytes: &[u8],
    ) -> Vec<Time>;
    /// Host `from` puts `pkts` data packets for host `to` on its NIC at `t`
    /// (released by its gate, passed ungated, or passed by the kernel).
    fn data(&mut self, _t: Time, _from: Addr, _to: Addr, _pkts: u32) {}
    /// The time of the transport's next own event (`Time::NEVER`: none).
    fn next_at(&mut self) -> Time {
        Time::NEVER
    }
    /// Run the transport's events up to `until`; the datagrams that arrived go to `out`.
    fn advance(&mut self, _until: Time, _out: &mut Vec<Arrival>) {}
    /// End-of-run checks of the network at `t` (`Err`: the violation);
    /// `Ok` carries a line for the trace.
    fn finish(&mut self, _t: Time) -> Result<String, String> {
        Ok(String::new())
    }
}

/// The model network: [`NetFaults`] decides each datagram's fate and delay; no data travels.
pub struct Model {
    pub faults: NetFaults,
    pub quiet: Time,
}

impl Transport for Model {
    fn name(&self) -> &'static str {
        "model"
    }
    fn delay_bound(&self) -> Dur {
        self.faults.delay_max
    }
    fn send(
        &mut self,
        rng: &mut Rng,
        t: Time,
        _wire_from: Addr,
        from: Addr,
        to: Addr,
        _bytes: &[u8],
    ) -> Vec<Time> {
        self.faults.arrivals(rng, t, from, to, self.quiet)
    }
}

/// What the network does to datagrams while faults are on.
#[derive(Clone, Debug)]
pub struct NetFaults {
    /// Chance a datagram is lost, per million.
    pub loss_ppm: u64,
    /// Chance a datagram arrives twice, per million.
    pub dup_ppm: u64,
    /// One-way delay bounds (each datagram draws one: they reorder).
    pub delay_min: Dur,
    pub delay_max: Dur,
    /// (node, from, to): the node's datagrams, both ways, are lost in [from, to).
    pub partitions: Vec<(Addr, Time, Time)>,
    /// (from, to): datagrams between the two controllers are lost in [from, to)
    /// (each still reaches the agents: the split-brain case).
    pub peer_cuts: Vec<(Time, Time)>,
}

impl NetFaults {
    /// A node cut off at `t`.
    pub fn cut(&self, a: Addr, t: Time) -> bool {
        self.partitions.iter().any(|&(n, f, u)| n == a && f <= t && t < u)
    }

    /// The arrival times of a datagram sent at `t` between `from` and `to`
    /// (none: lost; two: duplicated). Loss and duplication only before `quiet`.
    pub fn arrivals(&self, rng: &mut Rng, t: Time, from: Addr, to: Addr, quiet: Time) -> Vec<Time> {
        if self.cut(from, t) || self.cut(to, t) {
            return Vec::new();
        }
        if is_ctl(from) && is_ctl(to) && self.peer_cuts.iter().any(|&(f, u)| f <= t && t < u) {
            return Vec::new();
        }
        let faulty = t < quiet;
        if faulty && rng.below(1_000_000) < self.loss_ppm {
            return Vec::new();
        }
        let span = self.delay_max.ps() - self.delay_min.ps();
        let delay = |rng: &mut Rng| {
            t + Dur::from_ps(self.delay_min.ps() + if faulty { rng.below(span + 1) } else { span / 2 })
        };
        let mut v = vec![delay(rng)];
        if faulty && rng.below(1_000_000) < self.dup_ppm {
            v.push(delay(rng));
        }
        v
    }
}
