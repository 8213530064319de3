//! The control protocol: byte fixtures, round trips, forgery and replay
//! rejection, and malformed input of every kind rejected without a panic.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use xco_core::sched::{Directive, DirectiveKind};
use xco_core::wire::{Authenticator, Message, ReplayGuard, Repr, WireError};
use xco_core::{Dur, Rng};

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

fn all_messages() -> Vec<Repr> {
    let msgs = vec![
        Message::Join,
        Message::Leave,
        Message::Heartbeat,
        Message::Report { dests: vec![] },
        Message::Report {
            dests: vec![1, 2, 70000],
        },
        Message::GiveBack { dest: 9 },
        Message::Directive(Directive {
            host: 3,
            epoch: 17,
            kind: DirectiveKind::Slice {
                dest: Some(5),
                len: Dur::from_ms(2),
                rate_bps: None,
            },
        }),
        Message::Directive(Directive {
            host: 3,
            epoch: 18,
            kind: DirectiveKind::Slice {
                dest: None,
                len: Dur::from_ms(10),
                rate_bps: Some(1_000_000_000),
            },
        }),
        Message::Directive(Directive {
            host: 4,
            epoch: 1,
            kind: DirectiveKind::Rates {
                rates: vec![(1, 200_000_000), (2, 769_230_769)],
            },
        }),
    ];
    msgs.into_iter()
        .enumerate()
        .map(|(i, msg)| Repr {
            host: 7,
            seq: 1000 + i as u64,
            msg,
        })
        .collect()
}

/// Sign arbitrary bytes as a datagram (to build well-signed malformed input).
fn sign(mut body: Vec<u8>) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(KEY).unwrap();
    mac.update(&body);
    body.extend_from_slice(&mac.finalize().into_bytes());
    body
}

#[test]
fn a_report_has_the_documented_bytes() {
    let a = Authenticator::new(KEY);
    let d = a.encode(&Repr {
        host: 7,
        seq: 42,
        msg: Message::Report { dests: vec![1, 2] },
    });
    let want: &[u8] = &[
        b'X', b'C', 1, 3, // magic, version, type = report
        0, 0, 0, 7, // host
        0, 0, 0, 0, 0, 0, 0, 42, // seq
        0, 10, // payload length
        0, 2, 0, 0, 0, 1, 0, 0, 0, 2, // count, destinations
    ];
    assert_eq!(&d[..want.len()], want);
    assert_eq!(d.len(), want.len() + 32);
    assert_eq!(
        d,
        sign(want.to_vec()),
        "the tag is HMAC-SHA256 over everything before it"
    );
}

#[test]
fn every_message_round_trips() {
    let a = Authenticator::new(KEY);
    for r in all_messages() {
        let d = a.encode(&r);
        assert_eq!(d.len(), r.buffer_len());
        assert_eq!(a.decode(&d).unwrap(), r);
    }
}

#[test]
fn a_forged_message_is_rejected() {
    let a = Authenticator::new(KEY);
    let forger = Authenticator::new(b"not the shared key");
    for r in all_messages() {
        assert_eq!(a.decode(&forger.encode(&r)), Err(WireError::BadTag));
        // a single flipped bit anywhere is caught
        let good = a.encode(&r);
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x10;
            assert!(a.decode(&bad).is_err(), "bit flip at byte {i} accepted");
        }
    }
}

#[test]
fn a_replayed_or_stale_message_is_rejected() {
    let a = Authenticator::new(KEY);
    let mut guard = ReplayGuard::new();
    let r = |seq| Repr {
        host: 7,
        seq,
        msg: Message::Heartbeat,
    };
    let d = a.encode(&r(5));
    guard.check(&a.decode(&d).unwrap()).unwrap();
    assert_eq!(
        guard.check(&a.decode(&d).unwrap()),
        Err(WireError::Replay { host: 7, seq: 5 })
    );
    assert!(guard.check(&r(4)).is_err(), "older sequence numbers are stale");
    guard.check(&r(6)).unwrap();
    // other senders have their own sequence space
    guard
        .check(&Repr {
            host: 8,
            seq: 1,
            msg: Message::Join,
        })
        .unwrap();
}

#[test]
fn malformed_datagrams_of_every_type_are_rejected_without_a_panic() {
    let a = Authenticator::new(KEY);
    for r in all_messages() {
        let good = a.encode(&r);
        for n in 0..good.len() {
            assert!(a.decode(&good[..n]).is_err(), "truncated to {n} bytes accepted");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(a.decode(&longer).is_err());
    }
    // correctly signed but malformed: bad magic, version, type, payloads
    let header = |t: u8, len: u16| {
        let mut v = vec![b'X', b'C', 1, t, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1];
        v.extend_from_slice(&len.to_be_bytes());
        v
    };
    let mut bad_magic = header(1, 0);
    bad_magic[0] = b'Y';
    assert_eq!(a.decode(&sign(bad_magic)), Err(WireError::BadMagic));
    let mut bad_version = header(1, 0);
    bad_version[2] = 9;
    assert_eq!(a.decode(&sign(bad_version)), Err(WireError::BadVersion(9)));
    assert_eq!(a.decode(&sign(header(99, 0))), Err(WireError::UnknownType(99)));
    // payload length in the header disagrees with the datagram
    assert_eq!(a.decode(&sign(header(1, 5))), Err(WireError::BadLength));
    let cases: Vec<(u8, Vec<u8>)> = vec![
        (1, vec![0]),                                      // join with trailing bytes
        (3, vec![0, 3, 0, 0, 0, 1]),                       // report claims 3 destinations, carries 1
        (3, vec![0xff, 0xff]),                             // report count over the limit
        (5, vec![0, 0, 1]),                                // give-back destination cut short
        (4, vec![0, 0, 0, 1]),                             // directive cut after the host
        (4, [vec![0; 12], vec![7]].concat()),              // unknown directive kind
        (4, [vec![0; 12], vec![1], vec![0; 20]].concat()), // zero-length slice
        // a slice of 2^64 - 1 ns (found by the fuzzer: it overflowed the time conversion)
        (
            4,
            [vec![0; 12], vec![1], vec![0; 4], vec![0xff; 8], vec![0; 8]].concat(),
        ),
        (4, [vec![0; 12], vec![2, 0, 2], vec![0; 12]].concat()), // 2 rates, 1 present
    ];
    for (t, payload) in cases {
        let mut d = header(t, payload.len() as u16);
        d.extend_from_slice(&payload);
        let res = a.decode(&sign(d));
        assert!(
            matches!(res, Err(WireError::BadPayload(_))),
            "type {t} payload {payload:?}: {res:?}"
        );
    }
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    let a = Authenticator::new(KEY);
    let valid: Vec<Vec<u8>> = all_messages().iter().map(|r| a.encode(r)).collect();
    let mut rng = Rng::new(99);
    for i in 0..200_000u64 {
        let buf: Vec<u8> = if i % 2 == 0 {
            let n = rng.below(120) as usize;
            (0..n).map(|_| rng.next_u64() as u8).collect()
        } else {
            let mut b = valid[rng.below(valid.len() as u64) as usize].clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(b.len() as u64) as usize;
                b[at] = rng.next_u64() as u8;
            }
            b
        };
        // unauthenticated junk must be rejected; a panic fails the test
        let _ = a.decode(&buf);
        let _ = xco_core::wire::Packet::new_checked(&buf[..]).map(|p| Repr::parse(&p));
    }
}
