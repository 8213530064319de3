//! The host layer: what sits between a host's transports and its NIC, the
//! host stack ([`Stack`]).
//!
//! A host in the simulator is its transports (TCP endpoints, UDP sources and
//! sinks, the ping responder), this layer, and one NIC — the host's output
//! port into the fabric, a [`crate::net::port::Port`] like any switch port.
//! The layer sits above the transports and below XCo and the applications:
//! TCP reaches it through [`crate::tcp::host::TcpHost`], which [`Stack`]
//! implements, and XCo's coordinators fill its egress gate ([`Coordinator`]),
//! so it names neither XCo nor an application.
//!
//! **Egress** ([`egress`]): a packet a transport built goes through
//! [`Stack::send`]. On a host XCo coordinates, the host's local coordinator
//! (the gate: `crate::xco`, the core's `HostCoordinator`) holds it in its
//! per-destination queue until a directive releases it; otherwise it enters
//! the NIC queue at once. Transports never lose a packet at their own host:
//! TCP asks [`Stack::egress_has_room`] before it builds a data segment and,
//! when there is none, waits ([`Stack::egress_block`]) until the NIC queue (or
//! its coordinator queue) drains; the layer wakes it through
//! [`Hosts::wakeups`], which the stack hands to the endpoints after each
//! event ([`Stack::after_event`]). Pacing lives in the transport (`crate::tcp::pacing`) and hands its
//! packets to this same path.
//!
//! **Receive** ([`receive`], [`Stack::deliver`]): a packet that reached its
//! destination host is handed to the transport it names — a TCP segment to its endpoint (whose
//! receive-window policy is `crate::tcp::rcv_window`), a UDP fragment to its
//! sink, an XCo control message to the coordinator or controller — and an
//! echo request is answered at once. Notifications addressed to a host's
//! stack rather than to one socket (PDN's drop notifications) arrive here too,
//! as their own packet kind, when a scenario turns them on. What transports
//! tell applications ([`crate::tcp::note::AppNote`]) is collected here
//! ([`Stack::notes`]); the driver hands each to its application after the event.
//!
//! **Flow statistics** ([`crate::stats::FlowStats`], one row of `flows.csv`
//! per flow): the wire counters are the network's (its ports count the bytes
//! each flow sends, delivers and loses as the packets move); what a transport
//! counts (bytes written and delivered, retransmissions, timeouts, PDN's
//! notified resends) reaches the table only through this layer
//! ([`crate::tcp::host::TcpHost::count`], `open_flow`): TCP never names the
//! table.
//!
//! **The host model** ([`settings`], `[host]` in a scenario): the NIC
//! queue ([`nic_queue`]) is bounded in bytes and, like Linux's
//! `txqueuelen`, in packets; a UDP socket's send buffer ([`sndbuf`]) makes
//! a UDP application's write block ([`udp_socket`]) until its whole message
//! fits, instead of losing fragments at a full host queue. The defaults are
//! the old model (bytes only, UDP never waits), which the golden runs pin.
//!
//! **TCP Small Queues** ([`tsq`], `[host] tsq_limit_bytes`): a TCP socket
//! holds at most its TSQ limit in its host (NIC queue) and resumes when its
//! frames leave the NIC, as Linux's does; off by default.
//!
//! The layer's state ([`Stack`]) is the hosts' ([`Hosts`]), the TCP settings
//! per host and app, the notes for applications, the UDP sinks and the gate.
//! The per-host state is small: which endpoints wait for room in which
//! host's NIC queue and whether a room check is pending. It is kept out of
//! [`crate::net`], which knows ports, links and switches, not sockets.

pub mod egress;
pub mod nic_queue;
pub mod receive;
pub mod settings;
pub mod sndbuf;
pub mod tsq;
pub mod udp_socket;

use crate::ctx::Ctx;
use crate::engine::{Event, EventQueue};
use crate::net::packet::PktId;
use crate::net::pdn::PdnResend;
use crate::net::Net;
use crate::stats::FlowStats;
use crate::tcp::host::{TcpCount, TcpHost};
use crate::tcp::note::AppNote;
use crate::tcp::select::TcpSettings;
use crate::tcp::table::TcpTable;
use crate::udp::UdpSink;
use xco_core::{Dur, Time};

