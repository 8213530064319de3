//! The link table of Algorithm 1: per directed link the capacity not yet
//! admitted to alpha, |alpha|, and the reservation of a starving flow.
//!
//! The feasibility check is the innermost step of a slot boundary (every
//! backlogged host, every link of every backlogged path), so what it reads
//! of a link (free capacity, the holder of a live reservation) is one
//! 16-byte record in an array of its own, with |alpha|: at 16 bytes a link
//! the records of a k = 32 fat-tree (49,152 links) stay in the core's
//! cache. The reservations themselves, read only when a reservation is
//! made, taken over or served, are kept apart.

use super::state::{Reservation, NOBODY};
use super::topology::LinkId;

/// What the feasibility check reads of a link, and |alpha|.
#[derive(Clone, Copy, Debug)]
struct Hot {
    /// C_ij minus the capacity admitted to alpha_ij, bit/s.
    free_bps: u64,
    /// Node whose starving flow holds a live reservation of the link, or
    /// `NOBODY` (no reservation, or one whose flow no longer waits).
    held_by: u32,
    /// |alpha_ij|.
    senders: u32,
}

/// The link table. See the module documentation.
#[derive(Clone, Debug)]
pub(super) struct Links {
    hot: Vec<Hot>,
    /// Per link, the last reservation made of it by a starving flow (live
    /// iff `held_by` names its owner).
    res: Vec<Reservation>,
}

impl Links {
    /// Links of capacities `cap_bps`, all free, and after them the
    /// sentinel link (see [`SchedTopology::sentinel_link`](super::topology::SchedTopology::sentinel_link)).
    pub fn new(cap_bps: &[u64]) -> Links {
        let sentinel = Hot {
            free_bps: u64::MAX,
            held_by: NOBODY,
            senders: 0,
        };
        Links {
            hot: cap_bps
                .iter()
                .map(|&c| Hot {
                    free_bps: c,
                    held_by: NOBODY,
                    senders: 0,
                })
                .chain([sentinel])
                .collect(),
            res: vec![Reservation::NONE; cap_bps.len() + 1],
        }
    }

    /// Number of links (the sentinel not counted).
    pub fn len(&self) -> usize {
        self.hot.len() - 1
    }

    /// [`fits`](Self::fits) for a path padded with the sentinel link: a
    /// loop of fixed length, unrolled.
    #[inline]
    pub fn fits_padded(&self, path: &[LinkId; 6], x: u32, c_bps: u64) -> bool {
        let mut ok = true;
        for &l in path {
            let h = &self.hot[l as usize];
            ok &= ((h.held_by == NOBODY) | (h.held_by == x)) & (c_bps <= h.free_bps);
        }
        ok
    }

    /// True if node `x`, sending nowhere, may contribute `c_bps` on every
    /// link of `path`: each is free enough and held by nobody or by x.
    /// Every link is checked, without early exit: a path has a handful of
    /// links, and a loop that leaves early mispredicts where it leaves.
    #[inline]
    pub fn fits(&self, path: &[LinkId], x: u32, c_bps: u64) -> bool {
        let mut ok = true;
        for &l in path {
            let h = &self.hot[l as usize];
            ok &= (h.held_by == NOBODY) | (h.held_by == x);
            ok &= c_bps <= h.free_bps;
        }
        ok
    }

    /// Ask for the record of `l` ahead of a check.
    #[inline]
    pub fn prefetch(&self, l: LinkId) {
        if let Some(h) = self.hot.get(l as usize) {
            super::algorithm1::prefetch(h);
        }
    }

    /// Capacity of `l` not admitted to alpha, bit/s.
    #[inline]
    pub fn free_bps(&self, l: LinkId) -> u64 {
        self.hot[l as usize].free_bps
    }

    /// |alpha| of `l`.
    pub fn senders(&self, l: LinkId) -> u32 {
        self.hot[l as usize].senders
    }

    /// The node holding `l` for a starving flow, or `NOBODY`.
    #[inline]
    pub fn held_by(&self, l: LinkId) -> u32 {
        self.hot[l as usize].held_by
    }

    /// The last reservation made of `l` (live iff `held_by(l)` is not `NOBODY`).
    #[inline]
    pub fn res(&self, l: LinkId) -> Reservation {
        self.res[l as usize]
    }

    /// Admit a sender contributing `c_bps` to alpha of `l`.
    #[inline]
    pub fn admit(&mut self, l: LinkId, c_bps: u64) {
        let h = &mut self.hot[l as usize];
        h.free_bps -= c_bps;
        h.senders += 1;
    }

    /// Remove a sender contributing `c_bps` from alpha of `l`.
    #[inline]
    pub fn withdraw(&mut self, l: LinkId, c_bps: u64) {
        let h = &mut self.hot[l as usize];
        h.free_bps += c_bps;
        h.senders -= 1;
    }

    /// Set the live holder of `l` (`NOBODY`: none), keeping its last reservation.
    #[inline]
    pub fn set_holder(&mut self, l: LinkId, x: u32) {
        self.hot[l as usize].held_by = x;
    }

    /// Reserve `l` for `res` (its owner holds it).
    #[inline]
    pub fn reserve(&mut self, l: LinkId, res: Reservation) {
        self.hot[l as usize].held_by = res.owner;
        self.res[l as usize] = res;
    }

    /// End the reservation of `l`, live or not.
    #[inline]
    pub fn clear(&mut self, l: LinkId) {
        self.hot[l as usize].held_by = NOBODY;
        self.res[l as usize] = Reservation::NONE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Time;

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
        assert!(t.fits_padded(&[1, 2, 2, 2, 2, 2], 7, 20) && !t.fits_padded(&[0, 2, 2, 2, 2, 2], 7, 7));
        assert!(t.fits_padded(&[2; 6], 7, u64::MAX) && t.len() == 2);
        t.withdraw(0, 4);
        t.clear(1);
        assert_eq!(
            (t.free_bps(0), t.senders(0), t.res(1)),
            (10, 0, Reservation::NONE)
        );
    }
}
