//! CUBIC (RFC 9438) on a whole connection: one `linux`-profile flow loses
//! one segment in slow start; afterwards the sender's window follows
//! `W_cubic(t) = C (t - K)^3 + W_max` (concave up to `W_max`, convex beyond)
//! on a long path, and the Reno-friendly estimate `W_est` on a short one.
//!
//! The window is recorded through the congestion-control seam: the
//! endpoint's CUBIC is wrapped in a recorder (`Cc::Custom`) that runs the
//! same [`Cubic`] and notes the window after every ACK and the window at
//! the congestion event. `W_max`, the time origin and `cwnd_epoch` come
//! from that record: `W_max` is the window when the loss was acted on, `t`
//! counts from the first ACK of the congestion-avoidance stage that follows
//! the recovery (RFC 9438 §4.2: "the elapsed time from the beginning of the
//! current congestion avoidance stage"), `K = cbrt((W_max - cwnd_epoch) / C)`
//! (eq. 2) with `cwnd_epoch` the window that stage began with, checked to be
//! `beta W_max` with beta = 0.7.

use std::sync::{Arc, Mutex};
use xco_core::Time;
use xco_sim::net::packet::Packet;
use xco_sim::net::qdisc::{Arrival, ArrivalHook, DropReason, Qdisc, Verdict};
use xco_sim::scenario::build;
use xco_sim::tcp::cc::{AckSample, CongestionControl, CongestionEvent, EventSample, Window};
use xco_sim::tcp::congestion::Cc;
use xco_sim::tcp::cubic::Cubic;

/// RFC 9438's C (segments / s^3) and beta, and alpha_cubic of eq. 4.
const C: f64 = 0.4;
const BETA: f64 = 0.7;
const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

/// One recorded step of the sender's window.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// An ACK of new data: the sample, and the window before and after.
    Ack {
        s: AckSample,
        cwnd_before: u64,
        cwnd_after: u64,
        ssthresh: u64,
    },
    /// A congestion event: the window before, ssthresh after.
    Event {
        at: Time,
        ev: CongestionEvent,
        cwnd_before: u64,
        ssthresh_after: u64,
    },
}

/// The endpoint's own CUBIC, with a record of what it did.
struct Recorder {
    cubic: Cubic,
    steps: Arc<Mutex<Vec<Step>>>,
}

impl CongestionControl for Recorder {
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        let cwnd_before = w.cwnd;
        self.cubic.on_ack(w, s);
        self.steps.lock().unwrap().push(Step::Ack {
            s: *s,
            cwnd_before,
            cwnd_after: w.cwnd,
            ssthresh: w.ssthresh,
        });
    }
    fn on_congestion(&mut self, w: &mut Window, ev: CongestionEvent, s: &EventSample) {
        let cwnd_before = w.cwnd;
        self.cubic.on_congestion(w, ev, s);
        self.steps.lock().unwrap().push(Step::Event {
            at: s.now,
            ev,
            cwnd_before,
            ssthresh_after: w.ssthresh,
        });
    }
}

/// Drops the first copy of the data segment starting at `seq`.
struct DropOnce {
    seq: u64,
    dropped: bool,
}

impl ArrivalHook for DropOnce {
    fn on_arrival(&mut self, _a: &Arrival, p: &mut Packet) -> Verdict {
        if p.payload_bytes > 0 && p.seq == self.seq && !self.dropped {
            self.dropped = true;
            return Verdict::Drop(DropReason::Discipline);
        }
        Verdict::Admit
    }
    fn limit_bytes(&self) -> u64 {
        1 << 30
    }
}

/// What one run recorded, in segments and seconds from the epoch start.
struct Run {
    mss: f64,
    /// The window when the loss was acted on, segments.
    w_max: f64,
    /// ssthresh set by the event, segments.
    ssthresh: f64,
    /// The window the congestion-avoidance stage began with, segments.
    cwnd_epoch: f64,
    /// Every ACK of the stage: (t s, segments acked, cwnd before, cwnd after).
    acks: Vec<(f64, f64, f64, f64)>,
    /// Congestion events of the whole run.
    events: usize,
    /// The smallest RTT sample of the stage, seconds.
    min_rtt_s: f64,
}

