//! PDN — packet drop notification, the switch side (spec: `pdn.md`).
//!
//! When a PDN switch drops a TCP data segment of a PDN host for congestion,
//! it builds a 20-byte notification (type, operation, the 4-tuple, sequence
//! number, length) and queues it in a **notification queue** of the output
//! port toward the segment's sender — the reverse of the hop the segment came
//! by. Notification queues are separate from packet queues, one per output
//! port, served in arrival order and bounded (`queue_limit` notifications;
//! one that finds its queue full is lost and counted).
//!
//! A queued notification leaves with the next frame the port starts: it is
//! **piggybacked** on that frame (20 bytes more on the wire, EtherType
//! 0xA800), or, if the port has no frame to send, it goes in an otherwise
//! **empty frame** (the 64-byte Ethernet minimum). Every hop detaches it and
//! queues it toward the sender again, until the sender's host hands it to
//! the socket ([`crate::host::receive`], then the TCP endpoint's
//! `on_drop_notification`). A switch without PDN on the way cannot forward
//! it (the notification is lost and counted).
//!
//! Model choices:
//! - Which drops notify is the discipline's answer ([`Verdict::DropNotify`]):
//!   a PDN switch's ports run [`PdnNotify`] around their discipline, which
//!   turns a congestion drop of a PDN host's TCP data segment into
//!   drop-and-notify. The spec installs a reverse-path entry per flow when
//!   the flow is set up; here that entry exists for flows whose sender has
//!   PDN on, so PDN and NewReno flows can share a network.
//! - The ports of a PDN switch run in scheduled mode (a notification is
//!   attached when a frame starts, which the stamp-at-arrival FIFO mode
//!   cannot do); with the reference drop-tail FIFO they admit and drop
//!   exactly as a drop-tail port does.
//! - A notification in flight is a pooled packet of kind
//!   [`PktKind::DropNotice`] that travels in the pipe right behind its
//!   carrier (same arrival time); it is not IP traffic and counts in no
//!   flow's bytes (bytes stay conserved).

use super::packet::{Packet, PktId, PktKind};
use super::qdisc::{Arrival, Queued, Scheduler, Verdict};
use super::topology::NodeKind;
use super::Net;
use crate::engine::EventQueue;
use std::collections::VecDeque;
use std::sync::Arc;
use xco_core::Time;

/// Bytes of one notification (type, operation, 4-tuple, sequence number, length).
pub const NOTICE_BYTES: u32 = 20;
/// Frame bytes of an otherwise-empty frame carrying one notification (the
/// Ethernet minimum: 14 header + 20 notification + 4 FCS, padded to 64).
pub const EMPTY_FRAME_BYTES: u32 = 64;
/// EtherType of an IPv4 frame that carries a notification.
pub const ETHERTYPE_PDN_IPV4: u16 = 0xA800;

/// Where PDN runs.
#[derive(Clone, Debug)]
pub struct PdnConfig {
    /// Per node: a switch that makes and forwards notifications.
    pub switches: Vec<bool>,
    /// Per node: a host whose TCP answers notifications (and whose segments
    /// switches notify about); its MSS is [`NOTICE_BYTES`] smaller.
    pub hosts: Vec<bool>,
    /// Notifications a port's notification queue holds at most.
    pub queue_limit: u32,
    /// How senders resend notified segments (`[pdn] resend`).
    pub resend: PdnResend,
}

/// How a PDN sender resends the segments notifications report dropped
/// (`[pdn] resend`; the rules are explained in `tcp/endpoint/pdn.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PdnResend {
    /// Every notification is answered with a resend at once, whatever the
    /// window, a notification of a lost resend too (the spec's rule).
    #[default]
    AtOnce,
    /// At once, but a segment once per timeout period: a lost resend is left
    /// to the retransmission timer.
    Once,
    /// A notified segment leaves the flight; resends go out while the flight
    /// fits the window, and the window halves again each round trip in
    /// which resends keep being dropped.
    Window,
    /// `Window`, and a segment whose resend was dropped too waits one
    /// smoothed RTT before it is resent again.
    WindowRtt,
}

