//! The control protocol: byte fixtures, round trips, who can sign what,
//! sessions and replay windows, and malformed input of every kind rejected
//! without a panic.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use xco_core::sched::{DemandEntry, Directive, DirectiveKind};
use xco_core::wire::{
    host_key, Accepted, AgentKeys, AgentSessions, Checked, ControllerKeys, ControllerSession, Echo, Message,
    RejectCounts, Repr, WireError, CONTROLLER_ID,
};
use xco_core::{Dur, Rng};

const MASTER: &[u8] = b"0123456789abcdef0123456789abcdef";
const HOSTS: [&str; 8] = ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"];

fn controller() -> ControllerKeys {
    ControllerKeys::new(MASTER, &HOSTS)
}

/// Host `h`'s keys, as `xco-daemon agent-key` hands them out.
fn agent(h: u32) -> AgentKeys {
    let c = controller();
    AgentKeys::new(h, &host_key(MASTER, HOSTS[h as usize]), &c.public_key()).unwrap()
}

fn agent_messages() -> Vec<Repr> {
    let msgs = vec![
        Message::Join,
        Message::Leave,
        Message::Heartbeat,
        Message::Report { dests: vec![] },
        Message::Report {
            dests: vec![1, 2, 70000],
        },
        Message::GiveBack { dest: 9, epoch: 4 },
        Message::Rejections(RejectCounts {
            auth: 1,
            replay: 2,
            malformed: 3,
            session: u64::MAX,
        }),
        Message::Confirm {
            run: 0xabc,
            challenge: 3,
            addr: [7; 18],
        },
        Message::Demand {
            entries: vec![],
            ungated_seq: 0,
        },
        Message::Demand {
            ungated_seq: u64::MAX,
            entries: vec![
                DemandEntry {
                    dest: 1,
                    offered_bytes: 90_000,
                    held_bytes: 3_000,
                    backlogged: true,
                },
                DemandEntry {
                    dest: 70000,
                    offered_bytes: u64::MAX,
                    held_bytes: 0,
                    backlogged: false,
                },
            ],
        },
    ];
    msgs.into_iter()
        .enumerate()
        .map(|(i, msg)| Repr {
            host: 7,
            run: 0xfeed,
            seq: 1000 + i as u64,
            msg,
        })
        .collect()
}

fn controller_messages() -> Vec<Repr> {
    let msgs = vec![
        Message::Directive(
            Directive {
                host: 3,
                epoch: 17,
                start_in: Dur::ZERO,
                kind: DirectiveKind::Slice {
                    dest: Some(5),
                    len: Dur::from_ms(2),
                    rate_bps: None,
                },
            },
            Echo {
                seq: 41,
                received_ns: 1_000,
                signed_ns: 1_730,
            },
        ),
        Message::Directive(
            Directive {
                host: 3,
                epoch: 18,
                start_in: Dur::from_us(480),
                kind: DirectiveKind::Slice {
                    dest: None,
                    len: Dur::from_ms(10),
                    rate_bps: Some(1_000_000_000),
                },
            },
            Echo::default(),
        ),
        Message::Directive(
            Directive {
                host: 4,
                epoch: 1,
                start_in: Dur::from_ms(1),
                kind: DirectiveKind::Rates {
                    rates: vec![(1, 200_000_000), (2, 769_230_769)],
                },
            },
            Echo {
                seq: u64::MAX,
                received_ns: 0,
                signed_ns: u64::MAX,
            },
        ),
        Message::Hello { host: 7, nonce: 99 },
        Message::Rejoin {
            host: 7,
            session: 0xfeed,
        },
        Message::Challenge {
            host: 7,
            nonce: 0xfeed,
            challenge: 3,
        },
        Message::Ungate {
            host: 7,
            dests: vec![],
            echo: Echo::default(),
        },
        Message::Ungate {
            host: 7,
            dests: vec![0, 2, 70000],
            echo: Echo {
                seq: 9,
                received_ns: 5,
                signed_ns: 5,
            },
        },
    ];
    msgs.into_iter()
        .enumerate()
        .map(|(i, msg)| Repr {
            host: CONTROLLER_ID,
            run: 0xabc,
            seq: 1 + i as u64,
            msg,
        })
        .collect()
}

/// MAC arbitrary bytes with host 1's key (to build well-authenticated malformed input).
fn sign(mut body: Vec<u8>) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(&host_key(MASTER, "h1")).unwrap();
    mac.update(&body);
    body.extend_from_slice(&mac.finalize().into_bytes());
    body
}

#[test]
fn a_report_has_the_documented_bytes() {
    let d = agent(1).encode(&Repr {
        host: 1,
        run: 0x0102,
        seq: 42,
        msg: Message::Report { dests: vec![1, 2] },
    });
    let want: &[u8] = &[
        b'X', b'C', 5, 3, // magic, version, type = report
        0, 0, 0, 1, // host
        0, 0, 0, 0, 0, 0, 1, 2, // session
        0, 0, 0, 0, 0, 0, 0, 42, // seq
        0, 10, // payload length
        0, 2, 0, 0, 0, 1, 0, 0, 0, 2, // count, destinations
    ];
    assert_eq!(&d[..want.len()], want);
    assert_eq!(d.len(), want.len() + 32);
    assert_eq!(
        d,
        sign(want.to_vec()),
        "the tag is HMAC-SHA256 under the host's key over everything before it"
    );
}

