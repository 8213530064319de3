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