/// A bulk `linux`-profile flow a0 -> b0 over `topology`, losing the data
/// segment `drop_seg` once at the port into `b0`, run for `duration_ms`.
fn run(topology: &str, drop_seg: u64, duration_ms: u64) -> Run {
    let text = format!(
        "[run]\nduration_ms = {duration_ms}\n[topology]\n{topology}\n\
         [tcp]\nprofile = \"linux\"\n\
         [[apps]]\nkind = \"bulk\"\nsrc = \"a0\"\ndst = \"b0\"\n[output]\ntimeseries_bin_us = 0\n"
    );
    let mut sim = build(&text, None).unwrap().sim;
    let mss = sim.stack.tcp.cfg.mss_bytes as u64;
    let net = &mut sim.cx.net;
    let port = net
        .port_between(net.node("sb").unwrap(), net.node("b0").unwrap())
        .unwrap();
    let hook = DropOnce {
        seq: drop_seg * mss,
        dropped: false,
    };
    net.set_qdisc(port, Qdisc::Fifo(Box::new(hook))).unwrap();
    // the app opens the connection at 0; plug the recorder in before data
    sim.run_until(Time::ZERO).unwrap();
    let steps = Arc::new(Mutex::new(Vec::new()));
    let abc_limit_bytes = sim.stack.tcp.cfg.abc_limit_segments as u64 * mss;
    let rec = Recorder {
        cubic: Cubic::new(abc_limit_bytes),
        steps: steps.clone(),
    };
    sim.tcp.eps[0].set_congestion_control(Cc::Custom(Box::new(rec)));
    sim.run().unwrap();
    let f = &sim.cx.net.flows[sim.tcp.eps[0].tx_flow as usize];
    assert_eq!(f.timeouts, 0, "the loss is repaired without a timeout");
    let steps = steps.lock().unwrap();
    let m = mss as f64;
    let events: Vec<(usize, Time, CongestionEvent, u64, u64)> = steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match *s {
            Step::Event {
                at,
                ev,
                cwnd_before,
                ssthresh_after,
            } => Some((i, at, ev, cwnd_before, ssthresh_after)),
            _ => None,
        })
        .collect();
    let &(i_ev, _, ev, cwnd_at_loss, ssthresh) = events.first().expect("the drop caused a congestion event");
    assert_eq!(ev, CongestionEvent::DupAckLoss);
    // the stage begins at the first ACK after the event that recovery does not own
    let (i0, first) = steps[i_ev..]
        .iter()
        .enumerate()
        .find_map(|(k, s)| match *s {
            Step::Ack { s, cwnd_before, .. } if !s.in_recovery => Some((i_ev + k, (s.now, cwnd_before))),
            _ => None,
        })
        .expect("congestion avoidance after the recovery");
    let (epoch_at, cwnd_epoch) = first;
    let acks = steps[i0..]
        .iter()
        .filter_map(|s| match *s {
            Step::Ack {
                s,
                cwnd_before,
                cwnd_after,
                ssthresh: th,
            } => {
                assert!(cwnd_before >= th || s.in_recovery, "no slow start after the loss");
                Some((
                    s.now.saturating_since(epoch_at).as_secs_f64(),
                    s.bytes_acked as f64 / m,
                    cwnd_before as f64 / m,
                    cwnd_after as f64 / m,
                ))
            }
            _ => None,
        })
        .collect();
    let min_rtt_s = steps[i0..]
        .iter()
        .filter_map(|s| match s {
            Step::Ack { s, .. } => s.rtt_sample,
            _ => None,
        })
        .min()
        .expect("RTT samples")
        .as_secs_f64();
    Run {
        min_rtt_s,
        mss: m,
        w_max: cwnd_at_loss as f64 / m,
        ssthresh: ssthresh as f64 / m,
        cwnd_epoch: cwnd_epoch as f64 / m,
        acks,
        events: events.len(),
    }
}

impl Run {
    /// K of RFC 9438 eq. 2 from this run's W_max and cwnd_epoch, seconds.
    fn k_s(&self) -> f64 {
        ((self.w_max - self.cwnd_epoch) / C).cbrt()
    }

    /// `W_cubic(t)` (eq. 1), segments.
    fn w_cubic(&self, t_s: f64) -> f64 {
        C * (t_s - self.k_s()).powi(3) + self.w_max
    }

    /// Check every ACK of the stage against RFC 9438: the window is
    /// `W_est` where `W_cubic(t) < W_est` (§4.3), else `W_cubic(t)`
    /// (§4.4-4.5), within one segment. `W_est` starts at `cwnd_epoch` and
    /// grows by `alpha * segments_acked / cwnd` per ACK (eq. 4), alpha = 1
    /// once it reached the window before the loss. Returns the ACKs in the
    /// cubic and in the friendly region.
    fn check_within_one_segment(&self) -> (usize, usize) {
        let (mut cubic, mut friendly) = (0, 0);
        let mut w_est = self.cwnd_epoch;
        let mut worst: f64 = 0.0;
        for &(t, acked, before, after) in &self.acks {
            let alpha = if w_est >= self.w_max { 1.0 } else { ALPHA };
            w_est += alpha * acked / before;
            let w_cubic = self.w_cubic(t);
            let expected = w_cubic.max(w_est);
            let err = (after - expected).abs();
            worst = worst.max(err);
            assert!(
                err <= 1.0,
                "t {t:.4} s: cwnd {after:.2}, W_cubic {w_cubic:.2}, W_est {w_est:.2} (W_max {:.2}, K {:.3} s)",
                self.w_max,
                self.k_s()
            );
            if w_cubic >= w_est {
                cubic += 1;
            } else {
                friendly += 1;
            }
        }
        eprintln!(
            "W_max {:.1} segments, K {:.3} s, {} ACKs, largest |cwnd - RFC 9438| {worst:.3} segments",
            self.w_max,
            self.k_s(),
            self.acks.len()
        );
        (cubic, friendly)
    }