#[test]
fn a_demand_report_has_the_documented_bytes() {
    let d = agent(1).encode(&Repr {
        host: 1,
        run: 0x0102,
        seq: 42,
        msg: Message::Demand {
            entries: vec![DemandEntry {
                dest: 2,
                offered_bytes: 0x0304,
                held_bytes: 5,
                backlogged: true,
            }],
            ungated_seq: 0x0a0b,
        },
    });
    let want: &[u8] = &[
        b'X', b'C', 5, 14, // magic, version, type = demand
        0, 0, 0, 1, // host
        0, 0, 0, 0, 0, 0, 1, 2, // session
        0, 0, 0, 0, 0, 0, 0, 42, // seq
        0, 31, // payload length
        0, 0, 0, 0, 0, 0, 0x0a,
        0x0b, // the ungated set applied: the controller's datagram 0x0a0b (version 5)
        0, 1, // count
        0, 0, 0, 2, // destination
        0, 0, 0, 0, 0, 0, 3, 4, // bytes offered over the window
        0, 0, 0, 0, 0, 0, 0, 5, // bytes held
        1, // in the backlog set
    ];
    assert_eq!(d, sign(want.to_vec()));
}

#[test]
fn a_directive_carries_its_start_then_its_echo_after_the_epoch() {
    let c = controller();
    let d = c.encode(&Repr {
        host: CONTROLLER_ID,
        run: 1,
        seq: 2,
        msg: Message::Directive(
            Directive {
                host: 3,
                epoch: 9,
                start_in: Dur::from_us(480),
                kind: DirectiveKind::Slice {
                    dest: Some(5),
                    len: Dur::from_ms(2),
                    rate_bps: None,
                },
            },
            Echo {
                seq: 0x1234,
                received_ns: 0x0100,
                signed_ns: 0x0200,
            },
        ),
    });
    let want: &[u8] = &[
        b'X', b'C', 5, 4, // magic, version 5, type = directive
        0xff, 0xff, 0xff, 0xff, // the controller
        0, 0, 0, 0, 0, 0, 0, 1, // run
        0, 0, 0, 0, 0, 0, 0, 2, // seq
        0, 65, // payload length
        0, 0, 0, 3, // host
        0, 0, 0, 0, 0, 0, 0, 9, // epoch
        0, 0, 0, 0, 0, 0x07, 0x53, 0x00, // start: 480,000 ns after it is sent
        0, 0, 0, 0, 0, 0, 0x12, 0x34, // echo: the agent's message 0x1234,
        0, 0, 0, 0, 0, 0, 0x01, 0x00, // received at 256 ns on the controller's clock,
        0, 0, 0, 0, 0, 0, 0x02, 0x00, // the directive signed at 512 ns
        1, 0, 0, 0, 5, // slice to host 5
        0, 0, 0, 0, 0, 0x1e, 0x84, 0x80, // 2,000,000 ns
        0, 0, 0, 0, 0, 0, 0, 0, // full line rate
    ];
    assert_eq!(&d[..want.len()], want);
    assert_eq!(d.len(), want.len() + 64, "an Ed25519 signature follows");
}

/// A version-2 slice payload with a zero start field inserted after the epoch.
fn p_start(v2: &[u8]) -> Vec<u8> {
    [&v2[..12], &[0u8; 8][..], &v2[12..]].concat()
}

#[test]
fn a_version_2_directive_has_no_start_and_applies_on_receipt() {
    use ed25519_dalek::{Signer, SigningKey};
    let seed: [u8; 32] = {
        let mut m = Hmac::<Sha256>::new_from_slice(MASTER).unwrap();
        m.update(b"xco controller signing key v2");
        m.finalize().into_bytes().into()
    };
    let key = SigningKey::from_bytes(&seed);
    let signed = |ver: u8, payload: &[u8]| {
        let mut v = vec![b'X', b'C', ver, 4, 0xff, 0xff, 0xff, 0xff];
        v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
        v.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        v.extend_from_slice(payload);
        let sig = key.sign(&v).to_bytes();
        v.extend_from_slice(&sig);
        v
    };
    let slice = [vec![0, 0, 0, 1], vec![0; 7], vec![3], vec![1, 0, 0, 0, 2]].concat();
    let slice = [slice, 2_000_000u64.to_be_bytes().to_vec(), vec![0; 8]].concat();
    let r = agent(1).decode(&signed(2, &slice)).unwrap();
    let Message::Directive(d, echo) = r.msg else {
        panic!("{r:?}")
    };
    assert_eq!((d.epoch, d.start_in), (3, Dur::ZERO));
    assert_eq!(echo, Echo::default(), "no echo before version 5");
    // the same payload under version 3 lacks the start field: malformed
    assert!(matches!(
        agent(1).decode(&signed(3, &slice)),
        Err(WireError::BadPayload(_))
    ));
    // a start further than 7.5 s away is refused; 7.5 s is the bound
    let at = |ns: u64| {
        let p = [
            vec![0, 0, 0, 1],
            vec![0; 7],
            vec![3],
            ns.to_be_bytes().to_vec(),
            vec![1, 0, 0, 0, 2],
            2_000_000u64.to_be_bytes().to_vec(),
            vec![0; 8],
        ]
        .concat();
        agent(1).decode(&signed(3, &p))
    };
    assert!(matches!(at(7_500_000_001), Err(WireError::BadPayload(_))));
    assert!(matches!(at(u64::MAX), Err(WireError::BadPayload(_))));
    let Message::Directive(d, _) = at(7_500_000_000).unwrap().msg else {
        panic!()
    };
    assert_eq!(d.start_in, Dur::from_ms(7500));
    // version 4 has the start field as version 3 (it added types 12 and 13 and terms)
    assert!(agent(1).decode(&signed(4, &p_start(&slice))).is_ok());
    // version 5 adds the echo after the start: without it, malformed
    assert!(matches!(
        agent(1).decode(&signed(5, &p_start(&slice))),
        Err(WireError::BadPayload(_))
    ));
    let with_echo = |received_ns: u64, signed_ns: u64| {
        let v4 = p_start(&slice);
        let echo = [
            7u64.to_be_bytes(),
            received_ns.to_be_bytes(),
            signed_ns.to_be_bytes(),
        ]
        .concat();
        agent(1).decode(&signed(5, &[&v4[..20], &echo, &v4[20..]].concat()))
    };
    let Message::Directive(d, echo) = with_echo(10, u64::MAX).unwrap().msg else {
        panic!()
    };
    assert_eq!(
        (d.epoch, echo.seq, echo.received_ns, echo.signed_ns),
        (3, 7, 10, u64::MAX)
    );
    // signed before the echoed message arrived: malformed
    assert!(matches!(with_echo(11, 10), Err(WireError::BadPayload(_))));
    // and versions outside 2..=5 are not read
    assert!(matches!(
        agent(1).decode(&signed(6, &slice)),
        Err(WireError::BadVersion(6))
    ));
}

