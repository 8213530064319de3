//! The few TCP settings an endpoint reads on every packet, copied into the
//! endpoint when it is created.
//!
//! An endpoint keeps the index of its settings ([`crate::tcp::select::TcpSettings::cfg_of`])
//! for the rare paths (handshake, timers, recovery); the per-packet paths
//! (stamping a segment, taking an ACK's RTT sample, deciding on a delayed ACK,
//! marking ECT) read this compact copy instead, so a run with the default
//! settings pays no table lookup and no extra cache line per packet.

use super::TcpConfig;
use xco_core::Dur;

/// ECN is negotiated: mark new data ECT(0) and answer ECE.
pub const HOT_ECN: u8 = 1 << 0;
/// Delay ACKs (RFC 1122 §4.2.3.2).
pub const HOT_DELAYED_ACK: u8 = 1 << 1;
/// Restart the window after an idle period (RFC 5681 §4.1).
pub const HOT_RESTART_AFTER_IDLE: u8 = 1 << 2;
/// Limited Transmit (RFC 3042).
pub const HOT_LIMITED_TRANSMIT: u8 = 1 << 3;
/// No timestamps option: RTT samples follow Karn's rule (RFC 6298 §3).
pub const HOT_KARN: u8 = 1 << 4;

/// Per-packet settings of one endpoint (a copy of its [`TcpConfig`]'s fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HotCfg {
    /// `HOT_*` flags.
    pub flags: u8,
    /// IP + TCP header bytes of every segment.
    pub header_bytes: u32,
    /// ACK after this many full segments when ACKs are delayed.
    pub delayed_ack_segments: u32,
    /// Receive buffer that bounds the advertised window.
    pub rcv_buf_bytes: u64,
    /// RTO clock granularity (RFC 6298's G).
    pub clock_granularity: Dur,
    /// Lower bound of the RTO.
    pub rto_min: Dur,
    /// Upper bound of the RTO.
    pub rto_max: Dur,
}

impl HotCfg {
    /// The per-packet copy of `cfg`.
    pub fn of(cfg: &TcpConfig) -> HotCfg {
        let mut flags = 0;
        if cfg.ecn {
            flags |= HOT_ECN;
        }
        if cfg.delayed_ack {
            flags |= HOT_DELAYED_ACK;
        }
        if cfg.restart_after_idle {
            flags |= HOT_RESTART_AFTER_IDLE;
        }
        if cfg.limited_transmit {
            flags |= HOT_LIMITED_TRANSMIT;
        }
        if !cfg.timestamps {
            flags |= HOT_KARN;
        }
        HotCfg {
            flags,
            header_bytes: cfg.header_bytes,
            delayed_ack_segments: cfg.delayed_ack_segments,
            rcv_buf_bytes: cfg.rcv_buf_bytes,
            clock_granularity: cfg.clock_granularity,
            rto_min: cfg.rto_min,
            rto_max: cfg.rto_max,
        }
    }

    /// Whether flag `f` (`HOT_*`) is on.
    #[inline(always)]
    pub fn on(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_the_per_packet_fields_and_flags() {
        let c = TcpConfig {
            ecn: true,
            delayed_ack: false,
            restart_after_idle: true,
            header_bytes: 60,
            rcv_buf_bytes: 12_345,
            ..TcpConfig::default()
        };
        let h = HotCfg::of(&c);
        assert!(h.on(HOT_ECN));
        assert!(!h.on(HOT_DELAYED_ACK));
        assert!(h.on(HOT_RESTART_AFTER_IDLE));
        assert_eq!(h.header_bytes, 60);
        assert_eq!(h.rcv_buf_bytes, 12_345);
        assert_eq!(h.delayed_ack_segments, c.delayed_ack_segments);
        assert_eq!((h.rto_min, h.rto_max), (c.rto_min, c.rto_max));
        assert_eq!(h.clock_granularity, c.clock_granularity);
    }
}
