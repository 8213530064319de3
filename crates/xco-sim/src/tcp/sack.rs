//! Selective acknowledgements (RFC 2018): the blocks a receiver reports and
//! the scoreboard a sender keeps of them.
//!
//! * [`SackBlocks`] is the receiver's side: which out-of-order ranges it
//!   reports, the range holding the most recent arrival first, then the most
//!   recently reported others (RFC 2018 §4), as Linux keeps them in
//!   `selective_acks[4]`. Three blocks fit beside the timestamps option,
//!   four without. A duplicate segment is reported once as a D-SACK block
//!   (RFC 2883): the duplicated range first, before the others, on the next
//!   ACK only. [`dsack_block`] is the sender's side of it (RFC 2883 §4):
//!   which block of an arriving ACK is a D-SACK.
//! * [`Scoreboard`] is the sender's side: the SACKed ranges above `snd_una`,
//!   sorted and merged, in a fixed array (nothing allocated on the packet
//!   path). When more holes exist than it has room for, the highest range is
//!   forgotten: a sender that forgets a SACK only retransmits more or counts
//!   more data in the pipe, never less — the safe side (RFC 2018 §8 lets a
//!   receiver renege on SACKed data, so a sender may never rely on it).
//!
//! The scoreboard answers RFC 6675's questions in time proportional to its
//! ranges, not to the window: `IsLost` (§4) is monotone in the sequence
//! number, so one boundary splits the unSACKed bytes into lost and not lost
//! ([`Scoreboard::lost_below`]), and `SetPipe` becomes two sums
//! ([`Scoreboard::pipe`]).

use crate::net::packet::{SackOption, MAX_SACK_BLOCKS};

/// The D-SACK block of an ACK of `ack` carrying `opt` (RFC 2883 §4, as
/// Linux's `tcp_check_dsack`): the first block, if it starts below the
/// cumulative ACK or lies inside the second block. `None` if there is none
/// (or the first block is empty or reversed: Linux ignores it as dubious).
pub fn dsack_block(opt: &SackOption, ack: u64) -> Option<(u64, u64)> {
    let blocks = opt.used();
    let &(s0, e0) = blocks.first()?;
    if s0 >= e0 {
        return None;
    }
    if s0 < ack {
        return Some((s0, e0));
    }
    match blocks.get(1) {
        Some(&(s1, e1)) if s0 >= s1 && e0 <= e1 => Some((s0, e0)),
        _ => None,
    }
}

/// The receiver's SACK blocks, most recently changed first.
#[derive(Clone, Copy, Debug, Default)]
pub struct SackBlocks {
    recent: [(u64, u64); MAX_SACK_BLOCKS],
    len: u8,
    /// A duplicate range to report first on the next ACK (RFC 2883).
    dsack: Option<(u64, u64)>,
}

impl SackBlocks {
    /// The out-of-order range `merged` (as now held, after merging) took the
    /// latest arrival: report it first; blocks it swallowed go.
    pub fn on_arrival(&mut self, merged: (u64, u64)) {
        let mut out = [(0, 0); MAX_SACK_BLOCKS];
        out[0] = merged;
        let mut n = 1;
        for &(s, e) in &self.recent[..self.len as usize] {
            let inside = s >= merged.0 && e <= merged.1;
            if !inside && n < MAX_SACK_BLOCKS {
                out[n] = (s, e);
                n += 1;
            }
        }
        self.recent = out;
        self.len = n as u8;
    }

    /// The cumulative ACK moved to `rcv_nxt`: blocks at or below it go.
    pub fn on_advance(&mut self, rcv_nxt: u64) {
        let mut n = 0;
        for i in 0..self.len as usize {
            let b = self.recent[i];
            if b.1 > rcv_nxt {
                self.recent[n] = b;
                n += 1;
            }
        }
        self.len = n as u8;
    }

