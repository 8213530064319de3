//! The simulator's integration tests: one binary, one module per concern.

mod support;

mod apps;
mod conservation;
mod determinism;
mod drop_runs;
mod engine;
mod estimate;
mod golden;
mod host_model;
mod host_tsq;
mod incast;
mod messages;
mod outputs;
mod pdn;
mod ports;
mod queues;
mod routing;
mod run_control;
mod scenario_errors;
mod sharing;
mod tcp_cubic;
mod tcp_dctcp;
mod tcp_dsack;
mod tcp_hystart;
mod tcp_limited_transmit;
mod tcp_pacing;
mod tcp_profiles;
mod tcp_rack;
mod tcp_reactions;
mod tcp_sack;
mod tcp_seams;
mod tcp_select;
mod tcp_tlp;
mod timing_noise;
mod xco;
