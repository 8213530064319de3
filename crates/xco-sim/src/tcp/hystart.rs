//! HyStart++ (RFC 9406): leave slow start when the RTT starts to grow,
//! before the first loss.
//!
//! Standard slow start doubles the window every round trip until a packet
//! is lost; with a deep buffer that overshoot costs up to a window of
//! losses. HyStart++ watches the minimum RTT of each round (the first
//! [`N_RTT_SAMPLE`] samples of it): once it exceeds the previous round's by
//! `RttThresh = clamp(lastRoundMinRTT / 8, MIN_RTT_THRESH, MAX_RTT_THRESH)`
//! the sender enters *Conservative Slow Start* (CSS), growing by a quarter
//! of slow start's rate ([`CSS_GROWTH_DIVISOR`]). If the RTT falls back
//! below the baseline that triggered CSS, the exit was spurious and slow
//! start resumes; after [`CSS_ROUNDS`] rounds in CSS the sender sets
//! `ssthresh = cwnd` and congestion avoidance begins. A loss or an ECN echo
//! ends HyStart++ at once (the algorithm's own reaction sets ssthresh).
//!
//! Rounds follow §4.2: a round ends when the cumulative ACK passes
//! `windowEnd`, the highest sequence sent when the round began. The
//! per-ACK growth limit is RFC 9406's `L`: unlimited without pacing, 8
//! segments with pacing. As RFC 9406 recommends, HyStart++ runs in the initial
//! slow start only: after the first congestion event slow start is the
//! plain RFC 5681 / RFC 3465 one again.
//!
//! The RTT thresholds are RFC 9406's (4 ms and 16 ms), sized for Internet
//! paths: with data-center RTTs of ~100 us the delay-increase test fires
//! only once a queue adds at least 4 ms, i.e. multi-millisecond queues.
//! [`HyStartParams`] can lower them; the scenario key keeps the RFC values.
//!
//! Pure logic: time comes in the [`AckSample`], nothing here reads a clock.

use super::cc::{AckSample, Window};
use xco_core::Dur;

/// Lower bound of the delay-increase threshold (RFC 9406: 4 ms).
pub const MIN_RTT_THRESH: Dur = Dur::from_ms(4);
/// Upper bound of the delay-increase threshold (RFC 9406: 16 ms).
pub const MAX_RTT_THRESH: Dur = Dur::from_ms(16);
/// The threshold is the last round's min RTT divided by this (RFC 9406: 8).
pub const MIN_RTT_DIVISOR: u64 = 8;
/// RTT samples per round before the delay test runs (RFC 9406: 8).
pub const N_RTT_SAMPLE: u32 = 8;
/// CSS grows this many times slower than slow start (RFC 9406: 4).
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// Rounds spent in CSS before congestion avoidance (RFC 9406: 5).
pub const CSS_ROUNDS: u32 = 5;
/// Growth limit per ACK with pacing, segments (RFC 9406: 8).
pub const PACED_L_SEGMENTS: u64 = 8;

/// Where HyStart++ is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start with the delay-increase test armed.
    SlowStart,
    /// Conservative slow start: growth divided by [`CSS_GROWTH_DIVISOR`].
    Css,
    /// Done: left CSS into congestion avoidance, or a congestion event
    /// ended the initial slow start. Plain slow start from here on.
    Done,
}

/// The RTT thresholds (RFC 9406's constants by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HyStartParams {
    /// MIN_RTT_THRESH.
    pub min_rtt_thresh: Dur,
    /// MAX_RTT_THRESH.
    pub max_rtt_thresh: Dur,
}

impl Default for HyStartParams {
    fn default() -> HyStartParams {
        HyStartParams {
            min_rtt_thresh: MIN_RTT_THRESH,
            max_rtt_thresh: MAX_RTT_THRESH,
        }
    }
}

/// What one ACK did to the HyStart++ state (for tests and traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// Nothing changed phase.
    None,
    /// The delay increase fired: slow start -> CSS.
    EnterCss,
    /// The RTT fell below the CSS baseline: CSS -> slow start.
    ResumeSlowStart,
    /// CSS_ROUNDS rounds done: CSS -> congestion avoidance (ssthresh = cwnd).
    EnterCongestionAvoidance,
}