#[test]
fn every_message_round_trips() {
    let c = controller();
    for mut r in agent_messages() {
        r.host = 2;
        let d = agent(2).encode(&r);
        assert_eq!(d.len(), r.buffer_len());
        assert_eq!(c.decode(&d).unwrap(), r);
    }
    for r in controller_messages() {
        let d = c.encode(&r);
        assert_eq!(d.len(), r.buffer_len());
        assert_eq!(
            d.len(),
            26 + d[24..26].iter().fold(0, |a, &b| a * 256 + b as usize) + 64
        );
        for h in 0..8 {
            assert_eq!(
                agent(h).decode(&d).unwrap(),
                r,
                "any agent verifies the controller"
            );
        }
    }
}

#[test]
fn a_host_holding_only_its_own_key_cannot_forge_a_directive() {
    // host 2 is compromised: it has its own MAC key and the controller's public key
    let mine = host_key(MASTER, "h2");
    let c = controller();
    for r in controller_messages() {
        let genuine = c.encode(&r);
        // a MAC under its own key in place of the signature (same length as a signature)
        let mut forged = genuine.clone();
        let body = forged.len() - 64;
        let mut mac = Hmac::<Sha256>::new_from_slice(&mine).unwrap();
        mac.update(&forged[..body]);
        let tag = mac.finalize().into_bytes();
        forged[body..body + 32].copy_from_slice(&tag);
        forged[body + 32..].copy_from_slice(&tag);
        for h in [0, 1, 3] {
            assert_eq!(agent(h).decode(&forged), Err(WireError::BadTag));
        }
        // a signature made with any other Ed25519 key (e.g. one derived from its own key)
        let other = ControllerKeys::new(&mine, &HOSTS);
        assert_eq!(agent(0).decode(&other.encode(&r)), Err(WireError::BadTag));
        // and a far-future sequence number changes nothing: still not signed
        let mut far = genuine.clone();
        far[16..24].copy_from_slice(&u64::MAX.to_be_bytes());
        assert_eq!(agent(0).decode(&far), Err(WireError::BadTag));
        // one flipped bit anywhere in a genuine directive is caught
        for i in 0..genuine.len() {
            let mut bad = genuine.clone();
            bad[i] ^= 0x10;
            assert!(agent(0).decode(&bad).is_err(), "bit flip at byte {i} accepted");
        }
    }
}

#[test]
fn a_host_cannot_speak_for_another_host() {
    let c = controller();
    for r in agent_messages() {
        // host 2 writes a message as host 5 with its own key
        let as_two = Repr { host: 2, ..r.clone() };
        let mut d = agent(2).encode(&as_two);
        d[4..8].copy_from_slice(&5u32.to_be_bytes());
        assert_eq!(c.decode(&d), Err(WireError::BadTag));
        let good = agent(5).encode(&Repr { host: 5, ..r });
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x10;
            assert!(c.decode(&bad).is_err(), "bit flip at byte {i} accepted");
        }
    }
    // an agent's message at an agent, a controller's at the controller: misdirected
    let a = agent_messages().remove(0);
    assert_eq!(agent(7).decode(&agent(7).encode(&a)), Err(WireError::Misdirected));
    let d = c.encode(&controller_messages()[0]);
    assert_eq!(c.decode(&d), Err(WireError::Misdirected));
}

#[test]
fn an_id_outside_the_topology_is_rejected_before_any_state() {
    let c = ControllerKeys::new(MASTER, &HOSTS[..2]);
    let d = agent(5).encode(&Repr {
        host: 5,
        run: 1,
        seq: 1,
        msg: Message::Join,
    });
    assert_eq!(c.decode(&d), Err(WireError::UnknownSender(5)));
    let mut sessions = AgentSessions::new(2, 1);
    for host in [2, 1000, u32::MAX - 1] {
        let r = Repr {
            host,
            run: 1,
            seq: 1,
            msg: Message::Join,
        };
        assert_eq!(sessions.check(&r), Err(WireError::UnknownSender(host)));
    }
    assert_eq!(sessions.capacity(), 2, "no slot was added for an unknown id");
}

