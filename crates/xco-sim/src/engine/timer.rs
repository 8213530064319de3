//! One reusable timer: a deadline with at most one pending engine event.
//!
//! The "one pending event per element" rule for timers whose deadline moves
//! all the time (a TCP retransmission timer is pushed later by every ACK).
//! A [`Timer`] keeps two times:
//!
//! * `deadline` — when the owner wants to act (`Time::NEVER`: disarmed);
//! * `event_at` — when the one engine event it scheduled will pop
//!   (`Time::NEVER`: none pending).
//!
//! Moving the deadline *later* is a field write: the pending event pops early,
//! [`Timer::fire`] sees the deadline is not due and re-schedules itself at the
//! deadline. Moving it *earlier* schedules a new event; the old one becomes
//! stale ("superseded") and [`Timer::fire`] ignores it when it pops because
//! its time is no longer `event_at`. Cancelling is a field write too: the
//! pending event pops and finds no deadline. So no event is ever withdrawn
//! from the queue, and an owner never holds more than one live event.
//!
//! Owners handle the event they passed in by calling [`Timer::fire`] and
//! acting only when it returns true.

use super::{Event, EventQueue};
use xco_core::Time;

/// A deadline and the time of the one engine event scheduled for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    deadline: Time,
    event_at: Time,
}

impl Default for Timer {
    fn default() -> Timer {
        Timer::IDLE
    }
}

impl Timer {
    /// Disarmed, no event pending.
    pub const IDLE: Timer = Timer {
        deadline: Time::NEVER,
        event_at: Time::NEVER,
    };

    /// The deadline (`Time::NEVER` when disarmed).
    #[inline]
    pub fn deadline(&self) -> Time {
        self.deadline
    }

    /// True while a deadline is set.
    #[inline]
    pub fn is_armed(&self) -> bool {
        self.deadline != Time::NEVER
    }

    /// Set the deadline to `at` (earlier or later than before); schedule
    /// `ev` at `at` only if no pending event pops at or before `at`.
    #[inline]
    pub fn arm(&mut self, q: &mut EventQueue, at: Time, ev: Event) {
        self.deadline = at;
        if self.event_at > at {
            self.event_at = at;
            q.schedule(at, ev);
        }
    }

    /// Move the deadline to `at` only if that is earlier (a wake-up request
    /// from an owner that recomputes its next deadline whenever it fires).
    #[inline]
    pub fn arm_earlier(&mut self, q: &mut EventQueue, at: Time, ev: Event) {
        if at < self.deadline {
            self.arm(q, at, ev);
        }
    }

    /// Disarm; a pending event will pop and be ignored.
    #[inline]
    pub fn cancel(&mut self) {
        self.deadline = Time::NEVER;
    }

    /// The owner's event `ev` popped at `now`: true if the deadline is due
    /// (the timer is then disarmed and the owner acts). False for a stale
    /// event, for a cancelled timer, and for a deadline that moved later —
    /// then `ev` is re-scheduled at the deadline.
    #[inline]
    pub fn fire(&mut self, q: &mut EventQueue, now: Time, ev: Event) -> bool {
        if now != self.event_at {
            return false; // superseded by an earlier event
        }
        self.event_at = Time::NEVER;
        if self.deadline == Time::NEVER {
            return false;
        }
        if now < self.deadline {
            self.event_at = self.deadline;
            q.schedule(self.deadline, ev);
            return false;
        }
        self.deadline = Time::NEVER;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xco_core::Dur;

    const EV: Event = Event::Probe(7);

    /// Pop every event, firing the timer; the times at which it fired.
    fn run(q: &mut EventQueue, t: &mut Timer) -> Vec<Time> {
        let mut fired = Vec::new();
        while let Some((now, ev)) = q.pop() {
            assert_eq!(ev, EV);
            if t.fire(q, now, ev) {
                fired.push(now);
            }
        }
        fired
    }

    fn at_us(us: u64) -> Time {
        Time::ZERO + Dur::from_us(us)
    }

    #[test]
    fn armed_later_fires_once_at_the_later_deadline() {
        let mut q = EventQueue::new();
        let mut t = Timer::IDLE;
        t.arm(&mut q, at_us(10), EV);
        t.arm(&mut q, at_us(30), EV);
        assert_eq!(q.len(), 1, "moving a deadline later schedules nothing");
        assert_eq!(run(&mut q, &mut t), vec![at_us(30)]);
        assert!(!t.is_armed());
    }

    #[test]
    fn cancelled_never_fires() {
        let mut q = EventQueue::new();
        let mut t = Timer::IDLE;
        t.arm(&mut q, at_us(10), EV);
        t.cancel();
        assert_eq!(run(&mut q, &mut t), Vec::<Time>::new());
    }

    #[test]
    fn armed_earlier_fires_at_the_earlier_deadline_only() {
        let mut q = EventQueue::new();
        let mut t = Timer::IDLE;
        t.arm(&mut q, at_us(30), EV);
        t.arm(&mut q, at_us(10), EV);
        assert_eq!(
            run(&mut q, &mut t),
            vec![at_us(10)],
            "the stale event at 30 is ignored"
        );
    }

    #[test]
    fn rearmed_after_firing_fires_again() {
        let mut q = EventQueue::new();
        let mut t = Timer::IDLE;
        t.arm(&mut q, at_us(10), EV);
        let (now, ev) = q.pop().unwrap();
        assert!(t.fire(&mut q, now, ev));
        t.arm(&mut q, at_us(20), EV);
        assert_eq!(run(&mut q, &mut t), vec![at_us(20)]);
    }

    #[test]
    fn arm_earlier_never_moves_a_deadline_later() {
        let mut q = EventQueue::new();
        let mut t = Timer::IDLE;
        t.arm_earlier(&mut q, at_us(20), EV);
        t.arm_earlier(&mut q, at_us(40), EV);
        assert_eq!(t.deadline(), at_us(20));
        t.arm_earlier(&mut q, at_us(5), EV);
        assert_eq!(run(&mut q, &mut t), vec![at_us(5)]);
    }
}