    /// `[s, e)` arrived again (RFC 2883 §4): report it as a D-SACK block on
    /// the next ACK (a later duplicate before that ACK replaces it).
    pub fn on_duplicate(&mut self, s: u64, e: u64) {
        self.dsack = Some((s, e));
    }

    /// The D-SACK block went out: report it no more.
    #[inline]
    pub fn dsack_sent(&mut self) -> bool {
        self.dsack.take().is_some()
    }

    /// True if there is nothing to report.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0 && self.dsack.is_none()
    }

    /// The option to send, at most `max_blocks` blocks: the D-SACK block
    /// first if there is one, then the most recent blocks.
    pub fn option(&self, max_blocks: usize) -> SackOption {
        let mut o = SackOption::default();
        let mut n = 0;
        if let Some(d) = self.dsack {
            if max_blocks > 0 {
                o.blocks[0] = d;
                n = 1;
            }
        }
        let k = (self.len as usize).min(max_blocks.saturating_sub(n));
        o.blocks[n..n + k].copy_from_slice(&self.recent[..k]);
        o.len = (n + k) as u8;
        o
    }
}

/// Most SACKed ranges a sender's scoreboard tracks.
pub const SCOREBOARD_RANGES: usize = 32;

/// The sender's record of SACKed data above `snd_una`.
#[derive(Clone, Copy, Debug)]
pub struct Scoreboard {
    ranges: [(u64, u64); SCOREBOARD_RANGES],
    len: usize,
    /// Total SACKed bytes in `ranges`.
    sacked_bytes: u64,
}

impl Default for Scoreboard {
    fn default() -> Scoreboard {
        Scoreboard {
            ranges: [(0, 0); SCOREBOARD_RANGES],
            len: 0,
            sacked_bytes: 0,
        }
    }
}

