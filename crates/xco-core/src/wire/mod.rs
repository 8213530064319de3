//! The XCo control protocol on the wire (UDP datagrams between the
//! controller and host agents), smoltcp-style:
//!
//! - [`packet`] — `Packet<T: AsRef<[u8]>>` reads and writes header fields in
//!   place; `Packet::new_checked` guarantees every later accessor is in bounds.
//! - [`repr`] — [`Repr`], the parsed message (join, leave, heartbeat, backlog
//!   report, give-back, directive), with `parse`, `buffer_len` and `emit`.
//! - [`auth`] — HMAC-SHA256 over every datagram with a shared key, and a
//!   per-sender replay guard on the sequence numbers.
//!
//! Layout (big endian):
//!
//! ```text
//!  0       2       3       4               8                              16      18
//!  +-------+-------+-------+---------------+-------------------------------+-------+---------+-----------+
//!  | "XC"  | ver=1 | type  | host id (u32) | sequence number (u64)         | len   | payload | HMAC (32) |
//!  +-------+-------+-------+---------------+-------------------------------+-------+---------+-----------+
//! ```
//!
//! `len` is the payload length. The HMAC covers everything before it.
//! Backlog reports carry the host's whole backlog set (cumulative state, as
//! in Fastpass), so a lost or duplicated report does no harm.

pub mod auth;
pub mod packet;
pub mod repr;

pub use auth::{Authenticator, ReplayGuard, WireError};
pub use packet::Packet;
pub use repr::{Message, Repr};
