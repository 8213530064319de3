//! Packet captures of chosen links, written as classic pcap (nanosecond
//! timestamps, Ethernet link type) that tshark and Wireshark read.
//!
//! Simulated packets have no payload bytes, so each record holds real
//! Ethernet / IPv4 / TCP (UDP, ICMP) headers with the true lengths and
//! checksums, followed by zero bytes up to the snap length; `orig_len` is the
//! full frame length. (A payload of zeros adds nothing to an Internet
//! checksum, so the TCP/UDP checksums are those of the real packet.) The IP
//! header carries the packet's ECN field (ECT, CE) and the TCP header its
//! ECE and CWR flags.

use super::packet::{Packet, PktKind, FLAG_ACK, FLAG_CWR, FLAG_ECE, FLAG_FIN, FLAG_SACK, FLAG_SYN};
use super::pdn::{EMPTY_FRAME_BYTES, ETHERTYPE_PDN_IPV4, NOTICE_BYTES};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use std::time::Duration;
use xco_core::Time;

/// Captured packets of one port, kept in memory until the run ends.
pub struct CaptureBuffer {
    /// File name (`from-to.pcap`).
    pub name: String,
    snaplen: Option<u32>,
    mtu: u32,
    tcp_header_bytes: u32,
    records: Vec<(Time, Packet)>,
    /// Per record: the frame carried a PDN notification (EtherType 0xA800).
    carries_notice: Vec<bool>,
    /// The pcap file's size limit, bytes.
    limit_bytes: u64,
    /// Bytes of the pcap file of the records kept (its header included).
    file_bytes: u64,
    /// When the first record that did not fit was offered.
    cut_at: Option<Time>,
    /// Records offered after the limit was reached (not kept).
    not_kept: u64,
}

/// Bytes of a classic pcap file header.
const FILE_HEADER_BYTES: u64 = 24;
/// Bytes of a pcap record header.
const RECORD_HEADER_BYTES: u64 = 16;

