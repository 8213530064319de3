//! The pacing hook: when the sender may hand its next segment to egress.
//!
//! The endpoint asks [`Pacer::hold_until`] before each new data segment it
//! would send; an answer means "not before then", and the endpoint arms its
//! pacing [`crate::engine::Timer`] and sends again when it fires. After
//! sending it calls [`Pacer::on_send`]. Without pacing ([`Pacer::Off`], the
//! default) both are a single predictable branch. Retransmissions of loss
//! recovery are not paced (as in Linux, they go out at once).
//!
//! A pacing algorithm (a rate from the congestion control, as BBR and
//! Linux's `sk_pacing_rate`; XCo-aware pacing) implements [`PacingPolicy`];
//! built-in ones will become variants of [`Pacer`].

use xco_core::Time;

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
    /// A boxed algorithm (experiments and tests).
    Custom(Box<dyn PacingPolicy + Send>),
}

impl std::fmt::Debug for Pacer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pacer::Off => f.write_str("Off"),
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
            Pacer::Custom(p) => Some(p.release_at(now, frame_bytes)).filter(|&t| t > now),
        }
    }

    /// A segment of `frame_bytes` left at `now`.
    #[inline]
    pub fn on_send(&mut self, now: Time, frame_bytes: u32) {
        match self {
            Pacer::Off => {}
            Pacer::Custom(p) => p.on_send(now, frame_bytes),
        }
    }
}
