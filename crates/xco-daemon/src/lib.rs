//! # xco-daemon — the real XCo on Linux
//!
//! Two daemons around the sans-IO core (`xco-core`):
//!
//! - [`controller`] — drives `xco_core::sched::Scheduler` from a monotonic
//!   clock, speaks the control protocol on UDP, serves Prometheus metrics.
//! - [`agent`] — one per host: intercepts the host's (and its guests')
//!   outgoing traffic, holds it per destination host, and releases it as
//!   `xco_core::coord::Coordinator` decides from the controller's directives.
//!
//! Shared layers: [`config`] (the topology file both read), [`channel`]
//! (signed, replay-checked UDP), [`runtime`] (one-thread epoll loop with a
//! nanosecond timerfd and signalfd), [`log`] (logfmt lines on stderr).

pub mod agent;
pub mod channel;
pub mod config;
pub mod controller;
pub mod log;
pub mod runtime;
