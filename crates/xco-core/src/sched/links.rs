//! The link table of Algorithm 1: per directed link the capacity not yet
//! admitted to alpha, |alpha|, and the reservation of a starving flow.
//!
//! The feasibility check is the innermost step of a slot boundary (every
//! backlogged host, every link of every backlogged path), and whether a
//! starving flow is behind an older one's reservation is asked of the same
//! links right after it. So everything the scheduler keeps of a link (free
//! capacity, the holder of a live reservation, |alpha|, the last
//! reservation) is one 32-byte record, half a cache line: one miss per link
//! at most, whichever of the two asks first. A sentinel record after the
//! last link pads short paths (see [`Links::fits`]).

use super::state::{Reservation, NOBODY};
use super::topology::LinkId;
use crate::time::Time;

/// One link: what the feasibility check reads (free capacity, the holder
/// of a live reservation), |alpha|, and the last reservation made of it.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Rec {
    /// C_ij minus the capacity admitted to alpha_ij, bit/s.
    free_bps: u64,
    /// The age of the flow of the last reservation.
    since: Time,
    /// Node whose starving flow holds a live reservation of the link, or
    /// `NOBODY` (no reservation, or one whose flow no longer waits).
    held_by: u32,
    /// The node and destination of the last reservation (`owner` is
    /// `NOBODY` if there is none).
    owner: u32,
    dest: u32,
    /// |alpha_ij|.
    senders: u32,
}

/// The link table. See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Links {
    rec: Vec<Rec>,
}

impl Links {
    /// Links of capacities `cap_bps`, all free, and after them the
    /// sentinel link (see [`SchedTopology::sentinel_link`](super::topology::SchedTopology::sentinel_link)).
    pub fn new(cap_bps: &[u64]) -> Links {
        let free = |c: u64| Rec {
            free_bps: c,
            since: Reservation::NONE.since,
            held_by: NOBODY,
            owner: Reservation::NONE.owner,
            dest: Reservation::NONE.dest,
            senders: 0,
        };
        Links {
            rec: cap_bps.iter().map(|&c| free(c)).chain([free(u64::MAX)]).collect(),
        }
    }

    /// Number of links (the sentinel not counted).
    pub fn len(&self) -> usize {
        self.rec.len() - 1
    }

    /// True if node `x`, sending nowhere, may contribute `c_bps` on every
    /// link of `path`: each is free enough and held by nobody or by x.
    /// Every link is checked, without early exit: a path has a handful of
    /// links, and a loop that leaves early mispredicts where it leaves. A
    /// path padded with the sentinel link (which fits anybody) has a fixed
    /// length, so the inlined loop is unrolled.
    #[inline]
    pub fn fits(&self, path: &[LinkId], x: u32, c_bps: u64) -> bool {
        let mut ok = true;
        for &l in path {
            let h = &self.rec[l as usize];
            ok &= (h.held_by == NOBODY) | (h.held_by == x);
            ok &= c_bps <= h.free_bps;
        }
        ok
    }

    /// Ask for the record of `l` ahead of a check.
    #[inline]
    pub fn prefetch(&self, l: LinkId) {
        if let Some(h) = self.rec.get(l as usize) {
            super::algorithm1::prefetch(h);
        }
    }

    /// Capacity of `l` not admitted to alpha, bit/s.
    #[inline]
    pub fn free_bps(&self, l: LinkId) -> u64 {
        self.rec[l as usize].free_bps
    }

    /// |alpha| of `l`.
    pub fn senders(&self, l: LinkId) -> u32 {
        self.rec[l as usize].senders
    }

    /// The node holding `l` for a starving flow, or `NOBODY`.
    #[inline]
    pub fn held_by(&self, l: LinkId) -> u32 {
        self.rec[l as usize].held_by
    }

    /// The last reservation made of `l` (live iff `held_by(l)` is not `NOBODY`).
    #[inline]
    pub fn res(&self, l: LinkId) -> Reservation {
        let h = &self.rec[l as usize];
        Reservation {
            owner: h.owner,
            dest: h.dest,
            since: h.since,
        }
    }

    /// Admit a sender contributing `c_bps` to alpha of `l`.
    #[inline]
    pub fn admit(&mut self, l: LinkId, c_bps: u64) {
        let h = &mut self.rec[l as usize];
        h.free_bps -= c_bps;
        h.senders += 1;
    }

    /// Remove a sender contributing `c_bps` from alpha of `l`.
    #[inline]
    pub fn withdraw(&mut self, l: LinkId, c_bps: u64) {
        let h = &mut self.rec[l as usize];
        h.free_bps += c_bps;
        h.senders -= 1;
    }

    /// Set the live holder of `l` (`NOBODY`: none), keeping its last reservation.
    #[inline]
    pub fn set_holder(&mut self, l: LinkId, x: u32) {
        self.rec[l as usize].held_by = x;
    }

    /// Reserve `l` for `res` (its owner holds it).
    #[inline]
    pub fn reserve(&mut self, l: LinkId, res: Reservation) {
        let h = &mut self.rec[l as usize];
        h.held_by = res.owner;
        (h.owner, h.dest, h.since) = (res.owner, res.dest, res.since);
    }

    /// End the reservation of `l`, live or not.
    #[inline]
    pub fn clear(&mut self, l: LinkId) {
        self.reserve(l, Reservation::NONE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reserved_link_fits_only_its_holder() {
        let mut t = Links::new(&[10, 20]);
        assert!(t.fits(&[0, 1], 7, 10) && !t.fits(&[0, 1], 7, 11));
        t.admit(0, 4);
        assert!(!t.fits(&[0], 7, 7) && t.fits(&[0], 7, 6));
        let r = Reservation {
            owner: 1,
            dest: 2,
            since: Time::ZERO,
        };
        t.reserve(1, r);
        assert!(!t.fits(&[1], 7, 1) && t.fits(&[1], 1, 20));
        t.set_holder(1, NOBODY);
        assert_eq!(t.res(1), r, "a lapsed reservation is kept");
        assert!(t.fits(&[1], 7, 20));
        // the sentinel (link 2) pads a path and fits anybody
        assert!(t.fits(&[1, 2, 2, 2, 2, 2], 7, 20) && !t.fits(&[0, 2, 2, 2, 2, 2], 7, 7));
        assert!(t.fits(&[2; 6], 7, u64::MAX) && t.len() == 2);
        t.withdraw(0, 4);
        t.clear(1);
        assert_eq!(
            (t.free_bps(0), t.senders(0), t.res(1)),
            (10, 0, Reservation::NONE)
        );
    }
}
