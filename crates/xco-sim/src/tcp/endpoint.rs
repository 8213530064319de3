//! One end of a TCP connection: a sender half and a receiver half.
//!
//! ECN signalling (RFC 3168 §6.1), the minimum: with `TcpConfig::ecn` new
//! data goes out ECT(0); a receiver that gets a CE-marked segment sets ECE
//! on its ACKs until a segment with CWR arrives; a sender that gets ECE sets
//! CWR on its next new data segment, once per window of data; that ECE is
//! also the congestion control's [`CongestionEvent::EcnEcho`] unless loss
//! recovery already cut the window.
//!
//! The retransmission and delayed-ACK timers are [`Timer`]s: moving a
//! deadline is a field write, with at most one engine event pending for each.

mod pdn;
use pdn::PdnSender;

use super::cc::{AckSample, CongestionControl, CongestionEvent, EventSample, Window};
use super::congestion::Cc;
use super::host::{TcpCount, TcpHost};
use super::hot::{HotCfg, HOT_DELAYED_ACK, HOT_ECN, HOT_KARN, HOT_LIMITED_TRANSMIT, HOT_RESTART_AFTER_IDLE};
use super::note::AppNote;
use super::pacing::{Pacer, RatePacer};
use super::rcv_window::{RcvState, RcvWindow};
use super::recovery::{LossCtx, NextSeg, Recovery, Segment};
use super::rtt::RttEstimator;
use super::sack::SackBlocks;
use super::tlp::{Probe, TlpState};
use super::TcpConfig;
use crate::ctx::Ctx;
use crate::engine::{Event, Timer};
use crate::net::packet::{Ecn, Packet, PktId, PktKind, FLAG_ACK, FLAG_CWR, FLAG_ECE, FLAG_SACK, FLAG_SYN};
use xco_core::{Dur, Time};

/// Connection state (the subset of RFC 793 the model needs; no FIN exchange).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpState {
    /// Passive end waiting for a SYN.
    Listen,
    /// Active end sent its SYN.
    SynSent,
    /// Passive end sent its SYN-ACK.
    SynRcvd,
    /// Data may flow.
    Established,
    /// Closed by the application; arriving segments are discarded.
    Closed,
}

/// One end of a connection.
#[derive(Debug)]
pub struct TcpEndpoint {
    /// This endpoint's index.
    pub id: u32,
    /// Host node.
    pub host: u32,
    /// Peer host node.
    pub peer_host: u32,
    /// Peer endpoint index.
    pub peer_ep: u32,
    /// Owning application.
    pub app: u32,
    /// App-defined tag (e.g. the server index of an incast client).
    pub tag: u32,
    /// Route to the peer.
    pub route: u32,
    /// Flow id of what this endpoint sends.
    pub tx_flow: u32,
    /// Flow id of what this endpoint receives.
    pub rx_flow: u32,
    /// Connection state.
    pub state: TcpState,
    /// Which TCP settings this endpoint runs ([`crate::tcp::select::TcpSettings::cfg_of`]; 0: the run's).
    pub cfg: u8,
    /// Their per-packet fields, copied at creation (no lookup per packet).
    hot: HotCfg,

    // ---- sender ----
    /// Oldest unacknowledged byte.
    pub snd_una: u64,
    /// Next byte to send.
    pub snd_nxt: u64,
    /// One past the highest byte ever sent.
    pub snd_max: u64,
    /// Bytes the application has written in total.
    pub app_limit: u64,
    /// Congestion window and threshold.
    pub win: Window,
    cc: Cc,
    /// Loss recovery (NewReno now; SACK and RACK later).
    pub recovery: Recovery,
    /// In fast recovery (the window belongs to `recovery`).
    pub in_recovery: bool,
    /// `recover` of RFC 6582 (one past the highest byte sent when recovery or a timeout began).
    pub recover: u64,
    /// PDN: drop notifications answered, as `pdn.rs` says.
    pdn: PdnSender,
    /// RTT estimator.
    pub rtt: RttEstimator,
    /// Exponential backoff exponent of the RTO.
    pub backoff: u32,
    /// One past the highest byte ever retransmitted (Karn's rule without timestamps).
    rexmit_high: u64,
    rto_timer: Timer,
    /// RFC 6298's RTO deadline; the timer may point at an earlier PTO.
    rto_at: Time,
    /// The timer holds a tail-loss-probe timeout, not the RTO.
    probe_armed: bool,
    /// The timer holds RACK's reordering timeout, not the RTO.
    reo_armed: bool,
    /// Send tail loss probes.
    tlp_on: bool,
    /// RACK's time-based loss detection (in SACK recovery) is on.
    rack_on: bool,
    /// Proportional rate reduction in SACK recovery (`cfg.sack && cfg.prr`).
    prr_on: bool,
    /// Tail loss probe state (RFC 8985 §7).
    pub tlp: TlpState,
    /// A timeout's go-back-N is under way (until `snd_una` reaches `recover`).
    rto_recovery: bool,
    /// When the next segment may leave (no pacing by default).
    pub pacer: Pacer,
    pace_timer: Timer,
    syn_retransmitted: bool,
    last_send: Time,
    /// Receive window the peer advertised.
    pub peer_wnd: u64,
    /// ECN signals seen and sent.
    pub ecn: EcnCounters,
    /// ECE seen: set CWR on the next new data segment.
    cwr_pending: bool,
    /// ECE is answered once per window: not again before `snd_una` passes this.
    ecn_recover: u64,

