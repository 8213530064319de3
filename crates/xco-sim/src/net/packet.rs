//! Packets: headers and sizes only (never payload bytes), pooled and recycled.

use xco_core::Time;

/// Index of a packet in the [`PacketPool`].
pub type PktId = u32;

/// What a packet is, which decides who handles it at the destination host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PktKind {
    /// A TCP segment (data, pure ACK, SYN, SYN-ACK).
    Tcp,
    /// One IP fragment of a UDP application message.
    Udp,
    /// ICMP echo request.
    PingRequest,
    /// ICMP echo reply.
    PingReply,
    /// An XCo control message (its content is in the control plane, slot `seq`).
    Control,
    /// A PDN drop notification on its way back to a sender (not IP traffic:
    /// it rides on frames, see [`super::pdn`]; read through [`Packet::notice`]).
    DropNotice,
}

/// TCP flag: SYN.
pub const FLAG_SYN: u8 = 1;
/// TCP flag: ACK field valid.
pub const FLAG_ACK: u8 = 2;
/// TCP flag: FIN.
pub const FLAG_FIN: u8 = 4;
/// TCP flag: ECN-Echo (RFC 3168: the receiver saw CE).
pub const FLAG_ECE: u8 = 8;
/// TCP flag: Congestion Window Reduced (RFC 3168: the sender answered ECE).
pub const FLAG_CWR: u8 = 16;
/// TCP option present: the segment carries SACK blocks (RFC 2018), kept
/// beside the packet in [`PacketPool::sack`] so a packet stays 72 bytes.
pub const FLAG_SACK: u8 = 32;
/// The bits of [`Packet::flags`] that hold the IP header's ECN field (bits 6-7).
const ECN_MASK: u8 = 0xC0;
const ECN_SHIFT: u32 = 6;

/// The ECN field of the IP header (RFC 3168 codepoints).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable transport (00): congestion is signalled by drops.
    NotEct = 0,
    /// ECN-capable transport, ECT(1) (01).
    Ect1 = 1,
    /// ECN-capable transport, ECT(0) (10).
    Ect0 = 2,
    /// Congestion experienced (11), set by a queue instead of a drop.
    Ce = 3,
}

/// IPv4 header bytes.
pub const IPV4_HEADER_BYTES: u32 = 20;
/// UDP header bytes.
pub const UDP_HEADER_BYTES: u32 = 8;
/// ICMP echo header bytes.
pub const ICMP_HEADER_BYTES: u32 = 8;

/// A packet in flight. Sequence numbers are 64-bit byte offsets that never wrap.
///
/// The header fields are TCP's; the other kinds keep what they need in the
/// same storage (so a packet stays 72 bytes) and are read and written only
/// through their typed views: [`UdpHeader`], [`PingHeader`] and
/// [`Packet::control_slot`].
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// First payload byte (TCP) or message number (UDP).
    pub seq: u64,
    /// Cumulative acknowledgement (TCP) or fragment index (UDP).
    pub ack: u64,
    /// Sender's timestamp in ps (TCP timestamps option, ping send time).
    pub ts_val: u64,
    /// Echoed timestamp in ps (TCP).
    pub ts_ecr: u64,
    /// Offset of this packet's route in the route table.
    pub route: u32,
    /// Index of the port (within the route) the packet last left by.
    pub hop: u16,
    /// Packet kind.
    pub kind: PktKind,
    /// TCP flags (`FLAG_*`, bits 0-5) and the IP ECN field (bits 6-7: use
    /// [`Packet::ecn`] and [`Packet::set_ecn`]); one byte, so `Packet` keeps its size.
    pub flags: u8,
    /// IP datagram length in bytes (headers + payload).
    pub ip_bytes: u32,
    /// Transport payload bytes.
    pub payload_bytes: u32,
    /// Flow id (statistics), unique for the run.
    pub flow: u32,
    /// Receiving endpoint at the destination host.
    pub dst_ep: u32,
    /// Sending endpoint (for captures and replies).
    pub src_ep: u32,
    /// Source host node.
    pub src: u32,
    /// Destination host node.
    pub dst: u32,
    /// Advertised receive window in bytes (TCP) or fragments per message (UDP).
    pub wnd: u32,
}