impl PdnResend {
    /// Every rule's name as scenario files spell it.
    pub const NAMES: [&'static str; 4] = ["at-once", "once", "window", "window-rtt"];

    /// The rule called `name` in scenario files.
    pub fn parse(name: &str) -> Option<PdnResend> {
        match name {
            "at-once" => Some(PdnResend::AtOnce),
            "once" => Some(PdnResend::Once),
            "window" => Some(PdnResend::Window),
            "window-rtt" => Some(PdnResend::WindowRtt),
            _ => None,
        }
    }
}

/// PDN counters of one output port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PdnPortStats {
    /// Notifications made here for drops at this switch (counted at the port
    /// that dropped the segment).
    pub made: u64,
    /// Notifications that left this port piggybacked on a frame.
    pub piggybacked: u64,
    /// Notifications that left this port in an empty frame.
    pub empty_frames: u64,
    /// Notifications lost because this port's notification queue was full.
    pub lost_queue_full: u64,
    /// Largest number of notifications waiting here at once (never above
    /// the configured limit: `lost_queue_full` counts what did not fit).
    pub max_queue_len: u32,
    /// Wire bytes the notifications added on this port (20 per piggybacked
    /// one, a whole minimum frame plus preamble and gap per empty frame).
    pub wire_bytes: u64,
}

/// PDN totals of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PdnTotals {
    /// Notifications made.
    pub made: u64,
    /// Hops taken piggybacked.
    pub piggybacked: u64,
    /// Hops taken in empty frames.
    pub empty_frames: u64,
    /// Notifications handed to their sender's host.
    pub delivered: u64,
    /// Notifications lost (a full notification queue, or a switch on the way without PDN).
    pub lost: u64,
    /// Largest notification-queue length at any port.
    pub max_queue_len: u32,
}

/// The PDN state of a network.
#[derive(Debug)]
pub struct PdnState {
    /// Where PDN runs.
    pub cfg: PdnConfig,
    /// Per port: notifications waiting to leave.
    queues: Vec<VecDeque<PktId>>,
    /// Per port: counters.
    pub stats: Vec<PdnPortStats>,
    /// Per port: the port of the same link in the other direction.
    reverse: Vec<u32>,
    /// Notifications handed to their sender's host.
    pub delivered: u64,
    /// Notifications that reached a switch without PDN (lost there).
    pub lost_no_pdn: u64,
}

impl PdnState {
    /// Totals over every port.
    pub fn totals(&self) -> PdnTotals {
        let mut t = PdnTotals {
            delivered: self.delivered,
            lost: self.lost_no_pdn,
            ..PdnTotals::default()
        };
        for s in &self.stats {
            t.made += s.made;
            t.piggybacked += s.piggybacked;
            t.empty_frames += s.empty_frames;
            t.lost += s.lost_queue_full;
            t.max_queue_len = t.max_queue_len.max(s.max_queue_len);
        }
        t
    }

    /// Notifications waiting at `port`.
    pub fn queue_len(&self, port: u32) -> usize {
        self.queues[port as usize].len()
    }

    /// True if `host` runs PDN.
    #[inline]
    pub fn host(&self, host: u32) -> bool {
        self.cfg.hosts[host as usize]
    }

    /// How senders resend notified segments.
    pub fn resend(&self) -> PdnResend {
        self.cfg.resend
    }
}

/// A scheduled discipline that asks for a notification when the discipline
/// it wraps drops a TCP data segment of a PDN host.
pub struct PdnNotify {
    inner: Box<dyn Scheduler>,
    hosts: Arc<[bool]>,
}

impl PdnNotify {
    /// Wrap `inner`; `hosts[n]` says whether node `n` runs PDN.
    pub fn new(inner: Box<dyn Scheduler>, hosts: Arc<[bool]>) -> PdnNotify {
        PdnNotify { inner, hosts }
    }
}

impl Scheduler for PdnNotify {
    fn on_arrival(&mut self, a: &Arrival, q: Queued, pkt: &mut Packet, evicted: &mut Vec<Queued>) -> Verdict {
        match self.inner.on_arrival(a, q, pkt, evicted) {
            Verdict::Drop(reason)
                if pkt.kind == PktKind::Tcp && pkt.payload_bytes > 0 && self.hosts[pkt.src as usize] =>
            {
                Verdict::DropNotify(reason)
            }
            v => v,
        }
    }
    fn dequeue(&mut self, now: Time) -> Option<Queued> {
        self.inner.dequeue(now)
    }
    fn backlog_bytes(&self) -> u64 {
        self.inner.backlog_bytes()
    }
    fn limit_bytes(&self) -> u64 {
        self.inner.limit_bytes()
    }
    fn queued(&self) -> Vec<Queued> {
        self.inner.queued()
    }
    fn clear(&mut self) {
        self.inner.clear()
    }
}