    // ---- receiver ----
    /// Next byte expected.
    pub rcv_nxt: u64,
    ooo: Vec<(u64, u64)>,
    ooo_bytes: u64,
    unacked_segs: u32,
    delack_timer: Timer,
    /// How the advertised window is chosen.
    pub rcv_window: RcvWindow,
    ts_recent: u64,
    last_ack_sent: u64,
    ack_now: bool,
    /// A CE mark arrived and no CWR since: ACKs carry ECE.
    ece_pending: bool,
    /// SACK blocks this receiver reports (RFC 2018).
    sack_rx: SackBlocks,
    /// Most SACK blocks per segment; 0: SACK off.
    sack_max_blocks: u8,
    /// In-order data segments still to be ACKed at once (quick-ACK mode).
    quickacks: u32,
    /// Echo CE as DCTCP receivers do (RFC 8257 §3.2) instead of RFC 3168's
    /// ECE-until-CWR.
    dctcp_echo: bool,
    /// ACKs sent with a D-SACK block (RFC 2883; SACK receivers only).
    pub dsacks_sent: u64,
}

/// ECN signals of one endpoint (RFC 3168).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounters {
    /// Data segments that arrived marked CE.
    pub ce_received: u64,
    /// Segments sent with ECE.
    pub ece_sent: u64,
    /// Segments that arrived with ECE.
    pub ece_received: u64,
    /// Data segments sent with CWR.
    pub cwr_sent: u64,
}

/// What to build a pair of endpoints from.
pub struct EndpointInit {
    /// Index.
    pub id: u32,
    /// Host.
    pub host: u32,
    /// Peer host.
    pub peer_host: u32,
    /// Peer endpoint.
    pub peer_ep: u32,
    /// Owning app.
    pub app: u32,
    /// App tag.
    pub tag: u32,
    /// Route offset to the peer.
    pub route: u32,
    /// Flow sent.
    pub tx_flow: u32,
    /// Flow received.
    pub rx_flow: u32,
    /// Initial state.
    pub state: TcpState,
    /// The settings' index ([`crate::tcp::select::TcpSettings::cfg_of`]); `cfg` below must be them.
    pub cfg: u8,
}

impl TcpEndpoint {
    /// A new endpoint with `cfg`'s initial window and RTO.
    pub fn new(init: EndpointInit, cfg: &TcpConfig) -> TcpEndpoint {
        let mss = cfg.mss_bytes as u64;
        TcpEndpoint {
            id: init.id,
            host: init.host,
            peer_host: init.peer_host,
            peer_ep: init.peer_ep,
            app: init.app,
            tag: init.tag,
            route: init.route,
            tx_flow: init.tx_flow,
            rx_flow: init.rx_flow,
            state: init.state,
            cfg: init.cfg,
            hot: HotCfg::of(cfg),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_limit: 0,
            win: Window {
                cwnd: cfg.initial_cwnd_segments.max(1) as u64 * mss,
                ssthresh: u64::MAX / 4,
                mss,
                bytes_acked: 0,
            },
            cc: Cc::new(cfg),
            recovery: if cfg.sack {
                Recovery::sack(cfg.dupack_threshold, cfg.rack, cfg.prr)
            } else {
                Recovery::new_reno(cfg.dupack_threshold)
            },
            in_recovery: false,
            recover: 0,
            pdn: PdnSender::default(),
            rtt: RttEstimator::new(cfg.rto_initial),
            backoff: 0,
            rexmit_high: 0,
            rto_timer: Timer::IDLE,
            rto_at: Time::NEVER,
            probe_armed: false,
            reo_armed: false,
            tlp_on: cfg.tlp,
            rack_on: cfg.sack && cfg.rack,
            prr_on: cfg.sack && cfg.prr,
            tlp: TlpState::default(),
            rto_recovery: false,
            pacer: if cfg.pacing {
                Pacer::Rate(RatePacer::default())
            } else {
                Pacer::Off
            },
            pace_timer: Timer::IDLE,
            syn_retransmitted: false,
            last_send: Time::ZERO,
            peer_wnd: cfg.rcv_buf_bytes,
            ecn: EcnCounters::default(),
            cwr_pending: false,
            ecn_recover: 0,
            rcv_nxt: 0,
            ooo: Vec::new(),
            ooo_bytes: 0,
            unacked_segs: 0,
            delack_timer: Timer::IDLE,
            rcv_window: cfg.rcv_window,
            ts_recent: 0,
            last_ack_sent: 0,
            ack_now: false,
            ece_pending: false,
            sack_rx: SackBlocks::default(),
            quickacks: cfg.quickack_segments,
            dctcp_echo: cfg.cc == super::cc::CcKind::Dctcp,
            dsacks_sent: 0,
            sack_max_blocks: match (cfg.sack, cfg.header_bytes > 40) {
                (false, _) => 0,
                (true, true) => 3, // beside the timestamps option
                (true, false) => 4,
            },
        }
    }

    /// The current RTO including backoff, bounded by RTO_max.
    pub fn current_rto(&self, cfg: &TcpConfig) -> Dur {
        let base = self.rtt.rto().ps();
        let shifted = if self.backoff >= 63 {
            u64::MAX
        } else {
            base.saturating_mul(1u64 << self.backoff)
        };
        Dur(shifted).min(cfg.rto_max)
    }

    /// ACKs received with a D-SACK block (RFC 2883 §4; SACK senders only,
    /// else 0), the sender's side of [`TcpEndpoint::dsacks_sent`].
    pub fn dsacks_received(&self) -> u64 {
        match &self.recovery {
            Recovery::Sack(r) => r.dsacks_received,
            Recovery::NewReno(_) => 0,
        }
    }

    /// Bytes sent and not yet acknowledged.
    pub fn flight_bytes(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// The congestion control (to read its state).
    pub fn congestion_control(&self) -> &Cc {
        &self.cc
    }

    /// Replace the congestion control (before the connection carries data).
    pub fn set_congestion_control(&mut self, cc: Cc) {
        self.cc = cc;
    }

    /// The state a congestion event is judged on.
    fn event_sample(&self, now: Time) -> EventSample {
        EventSample {
            now,
            in_flight_bytes: self.snd_max - self.snd_una,
        }
    }

    /// Lend loss recovery the sender state it works on.
    #[inline]
    fn loss_ctx(&mut self) -> (&mut Recovery, LossCtx<'_>) {
        let cx = LossCtx {
            win: &mut self.win,
            in_recovery: &mut self.in_recovery,
            recover: &mut self.recover,
            snd_una: self.snd_una,
            snd_max: self.snd_max,
        };
        (&mut self.recovery, cx)
    }

    /// True when the retransmission timer is armed.
    pub fn rto_armed(&self) -> bool {
        self.rto_timer.is_armed()
    }

    // ------------------------------------------------------------------
    // application calls

    /// Active open: send the SYN (or, without handshake, nothing to do).
    pub fn connect<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        if self.state == TcpState::SynSent {
            self.send_control(cx, h, FLAG_SYN);
            self.arm_rto(cx, h);
        }
    }

