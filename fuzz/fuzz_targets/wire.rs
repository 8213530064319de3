//! Fuzz the control-protocol parser: any bytes, authenticated or not, must be
//! rejected or parsed without a panic at either end (controller and agent,
//! with their session checks), and whatever parses re-encodes to the same
//! header and payload it came from (datagrams of the current version; an
//! older version's re-encode in the current one). Directives' start field,
//! the challenge round (challenge, confirm with the agent's address), the
//! rejoin's session and the give-back's epoch (version 3) are covered by
//! the `v3-*` seeds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xco_core::wire::{
    host_key, packet::VERSION, AgentKeys, AgentSessions, ControllerKeys, ControllerSession, Packet, Repr,
    Sender,
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
    if let Ok(p) = Packet::new_checked(data) {
        if let Ok(r) = Repr::parse(&p) {
            if p.version() != VERSION {
                return;
            }
            // a parsed message re-encodes to the same header and payload
            let again = match r.msg.sender() {
                Sender::Controller => c.encode(&r),
                Sender::Agent if r.host == 1 => a.encode(&r),
                Sender::Agent => return,
            };
            assert_eq!(&again[..again.len() - r.msg.sender().tag_len()], p.signed_part());
        }
    }
});
