//! Slices on time: a directive takes effect at its start, not on receipt.
//!
//! The controller decides each slot its lead before the slot's boundary
//! (`SchedConfig::lead`) and sends directives that carry their start as a
//! delay after "now" at the sender (`Directive::start_in`). Clocks are
//! never compared across hosts: the receiver adds that delay to its own
//! clock at receipt ([`start_at`]) and keeps the directive pending until
//! then ([`Pending`]).
//!
//! Error model. A directive sent at controller time `t_s` for the start
//! `t_s + start_in` arrives after a one-way delay `d >= 0` and starts at
//! receipt + `start_in` = the controller's start + `d`: a gate opens **at
//! most one one-way delay late and never early**. A directive with
//! `start_in = 0` (the sender was already past the start, or the lead is
//! zero: the old behaviour) applies at once. One exception, bounded by the
//! lead: a slice for the destination the gate is open to continues the
//! current slice (the controller scheduled the same pair again at the
//! boundary), so the gate stays open from the current slice's end to the
//! new one's start instead of closing for the difference of two one-way
//! delays; that gap is at most `start_in`, so the gate is never open early
//! by more than the lead. A newer directive (higher epoch) supersedes the
//! pending ones that start at or after its start; those that start before
//! it take effect until it does.

use crate::sched::DirectiveKind;
use crate::time::{Dur, Time};

/// When a directive received at `receipt` with `start_in` starts on the receiver's clock.
#[inline]
pub fn start_at(receipt: Time, start_in: Dur) -> Time {
    receipt + start_in
}

/// A directive received before its start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// When it takes effect (receiver's clock).
    pub start: Time,
    /// Its epoch.
    pub epoch: u64,
    /// What it says (destinations in the driver's numbering).
    pub kind: DirectiveKind,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_is_receipt_plus_the_offset() {
        let r = Time::ZERO + Dur::from_us(700);
        assert_eq!(start_at(r, Dur::from_us(300)), Time::ZERO + Dur::from_ms(1));
        assert_eq!(start_at(r, Dur::ZERO), r, "no offset: at once");
        assert_eq!(start_at(Time::NEVER, Dur::from_ms(1)), Time::NEVER, "saturates");
    }
}
