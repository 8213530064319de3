//! Stopping a run from outside, and watching how far it got.
//!
//! A [`RunControl`] is shared (behind an `Arc`) between the thread that runs
//! a simulation and any other thread: a Python main thread that received
//! Ctrl-C, a progress display. The driver ([`crate::sim::Sim::run`]) reads
//! its stop flag before each event (one relaxed load of a byte that stays
//! in the cache; nothing is written, allocated or called) and stops with
//! `stop_reason = "interrupted"` once [`RunControl::stop`] was called: within
//! one event, even where one event takes long (a wake-up of 100,000 blocked
//! senders). Every [`CHECK_EVERY`] events it publishes the simulated time,
//! events and packet-hops so far. A run that is never stopped does exactly
//! the same work as one without a control: its results are byte-identical.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use xco_core::Time;

/// Events between two progress reports (a power of two).
pub const CHECK_EVERY: u64 = 4096;

/// A stop request and the progress of one run (or of every run of a sweep).
#[derive(Debug, Default)]
pub struct RunControl {
    stop: AtomicBool,
    started: AtomicBool,
    now_ps: AtomicU64,
    end_ps: AtomicU64,
    end_is_duration: AtomicBool,
    events: AtomicU64,
    packet_hops: AtomicU64,
}

/// What a [`RunControl`] last heard from its run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The run loop has started (building the network is over).
    pub started: bool,
    /// Simulated time reached.
    pub now: Time,
    /// The simulated time at which the run stops at the latest.
    pub end: Time,
    /// True if `end` is the scenario's `run.duration_ms`; false if it is only
    /// the longest simulated time a run may take (the run then ends when
    /// its applications finish, usually much earlier).
    pub end_is_duration: bool,
    /// Events handled.
    pub events: u64,
    /// Data packets that crossed a link.
    pub packet_hops: u64,
    /// A stop was asked for.
    pub stop_requested: bool,
}

impl RunControl {
    /// A control nobody has stopped.
    pub fn new() -> RunControl {
        RunControl::default()
    }

    /// Ask every run watching this control to stop at its next check.
    pub fn stop(&self) {
        self.stop.store(true, Relaxed);
    }

    /// True once [`RunControl::stop`] was called.
    #[inline]
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Relaxed)
    }

    /// Record when the run ends at the latest (`is_duration`: the scenario's
    /// duration, not only the longest run allowed).
    pub fn set_end(&self, end: Time, is_duration: bool) {
        self.end_ps.store(end.ps(), Relaxed);
        self.end_is_duration.store(is_duration, Relaxed);
    }

    /// Publish the run's state (called by the driver at each check).
    pub fn publish(&self, now: Time, events: u64, packet_hops: u64) {
        self.now_ps.store(now.ps(), Relaxed);
        self.events.store(events, Relaxed);
        self.packet_hops.store(packet_hops, Relaxed);
        self.started.store(true, Relaxed);
    }

    /// The last published state.
    pub fn progress(&self) -> Progress {
        Progress {
            started: self.started.load(Relaxed),
            now: Time(self.now_ps.load(Relaxed)),
            end: Time(self.end_ps.load(Relaxed)),
            end_is_duration: self.end_is_duration.load(Relaxed),
            events: self.events.load(Relaxed),
            packet_hops: self.packet_hops.load(Relaxed),
            stop_requested: self.stop_requested(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_is_seen_and_progress_reads_back_what_was_published() {
        let c = RunControl::new();
        assert!(!c.stop_requested() && !c.progress().started);
        c.set_end(Time(5_000), true);
        c.publish(Time(1_000), 10, 3);
        c.stop();
        let p = c.progress();
        assert!(p.started && p.stop_requested && p.end_is_duration);
        assert_eq!(
            (p.now, p.end, p.events, p.packet_hops),
            (Time(1_000), Time(5_000), 10, 3)
        );
    }
}
