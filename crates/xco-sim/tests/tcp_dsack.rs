//! D-SACK used by senders (RFC 2883 §4, RFC 8985 §6.2 step 4): a segment
//! held back on the path (reordered, not lost) long enough for RACK to
//! retransmit it makes the receiver report the duplicate in a D-SACK; the
//! sender counts it and doubles its reordering window, so the same
//! reordering again causes no retransmission.
//!
//! One server answers a client's requests over one persistent `linux`
//! connection (the incast application with one server); in chosen rounds
//! the port into the client holds the third-last segment of the response
//! for a fraction of the sender's minimum RTT. The port lets it pass later
//! (the test takes it from the port's arrival hook and offers it to the
//! port again; the port counts it as a drop, nothing else does). Two
//! segments follow it, fewer than DupThresh: only RACK's timer can call it
//! lost, at RACK.rtt + reo_wnd after it left.

use std::sync::{Arc, Mutex};
use xco_core::{Dur, Time};
use xco_sim::net::packet::Packet;
use xco_sim::net::qdisc::{Arrival, ArrivalHook, DropReason, Qdisc, Verdict};
use xco_sim::scenario::build;
use xco_sim::sim::Sim;

/// Segments per response (the response is this many full segments).
const SEGS: u64 = 8;

/// The segment held: the third-last of the response.
const HELD: u64 = SEGS - 3;

/// A packet taken off the port: when, by which input, and the packet.
type Held = Arc<Mutex<Option<(Time, u32, Packet)>>>;

/// Takes the first copy of each data segment starting at one of `seqs`.
struct Hold {
    seqs: Vec<u64>,
    held: Held,
}

impl ArrivalHook for Hold {
    fn on_arrival(&mut self, a: &Arrival, p: &mut Packet) -> Verdict {
        if p.payload_bytes > 0 {
            if let Some(i) = self.seqs.iter().position(|&s| s == p.seq) {
                self.seqs.remove(i);
                *self.held.lock().unwrap() = Some((a.now, a.input.index, *p));
                return Verdict::Drop(DropReason::Discipline);
            }
        }
        Verdict::Admit
    }
    fn limit_bytes(&self) -> u64 {
        1 << 30
    }
}

/// The run: the simulation, the port into the client, the server's endpoint.
struct Run {
    sim: Sim,
    port: u32,
    server: usize,
    client: usize,
    mss: u64,
    held: Held,
}

/// A server a0 answering 12 requests of client b0 with `SEGS` segments
/// each; the held segment of every round in `rounds` is taken off the port.
fn setup(rounds: &[u64]) -> Run {
    let text = "[topology]\nkind = \"two_switch\"\nhosts_a = 1\nhosts_b = 1\nlink_delay_us = 100\n\
                [tcp]\nprofile = \"linux\"\n\
                [[apps]]\nkind = \"incast\"\nclient = \"b0\"\nservers = \"a0\"\nsru = \"SRUB\"\nrequest = \"64B\"\nrounds = 12\n\
                [output]\ntimeseries_bin_us = 0\n";
    let mss = build(text.replace("SRU", "1000").as_str(), None)
        .unwrap()
        .sim
        .stack
        .tcp
        .cfg
        .mss_bytes as u64;
    let text = text.replace("SRU", &(SEGS * mss).to_string());
    let mut sim = build(&text, None).unwrap().sim;
    let net = &mut sim.cx.net;
    let port = net
        .port_between(net.node("sb").unwrap(), net.node("b0").unwrap())
        .unwrap();
    let held: Held = Arc::new(Mutex::new(None));
    let seqs = rounds.iter().map(|r| (r * SEGS + HELD) * mss).collect();
    let hook = Hold {
        seqs,
        held: held.clone(),
    };
    net.set_qdisc(port, Qdisc::Fifo(Box::new(hook))).unwrap();
    sim.run_until(Time::ZERO).unwrap();
    let a0 = sim.cx.net.node("a0").unwrap();
    let server = sim
        .tcp
        .eps
        .iter()
        .position(|e| e.host == a0)
        .expect("the server's end");
    Run {
        sim,
        port,
        server,
        client: 1 - server,
        mss,
        held,
    }
}

impl Run {
    /// The server's minimum RTT as its RACK measured it.
    fn min_rtt(&mut self) -> Dur {
        self.rack().min_rtt.expect("an RTT sample")
    }

