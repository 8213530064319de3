//! The XCo settings, one vocabulary for both drivers: the scenario's
//! `[xco]` table and the daemons' `[control]` table use these names, units
//! and defaults, documented here once.
//!
//! | key | unit | default | meaning |
//! |---|---|---|---|
//! | `mode` | — | `timeslice` | directive form: `timeslice`, `ratelimit` or `hybrid` |
//! | `slice_ms` | ms | 2 | timeslice length (also the rate refresh period), 0.01 to 10,000 |
//! | `min_active_us` | µs | 100 | a host active for less than this is not preempted |
//! | `work_conservation` | bool | true | give an unused slice back |
//! | `giveback_hysteresis_us` | µs | 200 | ... once its queue stayed empty this long (longer than an ACK-clocked TCP flow's gaps: RTT plus delayed ACKs) |
//! | `bypass_bytes` | B | 128 | IP packets of at most this size bypass the coordinator (ACKs, pings, control) |
//! | `bypass_flow_bytes` | B | 0 | packets of a flow that has written at most this much bypass (the simulator only: the agent cannot count a flow's bytes) |
//! | `fail_open_ms` | ms | 5 slices | a host backlogged without a directive this long sends uncoordinated until the next directive |
//! | `report_interval_ms` | ms | 4 slices | period of a host's backlog report (its heartbeat too) |
//! | `feedback_timeout_ms` | ms | 1000 | the controller forgets a host silent this long |
//! | `capacity_headroom` | fraction | 0 | share of every link the scheduler keeps for uncoordinated traffic, 0 to 0.5 (not with `timeslice`) |
//! | `directive_lead_us` | µs | 500, at most 3/4 of a slice | the controller decides each slot this long before its boundary and directives carry their start, so a host's gate opens at the boundary (plus one one-way delay) instead of a timer, a decision and a trip later; 0 to 3/4 of a slice; 0 = apply on receipt (`coord::start`) |
//! | `rate_burst_bytes` | B | tc's default for each rate | rate-limit form: depth of each destination's token bucket, as an HTB class's `burst` (`coord::bucket`); 0 = an ideal pacer (never two packets back to back); unset = what tc gives an HTB class with no `burst`, `rate / rate_burst_hz + 1600` (rate in bytes/s); at most 1 GB |
//! | `rate_burst_hz` | Hz | 10^9 | the kernel clock tc's `get_hz()` reads from `/proc/net/psched` when it derives that default: 10^9 on a kernel with high-resolution timers (Linux 2.6.24 on), its HZ (100 to 1000) without them or before; 1 to 10^9; only when `rate_burst_bytes` is unset |
//! | `on_demand` | bool | false | on-demand coordination (`sched::ondemand`): coordinate only links whose demand exceeds their capacity, and on them only large flows; every other pair is sent ungated |
//! | `threshold_bytes` | B | 15000 | on-demand: a V2V flow offering (or holding) at least this much over a report interval is large; 1 to 1 GB |
//! | `congestion_ratio` | fraction | 0.9 | on-demand: a link turns congested when the demand over it reaches this share of its capacity (and its senders could overrun it); calm again below half of it; 0.05 to 1 |
//! | `on_demand_hold_ms` | ms | 100 | on-demand: a congested link turns calm only after its demand stayed below half the ratio this long (hysteresis); 0 to 3,600,000 |
//! | `directive_max_age_ms` | ms | 1 slice | an agent refuses a directive (or ungated set) that may have been signed longer ago, judged from its echo of the agent's own latest message (wire v5, `wire::Echo`); a new controller run's fence includes it; 0.01 to 3,600,000 |
//!
//! The rate-limit form's bucket is the XCo paper's HTB (docs/xco-incast-order.md
//! gives the source lines); the hybrid form's pacing inside a slice stays an
//! ideal pacer (the paper never built that form).
//!
//! The default lead covers the controller's trip to a host as measured on
//! the namespace testbed (docs/slices-on-time.md): timer lateness, the
//! decision, signing and the datagram's trip, with the loaded machine's tail.
//!
//! A driver declares its table with [`xco_settings_table!`], which adds
//! these fields (with their docs) to the driver's own, so a name exists once;
//! [`Settings::resolve`] checks and completes them with errors that name the key.

use super::bucket::{RateBurst, HIGH_RES_HZ};
use super::{Bypass, CoordConfig};
use crate::sched::{Mode, OnDemandConfig, SchedConfig};
use crate::time::Dur;

