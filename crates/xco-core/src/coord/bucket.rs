//! The rate-limit form's token bucket: Linux HTB's class accounting, which
//! the XCo paper's hosts rate-limited with (an HTB qdisc in Dom0,
//! ../shared/spec/xco.md), in the time domain.
//!
//! HTB keeps a class's tokens as nanoseconds of sending time at its rate,
//! capped at its `buffer` (`htb_accnt_tokens`), lets the class send while
//! its tokens are not negative (`htb_class_mode` with `htb_hysteresis` 0),
//! and charges a packet after it left, so the last packet of a burst goes
//! on credit. Here `zero_at` is the instant the tokens reach zero: a packet
//! may leave at `now >= zero_at`, and then
//! `zero_at = max(zero_at, now - ser(burst)) + ser(packet)`. With a burst
//! of 0 that is an ideal pacer (never two packets back to back), the
//! coordinator's rule before the bucket. Over any interval of length `t` a
//! bucket lets at most `burst + rate * t` bytes go plus the one packet that
//! went on credit (the tests pin it).
//!
//! A class given no burst gets tc's: `rate / get_hz() + mtu` bytes, the
//! rate in bytes/s, `mtu` 1600 unless given, `get_hz()` the fourth field of
//! `/proc/net/psched` (the kernel's timer resolution: 10^9 with
//! high-resolution timers, HZ without). Sources, with lines, in
//! docs/xco-incast-order.md ("HTB's burst, from the sources"):
//! iproute2 `tc/q_htb.c` (default `mtu`, the default buffer), `lib/utils.c`
//! (`__get_hz`), `lib/utils_math.c` (rates in bytes/s); Linux
//! `net/sched/sch_htb.c` (token accounting) and `net/sched/sch_api.c`
//! (`psched_show`).

use crate::time::{Dur, Time};

/// The `mtu` tc gives an HTB class unless told (iproute2 `tc/q_htb.c`:
/// `unsigned int mtu = 1600; /* eth packet len */`), bytes.
pub const TC_HTB_MTU_BYTES: u64 = 1600;

/// What tc's `get_hz()` reads on a kernel with high-resolution timers:
/// `/proc/net/psched`'s fourth field, `NSEC_PER_SEC / hrtimer_resolution`
/// with a resolution of 1 ns.
pub const HIGH_RES_HZ: u64 = 1_000_000_000;

/// How deep a rate-limited destination's token bucket is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateBurst {
    /// As tc sets up an HTB class given a rate and no burst, for each rate
    /// a directive gives ([`tc_default_burst_bytes`] with this `get_hz()`).
    Tc {
        /// The kernel clock rate `get_hz()` reports, Hz.
        hz: u64,
    },
    /// This many bytes at every rate (0: an ideal pacer).
    Bytes(u64),
}

impl RateBurst {
    /// The ideal pacer: no credit, one packet per its serialisation time.
    pub const PACER: RateBurst = RateBurst::Bytes(0);

    /// The bucket depth at `rate_bps`, bytes.
    pub fn bytes(self, rate_bps: u64) -> u64 {
        match self {
            RateBurst::Tc { hz } => tc_default_burst_bytes(rate_bps, hz),
            RateBurst::Bytes(b) => b,
        }
    }
}

/// The burst tc computes for an HTB class of `rate_bps` when the command
/// gives none: `rate64 / get_hz() + mtu` (iproute2 `tc/q_htb.c`), the rate
/// in whole bytes per second (`lib/utils_math.c`: `bps /= 8`), integer
/// division, `mtu` [`TC_HTB_MTU_BYTES`]. `hz` 0 is read as 1.
pub fn tc_default_burst_bytes(rate_bps: u64, hz: u64) -> u64 {
    rate_bps / 8 / hz.max(1) + TC_HTB_MTU_BYTES
}