/// Sequence number and length a notification reports, read from its packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoticeHeader {
    /// First byte of the dropped segment.
    pub seq: u64,
    /// Its payload length, bytes.
    pub len_bytes: u32,
    /// The sending endpoint (the socket the 4-tuple names).
    pub sender_ep: u32,
    /// The flow of the dropped segment (to check the socket still runs it).
    pub flow: u32,
}

impl Packet {
    /// A notification about dropped `p`, to travel back along `p`'s route
    /// from hop `hop` (it leaves by the reverse of route port `hop`).
    pub fn drop_notice(p: &Packet, hop: u16) -> Packet {
        Packet {
            kind: PktKind::DropNotice,
            seq: p.seq,
            payload_bytes: 0,
            ip_bytes: 0,
            wnd: p.payload_bytes,
            src_ep: p.src_ep,
            dst_ep: p.dst_ep,
            flow: p.flow,
            route: p.route,
            hop,
            src: p.dst,
            dst: p.src,
            ..Packet::EMPTY
        }
    }

    /// What a notification reports.
    #[inline]
    pub fn notice(&self) -> NoticeHeader {
        debug_assert_eq!(self.kind, PktKind::DropNotice);
        NoticeHeader {
            seq: self.seq,
            len_bytes: self.wnd,
            sender_ep: self.src_ep,
            flow: self.flow,
        }
    }
}

impl Net {
    /// Turn PDN on: the switches `cfg` names get notification queues and
    /// their ports run [`PdnNotify`] around a scheduled discipline (the
    /// reference drop-tail FIFO for a drop-tail port). Call before traffic starts.
    pub fn enable_pdn(&mut self, cfg: PdnConfig) -> Result<(), super::NetError> {
        let n = self.nodes.len();
        if cfg.switches.len() != n || cfg.hosts.len() != n {
            return Err(super::NetError("pdn: one flag per node expected".into()));
        }
        let hosts: Arc<[bool]> = cfg.hosts.clone().into();
        for port in 0..self.ports.len() as u32 {
            let from = self.ports[port as usize].from;
            if self.kinds[from as usize] != NodeKind::Switch || !cfg.switches[from as usize] {
                continue;
            }
            let inner: Box<dyn Scheduler> = match &self.ports[port as usize].qdisc {
                super::Qdisc::DropTail(d) => Box::new(super::scheduled::ScheduledFifo::new(d.limit_bytes)),
                super::Qdisc::Scheduled(_) | super::Qdisc::Fifo(_) => {
                    return Err(super::NetError(format!(
                        "pdn: switch '{}' runs another discipline; PDN runs on drop-tail ports",
                        self.nodes[from as usize].name
                    )))
                }
            };
            let q = super::Qdisc::Scheduled(Box::new(PdnNotify::new(inner, hosts.clone())));
            self.set_qdisc(port, q)?;
        }
        let reverse = self
            .ports
            .iter()
            .map(|p| self.port_between(p.to, p.from).unwrap_or(u32::MAX))
            .collect();
        self.pdn = Some(Box::new(PdnState {
            cfg,
            queues: vec![VecDeque::new(); self.ports.len()],
            stats: vec![PdnPortStats::default(); self.ports.len()],
            reverse,
            delivered: 0,
            lost_no_pdn: 0,
        }));
        Ok(())
    }

    /// Turn the drops that asked for a notification into notifications,
    /// queued toward their senders.
    pub(super) fn pdn_flush(&mut self, now: Time, ev: &mut EventQueue) {
        if self.pdn.is_none() {
            self.drop_notices.clear();
            return;
        }
        let mut notices = std::mem::take(&mut self.drop_notices);
        for d in notices.drain(..) {
            // the segment entered the dropping port at route index `hop`; it
            // came by route port `hop - 1`, whose reverse leads back
            let hop = d.packet.hop - 1;
            let back = self.routes.port(d.packet.route, hop);
            let pdn = self.pdn.as_mut().expect("pdn on");
            pdn.stats[d.port as usize].made += 1;
            let out = pdn.reverse[back as usize];
            let notice = self.pool.alloc(Packet::drop_notice(&d.packet, hop));
            self.queue_notice(now, ev, out, notice);
        }
        self.drop_notices = notices;
    }

