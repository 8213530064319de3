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
//! Shared layers: [`config`] (the topology file both read), [`keys`] (key
//! files: the controller's master secret, one agent key per host),
//! [`channel`] (a UDP socket; what its datagrams mean is
//! `xco_core::control`'s, the protocol both daemons drive), [`intake`] (how
//! many datagrams a loop reads per tick: a flood cannot starve its timers),
//! [`runtime`]
//! (one-thread epoll loop with a nanosecond timerfd and signalfd), [`http`]
//! (`/metrics` and `/healthz`, off the event loop), [`log`] (logfmt lines on
//! stderr, throttled where the network could flood them).

pub mod agent;
pub mod channel;
pub mod config;
pub mod controller;
pub mod http;
pub mod intake;
pub mod keys;
pub mod log;
pub mod runtime;
