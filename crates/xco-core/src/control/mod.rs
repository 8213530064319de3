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
//!   of the run it adopted from a signed answer to its own latest join
//!   (or a challenge of a term newer than any it has seen, to its current
//!   session: a standby that took over), each once, in order;
//! - a host's session at the controller starts only at a confirm of a fresh
//!   challenge, and directives go to the address the host states in that
//!   MAC'd confirm — never to the source of any datagram;
//! - a replayed datagram of any kind makes no node join again;
//! - an agent obeys only the highest term it has seen signed, and in it
//!   only the run it adopted, and closes the older term's slice as it
//!   adopts a newer one; a controller that learns of a higher term stops
//!   directing ([`standby`]); a new term grants nothing until every host
//!   has confirmed it, or its fence's time has passed;
//! - a directing controller with a peer grants only under a lease: its
//!   standby's ack of a recent beat, or every host heard in its session
//!   within the host lease ([`ControllerNode::may_grant`]), so one cut off
//!   from a standby that took over stops granting by itself;
//! - an agent that fails open obeys its run again only after a fresh
//!   answer to a join;
//! - an agent obeys a grant (directive, ungated set) only if it can show
//!   from the grant's echo of its own recent message that the grant was
//!   signed within its `directive_max_age` ([`crate::wire::Echo`]), and a
//!   new run's fence includes that age;
//! - signature checks an outsider can cause are bounded by a budget
//!   ([`budget`]), and so are the challenges the controller signs.

pub mod agent;
pub mod budget;
pub mod controller;
pub mod standby;

use crate::wire::ADDR_LEN;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// A node's control address as the driver knows it, and on the wire (an
/// agent states its own in its confirm: directives go there).
pub trait Address: Copy + Eq {
    /// The wire form.
    fn to_wire(&self) -> [u8; ADDR_LEN];
    /// From the wire form (`None`: not an address of this kind).
    fn from_wire(b: &[u8; ADDR_LEN]) -> Option<Self>;
}

impl Address for SocketAddr {
    fn to_wire(&self) -> [u8; ADDR_LEN] {
        let ip = match self.ip() {
            IpAddr::V4(a) => a.to_ipv6_mapped(),
            IpAddr::V6(a) => a,
        };
        let mut b = [0; ADDR_LEN];
        b[..16].copy_from_slice(&ip.octets());
        b[16..].copy_from_slice(&self.port().to_be_bytes());
        b
    }

    fn from_wire(b: &[u8; ADDR_LEN]) -> Option<SocketAddr> {
        let ip = Ipv6Addr::from(<[u8; 16]>::try_from(&b[..16]).expect("16 bytes"));
        let port = u16::from_be_bytes([b[16], b[17]]);
        if port == 0 || ip.is_unspecified() {
            return None;
        }
        let ip = ip.to_ipv4_mapped().map_or(IpAddr::V6(ip), IpAddr::V4);
        Some(SocketAddr::new(ip, port))
    }
}

/// A simulated node's number (the simulation harness's addresses).
impl Address for u32 {
    fn to_wire(&self) -> [u8; ADDR_LEN] {
        let mut b = [0; ADDR_LEN];
        b[..4].copy_from_slice(&self.to_be_bytes());
        b[ADDR_LEN - 1] = 1;
        b
    }

    fn from_wire(b: &[u8; ADDR_LEN]) -> Option<u32> {
        (b[ADDR_LEN - 1] == 1 && b[4..ADDR_LEN - 1].iter().all(|&x| x == 0))
            .then(|| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

pub use agent::{AgentConfig, AgentEvent, AgentNode, Origin};

/// The default `directive_max_age`: an agent refuses a grant that may have
/// been signed longer ago (one default slice: a directive that took longer
/// to arrive is for a slot that is over; see [`crate::wire::Echo`]).
pub const DIRECTIVE_MAX_AGE: crate::time::Dur = crate::time::Dur::from_ms(2);
pub use budget::{Budget, PerSlot};
pub use controller::{lease_quorum, ControllerConfig, ControllerEvent, ControllerNode, ControllerStats};
pub use standby::{Peer, StandbyConfig};

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
    /// The controller binds a host's address from its datagrams' source, not
    /// from its confirm (a captured join, report or confirm replayed from
    /// elsewhere moves the host's directives).
    AddressFromAnySource,
    /// The agent obeys a directive of a lower term than one it has seen
    /// (a stale primary is obeyed).
    AcceptLowerTerm,
    /// A standby that takes over grants at once, without the fence.
    TakeoverWithoutFence,
    /// An agent that adopts a newer term keeps the older term's slice open
    /// (to its end).
    KeepGateAtNewTerm,
    /// A new term's fence ends at the first host's confirm, not the last.
    EndFenceAtFirstConfirm,
    /// The agent obeys a grant however old it may be (version 5's
    /// freshness check skipped).
    SkipFreshness,
}

#[cfg(feature = "mutations")]
impl Mutation {
    /// The mutation of a name as the harnesses' tests and replays spell it
    /// (`XCO_DST_MUTATION`); panics on an unknown name (tests only).
    pub fn named(m: &str) -> Mutation {
        match m {
            "accept-other-run" => Mutation::AcceptOtherRun,
            "skip-replay-check" => Mutation::SkipReplayCheck,
            "no-fail-open-under-load" => Mutation::NoFailOpenUnderLoad,
            "address-from-any-source" => Mutation::AddressFromAnySource,
            "accept-lower-term" => Mutation::AcceptLowerTerm,
            "takeover-without-fence" => Mutation::TakeoverWithoutFence,
            "keep-gate-at-new-term" => Mutation::KeepGateAtNewTerm,
            "end-fence-at-first-confirm" => Mutation::EndFenceAtFirstConfirm,
            "skip-freshness" => Mutation::SkipFreshness,
            _ => panic!("unknown mutation {m}"),
        }
    }
}
