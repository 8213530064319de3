//! The host egress layer: between a host's transports and its NIC queue.
//!
//! Every packet a host sends passes through its [`Egress`]. Today that is a
//! straight pass to the NIC; XCo's local coordinator (per-destination queues
//! gated by directives) and TCP pacing sit here next, as further variants,
//! without the transports knowing.

/// What stands between a host's transports and its NIC.
#[derive(Clone, Debug, Default)]
pub enum Egress {
    /// Packets go straight to the NIC queue.
    #[default]
    Direct,
}