/// The settings as written (every key optional).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SettingsSpec {
    /// `mode`.
    pub mode: Option<String>,
    /// `slice_ms`.
    pub slice_ms: Option<f64>,
    /// `min_active_us`.
    pub min_active_us: Option<f64>,
    /// `work_conservation`.
    pub work_conservation: Option<bool>,
    /// `giveback_hysteresis_us`.
    pub giveback_hysteresis_us: Option<f64>,
    /// `bypass_bytes`.
    pub bypass_bytes: Option<u64>,
    /// `bypass_flow_bytes`.
    pub bypass_flow_bytes: Option<u64>,
    /// `fail_open_ms`.
    pub fail_open_ms: Option<f64>,
    /// `report_interval_ms`.
    pub report_interval_ms: Option<f64>,
    /// `feedback_timeout_ms`.
    pub feedback_timeout_ms: Option<f64>,
    /// `capacity_headroom`.
    pub capacity_headroom: Option<f64>,
    /// `directive_lead_us`.
    pub directive_lead_us: Option<f64>,
    /// `rate_burst_bytes`.
    pub rate_burst_bytes: Option<u64>,
    /// `rate_burst_hz`.
    pub rate_burst_hz: Option<u64>,
    /// `on_demand`.
    pub on_demand: Option<bool>,
    /// `threshold_bytes`.
    pub threshold_bytes: Option<u64>,
    /// `congestion_ratio`.
    pub congestion_ratio: Option<f64>,
    /// `on_demand_hold_ms`.
    pub on_demand_hold_ms: Option<f64>,
    /// `directive_max_age_ms`.
    pub directive_max_age_ms: Option<f64>,
}

/// A setting that is out of its bounds or does not fit the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingError {
    /// The key, as the user wrote it (without its table).
    pub key: &'static str,
    /// What is wrong and what would be right.
    pub problem: String,
}

/// The settings, checked and completed with their defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Directive form.
    pub mode: Mode,
    /// Timeslice length.
    pub slice: Dur,
    /// Minimum active time before preemption.
    pub min_active: Dur,
    /// Give a slice back after its queue stayed empty this long (`None`: never).
    pub giveback_hysteresis: Option<Dur>,
    /// What bypasses the coordinator.
    pub bypass: Bypass,
    /// Fail open after this long without a directive while backlogged.
    pub fail_open_after: Dur,
    /// Period of backlog reports.
    pub report_interval: Dur,
    /// The controller forgets a host silent this long.
    pub feedback_timeout: Dur,
    /// Share of every link kept free of coordinated traffic.
    pub capacity_headroom: f64,
    /// The controller decides each slot this long before its boundary.
    pub directive_lead: Dur,
    /// Depth of each rate-limited destination's token bucket.
    pub rate_burst: RateBurst,
    /// On-demand coordination (`None`: off, every pair is coordinated).
    pub on_demand: Option<OnDemandConfig>,
    /// An agent refuses a grant that may have been signed longer ago.
    pub directive_max_age: Dur,
}

/// Default `directive_lead_us` (capped at 3/4 of a slice).
pub const DEFAULT_LEAD_US: f64 = 500.0;

/// Longest slice, feedback timeout, fail-open or report period: one hour.
const MAX_MS: f64 = 3_600_000.0;

/// Deepest rate-limit token bucket, bytes (1 GB).
const MAX_BURST_BYTES: u64 = 1_000_000_000;

fn in_range(key: &'static str, v: f64, lo: f64, hi: f64, unit: &str) -> Result<f64, SettingError> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(SettingError {
            key,
            problem: format!("{v} is outside {lo} to {hi} {unit}"),
        })
    }
}

