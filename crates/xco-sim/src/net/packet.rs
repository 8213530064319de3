//! Packets: headers and sizes only (never payload bytes), pooled and recycled.

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
}

/// TCP flag: SYN.
pub const FLAG_SYN: u8 = 1;
/// TCP flag: ACK field valid.
pub const FLAG_ACK: u8 = 2;
/// TCP flag: FIN.
pub const FLAG_FIN: u8 = 4;

/// IPv4 header bytes.
pub const IPV4_HEADER_BYTES: u32 = 20;
/// UDP header bytes.
pub const UDP_HEADER_BYTES: u32 = 8;
/// ICMP echo header bytes.
pub const ICMP_HEADER_BYTES: u32 = 8;

/// A packet in flight. Sequence numbers are 64-bit byte offsets that never wrap.
///
/// For UDP fragments `seq` is the message number, `ack` the fragment index and
/// `wnd` the number of fragments of the message; for pings `seq` is the probe
/// number and `ts_val` the send time.
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
    /// TCP flags (`FLAG_*`).
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
}

/// A free-list arena of packets: allocation on the packet path is a pop.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PktId>,
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
