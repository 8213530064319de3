//! Applications: the traffic of a scenario.
//!
//! An application reacts to three things: its start, notes from the
//! transports ([`AppNote`], raised by TCP and the host stack: connected,
//! bytes delivered, everything acked, ping reply) and its own timers. [`App`] dispatches over the implemented
//! kinds with a `match`. Each kind reports a summary of metrics at the end.

mod bulk;
mod incast;
pub mod messages;
mod ping;
mod short_flows;
mod udp_source;
pub mod web_fanin;

pub use bulk::{bulk_config, Bulk, BulkConfig};
pub use incast::{Incast, IncastConfig};
pub use ping::{Ping, PingConfig};
pub use short_flows::{ShortFlows, ShortFlowsConfig};
pub use udp_source::{UdpConfig, UdpSource};
pub use web_fanin::{WebFanin, WebFaninConfig};

pub use crate::tcp::note::AppNote;

use crate::ctx::Ctx;
use crate::tcp::table::TcpTable;
use crate::xco::Stack;

/// What an application may use.
pub struct Env<'a> {
    /// Clock, events, network.
    pub cx: &'a mut Ctx,
    /// The host stack (UDP sockets, TCP settings, the host model).
    pub stack: &'a mut Stack,
    /// TCP endpoints.
    pub tcp: &'a mut TcpTable,
}

/// One named metric of an app's summary; NaN when there is nothing to measure
/// (no round finished, no reply came back), written as an empty cell.
pub type Metric = (&'static str, f64);

/// `bits` over `secs` in Mbit/s, or NaN for an empty interval.
pub(crate) fn mbps(bytes: f64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes * 8.0 / secs / 1e6
    } else {
        f64::NAN
    }
}

/// What an application will ask of the simulator over a run, counted before
/// it starts (the cost estimate of `xco sim check`, `scenario::estimate`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Demand {
    /// TCP connections it opens, at most.
    pub tcp_connections: u64,
    /// Flows other than TCP (a UDP source's, a ping's).
    pub other_flows: u64,
    /// Application bytes it hands to its transports, at most (a sender
    /// without a byte count: its host's line rate until the run's end).
    pub bytes: f64,
    /// The least time its bytes take at its hosts' line rates, seconds: a
    /// run that ends when its apps finish lasts at least this long.
    pub busy_s: f64,
    /// Rows it adds to `samples.csv`, at most.
    pub samples: u64,
    /// Its flows that carry application bytes, counted over the run as the
    /// time series counts them (a flow has a row in every bin after its
    /// first byte): flows opened as the run goes count about half.
    pub data_flows: f64,
    /// It sends whatever the network takes (UDP): buffers may fill with its packets.
    pub unresponsive: bool,
    /// TCP connections open at the same time, at most.
    pub concurrent: u64,
    /// Application bytes its connections have in flight at once, at most
    /// (`f64::INFINITY`: as much as TCP's windows allow).
    pub flight_bytes: f64,
}

/// What an application's [`Demand`] depends on.
pub struct DemandCx<'a> {
    /// The latest simulated time the run may reach, seconds.
    pub until_s: f64,
    /// Line rate of each node's NIC, bits per second (0 for a switch).
    pub nic_bps: &'a [u64],
}

impl DemandCx<'_> {
    /// Bytes host `node` sends at line rate in `secs`.
    pub fn line_bytes(&self, node: u32, secs: f64) -> f64 {
        self.nic_bps[node as usize] as f64 * secs / 8.0
    }

    /// Seconds `bytes` take at host `node`'s line rate.
    pub fn line_secs(&self, node: u32, bytes: f64) -> f64 {
        bytes * 8.0 / (self.nic_bps[node as usize].max(1) as f64)
    }
}