/// HyStart++ state of one connection.
#[derive(Clone, Debug)]
pub struct HyStart {
    /// The thresholds.
    pub params: HyStartParams,
    /// Per-ACK growth limit L, segments (`u64::MAX`: unlimited).
    pub l_segments: u64,
    /// The phase.
    pub phase: Phase,
    /// `windowEnd`: the round ends when `snd_una` reaches it (None: no round yet).
    /// The next round starts at the first ACK beyond it.
    window_end: Option<u64>,
    /// `lastRoundMinRTT` (None: infinity).
    last_round_min_rtt: Option<Dur>,
    /// `currentRoundMinRTT` (None: infinity).
    current_round_min_rtt: Option<Dur>,
    /// `rttSampleCount` of the current round.
    rtt_sample_count: u32,
    /// `cssBaselineMinRtt` (None: infinity).
    css_baseline_min_rtt: Option<Dur>,
    /// Round boundaries passed since CSS began.
    css_rounds_done: u32,
    /// Rounds started so far (diagnostics and tests).
    pub rounds: u64,
}

impl HyStart {
    /// A fresh instance; `paced` picks RFC 9406's L (8 segments, else unlimited).
    pub fn new(params: HyStartParams, paced: bool) -> HyStart {
        HyStart {
            params,
            l_segments: if paced { PACED_L_SEGMENTS } else { u64::MAX },
            phase: Phase::SlowStart,
            window_end: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_baseline_min_rtt: None,
            css_rounds_done: 0,
            rounds: 0,
        }
    }

    /// Whether HyStart++ still owns slow start (false once [`Phase::Done`]).
    #[inline]
    pub fn active(&self) -> bool {
        self.phase != Phase::Done
    }

    /// `RttThresh` for a last-round minimum RTT (RFC 9406 §4.2).
    pub fn rtt_thresh(&self, last_round_min_rtt: Dur) -> Dur {
        Dur(last_round_min_rtt.0 / MIN_RTT_DIVISOR)
            .min(self.params.max_rtt_thresh)
            .max(self.params.min_rtt_thresh)
    }