    /// Queue notification `notice` at `port` (lost if its queue is full);
    /// an idle port sends it at once in an empty frame.
    fn queue_notice(&mut self, now: Time, ev: &mut EventQueue, port: u32, notice: PktId) {
        let pdn = self.pdn.as_mut().expect("pdn on");
        let q = &mut pdn.queues[port as usize];
        let s = &mut pdn.stats[port as usize];
        if q.len() >= pdn.cfg.queue_limit as usize {
            s.lost_queue_full += 1;
            self.pool.release(notice);
            return;
        }
        q.push_back(notice);
        s.max_queue_len = s.max_queue_len.max(q.len() as u32);
        let pt = &self.ports[port as usize];
        if pt.busy_until <= now && pt.depart_at == Time::NEVER {
            self.start_next(now, ev, port);
        }
    }

    /// The notification to attach to a frame `port` starts now, if one waits.
    #[inline]
    pub(super) fn take_notice(&mut self, port: u32, piggyback: bool) -> Option<PktId> {
        let pdn = self.pdn.as_mut()?;
        let n = pdn.queues[port as usize].pop_front()?;
        let s = &mut pdn.stats[port as usize];
        if piggyback {
            s.piggybacked += 1;
            s.wire_bytes += NOTICE_BYTES as u64;
        } else {
            s.empty_frames += 1;
            s.wire_bytes += (EMPTY_FRAME_BYTES + self.framing.gap_bytes) as u64;
        }
        Some(n)
    }

    /// A notification arrived at node `at` by `port`: hand it to its
    /// sender's host (returned) or queue it toward the sender.
    #[cold]
    pub(super) fn on_notice_arrive(
        &mut self,
        now: Time,
        ev: &mut EventQueue,
        at: u32,
        notice: PktId,
    ) -> Option<PktId> {
        if self.kinds[at as usize] == NodeKind::Host {
            debug_assert_eq!(self.pool[notice].dst, at, "notification at the wrong host");
            if let Some(pdn) = self.pdn.as_mut() {
                pdn.delivered += 1;
            }
            return Some(notice);
        }
        let pdn = self.pdn.as_mut().expect("notifications exist only with pdn on");
        if !pdn.cfg.switches[at as usize] {
            pdn.lost_no_pdn += 1;
            self.pool.release(notice);
            return None;
        }
        let p = &mut self.pool[notice];
        debug_assert!(p.hop > 0, "a notification at a switch has a hop left");
        p.hop -= 1;
        let back = self.routes.port(p.route, p.hop);
        let out = pdn.reverse[back as usize];
        self.queue_notice(now, ev, out, notice);
        None
    }

    /// PDN's state, when it runs.
    pub fn pdn(&self) -> Option<&PdnState> {
        self.pdn.as_deref()
    }