fn hello(run: u64, seq: u64, host: u32, nonce: u64) -> Repr {
    Repr {
        host: CONTROLLER_ID,
        run,
        seq,
        msg: Message::Hello { host, nonce },
    }
}

fn directive(run: u64, seq: u64) -> Repr {
    Repr {
        host: CONTROLLER_ID,
        run,
        seq,
        msg: Message::Directive(
            Directive {
                host: 1,
                epoch: seq,
                start_in: Dur::ZERO,
                kind: DirectiveKind::Slice {
                    dest: Some(2),
                    len: Dur::from_ms(2),
                    rate_bps: None,
                },
            },
            Echo::default(),
        ),
    }
}

#[test]
fn an_agent_obeys_a_run_only_after_a_hello_to_its_own_join() {
    let mut s = ControllerSession::new(1);
    assert!(matches!(
        s.accept(&directive(7, 1)),
        Err(WireError::Session { .. })
    ));
    assert!(s.accept(&hello(7, 1, 1, 42)).is_err(), "no join sent yet");
    s.joining(42);
    assert!(s.accept(&hello(7, 1, 1, 41)).is_err(), "another nonce");
    assert!(s.accept(&hello(7, 1, 2, 42)).is_err(), "a hello to another host");
    assert_eq!(s.accept(&hello(7, 2, 1, 42)), Ok(Accepted::NewRun { run: 7 }));
    assert_eq!(s.run(), Some(7));
    assert!(s.accept(&hello(7, 3, 1, 42)).is_err(), "a nonce answers once");
    assert_eq!(s.accept(&directive(7, 3)), Ok(Accepted::InRun));
    assert_eq!(
        s.accept(&directive(7, 3)),
        Err(WireError::Replay {
            host: CONTROLLER_ID,
            seq: 3
        })
    );
    assert!(
        s.accept(&directive(7, 2)).is_err(),
        "older sequence numbers are stale"
    );
    assert_eq!(s.accept(&directive(7, 4)), Ok(Accepted::InRun));
}

#[test]
fn an_answer_to_the_join_before_the_latest_is_taken_once_and_no_older() {
    // an agent whose joins wait in its own egress queue longer than its join
    // timeout replaces each nonce before the answer to it arrives (sim-network
    // seed 912): the answer to the join just replaced is taken too, and that
    // join's nonce is the session again
    let mut s = ControllerSession::new(1);
    s.joining(41);
    s.joining(42);
    s.joining(43);
    assert!(s.accept(&hello(7, 1, 1, 41)).is_err(), "two joins back: refused");
    assert_eq!(s.accept(&hello(7, 2, 1, 42)), Ok(Accepted::NewRun { run: 7 }));
    assert_eq!(s.session(), Some(42), "the answered join's nonce");
    assert!(!s.is_joining());
    assert!(
        s.accept(&hello(7, 3, 1, 43)).is_err(),
        "the latest join's answer comes too late"
    );
    assert!(s.accept(&hello(7, 4, 1, 42)).is_err(), "and a nonce answers once");
    // a join that follows an answered one has no previous to take
    s.joining(44);
    assert!(s.accept(&hello(7, 5, 1, 42)).is_err());
    assert_eq!(s.accept(&hello(7, 6, 1, 44)), Ok(Accepted::NewRun { run: 7 }));
}

#[test]
fn a_restarted_controller_is_obeyed_after_one_hello_whatever_its_numbers() {
    // the old run had reached a huge sequence number (e.g. an hour of
    // directives, or one far-future number); the restarted controller (its
    // clock an hour back, or not: nothing here reads a clock) numbers from 1
    let mut s = ControllerSession::new(1);
    s.joining(5);
    s.accept(&hello(100, 1, 1, 5)).unwrap();
    s.accept(&directive(100, u64::MAX - 1)).unwrap();
    // the new run's directive is not obeyed yet: it tells the agent to join
    assert_eq!(
        s.accept(&directive(200, 1)),
        Err(WireError::Session {
            host: CONTROLLER_ID,
            run: 200
        })
    );
    s.joining(6);
    // an old hello (of the old run, or to the old nonce) replayed by anyone is no use
    assert!(s.accept(&hello(100, 1, 1, 5)).is_err());
    assert!(s.accept(&hello(300, 9, 1, 5)).is_err());
    assert_eq!(s.accept(&hello(200, 2, 1, 6)), Ok(Accepted::NewRun { run: 200 }));
    assert_eq!(s.accept(&directive(200, 3)), Ok(Accepted::InRun));
    // the old run is over: its directives are rejected, however high their numbers
    assert!(s.accept(&directive(100, u64::MAX)).is_err());
}

