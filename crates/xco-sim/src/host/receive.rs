//! Host receive ([`Stack::deliver`]): a packet that reached its destination host goes to the
//! transport or service it names.
//!
//! - TCP segments to their endpoint (a segment of a connection the endpoint
//!   no longer runs is dropped here, as a closed socket's would be);
//! - UDP fragments to their sink, which reassembles messages;
//! - echo requests are answered at once, reusing the packet (the reply leaves
//!   through the NIC queue without the coordinator, like the kernel's ICMP
//!   reply would leave without a user-space agent's queue);
//! - echo replies become a note for the ping application;
//! - XCo control messages to the node's coordinator or controller;
//! - PDN drop notifications (on a host with PDN on) to the socket their
//!   4-tuple names, which retransmits the dropped segment at once.

use crate::ctx::Ctx;
use crate::host::{Coordinator, Stack};
use crate::net::packet::{Packet, PktId, PktKind};
use crate::tcp::note::AppNote;
use crate::tcp::table::TcpTable;

impl<C: Coordinator> Stack<C> {
    /// Hand `pkt`, which reached its destination host, to what it is for.
    #[inline]
    pub fn deliver(&mut self, cx: &mut Ctx, tcp: &mut TcpTable, pkt: PktId) {
        let p: Packet = cx.net.pool[pkt];
        match p.kind {
            PktKind::Tcp => {
                cx.net.release(pkt);
                let ep = &mut tcp.eps[p.dst_ep as usize];
                if ep.rx_flow == p.flow {
                    ep.on_segment(cx, self, pkt, &p);
                }
            }
            PktKind::Udp => {
                cx.net.release(pkt);
                self.udp_sinks[p.dst_ep as usize].on_fragment(&p, &mut cx.net.flows);
            }
            PktKind::PingRequest => {
                let q = &mut cx.net.pool[pkt];
                q.kind = PktKind::PingReply;
                q.route = p.ping().reply_route;
                q.hop = 0;
                q.src = p.dst;
                q.dst = p.src;
                cx.net.host_send(cx.now, &mut cx.ev, pkt);
            }
            PktKind::Control => {
                cx.net.release(pkt);
                if let Some(x) = self.xco.as_mut() {
                    x.on_message(cx, &mut self.hosts, p.control_slot());
                }
            }
            PktKind::DropNotice => {
                cx.net.release(pkt);
                // the socket answers only if it runs PDN (its own flag)
                let n = p.notice();
                let ep = &mut tcp.eps[n.sender_ep as usize];
                if ep.tx_flow == n.flow {
                    ep.on_drop_notification(cx, self, n.seq, n.len_bytes as u64);
                }
            }
            PktKind::PingReply => {
                cx.net.release(pkt);
                self.notes.push(AppNote::PingReply {
                    app: p.dst_ep,
                    seq: p.ping().probe,
                    rtt: cx.now.saturating_since(p.ping().sent_at),
                });
            }
        }
    }
}
