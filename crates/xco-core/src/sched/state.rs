//! The scheduler's per-node and per-link records, laid out for Algorithm 1:
//! what one run reads for a node or a link sits together, what only the
//! input handlers and accessors need is kept apart.

use super::topology::PathRef;
use crate::time::Time;

/// "No node" in a `u32` node field.
pub(super) const NOBODY: u32 = u32::MAX;

/// One backlogged V2V flow of a node: a destination in B_x.
#[derive(Clone, Copy, Debug)]
pub(super) struct Flow {
    /// The destination host.
    pub dest: u32,
    /// P_xd.
    pub path: PathRef,
    /// Age: when the flow's last slice began, or when it became backlogged if
    /// it was never served.
    pub wait: Time,
}

/// What Algorithm 1 reads of a node.
#[derive(Clone, Debug, Default)]
pub(super) struct Node {
    /// B_x with paths and ages, sorted by destination.
    pub flows: Vec<Flow>,
    /// D_x.
    pub dest: Option<u32>,
    /// P_{x,D_x}.
    pub path: PathRef,
    /// What x adds to alpha on its path, bit/s.
    pub contrib_bps: u64,
    /// When x began sending to D_x.
    pub active_since: Time,
    /// Round-robin pointer into `flows`.
    pub rot: u32,
    /// Registered with the controller.
    pub joined: bool,
    /// Scheduled in the current run of Algorithm 1 (the set N).
    pub in_n: bool,
}

impl Node {
    /// Age key of the node for the affected set: its oldest waiting flow
    /// (the one it is sending to does not wait); `now` if none waits.
    #[inline]
    pub fn oldest_wait(&self, now: Time) -> Time {
        let mut w = Time::NEVER;
        let mut any = false;
        for f in &self.flows {
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

/// What the input handlers, the tick and the accessors need of a node.
#[derive(Clone, Debug, Default)]
pub(super) struct NodeMeta {
    /// B_x, sorted (the destinations of `Node::flows`).
    pub backlog: Vec<u32>,
    /// When service of each destination last began (kept across give-backs
    /// and re-reports; the oldest entries are forgotten beyond 64).
    pub served: Vec<(u32, Time)>,
    /// When the current slice ends.
    pub expires: Time,
    pub last_feedback: Time,
    pub last_directive: Time,
    pub epoch: u64,
    pub rates: Vec<(u32, u64)>,
}

/// What the feasibility check reads and Algorithm 1 updates of one link.
#[derive(Clone, Copy, Debug)]
pub(super) struct LinkState {
    /// C_ij minus the capacity admitted to alpha_ij, bit/s.
    pub free_bps: u64,
    /// |alpha_ij|.
    pub senders: u32,
    /// Node whose starving flow holds a live reservation of the link, or
    /// `NOBODY` (no reservation, or one whose flow no longer waits).
    pub held_by: u32,
}

/// The last reservation made of a link by a starving flow.
///
/// It holds (the link's `held_by` names `owner`) while the flow waits, i.e.
/// while `dest` is in B_owner; it lapses while the flow is out of the
/// backlog and holds again if the flow comes back before another flow takes
/// the link over; it ends when the flow is served.
#[derive(Clone, Copy, Debug)]
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
