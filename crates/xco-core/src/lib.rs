//! # xco-core — the sans-IO heart of xco
//!
//! Everything here is pure logic: no sockets, no threads, no OS clock. Time is
//! passed in as an argument ([`time::Time`], integer picoseconds), randomness
//! comes from a seeded generator ([`rng::Rng`]). That is what lets one
//! algorithm have two drivers: the packet-level simulator (`xco-sim`) calls it
//! with virtual time, the real controller and agents will call it from a
//! runtime timer — and both get the very same decisions.
//!
//! Layers (bottom to top):
//! - [`time`] — `Time` and `Dur`, integer picoseconds, with unit-named
//!   constructors (`Dur::from_us`) and conversions.
//! - [`rng`] — a small, fast, seedable generator (xoshiro256**) with
//!   independent named streams, so adding a random draw in one component
//!   never shifts the draws of another.
//!
//! - [`routing`] — which links a packet crosses: shortest-path ECMP,
//!   fat-tree address-bit routing and equal-length routing, one router for
//!   the simulator's packets and both controllers.
//!
//! - [`sched`] — the XCo scheduler (Algorithm 1 and the rate-limit and
//!   hybrid forms), pushed events in, directives pulled out.
//!
//! - [`coord`] — a host's local coordinator: the gate directives open and
//!   close, V2V accounting, pacing, give-back, fail-open and report timers.
//!
//! - [`wire`] — the control protocol between the controller and host agents:
//!   bounds-checked parsing, Ed25519-signed directives, per-host HMAC-SHA256
//!   on agents' messages, sessions and replay windows free of clocks.
//!
//! - [`control`] — the control plane's two nodes, the controller and a
//!   host's agent: sessions, join challenges, rejoins, what each message
//!   kind does; datagrams and time in, datagrams, timers and gate actions
//!   out. The daemons and the simulation harness drive the same nodes.

pub mod control;
pub mod coord;
pub mod rng;
pub mod routing;
pub mod sched;
pub mod sicc;
pub mod time;
pub mod wire;

pub use rng::Rng;
pub use time::{Dur, Time};
