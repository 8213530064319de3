//! Host egress: the one path from a transport to the NIC.
//!
//! `transport -> [XCo coordinator queue, on coordinated hosts] -> NIC queue`.
//! The coordinator stage is `crate::xco` (the core's `HostCoordinator`, the
//! code the real agent runs); the NIC queue is the host's output port.

use crate::ctx::Ctx;
use crate::host::{Coordinator, Hosts, Stack};
use crate::net::packet::PktId;

impl<C: Coordinator> Stack<C> {
    /// A packet leaves its transport. With XCo the host's local coordinator
    /// decides when it reaches the NIC; otherwise it goes straight to the NIC queue.
    #[inline(always)]
    pub fn send(&mut self, cx: &mut Ctx, pkt: PktId) {
        match self.xco.as_mut() {
            Some(x) if x.coordinates(cx.net.pool[pkt].src) => {
                cx.net.count_sent(pkt);
                x.offer(cx, &mut self.hosts, pkt);
            }
            _ if self.hosts.settings.tsq_limit_bytes != 0 => self.tsq_send(cx, pkt),
            _ => cx.net.host_send(cx.now, &mut cx.ev, pkt),
        }
    }

    /// True if TCP on `host` may hand a data segment of `frame` bytes for
    /// `dst` to the egress layer (TCP blocks rather than losing packets at its
    /// own host, as Linux's TCP Small Queues do).
    #[inline]
    pub fn egress_has_room(&mut self, cx: &mut Ctx, host: u32, dst: u32, frame: u32) -> bool {
        match self.xco.as_ref() {
            Some(x) if x.coordinates(host) => x.has_room(host, dst, frame),
            _ => Hosts::nic_has_room(&mut cx.net, cx.now, host, frame),
        }
    }

    /// TCP endpoint `ep` on `host` waits until the egress layer has room.
    pub fn egress_block(&mut self, cx: &mut Ctx, host: u32, ep: u32) {
        match self.xco.as_mut() {
            Some(x) if x.coordinates(host) => x.block(host, ep),
            _ => self.hosts.block_until_room(&cx.net, &mut cx.ev, host, ep),
        }
    }

    /// `host`'s NIC queue has room again: wake what waited for it.
    pub fn on_nic_room(&mut self, cx: &mut Ctx, host: u32) {
        self.hosts.on_nic_room(host);
        if let Some(x) = self.xco.as_mut() {
            x.on_nic_room(cx, &mut self.hosts, host);
        }
    }
}
