//! The XCo control plane as two sans-IO nodes, quinn-proto's shape: the
//! protocol the controller daemon, the agents and the deterministic
//! simulation harness all run, once.
//!
//! - [`ControllerNode`] ([`controller`]) — the controller: the scheduler
//!   ([`crate::sched::Scheduler`]), every host's session, the join
//!   challenges, rejoin requests and rejection accounting.
//! - [`AgentNode`] ([`agent`]) — a host's local coordinator on the control
//!   plane: its [`crate::coord::HostCoordinator`] (the gate and the queues),
//!   the run it obeys, its joins, and the budget within which it checks
//!   signatures.
//!
//! Both take input pushed with `handle_datagram(now, ...)` and
//! `handle_timeout(now)` and hand output out when pulled: `poll_transmit`
//! (signed or MAC'd datagrams, addressed by the driver's own address type
//! or to the controller), `poll_timeout` (the next instant to call
//! `handle_timeout`), `poll_event` (what happened, for logs and checks).
//! Call `poll_transmit` and `poll_event` until `None` after every handle
//! call. Nothing here reads a clock, a socket or an OS random source: `now`
//! is the driver's monotonic time, keys come in as [`crate::wire`] keys,
//! randomness (run ids, join nonces) from an [`crate::rng::Rng`] the driver
//! seeds (from `/dev/urandom` in the daemons, from the seed in the harness).
//!
//! Every message kind is dispatched once, in these two files; the daemons
//! move datagrams, packets and time, and log and count what the events say.
//!
//! Guarantees (each a scenario of the harness, `tests/dst`):
//! - an agent obeys only directives signed by the controller, for itself,
//!   of the run it adopted from a signed answer to its own latest join, each
//!   once, in order;
//! - a host's session at the controller starts only at a confirm of a fresh
//!   challenge, and directives go to the address that confirmed it — never
//!   to the source of a join or of any other message;
//! - a replayed datagram of any kind makes no node join again;
//! - signature checks an outsider can cause are bounded by a budget
//!   ([`budget`]), and so are the challenges the controller signs.

pub mod agent;
pub mod budget;
pub mod controller;

pub use agent::{AgentConfig, AgentEvent, AgentNode, Origin};
pub use budget::{Budget, PerSlot};
pub use controller::{ControllerConfig, ControllerEvent, ControllerNode, ControllerStats};

/// Protocol bugs planted on purpose, to show the harness finds them
/// (feature `mutations`, for tests only; release builds have none).
#[cfg(feature = "mutations")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// The agent obeys a signed directive of any controller run (accepts an
    /// old term).
    AcceptOtherRun,
    /// The agent skips the sequence-number (replay) check.
    SkipReplayCheck,
    /// The agent never fails open while it holds more than 8 packets (its
    /// fail-open timer dropped under load).
    NoFailOpenUnderLoad,
    /// The controller binds a host's address from any of its messages'
    /// source (a replayed join or report moves the host's directives).
    AddressFromAnySource,
}