impl Settings {
    /// Check `s` and complete it with the defaults of the table above.
    pub fn resolve(s: &SettingsSpec) -> Result<Settings, SettingError> {
        let mode = match s.mode.as_deref().unwrap_or("timeslice") {
            "timeslice" => Mode::Timeslice,
            "ratelimit" => Mode::RateLimit,
            "hybrid" => Mode::Hybrid,
            m => {
                return Err(SettingError {
                    key: "mode",
                    problem: format!("'{m}' is not one of timeslice, ratelimit, hybrid"),
                })
            }
        };
        let slice_ms = in_range("slice_ms", s.slice_ms.unwrap_or(2.0), 0.01, 10_000.0, "ms")?;
        let ms = |x: f64| Dur::from_ps((x * 1e9).round() as u64);
        let us = |x: f64| Dur::from_ps((x * 1e6).round() as u64);
        let min_active_us = in_range("min_active_us", s.min_active_us.unwrap_or(100.0), 0.0, 1e6, "µs")?;
        let work_conservation = s.work_conservation.unwrap_or(true);
        if !work_conservation && s.giveback_hysteresis_us.is_some() {
            return Err(SettingError {
                key: "giveback_hysteresis_us",
                problem: "applies only with work_conservation = true".into(),
            });
        }
        let hysteresis_us = in_range(
            "giveback_hysteresis_us",
            s.giveback_hysteresis_us.unwrap_or(200.0),
            0.0,
            1e6,
            "µs",
        )?;
        let bypass_bytes = s.bypass_bytes.unwrap_or(128);
        if bypass_bytes > 65_535 {
            return Err(SettingError {
                key: "bypass_bytes",
                problem: format!("{bypass_bytes} is larger than any IP packet (65535)"),
            });
        }
        let fail_open_ms = in_range(
            "fail_open_ms",
            s.fail_open_ms.unwrap_or(5.0 * slice_ms),
            0.01,
            MAX_MS,
            "ms",
        )?;
        let report_ms = in_range(
            "report_interval_ms",
            s.report_interval_ms.unwrap_or(4.0 * slice_ms),
            0.01,
            MAX_MS,
            "ms",
        )?;
        let feedback_ms = in_range(
            "feedback_timeout_ms",
            s.feedback_timeout_ms.unwrap_or(1000.0),
            0.01,
            MAX_MS,
            "ms",
        )?;
        if feedback_ms <= 2.0 * report_ms {
            return Err(SettingError {
                key: "feedback_timeout_ms",
                problem: format!(
                    "{feedback_ms} ms must be longer than two report intervals ({} ms), or the \
                     controller forgets hosts that are only between reports",
                    2.0 * report_ms
                ),
            });
        }
        let capacity_headroom = in_range(
            "capacity_headroom",
            s.capacity_headroom.unwrap_or(0.0),
            0.0,
            0.5,
            "",
        )?;
        if capacity_headroom > 0.0 && mode == Mode::Timeslice {
            return Err(SettingError {
                key: "capacity_headroom",
                problem: "needs mode = \"hybrid\" or \"ratelimit\": a timeslice sends at full line rate, \
                          which headroom would never admit"
                    .into(),
            });
        }
        // the next slot is decided a quarter slice after the one before it
        // started, at the earliest
        let max_lead_us = slice_ms * 750.0;
        let lead_us = in_range(
            "directive_lead_us",
            s.directive_lead_us.unwrap_or(DEFAULT_LEAD_US.min(max_lead_us)),
            0.0,
            max_lead_us,
            "µs (3/4 of a slice: a slot is decided after the one before it started)",
        )?;
        let rate_burst = match (s.rate_burst_bytes, s.rate_burst_hz) {
            (Some(_), Some(_)) => {
                return Err(SettingError {
                    key: "rate_burst_hz",
                    problem: "applies only when rate_burst_bytes is unset (it derives tc's default burst)"
                        .into(),
                })
            }
            (Some(b), None) if b > MAX_BURST_BYTES => {
                return Err(SettingError {
                    key: "rate_burst_bytes",
                    problem: format!("{b} is outside 0 to {MAX_BURST_BYTES} B"),
                })
            }
            (Some(b), None) => RateBurst::Bytes(b),
            (None, hz) => {
                let hz = hz.unwrap_or(HIGH_RES_HZ);
                if !(1..=HIGH_RES_HZ).contains(&hz) {
                    return Err(SettingError {
                        key: "rate_burst_hz",
                        problem: format!(
                            "{hz} is outside 1 to {HIGH_RES_HZ} Hz (a kernel's HZ, or 10^9 with high-resolution timers)"
                        ),
                    });
                }
                RateBurst::Tc { hz }
            }
        };
        let on_demand_keys = [
            ("threshold_bytes", s.threshold_bytes.is_some()),
            ("congestion_ratio", s.congestion_ratio.is_some()),
            ("on_demand_hold_ms", s.on_demand_hold_ms.is_some()),
        ];
        let on_demand = if s.on_demand.unwrap_or(false) {
            let threshold_bytes = s.threshold_bytes.unwrap_or(15_000);
            if !(1..=MAX_BURST_BYTES).contains(&threshold_bytes) {
                return Err(SettingError {
                    key: "threshold_bytes",
                    problem: format!("{threshold_bytes} is outside 1 to {MAX_BURST_BYTES} B"),
                });
            }
            Some(OnDemandConfig {
                threshold_bytes,
                congestion_ratio: in_range(
                    "congestion_ratio",
                    s.congestion_ratio.unwrap_or(0.9),
                    0.05,
                    1.0,
                    "",
                )?,
                window: ms(report_ms),
                hold: ms(in_range(
                    "on_demand_hold_ms",
                    s.on_demand_hold_ms.unwrap_or(100.0),
                    0.0,
                    MAX_MS,
                    "ms",
                )?),
            })
        } else if let Some((key, _)) = on_demand_keys.iter().find(|k| k.1) {
            return Err(SettingError {
                key,
                problem: "applies only with on_demand = true".into(),
            });
        } else {
            None
        };
        let max_age_ms = in_range(
            "directive_max_age_ms",
            s.directive_max_age_ms.unwrap_or(slice_ms),
            0.01,
            MAX_MS,
            "ms",
        )?;
        Ok(Settings {
            directive_max_age: ms(max_age_ms),
            on_demand,
            mode,
            slice: ms(slice_ms),
            min_active: us(min_active_us),
            giveback_hysteresis: work_conservation.then(|| us(hysteresis_us)),
            bypass: Bypass {
                packet_bytes: bypass_bytes as u32,
                flow_bytes: s.bypass_flow_bytes.unwrap_or(0),
            },
            fail_open_after: ms(fail_open_ms),
            report_interval: ms(report_ms),
            feedback_timeout: ms(feedback_ms),
            capacity_headroom,
            directive_lead: us(lead_us),
            rate_burst,
        })
    }

