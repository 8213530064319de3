//! Preempted transmissions that still drain: the links a preemption frees
//! stay admitted until the preempted slice would have ended.
//!
//! A local coordinator releases into its NIC every packet whose last frame
//! is off the wire by its slice's end (`Coordinator::may_release`), so at
//! any instant its NIC may hold up to the rest of the slice. When Algorithm
//! 1 moves a sender x to another destination (preemption), what x already
//! released for the old one keeps flowing over P_{x,old} until at most the
//! old slice's end — and longer still if the directive that moves x is
//! lost: x then sends on to the old destination until that end. So the
//! links x leaves (P_{x,old} − P_{x,new}) keep x's contribution until then
//! (the drain), and their end is a scheduling event that frees them (found
//! by the control-plane harness on the simulator's network: a link handed
//! over at once met the preempted sender's packets at the destination's
//! port and dropped them; docs/control-plane.md).
//!
//! The scheduler knows the old slice's end exactly (it set it), but not how
//! much of it the NIC still holds: the bound is the old slice's end, the
//! instant the links would have been freed had x not been preempted, so a
//! freed link changes hands exactly as at a slice end. Links x keeps
//! (P_{x,old} ∩ P_{x,new}) carry its old and new packets one after the
//! other through its own NIC, at most C_x together: they need no drain.
//!
//! A node that leaves the schedule in the middle of a slice (it leaves, or
//! its feedback stops) drains the same way, its whole path: a host whose
//! reports are lost still obeys the directive it has, and a host that
//! leaves may have released the rest of its slice (found by the same
//! harness: a timed-out host's link handed over at once met its slice).

use super::state::Flow;
use super::topology::{LinkId, SchedTopology};
use crate::time::Time;
use std::cmp::Ordering;

/// One preempted transmission: node `node` left `old` for `new` (a flow
/// without links if it left the schedule: a leave or a feedback timeout);
/// the links of `old` that `new` does not cross keep `contrib_bps` until
/// `end`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Drain {
    /// The preempted slice's end.
    pub end: Time,
    /// The preempted node.
    pub node: u32,
    /// What it added to alpha on the old path, bit/s.
    pub contrib_bps: u64,
    /// The flow it was sending on, and the one it was moved to.
    pub old: Flow,
    pub new: Flow,
}

impl Drain {
    /// The links the drain holds: P_{x,old} − P_{x,new}.
    pub fn links<'a>(&'a self, topo: &'a SchedTopology) -> impl Iterator<Item = LinkId> + 'a {
        let new = self.new.links(topo);
        self.old
            .links(topo)
            .iter()
            .copied()
            .filter(move |l| !new.contains(l))
    }
}

// a max-heap of drains pops the earliest end first (ties: the lower node)
impl PartialEq for Drain {
    fn eq(&self, other: &Drain) -> bool {
        (self.end, self.node) == (other.end, other.node)
    }
}

impl Eq for Drain {}

impl PartialOrd for Drain {
    fn partial_cmp(&self, other: &Drain) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Drain {
    fn cmp(&self, other: &Drain) -> Ordering {
        (other.end, other.node).cmp(&(self.end, self.node))
    }
}
