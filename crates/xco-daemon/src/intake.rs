//! A daemon's datagram intake: how many control datagrams its loop reads,
//! and when it stops reading.
//!
//! Both loops serve their timers (and the agent its packets) first, then
//! read datagrams in batches of at most [`crate::channel::BATCH`] (one
//! `recvmmsg`), checking the timer after each batch. Within one [`TICK`]
//! they read at most a budget of datagrams; a loop that spent it with more
//! waiting sets the socket aside (no longer watches it) until the next tick,
//! and sleeps until then or its timer, whichever is first. What the socket's
//! buffer cannot hold meanwhile, the kernel drops and counts
//! ([`crate::channel::ChannelStats::kernel_drops`]).
//!
//! Why a budget per tick and not only per batch: a loop that reads a flood
//! batch after batch is always runnable, and on a busy host the kernel's
//! scheduler preempts a task that uses its whole share; its timer then
//! fires late by a scheduling period, however often the loop looks at it.
//! A loop that sleeps most of each tick is woken at its deadline ahead of
//! the tasks that ran. The budget bounds the share of a core a flood can
//! take (64 a millisecond is about a tenth of a core: a controller reading
//! 58 k junk datagrams/s used 7 % of one on the test machine), and honest
//! traffic is well within it (see [`controller_budget`]).

use crate::channel::BATCH;
use xco_core::{Dur, Time};

/// The intake's period.
pub const TICK: Dur = Dur::from_ms(1);

/// A host's control datagrams to the controller per report interval the
/// controller's budget allows for (a report, joins, leaves, a report that
/// grew the backlog set between two periodic ones).
pub const DATAGRAMS_PER_HOST_PER_REPORT: u64 = 4;

/// The controller's budget per tick: at least one batch, and room for
/// [`DATAGRAMS_PER_HOST_PER_REPORT`] datagrams of each of `hosts` per
/// `report_interval` (a heartbeat every 8 ms from 3 hosts is 1.5 datagrams a
/// tick; from 1,000 hosts, 500).
///
/// Panics if `report_interval` is zero.
pub fn controller_budget(hosts: usize, report_interval: Dur) -> usize {
    assert!(report_interval > Dur::ZERO, "a report interval");
    let want = (hosts as u64 * DATAGRAMS_PER_HOST_PER_REPORT * TICK.ps()).div_ceil(report_interval.ps());
    (want as usize).max(BATCH)
}

/// Counters of an intake.
#[derive(Clone, Debug, Default)]
pub struct IntakeStats {
    /// Ticks that spent their budget with datagrams still waiting (the
    /// socket was set aside until the next tick).
    pub spent_ticks: u64,
    /// The most datagrams read in one batch (between two checks of the timer).
    pub largest_batch: u64,
}

/// A budget of datagrams per [`TICK`].
#[derive(Clone, Debug)]
pub struct Intake {
    per_tick: usize,
    tick_start: Time,
    left: usize,
    aside: bool,
    /// Counters.
    pub stats: IntakeStats,
}

impl Intake {
    /// An intake reading at most `per_tick` datagrams a tick.
    ///
    /// Panics if `per_tick` is zero.
    pub fn new(per_tick: usize) -> Intake {
        assert!(per_tick > 0, "a budget of at least one datagram a tick");
        Intake {
            per_tick,
            tick_start: Time::ZERO,
            left: per_tick,
            aside: false,
            stats: IntakeStats::default(),
        }
    }

    /// The budget per tick.
    pub fn per_tick(&self) -> usize {
        self.per_tick
    }

    fn roll(&mut self, now: Time) {
        if now >= self.tick_start + TICK {
            self.tick_start = now;
            self.left = self.per_tick;
        }
    }

    /// Datagrams the next read may take at `now` (at most one batch; 0 while
    /// the socket is set aside).
    pub fn allowance(&mut self, now: Time) -> usize {
        if self.aside {
            return 0;
        }
        self.roll(now);
        self.left.min(BATCH)
    }

    /// A read asked for `asked` datagrams and took `got`: spend them. True if
    /// the budget is gone and the socket may hold more (the read was full):
    /// the caller sets the socket aside until [`Intake::resumes_at`].
    pub fn spend(&mut self, asked: usize, got: usize) -> bool {
        self.left = self.left.saturating_sub(got);
        self.stats.largest_batch = self.stats.largest_batch.max(got as u64);
        if self.left == 0 && got == asked && got > 0 {
            self.aside = true;
            self.stats.spent_ticks += 1;
        }
        self.aside
    }

    /// When the socket set aside may be read again (`None`: it is watched).
    pub fn resumes_at(&self) -> Option<Time> {
        self.aside.then(|| self.tick_start + TICK)
    }

    /// True (once) if the socket was set aside and its tick ended at `now`:
    /// the caller watches it again.
    pub fn resume(&mut self, now: Time) -> bool {
        if !self.aside || now < self.tick_start + TICK {
            return false;
        }
        self.aside = false;
        self.roll(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_us(us: u64) -> Time {
        Time::ZERO + Dur::from_us(us)
    }

    #[test]
    fn a_tick_reads_its_budget_in_batches_then_sets_the_socket_aside() {
        let mut i = Intake::new(100);
        let t = at_us(5000);
        assert_eq!(i.allowance(t), BATCH);
        assert!(!i.spend(BATCH, BATCH));
        assert_eq!(i.allowance(t), 100 - BATCH);
        assert!(i.spend(100 - BATCH, 100 - BATCH), "spent, and more may wait");
        assert_eq!(i.allowance(t), 0);
        assert_eq!(i.resumes_at(), Some(t + TICK));
        assert!(!i.resume(at_us(5999)));
        assert!(i.resume(at_us(6000)));
        assert!(!i.resume(at_us(6000)), "once");
        assert_eq!(i.allowance(at_us(6000)), BATCH);
        assert_eq!((i.stats.spent_ticks, i.stats.largest_batch), (1, BATCH as u64));
    }

    #[test]
    fn a_socket_emptied_within_the_budget_stays_watched() {
        let mut i = Intake::new(BATCH);
        let t = at_us(0);
        assert_eq!(i.allowance(t), BATCH);
        assert!(!i.spend(BATCH, 10), "the read was short: nothing waits");
        assert_eq!(i.allowance(t), BATCH - 10);
        assert!(!i.spend(BATCH - 10, BATCH - 11));
        assert_eq!(i.resumes_at(), None);
        assert_eq!(i.stats.spent_ticks, 0);
        // the next tick starts with a full budget
        assert_eq!(i.allowance(t + TICK), BATCH);
    }

    #[test]
    fn the_controller_s_budget_grows_with_its_hosts_heartbeats() {
        let every = Dur::from_ms(8);
        assert_eq!(controller_budget(3, every), BATCH);
        assert_eq!(controller_budget(1000, every), 500);
        assert_eq!(controller_budget(1000, Dur::from_ms(1)), 4000);
    }
}