#[test]
fn the_controller_accepts_a_host_only_in_the_session_of_its_latest_confirm() {
    let run = 0x77;
    let mut s = AgentSessions::new(4, run);
    let m = |session, seq, msg| Repr {
        host: 3,
        run: session,
        seq,
        msg,
    };
    assert!(matches!(
        s.check(&m(9, 1, Message::Heartbeat)),
        Err(WireError::Session { host: 3, run: 9 })
    ));
    // a join changes nothing: it is answered with a challenge
    assert_eq!(s.check(&m(9, 1, Message::Join)), Ok(Checked::Join));
    assert!(
        s.check(&m(9, 2, Message::Heartbeat)).is_err(),
        "no session before the confirm"
    );
    let c = s.issue();
    let confirm = |session, seq, run, challenge| {
        m(
            session,
            seq,
            Message::Confirm {
                run,
                challenge,
                addr: [0; 18],
            },
        )
    };
    assert!(
        s.check(&confirm(9, 2, run + 1, c)).is_err(),
        "a confirm to another run"
    );
    assert!(
        s.check(&confirm(9, 2, run, c + 1)).is_err(),
        "a challenge never issued"
    );
    assert_eq!(s.check(&confirm(9, 2, run, c)), Ok(Checked::Confirmed));
    assert_eq!(s.session(3), Some(9));
    s.check(&m(9, 3, Message::Heartbeat)).unwrap();
    assert_eq!(
        s.check(&m(9, 3, Message::Heartbeat)),
        Err(WireError::Replay { host: 3, seq: 3 })
    );
    // the agent restarted: a new nonce, its numbers from 1 again
    assert_eq!(s.check(&m(10, 1, Message::Join)), Ok(Checked::Join));
    let c2 = s.issue();
    // the old confirm, replayed, moves nothing (its challenge is not newer)
    assert!(matches!(
        s.check(&confirm(9, 2, run, c)),
        Err(WireError::Replay { .. })
    ));
    assert_eq!(s.session(3), Some(9));
    assert_eq!(s.check(&confirm(10, 2, run, c2)), Ok(Checked::Confirmed));
    assert!(
        s.check(&m(9, 4, Message::Heartbeat)).is_err(),
        "the old session is over"
    );
    s.check(&m(10, 3, Message::Report { dests: vec![] })).unwrap();
    assert!(
        s.check(&confirm(10, 4, run, c2)).is_err(),
        "a confirm counts once"
    );
    s.forget(3);
    assert!(s.check(&m(10, 5, Message::Heartbeat)).is_err());
}

#[test]
fn an_agent_adopts_a_run_from_a_challenge_and_rejoins_only_when_asked_about_its_session() {
    let mut s = ControllerSession::new(1);
    s.joining(42);
    let challenge = |run, seq, nonce| Repr {
        host: CONTROLLER_ID,
        run,
        seq,
        msg: Message::Challenge {
            host: 1,
            nonce,
            challenge: 5,
        },
    };
    let rejoin = |run, seq, session| Repr {
        host: CONTROLLER_ID,
        run,
        seq,
        msg: Message::Rejoin { host: 1, session },
    };
    assert!(s.accept(&challenge(7, 1, 41)).is_err(), "another nonce");
    assert_eq!(
        s.accept(&challenge(7, 2, 42)),
        Ok(Accepted::Challenge { run: 7, challenge: 5 })
    );
    assert!(!s.is_joining());
    assert!(s.accept(&challenge(7, 3, 42)).is_err(), "a nonce answers once");
    // a rejoin request about another session (an old one, replayed) costs nothing
    assert!(s.accept(&rejoin(8, 1, 41)).is_err());
    // any run may ask about the current session (a restarted controller), once
    assert_eq!(s.accept(&rejoin(8, 1, 42)), Ok(Accepted::Rejoin));
    assert!(s.accept(&rejoin(8, 2, 42)).is_err(), "the same request again");
    // of the obeyed run, a replayed request is a replay
    s.joining(43);
    s.accept(&challenge(7, 10, 43)).unwrap();
    assert!(matches!(
        s.accept(&rejoin(7, 9, 43)),
        Err(WireError::Replay { .. })
    ));
    assert_eq!(s.accept(&rejoin(7, 11, 43)), Ok(Accepted::Rejoin));
}

