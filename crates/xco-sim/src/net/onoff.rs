//! The TCP Outcast paper's ON/OFF blackout model (spec `outcast.md`, "Drop
//! model"): a drop-tail port that alternates OFF — no extra drops, for an
//! exponentially distributed time — and ON — every arriving data frame is
//! dropped, for `on_packets` consecutive data frames. It isolates what a port
//! blackout of m packets does to the flows behind one input.
//!
//! The first OFF period starts at time 0; the ON period starts with the first
//! data frame that arrives after the OFF period ended and lasts until
//! `on_packets` data frames were dropped; the next OFF period starts at the
//! last of them. Frames without payload (SYNs, pure ACKs) pass in both
//! periods and do not count: the model blacks out data. Outside ON the port
//! is plain drop-tail. The OFF draws come from the port's own seeded stream,
//! so a run is deterministic.

use super::packet::Packet;
use super::qdisc::{Arrival, ArrivalHook, DropReason, DropTail, Verdict};
use xco_core::{Dur, Rng, Time};

/// An ON/OFF dropper in front of a drop-tail buffer.
#[derive(Clone, Debug)]
pub struct OnOff {
    limit_bytes: u64,
    mean_off_ps: f64,
    on_packets: u32,
    /// The current OFF period ends here.
    off_until: Time,
    /// Data frames still to drop in the current ON period (0: OFF).
    to_drop: u32,
    rng: Rng,
    /// ON periods begun.
    pub on_periods: u64,
    /// Data frames dropped by the model (not by the buffer).
    pub model_drops: u64,
}

impl OnOff {
    /// A port of `limit_bytes` whose OFF periods last `mean_off` on average
    /// (exponential) and whose ON periods drop `on_packets` (at least 1) data frames.
    pub fn new(limit_bytes: u64, mean_off: Dur, on_packets: u32, mut rng: Rng) -> OnOff {
        let mean_off_ps = mean_off.0 as f64;
        let first = Dur(rng.exp(mean_off_ps) as u64);
        OnOff {
            limit_bytes,
            mean_off_ps,
            on_packets: on_packets.max(1),
            off_until: Time::ZERO + first,
            to_drop: 0,
            rng,
            on_periods: 0,
            model_drops: 0,
        }
    }
}

impl ArrivalHook for OnOff {
    fn on_arrival(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict {
        if pkt.payload_bytes > 0 {
            if self.to_drop == 0 && a.now >= self.off_until {
                self.to_drop = self.on_packets;
                self.on_periods += 1;
            }
            if self.to_drop > 0 {
                self.to_drop -= 1;
                self.model_drops += 1;
                if self.to_drop == 0 {
                    self.off_until = a.now + Dur(self.rng.exp(self.mean_off_ps) as u64);
                }
                return Verdict::Drop(DropReason::Discipline);
            }
        }
        if a.idle_since.is_none() && !DropTail::fits(self.limit_bytes, a.backlog_bytes, a.frame_bytes) {
            return Verdict::Drop(DropReason::TailDrop);
        }
        Verdict::Admit
    }
    fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::qdisc::Input;

    fn arrival(now_ps: u64) -> Arrival {
        Arrival {
            now: Time(now_ps),
            input: Input::LOCAL,
            frame_bytes: 1518,
            backlog_bytes: 0,
            idle_since: Some(Time(0)),
        }
    }

    #[test]
    fn an_on_period_drops_exactly_m_data_frames_in_a_row() {
        let mut q = OnOff::new(100_000, Dur(1_000_000_000), 3, Rng::new(1));
        let mut data = Packet::EMPTY;
        data.payload_bytes = 1460;
        let mut ack = Packet::EMPTY;
        let start = q.off_until.0;
        let mut verdicts = Vec::new();
        for i in 0..5u64 {
            verdicts.push(q.on_arrival(&arrival(start + i), &mut data));
            // a pure ACK in the middle of the ON period passes and does not count
            assert_eq!(q.on_arrival(&arrival(start + i), &mut ack), Verdict::Admit);
        }
        let d = Verdict::Drop(DropReason::Discipline);
        assert_eq!(verdicts, vec![d, d, d, Verdict::Admit, Verdict::Admit]);
        assert_eq!((q.on_periods, q.model_drops), (1, 3));
        assert!(
            q.off_until.0 >= start + 2,
            "the next OFF period starts at the last drop"
        );
    }

    #[test]
    fn off_periods_last_the_mean_on_average() {
        // m = 1 and a data frame every microsecond for 4 s: about one ON
        // period per (5 ms + 1 us) of OFF time
        let mut q = OnOff::new(100_000, Dur(5_000_000_000), 1, Rng::new(9));
        let mut data = Packet::EMPTY;
        data.payload_bytes = 1460;
        for i in 0..4_000_000u64 {
            q.on_arrival(&arrival(i * 1_000_000), &mut data);
        }
        let expected = 4.0 / 0.005001;
        let ratio = q.on_periods as f64 / expected;
        assert!(
            (ratio - 1.0).abs() < 0.1,
            "{} ON periods, expected about {expected}",
            q.on_periods
        );
    }
}