/// The gate of a host's egress that XCo's local coordinator fills
/// (implemented by `crate::xco::XcoSim`, which sits above this layer): a
/// coordinated host's packets go to it instead of the NIC queue, and it
/// wakes the transports it held back through [`Hosts`].
pub trait Coordinator {
    /// True if `host` runs a coordinator.
    fn coordinates(&self, host: u32) -> bool;
    /// A coordinated host's transport sends `pkt` (already counted as sent by its flow).
    fn offer(&mut self, cx: &mut Ctx, hosts: &mut Hosts, pkt: PktId);
    /// True if a TCP segment of `frame` bytes from `host` to `dst` fits in its queue.
    fn has_room(&self, host: u32, dst: u32, frame: u32) -> bool;
    /// Frame bytes `host` holds for `dst`.
    fn held_bytes(&self, host: u32, dst: u32) -> u64;
    /// TCP endpoint `ep` waits for room in `host`'s queues.
    fn block(&mut self, host: u32, ep: u32);
    /// Application `app` (a blocking UDP source) waits for room in `host`'s queues.
    fn block_app(&mut self, host: u32, app: u32);
    /// `host`'s NIC queue has room again.
    fn on_nic_room(&mut self, cx: &mut Ctx, hosts: &mut Hosts, host: u32);
    /// A control message (its packet already released, or an out-of-band slot) arrives.
    fn on_message(&mut self, cx: &mut Ctx, hosts: &mut Hosts, slot: u32);
}

/// The host stack of every host of a run: the layer between the transports
/// and the NICs, generic over its egress gate `C` (XCo's coordinators).
pub struct Stack<C> {
    /// Per-host state: endpoints waiting for egress room, wake-ups, the host model.
    pub hosts: Hosts,
    /// The TCP settings of the run, per host and per app.
    pub tcp: TcpSettings,
    /// Notes from the transports to applications, handed out after each event.
    pub notes: Vec<AppNote>,
    /// UDP receivers.
    pub udp_sinks: Vec<UdpSink>,
    /// XCo's controller and coordinators, when the scenario runs XCo.
    pub xco: Option<Box<C>>,
    /// The run's seed (written into every output).
    pub seed: u64,
}

impl<C: Coordinator> Stack<C> {
    /// The stack of a network of `nodes` nodes, with TCP settings `tcp`.
    pub fn new(nodes: usize, tcp: TcpSettings, seed: u64) -> Stack<C> {
        Stack {
            hosts: Hosts::new(nodes),
            tcp,
            notes: Vec::new(),
            udp_sinks: Vec::new(),
            xco: None,
            seed,
        }
    }

    /// After each event: fire the send timers of applications whose blocked
    /// write may go ahead, and let the TCP endpoints whose egress drained send.
    #[inline(always)]
    pub fn after_event(&mut self, cx: &mut Ctx, tcp: &mut TcpTable) {
        if !self.hosts.app_wakeups.is_empty() {
            // blocked UDP writes go ahead: their send timer fires now
            for app in std::mem::take(&mut self.hosts.app_wakeups) {
                cx.ev.schedule(cx.now, Event::App { app, token: 1 });
            }
        }
        if !self.hosts.wakeups.is_empty() {
            self.wake_endpoints(cx, tcp);
        }
    }

    #[inline(always)]
    fn wake_endpoints(&mut self, cx: &mut Ctx, tcp: &mut TcpTable) {
        let mut woken = std::mem::take(&mut self.hosts.wakeups);
        for &ep in &woken {
            tcp.eps[ep as usize].output(cx, self);
        }
        // hand the list's memory back (nothing allocated per wake-up)
        // unless the woken senders queued new wake-ups meanwhile
        if self.hosts.wakeups.is_empty() {
            woken.clear();
            self.hosts.wakeups = woken;
        }
    }
}

impl<C: Coordinator> TcpHost for Stack<C> {
    #[inline(always)]
    fn tcp(&self) -> &TcpSettings {
        &self.tcp
    }
    #[inline(always)]
    fn tcp_mut(&mut self) -> &mut TcpSettings {
        &mut self.tcp
    }
    #[inline(always)]
    fn seed(&self) -> u64 {
        self.seed
    }
    #[inline(always)]
    fn note(&mut self, note: AppNote) {
        self.notes.push(note);
    }
    fn open_flow(&mut self, cx: &mut Ctx, stats: FlowStats) -> u32 {
        cx.net.flows.push(stats);
        (cx.net.flows.len() - 1) as u32
    }
    #[inline(always)]
    fn count(&mut self, cx: &mut Ctx, flow: u32, c: TcpCount) {
        let f = &mut cx.net.flows[flow as usize];
        match c {
            TcpCount::Written(bytes) => f.app_bytes_written += bytes,
            TcpCount::Delivered(bytes) => {
                f.delivered(bytes);
                if f.app_bytes_delivered >= f.app_bytes_written {
                    f.end = Some(cx.now);
                }
            }
            TcpCount::Retransmit => f.retransmits += 1,
            TcpCount::FastRetransmit => f.fast_retransmits += 1,
            TcpCount::Timeout => f.timeouts += 1,
            TcpCount::NotifiedRetransmit => f.notified_retransmits += 1,
            TcpCount::NotifiedReduction => f.notified_reductions += 1,
            TcpCount::NotifiedLeftToTimer => f.notified_left_to_timer += 1,
        }
    }
    fn pdn(&self, cx: &Ctx, host: u32) -> Option<PdnResend> {
        // the scenario turns PDN on for the network's switches and hosts at once
        cx.net.pdn().filter(|p| p.host(host)).map(|p| p.resend())
    }
    #[inline(always)]
    fn send(&mut self, cx: &mut Ctx, pkt: PktId) {
        Stack::send(self, cx, pkt)
    }
    #[inline(always)]
    fn egress_has_room(&mut self, cx: &mut Ctx, host: u32, dst: u32, frame: u32) -> bool {
        Stack::egress_has_room(self, cx, host, dst, frame)
    }
    #[inline(always)]
    fn egress_block(&mut self, cx: &mut Ctx, host: u32, ep: u32) {
        Stack::egress_block(self, cx, host, ep)
    }
    #[inline(always)]
    fn tsq_on(&self) -> bool {
        Stack::tsq_on(self)
    }
    #[inline(always)]
    fn tsq_hold(
        &mut self,
        cx: &mut Ctx,
        host: u32,
        ep: u32,
        frame_bytes: u32,
        cwnd_bytes: u64,
        ssthresh_bytes: u64,
        srtt: Option<Dur>,
    ) -> Option<Time> {
        Stack::tsq_hold(self, cx, host, ep, frame_bytes, cwnd_bytes, ssthresh_bytes, srtt)
    }
}

