//! Fuzz the control-protocol parser: any bytes, authenticated or not, must be
//! rejected or parsed without a panic at either end (controller and agent,
//! with their session checks), and whatever parses re-encodes to the same
//! header and payload it came from (datagrams of the current version; an
//! older version's re-encode in the current one). Directives' start field,
//! the challenge round (challenge, confirm with the agent's address), the
//! rejoin's session and the give-back's epoch (version 3) are covered by
//! the `v3-*` seeds; the controllers' peer beat and an agent's superseded
//! proof (version 4) by the `v4-*` seeds: a beat that authenticates
//! re-encodes to itself, a proof's inner datagram is checked as a
//! controller datagram. A grant's echo and a demand report's ungated set
//! (version 5) by the `v5-*` seeds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xco_core::wire::{
    host_key, packet::VERSION, peer_key, AgentKeys, AgentSessions, ControllerKeys, ControllerSession, Packet,
    PeerBeat, Repr, Sender,
};

const MASTER: &[u8] = b"fuzz master secret, 32 bytes long";

fuzz_target!(|data: &[u8]| {
    let c = ControllerKeys::new(MASTER, &["h0", "h1"]);
    let a = AgentKeys::new(1, &host_key(MASTER, "h1"), &c.public_key()).unwrap();
    if let Ok(r) = c.decode(data) {
        let _ = AgentSessions::new(2, 1).check(&r);
    }
    if let Ok(r) = a.decode(data) {
        let mut s = ControllerSession::new(1);
        s.joining(7);
        let _ = s.accept(&r);
    }
    let pk = peer_key(MASTER);
    // (of the current version: an older one re-encodes in the current one)
    let current = data.get(2) == Some(&VERSION);
    if let Ok(b) = PeerBeat::decode(&pk, data) {
        if current {
            assert_eq!(b.encode(&pk), data, "a peer beat re-encodes to itself");
        }
    }
    if let Ok(s) = c.decode_superseded(data) {
        let _ = c.verify_signed(&s.proof);
        if s.host == 1 && current {
            assert_eq!(a.encode_superseded(&s), data, "a proof re-encodes to itself");
        }
    }
    if let Ok(p) = Packet::new_checked(data) {
        if let Ok(r) = Repr::parse(&p) {
            if p.version() != VERSION {
                return;
            }
            // a parsed message re-encodes to the same header and payload
            let again = match r.msg.sender() {
                Sender::Controller => c.encode(&r),
                Sender::Agent if r.host == 1 => a.encode(&r),
                Sender::Agent | Sender::Peer => return,
            };
            assert_eq!(&again[..again.len() - r.msg.sender().tag_len()], p.signed_part());
        }
    }
});