/// IPv4 address of node `n` (10.x.y.z).
pub fn node_ip(n: u32) -> [u8; 4] {
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// UDP port of XCo control messages (both ends).
pub const CONTROL_PORT: u16 = 4790;

/// Ethernet address of node `n` (locally administered, 02:00:..).
pub fn node_mac(n: u32) -> [u8; 6] {
    [
        0x02,
        0x00,
        (n >> 24) as u8,
        (n >> 16) as u8,
        (n >> 8) as u8,
        n as u8,
    ]
}

/// TCP/UDP port of endpoint `ep`.
pub fn ep_port(ep: u32) -> u16 {
    1024 + (ep % 64_000) as u16
}

fn checksum_add(mut sum: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    sum
}

fn checksum_finish(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The 20 bytes of a notification: type (1: packet drop), operation (1:
/// retransmit, then halve cwnd), the dropped segment's addresses and ports,
/// its sequence number and payload length.
fn notice_bytes(n: &Packet) -> [u8; 20] {
    let h = n.notice();
    let mut b = [0u8; 20];
    b[0] = 1;
    b[1] = 1;
    // the dropped segment went from the notification's destination to its source
    b[2..6].copy_from_slice(&node_ip(n.dst));
    b[6..10].copy_from_slice(&node_ip(n.src));
    b[10..12].copy_from_slice(&ep_port(h.sender_ep).to_be_bytes());
    b[12..14].copy_from_slice(&ep_port(n.dst_ep).to_be_bytes());
    b[14..18].copy_from_slice(&(h.seq.wrapping_add(1) as u32).to_be_bytes());
    b[18..20].copy_from_slice(&(h.len_bytes.min(65_535) as u16).to_be_bytes());
    b
}

impl CaptureBuffer {
    /// An empty capture; `snaplen` None keeps headers only.
    pub fn new(name: String, snaplen: Option<u32>, mtu: u32, tcp_header_bytes: u32) -> CaptureBuffer {
        CaptureBuffer {
            name,
            snaplen,
            mtu,
            tcp_header_bytes,
            records: Vec::new(),
            carries_notice: Vec::new(),
            limit_bytes: u64::MAX,
            file_bytes: FILE_HEADER_BYTES,
            cut_at: None,
            not_kept: 0,
        }
    }

    /// Keep no record that would take the pcap file past `bytes`.
    pub fn set_limit(&mut self, bytes: u64) {
        self.limit_bytes = bytes;
    }

    /// The pcap file's size limit, bytes.
    pub fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// When the first record that did not fit was offered, if one did not.
    pub fn cut_at(&self) -> Option<Time> {
        self.cut_at
    }

    /// Records offered after the limit was reached.
    pub fn not_kept(&self) -> u64 {
        self.not_kept
    }

    /// Bytes the pcap file of the records kept takes.
    pub fn file_bytes(&self) -> u64 {
        self.file_bytes
    }

    /// Keep `p` (leaving at `t`) if its record fits under the limit.
    fn keep(&mut self, t: Time, p: &Packet, carrier: bool) {
        if self.cut_at.is_none() {
            let bytes = RECORD_HEADER_BYTES + self.captured_len(p, carrier) as u64;
            if self.file_bytes + bytes <= self.limit_bytes {
                self.file_bytes += bytes;
                self.records.push((t, *p));
                self.carries_notice.push(carrier);
                return;
            }
            self.cut_at = Some(t);
        }
        self.not_kept += 1;
    }

    /// Record `p` leaving the port at `t`.
    pub fn record(&mut self, t: Time, p: &Packet) {
        self.keep(t, p, false);
    }

    /// Record `p` leaving the port at `t` with a PDN notification appended
    /// (EtherType 0xA800, 20 bytes more on the wire).
    pub fn record_carrier(&mut self, t: Time, p: &Packet) {
        self.keep(t, p, true);
    }

    /// Record an otherwise-empty frame that carries PDN notification `n`.
    pub fn record_empty_frame(&mut self, t: Time, n: &Packet) {
        self.keep(t, n, false);
    }

    /// The frame's length on the wire without FCS (a record's `orig_len`).
    fn orig_len(p: &Packet, carrier: bool) -> u32 {
        if p.kind == PktKind::DropNotice {
            EMPTY_FRAME_BYTES - 4 // no FCS in captures
        } else if carrier {
            p.ip_bytes + 14 + NOTICE_BYTES
        } else {
            p.ip_bytes + 14
        }
    }

    /// Bytes of `p`'s record data: the snap length's share of the frame, or
    /// (headers only) the headers [`CaptureBuffer::frame`] writes.
    fn captured_len(&self, p: &Packet, carrier: bool) -> u32 {
        if let Some(snap) = self.snaplen {
            return snap.min(Self::orig_len(p, carrier));
        }
        let l4 = match p.kind {
            PktKind::DropNotice => return 14 + NOTICE_BYTES,
            PktKind::Tcp => self.tcp_header_len(p),
            PktKind::Udp if p.udp().fragment != 0 => 0,
            PktKind::Udp | PktKind::Control | PktKind::PingRequest | PktKind::PingReply => 8,
        };
        14 + 20 + l4
    }

    /// The TCP header's length as written: 40 B for a SYN (MSS and
    /// timestamps), the SACK option's room when it carries one, else the run's.
    fn tcp_header_len(&self, p: &Packet) -> u32 {
        if p.flags & FLAG_SYN != 0 {
            40
        } else if p.flags & FLAG_SACK != 0 {
            p.ip_bytes - p.payload_bytes - 20
        } else {
            self.tcp_header_bytes - 20
        }
    }

    /// Every record: when the packet left the port, and its headers.
    pub fn records(&self) -> &[(Time, Packet)] {
        &self.records
    }

    /// Packets recorded.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True if nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Headers of `p` as on the wire (Ethernet header, no FCS).
    fn frame(&self, p: &Packet, carrier: bool) -> Vec<u8> {
        let mut f = Vec::with_capacity(14 + 60);
        f.extend_from_slice(&node_mac(p.dst));
        f.extend_from_slice(&node_mac(p.src));
        if p.kind == PktKind::DropNotice {
            // an otherwise-empty frame carrying one notification
            f.extend_from_slice(&ETHERTYPE_PDN_IPV4.to_be_bytes());
            f.extend_from_slice(&notice_bytes(p));
            return f;
        }
        let ethertype = if carrier { ETHERTYPE_PDN_IPV4 } else { 0x0800u16 };
        f.extend_from_slice(&ethertype.to_be_bytes());
        let (proto, frag_field) = match p.kind {
            PktKind::Tcp => (6u8, 0x4000u16), // DF
            PktKind::Udp => {
                let per_frag = (self.mtu - 20) / 8 * 8;
                let h = p.udp();
                let offset_units = (h.fragment * per_frag / 8) as u16;
                let more = if h.fragment + 1 < h.fragments { 0x2000 } else { 0 };
                (17u8, more | offset_units)
            }
            PktKind::PingRequest | PktKind::PingReply => (1u8, 0x4000u16),
            PktKind::Control => (17u8, 0x4000u16),
            // never recorded as a packet (a notification rides on its carrier's frame)
            PktKind::DropNotice => (253u8, 0),
        };
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[1] = p.ecn() as u8; // DSCP 0, the ECN field in the low two bits
        ip[2..4].copy_from_slice(&(p.ip_bytes.min(65_535) as u16).to_be_bytes());
        let id = match p.kind {
            PktKind::Udp => p.udp().message as u16,
            _ => 0,
        };
        ip[4..6].copy_from_slice(&id.to_be_bytes());
        ip[6..8].copy_from_slice(&frag_field.to_be_bytes());
        ip[8] = 64;
        ip[9] = proto;
        ip[12..16].copy_from_slice(&node_ip(p.src));
        ip[16..20].copy_from_slice(&node_ip(p.dst));
        let c = checksum_finish(checksum_add(0, &ip));
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        let l4_len = p.ip_bytes - 20;
        let mut pseudo = checksum_add(0, &ip[12..20]);
        pseudo += proto as u32 + l4_len;
        match p.kind {
            PktKind::Tcp => {
                // the SACK option's bytes are written as NOPs (the blocks
                // live beside the packet, not in it)
                let hdr_len = self.tcp_header_len(p);
                let mut t = vec![0u8; hdr_len as usize];
                t[0..2].copy_from_slice(&ep_port(p.src_ep).to_be_bytes());
                t[2..4].copy_from_slice(&ep_port(p.dst_ep).to_be_bytes());
                // the SYN takes sequence number 0; data byte k is sequence k + 1
                let seq = if p.flags & FLAG_SYN != 0 {
                    0
                } else {
                    p.seq.wrapping_add(1) as u32
                };
                t[4..8].copy_from_slice(&seq.to_be_bytes());
                let ack = if p.flags & FLAG_ACK != 0 {
                    p.ack.wrapping_add(1) as u32
                } else {
                    0
                };
                t[8..12].copy_from_slice(&ack.to_be_bytes());
                t[12] = ((hdr_len / 4) as u8) << 4;
                let mut fl = 0u8;
                if p.flags & FLAG_FIN != 0 {
                    fl |= 0x01;
                }
                if p.flags & FLAG_SYN != 0 {
                    fl |= 0x02;
                }
                if p.flags & FLAG_ACK != 0 {
                    fl |= 0x10;
                }
                if p.flags & FLAG_ECE != 0 {
                    fl |= 0x40;
                }
                if p.flags & FLAG_CWR != 0 {
                    fl |= 0x80;
                }
                t[13] = fl;
                t[14..16].copy_from_slice(&(p.wnd.min(65_535) as u16).to_be_bytes());
                let mut o = 20;
                if p.flags & FLAG_SYN != 0 {
                    // MSS option
                    t[o..o + 4].copy_from_slice(&[2, 4, ((self.mtu - 40) >> 8) as u8, (self.mtu - 40) as u8]);
                    o += 4;
                }
                if hdr_len as usize >= o + 12 {
                    // NOP NOP Timestamps (in microseconds)
                    t[o] = 1;
                    t[o + 1] = 1;
                    t[o + 2] = 8;
                    t[o + 3] = 10;
                    t[o + 4..o + 8].copy_from_slice(&((p.ts_val / 1_000_000) as u32).to_be_bytes());
                    t[o + 8..o + 12].copy_from_slice(&((p.ts_ecr / 1_000_000) as u32).to_be_bytes());
                    o += 12;
                }
                while o < hdr_len as usize {
                    t[o] = 1; // NOP padding
                    o += 1;
                }
                let c = checksum_finish(checksum_add(pseudo, &t));
                t[16..18].copy_from_slice(&c.to_be_bytes());
                f.extend_from_slice(&t);
            }
            PktKind::Control => {
                let mut u = [0u8; 8];
                u[0..2].copy_from_slice(&CONTROL_PORT.to_be_bytes());
                u[2..4].copy_from_slice(&CONTROL_PORT.to_be_bytes());
                u[4..6].copy_from_slice(&((p.ip_bytes - 20) as u16).to_be_bytes());
                f.extend_from_slice(&u);
            }
            PktKind::Udp => {
                if p.udp().fragment == 0 {
                    let mut u = [0u8; 8];
                    u[0..2].copy_from_slice(&ep_port(p.src_ep).to_be_bytes());
                    u[2..4].copy_from_slice(&ep_port(p.dst_ep).to_be_bytes());
                    let len = (p.payload_bytes as u64 + 8).min(65_535) as u16;
                    u[4..6].copy_from_slice(&len.to_be_bytes());
                    // checksum 0: "not computed" is legal for UDP over IPv4
                    f.extend_from_slice(&u);
                }
            }
            PktKind::DropNotice => {}
            PktKind::PingRequest | PktKind::PingReply => {
                let mut icmp = [0u8; 8];
                icmp[0] = if p.kind == PktKind::PingRequest { 8 } else { 0 };
                icmp[4..6].copy_from_slice(&(p.dst_ep as u16).to_be_bytes());
                icmp[6..8].copy_from_slice(&(p.ping().probe as u16).to_be_bytes());
                let c = checksum_finish(checksum_add(0, &icmp));
                icmp[2..4].copy_from_slice(&c.to_be_bytes());
                f.extend_from_slice(&icmp);
            }
        }
        f
    }

    /// The capture as a pcap file.
    pub fn to_pcap(&self) -> Vec<u8> {
        let header = PcapHeader {
            snaplen: self.snaplen.unwrap_or(65_535),
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
            ..PcapHeader::default()
        };
        let mut w = PcapWriter::with_header(Vec::new(), header).expect("writing to memory");
        for ((t, p), &carrier) in self.records.iter().zip(&self.carries_notice) {
            let mut frame = self.frame(p, carrier);
            let orig_len = Self::orig_len(p, carrier);
            if let Some(snap) = self.snaplen {
                frame.resize((snap.min(orig_len)) as usize, 0);
            }
            let ts = Duration::from_nanos(t.ps() / 1000);
            w.write_packet(&PcapPacket::new(ts, orig_len, &frame))
                .expect("writing to memory");
        }
        w.into_writer()
    }
}