#[test]
fn malformed_datagrams_of_every_type_are_rejected_without_a_panic() {
    let c = controller();
    let a = agent(1);
    for r in agent_messages() {
        let good = agent(7).encode(&r);
        for n in 0..good.len() {
            assert!(c.decode(&good[..n]).is_err(), "truncated to {n} bytes accepted");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(c.decode(&longer).is_err());
    }
    for r in controller_messages() {
        let good = c.encode(&r);
        for n in 0..good.len() {
            assert!(a.decode(&good[..n]).is_err(), "truncated to {n} bytes accepted");
        }
    }
    // correctly authenticated (host 1) but malformed: bad magic, version, type, payloads
    let header = |t: u8, len: u16| {
        let mut v = vec![b'X', b'C', 2, t, 0, 0, 0, 1];
        v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
        v.extend_from_slice(&len.to_be_bytes());
        v
    };
    let mut bad_magic = header(1, 0);
    bad_magic[0] = b'Y';
    assert_eq!(c.decode(&sign(bad_magic)), Err(WireError::BadMagic));
    let mut bad_version = header(1, 0);
    bad_version[2] = 1;
    assert_eq!(c.decode(&sign(bad_version)), Err(WireError::BadVersion(1)));
    assert_eq!(c.decode(&sign(header(99, 0))), Err(WireError::UnknownType(99)));
    // payload length in the header disagrees with the datagram
    assert_eq!(c.decode(&sign(header(1, 5))), Err(WireError::BadLength));
    let cases: Vec<(u8, Vec<u8>)> = vec![
        (1, vec![0]),                 // join with trailing bytes
        (3, vec![0, 3, 0, 0, 0, 1]),  // report claims 3 destinations, carries 1
        (3, vec![0xff, 0xff]),        // report count over the limit
        (5, vec![0, 0, 1]),           // give-back destination cut short
        (9, vec![0; 31]),             // rejection counts cut short
        (14, vec![0, 2, 0, 0, 0, 1]), // demand claims 2 entries, carries part of 1
        // demand entry with a flags byte other than 0 or 1
        (
            14,
            [&[0u8, 1][..], &[0, 0, 0, 1], &[0; 8], &[0; 8], &[2]].concat(),
        ),
        (14, vec![0xff, 0xff]), // demand count over the limit
    ];
    for (t, payload) in cases {
        let mut d = header(t, payload.len() as u16);
        d.extend_from_slice(&payload);
        let res = c.decode(&sign(d));
        assert!(
            matches!(res, Err(WireError::BadPayload(_))),
            "type {t} payload {payload:?}: {res:?}"
        );
    }
}

#[test]
fn malformed_directives_signed_by_the_controller_are_rejected() {
    // the controller's own key signs raw bytes through a copy of its seed derivation
    use ed25519_dalek::{Signer, SigningKey};
    let seed: [u8; 32] = {
        let mut m = Hmac::<Sha256>::new_from_slice(MASTER).unwrap();
        m.update(b"xco controller signing key v2");
        m.finalize().into_bytes().into()
    };
    let key = SigningKey::from_bytes(&seed);
    assert_eq!(
        key.verifying_key().to_bytes(),
        controller().public_key(),
        "documented derivation"
    );
    let signed = |t: u8, host: u32, payload: Vec<u8>| {
        let mut v = vec![b'X', b'C', 2, t];
        v.extend_from_slice(&host.to_be_bytes());
        v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
        v.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        v.extend_from_slice(&payload);
        let sig = key.sign(&v).to_bytes();
        v.extend_from_slice(&sig);
        v
    };
    let a = agent(0);
    let cases: Vec<(u8, Vec<u8>)> = vec![
        (4, vec![0, 0, 0, 1]),                             // directive cut after the host
        (4, [vec![0; 12], vec![7]].concat()),              // unknown directive kind
        (4, [vec![0; 12], vec![1], vec![0; 20]].concat()), // zero-length slice
        // a slice of 2^64 - 1 ns (found by the fuzzer: it overflowed the time conversion)
        (
            4,
            [vec![0; 12], vec![1], vec![0; 4], vec![0xff; 8], vec![0; 8]].concat(),
        ),
        (4, [vec![0; 12], vec![2, 0, 2], vec![0; 12]].concat()), // 2 rates, 1 present
        (7, vec![0; 11]),                                        // hello cut short
        (8, vec![0; 5]),                                         // rejoin with a trailing byte
    ];
    for (t, payload) in cases {
        let res = a.decode(&signed(t, CONTROLLER_ID, payload.clone()));
        assert!(
            matches!(res, Err(WireError::BadPayload(_))),
            "type {t} payload {payload:?}: {res:?}"
        );
    }
    // a well-formed hello under an agent's id: the controller never sends that
    let res = a.decode(&signed(7, 3, vec![0; 12]));
    assert!(matches!(res, Err(WireError::BadPayload(_))), "{res:?}");
    // and the same bytes verify (the fixture is right)
    assert!(a.decode(&signed(7, CONTROLLER_ID, vec![0; 12])).is_ok());
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    let c = controller();
    let a = agent(7);
    let mut valid: Vec<Vec<u8>> = agent_messages().iter().map(|r| a.encode(r)).collect();
    valid.extend(controller_messages().iter().map(|r| c.encode(r)));
    let mut sessions = AgentSessions::new(8, 1);
    let mut session = ControllerSession::new(7);
    session.joining(99);
    let mut rng = Rng::new(99);
    for i in 0..100_000u64 {
        let buf: Vec<u8> = if i % 2 == 0 {
            let n = rng.below(160) as usize;
            (0..n).map(|_| rng.next_u64() as u8).collect()
        } else {
            let mut b = valid[rng.below(valid.len() as u64) as usize].clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(b.len() as u64) as usize;
                b[at] = rng.next_u64() as u8;
            }
            b
        };
        // junk must be rejected; a panic fails the test
        if let Ok(r) = c.decode(&buf) {
            let _ = sessions.check(&r);
        }
        if let Ok(r) = a.decode(&buf) {
            let _ = session.accept(&r);
        }
        let _ = xco_core::wire::Packet::new_checked(&buf[..]).map(|p| Repr::parse(&p));
    }
}

#[test]
fn the_fuzz_corpus_seeds_of_the_challenge_round_are_valid_authenticated_messages() {
    // the fuzzer starts from these (fuzz/corpus/wire), made with its keys: they must reach
    // the session checks, not stop at the tag
    const FUZZ_MASTER: &[u8] = b"fuzz master secret, 32 bytes long";
    let c = ControllerKeys::new(FUZZ_MASTER, &["h0", "h1"]);
    let a = AgentKeys::new(1, &host_key(FUZZ_MASTER, "h1"), &c.public_key()).unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/wire");
    let read = |n: &str| std::fs::read(dir.join(n)).unwrap();
    let ch = a.decode(&read("v3-challenge")).unwrap();
    assert!(
        matches!(
            ch.msg,
            Message::Challenge {
                host: 1,
                nonce: 7,
                challenge: 1
            }
        ),
        "{ch:?}"
    );
    assert!(matches!(
        a.decode(&read("v3-rejoin")).unwrap().msg,
        Message::Rejoin { host: 1, session: 7 }
    ));
    let confirm = c.decode(&read("v3-confirm")).unwrap();
    assert!(
        matches!(
            confirm.msg,
            Message::Confirm {
                run: 0xabc,
                challenge: 1,
                ..
            }
        ),
        "{confirm:?}"
    );
    let gb = c.decode(&read("v3-giveback")).unwrap();
    assert_eq!(gb.msg, Message::GiveBack { dest: 0, epoch: 4 });
}

