//! The context every layer of the simulation core is handed: the clock, the
//! pending events and the network.
//!
//! The driver ([`crate::sim`]) owns one [`Ctx`] and passes it down by
//! `&mut` to whatever handles an event: the transports ([`crate::tcp`],
//! [`crate::udp`]), the host stack ([`crate::host`]), XCo ([`crate::xco`])
//! and the applications ([`crate::app`]). It knows nothing above the
//! network: transports reach their host's egress through the host stack
//! ([`crate::tcp::host::TcpHost`]), applications hear from transports
//! through notes the host stack collects.

use crate::engine::EventQueue;
use crate::net::Net;
use xco_core::Time;

/// Clock, events, network: what every element may touch while handling an event.
pub struct Ctx {
    /// The current time.
    pub now: Time,
    /// Pending events.
    pub ev: EventQueue,
    /// The network and everything in flight.
    pub net: Net,
}
