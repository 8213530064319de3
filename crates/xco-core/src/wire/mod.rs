//! The XCo control protocol on the wire (UDP datagrams between the
//! controller and host agents), smoltcp-style:
//!
//! - [`packet`] — `Packet<T: AsRef<[u8]>>` reads and writes header fields in
//!   place; `Packet::new_checked` guarantees every later accessor is in bounds.
//! - [`repr`] — [`Repr`], the parsed message (join, leave, heartbeat, backlog
//!   report, give-back, rejection counts, confirm from agents; directive,
//!   hello, rejoin, challenge from the controller), with `parse`,
//!   `buffer_len` and `emit`.
//! - [`auth`] — the controller signs (Ed25519), agents MAC with their own
//!   keys (HMAC-SHA256), both derived from the controller's master secret.
//! - [`peer`] — terms (the high half of a run id), the controllers'
//!   heartbeat to each other and an agent's proof of a newer term (version 4,
//!   hot standby).
//! - [`session`] — controller run ids adopted through a signed challenge
//!   (or hello), agent sessions started by a confirm, per-session replay
//!   windows; nothing from a wall clock.
//!
//! Layout (big endian):
//!
//! ```text
//!  0     2     3     4             8                 16                24    26
//!  +-----+-----+-----+-------------+-----------------+-----------------+-----+---------+-----+
//!  | "XC"|ver=5|type | host (u32)  | run/session u64 | sequence (u64)  | len | payload | tag |
//!  +-----+-----+-----+-------------+-----------------+-----------------+-----+---------+-----+
//! ```
//!
//! Version 4 adds types 12 (peer heartbeat, MAC'd with the controllers'
//! peer key) and 13 (superseded proof, an agent's MAC around a controller's
//! signed datagram), and orders run ids: a run's high 32 bits are its term
//! ([`peer`]). Version 5 adds a grant's freshness ([`repr::Echo`], 16
//! bytes after a directive's start and after an ungated set's host): the
//! sequence number of the agent's latest message the controller had
//! accepted, and how long it held it before signing. Versions 2 to 4 are
//! still read; their grants echo nothing, so an agent of this version
//! refuses them (upgrade the controller and its agents together).
//!
//! `len` is the payload length. The tag covers everything before it: a
//! 64-byte Ed25519 signature on controller messages (types 4, 7, 8, 10; host
//! id `u32::MAX`), a 32-byte HMAC-SHA256 on agent messages (types 1-3, 5, 6,
//! 9, 11).
//!
//! Joining is a challenge round (types 10 and 11, added in version 3 with
//! the rejoin's session field and the give-back's epoch): join (nonce) ->
//! challenge (the nonce, a number issued once) -> confirm (the run, that
//! number, and the agent's own control address, where its directives go). A host's
//! session starts only at a confirm of a challenge newer than any it
//! confirmed before in that run, so a captured join or confirm replayed by
//! anyone changes nothing.
//!
//! A directive's payload: host (u32), epoch (u64), start (u64 ns, version 3
//! on: how long after it is sent it takes effect, 0 to 7.5 s; see
//! `coord::start`), echo (version 5 on: the agent's message seq u64, the
//! controller's hold u64 ns), kind (u8: 1 slice, 2 rates) and the kind's
//! fields.
//! Version 2 datagrams are still read; their directives have no start
//! field and apply on receipt.
//!
//! Backlog reports carry the host's whole backlog set and rejection counts
//! are cumulative (as in Fastpass), so a lost or duplicated one does no harm.

pub mod auth;
pub mod packet;
pub mod peer;
pub mod repr;
pub mod session;

pub use auth::{host_key, keyed_controller_key, AgentKeys, ControllerKeys, WireError, MIN_KEY_BYTES};
pub use packet::{Packet, Sender};
pub use peer::{peer_key, run_of, term_of, PeerBeat, Superseded};
pub use repr::{Echo, Message, RejectCounts, Repr, ADDR_LEN, CONTROLLER_ID};
pub use session::{Accepted, AgentSessions, Checked, ControllerSession};
