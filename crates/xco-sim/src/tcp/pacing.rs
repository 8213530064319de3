//! The pacing hook: when the sender may hand its next segment to egress.
//!
//! The endpoint asks [`Pacer::hold_until`] before each new data segment it
//! would send; an answer means "not before then", and the endpoint arms its
//! pacing [`crate::engine::Timer`] and sends again when it fires. After
//! sending it calls [`Pacer::on_send`]. Without pacing ([`Pacer::Off`], the
//! default) both are a single predictable branch. Retransmissions of loss
//! recovery are not paced (as in Linux, they go out at once).
//!
//! [`Pacer::Rate`] is Linux's TCP pacing: a rate of `gain x cwnd / SRTT`,
//! the gain 200% in slow start and 120% in congestion avoidance (the
//! `tcp_pacing_ss_ratio` / `tcp_pacing_ca_ratio` defaults), each segment
//! leaving `frame bytes / rate` after the previous one (earliest departure
//! time, as `tcp_wstamp_ns`). The endpoint refreshes the rate from its window
//! and SRTT before it sends ([`RatePacer::update`]); before the first RTT
//! sample it does not pace. Other algorithms (BBR's rate, XCo-aware pacing)
//! implement [`PacingPolicy`].

use xco_core::{Dur, Time};

/// Pacing gain in slow start, percent (Linux `tcp_pacing_ss_ratio`).
pub const SS_GAIN_PERCENT: u64 = 200;
/// Pacing gain in congestion avoidance, percent (Linux `tcp_pacing_ca_ratio`).
pub const CA_GAIN_PERCENT: u64 = 120;

/// Linux-style rate pacing.
#[derive(Clone, Copy, Debug, Default)]
pub struct RatePacer {
    /// Bytes per second; 0: not pacing (no RTT yet).
    pub rate_bytes_per_s: u64,
    /// The earliest time the next segment may leave.
    pub next_at: Time,
}

impl RatePacer {
    /// Set the rate from the window `cwnd_bytes`, `ssthresh_bytes` and `srtt`.
    #[inline(never)]
    pub fn update(&mut self, cwnd_bytes: u64, ssthresh_bytes: u64, srtt: Option<Dur>) {
        let gain = if cwnd_bytes < ssthresh_bytes {
            SS_GAIN_PERCENT
        } else {
            CA_GAIN_PERCENT
        };
        self.rate_bytes_per_s = match srtt {
            Some(s) if s.ps() > 0 => (cwnd_bytes as u128 * gain as u128 * 10_000_000_000 / s.ps() as u128)
                .min(u64::MAX as u128) as u64,
            _ => 0,
        };
    }

    /// A segment of `frame_bytes` left at `now`.
    #[inline(never)]
    pub fn on_send(&mut self, now: Time, frame_bytes: u32) {
        if self.rate_bytes_per_s > 0 {
            self.next_at = self.next_at.max(now) + self.gap(frame_bytes);
        }
    }

    /// Time `frame_bytes` take at the rate.
    #[inline]
    pub fn gap(&self, frame_bytes: u32) -> Dur {
        Dur((frame_bytes as u128 * 1_000_000_000_000 / self.rate_bytes_per_s.max(1) as u128) as u64)
    }
}

/// A pacing algorithm.
pub trait PacingPolicy {
    /// The earliest time a segment of `frame_bytes` may leave (`now` or earlier: at once).
    fn release_at(&self, now: Time, frame_bytes: u32) -> Time;
    /// A segment of `frame_bytes` left at `now`.
    fn on_send(&mut self, now: Time, frame_bytes: u32);
}

/// Whether and how an endpoint paces.
#[derive(Default)]
pub enum Pacer {
    /// Send as soon as the window and egress allow.
    #[default]
    Off,
    /// `gain x cwnd / SRTT`, as Linux.
    Rate(RatePacer),
    /// A boxed algorithm (experiments and tests).
    Custom(Box<dyn PacingPolicy + Send>),
}

impl std::fmt::Debug for Pacer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pacer::Off => f.write_str("Off"),
            Pacer::Rate(r) => r.fmt(f),
            Pacer::Custom(_) => f.write_str("Custom"),
        }
    }
}

impl Pacer {
    /// `Some(t)` if a segment of `frame_bytes` must wait until `t > now`.
    #[inline]
    pub fn hold_until(&self, now: Time, frame_bytes: u32) -> Option<Time> {
        match self {
            Pacer::Off => None,
            Pacer::Rate(r) => (r.rate_bytes_per_s > 0 && r.next_at > now).then_some(r.next_at),
            Pacer::Custom(p) => Some(p.release_at(now, frame_bytes)).filter(|&t| t > now),
        }
    }

    /// A segment of `frame_bytes` left at `now`.
    #[inline]
    pub fn on_send(&mut self, now: Time, frame_bytes: u32) {
        match self {
            Pacer::Off => {}
            Pacer::Rate(r) => r.on_send(now, frame_bytes),
            Pacer::Custom(p) => p.on_send(now, frame_bytes),
        }
    }
}
