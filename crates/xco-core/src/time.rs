//! Integer time: instants and durations in picoseconds.
//!
//! Picoseconds make serialisation exact at every common line rate (one byte
//! takes 80 ps at 100 Gb/s, 8000 ps at 1 Gb/s) and a `u64` still spans 213
//! days. Floating point appears only when a value leaves the model (CSV, JSON).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds per nanosecond.
pub const PS_PER_NS: u64 = 1_000;
/// Picoseconds per microsecond.
pub const PS_PER_US: u64 = 1_000_000;
/// Picoseconds per millisecond.
pub const PS_PER_MS: u64 = 1_000_000_000;
/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// A point in time, picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of time in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl Time {
    /// The start of the run.
    pub const ZERO: Time = Time(0);
    /// Later than any real event; used as "never".
    pub const NEVER: Time = Time(u64::MAX);

    /// Picoseconds since the start.
    pub const fn ps(self) -> u64 {
        self.0
    }
    /// Seconds since the start, for output only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub const fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    /// No time.
    pub const ZERO: Dur = Dur(0);

    /// A duration of `ps` picoseconds.
    pub const fn from_ps(ps: u64) -> Dur {
        Dur(ps)
    }
    /// A duration of `ns` nanoseconds (saturating at the largest duration).
    pub const fn from_ns(ns: u64) -> Dur {
        Dur(ns.saturating_mul(PS_PER_NS))
    }
    /// A duration of `us` microseconds (saturating).
    pub const fn from_us(us: u64) -> Dur {
        Dur(us.saturating_mul(PS_PER_US))
    }
    /// A duration of `ms` milliseconds (saturating).
    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms.saturating_mul(PS_PER_MS))
    }
    /// A duration of `s` seconds (saturating).
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s.saturating_mul(PS_PER_S))
    }
    /// The nearest whole picoseconds to `secs` seconds; negative or NaN give zero.
    pub fn from_secs_f64(secs: f64) -> Dur {
        if secs.is_nan() || secs <= 0.0 {
            Dur(0)
        } else {
            Dur((secs * PS_PER_S as f64).round() as u64)
        }
    }
    /// Picoseconds.
    pub const fn ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds (truncated).
    pub const fn as_ns(self) -> u64 {
        self.0 / PS_PER_NS
    }
    /// Seconds, for output only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// Twice as long, saturating at the largest duration.
    pub const fn doubled(self) -> Dur {
        Dur(self.0.saturating_mul(2))
    }
    /// Time to serialise `bytes` at `rate_bps`, rounded up to a whole picosecond.
    ///
    /// Panics if `rate_bps` is zero.
    pub fn serialization(bytes: u64, rate_bps: u64) -> Dur {
        assert!(rate_bps > 0, "rate_bps must be positive");
        let bits_ps = bytes as u128 * 8 * PS_PER_S as u128;
        Dur(bits_ps.div_ceil(rate_bps as u128) as u64)
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    /// Panics in debug builds if `rhs` is later than `self`.
    fn sub(self, rhs: Time) -> Dur {
        Dur(self.0 - rhs.0)
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Dur {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for Dur {
    type Output = Dur;
    fn sub(self, d: Dur) -> Dur {
        Dur(self.0.saturating_sub(d.0))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps >= PS_PER_MS {
            write!(f, "{:.3}ms", ps as f64 / PS_PER_MS as f64)
        } else if ps >= PS_PER_US {
            write!(f, "{:.3}us", ps as f64 / PS_PER_US as f64)
        } else {
            write!(f, "{}ns", ps as f64 / PS_PER_NS as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_at_common_rates() {
        assert_eq!(Dur::serialization(1500, 1_000_000_000), Dur::from_us(12));
        assert_eq!(Dur::serialization(1500, 100_000_000_000), Dur::from_ns(120));
        assert_eq!(Dur::serialization(1, 3_000_000_000).ps(), 2667);
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(Time::NEVER + Dur::from_ms(1), Time::NEVER);
        assert_eq!(Dur::from_ms(1) - Dur::from_ms(2), Dur::ZERO);
        assert_eq!(Dur(u64::MAX).doubled(), Dur(u64::MAX));
        assert_eq!(Time(5).saturating_since(Time(9)), Dur::ZERO);
        assert_eq!(Dur::from_ns(u64::MAX), Dur(u64::MAX));
        assert_eq!(Dur::from_secs(u64::MAX / 2), Dur(u64::MAX));
    }

    #[test]
    fn unit_constructors_agree() {
        assert_eq!(Dur::from_secs(1), Dur::from_ms(1000));
        assert_eq!(Dur::from_ms(1), Dur::from_us(1000));
        assert_eq!(Dur::from_us(1), Dur::from_ns(1000));
        assert_eq!(Dur::from_secs_f64(0.5), Dur::from_ms(500));
        assert_eq!(Dur::from_secs_f64(-1.0), Dur::ZERO);
    }
}