    /// Notifications waiting at `port` (0 without PDN).
    pub fn notice_queue_len(&self, port: u32) -> usize {
        self.pdn.as_ref().map_or(0, |p| p.queue_len(port))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::routing::RoutingMode;
    use crate::net::topology::Topology;
    use crate::net::{Framing, NetConfig};
    use xco_core::Dur;

    /// h0 - s0 - h1 at 1 Gbit/s with PDN everywhere; the port s0 -> h0.
    fn net(queue_limit: u32) -> (Net, EventQueue, u32) {
        let topo = Topology::star(2, 1_000_000_000, Dur::from_us(1));
        let mut net = Net::new(
            &topo,
            NetConfig {
                switch_buffer_bytes: 100_000,
                host_buffer_bytes: 100_000,
                framing: Framing::default(),
            },
            RoutingMode::Ecmp,
            1,
        )
        .unwrap();
        let n = net.nodes.len();
        net.enable_pdn(PdnConfig {
            switches: vec![true; n],
            hosts: vec![true; n],
            queue_limit,
            resend: PdnResend::AtOnce,
        })
        .unwrap();
        let port = net
            .port_between(net.node("s0").unwrap(), net.node("h0").unwrap())
            .unwrap();
        (net, EventQueue::new(), port)
    }

    fn notice(net: &mut Net) -> PktId {
        let h0 = net.node("h0").unwrap();
        net.alloc(Packet {
            kind: PktKind::DropNotice,
            dst: h0,
            ..Packet::EMPTY
        })
    }

    fn data(net: &mut Net, ip_bytes: u32) -> PktId {
        let (h0, h1) = (net.node("h0").unwrap(), net.node("h1").unwrap());
        let route = net.route(h1, h0, 0).unwrap();
        net.flows.push(crate::stats::FlowStats::new(
            crate::stats::FlowKind::Tcp,
            0,
            "data",
            h1,
            h0,
            Time::ZERO,
        ));
        net.alloc(Packet {
            ip_bytes,
            payload_bytes: ip_bytes - 40,
            route,
            hop: 1,
            src: h1,
            dst: h0,
            ..Packet::EMPTY
        })
    }

    fn wire(net: &Net, port: u32, frame_bytes: u32) -> Dur {
        net.ports[port as usize].serialization(frame_bytes + net.framing.gap_bytes)
    }

    #[test]
    fn an_idle_port_sends_a_notification_in_an_empty_minimum_frame() {
        let (mut net, mut ev, port) = net(8);
        let n = notice(&mut net);
        net.queue_notice(Time::ZERO, &mut ev, port, n);
        let pt = &net.ports[port as usize];
        assert_eq!(pt.busy_until, Time::ZERO + wire(&net, port, EMPTY_FRAME_BYTES));
        assert_eq!(pt.pipe.len(), 1, "the notification is on the wire");
        let s = net.pdn().unwrap().stats[port as usize];
        assert_eq!((s.empty_frames, s.piggybacked), (1, 0));
        assert_eq!(s.wire_bytes, (EMPTY_FRAME_BYTES + net.framing.gap_bytes) as u64);
    }

    #[test]
    fn a_piggybacked_notification_adds_its_bytes_to_the_carrier_frames_wire_time() {
        let (mut net, mut ev, port) = net(8);
        let frame = 1500 + net.framing.frame_overhead_bytes;
        // the first frame starts at once, the second waits behind it
        for _ in 0..2 {
            let p = data(&mut net, 1500);
            net.enqueue_from(Time::ZERO, &mut ev, port, 0, p);
        }
        let first_done = Time::ZERO + wire(&net, port, frame);
        assert_eq!(net.ports[port as usize].busy_until, first_done);
        let n = notice(&mut net);
        net.queue_notice(Time::ZERO, &mut ev, port, n);
        assert_eq!(
            net.notice_queue_len(port),
            1,
            "the port is busy: the notification waits"
        );
        net.on_port_depart(first_done, &mut ev, port);
        let carrier_done = first_done + wire(&net, port, frame + NOTICE_BYTES);
        assert_eq!(net.ports[port as usize].busy_until, carrier_done);
        assert_eq!(net.notice_queue_len(port), 0);
        let pipe: Vec<_> = net.ports[port as usize].pipe.iter().copied().collect();
        assert_eq!(
            pipe.len(),
            3,
            "two frames and the notification riding on the second"
        );
        assert_eq!(pipe[1].0, pipe[2].0, "the notification arrives with its carrier");
        let s = net.pdn().unwrap().stats[port as usize];
        assert_eq!(
            (s.empty_frames, s.piggybacked, s.wire_bytes),
            (0, 1, NOTICE_BYTES as u64)
        );
    }

    #[test]
    fn a_full_notification_queue_loses_the_newcomer_and_counts_it() {
        let (mut net, mut ev, port) = net(2);
        let p = data(&mut net, 1500);
        net.enqueue_from(Time::ZERO, &mut ev, port, 0, p);
        for _ in 0..5 {
            let n = notice(&mut net);
            net.queue_notice(Time::ZERO, &mut ev, port, n);
        }
        let s = net.pdn().unwrap().stats[port as usize];
        assert_eq!(net.notice_queue_len(port), 2);
        assert_eq!((s.max_queue_len, s.lost_queue_full), (2, 3));
    }
}
