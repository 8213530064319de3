//! The receive-window policy: what a receiver advertises in every segment's
//! `wnd` (RFC 9293 §3.8.6).
//!
//! Today's window is the free receive buffer ([`RcvWindow::Buffer`]): the
//! buffer minus out-of-order data held back. A policy may advertise less to
//! limit its senders — Linux's window clamp ([`RcvWindow::Clamp`]) now;
//! receiver-driven incast control (ICTCP, SICC-like schemes) later, as
//! further variants that keep their own state. The endpoint asks the policy
//! each time it stamps a segment.

use xco_core::Time;

/// How a receiver chooses its advertised window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RcvWindow {
    /// The free receive buffer.
    #[default]
    Buffer,
    /// The free receive buffer, but never more than `max_bytes` (Linux's
    /// `TCP_WINDOW_CLAMP`).
    Clamp {
        /// Largest window advertised, bytes.
        max_bytes: u64,
    },
}

/// What a policy sees when a segment is stamped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RcvState {
    /// When.
    pub now: Time,
    /// Receive buffer, bytes.
    pub rcv_buf_bytes: u64,
    /// Out-of-order bytes held in the buffer.
    pub ooo_bytes: u64,
}

impl RcvWindow {
    /// The window to advertise, bytes.
    #[inline]
    pub fn advertised_bytes(&self, s: &RcvState) -> u64 {
        let free_bytes = s.rcv_buf_bytes.saturating_sub(s.ooo_bytes);
        match *self {
            RcvWindow::Buffer => free_bytes,
            RcvWindow::Clamp { max_bytes } => free_bytes.min(max_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_minus_held_data_and_the_clamp_caps_it() {
        let s = RcvState {
            now: Time::ZERO,
            rcv_buf_bytes: 100_000,
            ooo_bytes: 30_000,
        };
        assert_eq!(RcvWindow::Buffer.advertised_bytes(&s), 70_000);
        let clamp = RcvWindow::Clamp { max_bytes: 5000 };
        assert_eq!(clamp.advertised_bytes(&s), 5000);
        let wide = RcvWindow::Clamp { max_bytes: 1 << 40 };
        assert_eq!(wide.advertised_bytes(&s), 70_000);
    }
}
