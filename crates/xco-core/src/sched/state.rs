//! The scheduler's per-node records and reservations, laid out for Algorithm 1.
//!
//! At a slot boundary one run considers every backlogged host, so what it
//! reads of a node (its flows with their paths, its destination, its
//! timers) is one record of three cache lines (the links are in
//! `links`). What only the input handlers and the accessors need is kept
//! apart.

use super::topology::{LinkId, PathRef, SchedTopology, SHORT_PATH_LINKS};
use crate::time::Time;

/// "No node" in a `u32` node field.
pub(super) const NOBODY: u32 = u32::MAX;

/// Links of a path kept inside the flow record (longer paths stay in the
/// topology's arena): a fat-tree path has at most six.
const INLINE_LINKS: usize = SHORT_PATH_LINKS;

/// `Flow::len` of a path kept in the topology's arena.
const IN_ARENA: u8 = u8::MAX;

/// `Flow::history` of a destination not in the node's service history.
pub(super) const NOT_SERVED: u8 = u8::MAX;

/// Entries of a node's service history (the oldest are forgotten).
pub(super) const HISTORY: usize = 64;

/// One backlogged V2V flow of a node: a destination in B_x, its age and P_xd.
#[derive(Clone, Copy, Debug)]
pub(super) struct Flow {
    /// The destination host.
    pub dest: u32,
    /// Number of links in P_xd, or `IN_ARENA`.
    len: u8,
    /// Index of the destination's entry in the node's service history
    /// (`NodeMeta::served`), or `NOT_SERVED`. While the flow is backlogged
    /// its `wait` is that entry's time (the entry is updated when the flow
    /// leaves B_x).
    pub history: u8,
    /// Age: when the flow's last slice began, or when it became backlogged if
    /// it was never served.
    pub wait: Time,
    /// P_xd if it has at most `INLINE_LINKS` links; else its arena reference
    /// (start, len) in the first two.
    links: [LinkId; INLINE_LINKS],
}

impl Default for Flow {
    fn default() -> Flow {
        Flow {
            dest: 0,
            len: 0,
            history: NOT_SERVED,
            wait: Time::ZERO,
            links: [0; INLINE_LINKS],
        }
    }
}

impl Flow {
    /// The flow to `dest` along `path`, aged `wait`, with its entry
    /// `history` in the node's service history. A short path is copied in
    /// (its reference holds only until the topology's next lookup).
    pub fn new(dest: u32, wait: Time, history: u8, path: PathRef, topo: &SchedTopology) -> Flow {
        let l = topo.links(path);
        // unused entries name the sentinel link, which always fits
        let mut links = [topo.sentinel_link(); INLINE_LINKS];
        let len = if l.len() <= INLINE_LINKS {
            links[..l.len()].copy_from_slice(l);
            l.len() as u8
        } else {
            let (start, len) = path.to_raw();
            links[0] = start;
            links[1] = len;
            IN_ARENA
        };
        Flow {
            dest,
            len,
            history,
            wait,
            links,
        }
    }

    /// P_xd.
    #[inline]
    pub fn links<'a>(&'a self, topo: &'a SchedTopology) -> &'a [LinkId] {
        if self.len == IN_ARENA {
            topo.links(PathRef::from_raw(self.links[0], self.links[1]))
        } else {
            &self.links[..self.len as usize]
        }
    }

    /// P_xd padded to `INLINE_LINKS` links with the topology's sentinel
    /// link (which every check passes), if it is kept in the record: a
    /// check of all of them is a loop of fixed length.
    #[inline]
    pub fn padded_links(&self) -> Option<&[LinkId; INLINE_LINKS]> {
        (self.len != IN_ARENA).then_some(&self.links)
    }

    /// True if there is a path to the destination.
    #[inline]
    pub fn routed(&self) -> bool {
        self.len > 0
    }
}

/// Flows kept inside the node record (more spill to the heap): most hosts
/// have a few backlogged destinations, and Algorithm 1 reads them all.
const INLINE_FLOWS: usize = 3;

/// A node's flows: a few inline, more on the heap. Derefs to a slice.
#[derive(Clone, Debug)]
pub(super) enum Flows {
    Inline(u8, [Flow; INLINE_FLOWS]),
    Heap(Vec<Flow>),
}

impl Default for Flows {
    fn default() -> Flows {
        Flows::Inline(0, [Flow::default(); INLINE_FLOWS])
    }
}

