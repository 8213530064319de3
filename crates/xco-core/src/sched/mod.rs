//! The XCo scheduler: the central controller's decisions, sans I/O.
//!
//! - [`topology`] — what the controller knows: directed links with
//!   capacities, each host's C_x, and paths P_sd (a search over any graph, or
//!   arithmetic on a k-ary fat-tree).
//! - [`scheduler`] — backlog groups B_x, contention groups beta_ij, active
//!   groups alpha_ij, feasibility, the three scheduling events and
//!   Algorithm 1; the rate-limit and hybrid forms.
//! - [`directive`] — what a host's local coordinator is told.

pub mod directive;
pub mod scheduler;
pub mod topology;

pub use directive::{Directive, DirectiveKind};
pub use scheduler::{Mode, SchedConfig, SchedStats, Scheduler};
pub use topology::{BfsPaths, FatTreePaths, LinkId, PathProvider, PathRef, SchedTopology};