    /// The window after the first ACK at or after `t_s`, segments.
    fn cwnd_at(&self, t_s: f64) -> f64 {
        self.acks
            .iter()
            .find(|a| a.0 >= t_s)
            .unwrap_or_else(|| panic!("no ACK at {t_s} s"))
            .3
    }
}

#[test]
fn after_a_loss_cwnd_follows_w_cubic_concave_then_convex_within_one_segment() {
    // 100 Mbit/s bottleneck, 3 links of 8.33 ms (RTT 50 ms and up: the
    // queue holds what exceeds the ~420-segment pipe, so ACKs come evenly)
    let topo = "kind = \"two_switch\"\nhosts_a = 1\nhosts_b = 1\nlink_delay_us = 8333\n\
                host_rate = \"1Gbps\"\nuplink_rate = \"100Mbps\"\nswitch_buffer = \"4MB\"";
    let r = run(topo, 400, 14_000);
    assert_eq!(r.events, 1, "one loss, no other");
    assert!(
        (r.ssthresh - BETA * r.w_max).abs() <= 1.0 / r.mss,
        "ssthresh = beta W_max: {} of {}",
        r.ssthresh,
        r.w_max
    );
    assert!(
        (r.cwnd_epoch - BETA * r.w_max).abs() <= 1.0,
        "the stage starts at beta W_max: {} of {}",
        r.cwnd_epoch,
        r.w_max
    );
    let k = r.k_s();
    let end = r.acks.last().unwrap().0;
    assert!(end > k + 4.0, "the run covers K + 4 s: K {k:.2}, {end:.2}");
    let (cubic, friendly) = r.check_within_one_segment();
    // the stage's first ACKs find W_cubic(0) = W_est(0) = cwnd_epoch;
    // from then on W_cubic leads
    assert!(
        friendly < 10,
        "a long RTT: the cubic region ({friendly} friendly ACKs)"
    );
    assert!(cubic > 1000, "{cubic} ACKs");
    // concave: below W_max, growth falling toward K; convex: above, rising
    let grow = |a: f64, b: f64| r.cwnd_at(b) - r.cwnd_at(a);
    let early = grow(0.0, 1.0);
    let before_k = grow(k - 1.0, k);
    let after_k = grow(k, k + 1.0);
    let late = grow(k + 3.0, k + 4.0);
    assert!(r.cwnd_at(k - 0.5) < r.w_max, "below W_max before K");
    assert!(r.cwnd_at(k + 3.0) > r.w_max + 5.0, "above W_max after K");
    assert!(
        early > 3.0 * before_k,
        "concave: {early:.2} then {before_k:.2} segments/s"
    );
    assert!(
        late > 3.0 * after_k,
        "convex: {after_k:.2} then {late:.2} segments/s"
    );
}

#[test]
fn at_a_short_rtt_cwnd_follows_the_reno_friendly_estimate() {
    // 25 us links (RTT about 150 us): W_est grows alpha segments per RTT,
    // far faster than W_cubic
    let topo = "kind = \"two_switch\"\nhosts_a = 1\nhosts_b = 1\nlink_delay_us = 25\n\
                host_rate = \"10Gbps\"\nswitch_buffer = \"8MB\"";
    let r = run(topo, 100, 150);
    assert_eq!(r.events, 1, "one loss, no other");
    let (cubic, friendly) = r.check_within_one_segment();
    assert!(friendly > 50 * cubic.max(1), "{cubic} cubic, {friendly} friendly");
    // in round trips (the path's RTT: the window stays below the pipe
    // until W_max), W_est takes (W_max - beta W_max) / alpha of them to
    // regain W_max, then one per segment
    let rtts = |w: f64| r.acks.iter().find(|a| a.3 >= w).expect("reached").0 / r.min_rtt_s;
    let to_w_max = (r.w_max - r.cwnd_epoch) / ALPHA;
    let seen = rtts(r.w_max);
    eprintln!("W_max regained after {seen:.1} RTTs ({to_w_max:.1} at alpha per RTT)");
    assert!(
        (seen / to_w_max - 1.0).abs() < 0.1,
        "{seen:.1} RTTs, {to_w_max:.1} expected"
    );
    let ten_more = rtts(r.w_max + 10.0) - seen;
    eprintln!("then 10 segments more in {ten_more:.1} RTTs");
    assert!(
        (ten_more / 10.0 - 1.0).abs() < 0.15,
        "{ten_more:.1} RTTs for 10 segments"
    );
    // the window passes W_max during the run, W_cubic stays far below it
    let last = r.acks.last().unwrap();
    assert!(last.3 > r.w_max + 10.0, "{} vs W_max {}", last.3, r.w_max);
    assert!(r.w_cubic(last.0) < r.w_max - 10.0);
}