#[test]
fn joining_the_same_run_again_keeps_its_replay_window() {
    // the challenge to a rejoin was overtaken by a newer directive of the run: a duplicate
    // of that directive must not be obeyed again once the challenge arrives
    let mut s = ControllerSession::new(1);
    s.joining(42);
    s.accept(&hello(7, 1, 1, 42)).unwrap();
    s.joining(43);
    assert_eq!(s.accept(&directive(7, 9)), Ok(Accepted::InRun));
    assert_eq!(s.accept(&hello(7, 5, 1, 43)), Ok(Accepted::NewRun { run: 7 }));
    assert!(matches!(
        s.accept(&directive(7, 9)),
        Err(WireError::Replay { .. })
    ));
    assert_eq!(s.accept(&directive(7, 10)), Ok(Accepted::InRun));
}

#[test]
fn a_peer_beat_has_the_documented_bytes_and_only_the_peer_key_makes_one() {
    use xco_core::wire::{peer_key, run_of, PeerBeat};
    let key = peer_key(MASTER);
    let b = PeerBeat {
        run: run_of(5, 0xabcd),
        seq: 9,
        term: 6,
        active: true,
        ack: None,
    };
    let d = b.encode(&key);
    let want: &[u8] = &[
        b'X', b'C', 5, 12, // magic, version 5, type = peer beat
        0xff, 0xff, 0xff, 0xff, // a controller
        0, 0, 0, 5, 0, 0, 0xab, 0xcd, // run: term 5 in the high half
        0, 0, 0, 0, 0, 0, 0, 9, // seq
        0, 9, // payload length
        0, 0, 0, 0, 0, 0, 0, 6, // the highest term known
        1, // directs
    ];
    assert_eq!(&d[..want.len()], want);
    let tag = Hmac::<Sha256>::new_from_slice(&key)
        .unwrap()
        .chain_update(want)
        .finalize();
    assert_eq!(
        &d[want.len()..],
        &tag.into_bytes()[..],
        "HMAC-SHA256 under the peer key"
    );
    assert_eq!(PeerBeat::decode(&key, &d), Ok(b));
    // another key (a host's, or another master's) is refused; so is a beat at an agent
    assert_eq!(
        PeerBeat::decode(&peer_key(b"another master secret, 32 bytes!"), &d),
        Err(WireError::BadTag)
    );
    assert_eq!(agent(1).decode(&d).err(), Some(WireError::Misdirected));
    assert_eq!(controller().decode(&d).err(), Some(WireError::Misdirected));
    // an active flag other than 0 or 1 is malformed
    let mut bad = d.clone();
    bad[34] = 2;
    let t = Hmac::<Sha256>::new_from_slice(&key)
        .unwrap()
        .chain_update(&bad[..35])
        .finalize();
    bad[35..].copy_from_slice(&t.into_bytes());
    assert!(matches!(
        PeerBeat::decode(&key, &bad),
        Err(WireError::BadPayload(_))
    ));
}

#[test]
fn a_peer_beat_with_an_ack_carries_the_acked_run_and_sequence_number_after_the_flag() {
    use xco_core::wire::{peer_key, run_of, PeerBeat};
    let key = peer_key(MASTER);
    let b = PeerBeat {
        run: run_of(5, 0xabcd),
        seq: 9,
        term: 6,
        active: false,
        ack: Some((run_of(4, 0x1234), 77)),
    };
    let d = b.encode(&key);
    let want: &[u8] = &[
        b'X', b'C', 5, 12, // magic, version 5, type = peer beat
        0xff, 0xff, 0xff, 0xff, // a controller
        0, 0, 0, 5, 0, 0, 0xab, 0xcd, // run
        0, 0, 0, 0, 0, 0, 0, 9, // seq
        0, 25, // payload length: with the ack
        0, 0, 0, 0, 0, 0, 0, 6, // the highest term known
        0, // stands by
        0, 0, 0, 4, 0, 0, 0x12, 0x34, // the acked beat's run
        0, 0, 0, 0, 0, 0, 0, 77, // and sequence number
    ];
    assert_eq!(&d[..want.len()], want);
    assert_eq!(d.len(), want.len() + 32, "HMAC-SHA256 after the payload");
    assert_eq!(PeerBeat::decode(&key, &d), Ok(b));
    // a payload of another length is malformed
    let mut bad = d[..want.len() - 8].to_vec();
    bad[25] = 17;
    let t = Hmac::<Sha256>::new_from_slice(&key)
        .unwrap()
        .chain_update(&bad)
        .finalize();
    bad.extend_from_slice(&t.into_bytes());
    assert!(matches!(
        PeerBeat::decode(&key, &bad),
        Err(WireError::BadPayload(_))
    ));
}

