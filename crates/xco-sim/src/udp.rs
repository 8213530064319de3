//! UDP: application messages split into IP fragments; a message counts only
//! if every one of its fragments arrives.

use crate::net::packet::{Packet, IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::stats::FlowStats;

/// Fragment sizes of a `message_bytes` UDP message at `mtu_bytes`: the IP
/// payload bytes of each fragment (the first one carries the UDP header).
pub fn fragment_sizes(message_bytes: u64, mtu_bytes: u32) -> impl Iterator<Item = u32> {
    let per_frag = ((mtu_bytes - IPV4_HEADER_BYTES) / 8 * 8) as u64;
    let total = message_bytes + UDP_HEADER_BYTES as u64;
    let n = total.div_ceil(per_frag);
    (0..n).map(move |i| per_frag.min(total - i * per_frag) as u32)
}

/// Reassembly state of one UDP flow at its receiver.
#[derive(Clone, Debug)]
pub struct UdpSink {
    /// Flow id.
    pub flow: u32,
    /// Application bytes per message.
    pub message_bytes: u64,
    current: u64,
    got: u32,
}

impl UdpSink {
    /// A sink for `flow` with messages of `message_bytes`.
    pub fn new(flow: u32, message_bytes: u64) -> UdpSink {
        UdpSink {
            flow,
            message_bytes,
            current: u64::MAX,
            got: 0,
        }
    }

    /// A fragment arrived; counts the message when its last fragment is in.
    ///
    /// Fragments of one flow follow one path, so they arrive in order: a
    /// fragment of a newer message means the older one lost a fragment.
    pub fn on_fragment(&mut self, p: &Packet, flows: &mut [FlowStats]) {
        let h = p.udp();
        if h.message != self.current {
            self.current = h.message;
            self.got = 0;
        }
        self.got += 1;
        if self.got == h.fragments {
            let f = &mut flows[self.flow as usize];
            f.msgs_delivered += 1;
            f.delivered(self.message_bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_64k_message_is_45_fragments_at_1500() {
        let f: Vec<u32> = fragment_sizes(65_507, 1500).collect();
        assert_eq!(f.len(), 45);
        assert_eq!(f.iter().map(|&x| x as u64).sum::<u64>(), 65_515);
        assert!(f.iter().all(|&x| x <= 1480));
    }
}