/// Per-host state of the host layer.
#[derive(Debug, Default)]
pub struct Hosts {
    /// Per node: TCP endpoints waiting for room in its NIC queue.
    blocked: Vec<Vec<u32>>,
    /// Per node: a room check ([`Event::NicRoom`]) is scheduled.
    room_event: Vec<bool>,
    /// Endpoints whose egress drained: woken after the event ([`Stack::after_event`]).
    pub wakeups: Vec<u32>,
    /// Applications (UDP sources) whose blocked write may go ahead now: the
    /// stack fires their send timer after the event.
    pub app_wakeups: Vec<u32>,
    /// The host model's settings.
    pub settings: settings::HostSettings,
    /// Per TCP endpoint (grown on first use): its frames charged to it
    /// until its NIC sends them, with TSQ on ([`tsq`]).
    tsq: Vec<sndbuf::SendBuffer>,
}

impl Hosts {
    /// Host-layer state for a network of `nodes` nodes (switches get empty slots).
    pub fn new(nodes: usize) -> Hosts {
        Hosts {
            blocked: vec![Vec::new(); nodes],
            room_event: vec![false; nodes],
            wakeups: Vec::new(),
            app_wakeups: Vec::new(),
            settings: settings::HostSettings::default(),
            tsq: Vec::new(),
        }
    }

    /// TCP endpoint `ep`'s TSQ charge list.
    #[inline]
    pub fn tsq_socket(&mut self, ep: u32) -> &mut sndbuf::SendBuffer {
        let i = ep as usize;
        if i >= self.tsq.len() {
            self.tsq.resize_with(i + 1, sndbuf::SendBuffer::default);
        }
        &mut self.tsq[i]
    }

    /// True if `host`'s NIC queue can take a TCP frame of `frame_bytes`
    /// ([`nic_queue::has_room`]).
    #[inline]
    pub fn nic_has_room(net: &mut Net, now: xco_core::Time, host: u32, frame_bytes: u32) -> bool {
        nic_queue::has_room(net, now, host, frame_bytes)
    }

    /// TCP endpoint `ep` on `host` waits for room in the NIC queue: it is
    /// woken (through [`Hosts::wakeups`]) when the oldest waiting packet starts.
    pub fn block_until_room(&mut self, net: &Net, ev: &mut EventQueue, host: u32, ep: u32) {
        let b = &mut self.blocked[host as usize];
        if !b.contains(&ep) {
            b.push(ep);
        }
        self.wait_for_room(net, ev, host);
    }

    /// Ask for a [`Event::NicRoom`] when `host`'s oldest waiting packet starts.
    pub fn wait_for_room(&mut self, net: &Net, ev: &mut EventQueue, host: u32) {
        if !self.room_event[host as usize] {
            let nic = net.nodes[host as usize].nic as usize;
            if let Some(t) = net.ports[nic].next_start() {
                self.room_event[host as usize] = true;
                ev.schedule(t, Event::NicRoom(host));
            }
        }
    }

    /// The room check of `host` fired: queue its blocked endpoints for waking.
    pub fn on_nic_room(&mut self, host: u32) {
        self.room_event[host as usize] = false;
        self.wakeups.append(&mut self.blocked[host as usize]);
    }

    /// Queue `eps` (endpoints a coordinator queue held back) for waking; empties `eps`.
    #[inline]
    pub fn wake(&mut self, eps: &mut Vec<u32>) {
        self.wakeups.append(eps);
    }
}
