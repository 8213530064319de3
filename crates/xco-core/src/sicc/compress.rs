//! Packet compression (spec §Design 5).
//!
//! A hub packs several small objects into one packet up to the maximum
//! payload (the MSS: 1,460 B of TCP payload in a 1,500-B Ethernet MTU),
//! cutting header overhead and the number of inter-rack packets. The
//! compression ratio is the number of packets without compression over the
//! number with it.
//!
//! [`pack`] is next-fit in the given order (the forwarding order matters,
//! so objects are never reordered): an object joins the current packet if
//! its bytes (plus `per_object_bytes` of framing, 0 by default: the paper
//! names none) fit in what is left, else it opens the next packet. An object
//! is never split while it fits in one payload; one that does not is sent
//! alone in ceil(bytes / payload) packets. Without compression each object
//! goes in its own packet(s) ([`pack_uncompressed_count`]).

/// The packet budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packing {
    /// Maximum payload per packet (the MSS), at least 1.
    pub payload_bytes: u32,
    /// Framing added per object inside a packet (object boundary marker).
    pub per_object_bytes: u32,
}

impl Default for Packing {
    /// A 1,460-B MSS (1,500-B MTU, 20-B IP and 20-B TCP headers), no framing.
    fn default() -> Packing {
        Packing {
            payload_bytes: 1460,
            per_object_bytes: 0,
        }
    }
}

/// One packet of [`pack`]'s output: objects `first..end` end in it.
///
/// A packet that carries a non-final piece of an object larger than the
/// payload has `first == end` (no object ends in it) and `first` is that
/// object. Summed over all packets, `end - first` counts every object once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketSpan {
    /// First object (index into the input) in the packet.
    pub first: u32,
    /// One past the last object that ends in the packet.
    pub end: u32,
    /// Payload bytes, framing included; at most the payload budget.
    pub payload_bytes: u32,
}

impl PacketSpan {
    /// Objects that end in this packet.
    pub fn objects(&self) -> u32 {
        self.end - self.first
    }
}

/// Pack objects of `sizes_bytes` (in order) into packets of at most
/// `packing.payload_bytes`; `out` is cleared first. Returns the number of
/// packets.
pub fn pack(sizes_bytes: &[u32], packing: Packing, out: &mut Vec<PacketSpan>) -> usize {
    out.clear();
    let cap = packing.payload_bytes.max(1) as u64;
    let mut cur: Option<PacketSpan> = None;
    for (i, &b) in sizes_bytes.iter().enumerate() {
        let i = i as u32;
        let framed = b as u64 + packing.per_object_bytes as u64;
        if framed > cap {
            // Alone, in whole payloads and a remainder.
            out.extend(cur.take());
            let mut left = framed;
            while left > cap {
                out.push(PacketSpan {
                    first: i,
                    end: i,
                    payload_bytes: cap as u32,
                });
                left -= cap;
            }
            out.push(PacketSpan {
                first: i,
                end: i + 1,
                payload_bytes: left as u32,
            });
            continue;
        }
        match &mut cur {
            Some(p) if p.payload_bytes as u64 + framed <= cap => {
                p.end = i + 1;
                p.payload_bytes += framed as u32;
            }
            _ => {
                out.extend(cur.take());
                cur = Some(PacketSpan {
                    first: i,
                    end: i + 1,
                    payload_bytes: framed as u32,
                });
            }
        }
    }
    out.extend(cur);
    out.len()
}

/// Packets the same objects take without compression: each object in its
/// own packet(s).
pub fn pack_uncompressed_count(sizes_bytes: &[u32], packing: Packing) -> u64 {
    let cap = packing.payload_bytes.max(1) as u64;
    sizes_bytes
        .iter()
        .map(|&b| (b as u64 + packing.per_object_bytes as u64).div_ceil(cap).max(1))
        .sum()
}
