//! A hub's send queue toward its parent, paced at its assigned rate.
//!
//! The queue holds the hub's own objects first, then every object a member
//! or child hub delivers, in arrival order (continuous forwarding,
//! `xco_core::sicc::Forwarder`'s order). With a rate (speed control, or an
//! overloaded hub's fraction of its line rate), a token bucket lets objects
//! go when the credit covers them; it waits until the credit covers
//! `burst_bytes` (or all that is queued, if less): one MSS with packet
//! compression, so what it releases at once fills a packet (the driver
//! packs it into writes of at most one MSS), 1 B without, so each object
//! goes as soon as the credit covers it. Without a rate every object goes
//! at once and TCP alone paces.
//!
//! Credit is integer: bits × picoseconds per second, so rates and times
//! never meet a float.

use std::collections::{HashSet, VecDeque};
use xco_core::time::PS_PER_S;
use xco_core::Time;

/// One hub's paced stream of one request.
#[derive(Clone, Debug)]
pub struct HubSender {
    /// Front-end (index) whose request it serves.
    pub fe: u32,
    /// That front-end's request number.
    pub req: u32,
    /// The hub's host.
    pub server: u32,
    /// The host it streams to (the front-end or a parent hub).
    pub parent: u32,
    /// Objects (request indices) still to forward, own and received.
    pub expected: u64,
    queue: VecDeque<(u32, u32)>,
    queued_bytes: u64,
    rate_bps: u64,
    credit: u128,
    last: Time,
    /// When the pending timer fires (`Time::NEVER`: none armed).
    pub wake_at: Time,
    burst_bytes: u64,
    /// Objects already written toward the parent.
    sent: HashSet<u32>,
}

impl HubSender {
    /// A hub of front-end `fe`'s request `req` at `server`, streaming to
    /// `parent`, owing `expected` objects; `rate_bps` 0: not paced.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        fe: u32,
        req: u32,
        server: u32,
        parent: u32,
        expected: u64,
        rate_bps: u64,
        burst_bytes: u64,
        now: Time,
    ) -> HubSender {
        HubSender {
            fe,
            req,
            server,
            parent,
            expected,
            queue: VecDeque::new(),
            queued_bytes: 0,
            rate_bps,
            credit: 0,
            last: now,
            wake_at: Time::NEVER,
            burst_bytes: burst_bytes.max(1),
            sent: HashSet::new(),
        }
    }

    fn refill(&mut self, now: Time) {
        let dt = now.saturating_since(self.last).ps() as u128;
        self.last = now;
        self.credit += self.rate_bps as u128 * dt;
        let front = self.queue.front().map_or(0, |&(_, b)| b as u64);
        let cap = self.burst_bytes.max(front) as u128 * 8 * PS_PER_S as u128;
        self.credit = self.credit.min(cap);
    }

    /// Change the rate from `now` on (0: not paced).
    pub fn set_rate(&mut self, now: Time, rate_bps: u64) {
        self.refill(now);
        self.rate_bps = rate_bps;
    }

    /// Queue object `idx` of `bytes`.
    pub fn push(&mut self, idx: u32, bytes: u32) {
        self.queue.push_back((idx, bytes));
        self.queued_bytes += bytes as u64;
    }

    /// Move the objects that may go at `now` onto `out` (request index,
    /// bytes); returns when to look again (`None`: nothing queued).
    pub fn ready(&mut self, now: Time, out: &mut Vec<(u32, u32)>) -> Option<Time> {
        if self.rate_bps == 0 {
            let n = self.queue.len() as u64;
            for (i, b) in self.queue.drain(..) {
                self.sent.insert(i);
                out.push((i, b));
            }
            self.expected -= n;
            self.queued_bytes = 0;
            return None;
        }
        self.refill(now);
        let unit = 8 * PS_PER_S as u128;
        let target = self.queued_bytes.min(self.burst_bytes) as u128 * unit;
        if self.credit >= target {
            while let Some(&(i, b)) = self.queue.front() {
                let cost = b as u128 * unit;
                if cost > self.credit {
                    break;
                }
                self.credit -= cost;
                self.queue.pop_front();
                self.queued_bytes -= b as u64;
                self.expected -= 1;
                self.sent.insert(i);
                out.push((i, b));
            }
        }
        if self.queue.is_empty() {
            return None;
        }
        let target = self
            .queued_bytes
            .min(self.burst_bytes)
            .max(self.queue.front().map_or(0, |&(_, b)| b as u64));
        let need = (target as u128 * unit).saturating_sub(self.credit);
        let dt_ps = need.div_ceil(self.rate_bps as u128).max(1);
        Some(Time(now.ps().saturating_add(dt_ps.min(u64::MAX as u128) as u64)))
    }

    /// True if object `idx` was written toward the parent.
    pub fn has_sent(&self, idx: u32) -> bool {
        self.sent.contains(&idx)
    }

    /// Take object `idx` out of the queue (redirected elsewhere); false if it is not queued.
    pub fn remove(&mut self, idx: u32) -> bool {
        match self.queue.iter().position(|&(i, _)| i == idx) {
            Some(k) => {
                let (_, b) = self.queue.remove(k).expect("position is in range");
                self.queued_bytes -= b as u64;
                self.expected -= 1;
                true
            }
            None => false,
        }
    }

    /// One object fewer to forward (it will be dropped on arrival).
    pub fn expect_fewer(&mut self) {
        self.expected -= 1;
    }

    /// One object more to forward (a redirected query joined).
    pub fn expect_more(&mut self) {
        self.expected += 1;
    }

    /// True when everything it owed has gone.
    pub fn is_done(&self) -> bool {
        self.expected == 0
    }
}