/// The instant a bucket's tokens reach zero after a packet of `wire_bytes`
/// left at `now`, given they reached zero at `zero_at` before: the bucket,
/// `burst_bytes` deep, refilled at `rate_bps` up to full, then charged the
/// packet. Panics if `rate_bps` is zero.
pub fn charge(zero_at: Time, now: Time, burst_bytes: u64, rate_bps: u64, wire_bytes: u64) -> Time {
    let full = Time(
        now.ps()
            .saturating_sub(Dur::serialization(burst_bytes, rate_bps).ps()),
    );
    zero_at.max(full) + Dur::serialization(wire_bytes, rate_bps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn tc_default_is_one_mtu_with_high_resolution_timers() {
        // 1 Gbit/s / 16 servers, the incast's smallest share: 7,812,500 B/s
        assert_eq!(tc_default_burst_bytes(62_500_000, HIGH_RES_HZ), 1600);
        // 10 Gbit/s: 1,250,000,000 B/s / 10^9 = 1 B more
        assert_eq!(tc_default_burst_bytes(10_000_000_000, HIGH_RES_HZ), 1601);
        // a kernel without high-resolution timers at HZ = 250: a jiffy of tokens plus the mtu
        assert_eq!(tc_default_burst_bytes(200_000_000, 250), 100_000 + 1600);
        assert_eq!(RateBurst::Tc { hz: 1000 }.bytes(500_000_000), 62_500 + 1600);
        assert_eq!(RateBurst::Bytes(9038).bytes(1), 9038);
    }

    #[test]
    fn a_zero_burst_is_the_ideal_pacer() {
        let r = 1_000_000_000;
        let now = Time::ZERO + Dur::from_ms(5);
        // idle: the next packet waits exactly this one's serialisation
        assert_eq!(
            charge(Time::ZERO, now, 0, r, 9038),
            now + Dur::serialization(9038, r)
        );
        // backlogged: back to back at the rate, no credit from the past
        let z = now + Dur::from_us(3);
        assert_eq!(charge(z, now, 0, r, 1500), z + Dur::serialization(1500, r));
    }

    #[test]
    fn after_idle_a_full_bucket_sends_its_depth_and_one_packet_on_credit() {
        let r = 100_000_000; // 100 Mbit/s
        let now = Time::ZERO + Dur::from_secs(1);
        let mut z = Time::ZERO;
        let mut sent = 0;
        while z <= now {
            z = charge(z, now, 4000, r, 1500);
            sent += 1;
        }
        // 4000 B of credit: 1500, 1500, 1500 (the third on credit, tokens -500 B)
        assert_eq!(sent, 3);
        assert_eq!(z, now + Dur::serialization(500, r));
    }

    /// Released bytes over every interval [a, b] of a run, against
    /// `burst + rate (b - a) + max packet` plus one picosecond of credit
    /// (the credit's serialisation time is rounded up), in bit-picoseconds.
    fn worst_excess(log: &[(Time, u64)], burst: u64, rate: u64, max_pkt: u64) -> i128 {
        let mut worst = i128::MIN;
        for i in 0..log.len() {
            let mut bytes = 0u128;
            for j in i..log.len() {
                bytes += log[j].1 as u128;
                let t = log[j].0 - log[i].0;
                let allowed = burst as u128 * 8 * 1_000_000_000_000
                    + rate as u128 * t.ps() as u128
                    + max_pkt as u128 * 8 * 1_000_000_000_000
                    + rate as u128;
                let got = bytes * 8 * 1_000_000_000_000;
                worst = worst.max(got as i128 - allowed as i128);
            }
        }
        worst
    }

    #[test]
    fn over_any_interval_it_releases_at_most_burst_plus_rate_times_t_plus_the_packet_on_credit() {
        // random arrivals of random sizes into one queue, released whenever
        // the bucket allows (a greedy driver, as HostCoordinator::pump is)
        let mut rng = Rng::new(7);
        for case in 0..200 {
            let rate = [10_000_000, 62_500_000, 1_000_000_000, 10_000_000_000][case % 4];
            let burst = [0, 1600, 9038, 64_000, rng.below(200_000)][case % 5];
            let mut arrivals: Vec<(Time, u64)> = (0..60)
                .map(|_| {
                    let at = Time(rng.below(20_000_000_000)); // within 20 ms
                    let size = 64 + rng.below(9000);
                    (at, size)
                })
                .collect();
            arrivals.sort();
            let max_pkt = arrivals.iter().map(|a| a.1).max().unwrap();
            let mut queue = std::collections::VecDeque::new();
            let mut zero_at = Time::ZERO;
            let mut log = Vec::new();
            let mut next = 0;
            let mut now = Time::ZERO;
            while next < arrivals.len() || !queue.is_empty() {
                while next < arrivals.len() && arrivals[next].0 <= now {
                    queue.push_back(arrivals[next].1);
                    next += 1;
                }
                while let Some(&size) = queue.front() {
                    if zero_at > now {
                        break;
                    }
                    queue.pop_front();
                    zero_at = charge(zero_at, now, burst, rate, size);
                    log.push((now, size));
                }
                // the next event: an arrival or the bucket's zero
                let arrive = arrivals.get(next).map_or(Time::NEVER, |a| a.0);
                let wake = if queue.is_empty() { Time::NEVER } else { zero_at };
                now = arrive.min(wake);
            }
            assert_eq!(log.len(), arrivals.len(), "case {case}: everything leaves");
            let excess = worst_excess(&log, burst, rate, max_pkt);
            assert!(
                excess <= 0,
                "case {case}: rate {rate} burst {burst}: {excess} bit-ps over the bound"
            );
        }
    }

    #[test]
    fn the_bound_is_reached_after_idle() {
        // a backlog after a long idle goes out as burst + one packet at once:
        // the bound is tight, not just safe
        let (rate, burst, pkt) = (1_000_000_000, 18_076, 9038);
        let now = Time::ZERO + Dur::from_ms(1);
        let mut z = Time::ZERO;
        let mut at_once = 0;
        while z <= now {
            z = charge(z, now, burst, rate, pkt);
            at_once += pkt;
        }
        assert_eq!(at_once, burst + pkt, "two frames of credit and one on it");
    }
}