impl Flows {
    /// How many flows (without building the slice).
    #[inline]
    pub fn count(&self) -> usize {
        match self {
            Flows::Inline(n, _) => *n as usize,
            Flows::Heap(v) => v.len(),
        }
    }

    /// Replace the flows by `fs`.
    pub fn set(&mut self, fs: &[Flow]) {
        match self {
            Flows::Heap(v) if fs.len() > INLINE_FLOWS => {
                v.clear();
                v.extend_from_slice(fs);
            }
            _ if fs.len() > INLINE_FLOWS => *self = Flows::Heap(fs.to_vec()),
            _ => {
                let mut buf = [Flow::default(); INLINE_FLOWS];
                buf[..fs.len()].copy_from_slice(fs);
                *self = Flows::Inline(fs.len() as u8, buf);
            }
        }
    }
}

impl std::ops::Deref for Flows {
    type Target = [Flow];
    #[inline]
    fn deref(&self) -> &[Flow] {
        match self {
            Flows::Inline(n, buf) => &buf[..*n as usize],
            Flows::Heap(v) => v,
        }
    }
}

impl std::ops::DerefMut for Flows {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Flow] {
        match self {
            Flows::Inline(n, buf) => &mut buf[..*n as usize],
            Flows::Heap(v) => v,
        }
    }
}

/// What Algorithm 1 and the timers read of a node: one record of three
/// cache lines.
///
/// The fields are in declared order (`repr(C)`): the scalars first, so that
/// the passes over all nodes (the scan for waiting hosts, the keep-alive
/// tick, eligibility) and the check of an expiring slice read the first
/// cache line only; the flows follow.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub(super) struct Node {
    /// D_x (its flow in `flows` holds P_{x,D_x}).
    pub dest: Option<u32>,
    /// Round-robin pointer into `flows`.
    pub rot: u32,
    /// Registered with the controller.
    pub joined: bool,
    /// Scheduled in the current run of Algorithm 1 (the set N).
    pub in_n: bool,
    /// When x began sending to D_x.
    pub active_since: Time,
    /// When x was last sent a directive.
    pub last_directive: Time,
    /// What x adds to alpha on its path, bit/s.
    pub contrib_bps: u64,
    /// When x's current slice ends.
    pub expires: Time,
    /// B_x with paths and ages, sorted by destination.
    pub flows: Flows,
    /// Directives sent to x.
    pub epoch: u64,
}

impl Node {
    /// Age key of the node for the affected set: its oldest waiting flow
    /// (the one it is sending to does not wait); `now` if none waits.
    #[inline]
    pub fn oldest_wait(&self, now: Time) -> Time {
        let mut w = Time::NEVER;
        let mut any = false;
        for f in self.flows.iter() {
            if Some(f.dest) != self.dest {
                any = true;
                w = w.min(f.wait);
            }
        }
        if any {
            w
        } else {
            now
        }
    }
}

/// What the input handlers and the accessors need of a node.
#[derive(Clone, Debug, Default)]
pub(super) struct NodeMeta {
    /// B_x, sorted (the destinations of `Node::flows`).
    pub backlog: Vec<u32>,
    /// The service history: when service of each destination last began
    /// (kept across give-backs and re-reports; the oldest entries are
    /// forgotten beyond `HISTORY`). The entry of a backlogged flow is stale:
    /// the flow's `wait` holds its time.
    pub served: Vec<(u32, Time)>,
    pub last_feedback: Time,
    pub rates: Vec<(u32, u64)>,
}

/// The last reservation made of a link by a starving flow.
///
/// It holds (the link's `held_by` names `owner`) while the flow waits, i.e.
/// while `dest` is in B_owner; it lapses while the flow is out of the
/// backlog and holds again if the flow comes back before another flow takes
/// the link over; it ends when the flow is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Reservation {
    /// The reserving node, or `NOBODY`.
    pub owner: u32,
    /// The destination of its starving flow.
    pub dest: u32,
    /// The flow's age.
    pub since: Time,
}

impl Reservation {
    /// No reservation.
    pub const NONE: Reservation = Reservation {
        owner: NOBODY,
        dest: 0,
        since: Time::ZERO,
    };

    /// True if this is the reservation of node `x`'s flow to `d`.
    #[inline]
    pub fn of(&self, x: u32, d: u32) -> bool {
        self.owner == x && self.dest == d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_fill_whole_cache_lines() {
        assert_eq!(std::mem::size_of::<Flow>(), 40);
        assert_eq!(std::mem::size_of::<Node>(), 192);
    }
}