impl Packet {
    /// An all-zero TCP packet, the starting point for every new packet.
    pub const EMPTY: Packet = Packet {
        seq: 0,
        ack: 0,
        ts_val: 0,
        ts_ecr: 0,
        route: 0,
        hop: 0,
        kind: PktKind::Tcp,
        flags: 0,
        ip_bytes: 0,
        payload_bytes: 0,
        flow: 0,
        dst_ep: 0,
        src_ep: 0,
        src: 0,
        dst: 0,
        wnd: 0,
    };

    /// The IP header's ECN field.
    #[inline(always)]
    pub fn ecn(&self) -> Ecn {
        match (self.flags & ECN_MASK) >> ECN_SHIFT {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// Set the IP header's ECN field.
    #[inline(always)]
    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.flags = (self.flags & !ECN_MASK) | (ecn as u8) << ECN_SHIFT;
    }

    /// True if the packet is ECN-capable (ECT(0), ECT(1) or already CE).
    #[inline(always)]
    pub fn is_ect(&self) -> bool {
        self.flags & ECN_MASK != 0
    }

    /// True if the packet is ECN-capable or carries ECE or CWR: one test
    /// that lets TCP skip all ECN handling for the usual packet.
    #[inline(always)]
    pub fn has_ecn_bits(&self) -> bool {
        self.flags & (ECN_MASK | FLAG_ECE | FLAG_CWR) != 0
    }

    /// A UDP fragment's header (panics in debug builds for another kind).
    #[inline(always)]
    pub fn udp(&self) -> UdpHeader {
        debug_assert_eq!(self.kind, PktKind::Udp);
        UdpHeader {
            message: self.seq,
            fragment: self.ack as u32,
            fragments: self.wnd,
        }
    }

    /// Write a UDP fragment's header.
    #[inline(always)]
    pub fn set_udp(&mut self, h: UdpHeader) {
        self.kind = PktKind::Udp;
        self.seq = h.message;
        self.ack = h.fragment as u64;
        self.wnd = h.fragments;
    }

    /// An ICMP echo's header (panics in debug builds for another kind).
    #[inline(always)]
    pub fn ping(&self) -> PingHeader {
        debug_assert!(matches!(self.kind, PktKind::PingRequest | PktKind::PingReply));
        PingHeader {
            probe: self.seq,
            sent_at: Time(self.ts_val),
            reply_route: self.ack as u32,
        }
    }

    /// Write an ICMP echo request's header.
    #[inline(always)]
    pub fn set_ping(&mut self, h: PingHeader) {
        self.kind = PktKind::PingRequest;
        self.seq = h.probe;
        self.ts_val = h.sent_at.ps();
        self.ack = h.reply_route as u64;
    }

    /// The control-plane slot an XCo control packet carries (panics in debug
    /// builds for another kind).
    #[inline(always)]
    pub fn control_slot(&self) -> u32 {
        debug_assert_eq!(self.kind, PktKind::Control);
        self.seq as u32
    }

    /// Make this an XCo control packet for `slot`.
    #[inline(always)]
    pub fn set_control(&mut self, slot: u32) {
        self.kind = PktKind::Control;
        self.seq = slot as u64;
    }
}

/// What a UDP fragment carries besides its sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpHeader {
    /// The application message it belongs to (numbered from 0 per source).
    pub message: u64,
    /// Its index among the message's fragments.
    pub fragment: u32,
    /// How many fragments the message has.
    pub fragments: u32,
}

/// What an ICMP echo carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingHeader {
    /// The probe number (the ICMP sequence number).
    pub probe: u64,
    /// When the request left (the echo's timestamp payload).
    pub sent_at: Time,
    /// The route the reply takes (the simulator's stand-in for the reply's
    /// own routing at the far host).
    pub reply_route: u32,
}

/// Most SACK blocks one segment carries (RFC 2018: four fit in 40 option
/// bytes without timestamps, three beside the timestamps option).
pub const MAX_SACK_BLOCKS: usize = 4;

