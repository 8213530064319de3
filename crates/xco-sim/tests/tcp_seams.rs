//! The TCP seams: a congestion control plugged in from outside sees the ACK
//! sample (RTT, ECE, bytes) and the ECN echo event; the receive-window
//! policy limits what a sender has in flight; the pacing hook holds segments
//! back until its time.

use crate::support::sender_established;
use std::sync::{Arc, Mutex};
use xco_core::{Dur, Time};
use xco_sim::net::packet::{Packet, PktKind};
use xco_sim::net::qdisc::{Arrival, ArrivalHook, Qdisc, Verdict};
use xco_sim::net::Net;
use xco_sim::scenario::build;
use xco_sim::sim::Sim;
use xco_sim::tcp::cc::{AckSample, CongestionControl, CongestionEvent, EventSample, Window};
use xco_sim::tcp::congestion::Cc;
use xco_sim::tcp::pacing::{Pacer, PacingPolicy};
use xco_sim::tcp::rcv_window::RcvWindow;
use xco_sim::tcp::TcpConfig;

/// One 1 MB transfer h0 -> h1 over a star of 10 us links.
use crate::support::TRANSFER_1MB as TRANSFER;

fn transfer() -> Sim {
    build(TRANSFER, None).unwrap().sim
}

fn port(net: &Net, from: &str, to: &str) -> u32 {
    net.port_between(net.node(from).unwrap(), net.node(to).unwrap())
        .unwrap()
}

/// Drop-tail at a large limit that hands every arrival to a closure.
struct Watch<F>(F);

impl<F: FnMut(&Arrival, &mut Packet) -> Verdict + Send> ArrivalHook for Watch<F> {
    fn on_arrival(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict {
        (self.0)(a, pkt)
    }
    fn limit_bytes(&self) -> u64 {
        1 << 30
    }
}

fn watch<F: FnMut(&Arrival, &mut Packet) -> Verdict + Send + 'static>(f: F) -> Qdisc {
    Qdisc::Fifo(Box::new(Watch(f)))
}

/// What the recording congestion control saw.
#[derive(Default)]
struct Seen {
    acks: Vec<AckSample>,
    events: Vec<CongestionEvent>,
}

/// A fixed window that records its inputs.
struct Recorder(Arc<Mutex<Seen>>);

impl CongestionControl for Recorder {
    fn on_ack(&mut self, _w: &mut Window, s: &AckSample) {
        self.0.lock().unwrap().acks.push(*s);
    }
    fn on_congestion(&mut self, _w: &mut Window, ev: CongestionEvent, _s: &EventSample) {
        self.0.lock().unwrap().events.push(ev);
    }
}

#[test]
fn a_plugged_in_congestion_control_sees_rtt_samples_ece_and_the_ecn_echo() {
    let mut sim = transfer();
    sim.stack.tcp.cfg.ecn = true;
    // the switch marks every 20th ECN-capable data segment
    let to_rcv = port(&sim.cx.net, "s0", "h1");
    let mut ect = 0;
    let marker = watch(move |_, p| {
        if p.kind == PktKind::Tcp && p.payload_bytes > 0 && p.is_ect() {
            ect += 1;
            if ect % 20 == 0 {
                return Verdict::AdmitMarked;
            }
        }
        Verdict::Admit
    });
    sim.cx.net.set_qdisc(to_rcv, marker).unwrap();
    // start the app (it opens the connection and sends its SYN), then plug in
    sim.run_until(Time::ZERO).unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let client = 0;
    sim.tcp.eps[client].set_congestion_control(Cc::Custom(Box::new(Recorder(seen.clone()))));
    sim.run().unwrap();
    let seen = seen.lock().unwrap();
    let acked: u64 = seen.acks.iter().map(|s| s.bytes_acked).sum();
    let una = sim.tcp.eps[client].snd_una;
    assert_eq!(acked, una, "every acknowledged byte passes through the sample");
    assert!(
        una > 900_000,
        "the run stops when the data arrived, before the last ACKs"
    );
    assert!(seen.acks.windows(2).all(|w| w[0].now <= w[1].now));
    // four 10 us links there and back: every RTT at least 40 us
    let rtts: Vec<Dur> = seen.acks.iter().filter_map(|s| s.rtt_sample).collect();
    assert_eq!(rtts.len(), seen.acks.len(), "timestamps give every ACK a sample");
    assert!(
        rtts.iter()
            .all(|&r| r >= Dur::from_us(40) && r < Dur::from_ms(10)),
        "{rtts:?}"
    );
    let ece = seen.acks.iter().filter(|s| s.ece).count();
    assert!(ece > 0, "marked segments come back as ECE in the sample");
    assert!(seen.acks.iter().any(|s| !s.ece));
    let echoes = seen
        .events
        .iter()
        .filter(|&&e| e == CongestionEvent::EcnEcho)
        .count();
    assert!(
        echoes > 0 && echoes <= ece,
        "EcnEcho at most once per ECE ACK: {echoes} of {ece}"
    );
    assert!(
        seen.events.iter().all(|&e| e == CongestionEvent::EcnEcho),
        "no loss here"
    );
}

