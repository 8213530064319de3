//! The host coordinator both drivers run: it owns the per-destination (V2V)
//! queues and turns packets, directives and time into releases, control
//! messages and its next deadline.
//!
//! Driven handle/poll style, as the scheduler is:
//! - [`HostCoordinator::offer`] — a packet leaves a transport: it passes
//!   (bypass, failed open), is held, or is dropped (its queue is full);
//! - [`HostCoordinator::pump`] — release what the gate allows into an
//!   [`Egress`] (the simulator's NIC port, the agent's netfilter verdicts);
//! - [`HostCoordinator::apply`] — a directive arrived;
//! - [`HostCoordinator::on_timer`] at [`HostCoordinator::next_deadline`] —
//!   slice end, give-back, pacing, fail-open and report timers;
//! - [`HostCoordinator::poll_message`] — the control messages to send (call
//!   until `None` after every handle call).
//!
//! The release loop, the slice-end rule, bypass, pacing and fail-open live
//! here once: the simulator moves packet ids and virtual time through it,
//! the agent kernel packets and its monotonic clock.

use super::{CoordConfig, Coordinator, Gate, Release};
use crate::sched::DirectiveKind;
use crate::time::{Dur, Time};
use crate::wire::Message;
use std::collections::VecDeque;

/// Which packets skip coordination: latency-sensitive small traffic goes at
/// once, as the spec's small-flow bypass says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bypass {
    /// IP packets of at most this many bytes bypass (ACKs, pings, control).
    pub packet_bytes: u32,
    /// Packets of a flow that has written at most this many bytes bypass.
    pub flow_bytes: u64,
}

impl Bypass {
    /// True if a packet of `ip_bytes` bypasses: it carries no transport
    /// data (a pure ACK, a SYN, a ping, a control message), is small, or
    /// belongs to a flow that has written at most `flow_bytes` so far
    /// (`flow_written`: `None` where the driver cannot know, as in the agent).
    #[inline]
    pub fn bypasses(&self, ip_bytes: u32, carries_data: bool, flow_written: Option<u64>) -> bool {
        !carries_data || ip_bytes <= self.packet_bytes || flow_written.is_some_and(|w| w <= self.flow_bytes)
    }
}

/// Where released packets go: the host's NIC.
pub trait Egress<P> {
    /// When the NIC can start a packet handed to it now (at least `now`).
    fn free_at(&self, now: Time) -> Time;
    /// The NIC's line rate, bit/s.
    fn rate_bps(&self) -> u64;
    /// True if the NIC queue takes `bytes` more now (the simulator's TCP
    /// Small Queues check); a driver without a visible queue says true.
    fn has_room(&mut self, now: Time, bytes: u32) -> bool;
    /// Hand `pkt` (`bytes` as the queue counted them, `wire_bytes` on the
    /// wire, gaps included) to the NIC.
    fn send(&mut self, now: Time, pkt: P, bytes: u32, wire_bytes: u64);
}

/// What became of an offered packet.
#[derive(Debug, PartialEq, Eq)]
pub enum Offer<P> {
    /// Send it now (it bypasses, or the coordinator has failed open).
    Pass(P),
    /// Held in its destination's queue.
    Held,
    /// Its destination's queue is full: drop it at the host (counted).
    Drop(P),
}

/// What a release pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pumped {
    /// Something was released.
    pub released: bool,
    /// A packet could go but the NIC queue had no room: pump again when it has.
    pub wants_room: bool,
}

/// Counters of one coordinator.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoordStats {
    /// Packets that bypassed coordination.
    pub bypassed: u64,
    /// Packets held.
    pub held: u64,
    /// Held packets released.
    pub released: u64,
    /// Packets dropped because their queue was full.
    pub dropped: u64,
    /// Directives applied.
    pub directives: u64,
    /// Of those, received before their start (held pending, or continuing the open slice).
    pub directives_ahead: u64,
    /// Backlog reports sent.
    pub reports: u64,
    /// Slices given back.
    pub givebacks: u64,
    /// Times the coordinator failed open.
    pub fail_opens: u64,
    /// Packets offered to a destination the controller ungated (on-demand):
    /// passed, or queued behind packets held before (released at once).
    pub ungated: u64,
}

impl std::ops::AddAssign<&CoordStats> for CoordStats {
    /// Sum the counters of several coordinators.
    fn add_assign(&mut self, o: &CoordStats) {
        self.bypassed += o.bypassed;
        self.held += o.held;
        self.released += o.released;
        self.dropped += o.dropped;
        self.directives += o.directives;
        self.directives_ahead += o.directives_ahead;
        self.reports += o.reports;
        self.givebacks += o.givebacks;
        self.fail_opens += o.fail_opens;
        self.ungated += o.ungated;
    }
}

