//! Structured logs: one logfmt line per event on stderr
//! (`ts=1763700000.123456 level=info comp=agent event=fail_open held_pkts=12`),
//! which journald, Loki and `grep` all read.

use std::fmt::Display;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// Severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Detail for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Degraded operation (e.g. fail-open).
    Warn,
    /// Something failed.
    Error,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// A component's logger.
#[derive(Clone, Debug)]
pub struct Logger {
    comp: &'static str,
    min: Level,
}

impl Logger {
    /// A logger for `comp` that prints events of `min` and above.
    pub fn new(comp: &'static str, min: Level) -> Logger {
        Logger { comp, min }
    }

    /// True if `level` is printed.
    pub fn enabled(&self, level: Level) -> bool {
        level >= self.min
    }

    /// Print `event` with its fields.
    pub fn log(&self, level: Level, event: &str, fields: &[(&str, &dyn Display)]) {
        if level < self.min {
            return;
        }
        let ts = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let mut line = format!(
            "ts={}.{:06} level={} comp={} event={}",
            ts.as_secs(),
            ts.subsec_micros(),
            level.name(),
            self.comp,
            event
        );
        for (k, v) in fields {
            let v = v.to_string();
            if v.is_empty() || v.contains([' ', '"', '=']) {
                line.push_str(&format!(" {k}={v:?}"));
            } else {
                line.push_str(&format!(" {k}={v}"));
            }
        }
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    /// [`Logger::log`] at info.
    pub fn info(&self, event: &str, fields: &[(&str, &dyn Display)]) {
        self.log(Level::Info, event, fields);
    }

    /// [`Logger::log`] at warn.
    pub fn warn(&self, event: &str, fields: &[(&str, &dyn Display)]) {
        self.log(Level::Warn, event, fields);
    }
}

/// At most one log line per interval for a noisy event (rejected
/// datagrams): the line carries how many events it stands for.
#[derive(Clone, Debug)]
pub struct Throttle {
    every: std::time::Duration,
    next: Option<std::time::Instant>,
    pending: u64,
}

impl Throttle {
    /// A throttle letting one line through per `every`.
    pub fn new(every: std::time::Duration) -> Throttle {
        Throttle {
            every,
            next: None,
            pending: 0,
        }
    }

    /// Count one event at `now`; `Some(n)` if a line may be printed now,
    /// standing for `n` events (this one and those suppressed since the last line).
    pub fn event(&mut self, now: std::time::Instant) -> Option<u64> {
        self.pending += 1;
        if self.next.is_some_and(|t| now < t) {
            return None;
        }
        self.next = Some(now + self.every);
        Some(std::mem::take(&mut self.pending))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_throttle_prints_one_line_per_interval_with_the_count() {
        let mut t = Throttle::new(Duration::from_secs(1));
        let t0 = Instant::now();
        assert_eq!(t.event(t0), Some(1));
        let lines: Vec<u64> = (1..10_000u64)
            .filter_map(|i| t.event(t0 + Duration::from_micros(i * 100)))
            .collect();
        assert!(lines.is_empty(), "{lines:?}");
        assert_eq!(t.event(t0 + Duration::from_millis(1000)), Some(10_000));
        assert_eq!(t.event(t0 + Duration::from_millis(1500)), None);
        assert_eq!(t.event(t0 + Duration::from_millis(2001)), Some(2));
    }
}