#[test]
fn a_superseded_proof_carries_a_signed_datagram_the_controller_checks() {
    use xco_core::wire::{run_of, Superseded};
    let c = controller();
    let signed = c.encode(&hello(run_of(7, 1), 3, 2, 99));
    let s = Superseded {
        host: 2,
        session: 0x55,
        seq: 4,
        proof: signed.clone(),
    };
    let d = agent(2).encode_superseded(&s);
    assert_eq!(&d[..4], &[b'X', b'C', 5, 13]);
    assert_eq!(c.decode_superseded(&d), Ok(s.clone()));
    let inner = c.verify_signed(&signed).unwrap();
    assert_eq!(inner.run, run_of(7, 1));
    // host 3 cannot relay in host 2's name; a forged inner datagram fails the signature
    let mut other = agent(3).encode_superseded(&Superseded { host: 3, ..s.clone() });
    other[4..8].copy_from_slice(&2u32.to_be_bytes());
    assert_eq!(c.decode_superseded(&other), Err(WireError::BadTag));
    let mut forged = signed.clone();
    let n = forged.len();
    forged[n - 1] ^= 1;
    assert_eq!(c.verify_signed(&forged).err(), Some(WireError::BadTag));
    // the ordinary agent decoder does not take a proof for a message
    assert_eq!(c.decode(&d).err(), Some(WireError::Misdirected));
}

#[test]
fn the_fuzz_corpus_seeds_of_version_4_are_valid_authenticated_messages() {
    // fuzz/corpus/wire/v4-*: a peer beat and a superseded proof under the fuzzer's keys
    use xco_core::wire::{peer_key, run_of, PeerBeat};
    const FUZZ_MASTER: &[u8] = b"fuzz master secret, 32 bytes long";
    let c = ControllerKeys::new(FUZZ_MASTER, &["h0", "h1"]);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/wire");
    let read = |n: &str| std::fs::read(dir.join(n)).unwrap();
    let b = PeerBeat::decode(&peer_key(FUZZ_MASTER), &read("v4-peer")).unwrap();
    assert_eq!((b.run, b.seq, b.term, b.active), (run_of(5, 0xabcd), 9, 6, true));
    let s = c.decode_superseded(&read("v4-superseded")).unwrap();
    assert_eq!(s.host, 1);
    let inner = c.verify_signed(&s.proof).unwrap();
    assert_eq!(inner.run, run_of(7, 1));
    assert!(matches!(inner.msg, Message::Rejoin { host: 1, session: 7 }));
}

#[test]
fn the_fuzz_corpus_seeds_of_version_5_are_valid_authenticated_messages() {
    // fuzz/corpus/wire/v5-*: a slice and an ungated set with their echoes, and a
    // demand report stating its ungated set, under the fuzzer's keys
    const FUZZ_MASTER: &[u8] = b"fuzz master secret, 32 bytes long";
    let c = ControllerKeys::new(FUZZ_MASTER, &["h0", "h1"]);
    let a = AgentKeys::new(1, &host_key(FUZZ_MASTER, "h1"), &c.public_key()).unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/wire");
    let read = |n: &str| std::fs::read(dir.join(n)).unwrap();
    for name in ["v5-slice-echo", "v5-ungate-echo", "v5-demand-ungated"] {
        assert_eq!(read(name)[2], 5, "{name} is of version 5");
    }
    let Message::Directive(d, echo) = a.decode(&read("v5-slice-echo")).unwrap().msg else {
        panic!("a directive")
    };
    assert_eq!((d.host, d.epoch), (1, 3));
    assert_eq!(
        echo,
        Echo {
            seq: 12,
            received_ns: 1_000_000,
            signed_ns: 1_700_000
        }
    );
    let Message::Ungate { dests, echo, .. } = a.decode(&read("v5-ungate-echo")).unwrap().msg else {
        panic!("an ungated set")
    };
    assert_eq!((dests, echo.seq), (vec![0], 13));
    let Message::Demand { entries, ungated_seq } = c.decode(&read("v5-demand-ungated")).unwrap().msg else {
        panic!("a demand report")
    };
    assert_eq!((entries.len(), ungated_seq), (1, 6));
}

#[test]
fn keyed_mode_tags_controller_messages_in_the_same_bytes_and_is_no_signature() {
    use xco_core::wire::keyed_controller_key;
    let keyed = ControllerKeys::keyed(MASTER, &HOSTS);
    let keyed_agent = AgentKeys::keyed(1, &host_key(MASTER, HOSTS[1]), &keyed_controller_key(MASTER));
    for m in controller_messages() {
        let signed = controller().encode(&m);
        let tagged = keyed.encode(&m);
        assert_eq!(signed.len(), tagged.len(), "the same datagram size: {m:?}");
        assert_eq!(keyed_agent.decode(&tagged).unwrap(), m);
        assert_eq!(keyed.verify_signed(&tagged).unwrap(), m);
        // a keyed tag is not a signature, nor a signature a keyed tag
        assert_eq!(agent(1).decode(&tagged), Err(WireError::BadTag));
        assert_eq!(keyed_agent.decode(&signed), Err(WireError::BadTag));
        assert_eq!(controller().verify_signed(&tagged), Err(WireError::BadTag));
    }
    // the agents' own messages are MAC'd as ever: the keyed controller reads them
    let d = agent(7).encode(&agent_messages()[0]);
    assert_eq!(keyed.decode(&d), controller().decode(&d));
    // another master's keyed tag is refused
    let other = ControllerKeys::keyed(b"fedcba9876543210fedcba9876543210", &HOSTS);
    assert_eq!(
        keyed_agent.decode(&other.encode(&directive(1, 1))),
        Err(WireError::BadTag)
    );
}