    /// The coordinators' part.
    pub fn coord_config(&self) -> CoordConfig {
        CoordConfig {
            giveback_hysteresis: self.giveback_hysteresis,
            fail_open_after: self.fail_open_after,
            report_interval: self.report_interval,
            rate_burst: self.rate_burst,
            on_demand: self.on_demand.is_some(),
        }
    }

    /// The scheduler's part.
    pub fn sched_config(&self) -> SchedConfig {
        SchedConfig {
            mode: self.mode,
            slice: self.slice,
            min_active: self.min_active,
            feedback_timeout: Some(self.feedback_timeout),
            lead: self.directive_lead,
        }
    }
}

/// Declare a driver's settings table: its own fields plus every XCo setting
/// of [`SettingsSpec`] (same names, types and docs), deserialised by serde
/// with unknown keys refused, and a `settings_spec()` that hands the shared
/// part to [`Settings::resolve`]. The calling crate needs `serde`.
#[macro_export]
macro_rules! xco_settings_table {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident : $t:ty,)* }) => {
        $(#[$m])*
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$fm])* pub $f: $t,)*
            /// Directive form: `timeslice` (default), `ratelimit` or `hybrid`.
            pub mode: Option<String>,
            /// Timeslice length, ms (default 2).
            pub slice_ms: Option<f64>,
            /// A host active for less than this is not preempted, µs (default 100).
            pub min_active_us: Option<f64>,
            /// Give unused slices back (default true).
            pub work_conservation: Option<bool>,
            /// Give a slice back once its queue stayed empty this long, µs (default 200).
            pub giveback_hysteresis_us: Option<f64>,
            /// IP packets of at most this many bytes bypass the coordinator (default 128).
            pub bypass_bytes: Option<u64>,
            /// Packets of a flow that has written at most this many bytes bypass (default 0).
            pub bypass_flow_bytes: Option<u64>,
            /// Backlogged without a directive this long: fail open, ms (default 5 slices).
            pub fail_open_ms: Option<f64>,
            /// Period of backlog reports (the heartbeat), ms (default 4 slices).
            pub report_interval_ms: Option<f64>,
            /// The controller forgets a host silent this long, ms (default 1000).
            pub feedback_timeout_ms: Option<f64>,
            /// Share of each link kept for uncoordinated traffic, 0 to 0.5 (default 0).
            pub capacity_headroom: Option<f64>,
            /// Decide each slot this long before its boundary, µs (default 500, at most 3/4 of a slice; 0: apply on receipt).
            pub directive_lead_us: Option<f64>,
            /// Rate-limit form: token bucket depth per destination, B (default: tc's HTB default for each rate; 0: an ideal pacer).
            pub rate_burst_bytes: Option<u64>,
            /// The kernel clock tc's default burst is derived with, Hz (default 10^9: high-resolution timers).
            pub rate_burst_hz: Option<u64>,
            /// On-demand coordination: coordinate only congested links and large flows (default false).
            pub on_demand: Option<bool>,
            /// On-demand: a flow offering at least this many bytes over a report interval is large, B (default 15000).
            pub threshold_bytes: Option<u64>,
            /// On-demand: a link is congested at this share of its capacity, 0.05 to 1 (default 0.9).
            pub congestion_ratio: Option<f64>,
            /// On-demand: a congested link turns calm after this long below half the ratio, ms (default 100).
            pub on_demand_hold_ms: Option<f64>,
            /// Agents refuse a directive that may have been signed longer ago, ms (default 1 slice).
            pub directive_max_age_ms: Option<f64>,
        }

        impl $name {
            /// The XCo settings of this table, as written.
            pub fn settings_spec(&self) -> $crate::coord::settings::SettingsSpec {
                $crate::coord::settings::SettingsSpec {
                    mode: self.mode.clone(),
                    slice_ms: self.slice_ms,
                    min_active_us: self.min_active_us,
                    work_conservation: self.work_conservation,
                    giveback_hysteresis_us: self.giveback_hysteresis_us,
                    bypass_bytes: self.bypass_bytes,
                    bypass_flow_bytes: self.bypass_flow_bytes,
                    fail_open_ms: self.fail_open_ms,
                    report_interval_ms: self.report_interval_ms,
                    feedback_timeout_ms: self.feedback_timeout_ms,
                    capacity_headroom: self.capacity_headroom,
                    directive_lead_us: self.directive_lead_us,
                    rate_burst_bytes: self.rate_burst_bytes,
                    rate_burst_hz: self.rate_burst_hz,
                    on_demand: self.on_demand,
                    threshold_bytes: self.threshold_bytes,
                    congestion_ratio: self.congestion_ratio,
                    on_demand_hold_ms: self.on_demand_hold_ms,
                    directive_max_age_ms: self.directive_max_age_ms,
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_table() {
        let s = Settings::resolve(&SettingsSpec::default()).unwrap();
        assert_eq!(s.mode, Mode::Timeslice);
        assert_eq!(s.slice, Dur::from_ms(2));
        assert_eq!(s.min_active, Dur::from_us(100));
        assert_eq!(s.giveback_hysteresis, Some(Dur::from_us(200)));
        assert_eq!(
            s.bypass,
            Bypass {
                packet_bytes: 128,
                flow_bytes: 0
            }
        );
        assert_eq!(s.fail_open_after, Dur::from_ms(10), "5 slices");
        assert_eq!(s.report_interval, Dur::from_ms(8), "4 slices");
        assert_eq!(s.feedback_timeout, Dur::from_ms(1000));
        assert_eq!(s.directive_lead, Dur::from_us(500));
        assert_eq!(s.sched_config().lead, Dur::from_us(500));
        assert_eq!(s.rate_burst, RateBurst::Tc { hz: HIGH_RES_HZ });
        assert_eq!(s.coord_config().rate_burst, s.rate_burst);
        let short = Settings::resolve(&SettingsSpec {
            slice_ms: Some(0.5),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(short.directive_lead, Dur::from_us(375), "at most 3/4 of a slice");
        assert_eq!(s.directive_max_age, Dur::from_ms(2), "one slice");
        assert_eq!(s.directive_max_age, crate::control::DIRECTIVE_MAX_AGE);
        assert_eq!(short.directive_max_age, Dur::from_us(500), "one slice");
        let e = Settings::resolve(&SettingsSpec {
            directive_max_age_ms: Some(0.0),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e.key, "directive_max_age_ms");
        let s = Settings::resolve(&SettingsSpec {
            slice_ms: Some(10.0),
            work_conservation: Some(false),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            (s.fail_open_after, s.giveback_hysteresis),
            (Dur::from_ms(50), None)
        );
    }

    #[test]
    fn errors_name_the_key() {
        let bad = |spec: SettingsSpec| Settings::resolve(&spec).unwrap_err();
        let e = bad(SettingsSpec {
            slice_ms: Some(1e-9),
            ..Default::default()
        });
        assert_eq!(e.key, "slice_ms");
        assert!(e.problem.contains("outside 0.01 to 10000 ms"), "{}", e.problem);
        assert_eq!(
            bad(SettingsSpec {
                mode: Some("fast".into()),
                ..Default::default()
            })
            .key,
            "mode"
        );
        assert_eq!(
            bad(SettingsSpec {
                slice_ms: Some(f64::NAN),
                ..Default::default()
            })
            .key,
            "slice_ms"
        );
        assert_eq!(
            bad(SettingsSpec {
                bypass_bytes: Some(1 << 32),
                ..Default::default()
            })
            .key,
            "bypass_bytes"
        );
        assert_eq!(
            bad(SettingsSpec {
                feedback_timeout_ms: Some(0.0),
                ..Default::default()
            })
            .key,
            "feedback_timeout_ms"
        );
        let e = bad(SettingsSpec {
            directive_lead_us: Some(1501.0),
            ..Default::default()
        });
        assert_eq!(e.key, "directive_lead_us");
        assert!(e.problem.contains("outside 0 to 1500"), "{}", e.problem);
        assert_eq!(
            Settings::resolve(&SettingsSpec {
                directive_lead_us: Some(0.0),
                ..Default::default()
            })
            .unwrap()
            .directive_lead,
            Dur::ZERO,
            "0: decide at the boundary, apply on receipt"
        );
        assert_eq!(
            bad(SettingsSpec {
                capacity_headroom: Some(0.2),
                ..Default::default()
            })
            .key,
            "capacity_headroom"
        );
        assert_eq!(
            bad(SettingsSpec {
                work_conservation: Some(false),
                giveback_hysteresis_us: Some(5.0),
                ..Default::default()
            })
            .key,
            "giveback_hysteresis_us"
        );
        assert_eq!(
            bad(SettingsSpec {
                rate_burst_bytes: Some(0),
                rate_burst_hz: Some(250),
                ..Default::default()
            })
            .key,
            "rate_burst_hz",
            "a clock only derives the default burst"
        );
        assert_eq!(
            bad(SettingsSpec {
                rate_burst_hz: Some(0),
                ..Default::default()
            })
            .key,
            "rate_burst_hz"
        );
        assert_eq!(
            bad(SettingsSpec {
                rate_burst_bytes: Some(2_000_000_000),
                ..Default::default()
            })
            .key,
            "rate_burst_bytes"
        );
    }

    #[test]
    fn on_demand_is_off_by_default_and_its_keys_need_it() {
        assert_eq!(
            Settings::resolve(&SettingsSpec::default()).unwrap().on_demand,
            None
        );
        assert!(
            !Settings::resolve(&SettingsSpec::default())
                .unwrap()
                .coord_config()
                .on_demand
        );
        let on = Settings::resolve(&SettingsSpec {
            on_demand: Some(true),
            ..Default::default()
        })
        .unwrap();
        let c = on.on_demand.clone().unwrap();
        assert_eq!((c.threshold_bytes, c.congestion_ratio), (15_000, 0.9));
        assert_eq!(
            c.window, on.report_interval,
            "demand is measured over a report interval"
        );
        assert_eq!(c.hold, Dur::from_ms(100));
        assert!(on.coord_config().on_demand);
        let bad = |spec: SettingsSpec| Settings::resolve(&spec).unwrap_err().key;
        assert_eq!(
            bad(SettingsSpec {
                threshold_bytes: Some(1000),
                ..Default::default()
            }),
            "threshold_bytes",
            "without on_demand"
        );
        assert_eq!(
            bad(SettingsSpec {
                on_demand: Some(true),
                congestion_ratio: Some(1.5),
                ..Default::default()
            }),
            "congestion_ratio"
        );
        assert_eq!(
            bad(SettingsSpec {
                on_demand: Some(true),
                threshold_bytes: Some(0),
                ..Default::default()
            }),
            "threshold_bytes"
        );
    }

    #[test]
    fn rate_burst_is_tcs_default_unless_given() {
        let with = |b: Option<u64>, hz: Option<u64>| {
            Settings::resolve(&SettingsSpec {
                rate_burst_bytes: b,
                rate_burst_hz: hz,
                ..Default::default()
            })
            .unwrap()
            .coord_config()
            .rate_burst
        };
        assert_eq!(with(Some(0), None), RateBurst::PACER);
        assert_eq!(with(Some(9038), None).bytes(1_000_000), 9038);
        // the same function the coordinator charges with, for both drivers
        assert_eq!(
            with(None, None).bytes(62_500_000),
            super::super::bucket::tc_default_burst_bytes(62_500_000, 1_000_000_000)
        );
        assert_eq!(with(None, Some(250)).bytes(200_000_000), 101_600);
    }
}