/// The SACK option of a segment (RFC 2018 §3): up to [`MAX_SACK_BLOCKS`]
/// `[start, end)` byte ranges the receiver holds above its cumulative ACK,
/// the most recently changed first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackOption {
    /// The blocks; only the first `len` count.
    pub blocks: [(u64, u64); MAX_SACK_BLOCKS],
    /// Blocks used.
    pub len: u8,
}

impl SackOption {
    /// The blocks in use.
    #[inline]
    pub fn used(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }

    /// Option bytes on the wire: kind, length and 8 per block, after two
    /// NOPs that align it (as Linux sends it).
    #[inline]
    pub fn wire_bytes(&self) -> u32 {
        4 + 8 * self.len as u32
    }
}

/// A free-list arena of packets: allocation on the packet path is a pop.
///
/// SACK options live in a side table indexed by packet id ([`PacketPool::sack`]),
/// grown only when a segment first carries one, so runs without SACK never
/// touch it and a packet stays 72 bytes.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PktId>,
    sack: Vec<SackOption>,
}

impl PacketPool {
    /// An empty pool.
    pub fn new() -> PacketPool {
        PacketPool::default()
    }

    /// Store `p` and return its id.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PktId
        }
    }

    /// Return `id` to the pool.
    #[inline]
    pub fn release(&mut self, id: PktId) {
        debug_assert!(!self.free.contains(&id), "double release of packet {id}");
        self.free.push(id);
    }

    /// Attach SACK option `opt` to packet `id` (whose flags carry
    /// [`FLAG_SACK`]). The side table grows to the pool's size the first
    /// time, and after that only when the pool itself grows.
    #[inline]
    pub fn set_sack(&mut self, id: PktId, opt: SackOption) {
        let i = id as usize;
        if i >= self.sack.len() {
            self.sack
                .resize(self.slots.len().max(i + 1), SackOption::default());
        }
        self.sack[i] = opt;
    }

    /// The SACK option attached to packet `id` by [`PacketPool::set_sack`].
    /// It stays readable after `id` is released until the slot carries a
    /// new option, so a receiver may release a segment first and read its
    /// option before it sends anything.
    #[inline]
    pub fn sack(&self, id: PktId) -> SackOption {
        self.sack.get(id as usize).copied().unwrap_or_default()
    }

    /// Packets currently alive (allocated and not released).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Ids of live packets (slow: for conservation checks).
    pub fn live_ids(&self) -> Vec<PktId> {
        let mut is_free = vec![false; self.slots.len()];
        for &f in &self.free {
            is_free[f as usize] = true;
        }
        (0..self.slots.len() as PktId)
            .filter(|&i| !is_free[i as usize])
            .collect()
    }
}

impl PacketPool {
    /// The packet in slot `id`, if the pool has that slot (live or free:
    /// for hints such as cache warming, which may name a released packet).
    #[inline(always)]
    pub fn get(&self, id: PktId) -> Option<&Packet> {
        self.slots.get(id as usize)
    }
}

impl std::ops::Index<PktId> for PacketPool {
    type Output = Packet;
    #[inline(always)]
    fn index(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }
}

impl std::ops::IndexMut<PktId> for PacketPool {
    #[inline(always)]
    fn index_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_is_72_bytes() {
        // the ECN field lives in the flags byte: adding it must not grow packets
        assert_eq!(std::mem::size_of::<Packet>(), 72);
    }

    #[test]
    fn the_ecn_field_leaves_the_tcp_flags_alone() {
        let mut p = Packet {
            flags: FLAG_SYN | FLAG_ACK | FLAG_ECE | FLAG_CWR,
            ..Packet::EMPTY
        };
        assert_eq!(p.ecn(), Ecn::NotEct);
        assert!(!p.is_ect());
        for e in [Ecn::Ect0, Ecn::Ect1, Ecn::Ce, Ecn::NotEct] {
            p.set_ecn(e);
            assert_eq!(p.ecn(), e);
            assert_eq!(p.flags & 31, FLAG_SYN | FLAG_ACK | FLAG_ECE | FLAG_CWR);
        }
        p.set_ecn(Ecn::Ect0);
        assert!(p.is_ect());
    }
}
