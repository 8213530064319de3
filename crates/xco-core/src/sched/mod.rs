//! The XCo scheduler: the central controller's decisions, sans I/O.
//!
//! - [`topology`] — what the controller knows: directed links with
//!   capacities, each host's C_x, and paths P_sd (a search over any graph, or
//!   arithmetic on a k-ary fat-tree).
//! - [`scheduler`] — backlog groups B_x, contention groups beta_ij, active
//!   groups alpha_ij, the three scheduling events, and the public interface
//!   (events in, directives out).
//! - `algorithm1` — Algorithm 1 itself: the affected set, feasibility,
//!   preemption and reservations (timeslice and hybrid forms), with the
//!   traversal queue in `affected`, the node records in `state` and the
//!   link table in `links`.
//! - `drain` — preempted transmissions still draining from their sender's
//!   NIC: the links a preemption frees stay admitted until the preempted
//!   slice's end.
//! - `rates` — the rate-limit form.
//! - [`directive`] — what a host's local coordinator is told.
//! - [`ondemand`] — on-demand coordination: which (source, destination)
//!   pairs are coordinated at all (congested links, large flows).

mod affected;
mod algorithm1;
pub mod directive;
mod drain;
mod links;
pub mod ondemand;
mod rates;
pub mod scheduler;
mod state;
pub mod topology;

pub use directive::{Directive, DirectiveKind};
pub use ondemand::{DemandEntry, OnDemand, OnDemandConfig, OnDemandStats};
pub use scheduler::{Mode, SchedConfig, SchedStats, Scheduler};
pub use topology::{BfsPaths, FatTreePaths, LinkId, PathProvider, PathRef, SchedTopology};