struct Held<P> {
    pkt: P,
    /// Bytes as the queue limit counts them.
    bytes: u32,
    /// Bytes on the wire, gaps included.
    wire_bytes: u64,
    /// Wire bytes before the packet's last frame starts (0 for one frame).
    lead_wire_bytes: u64,
}

/// A host's coordinator with its queues; `P` is the driver's packet handle.
pub struct HostCoordinator<P> {
    /// Gate, accounting and timers.
    pub state: Coordinator,
    queues: Vec<VecDeque<Held<P>>>,
    /// Bytes a destination's queue may hold before arrivals are dropped.
    limit_bytes: u64,
    report_due: bool,
    /// On-demand coordination: the periodic report goes as a demand report.
    demand_due: bool,
    outbox: VecDeque<Message>,
    /// Counters.
    pub stats: CoordStats,
}

impl<P> HostCoordinator<P> {
    /// A coordinator, closed until its first directive, whose queues hold at
    /// most `limit_bytes` each (`u64::MAX`: never drop).
    pub fn new(cfg: CoordConfig, limit_bytes: u64, now: Time) -> HostCoordinator<P> {
        HostCoordinator {
            state: Coordinator::new(cfg, now),
            queues: Vec::new(),
            limit_bytes,
            report_due: false,
            demand_due: false,
            outbox: VecDeque::new(),
            stats: CoordStats::default(),
        }
    }

    /// Start the periodic reports.
    pub fn start(&mut self, now: Time) {
        self.state.start(now);
    }

    fn queue(&mut self, dst: u32) -> usize {
        let qi = self.state.dest_index(dst);
        if qi == self.queues.len() {
            self.queues.push(VecDeque::new());
        }
        qi
    }

    /// A packet for `dst` leaves its transport at `now`: `bytes` as the
    /// queue limit counts them, `wire` = (its bytes on the wire, of them
    /// those before its last frame starts: a GSO burst or a fragmented
    /// datagram has several frames), `bypass` from [`Bypass::bypasses`].
    pub fn offer(
        &mut self,
        now: Time,
        dst: u32,
        pkt: P,
        bytes: u32,
        wire: (u64, u64),
        bypass: bool,
    ) -> Offer<P> {
        if bypass {
            self.stats.bypassed += 1;
            return Offer::Pass(pkt);
        }
        let qi = self.queue(dst);
        if self.state.cfg.on_demand {
            self.state.dests[qi].offered_bytes += bytes as u64;
            if self.state.is_ungated(dst) {
                self.stats.ungated += 1;
                // behind packets still held for it, it waits its turn (no
                // reordering); the release pass lets them all go
                if self.queues[qi].is_empty() {
                    return Offer::Pass(pkt);
                }
            }
        }
        if self.state.gate == Gate::FailOpen {
            // still reported, so a controller that comes back learns the demand
            self.report_due |= self.state.pass_open(now, qi);
            return Offer::Pass(pkt);
        }
        if self.state.dests[qi].held_bytes + bytes as u64 > self.limit_bytes {
            self.stats.dropped += 1;
            return Offer::Drop(pkt);
        }
        self.queues[qi].push_back(Held {
            pkt,
            bytes,
            wire_bytes: wire.0,
            lead_wire_bytes: wire.1,
        });
        self.stats.held += 1;
        // B_x grew: a destination the controller does not know as backlogged
        self.report_due |= self.state.hold(now, qi, bytes as u64);
        Offer::Held
    }

