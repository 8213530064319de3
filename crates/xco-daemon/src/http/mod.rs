//! The daemons' HTTP endpoints: `GET /metrics` (Prometheus text format
//! 0.0.4, [`prom`]) and `GET /healthz`, served by [`server`] (hyper on a
//! runtime thread of its own, apart from the daemon's event loop).

pub mod prom;
pub mod server;

pub use prom::{Histogram, Prom};
pub use server::HttpServer;