/// What every application does. A new kind is its running state and an
/// implementation of this trait in one file here, plus one arm in [`App`];
/// its scenario spec (a serde struct read from `[[apps]]`) is a file of
/// `scenario/apps/` and one arm in the scenario's kind table (`scenario::apps`).
///
/// An application may own endpoints on several hosts: the incast client and
/// its servers are one app. An app that receives on one connection and
/// forwards on another (an aggregator) opens both in `start`, hears
/// [`AppNote::Delivered`] for the one and writes to the other with
/// `env.tcp.write` (see `tests/apps.rs` for a two-level aggregation tree).
pub trait Application {
    /// Kind name for output (`incast`, `bulk`, ...).
    fn kind(&self) -> &'static str;
    /// The app's start time arrived.
    fn start(&mut self, env: &mut Env) -> Result<(), String>;
    /// A transport note for this app.
    fn on_note(&mut self, env: &mut Env, note: AppNote) -> Result<(), String>;
    /// A timer of this app fired (token 0 is reserved for the start).
    fn on_timer(&mut self, env: &mut Env, token: u32) -> Result<(), String>;
    /// True when the app has a defined end and reached it.
    fn finished(&self) -> bool;
    /// True when the app would run forever (it then needs a scenario duration).
    fn endless(&self) -> bool;
    /// Headline metrics at the end of the run (NaN for a statistic of nothing).
    fn summary(&self, cx: &Ctx) -> Vec<Metric>;
    /// Per-round or per-sample records, if the app keeps any: (x, value) pairs.
    fn samples(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    /// What it will ask of the simulator over the run, at most (the default:
    /// nothing known, for apps defined outside this crate).
    fn demand(&self, _cx: &DemandCx) -> Demand {
        Demand::default()
    }
    /// Tables of its own to write beside the run's (file name, CSV text), if any.
    fn tables(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

/// The application kinds: a `match` for the built-in ones (no virtual call on
/// the note path), and [`App::Custom`] for any other [`Application`].
pub enum App {
    /// Barrier-synchronised fan-in (also striped block reads).
    Incast(Incast),
    /// One long TCP transfer (bulk or fixed-size).
    Bulk(Bulk),
    /// K parallel sequences of short TCP transfers.
    ShortFlows(ShortFlows),
    /// ICMP echo probes.
    Ping(Ping),
    /// UDP messages at a rate or flat out.
    Udp(UdpSource),
    /// Web fan-in: front-ends reading many small objects (SICC's workload).
    WebFanin(Box<WebFanin>),
    /// An application defined outside this crate (a test's aggregator, a tool's workload).
    Custom(Box<dyn Application + Send>),
}

macro_rules! each_app {
    ($self:ident, $a:ident => $e:expr) => {
        match $self {
            App::Incast($a) => $e,
            App::Bulk($a) => $e,
            App::ShortFlows($a) => $e,
            App::Ping($a) => $e,
            App::Udp($a) => $e,
            App::WebFanin($a) => $e,
            App::Custom($a) => $e,
        }
    };
}

impl App {
    /// The app's start time arrived.
    pub fn start(&mut self, env: &mut Env) -> Result<(), String> {
        each_app!(self, a => a.start(env))
    }
    /// A transport note for this app.
    pub fn on_note(&mut self, env: &mut Env, note: AppNote) -> Result<(), String> {
        each_app!(self, a => a.on_note(env, note))
    }
    /// A timer of this app fired (token 0 is reserved for the start).
    pub fn on_timer(&mut self, env: &mut Env, token: u32) -> Result<(), String> {
        each_app!(self, a => a.on_timer(env, token))
    }
    /// True when the app has a defined end and reached it.
    pub fn finished(&self) -> bool {
        each_app!(self, a => a.finished())
    }
    /// True when the app would run forever (it then needs a scenario duration).
    pub fn endless(&self) -> bool {
        each_app!(self, a => a.endless())
    }
    /// Kind name for output.
    pub fn kind(&self) -> &'static str {
        each_app!(self, a => a.kind())
    }
    /// Headline metrics at the end of the run (`now` = end time).
    pub fn summary(&self, cx: &Ctx) -> Vec<Metric> {
        each_app!(self, a => a.summary(cx))
    }
    /// Per-round or per-sample records, if the app keeps any: (x, value) pairs.
    pub fn samples(&self) -> Vec<(f64, f64)> {
        each_app!(self, a => a.samples())
    }
    /// What it will ask of the simulator over the run, at most.
    pub fn demand(&self, cx: &DemandCx) -> Demand {
        each_app!(self, a => a.demand(cx))
    }
    /// Tables of its own to write beside the run's (file name, CSV text).
    pub fn tables(&self) -> Vec<(&'static str, String)> {
        each_app!(self, a => a.tables())
    }
}

/// Mean of a slice (NaN when empty: a statistic of nothing is no number, never 0).
pub(crate) fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        f64::NAN
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// The q-quantile (nearest rank) of a slice (NaN when empty).
pub(crate) fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}