    /// Run to the end, letting the k-th held segment pass `fractions[k]`
    /// of the server's minimum RTT after it was taken; returns the counts
    /// ([`Run::counts`]) seen when each segment was taken, and at the end.
    fn drive(&mut self, fractions: &[(u64, u64)]) -> Vec<(u64, u64, u64)> {
        let step = Dur::from_us(5);
        let mut seen = Vec::new();
        let mut pass: Option<(Time, u32, Packet)> = None;
        let mut k = 0;
        let end = Time::ZERO + Dur::from_ms(200);
        while self.sim.cx.now < end && !self.sim.cx.ev.is_empty() {
            let mut t = self.sim.cx.now + step;
            if let Some((at, _, _)) = pass {
                t = t.min(at);
            }
            self.sim.run_until(t).unwrap();
            if let Some((at, input, p)) = pass {
                if self.sim.cx.now >= at {
                    let cx = &mut self.sim.cx;
                    let id = cx.net.alloc(p);
                    cx.net.enqueue_from(cx.now, &mut cx.ev, self.port, input, id);
                    pass = None;
                }
            }
            let taken = self.held.lock().unwrap().take();
            if let Some((at, input, p)) = taken {
                assert!(pass.is_none(), "one held segment at a time");
                seen.push(self.counts());
                let (num, den) = fractions[k];
                k += 1;
                let rtt = self.min_rtt();
                pass = Some((at + Dur(rtt.ps() * num / den), input, p));
            }
        }
        assert_eq!(k, fractions.len(), "every chosen round held its segment");
        seen.push(self.counts());
        seen
    }

    /// Segments the server sent again, D-SACKs the client sent and the server received.
    fn counts(&self) -> (u64, u64, u64) {
        let s = &self.sim.tcp.eps[self.server];
        let f = &self.sim.cx.net.flows[s.tx_flow as usize];
        (
            f.retransmits,
            self.sim.tcp.eps[self.client].dsacks_sent,
            s.dsacks_received(),
        )
    }

    /// The server's RACK state.
    fn rack(&mut self) -> xco_sim::tcp::rack::Rack {
        let ep = &mut self.sim.tcp.eps[self.server];
        ep.recovery
            .as_sack()
            .and_then(|r| r.rack.clone())
            .expect("RACK on")
    }
}

#[test]
fn a_spurious_rack_retransmission_is_d_sacked_and_the_reordering_window_grows() {
    // round 2 holds its segment an eighth of the min RTT: inside reo_wnd =
    // min_RTT / 4, it arrives late, nothing is sent again, reordering is
    // seen. Rounds 5, 8 and 10 hold it three eighths: beyond reo_wnd in
    // round 5, so RACK retransmits it, the original arrives first and the
    // copy is reported as a D-SACK; the window grows to min_RTT / 2 and
    // the same reordering in rounds 8 and 10 is waited out.
    let mut r = setup(&[2, 5, 8, 10]);
    let seen = r.drive(&[(1, 8), (3, 8), (3, 8), (3, 8)]);
    // (retransmits, D-SACKs sent by the client, D-SACKs received by the server)
    assert_eq!(seen[0], (0, 0, 0), "before round 2");
    assert_eq!(
        seen[1],
        (0, 0, 0),
        "after round 2: a mild reordering, no retransmission"
    );
    assert_eq!(
        seen[2],
        (1, 1, 1),
        "after round 5: one spurious retransmission, one D-SACK"
    );
    assert_eq!(
        seen[3],
        (1, 1, 1),
        "after round 8: the same reordering, nothing sent twice"
    );
    assert_eq!(seen[4], (1, 1, 1), "after round 10: the same");
    let rack = r.rack();
    assert!(rack.reordering_seen);
    assert_eq!(rack.reo_wnd_mult, 2, "the window is min_RTT / 2");
    let s = &r.sim.tcp.eps[r.server];
    assert_eq!(s.snd_una, 12 * SEGS * r.mss, "every response delivered");
    let f = &r.sim.cx.net.flows[s.tx_flow as usize];
    assert_eq!((f.timeouts, f.fast_retransmits), (0, 1));
}

#[test]
fn without_reordering_seen_first_a_d_sack_does_not_grow_the_window() {
    // Linux's rule: the D-SACK of the first spurious retransmission alone
    // does not widen the window (no reordering seen: the late segment had
    // been retransmitted), so the next identical reordering is
    // retransmitted again
    let mut r = setup(&[5, 8]);
    let seen = r.drive(&[(3, 8), (3, 8)]);
    assert_eq!(seen, vec![(0, 0, 0), (1, 1, 1), (2, 2, 2)]);
    let rack = r.rack();
    assert!(!rack.reordering_seen);
    assert_eq!(rack.reo_wnd_mult, 1);
}
