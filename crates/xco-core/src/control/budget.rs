//! Rate bounds on work an outsider can make a node do: a GCRA (virtual
//! scheduling) token bucket over the node's own clock, O(1) state.
//!
//! An agent checks the controller's Ed25519 signatures (tens of
//! microseconds each, and anyone can send well-formed signed junk) only
//! within such a budget; the controller signs challenges to joins at most
//! once per interval per host. A budget that runs out makes the node drop
//! input unread, never stall: what the budget protects is its packet path
//! and its timers.

use crate::time::{Dur, Time};

/// A token bucket: `per_s` tokens a second, at most `burst` at once.
#[derive(Clone, Debug)]
pub struct Budget {
    /// Time one token takes to come back.
    interval: Dur,
    /// How far ahead of now the bucket may be spent (burst - 1 intervals).
    tolerance: Dur,
    /// The theoretical arrival time of the next conforming take.
    tat: Time,
}

impl Budget {
    /// A full bucket of `burst` tokens refilled at `per_s` a second.
    ///
    /// Panics if `per_s` or `burst` is zero.
    pub fn new(per_s: u64, burst: u64) -> Budget {
        assert!(per_s > 0 && burst > 0, "a budget needs a rate and a burst");
        let interval = Dur::from_ps(crate::time::PS_PER_S / per_s);
        Budget {
            interval,
            tolerance: Dur::from_ps(interval.ps().saturating_mul(burst - 1)),
            tat: Time::ZERO,
        }
    }

    /// Take one token at `now`: false (and nothing taken) if the bucket is empty.
    pub fn take(&mut self, now: Time) -> bool {
        let tat = self.tat.max(now);
        if tat.saturating_since(now) > self.tolerance {
            return false;
        }
        self.tat = tat + self.interval;
        true
    }
}

/// At most one event per `every` for each of a fixed number of slots (hosts).
#[derive(Clone, Debug)]
pub struct PerSlot {
    every: Dur,
    last: Vec<Option<Time>>,
}

impl PerSlot {
    /// `slots` slots, each allowing one event per `every`.
    pub fn new(slots: usize, every: Dur) -> PerSlot {
        PerSlot {
            every,
            last: vec![None; slots],
        }
    }

    /// True if slot `i` may have an event at `now` (not counted); false for a slot out of range.
    pub fn ready(&self, i: usize, now: Time) -> bool {
        self.last
            .get(i)
            .is_some_and(|last| last.is_none_or(|t| now >= t + self.every))
    }

    /// True (and counted) if slot `i` may have an event at `now`; false for a slot out of range.
    pub fn allow(&mut self, i: usize, now: Time) -> bool {
        let Some(last) = self.last.get_mut(i) else {
            return false;
        };
        if last.is_some_and(|t| now < t + self.every) {
            return false;
        }
        *last = Some(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_allows_its_burst_then_its_rate() {
        let mut b = Budget::new(1000, 4);
        let t = Time::ZERO + Dur::from_ms(5);
        assert_eq!((0..10).filter(|_| b.take(t)).count(), 4, "the burst");
        assert!(!b.take(t + Dur::from_us(500)), "no token back yet");
        // over one second: the burst plus one token per millisecond
        let n = (0..100_000u64)
            .filter(|i| b.take(t + Dur::from_us(*i * 10)))
            .count();
        assert!((999..=1001).contains(&n), "{n}");
    }

    #[test]
    fn a_slot_allows_one_event_per_interval() {
        let mut s = PerSlot::new(2, Dur::from_ms(5));
        let t = Time::ZERO + Dur::from_ms(1);
        assert!(s.allow(0, t));
        assert!(!s.allow(0, t + Dur::from_ms(4)));
        assert!(s.allow(1, t), "slots are independent");
        assert!(s.allow(0, t + Dur::from_ms(5)));
        assert!(!s.allow(7, t), "out of range");
    }
}
