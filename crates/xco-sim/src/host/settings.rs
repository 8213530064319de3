//! The host model's settings (`[host]` in a scenario).
//!
//! Two models are reachable:
//! - **the old one** (no `[host]` table, or every key at its default): the NIC
//!   queue is bounded in bytes only (`topology.host_buffer`, 1,000 MTU-sized
//!   frames by default), and a UDP source sends on its own clock: a fragment
//!   that finds its host queue full (the NIC's, or XCo's per-destination
//!   queue) is lost at its host, out of the middle of its message;
//! - **a Linux-like host** (`txqueuelen = 1000`, `blocking_udp = true`): the
//!   NIC queue also counts packets as Linux's `txqueuelen` does (a ping or an
//!   ACK takes a slot like a full frame), and a UDP socket has a send buffer:
//!   the application's write blocks until the socket's datagrams still in
//!   the host are fewer than `udp_sndbuf` bytes and the next stage (the NIC
//!   queue, or XCo's per-destination queue on a coordinated host, which is
//!   where the paper's Dom0 held a guest's traffic) takes the whole message,
//!   so a message enters its host whole or not at all.
//!
//! TCP always blocks rather than losing a segment at its own host (both
//! models), now against the packet limit too when `txqueuelen` is set.
//! With `tsq_limit_bytes` set, each TCP socket also holds at most its TCP
//! Small Queues limit in its host (`crate::host::tsq`).

/// Linux's `net.ipv4.tcp_limit_output_bytes` default (1 MiB), bytes.
pub const LINUX_TCP_LIMIT_OUTPUT_BYTES: u64 = 1 << 20;

/// Linux's default UDP socket send buffer (`net.core.wmem_default`), bytes.
pub const LINUX_WMEM_DEFAULT_BYTES: u64 = 212_992;

/// Host-model settings of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostSettings {
    /// NIC queue length in packets (`None`: bounded in bytes only).
    pub txqueuelen: Option<u32>,
    /// UDP writes block (the message waits whole in the socket) instead of
    /// losing fragments at a full host queue.
    pub blocking_udp: bool,
    /// A UDP socket's send buffer, bytes (with `blocking_udp`).
    pub udp_sndbuf_bytes: u64,
    /// TCP Small Queues' cap (`net.ipv4.tcp_limit_output_bytes`), bytes;
    /// 0: off, a TCP socket may fill the NIC queue (`crate::host::tsq`).
    pub tsq_limit_bytes: u64,
}

impl Default for HostSettings {
    /// The old model: byte-bounded NIC queue, UDP sources that never wait.
    fn default() -> HostSettings {
        HostSettings {
            txqueuelen: None,
            blocking_udp: false,
            udp_sndbuf_bytes: LINUX_WMEM_DEFAULT_BYTES,
            tsq_limit_bytes: 0,
        }
    }
}