    /// Queue `bytes` more application bytes and send what the window allows.
    pub fn write<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, bytes: u64) {
        self.app_limit += bytes;
        h.count(cx, self.tx_flow, TcpCount::Written(bytes));
        self.output(cx, h);
    }

    /// Close: stop timers; later segments for this endpoint are discarded.
    pub fn close(&mut self) {
        self.state = TcpState::Closed;
        self.rto_timer.cancel();
        self.delack_timer.cancel();
        self.pace_timer.cancel();
    }

    // ------------------------------------------------------------------
    // segment arrival

    /// Process segment `p` that arrived for this endpoint as packet `pkt`.
    /// The packet is not released here; it may have been released already,
    /// as its SACK option is read before anything is sent.
    pub fn on_segment<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, pkt: PktId, p: &Packet) {
        match self.state {
            TcpState::Closed => return,
            TcpState::Listen => {
                if p.flags & FLAG_SYN != 0 {
                    self.ts_recent = p.ts_val;
                    self.state = TcpState::SynRcvd;
                    self.send_control(cx, h, FLAG_SYN | FLAG_ACK);
                    self.arm_rto(cx, h);
                }
                return;
            }
            TcpState::SynSent => {
                if p.flags & (FLAG_SYN | FLAG_ACK) == FLAG_SYN | FLAG_ACK {
                    self.ts_recent = p.ts_val;
                    self.peer_wnd = p.wnd as u64;
                    self.handshake_done(cx, h, p.ts_ecr);
                    // the ACK of the handshake: piggybacked on data if there is any
                    self.ack_now = true;
                    self.output(cx, h);
                    if self.ack_now {
                        self.send_control(cx, h, FLAG_ACK);
                    }
                }
                return;
            }
            TcpState::SynRcvd => {
                if p.flags & FLAG_SYN != 0 {
                    // our SYN-ACK was lost: answer the retransmitted SYN again
                    self.send_control(cx, h, FLAG_SYN | FLAG_ACK);
                    return;
                }
                if p.flags & FLAG_ACK == 0 {
                    return;
                }
                self.handshake_done(cx, h, p.ts_ecr);
            }
            TcpState::Established => {
                if p.flags & FLAG_SYN != 0 {
                    // retransmitted SYN-ACK: our handshake ACK was lost
                    self.send_control(cx, h, FLAG_ACK);
                    return;
                }
            }
        }
        self.peer_wnd = p.wnd as u64;
        if p.has_ecn_bits() {
            self.on_ecn_signals(cx, h, p);
        }
        if p.flags & FLAG_ACK != 0 {
            let newly_sacked = if p.flags & FLAG_SACK != 0 {
                self.on_sack_option(cx, pkt, p)
            } else {
                0
            };
            let una_before = self.snd_una;
            self.process_ack(cx, h, p, newly_sacked);
            if self.rack_on {
                self.rack_after_ack(cx, h);
            }
            if self.prr_on && self.in_recovery {
                self.prr_after_ack(una_before, newly_sacked);
            }
            if self.pdn.waiting_bytes > 0 {
                self.pdn_resend_waiting(cx, h);
            }
        }
        if p.payload_bytes > 0 {
            self.process_data(cx, h, p);
        }
        self.output(cx, h);
        if self.ack_now {
            self.send_control(cx, h, FLAG_ACK);
        }
    }

    /// RFC 3168 §6.1.2-6.1.3: CWR ends the echo, CE (re)starts it, ECE asks for CWR.
    #[cold]
    #[inline(never)]
    fn on_ecn_signals<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, p: &Packet) {
        if self.dctcp_echo && p.payload_bytes > 0 && p.is_ect() {
            // RFC 8257 §3.2: ECE tells exactly which data was CE-marked; when
            // the CE state changes, first ACK what is held with the old state
            let ce = p.ecn() == Ecn::Ce;
            if ce {
                self.ecn.ce_received += 1;
            }
            if ce != self.ece_pending {
                if self.unacked_segs > 0 {
                    self.send_control(cx, h, FLAG_ACK);
                }
                self.ece_pending = ce;
            }
        } else if p.payload_bytes > 0 {
            if p.flags & FLAG_CWR != 0 {
                self.ece_pending = false;
            }
            if p.ecn() == Ecn::Ce {
                self.ecn.ce_received += 1;
                self.ece_pending = true;
            }
        }
        if p.flags & FLAG_ECE != 0 {
            self.ecn.ece_received += 1;
            if self.hot.on(HOT_ECN) && p.ack > self.ecn_recover {
                self.cwr_pending = true;
                self.ecn_recover = self.snd_max;
                if !self.in_recovery {
                    let s = self.event_sample(cx.now);
                    self.cc.on_congestion(&mut self.win, CongestionEvent::EcnEcho, &s);
                }
            }
        }
    }

    fn handshake_done<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, ts_ecr: u64) {
        let cfg = h.tcp().cfg_of(self.cfg);
        self.state = TcpState::Established;
        if !self.syn_retransmitted && ts_ecr > 0 {
            let rtt = cx.now.saturating_since(Time(ts_ecr));
            self.rtt
                .sample(rtt, cfg.clock_granularity, cfg.rto_min, cfg.rto_max);
            if self.rack_on {
                self.rack_note_rtt(rtt);
            }
        }
        if self.syn_retransmitted {
            // RFC 5681 §3.1: if the SYN or SYN/ACK was lost, IW is one segment
            self.win.cwnd = self.win.mss;
        }
        self.backoff = 0;
        self.rto_timer.cancel();
        h.note(AppNote::Connected {
            app: self.app,
            ep: self.id,
        });
    }

    /// Record the SACK option of packet `pkt` (acknowledging `ack`) on the
    /// scoreboard, and its D-SACK block if it has one: the bytes newly
    /// SACKed.
    #[cold]
    #[inline(never)]
    fn on_sack_option(&mut self, cx: &Ctx, pkt: PktId, p: &Packet) -> u64 {
        if p.ack > self.snd_max {
            return 0;
        }
        let (una, max) = (p.ack.max(self.snd_una), self.snd_max);
        let (probe_end, mss) = (self.tlp.end_seq, self.win.mss);
        let Some(r) = self.recovery.as_sack() else {
            return 0;
        };
        let opt = cx.net.pool.sack(pkt);
        r.on_dsack(&opt, p.ack, probe_end, mss);
        let newly = r.on_sack(&opt, una, max);
        if let Some(rack) = r.rack.as_mut() {
            for &(s, e) in opt.used() {
                rack.on_sacked(s.max(una), e.min(max), cx.now);
            }
        }
        newly
    }

    /// RACK's min RTT takes every RTT sample of the connection (Linux's
    /// `tcp_min_rtt`, the SYN's sample included).
    #[cold]
    #[inline(never)]
    fn rack_note_rtt(&mut self, rtt: Dur) {
        if let Some(rack) = self.recovery.as_sack().and_then(|r| r.rack.as_mut()) {
            rack.note_rtt(rtt);
        }
    }

    /// RACK after an ACK (RFC 8985 §6.2): the cumulatively ACKed segments
    /// are delivered, then the detection runs; a loss it finds starts
    /// recovery as a third duplicate ACK would.
    #[cold]
    #[inline(never)]
    fn rack_after_ack<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        let (una, now) = (self.snd_una, cx.now);
        if let Some(rack) = self.recovery.as_sack().and_then(|r| r.rack.as_mut()) {
            rack.on_cum_ack(una, now);
            rack.on_ack_done(now); // §6.2 step 4, after the ACK's deliveries
        }
        self.rack_detect_and_recover(cx, h);
    }

    /// Run RACK's detection; enter recovery if it found the first
    /// unacknowledged segment lost (once per window, as RFC 6582 guards
    /// fast retransmit) and point the loss timer at the RACK timer.
    fn rack_detect_and_recover<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        if self.snd_una == self.snd_max {
            return;
        }
        let (now, srtt) = (cx.now, self.rtt.srtt());
        let (r, lc) = self.loss_ctx();
        let Some(r) = r.as_sack() else {
            return;
        };
        let lost = r.rack_detect(&lc, now, srtt);
        if lost && !self.in_recovery && self.snd_una >= self.recover {
            self.enter_fast_recovery(cx, h);
        }
        if self.rto_armed() {
            let at = self.rto_at;
            self.set_loss_timer(cx, h, at);
        }
    }

    /// RACK's record of what left when (the records of RFC 8985 §6.1).
    #[cold]
    #[inline(never)]
    fn rack_on_send(&mut self, seq: u64, len: u64, now: Time) {
        if let Some(rack) = self.recovery.as_sack().and_then(|r| r.rack.as_mut()) {
            rack.on_send(seq, len, now);
        }
    }

    /// The RACK timer fired: detect again, recover, send.
    fn on_reo_timeout<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        self.rack_detect_and_recover(cx, h);
        self.output(cx, h);
        if !self.rto_armed() && self.snd_una < self.snd_max {
            let at = self.rto_at;
            self.set_loss_timer(cx, h, at);
        }
    }

    #[inline(always)]
    fn process_ack<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, p: &Packet, newly_sacked: u64) {
        let ack = p.ack;
        if ack > self.snd_max {
            return; // acknowledges data never sent: ignore (RFC 793)
        }
        let cfg = self.hot;
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            // without the timestamps option an ACK covering a retransmitted
            // byte is ambiguous: Karn's rule (RFC 6298 §3), as Linux's
            // FLAG_RETRANS_DATA_ACKED; the backoff then stays (§5.7)
            let karn_skip = cfg.on(HOT_KARN) && self.snd_una < self.rexmit_high;
            let rtt_sample = (p.ts_ecr > 0 && !karn_skip).then(|| cx.now.saturating_since(Time(p.ts_ecr)));
            if let Some(r) = rtt_sample {
                self.rtt
                    .sample(r, cfg.clock_granularity, cfg.rto_min, cfg.rto_max);
                self.backoff = 0;
                if self.rack_on {
                    self.rack_note_rtt(r);
                }
            }
            let was_in_recovery = self.in_recovery;
            self.snd_una = ack;
            if self.snd_nxt < ack {
                self.snd_nxt = ack;
            }
            let (recovery, lc) = self.loss_ctx();
            let step = recovery.on_new_ack(lc, acked);
            if let Some(seg) = step.retransmit {
                self.retransmit(cx, h, seg);
            }
            if self.tlp_on {
                self.tlp_on_ack(cx.now, was_in_recovery);
            }
            let sample = AckSample {
                now: cx.now,
                bytes_acked: acked,
                rtt_sample,
                ece: p.flags & FLAG_ECE != 0,
                in_flight_bytes: self.snd_max - self.snd_una,
                in_recovery: was_in_recovery,
                snd_una: self.snd_una,
                snd_max: self.snd_max,
            };
            self.cc.on_ack(&mut self.win, &sample);
            if self.snd_una == self.snd_max {
                self.rto_timer.cancel(); // RFC 6298 (5.2)
            } else if step.restart_rto {
                self.arm_rto(cx, h); // (5.3)
            }
            if self.snd_una == self.app_limit {
                h.note(AppNote::SendAcked {
                    app: self.app,
                    ep: self.id,
                });
            }
        } else if ack == self.snd_una
            && p.payload_bytes == 0
            && self.snd_max > self.snd_una
            && p.flags & FLAG_SYN == 0
        {
            // a duplicate ACK (RFC 5681 §2)
            let (recovery, lc) = self.loss_ctx();
            if recovery.on_dup_ack(lc, ack, newly_sacked) {
                self.enter_fast_recovery(cx, h);
            }
        }
    }

    /// RFC 6937 after an ACK in SACK recovery: cwnd from what it delivered.
    #[cold]
    #[inline(never)]
    fn prr_after_ack(&mut self, una_before: u64, newly_sacked: u64) {
        let una_advanced = self.snd_una > una_before;
        let delivered = self.snd_una.saturating_sub(una_before) + newly_sacked;
        let (r, mut lc) = self.loss_ctx();
        if let Some(r) = r.as_sack() {
            r.prr_on_ack(&mut lc, delivered, una_advanced);
        }
    }

    fn enter_fast_recovery<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        let prior_cwnd = self.win.cwnd;
        let s = self.event_sample(cx.now);
        self.cc
            .on_congestion(&mut self.win, CongestionEvent::DupAckLoss, &s);
        self.tlp.abandon();
        if self.sack_max_blocks > 0 {
            // RFC 6675 picks every segment from here on: no go-back-N left over
            self.snd_nxt = self.snd_max;
        }
        let prr_on = self.prr_on;
        let (recovery, lc) = self.loss_ctx();
        let seg = recovery.enter(lc);
        if prr_on {
            let (r, lc) = self.loss_ctx();
            if let Some(r) = r.as_sack() {
                r.prr_start(&lc, prior_cwnd, seg.map_or(0, |s| s.len_bytes));
            }
        }
        h.count(cx, self.tx_flow, TcpCount::FastRetransmit);
        if let Some(seg) = seg {
            self.retransmit(cx, h, seg);
        }
    }

    fn process_data<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, p: &Packet) {
        let seq = p.seq;
        let end = seq + p.payload_bytes as u64;
        if seq <= self.last_ack_sent {
            self.ts_recent = p.ts_val; // RFC 7323 §4.3
        }
        if end <= self.rcv_nxt {
            self.ack_now = true; // old duplicate
            if self.sack_max_blocks > 0 {
                self.sack_rx.on_duplicate(seq, end); // RFC 2883
            }
            return;
        }
        if seq < self.rcv_nxt && self.sack_max_blocks > 0 {
            self.sack_rx.on_duplicate(seq, self.rcv_nxt); // partly old
        }
        if seq <= self.rcv_nxt {
            let before = self.rcv_nxt;
            let filled_hole = !self.ooo.is_empty();
            self.rcv_nxt = end;
            while let Some(&(s, e)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.ooo.remove(0);
                self.ooo_bytes -= e - s;
                self.rcv_nxt = self.rcv_nxt.max(e);
            }
            if filled_hole && self.sack_max_blocks > 0 {
                self.sack_rx.on_advance(self.rcv_nxt);
            }
            let delivered = self.rcv_nxt - before;
            h.count(cx, self.rx_flow, TcpCount::Delivered(delivered));
            h.note(AppNote::Delivered {
                app: self.app,
                ep: self.id,
                bytes: delivered,
            });
            let (delayed_ack, delack_segments) =
                (self.hot.on(HOT_DELAYED_ACK), self.hot.delayed_ack_segments);
            if filled_hole || !delayed_ack {
                self.ack_now = true;
            } else if self.quickacks > 0 {
                self.quickacks -= 1;
                self.ack_now = true;
            } else {
                self.unacked_segs += 1;
                if self.unacked_segs >= delack_segments {
                    self.ack_now = true;
                } else {
                    self.arm_delack(cx, h);
                }
            }
        } else {
            if self.sack_max_blocks > 0 && self.ooo.iter().any(|&(s, e)| s <= seq && end <= e) {
                self.sack_rx.on_duplicate(seq, end); // held already
            }
            let held = self.insert_ooo(seq, end);
            if self.sack_max_blocks > 0 {
                self.sack_rx.on_arrival(held);
            }
            self.ack_now = true; // out of order: duplicate ACK at once
        }
    }

    /// Hold `[seq, end)` out of order, merged with the ranges it overlaps or
    /// touches (in place: nothing allocated once the list has grown); returns
    /// the merged range that holds it.
    fn insert_ooo(&mut self, seq: u64, end: u64) -> (u64, u64) {
        // ranges [i, j) overlap or touch [seq, end)
        let i = self.ooo.partition_point(|&(_, e)| e < seq);
        let j = self.ooo.partition_point(|&(s, _)| s <= end);
        let (mut s, mut e) = (seq, end);
        for &(rs, re) in &self.ooo[i..j] {
            s = s.min(rs);
            e = e.max(re);
            self.ooo_bytes -= re - rs;
        }
        self.ooo_bytes += e - s;
        if i == j {
            self.ooo.insert(i, (s, e));
        } else {
            self.ooo[i] = (s, e);
            self.ooo.drain(i + 1..j);
        }
        (s, e)
    }

    // ------------------------------------------------------------------
    // sending

    /// Send new (or go-back-N) data while the window allows.
    pub fn output<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        if self.state != TcpState::Established {
            return;
        }
        if self.in_recovery && self.sack_max_blocks > 0 {
            self.sack_recovery_output(cx, h);
            return;
        }
        let header_bytes = self.hot.header_bytes as u64;
        let mss = self.win.mss;
        if self.hot.on(HOT_RESTART_AFTER_IDLE)
            && self.snd_una == self.snd_max
            && self.snd_nxt < self.app_limit
            && self.snd_max > 0
            && cx.now.saturating_since(self.last_send) > self.rtt.rto()
        {
            // RFC 5681 §4.1: restart window after an idle period
            let iw = h.tcp().cfg_of(self.cfg).initial_cwnd_segments.max(1) as u64 * mss;
            self.win.cwnd = self.win.cwnd.min(iw);
        }
        // RFC 3042: new data only, one segment per duplicate ACK (two at most), cwnd untouched
        let limited_transmit =
            if self.hot.on(HOT_LIMITED_TRANSMIT) && !self.in_recovery && self.snd_nxt == self.snd_max {
                self.recovery.dupacks().min(2) as u64 * mss
            } else {
                0
            };
        let wnd = (self.win.cwnd + limited_transmit).min(self.peer_wnd.max(mss));
        if let Pacer::Rate(r) = &mut self.pacer {
            r.update(self.win.cwnd, self.win.ssthresh, self.rtt.srtt());
        }
        while self.snd_nxt < self.app_limit {
            let mut len = mss.min(self.app_limit - self.snd_nxt);
            if self.snd_nxt < self.snd_max && self.sack_max_blocks > 0 {
                match self.skip_sacked(len) {
                    Some(l) => len = l,
                    None => continue,
                }
            }
            let in_flight = self.snd_nxt - self.snd_una;
            if in_flight + len > wnd {
                break;
            }
            let frame = (header_bytes + len) as u32 + cx.net.framing.frame_overhead_bytes;
            if let Some(at) = self.pacer.hold_until(cx.now, frame) {
                self.pace_timer.arm(&mut cx.ev, at, Event::TcpPace(self.id));
                break;
            }
            if let Some(at) = self.tsq_hold(cx, h, frame) {
                self.pace_timer.arm(&mut cx.ev, at, Event::TcpPace(self.id));
                break;
            }
            if !h.egress_has_room(cx, self.host, self.peer_host, frame) {
                h.egress_block(cx, self.host, self.id);
                break;
            }
            let seq = self.snd_nxt;
            if seq < self.snd_max {
                h.count(cx, self.tx_flow, TcpCount::Retransmit);
            }
            self.send_data(cx, h, seq, len);
            self.pacer.on_send(cx.now, frame);
            self.snd_nxt += len;
            if self.snd_nxt > self.snd_max {
                self.snd_max = self.snd_nxt;
            }
            if !self.rto_armed() {
                self.arm_rto(cx, h); // RFC 6298 (5.1)
            } else if self.tlp_on {
                // RFC 8985 §7.2: restart the PTO after new data
                let at = self.rto_at;
                self.set_loss_timer(cx, h, at);
            }
        }
    }

    /// Go-back-N after a timeout skips what the receiver SACKed (as Linux):
    /// `None` if `snd_nxt` was SACKed (it moved past the range), else the
    /// length to resend, `len` at most, up to the next SACKed range.
    #[inline(never)]
    fn skip_sacked(&mut self, len: u64) -> Option<u64> {
        let Some(sb) = self.recovery.scoreboard() else {
            return Some(len);
        };
        if let Some(end) = sb.sacked_until(self.snd_nxt) {
            self.snd_nxt = end;
            return None;
        }
        match sb.first_hole(self.snd_nxt, self.snd_max) {
            Some((_, hole_end)) => Some(len.min(hole_end - self.snd_nxt)),
            None => Some(len),
        }
    }

    /// RFC 6675 (C): while `cwnd - pipe >= 1 SMSS`, send what `NextSeg` picks.
    #[inline(never)]
    fn sack_recovery_output<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        let mss = self.win.mss;
        let wnd = self.peer_wnd.max(mss);
        {
            let (r, lc) = self.loss_ctx();
            r.as_sack().expect("SACK recovery").set_pipe(&lc); // (B.2)
        }
        loop {
            let new_len = mss.min(self.app_limit.saturating_sub(self.snd_max));
            let new_data = new_len > 0 && self.snd_max + new_len - self.snd_una <= wnd;
            let (r, lc) = self.loss_ctx();
            let r = r.as_sack().expect("SACK recovery");
            let Some(next) = r.next_seg(&lc, new_data) else {
                break;
            };
            let (seq, len) = match next {
                NextSeg::Retransmit(s) | NextSeg::Rescue(s) => (s.seq, s.len_bytes),
                NextSeg::NewData => (self.snd_max, new_len),
            };
            let frame = (self.hot.header_bytes as u64 + len) as u32 + cx.net.framing.frame_overhead_bytes;
            if let Some(at) = self.tsq_hold(cx, h, frame) {
                self.pace_timer.arm(&mut cx.ev, at, Event::TcpPace(self.id));
                break;
            }
            if !h.egress_has_room(cx, self.host, self.peer_host, frame) {
                h.egress_block(cx, self.host, self.id);
                break;
            }
            if next == NextSeg::NewData {
                self.send_data(cx, h, seq, len);
                self.snd_max += len;
                self.snd_nxt = self.snd_max;
            } else {
                self.retransmit(cx, h, Segment { seq, len_bytes: len });
            }
            let (r, lc) = self.loss_ctx();
            r.as_sack().expect("SACK recovery").on_sent(&lc, next, len);
        }
        if !self.rto_armed() {
            self.arm_rto(cx, h);
        }
    }

    /// TCP Small Queues (`crate::host::tsq`): `Some(t)` if this socket
    /// holds its limit in its host until `t`.
    #[inline(always)]
    fn tsq_hold<H: TcpHost>(&self, cx: &mut Ctx, h: &mut H, frame: u32) -> Option<Time> {
        if !h.tsq_on() {
            return None;
        }
        self.tsq_hold_on(cx, h, frame)
    }

    #[cold]
    #[inline(never)]
    fn tsq_hold_on<H: TcpHost>(&self, cx: &mut Ctx, h: &mut H, frame: u32) -> Option<Time> {
        let (cwnd, ssthresh, srtt) = (self.win.cwnd, self.win.ssthresh, self.rtt.srtt());
        h.tsq_hold(cx, self.host, self.id, frame, cwnd, ssthresh, srtt)
    }

    fn retransmit<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, seg: Segment) {
        h.count(cx, self.tx_flow, TcpCount::Retransmit);
        self.send_data(cx, h, seg.seq, seg.len_bytes);
    }

    fn advertised_window(&self, now: Time) -> u32 {
        let s = RcvState {
            now,
            rcv_buf_bytes: self.hot.rcv_buf_bytes,
            ooo_bytes: self.ooo_bytes,
        };
        self.rcv_window.advertised_bytes(&s).min(u32::MAX as u64) as u32
    }

    #[inline(always)]
    fn stamp(&mut self, cx: &Ctx, mut flags: u8) -> Packet {
        if self.ece_pending && flags & FLAG_ACK != 0 {
            flags |= FLAG_ECE;
            self.ecn.ece_sent += 1;
        }
        let mut ip_bytes = self.hot.header_bytes;
        if self.sack_max_blocks > 0 && !self.sack_rx.is_empty() && flags & FLAG_ACK != 0 {
            flags |= FLAG_SACK;
            ip_bytes += self.sack_option_bytes();
        }
        Packet {
            seq: self.snd_nxt,
            ack: self.rcv_nxt,
            ts_val: cx.now.ps().max(1),
            ts_ecr: self.ts_recent,
            route: self.route,
            hop: 0,
            kind: PktKind::Tcp,
            flags,
            ip_bytes,
            payload_bytes: 0,
            flow: self.tx_flow,
            dst_ep: self.peer_ep,
            src_ep: self.id,
            src: self.host,
            dst: self.peer_host,
            wnd: self.advertised_window(cx.now),
        }
    }

    #[cold]
    #[inline(never)]
    fn sack_option_bytes(&self) -> u32 {
        self.sack_rx.option(self.sack_max_blocks as usize).wire_bytes()
    }

    fn acked_now(&mut self) {
        self.ack_now = false;
        self.unacked_segs = 0;
        self.delack_timer.cancel();
        self.last_ack_sent = self.rcv_nxt;
    }

    fn send_data<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, seq: u64, len: u64) {
        let mut p = self.stamp(cx, FLAG_ACK);
        p.seq = seq;
        p.payload_bytes = len as u32;
        p.ip_bytes += len as u32;
        if seq < self.snd_max {
            self.rexmit_high = self.rexmit_high.max(seq + len);
        }
        if self.hot.on(HOT_ECN) && seq >= self.snd_max {
            // new data only: RFC 3168 §6.1.5 keeps retransmissions not-ECT
            p.set_ecn(Ecn::Ect0);
            if self.cwr_pending {
                self.cwr_pending = false;
                p.flags |= FLAG_CWR;
                self.ecn.cwr_sent += 1;
            }
        }
        self.acked_now();
        self.last_send = cx.now;
        if self.rack_on {
            self.rack_on_send(seq, len, cx.now);
        }
        self.emit(cx, h, p);
    }

    /// Hand `p` to the host's egress, with its SACK option if it has one.
    #[inline(always)]
    fn emit<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, p: Packet) {
        let sacked = p.flags & FLAG_SACK != 0;
        let id = cx.net.alloc(p);
        if sacked {
            self.attach_sack(cx, id);
        }
        h.send(cx, id);
    }

    #[cold]
    #[inline(never)]
    fn attach_sack(&mut self, cx: &mut Ctx, id: PktId) {
        let opt = self.sack_rx.option(self.sack_max_blocks as usize);
        cx.net.pool.set_sack(id, opt);
        if self.sack_rx.dsack_sent() {
            self.dsacks_sent += 1;
        }
    }

    fn send_control<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, flags: u8) {
        let mut p = self.stamp(cx, flags);
        if flags & FLAG_SYN != 0 {
            p.ip_bytes = h.tcp().cfg_of(self.cfg).syn_bytes;
            p.seq = 0;
            if flags & FLAG_ACK == 0 {
                p.ack = 0;
            }
        }
        self.acked_now();
        self.emit(cx, h, p);
    }

    // ------------------------------------------------------------------
    // timers

    fn arm_rto<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        let at = cx.now + self.current_rto(h.tcp().cfg_of(self.cfg));
        self.set_loss_timer(cx, h, at);
    }

    /// RFC 6298's timer is due at `rto_at`; with tail loss probes the one
    /// timer fires at the PTO first when a probe may go (RFC 8985 §7.2).
    #[inline(always)]
    fn set_loss_timer<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, rto_at: Time) {
        if self.tlp_on | self.rack_on {
            self.set_loss_timer_tlp(cx, h, rto_at);
        } else {
            self.rto_timer.arm(&mut cx.ev, rto_at, Event::TcpRto(self.id));
        }
    }

    #[inline(never)]
    fn set_loss_timer_tlp<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, rto_at: Time) {
        self.rto_at = rto_at;
        self.probe_armed = false;
        self.reo_armed = false;
        let mut at = rto_at;
        if self.tlp_on && self.probe_allowed() {
            let flight = self.snd_max - self.snd_una;
            let cfg = h.tcp().cfg_of(self.cfg);
            if cfg.tlp_linux_pto {
                // Linux: the probe, not the timeout, at min(PTO, RTO deadline)
                let pto = TlpState::pto_linux(self.rtt.srtt(), flight, self.win.mss, cfg.rto_min);
                at = (cx.now + pto).min(rto_at);
                self.probe_armed = true;
            } else {
                let max_ack_delay = if cfg.delayed_ack {
                    cfg.delayed_ack_timeout
                } else {
                    Dur::ZERO
                };
                let pto = TlpState::pto(self.rtt.srtt(), flight, self.win.mss, max_ack_delay);
                let pto_at = cx.now + pto;
                if pto_at < rto_at {
                    at = pto_at;
                    self.probe_armed = true;
                }
            }
        }
        if self.rack_on {
            let reo_at = match self.recovery.scoreboard() {
                Some(_) => self.rack_reo_at(),
                None => Time::NEVER,
            };
            if reo_at < at {
                at = reo_at;
                self.probe_armed = false;
                self.reo_armed = true;
            }
        }
        self.rto_timer.arm(&mut cx.ev, at, Event::TcpRto(self.id));
    }

    /// When RACK's timer is due (`Time::NEVER`: not armed).
    fn rack_reo_at(&mut self) -> Time {
        self.recovery
            .as_sack()
            .and_then(|r| r.rack.as_ref())
            .map_or(Time::NEVER, |r| r.reo_at)
    }

    /// RFC 8985 §7.2: a PTO only in the open state with data outstanding, no
    /// probe outstanding and nothing SACKed above `snd_una`.
    fn probe_allowed(&self) -> bool {
        self.state == TcpState::Established
            && self.snd_max > self.snd_una
            && !self.in_recovery
            && !self.rto_recovery
            && self.tlp.end_seq.is_none()
            && self.recovery.scoreboard().is_none_or(|sb| sb.is_empty())
    }

    /// The PTO fired: send the probe (RFC 8985 §7.3) and arm the RTO.
    fn send_probe<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        let mss = self.win.mss;
        let flight = self.snd_max - self.snd_una;
        let mut probe = TlpState::choose(self.snd_una, self.snd_max, self.app_limit, self.peer_wnd, mss);
        if let Probe::Retransmit(seg) = &mut probe {
            // the last segment as it was sent, where RACK keeps the boundaries
            // (Linux's tcp_send_loss_probe resends the last skb, not the last MSS)
            let last = self
                .recovery
                .as_sack()
                .and_then(|r| r.rack.as_ref())
                .and_then(|k| k.last_sent());
            if let Some((start, end)) = last {
                if start >= self.snd_una && end == self.snd_max && end - start <= mss {
                    *seg = Segment {
                        seq: start,
                        len_bytes: end - start,
                    };
                }
            }
        }
        match probe {
            Probe::NewData(len) => {
                let seq = self.snd_max;
                self.send_data(cx, h, seq, len);
                self.snd_max += len;
                self.snd_nxt = self.snd_max;
            }
            Probe::Retransmit(seg) => self.retransmit(cx, h, seg),
        }
        let is_retrans = matches!(probe, Probe::Retransmit(_));
        self.tlp.on_probe(cx.now, self.snd_max, is_retrans, flight);
        self.arm_rto(cx, h);
    }

    /// RFC 8985 §7.4 on an ACK of new data: a probe that retransmitted data
    /// and is now acknowledged repaired a loss: respond as fast recovery
    /// would (once; not when recovery already did). A timeout's go-back-N
    /// ends at its `recover`.
    fn tlp_on_ack(&mut self, now: Time, was_in_recovery: bool) {
        if self.rto_recovery && self.snd_una >= self.recover {
            self.rto_recovery = false;
        }
        if self.tlp.on_ack(self.snd_una) && !was_in_recovery {
            let s = EventSample {
                now,
                in_flight_bytes: self.tlp.flight_at_probe,
            };
            self.cc
                .on_congestion(&mut self.win, CongestionEvent::DupAckLoss, &s);
        }
    }

    fn arm_delack<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        if !self.delack_timer.is_armed() {
            let at = cx.now + h.tcp().cfg_of(self.cfg).delayed_ack_timeout;
            self.delack_timer.arm(&mut cx.ev, at, Event::TcpDelack(self.id));
        }
    }

    /// The retransmission-timer event fired.
    pub fn on_rto_event<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        let ev = Event::TcpRto(self.id);
        if self.rto_timer.fire(&mut cx.ev, cx.now, ev) && self.state != TcpState::Closed {
            if self.probe_armed {
                self.probe_armed = false;
                self.send_probe(cx, h);
            } else if self.reo_armed {
                self.reo_armed = false;
                self.on_reo_timeout(cx, h);
            } else {
                self.on_timeout(cx, h);
            }
        }
    }

    fn on_timeout<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        h.count(cx, self.tx_flow, TcpCount::Timeout);
        // (5.5) back off the timer
        self.backoff += 1;
        match self.state {
            TcpState::SynSent => {
                h.count(cx, self.tx_flow, TcpCount::Retransmit);
                self.syn_retransmitted = true;
                self.send_control(cx, h, FLAG_SYN);
                self.arm_rto(cx, h);
                return;
            }
            TcpState::SynRcvd => {
                h.count(cx, self.tx_flow, TcpCount::Retransmit);
                self.syn_retransmitted = true;
                self.send_control(cx, h, FLAG_SYN | FLAG_ACK);
                self.arm_rto(cx, h);
                return;
            }
            _ => {}
        }
        if self.snd_una == self.snd_max {
            return;
        }
        // the loss window; RFC 6582 §4: recover := highest sent
        self.pdn_forget();
        let s = self.event_sample(cx.now);
        self.cc.on_congestion(&mut self.win, CongestionEvent::Rto, &s);
        let (recovery, lc) = self.loss_ctx();
        recovery.on_rto(lc);
        self.tlp.abandon();
        self.rto_recovery = self.tlp_on;
        // go back N: resend from the first unacknowledged byte
        self.snd_nxt = self.snd_una;
        self.output(cx, h);
        if !self.rto_armed() {
            self.arm_rto(cx, h);
        }
    }

    /// The pacing event fired: send what the window allows.
    pub fn on_pace_event<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        if self.pace_timer.fire(&mut cx.ev, cx.now, Event::TcpPace(self.id)) {
            if self.pdn.waiting_bytes > 0 {
                self.pdn_resend_waiting(cx, h);
            }
            self.output(cx, h);
        }
    }

    /// The delayed-ACK event fired.
    pub fn on_delack_event<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H) {
        let ev = Event::TcpDelack(self.id);
        if self.delack_timer.fire(&mut cx.ev, cx.now, ev) && self.state != TcpState::Closed {
            self.send_control(cx, h, FLAG_ACK);
        }
    }
}
