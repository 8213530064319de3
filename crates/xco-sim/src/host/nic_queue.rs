//! A host's NIC transmit queue: the host's output port, bounded in bytes
//! (`topology.host_buffer`) and, when `[host] txqueuelen` is set, in packets
//! like Linux's qdisc (`txqueuelen`, 1,000 by default on Linux). Every packet
//! a host sends waits here, pings, ACKs and control messages included, and
//! behind whatever the queue already holds; with XCo the coordinator's
//! per-destination queues sit before it.
//!
//! The packet limit itself is the port's (`Port::limit_packets`, a tail drop
//! at the NIC); this file holds the room checks transports and the
//! coordinator ask before they hand packets over, so that they wait rather
//! than lose packets at their own host.

use crate::net::Net;
use xco_core::Time;

/// Packets a TCP room check keeps free for ACKs, pings and retransmissions.
pub const HEADROOM_PACKETS: u32 = 4;

/// True if `host`'s NIC queue can take `frame_bytes` more of TCP data and
/// still keep room for ACKs and retransmissions (four frames: four packets
/// when the queue counts packets, four jumbo frames' bytes at most when it
/// counts bytes only). TCP never loses packets in its own
/// host's queue (Linux's TCP Small Queues block the socket instead); this is
/// the check that blocks it.
#[inline]
pub fn has_room(net: &mut Net, now: Time, host: u32, frame_bytes: u32) -> bool {
    has_room_for(net, now, host, frame_bytes as u64, 1)
}

/// [`has_room`] for `packets` frames of `frame_bytes` in all (a whole UDP message).
#[inline]
pub fn has_room_for(net: &mut Net, now: Time, host: u32, frame_bytes: u64, packets: u32) -> bool {
    let pt = &mut net.ports[net.nodes[host as usize].nic as usize];
    if pt.limit_packets == u32::MAX {
        // bounded in bytes alone: keep four (jumbo-sized at most) frames free
        let headroom = 4 * 9_100u64.min(pt.buffer_bytes / 8);
        return pt.backlog_bytes(now) + frame_bytes + headroom <= pt.buffer_bytes;
    }
    // counted in packets: keep four packets free; the byte bound only as a backstop
    pt.backlog_bytes(now) + frame_bytes <= pt.buffer_bytes
        && pt.backlog_packets(now) as u64 + packets as u64 + HEADROOM_PACKETS as u64
            <= pt.limit_packets as u64
}

/// When `host`'s NIC queue, left to itself, has `packets` packet slots free
/// beyond the headroom: the start of the waiting packet whose departure
/// frees the last of them (`None`: room now, or no packet limit, or never).
pub fn packet_room_at(net: &mut Net, now: Time, host: u32, packets: u32) -> Option<Time> {
    let pt = &mut net.ports[net.nodes[host as usize].nic as usize];
    if pt.limit_packets == u32::MAX {
        return None;
    }
    let waiting = pt.backlog_packets(now) as u64;
    let need = waiting + packets as u64 + HEADROOM_PACKETS as u64;
    let limit = pt.limit_packets as u64;
    if need <= limit {
        return None;
    }
    // the (need - limit)-th oldest waiting packet must have started
    pt.waiting_start((need - limit - 1) as usize)
}