impl Scoreboard {
    /// The SACKed ranges, ascending and disjoint.
    #[inline]
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges[..self.len]
    }

    /// Bytes SACKed above `snd_una`.
    #[inline]
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }

    /// True if nothing is SACKed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// One past the highest SACKed byte (`snd_una` if none).
    #[inline]
    pub fn highest_sacked(&self, snd_una: u64) -> u64 {
        if self.len == 0 {
            snd_una
        } else {
            self.ranges[self.len - 1].1
        }
    }

    /// Forget everything.
    pub fn clear(&mut self) {
        self.len = 0;
        self.sacked_bytes = 0;
    }

    /// Record block `[s, e)` (clipped to `(snd_una, snd_max]`); returns the
    /// bytes newly SACKed.
    pub fn add(&mut self, s: u64, e: u64, snd_una: u64, snd_max: u64) -> u64 {
        let s = s.max(snd_una);
        let e = e.min(snd_max);
        if s >= e {
            return 0; // below the cumulative ACK (a D-SACK) or never sent
        }
        // ranges [i, j) overlap or touch [s, e)
        let i = self.ranges[..self.len].partition_point(|r| r.1 < s);
        let j = self.ranges[..self.len].partition_point(|r| r.0 <= e);
        let (mut ns, mut ne) = (s, e);
        let mut removed = 0;
        for r in &self.ranges[i..j] {
            ns = ns.min(r.0);
            ne = ne.max(r.1);
            removed += r.1 - r.0;
        }
        if i == j {
            // a new range at i
            if self.len == SCOREBOARD_RANGES {
                if i == self.len {
                    return 0; // above everything kept: forget it
                }
                // forget the highest range to make room
                let (hs, he) = self.ranges[self.len - 1];
                self.sacked_bytes -= he - hs;
                self.len -= 1;
            }
            self.ranges.copy_within(i..self.len, i + 1);
            self.len += 1;
        } else if j - i > 1 {
            self.ranges.copy_within(j..self.len, i + 1);
            self.len -= j - i - 1;
        }
        self.ranges[i] = (ns, ne);
        let newly = (ne - ns) - removed;
        self.sacked_bytes += newly;
        newly
    }

    /// The cumulative ACK moved to `snd_una`: drop what it covers.
    pub fn advance(&mut self, snd_una: u64) {
        let mut k = 0;
        while k < self.len && self.ranges[k].1 <= snd_una {
            self.sacked_bytes -= self.ranges[k].1 - self.ranges[k].0;
            k += 1;
        }
        if k > 0 {
            self.ranges.copy_within(k..self.len, 0);
            self.len -= k;
        }
        if self.len > 0 && self.ranges[0].0 < snd_una {
            self.sacked_bytes -= snd_una - self.ranges[0].0;
            self.ranges[0].0 = snd_una;
        }
    }

    /// RFC 6675 `IsLost` as a boundary: every unSACKed byte below the
    /// returned sequence number is lost, none at or above it. A byte is lost
    /// when `dupthresh` SACKed ranges lie above it or more than
    /// `(dupthresh - 1) * mss` SACKed bytes do. `snd_una` if none is.
    pub fn lost_below(&self, snd_una: u64, mss: u64, dupthresh: u32) -> u64 {
        let limit = (dupthresh.max(1) as u64 - 1) * mss;
        let mut above = 0;
        for (k, r) in self.ranges[..self.len].iter().rev().enumerate() {
            above += r.1 - r.0;
            if above > limit || k + 1 >= dupthresh as usize {
                return r.0;
            }
        }
        snd_una
    }

    /// UnSACKed bytes in `[from, to)`.
    pub fn unsacked_in(&self, from: u64, to: u64) -> u64 {
        if from >= to {
            return 0;
        }
        let mut sacked = 0;
        for r in &self.ranges[..self.len] {
            let s = r.0.max(from);
            let e = r.1.min(to);
            if s < e {
                sacked += e - s;
            }
        }
        (to - from) - sacked
    }

    /// RFC 6675 `SetPipe`: for each unSACKed byte from `snd_una` to
    /// `snd_max`, one if it is not lost, plus one if it was retransmitted
    /// (below `high_rxt`, one past the highest retransmitted byte).
    pub fn pipe(&self, snd_una: u64, snd_max: u64, high_rxt: u64, lost_below: u64) -> u64 {
        self.unsacked_in(lost_below.max(snd_una), snd_max) + self.unsacked_in(snd_una, high_rxt.min(snd_max))
    }

    /// The first unSACKed byte at or above `from` and below `to`, and the
    /// end of its hole (the next SACKed range, or `to`).
    pub fn first_hole(&self, from: u64, to: u64) -> Option<(u64, u64)> {
        let mut s = from;
        for r in &self.ranges[..self.len] {
            if r.1 <= s {
                continue;
            }
            if r.0 > s {
                break;
            }
            s = r.1; // inside a SACKed range: skip it
        }
        if s >= to {
            return None;
        }
        let end = self.ranges[..self.len]
            .iter()
            .find(|r| r.0 > s)
            .map_or(to, |r| r.0.min(to));
        Some((s, end))
    }

    /// The end of the SACKed range holding byte `seq`, if it is SACKed.
    #[inline]
    pub fn sacked_until(&self, seq: u64) -> Option<u64> {
        self.ranges[..self.len]
            .iter()
            .find(|r| r.0 <= seq && seq < r.1)
            .map(|r| r.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_receiver_reports_the_latest_block_first_and_drops_swallowed_ones() {
        let mut b = SackBlocks::default();
        b.on_arrival((10, 20));
        b.on_arrival((30, 40));
        assert_eq!(b.option(4).used(), &[(30, 40), (10, 20)]);
        b.on_arrival((10, 40)); // the gap filled: one block
        assert_eq!(b.option(4).used(), &[(10, 40)]);
        b.on_arrival((50, 60));
        b.on_arrival((70, 80));
        b.on_arrival((90, 100));
        b.on_arrival((110, 120));
        assert_eq!(
            b.option(3).used(),
            &[(110, 120), (90, 100), (70, 80)],
            "three beside timestamps"
        );
        assert_eq!(b.option(4).len, 4);
        b.on_advance(95);
        assert_eq!(b.option(4).used(), &[(110, 120), (90, 100)]);
    }

    #[test]
    fn a_duplicate_is_reported_first_once_as_a_d_sack_block() {
        let mut b = SackBlocks::default();
        b.on_duplicate(0, 10); // below the cumulative ACK
        assert!(!b.is_empty());
        assert_eq!(b.option(3).used(), &[(0, 10)]);
        assert!(b.dsack_sent());
        assert!(b.is_empty() && !b.dsack_sent(), "once");
        for r in [(30, 40), (50, 60), (70, 80)] {
            b.on_arrival(r);
        }
        b.on_duplicate(50, 60); // a duplicate of held out-of-order data
        assert_eq!(
            b.option(3).used(),
            &[(50, 60), (70, 80), (50, 60)],
            "D-SACK first, then the latest blocks, three in all"
        );
        assert_eq!(b.option(4).len, 4);
    }

    fn opt(blocks: &[(u64, u64)]) -> SackOption {
        let mut o = SackOption::default();
        o.blocks[..blocks.len()].copy_from_slice(blocks);
        o.len = blocks.len() as u8;
        o
    }

    #[test]
    fn a_first_block_below_the_cumulative_ack_is_a_d_sack() {
        // RFC 2883 §4.1.1: a duplicate of acknowledged data, alone or before others
        assert_eq!(dsack_block(&opt(&[(10, 20)]), 30), Some((10, 20)));
        assert_eq!(dsack_block(&opt(&[(10, 20), (40, 50)]), 30), Some((10, 20)));
        // partly below (a segment straddling rcv_nxt): its start decides
        assert_eq!(dsack_block(&opt(&[(25, 35), (40, 50)]), 30), Some((25, 35)));
        // an ordinary SACK: above the cumulative ACK, not inside the next block
        assert_eq!(dsack_block(&opt(&[(40, 50)]), 30), None);
        assert_eq!(dsack_block(&opt(&[(60, 70), (40, 50)]), 30), None);
        assert_eq!(
            dsack_block(&opt(&[(30, 40)]), 30),
            None,
            "starting at the ACK: not below it"
        );
    }

    #[test]
    fn a_first_block_inside_the_second_is_a_d_sack() {
        // RFC 2883 §4.1.2-4.1.3: a duplicate of out-of-order data the receiver holds
        assert_eq!(dsack_block(&opt(&[(50, 60), (40, 70)]), 30), Some((50, 60)));
        assert_eq!(
            dsack_block(&opt(&[(40, 70), (40, 70)]), 30),
            Some((40, 70)),
            "the whole block"
        );
        // overlapping but sticking out on either side: not inside
        assert_eq!(dsack_block(&opt(&[(35, 60), (40, 70)]), 30), None);
        assert_eq!(dsack_block(&opt(&[(50, 75), (40, 70)]), 30), None);
        // only the second block counts (RFC 2883 §4: the first block is the D-SACK)
        assert_eq!(dsack_block(&opt(&[(90, 95), (40, 70), (80, 100)]), 30), None);
        // nothing, or an empty block: none
        assert_eq!(dsack_block(&opt(&[]), 30), None);
        assert_eq!(dsack_block(&opt(&[(20, 20)]), 30), None);
    }

    #[test]
    fn the_receiver_s_d_sack_blocks_are_recognised_by_the_sender_s_rule() {
        // what SackBlocks sends for both kinds of duplicate, read back
        let mut b = SackBlocks::default();
        b.on_duplicate(0, 10);
        assert_eq!(dsack_block(&b.option(3), 10), Some((0, 10)));
        b.dsack_sent();
        for r in [(30, 40), (50, 60)] {
            b.on_arrival(r);
        }
        assert_eq!(dsack_block(&b.option(3), 10), None, "plain SACK blocks");
        b.on_duplicate(50, 60);
        assert_eq!(dsack_block(&b.option(3), 10), Some((50, 60)));
    }

    #[test]
    fn blocks_merge_and_the_cumulative_ack_trims() {
        let mut sb = Scoreboard::default();
        assert_eq!(sb.add(30, 40, 0, 100), 10);
        assert_eq!(sb.add(10, 20, 0, 100), 10);
        assert_eq!(sb.add(15, 35, 0, 100), 10, "only the gap is new");
        assert_eq!(sb.ranges(), &[(10, 40)]);
        assert_eq!(sb.add(60, 200, 0, 100), 40, "clipped to snd_max");
        assert_eq!(sb.add(0, 5, 5, 100), 0, "below snd_una: a D-SACK");
        sb.advance(20);
        assert_eq!(sb.ranges(), &[(20, 40), (60, 100)]);
        assert_eq!(sb.sacked_bytes(), 60);
        sb.advance(50);
        assert_eq!(sb.ranges(), &[(60, 100)]);
        assert_eq!(sb.first_hole(50, 100), Some((50, 60)));
        assert_eq!(sb.first_hole(60, 100), None);
    }

    #[test]
    fn a_full_scoreboard_forgets_its_highest_range() {
        let mut sb = Scoreboard::default();
        for k in 0..SCOREBOARD_RANGES as u64 {
            sb.add(10 * k + 5, 10 * k + 10, 0, 10_000);
        }
        assert_eq!(sb.add(1000, 1005, 0, 10_000), 0, "no room above");
        assert_eq!(sb.add(1, 2, 0, 10_000), 1);
        assert_eq!(sb.ranges().len(), SCOREBOARD_RANGES);
        assert_eq!(sb.ranges()[0], (1, 2));
        assert_eq!(sb.highest_sacked(0), 10 * (SCOREBOARD_RANGES as u64 - 2) + 10);
        let sum: u64 = sb.ranges().iter().map(|r| r.1 - r.0).sum();
        assert_eq!(sb.sacked_bytes(), sum);
    }

    /// RFC 6675 SetPipe, octet by octet, as the RFC writes it.
    fn pipe_by_octet(sb: &Scoreboard, una: u64, max: u64, high_rxt: u64, mss: u64, d: u32) -> u64 {
        let mut pipe = 0;
        for s in una..max {
            if sb.sacked_until(s).is_some() {
                continue;
            }
            let above: u64 = sb
                .ranges()
                .iter()
                .map(|r| r.1.saturating_sub(r.0.max(s + 1)))
                .sum();
            let ranges_above = sb.ranges().iter().filter(|r| r.0 > s).count();
            let lost = above > (d as u64 - 1) * mss || ranges_above >= d as usize;
            if !lost {
                pipe += 1;
            }
            if s < high_rxt {
                pipe += 1;
            }
        }
        pipe
    }

    #[test]
    fn pipe_follows_rfc_6675_set_pipe_octet_by_octet() {
        let mss = 10;
        // holes at [0,10), [20,30), [50,60), [90,120); SACKed between
        let mut sb = Scoreboard::default();
        for (s, e) in [(10, 20), (30, 50), (60, 90)] {
            sb.add(s, e, 0, 150);
        }
        for high_rxt in [0, 10, 30, 60, 150] {
            for d in [1, 2, 3, 4] {
                let lb = sb.lost_below(0, mss, d);
                assert_eq!(
                    sb.pipe(0, 150, high_rxt, lb),
                    pipe_by_octet(&sb, 0, 150, high_rxt, mss, d),
                    "high_rxt {high_rxt}, dupthresh {d}"
                );
            }
        }
        // DupThresh 3 (more than 2 MSS = 20 bytes): the 30 bytes SACKed above
        // the hole [50,60) make it and every hole below lost, [90,150) is not
        assert_eq!(sb.lost_below(0, mss, 3), 60);
        assert_eq!(sb.pipe(0, 150, 0, 60), 60);
        // DupThresh 4 (30 bytes): [60,90) alone is not enough, with [30,50) it is
        assert_eq!(sb.lost_below(0, mss, 4), 30);
    }
}
