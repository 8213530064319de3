//! How many hubs may stream to the front-end at once (spec §Design 2).
//!
//! With edge-switch buffer S_e (bytes), mean packet size s (bytes), downlink
//! B_d and uplink B_u, the paper gives the largest number of hubs that may
//! send to the front-end at once without growing the edge queue as
//!
//! ```text
//! M = (S_e / s) · B_u                                  (eq 1, as written)
//! N = M / m       (m concurrent requests per front-end: hubs per request)
//! ```
//!
//! As written, eq 1 is not a count: S_e / s is a number of packets (what
//! the edge buffer holds), and a rate times it has units of bit/s. A count
//! needs B_u as a pure number. We read it as the uplink's rate in units of
//! the downlink's, B_u / B_d ([`UplinkReading::OverDownlink`], the default):
//! B_d is the one other rate the paper introduces with the formula, the
//! rate at which the edge queue toward the front-end drains, and at the
//! evaluation's equal rates (both 1 Gbps) the ratio is 1, so M = S_e / s:
//! as many hubs as the edge buffer holds packets, one packet of each hub's
//! burst buffered at once. [`UplinkReading::DownlinkOverUplink`] is the
//! other reading the units allow (M shrinks as the downlink slows, which
//! the paper's "the tree matters more as downlink bandwidth shrinks" would
//! suggest); it is offered so a run can name which one it used.
//! `docs/sicc.md` discusses both.
//!
//! Both counts are floored and at least 1: one hub can always send.

/// How eq 1's B_u becomes a pure number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UplinkReading {
    /// B_u / B_d: the uplink in units of the downlink (default).
    #[default]
    OverDownlink,
    /// B_d / B_u: the downlink in units of the uplink.
    DownlinkOverUplink,
}

/// M of eq 1: hubs that may send to one front-end at once, at least 1.
/// Returns 1 when `mean_packet_bytes` or a rate is 0 (nothing to scale by).
pub fn max_hubs_at_once(
    edge_buffer_bytes: u64,
    mean_packet_bytes: u64,
    uplink_bps: u64,
    downlink_bps: u64,
    reading: UplinkReading,
) -> u32 {
    if mean_packet_bytes == 0 || uplink_bps == 0 || downlink_bps == 0 {
        return 1;
    }
    let (num, den) = match reading {
        UplinkReading::OverDownlink => (uplink_bps, downlink_bps),
        UplinkReading::DownlinkOverUplink => (downlink_bps, uplink_bps),
    };
    let m = edge_buffer_bytes as u128 * num as u128 / (mean_packet_bytes as u128 * den as u128);
    m.clamp(1, u32::MAX as u128) as u32
}

/// N = M / m: hubs per request with `concurrent_requests` requests per
/// front-end, at least 1 (`concurrent_requests` 0 counts as 1).
pub fn hubs_per_request(max_hubs: u32, concurrent_requests: u32) -> u32 {
    (max_hubs / concurrent_requests.max(1)).max(1)
}
