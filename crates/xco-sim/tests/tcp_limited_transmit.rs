//! Limited Transmit (RFC 3042, `tcp.limited_transmit`): the first two
//! duplicate ACKs each release one new segment, cwnd unchanged, so a window
//! too small to produce three duplicate ACKs still ends in fast retransmit.

use crate::support::{incast, sender_established};
use xco_sim::scenario::build;
use xco_sim::tcp::TcpConfig;

fn cfg(limited_transmit: bool, iw: u32) -> TcpConfig {
    TcpConfig {
        initial_cwnd_segments: iw,
        limited_transmit,
        ..TcpConfig::for_mtu(1500)
    }
}

#[test]
fn each_of_the_first_two_duplicate_acks_sends_one_new_segment() {
    let mut s = sender_established(cfg(true, 10));
    s.write(100_000_000);
    assert_eq!(s.drain().len(), 10);
    let mss = s.mss;
    s.ack(mss); // segment 1 arrived, segment 2 lost: the window slides (slow start grows it)
    s.drain();
    let cwnd = s.ep().win.cwnd;
    let next = s.ep().snd_max;
    s.ack(mss); // first duplicate
    assert_eq!(
        s.drain(),
        vec![(next, mss)],
        "one new segment, the next unsent one"
    );
    s.ack(mss); // second duplicate
    assert_eq!(s.drain(), vec![(next + mss, mss)]);
    assert_eq!(s.ep().win.cwnd, cwnd, "cwnd unchanged (RFC 3042 §2)");
    assert_eq!(s.retransmits(), 0);
    s.ack(mss); // third: fast retransmit, no more limited transmit
    let sent = s.drain();
    assert!(sent.contains(&(mss, mss)), "{sent:?}");
    assert!(s.ep().in_recovery);
}

#[test]
fn without_it_duplicate_acks_send_nothing_new() {
    let mut s = sender_established(cfg(false, 10));
    s.write(100_000_000);
    s.drain();
    let mss = s.mss;
    s.ack(mss);
    s.drain();
    s.ack(mss);
    s.ack(mss);
    assert!(s.drain().is_empty());
}

#[test]
fn a_window_of_three_recovers_by_fast_retransmit() {
    // three segments out, the first lost: two duplicate ACKs only, unless
    // limited transmit adds segments that bring the third (RFC 3042 §1)
    for lt in [false, true] {
        let mut s = sender_established(cfg(lt, 3));
        s.write(100_000_000);
        assert_eq!(s.drain().len(), 3);
        let mut dupacks = 2; // segments 2 and 3 arrive
        let mut sent_new = 0;
        for _ in 0..dupacks {
            s.ack(0);
            sent_new += s.drain().len();
        }
        // each new segment arrives above the hole and brings another duplicate
        while sent_new > 0 && dupacks < 3 {
            s.ack(0);
            dupacks += 1;
            sent_new -= 1;
        }
        let fast = s.ep().in_recovery;
        assert_eq!(fast, lt, "limited transmit {lt}: fast retransmit {fast}");
    }
}

#[test]
fn the_scenario_key_reaches_the_senders_and_defaults_to_off() {
    let base = incast(4, 1, "300KB", 200.0);
    let on = base.replace("[tcp]\n", "[tcp]\nlimited_transmit = true\n");
    assert_ne!(base, on, "the scenario has a [tcp] table");
    let cfg = |t: &str| build(t, None).unwrap().sim.stack.tcp.cfg.limited_transmit;
    assert!(!cfg(&base));
    assert!(cfg(&on));
}
