//! The daemons' HTTP endpoints: `GET /metrics` (OpenMetrics text from
//! `prometheus-client`, [`prom`]) and `GET /healthz`, served by [`server`] (hyper on a
//! runtime thread of its own, apart from the daemon's event loop).

pub mod prom;
pub mod server;

pub use prom::{Histogram, Kind, Labels, Prom, Value};
pub use server::HttpServer;
