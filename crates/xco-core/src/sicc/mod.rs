//! SICC — swarm-based incast congestion control for web fan-in, sans I/O.
//!
//! A web request makes a front-end server read ~1,000 small objects from
//! many data servers at once. SICC (Wang, Shen, Liu, SPAA 2017; restated in
//! `shared/spec/sicc.md`, cited below as "spec §Design n") groups the
//! request's target servers into per-rack *swarms*, lets one *hub* per swarm
//! collect its swarm's objects inside the rack and stream them to the
//! front-end, links hubs into a tree when there are too many of them, and
//! controls the hubs' rates. Every part is a function or a small state
//! machine a driver (the simulator's web fan-in app, later a real daemon)
//! calls with the inputs it observed; nothing here reads a clock, a socket
//! or global state. Time comes in as integer nanoseconds (`*_ns`), rates in
//! bits per second (`*_bps`), sizes in bytes; randomness only from a
//! [`crate::Rng`] the caller passes.
//!
//! The parts, one file each (equation numbers: see below):
//! - [`swarm`] — proximity swarms (spec §Design 1): the target servers of
//!   a request in one rack; the hub (most requested objects) and the backup
//!   hub that takes over when the hub fails.
//! - [`hub_count`] — how many hubs may send to the front-end at once:
//!   M = (S_e / s) · B_u (eq 1) and N = M / m per request (spec §Design 2).
//! - [`tree`] — Algorithm 1 (spec §Design 3): the multi-level aggregation
//!   tree with Rule 1 (proximity) and Rule 2 (a child has fewer objects).
//! - [`forward`] — continuous forwarding at a hub: its own objects first,
//!   then each member's or child's as it arrives.
//! - [`speed`] — two-level speed control (spec §Design 4): the front-end's
//!   split of its planned downlink among hubs (eqs 2–4) and the planned
//!   downlink from the aggregation router's queue (eqs 5–6), every 10 ms.
//! - [`compress`] — packet compression (spec §Design 5): objects packed up
//!   to the maximum payload, never split while they fit.
//! - [`redirect`] — query redirection (spec §Design 6): progress (eq 7),
//!   its mean (eq 8), and moves of queries to replica holders only.
//! - [`sw`] and [`ictcp`] — the baselines' algorithmic parts: a sliding
//!   window over concurrently queried servers, and ICTCP's receive window.
//!
//! Equation numbers: the spec restates the paper without numbers; the
//! issue and these docs number them in order of appearance: eq 1 is M;
//! eqs 2–4 the front-end's allocation (equal share, over-utilised hubs,
//! under-utilised hubs); eqs 5–6 the aggregation level (decrease,
//! increase); eqs 7–8 progress and its mean. `docs/sicc.md` has the full
//! reading, with units.

pub mod compress;
pub mod forward;
pub mod hub_count;
pub mod ictcp;
pub mod redirect;
pub mod speed;
pub mod sw;
pub mod swarm;
pub mod tree;

pub use compress::{pack, pack_uncompressed_count, PacketSpan, Packing};
pub use forward::{Forwarder, Object};
pub use hub_count::{hubs_per_request, max_hubs_at_once, UplinkReading};
pub use ictcp::{IctcpConfig, IctcpReceiver};
pub use redirect::{progress_ns, PendingQuery, Redirect, Redirector, ReplicaMap};
pub use speed::{allocate_hub_rates, update_planned, QueueReport, SpeedConfig, SpeedControl};
pub use sw::{SlidingWindow, SwConfig};
pub use swarm::{Failover, Member, Swarm, Swarms};
pub use tree::{AggTree, Link, Parent, Proximity, TreeConfig};

use std::fmt;

/// One target data server of a request: where it is and how many of the
/// request's objects it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Server id (the driver's).
    pub server: u32,
    /// Rack (edge switch) index; dense, below [`MAX_ID`].
    pub rack: u32,
    /// Aggregation router index above the rack; dense, below [`MAX_ID`].
    pub agg: u32,
    /// Requested objects this server holds (at least 1).
    pub objects: u32,
}

/// Largest rack or aggregation index plus one: the builders keep tables
/// indexed by them.
pub const MAX_ID: u32 = 1 << 24;

/// Why a SICC computation refused its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SiccError {
    /// A target server holds no requested object (it is no target).
    ZeroObjects {
        /// The server.
        server: u32,
    },
    /// A rack or aggregation index is not below [`MAX_ID`].
    IdTooLarge {
        /// The server whose record carries it.
        server: u32,
    },
    /// Two servers of one rack name different aggregation routers.
    RackInTwoAggs {
        /// The rack.
        rack: u32,
    },
    /// A server appears twice among the targets.
    DuplicateServer {
        /// The server.
        server: u32,
    },
    /// A hub failed and its swarm has no other live server to take over.
    NoBackup {
        /// The hub index in the tree.
        hub: u32,
    },
    /// A request of 2^40 requested objects or more (the tree's queues
    /// pack a count into 40 bits).
    TooManyObjects {
        /// The request's objects.
        objects: u64,
    },
    /// An index beyond the structure it names.
    NoSuchHub {
        /// The index.
        hub: u32,
    },
}

impl fmt::Display for SiccError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SiccError::ZeroObjects { server } => {
                write!(f, "target server {server} holds no requested object")
            }
            SiccError::IdTooLarge { server } => write!(
                f,
                "server {server}: rack or aggregation index is not below {MAX_ID}"
            ),
            SiccError::RackInTwoAggs { rack } => {
                write!(f, "rack {rack} is under two aggregation routers")
            }
            SiccError::DuplicateServer { server } => {
                write!(f, "server {server} is a target twice")
            }
            SiccError::NoBackup { hub } => {
                write!(f, "hub {hub} failed and its swarm has no live server left")
            }
            SiccError::TooManyObjects { objects } => {
                write!(f, "{objects} requested objects: at most 2^40 - 1 per request")
            }
            SiccError::NoSuchHub { hub } => write!(f, "no hub {hub}"),
        }
    }
}

impl std::error::Error for SiccError {}

/// Bits per second of `bytes` over `dur_ns` (0 when `dur_ns` is 0).
pub fn rate_bps(bytes: u64, dur_ns: u64) -> u64 {
    if dur_ns == 0 {
        return 0;
    }
    (bytes as u128 * 8_000_000_000 / dur_ns as u128).min(u64::MAX as u128) as u64
}

/// Bytes a sender at `rate_bps` puts out in `dur_ns` (a window for one RTT).
pub fn bytes_in(rate_bps: u64, dur_ns: u64) -> u64 {
    (rate_bps as u128 * dur_ns as u128 / 8_000_000_000).min(u64::MAX as u128) as u64
}

/// Parts-per-million of one.
pub const PPM: u64 = 1_000_000;