    /// Release what the gate allows into `egress`: each queue's packets in
    /// order while its destination's slice (or rate) allows them, whether
    /// the NIC is busy or idle. A one-frame packet must be off the wire by
    /// the slice's end (a frame still on the wire after it runs into the
    /// next sender's slice: at full schedules every hand-over added a frame
    /// to the port's queue, which then dropped at hand-overs;
    /// docs/xco-reproductions.md). A packet of several frames (a GSO burst,
    /// a datagram offered whole) goes if its last frame starts before the
    /// slice ends: its frames cannot be gated one by one, and holding it for
    /// its last frame idles up to a packet's time at every slice end (the
    /// real agent's ~1-ms GSO packets at 100 Mbit/s: 45 instead of 73 Mbit/s
    /// in real-outcast; docs/real-udp.md). Only a packet whose frames take
    /// longer than a whole slice goes regardless: on an idle NIC, alone, as
    /// it could never finish any slice.
    pub fn pump<E: Egress<P>>(&mut self, now: Time, egress: &mut E) -> Pumped {
        let mut out = Pumped::default();
        let mut pace_wake = Time::NEVER;
        for qi in 0..self.queues.len() {
            while let Some(h) = self.queues[qi].front() {
                let start = egress.free_at(now);
                let rate = egress.rate_bps().max(1);
                let on_wire = Dur::serialization(h.wire_bytes, rate);
                let ends = if start == now && on_wire >= self.state.slice_len {
                    now // longer than any slice: alone on an idle NIC
                } else if h.lead_wire_bytes > 0 {
                    // several frames: its last frame must start inside the slice
                    start + Dur::serialization(h.lead_wire_bytes, rate) + Dur::from_ns(1)
                } else {
                    start + on_wire
                };
                match self.state.may_release(now, qi, ends) {
                    Release::No => break,
                    Release::At(t) => {
                        pace_wake = pace_wake.min(t); // paced: the timer releases it
                        break;
                    }
                    Release::Now => {}
                }
                if !egress.has_room(now, h.bytes) {
                    out.wants_room = true;
                    break;
                }
                let h = self.queues[qi].pop_front().expect("non-empty");
                self.state.released(now, qi, h.bytes as u64, h.wire_bytes);
                self.stats.released += 1;
                egress.send(now, h.pkt, h.bytes, h.wire_bytes);
                out.released = true;
            }
        }
        self.state
            .after_pump(out.released, egress.free_at(now), pace_wake);
        out
    }

    /// A directive arrived at `now`, applied at once (destinations in the
    /// driver's numbering). Returns false for an old or duplicate epoch.
    pub fn apply(&mut self, now: Time, epoch: u64, kind: &DirectiveKind) -> bool {
        self.receive(now, epoch, Dur::ZERO, kind)
    }

    /// A directive arrived at `now`, to take effect `start_in` later (its
    /// `Directive::start_in`; see [`super::start`]): pending until then,
    /// when [`HostCoordinator::on_timer`] applies it. Returns false for an
    /// old or duplicate epoch.
    pub fn receive(&mut self, now: Time, epoch: u64, start_in: Dur, kind: &DirectiveKind) -> bool {
        if !self.state.receive(now, epoch, start_in, kind) {
            return false;
        }
        self.fit_queues();
        self.stats.directives += 1;
        self.stats.directives_ahead += u64::from(start_in > Dur::ZERO);
        true
    }

    /// A rate directive may name destinations this host never held traffic for.
    fn fit_queues(&mut self) {
        if self.queues.len() < self.state.dests.len() {
            self.queues.resize_with(self.state.dests.len(), VecDeque::new);
        }
    }

    /// The next instant [`HostCoordinator::on_timer`] has work.
    pub fn next_deadline(&self) -> Time {
        self.state.next_deadline()
    }

    /// Timers due at `now`; returns true if the coordinator just failed
    /// open. Poll messages and pump afterwards.
    pub fn on_timer(&mut self, now: Time) -> bool {
        let act = self.state.on_timer(now);
        self.fit_queues(); // a pending rate directive may have started
        if let Some(dest) = act.giveback {
            self.stats.givebacks += 1;
            self.outbox.push_back(Message::GiveBack {
                dest,
                epoch: self.state.epoch,
            });
        }
        self.stats.fail_opens += u64::from(act.failed_open);
        self.report_due |= act.report;
        self.demand_due |= act.report && self.state.cfg.on_demand;
        act.failed_open
    }

    /// The next control message to send to the controller: give-backs
    /// first, then (at most one) backlog report of the whole backlog set.
    pub fn poll_message(&mut self, now: Time) -> Option<Message> {
        if let Some(m) = self.outbox.pop_front() {
            return Some(m);
        }
        if self.demand_due {
            // on-demand: the periodic report carries the backlog set and the demand
            self.demand_due = false;
            self.report_due = false;
            self.stats.reports += 1;
            return Some(Message::Demand {
                entries: self.state.take_demand(now),
                ungated_seq: 0, // (the agent node writes its own)
            });
        }
        if self.report_due {
            self.report_due = false;
            self.stats.reports += 1;
            return Some(Message::Report {
                dests: self.state.take_report(now),
            });
        }
        None
    }

    /// The controller's whole set of destinations this host sends to
    /// ungated (on-demand coordination; in the driver's numbering).
    pub fn set_ungated(&mut self, dests: &[u32]) {
        self.state.set_ungated(dests);
    }

    /// Ask for a backlog report at the next [`HostCoordinator::poll_message`]
    /// (registration, or after a controller restart).
    pub fn request_report(&mut self) {
        self.report_due = true;
    }

