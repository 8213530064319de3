//! Per-flow statistics, updated on the packet path with plain additions.

use xco_core::Time;

/// The transport a flow uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// One direction of a TCP connection.
    Tcp,
    /// A UDP message stream.
    Udp,
    /// ICMP echo probes.
    Ping,
    /// XCo control messages.
    Control,
}

impl FlowKind {
    /// Lower-case name for output.
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Tcp => "tcp",
            FlowKind::Udp => "udp",
            FlowKind::Ping => "ping",
            FlowKind::Control => "control",
        }
    }
}

/// [`FlowStats::route`] of a flow without a stored route (control traffic,
/// per-packet spraying).
pub const NO_ROUTE: u32 = u32::MAX;

/// Everything measured about one flow.
#[derive(Clone, Debug)]
pub struct FlowStats {
    /// The route its packets take (an offset into the network's route
    /// table), or [`NO_ROUTE`].
    pub route: u32,
    /// Transport.
    pub kind: FlowKind,
    /// Application index that owns the flow.
    pub app: u32,
    /// What the flow does for its app (`response`, `request`, `bulk`, ...).
    pub role: &'static str,
    /// Source host node.
    pub src: u32,
    /// Destination host node.
    pub dst: u32,
    /// When the flow was created.
    pub start: Time,
    /// When its last application byte was delivered (if it finished).
    pub end: Option<Time>,
    /// Application bytes handed to the transport.
    pub app_bytes_written: u64,
    /// Application bytes delivered in order to the receiver (UDP: whole messages only).
    pub app_bytes_delivered: u64,
    /// Bytes (IP datagrams) this flow put on the wire, retransmissions and ACKs included.
    pub wire_bytes_sent: u64,
    /// Bytes of this flow that reached the destination host.
    pub wire_bytes_received: u64,
    /// Bytes of this flow dropped anywhere.
    pub wire_bytes_dropped: u64,
    /// Packets of this flow dropped anywhere.
    pub wire_packets_dropped: u64,
    /// Segments sent again (fast retransmit, partial ACK, timeout, go-back-N).
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Segments retransmitted because a PDN notification reported their drop.
    pub notified_retransmits: u64,
    /// Window reductions a PDN notification caused.
    pub notified_reductions: u64,
    /// PDN notifications of a segment already resent on a notification
    /// (a lost retransmission), left to the retransmission timer.
    pub notified_left_to_timer: u64,
    /// UDP messages sent.
    pub msgs_sent: u64,
    /// UDP messages delivered whole.
    pub msgs_delivered: u64,
    /// Sum of RTT samples in ps (pings).
    pub rtt_sum_ps: u64,
    /// Number of RTT samples.
    pub rtt_count: u64,
    /// Largest RTT sample in ps.
    pub rtt_max_ps: u64,
    /// Application bytes delivered since the last time-series sample.
    pub bin_bytes: u64,
}

impl FlowStats {
    /// The record with the route its packets take.
    pub fn with_route(mut self, route: u32) -> FlowStats {
        self.route = route;
        self
    }

    /// A fresh record.
    pub fn new(kind: FlowKind, app: u32, role: &'static str, src: u32, dst: u32, start: Time) -> FlowStats {
        FlowStats {
            route: NO_ROUTE,
            kind,
            app,
            role,
            src,
            dst,
            start,
            end: None,
            app_bytes_written: 0,
            app_bytes_delivered: 0,
            wire_bytes_sent: 0,
            wire_bytes_received: 0,
            wire_bytes_dropped: 0,
            wire_packets_dropped: 0,
            retransmits: 0,
            timeouts: 0,
            fast_retransmits: 0,
            notified_retransmits: 0,
            notified_reductions: 0,
            notified_left_to_timer: 0,
            msgs_sent: 0,
            msgs_delivered: 0,
            rtt_sum_ps: 0,
            rtt_count: 0,
            rtt_max_ps: 0,
            bin_bytes: 0,
        }
    }

    /// Record `bytes` of application data delivered at `now`.
    #[inline]
    pub fn delivered(&mut self, bytes: u64) {
        self.app_bytes_delivered += bytes;
        self.bin_bytes += bytes;
    }
}