#[test]
fn newreno_halves_its_window_on_an_ecn_echo() {
    // the same marks against NewReno: each echo leaves ssthresh finite
    let mut sim = transfer();
    sim.stack.tcp.cfg.ecn = true;
    let to_rcv = port(&sim.cx.net, "s0", "h1");
    let mut ect = 0;
    sim.cx
        .net
        .set_qdisc(
            to_rcv,
            watch(move |_, p| {
                ect += u32::from(p.payload_bytes > 0 && p.is_ect());
                if p.payload_bytes > 0 && ect == 30 {
                    Verdict::AdmitMarked
                } else {
                    Verdict::Admit
                }
            }),
        )
        .unwrap();
    sim.run().unwrap();
    let ep = &sim.tcp.eps[0];
    assert_eq!(ep.ecn.cwr_sent, 1);
    assert!(
        ep.win.ssthresh < u64::MAX / 4,
        "the echo set ssthresh: {:?}",
        ep.win
    );
    let f = &sim.cx.net.flows[ep.tx_flow as usize];
    assert_eq!(
        (f.fast_retransmits, f.timeouts),
        (0, 0),
        "no loss: the cut came from ECN"
    );
}

#[test]
fn a_clamped_receive_window_limits_the_senders_flight() {
    let mut sim = transfer();
    let mss = sim.stack.tcp.cfg.mss_bytes as u64;
    let clamp = 4 * mss;
    sim.stack.tcp.cfg.rcv_window = RcvWindow::Clamp { max_bytes: clamp };
    // one log, in time order: data leaving h0 (end of segment) and ACKs leaving h1
    #[derive(Clone, Copy, Debug)]
    enum Seg {
        Data { end: u64 },
        Ack { ack: u64, wnd: u32 },
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let (l1, l2) = (log.clone(), log.clone());
    let net = &mut sim.cx.net;
    let (snd_nic, rcv_nic) = (port(net, "h0", "s0"), port(net, "h1", "s0"));
    net.set_qdisc(
        snd_nic,
        watch(move |_, p| {
            if p.payload_bytes > 0 {
                let end = p.seq + p.payload_bytes as u64;
                l1.lock().unwrap().push(Seg::Data { end });
            }
            Verdict::Admit
        }),
    )
    .unwrap();
    net.set_qdisc(
        rcv_nic,
        watch(move |_, p| {
            l2.lock().unwrap().push(Seg::Ack {
                ack: p.ack,
                wnd: p.wnd,
            });
            Verdict::Admit
        }),
    )
    .unwrap();
    sim.run().unwrap();
    let log = log.lock().unwrap();
    let mut acked = 0;
    let mut data = 0;
    for s in log.iter() {
        match *s {
            Seg::Ack { ack, wnd } => {
                assert!(wnd as u64 <= clamp, "the policy sets the window: {wnd}");
                acked = acked.max(ack);
            }
            Seg::Data { end } => {
                data += 1;
                assert!(
                    end <= acked + clamp,
                    "segment ending at {end} beyond the window ({acked} + {clamp})"
                );
            }
        }
    }
    assert!(data >= 1_000_000 / mss as usize, "the transfer ran");
}

/// At most one segment per `gap`.
struct Gap {
    gap: Dur,
    next: Time,
}

impl PacingPolicy for Gap {
    fn release_at(&self, _now: Time, _frame_bytes: u32) -> Time {
        self.next
    }
    fn on_send(&mut self, now: Time, _frame_bytes: u32) {
        self.next = now + self.gap;
    }
}

#[test]
fn the_pacing_hook_holds_segments_until_their_time() {
    let mut s = sender_established(TcpConfig::for_mtu(1500));
    let ep = s.ep as usize;
    s.sim.tcp.eps[ep].pacer = Pacer::Custom(Box::new(Gap {
        gap: Dur::from_us(10),
        next: Time::ZERO,
    }));
    s.write(10 * s.mss);
    assert_eq!(s.drain().len(), 1, "the window allows ten, the pacer one");
    s.advance(Dur::from_us(45));
    assert_eq!(s.drain().len(), 4, "one every 10 us");
    s.advance(Dur::from_us(100));
    assert_eq!(s.drain().len(), 5, "the rest, and no more");
}
