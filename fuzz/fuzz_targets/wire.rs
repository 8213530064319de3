//! Fuzz the control-protocol parser: any bytes, authenticated or not, must be
//! rejected or parsed without a panic, and whatever parses re-encodes to the
//! same bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xco_core::wire::{Authenticator, Packet, Repr};

fuzz_target!(|data: &[u8]| {
    let auth = Authenticator::new(b"fuzz key");
    let _ = auth.decode(data);
    if let Ok(p) = Packet::new_checked(data) {
        if let Ok(r) = Repr::parse(&p) {
            // a parsed message re-encodes to the same header and payload
            let again = auth.encode(&r);
            assert_eq!(&again[..again.len() - 32], p.signed_part());
        }
    }
});