    /// A slow-start ACK (the caller checked `cwnd < ssthresh`, no recovery,
    /// cwnd-limited): grow `w.cwnd` by slow start's or CSS's rule and run the
    /// RFC 9406 tests; on leaving CSS set `w.ssthresh = w.cwnd`.
    pub fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> Transition {
        let mut t = Transition::None;
        // §4.2: the ACK reaching windowEnd closes the round (its sample is
        // the round's last segment's); the next one opens a new round, as
        // Linux's `after(snd_una, end_seq)`
        if self.window_end.is_none_or(|end| s.snd_una > end) {
            self.window_end = Some(s.snd_max);
            self.rounds += 1;
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            if self.phase == Phase::Css {
                self.css_rounds_done += 1;
                if self.css_rounds_done >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    w.ssthresh = w.cwnd;
                    return Transition::EnterCongestionAvoidance;
                }
            }
        }
        let limit_bytes = self.l_segments.saturating_mul(w.mss);
        let grow = s.bytes_acked.min(limit_bytes);
        if let Some(r) = s.rtt_sample {
            self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(r, |m| m.min(r)));
            self.rtt_sample_count += 1;
        }
        match self.phase {
            Phase::SlowStart => {
                w.cwnd += grow;
                if self.rtt_sample_count >= N_RTT_SAMPLE {
                    if let (Some(cur), Some(last)) = (self.current_round_min_rtt, self.last_round_min_rtt) {
                        if cur >= last + self.rtt_thresh(last) {
                            self.css_baseline_min_rtt = Some(cur);
                            self.css_rounds_done = 0;
                            self.phase = Phase::Css;
                            t = Transition::EnterCss;
                        }
                    }
                }
            }
            Phase::Css => {
                w.cwnd += grow / CSS_GROWTH_DIVISOR;
                if self.rtt_sample_count >= N_RTT_SAMPLE {
                    if let (Some(cur), Some(base)) = (self.current_round_min_rtt, self.css_baseline_min_rtt) {
                        if cur < base {
                            // §4.2: the exit was spurious, back to slow start
                            self.css_baseline_min_rtt = None;
                            self.phase = Phase::SlowStart;
                            t = Transition::ResumeSlowStart;
                        }
                    }
                }
            }
            Phase::Done => w.cwnd += grow,
        }
        t
    }

    /// A congestion event (loss, RTO, ECN echo): HyStart++ ends (RFC 9406 §4.2).
    pub fn on_congestion(&mut self) {
        self.phase = Phase::Done;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xco_core::Time;

    const MSS: u64 = 1000;

    /// A window-limited sender driving HyStart++ one ACK per segment.
    struct Sender {
        h: HyStart,
        w: Window,
        snd_una: u64,
        snd_max: u64,
    }

    impl Sender {
        fn new(paced: bool) -> Sender {
            Sender {
                h: HyStart::new(HyStartParams::default(), paced),
                w: Window {
                    cwnd: 10 * MSS,
                    ssthresh: u64::MAX,
                    mss: MSS,
                    bytes_acked: 0,
                },
                snd_una: 0,
                snd_max: 10 * MSS,
            }
        }

        /// One ACK of `bytes` with RTT sample `rtt`.
        fn ack_bytes(&mut self, bytes: u64, rtt: Option<Dur>) -> Transition {
            self.snd_una += bytes;
            let s = AckSample {
                now: Time::ZERO,
                bytes_acked: bytes,
                rtt_sample: rtt,
                ece: false,
                in_flight_bytes: self.snd_max - self.snd_una,
                in_recovery: false,
                snd_una: self.snd_una,
                snd_max: self.snd_max,
            };
            let t = self.h.on_ack(&mut self.w, &s);
            self.snd_max = self.snd_una + self.w.cwnd; // fill the window
            t
        }

        /// ACK everything outstanding at the start of the call (one round),
        /// one segment per ACK, every sample `rtt`; returns the transitions.
        fn round(&mut self, rtt: Dur) -> Vec<Transition> {
            let end = self.snd_max;
            let mut out = Vec::new();
            while self.snd_una < end {
                let t = self.ack_bytes(MSS, Some(rtt));
                if t != Transition::None {
                    out.push(t);
                }
            }
            out
        }
    }

    #[test]
    fn rtt_thresh_is_an_eighth_of_the_last_min_rtt_clamped_to_4_and_16_ms() {
        let h = HyStart::new(HyStartParams::default(), false);
        assert_eq!(h.rtt_thresh(Dur::from_ms(80)), Dur::from_ms(10));
        // data-center RTTs: the floor, 4 ms, far above the RTT itself
        assert_eq!(h.rtt_thresh(Dur::from_us(100)), Dur::from_ms(4));
        assert_eq!(h.rtt_thresh(Dur::from_ms(400)), Dur::from_ms(16));
    }

    #[test]
    fn a_round_ends_when_the_ack_passes_window_end() {
        let mut s = Sender::new(false);
        s.ack_bytes(MSS, Some(Dur::from_ms(50)));
        assert_eq!(s.h.rounds, 1, "the first ACK starts round 1");
        let end = s.h.window_end.unwrap();
        assert_eq!(end, 10 * MSS, "windowEnd = snd_max when the round began");
        while s.snd_una < end {
            s.ack_bytes(MSS, Some(Dur::from_ms(50)));
        }
        assert_eq!(s.h.rounds, 1, "the ACK reaching windowEnd is the round's last");
        let snd_max = s.snd_max;
        s.ack_bytes(MSS, Some(Dur::from_ms(60)));
        assert_eq!(s.h.rounds, 2, "the next ACK begins round 2");
        assert_eq!(s.h.last_round_min_rtt, Some(Dur::from_ms(50)));
        assert_eq!(s.h.current_round_min_rtt, Some(Dur::from_ms(60)));
        assert_eq!(s.h.window_end, Some(snd_max), "snd_max when round 2 began");
        assert!(snd_max > end);
    }

    #[test]
    fn slow_start_grows_by_all_acked_bytes_unpaced_and_by_at_most_8_segments_paced() {
        // one ACK of the whole 10-segment flight (more than L = 8 segments)
        let mut s = Sender::new(false);
        s.ack_bytes(10 * MSS, None);
        assert_eq!(s.w.cwnd, 20 * MSS, "L = infinity without pacing");
        let mut s = Sender::new(true);
        s.ack_bytes(10 * MSS, None);
        assert_eq!(s.w.cwnd, 18 * MSS, "L = 8 segments with pacing");
    }

    #[test]
    fn a_delay_increase_of_rtt_thresh_moves_slow_start_into_css() {
        let base = Dur::from_ms(40); // RttThresh = 5 ms
        let mut s = Sender::new(false);
        assert!(s.round(base).is_empty());
        // 4.9 ms more: below the threshold, still slow start
        assert!(s.round(base + Dur::from_us(4900)).is_empty());
        assert_eq!(s.h.phase, Phase::SlowStart);
        // the rounds' minima compare with the previous round's: back to 40 ms first
        assert!(s.round(base).is_empty());
        let t = s.round(base + Dur::from_ms(5));
        assert_eq!(t, vec![Transition::EnterCss]);
        assert_eq!(s.h.phase, Phase::Css);
        assert_eq!(s.h.css_baseline_min_rtt, Some(base + Dur::from_ms(5)));
    }

    #[test]
    fn the_delay_test_waits_for_n_rtt_sample_samples_of_the_round() {
        let mut s = Sender::new(false);
        s.round(Dur::from_ms(40));
        // the next round: 7 samples far above the threshold do not trigger
        for _ in 0..N_RTT_SAMPLE - 1 {
            assert_eq!(s.ack_bytes(MSS, Some(Dur::from_ms(60))), Transition::None);
        }
        assert_eq!(s.h.phase, Phase::SlowStart);
        assert_eq!(s.ack_bytes(MSS, Some(Dur::from_ms(60))), Transition::EnterCss);
    }

    /// A sender that entered CSS at the end of its third round; baseline 45 ms.
    fn in_css() -> Sender {
        let mut s = Sender::new(false);
        s.round(Dur::from_ms(40));
        s.round(Dur::from_ms(40));
        assert_eq!(s.round(Dur::from_ms(45)), vec![Transition::EnterCss]);
        s
    }

    #[test]
    fn css_grows_a_quarter_as_fast_as_slow_start() {
        let mut s = in_css();
        let before = s.w.cwnd;
        s.ack_bytes(MSS, Some(Dur::from_ms(45)));
        assert_eq!(s.w.cwnd - before, MSS / CSS_GROWTH_DIVISOR);
        let before = s.w.cwnd;
        s.ack_bytes(2 * MSS, Some(Dur::from_ms(45)));
        assert_eq!(s.w.cwnd - before, 2 * MSS / 4);
    }

    #[test]
    fn an_rtt_below_the_css_baseline_resumes_slow_start() {
        let mut s = in_css();
        // finish the round CSS began in, then a round whose minimum is lower
        s.round(Dur::from_ms(45));
        let t = s.round(Dur::from_ms(44));
        assert_eq!(t, vec![Transition::ResumeSlowStart]);
        assert_eq!(s.h.phase, Phase::SlowStart);
        let before = s.w.cwnd;
        s.ack_bytes(MSS, Some(Dur::from_ms(44)));
        assert_eq!(s.w.cwnd - before, MSS, "full slow-start growth again");
    }

    #[test]
    fn after_css_rounds_in_css_ssthresh_is_cwnd_and_congestion_avoidance_begins() {
        let mut s = in_css();
        let rounds_at_css = s.h.rounds;
        let mut acks = 0;
        loop {
            let t = s.ack_bytes(MSS, Some(Dur::from_ms(46)));
            acks += 1;
            assert!(acks < 100_000, "CSS never ended");
            if t != Transition::None {
                assert_eq!(t, Transition::EnterCongestionAvoidance);
                break;
            }
            assert_eq!(s.h.phase, Phase::Css);
        }
        assert_eq!(s.h.phase, Phase::Done);
        assert_eq!(s.w.ssthresh, s.w.cwnd, "ssthresh = cwnd on leaving CSS");
        // the round CSS began in counts as the first: CSS_ROUNDS boundaries
        assert_eq!(s.h.rounds - rounds_at_css, CSS_ROUNDS as u64);
    }

    #[test]
    fn a_congestion_event_ends_hystart() {
        let mut s = in_css();
        s.h.on_congestion();
        assert!(!s.h.active());
    }
}
