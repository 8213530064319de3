//! What loss recovery ([`super::recovery`]: NewReno's, and SACK's in
//! [`super::sack_recovery`]) works on: the segment to resend, the sender
//! state the endpoint lends it, and the step it answers an ACK with.

use super::cc::Window;

/// A segment to (re)send: `len_bytes` from byte `seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First byte.
    pub seq: u64,
    /// Length, bytes (never zero).
    pub len_bytes: u64,
}

/// The sender state loss recovery reads and changes, lent by the endpoint.
pub struct LossCtx<'a> {
    /// Congestion window and threshold.
    pub win: &'a mut Window,
    /// In fast recovery.
    pub in_recovery: &'a mut bool,
    /// One past the highest byte sent when recovery (or a timeout) began.
    pub recover: &'a mut u64,
    /// Oldest unacknowledged byte (after the ACK at hand).
    pub snd_una: u64,
    /// One past the highest byte ever sent.
    pub snd_max: u64,
}

impl LossCtx<'_> {
    /// The first unacknowledged segment, if any byte is outstanding.
    #[inline]
    pub(super) fn head(&self) -> Option<Segment> {
        let len_bytes = self.win.mss.min(self.snd_max - self.snd_una);
        (len_bytes > 0).then_some(Segment {
            seq: self.snd_una,
            len_bytes,
        })
    }
}

/// What the endpoint does after an ACK of new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewAckStep {
    /// Retransmit this segment now.
    pub retransmit: Option<Segment>,
    /// Restart the retransmission timer (if data is still outstanding).
    pub restart_rto: bool,
}
