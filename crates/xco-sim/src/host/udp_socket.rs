//! A UDP application's blocking write: a message enters its host whole or
//! not at all.
//!
//! With `[host] blocking_udp`, a UDP source asks [`Stack::udp_room`] before
//! each message. On a host XCo coordinates the message must fit whole in the
//! coordinator's queue for its destination (the paper's Dom0 queue; a guest
//! whose queue is full is held back, not dropped from), and the source is
//! woken when the coordinator releases packets. Elsewhere the socket's send
//! buffer ([`SendBuffer`]) must be writable and the NIC queue must take every
//! fragment; the answer then names the time the first of these frees up, and
//! the source sets its own timer for it (one pending event per blocked source).

use crate::ctx::Ctx;
use crate::host::nic_queue;
use crate::host::sndbuf::SendBuffer;
use crate::host::{Coordinator, Stack};
use xco_core::Time;

/// Whether a whole message may be written now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Room {
    /// Write it now.
    Now,
    /// Try again at this time (the socket buffer or the NIC queue frees up).
    At(Time),
    /// Wait to be woken ([`crate::host::Hosts::app_wakeups`]): the
    /// coordinator's queue is full until it releases packets.
    Woken,
}

impl<C: Coordinator> Stack<C> {
    /// Whether UDP source `app` on `host` may write a message of
    /// `frame_bytes` in `packets` fragments to `dst`, with `sock` its send
    /// buffer. On `Woken` the source is registered for its wake-up.
    #[allow(clippy::too_many_arguments)]
    pub fn udp_room(
        &mut self,
        cx: &mut Ctx,
        host: u32,
        dst: u32,
        app: u32,
        sock: &mut SendBuffer,
        frame_bytes: u64,
        packets: u32,
    ) -> Room {
        let now = cx.now;
        if let Some(x) = self.xco.as_mut().filter(|x| x.coordinates(host)) {
            let bytes = frame_bytes.min(u32::MAX as u64) as u32;
            if !x.has_room(host, dst, bytes) && x.held_bytes(host, dst) > 0 {
                x.block_app(host, app);
                return Room::Woken;
            }
            // fragments that bypass the coordinator (a short flow's) go
            // straight to the NIC queue: it must take them too (below)
        }
        // the socket is charged only on uncoordinated hosts (`udp_send`)
        let mut at = sock.writable_at(now);
        let net = &mut cx.net;
        if !nic_queue::has_room_for(net, now, host, frame_bytes, packets) {
            let nic = net.nodes[host as usize].nic as usize;
            // an empty queue takes any message (one larger than the whole
            // queue would otherwise wait forever)
            let Some(next) = net.ports[nic].next_start() else {
                return match at {
                    Some(t) => Room::At(t),
                    None => Room::Now,
                };
            };
            let t = nic_queue::packet_room_at(net, now, host, packets).unwrap_or(next);
            at = Some(at.map_or(t, |a| a.max(t)));
        }
        match at {
            Some(t) => Room::At(t.max(now)),
            None => Room::Now,
        }
    }

    /// Send UDP fragment `pkt` from `host` through the egress path, charging
    /// `sock` until the NIC has sent it (uncoordinated hosts).
    pub fn udp_send(&mut self, cx: &mut Ctx, host: u32, sock: &mut SendBuffer, pkt: u32, frame_bytes: u32) {
        if self.xco.as_ref().is_some_and(|x| x.coordinates(host)) {
            self.send(cx, pkt);
            return;
        }
        self.send(cx, pkt);
        let pt = &cx.net.ports[cx.net.nodes[host as usize].nic as usize];
        let done = match pt.mode() {
            crate::net::qdisc::PortMode::Fifo => pt.busy_until.max(cx.now),
            crate::net::qdisc::PortMode::Scheduled => cx.now,
        };
        sock.charge(done, frame_bytes);
    }
}
