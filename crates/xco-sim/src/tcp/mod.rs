//! TCP: connection set-up, slow start and congestion avoidance (RFC 5681),
//! NewReno fast retransmit and fast recovery (RFC 6582) or SACK (RFC 2018)
//! with SACK-based loss recovery (RFC 6675) and RACK's time-based loss detection (RFC 8985), the retransmission
//! timer of RFC 6298, delayed ACKs, timestamps-based RTT sampling (RFC 7323)
//! and a receive window — over 64-bit byte sequence numbers that never wrap.
//!
//! The endpoint ([`endpoint`]) owns sequence numbers, timers and sending;
//! two seams, split as in Linux, decide the rest. Loss recovery
//! ([`recovery`]: NewReno, or SACK in [`sack`] and [`sack_recovery`]; RACK in [`rack`]; tail loss probes in [`tlp`]) finds losses and picks
//! what to retransmit; congestion control ([`cc`]: NewReno, CUBIC in [`cubic`],
//! DCTCP in [`dctcp`]) grows the window from an ACK sample and answers congestion
//! events. Two hooks sit at the edges: the advertised window
//! ([`rcv_window`]) and pacing ([`pacing`]).
//!
//! TCP sits below the host stack: an endpoint is handed the context
//! ([`crate::ctx::Ctx`]) and its host through the [`host::TcpHost`] trait,
//! by which it sends, waits for egress room and raises the notes
//! ([`note::AppNote`]) its application hears. It imports neither the host
//! stack, nor XCo, nor the driver, nor an application.

pub mod cc;
pub mod congestion;
pub mod cubic;
pub mod dctcp;
pub mod endpoint;
pub mod host;
pub mod hot;
pub mod hystart;
pub mod loss;
pub mod note;
pub mod pacing;
pub mod profile;
pub mod prr;
pub mod rack;
pub mod rcv_window;
pub mod recovery;
pub mod rtt;
pub mod sack;
pub mod sack_recovery;
pub mod select;
pub mod table;
pub mod tlp;

use xco_core::Dur;

