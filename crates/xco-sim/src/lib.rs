//! # xco-sim — a fast packet-level simulator of data-center fabrics
//!
//! Layers, bottom to top (each a module):
//! - [`engine`] — integer-time event queue ordered by `(time, seq)`.
//! - [`net`] — packets (pooled, headers only), output-queued ports with
//!   pluggable queue disciplines, links, switches, topologies, routing.
//! - [`ctx`] — the context handed down to every layer: clock, events, network.
//! - [`tcp`] and [`udp`] — transports: RFC 5681/6582/6298 TCP with a
//!   congestion-control trait; UDP messages split into fragments. TCP sends
//!   through the host stack's interface ([`tcp::host::TcpHost`]) and raises
//!   notes for applications ([`tcp::note::AppNote`]).
//! - [`host`] — the host stack between transports and the NIC: egress (with
//!   a gate where XCo's coordinator sits, [`host::Coordinator`]) and receive
//!   (delivery to TCP and UDP sockets, then notes to applications).
//! - [`xco`] — XCo: the controller (the `xco-core` scheduler) on a host and a
//!   local coordinator in every coordinated host's egress gate.
//! - [`app`] — traffic: incast and striped reads, bulk transfers, short-flow
//!   sequences, pings, UDP sources.
//! - [`sim`] — the driver on top that pops events and hands them out; nothing
//!   below it imports it. [`control`] stops it from another thread and reads
//!   its progress.
//!
//! Each layer imports only itself and the layers below:
//! `python3 scripts/import_graph.py` measures it (`docs/architecture.md`).
//! - [`scenario`] — TOML scenario files, validated with errors that name the
//!   field, turned into a [`sim::Sim`].
//! - [`output`] — CSV tables, `meta.json`, pcap captures.
//! - [`bench`](mod@bench) — the benchmark workloads behind `xco bench sim`.
//!
//! Speed habits (from htsim): picosecond integer time; at most one pending
//! event per busy element; packets recycled from a pool and never carrying
//! payload bytes; routes precomputed per flow so forwarding is an array read;
//! no allocation or logging on the packet path.

pub mod app;
pub mod bench;
pub mod control;
pub mod ctx;
pub mod engine;
pub mod host;
pub mod net;
pub mod output;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod tcp;
pub mod udp;
pub mod xco;

pub use scenario::{run_scenario, RunOutput, ScenarioError};