    /// True if `dst`'s queue takes `bytes` more (a transport that would
    /// otherwise lose the packet waits instead).
    #[inline]
    pub fn fits(&self, dst: u32, bytes: u32) -> bool {
        // the same rule `offer` applies to the queue it already holds
        self.held_bytes(dst) + bytes as u64 <= self.limit_bytes
    }

    /// Bytes held for `dst`.
    pub fn held_bytes(&self, dst: u32) -> u64 {
        self.state.held_bytes(dst)
    }

    /// Packets held in all queues, queue by queue, oldest first.
    pub fn held(&self) -> impl Iterator<Item = &P> + '_ {
        self.queues.iter().flat_map(|q| q.iter().map(|h| &h.pkt))
    }

    /// Take every held packet out with its counted bytes (shutdown: the
    /// driver releases them).
    pub fn drain(&mut self, now: Time) -> Vec<(P, u32)> {
        let mut out = Vec::new();
        for (qi, q) in self.queues.iter_mut().enumerate() {
            while let Some(h) = q.pop_front() {
                self.state.released(now, qi, h.bytes as u64, h.bytes as u64);
                self.stats.released += 1;
                out.push((h.pkt, h.bytes));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A NIC that serialises at 1 Gbit/s and records what it was handed.
    struct Nic {
        free: Time,
        room: bool,
        sent: Vec<(Time, u32)>,
    }

    impl Egress<u32> for Nic {
        fn free_at(&self, now: Time) -> Time {
            self.free.max(now)
        }
        fn rate_bps(&self) -> u64 {
            1_000_000_000
        }
        fn has_room(&mut self, _now: Time, _bytes: u32) -> bool {
            self.room
        }
        fn send(&mut self, now: Time, pkt: u32, _bytes: u32, wire_bytes: u64) {
            self.free = self.free_at(now) + Dur::serialization(wire_bytes, self.rate_bps());
            self.sent.push((now, pkt));
        }
    }

    fn nic() -> Nic {
        Nic {
            free: Time::ZERO,
            room: true,
            sent: Vec::new(),
        }
    }

    fn coord(limit: u64) -> HostCoordinator<u32> {
        let mut c = HostCoordinator::new(
            CoordConfig {
                giveback_hysteresis: Some(Dur::from_us(100)),
                fail_open_after: Dur::from_ms(10),
                report_interval: Dur::from_ms(1),
                rate_burst: crate::coord::RateBurst::PACER,
                on_demand: false,
            },
            limit,
            Time::ZERO,
        );
        c.start(Time::ZERO);
        c
    }

    fn slice(dest: u32, us: u64) -> DirectiveKind {
        DirectiveKind::Slice {
            dest: Some(dest),
            len: Dur::from_us(us),
            rate_bps: None,
        }
    }

    #[test]
    fn a_slice_releases_only_packets_whose_last_frame_ends_inside_it() {
        let mut c = coord(u64::MAX);
        let one_frame = (1538, 0);
        for p in 0..4 {
            assert_eq!(c.offer(Time::ZERO, 9, p, 1518, one_frame, false), Offer::Held);
        }
        // a 64 KB datagram: 44 frames, its last starts 43 frames after its first
        assert_eq!(
            c.offer(Time::ZERO, 9, 4, 65_000, (44 * 1538, 43 * 1538), false),
            Offer::Held
        );
        assert_eq!(
            c.poll_message(Time::ZERO),
            Some(Message::Report { dests: vec![9] }),
            "the backlog set grew: one report"
        );
        assert_eq!(c.poll_message(Time::ZERO), None);
        let mut n = nic();
        assert!(!c.pump(Time::ZERO, &mut n).released, "closed until a directive");
        // 60 us: four 12.3 us frames fit, the datagram's last frame would not
        assert!(c.apply(Time::ZERO, 1, &slice(9, 60)));
        let p = c.pump(Time::ZERO, &mut n);
        assert!(p.released && !p.wants_room);
        assert_eq!(n.sent.iter().map(|s| s.1).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert_eq!(c.held().copied().collect::<Vec<_>>(), vec![4]);
        // an idle NIC takes even a packet longer than the slice
        let t = Time::ZERO + Dur::from_ms(1);
        assert!(c.apply(t, 2, &slice(9, 20)));
        c.pump(t, &mut n);
        assert_eq!(n.sent.last(), Some(&(t, 4)));
    }

    #[test]
    fn a_one_frame_packet_must_end_in_the_slice_and_a_multi_frame_one_start_its_last_frame_there() {
        // 1 Gbit/s: a 1,538-B frame takes 12.304 us
        let mut c = coord(u64::MAX);
        for p in 0..2 {
            assert_eq!(c.offer(Time::ZERO, 9, p, 1518, (1538, 0), false), Offer::Held);
        }
        let mut n = nic();
        // 20 us: the first frame ends at 12.3 us; the second would end at 24.6
        // (its only frame starts at 12.3, inside the slice, but one frame is the packet)
        assert!(c.apply(Time::ZERO, 1, &slice(9, 20)));
        c.pump(Time::ZERO, &mut n);
        assert_eq!(n.sent.iter().map(|s| s.1).collect::<Vec<_>>(), vec![0]);
        assert_eq!(c.held().copied().collect::<Vec<_>>(), vec![1]);
        // a three-frame packet (a GSO burst) in a 30-us slice on an idle NIC:
        // it ends at 36.9 us, but its last frame starts at 24.6, inside: it goes
        let mut c = coord(u64::MAX);
        assert_eq!(
            c.offer(Time::ZERO, 9, 7, 4500, (3 * 1538, 2 * 1538), false),
            Offer::Held
        );
        let mut n = nic();
        assert!(c.apply(Time::ZERO, 1, &slice(9, 30)));
        c.pump(Time::ZERO, &mut n);
        assert_eq!(n.sent.iter().map(|s| s.1).collect::<Vec<_>>(), vec![7]);
    }

    #[test]
    fn bypass_and_fail_open_pass_while_a_full_queue_drops() {
        let mut c = coord(3000);
        let rule = Bypass {
            packet_bytes: 128,
            flow_bytes: 1000,
        };
        assert!(rule.bypasses(52, false, Some(1 << 20)), "a pure ACK");
        assert!(rule.bypasses(100, true, None), "a small packet");
        assert!(
            rule.bypasses(1500, true, Some(900)),
            "a short flow's first segment"
        );
        assert!(!rule.bypasses(1500, true, Some(2000)));
        assert!(!rule.bypasses(1500, true, None));
        assert_eq!(c.offer(Time::ZERO, 1, 7, 52, (72, 0), true), Offer::Pass(7));
        assert_eq!(c.offer(Time::ZERO, 1, 8, 1500, (1520, 0), false), Offer::Held);
        assert_eq!(c.offer(Time::ZERO, 1, 9, 1500, (1520, 0), false), Offer::Held);
        assert_eq!(
            c.offer(Time::ZERO, 1, 10, 1500, (1520, 0), false),
            Offer::Drop(10)
        );
        assert_eq!((c.stats.bypassed, c.stats.held, c.stats.dropped), (1, 2, 1));
        // silence while backlogged: fail open, release everything, pass what comes
        let t = Time::ZERO + Dur::from_ms(10);
        assert_eq!(
            c.next_deadline(),
            Time::ZERO + Dur::from_ms(1),
            "the report comes first"
        );
        assert!(c.on_timer(t), "fails open");
        let mut n = nic();
        c.pump(t, &mut n);
        assert_eq!(n.sent.len(), 2);
        assert_eq!(c.offer(t, 2, 11, 1500, (1520, 0), false), Offer::Pass(11));
        match c.poll_message(t) {
            Some(Message::Report { dests }) => assert_eq!(dests, vec![2], "traffic that passed is reported"),
            m => panic!("want a report, got {m:?}"),
        }
    }

    #[test]
    fn a_dry_slice_is_given_back_before_the_next_report() {
        let mut c = coord(u64::MAX);
        c.offer(Time::ZERO, 3, 1, 100, (120, 0), false);
        c.poll_message(Time::ZERO);
        c.apply(Time::ZERO, 1, &slice(3, 2000));
        let mut n = nic();
        c.pump(Time::ZERO, &mut n);
        let t = c.next_deadline();
        assert!(t < Time::ZERO + Dur::from_ms(1));
        c.on_timer(t);
        assert_eq!(c.poll_message(t), Some(Message::GiveBack { dest: 3, epoch: 1 }));
        assert_eq!(c.poll_message(t), None);
        assert_eq!(c.stats.givebacks, 1);
    }

    #[test]
    fn a_full_nic_queue_stops_the_pass_until_it_has_room() {
        let mut c = coord(u64::MAX);
        c.offer(Time::ZERO, 5, 1, 1500, (1520, 0), false);
        c.apply(Time::ZERO, 1, &slice(5, 2000));
        let mut n = nic();
        n.room = false;
        assert_eq!(
            c.pump(Time::ZERO, &mut n),
            Pumped {
                released: false,
                wants_room: true
            }
        );
        n.room = true;
        assert!(c.pump(Time::ZERO, &mut n).released);
        assert!(c.drain(Time::ZERO).is_empty());
    }
}