/// Every TCP setting a result can depend on.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Payload bytes per full segment (MSS).
    pub mss_bytes: u32,
    /// IP + TCP header bytes of a data segment or pure ACK (options included).
    pub header_bytes: u32,
    /// IP bytes of a SYN or SYN-ACK (header plus the SYN's options).
    pub syn_bytes: u32,
    /// Initial congestion window in segments (RFC 6928: 10).
    pub initial_cwnd_segments: u32,
    /// Lower bound of the retransmission timeout (RTO_min).
    pub rto_min: Dur,
    /// Upper bound of the retransmission timeout.
    pub rto_max: Dur,
    /// RTO before the first RTT sample (RFC 6298: 1 s).
    pub rto_initial: Dur,
    /// Clock granularity G of RFC 6298.
    pub clock_granularity: Dur,
    /// Delay ACKs (ACK every `delayed_ack_segments` or on the timer).
    pub delayed_ack: bool,
    /// Full segments that force an ACK when delaying (RFC 5681: 2).
    pub delayed_ack_segments: u32,
    /// Delayed-ACK timer (Linux: 40 ms minimum; RFC 1122: at most 500 ms).
    pub delayed_ack_timeout: Dur,
    /// Open connections with SYN / SYN-ACK / ACK (else they start established).
    pub handshake: bool,
    /// Receive buffer, bytes: the advertised window is this minus out-of-order data.
    pub rcv_buf_bytes: u64,
    /// How receivers choose the advertised window.
    pub rcv_window: rcv_window::RcvWindow,
    /// Reset cwnd to the initial window after an idle period longer than the RTO (RFC 5681 §4.1).
    pub restart_after_idle: bool,
    /// Duplicate ACKs that trigger fast retransmit (3).
    pub dupack_threshold: u32,
    /// The timestamps option (RFC 7323): 12 header bytes and an RTT sample
    /// from every ACK. Without it the sender follows Karn's rule (RFC 6298
    /// §3): no RTT sample from an ACK that covers a retransmitted byte.
    pub timestamps: bool,
    /// Limited Transmit (RFC 3042): on each of the first two duplicate ACKs
    /// outside recovery, send one new segment if the receiver's window allows
    /// and the flight stays within cwnd + 2 segments; cwnd is unchanged.
    pub limited_transmit: bool,
    /// Appropriate byte counting limit L in segments for slow start (RFC 3465: 2).
    pub abc_limit_segments: u32,
    /// Congestion control algorithm.
    pub cc: cc::CcKind,
    /// Send new data segments as ECN-capable, ECT(0) (RFC 3168; both ends
    /// assume it, there is no SYN negotiation). Receivers always echo CE as
    /// ECE; senders answer ECE with CWR and, once per window, with the
    /// congestion control's `EcnEcho` response (NewReno halves the window).
    pub ecn: bool,
    /// Selective acknowledgements (RFC 2018) with SACK-based loss recovery
    /// (RFC 6675) instead of NewReno's; both ends assume it (no SYN
    /// negotiation). Receivers report three blocks beside the timestamps
    /// option, four without it.
    pub sack: bool,
    /// Tail loss probes (RFC 8985 §7): a probe after about two RTTs instead
    /// of waiting for the RTO when the tail of a flight is lost.
    pub tlp: bool,
    /// The probe timeout as Linux's `tcp_schedule_loss_probe` (6.x): 2 × SRTT
    /// plus 2 ms (`TCP_TIMEOUT_MIN_US`), or plus RTO_min with one segment
    /// out, and never after the RTO deadline, where the probe goes instead of
    /// the timeout. Off: RFC 8985's 2 × SRTT (+ the delayed-ACK time with
    /// one segment out), and the RTO when that is later.
    pub tlp_linux_pto: bool,
    /// RACK time-based loss detection (RFC 8985 §6; needs `sack`): a
    /// segment sent before one that was delivered is lost once a quarter of
    /// the minimum RTT has passed beyond its own RTT.
    pub rack: bool,
    /// Proportional Rate Reduction (RFC 6937) in SACK recovery, as Linux
    /// (`tcp/prr.rs`; needs `sack`): per ACK the sender may send in
    /// proportion to what the ACK reports delivered, instead of cwnd =
    /// ssthresh at once (RFC 6675).
    pub prr: bool,
    /// Receivers ACK the first this many data segments of a connection at
    /// once, without delaying (Linux's quick-ACK mode at start: 16); 0: off.
    pub quickack_segments: u32,
    /// Pace new data at `gain x cwnd / SRTT` (200% in slow start, 120% after), as Linux.
    pub pacing: bool,
    /// HyStart++ (RFC 9406) in CUBIC's initial slow start: leave it when the
    /// per-round minimum RTT grows, before the first loss (`cc = cubic` only).
    pub hystart: bool,
}

impl TcpConfig {
    /// Linux-like defaults for an MTU: timestamps on (12 option bytes), IW10,
    /// RTO_min 200 ms, delayed ACKs with a 40 ms timer, handshake on.
    pub fn for_mtu(mtu_bytes: u32) -> TcpConfig {
        let header_bytes = 20 + 20 + 12;
        TcpConfig {
            mss_bytes: mtu_bytes - header_bytes,
            header_bytes,
            syn_bytes: 20 + 20 + 20,
            initial_cwnd_segments: 10,
            rto_min: Dur::from_ms(200),
            rto_max: Dur::from_secs(60),
            rto_initial: Dur::from_secs(1),
            clock_granularity: Dur::from_us(1),
            delayed_ack: true,
            delayed_ack_segments: 2,
            delayed_ack_timeout: Dur::from_ms(40),
            handshake: true,
            rcv_buf_bytes: 6 * 1024 * 1024,
            rcv_window: rcv_window::RcvWindow::Buffer,
            restart_after_idle: true,
            dupack_threshold: 3,
            timestamps: true,
            limited_transmit: false,
            abc_limit_segments: 2,
            cc: cc::CcKind::NewReno,
            ecn: false,
            sack: false,
            tlp: false,
            tlp_linux_pto: false,
            rack: false,
            prr: false,
            quickack_segments: 0,
            pacing: false,
            hystart: false,
        }
    }
}

impl Default for TcpConfig {
    fn default() -> TcpConfig {
        TcpConfig::for_mtu(1500)
    }
}
