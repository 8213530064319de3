//! Web fan-in (`[[apps]] kind = "web_fanin"`): front-ends that read many
//! small objects from many data servers per request, the SICC paper's
//! workload (`shared/spec/sicc.md`), under one of the methods below.
//!
//! A catalogue of objects (sizes uniform in [min, max] bytes) has each
//! object on `replicas` distinct servers drawn at random. A request is Q
//! distinct objects drawn at random; each is asked of one of its holders
//! (drawn at random, never the front-end itself). A front-end issues its
//! requests back to back: the next starts when the last object of the
//! previous has arrived. Every message travels on the persistent
//! connections of [`super::messages`] (a query: a header plus 8 B per
//! object named; an object: its size).
//!
//! Methods:
//! - `one_all`: the front-end queries every target server at once; each
//!   answers all its objects at once.
//! - `sw`: the front-end queries at most w target servers at once
//!   (`xco_core::sicc::SlidingWindow`: +1 per complete response, halved on a
//!   response that took at least the connection's RTO_min since its query
//!   left, i.e. waited out a retransmission timeout, once per window; w
//!   carries over). The front-end reads only its own clock and settings.
//! - `sicc`, `sicc-nps`, `sicc-nmt`: swarms per rack, hub = most objects,
//!   Algorithm 1's tree with N = M / m hubs per request (eq 1 from the
//!   front-end's edge port), SICC-NPS and SICC-NMT its ablations
//!   (`xco_core::sicc::AggTree`). The front-end sends each root hub one
//!   query covering its subtree; a hub passes each child hub its subtree's
//!   query and each swarm member its objects' query, sends its own objects to
//!   its parent, then forwards every object a member or child delivers as it
//!   arrives (continuous forwarding). Packet compression: whatever a hub may
//!   send at once it packs, in order, into writes of at most one MSS (one
//!   message each, so one TCP segment while the window is open);
//!   `compression = false` writes every object as its own message.
//! - `ictcp`: as `one_all`, with each front-end connection's advertised
//!   window set by ICTCP (`ictcp.rs`).
//! - Speed control (eqs 2–6, `sicc-nssc` without), query redirection
//!   (eqs 7–8, `redirect.rs`, `sicc-nqr` without), the overloaded-hub model
//!   and hub failover: see docs/sicc.md.
//!
//! Outputs: `requests.csv` (one row per request) and `queries.csv` (one row
//! per query, up to a row limit), through [`super::Application::tables`].

mod hubs;
mod ictcp;
mod pacing;
mod place;
mod redirect;
mod speed;

use pacing::HubSender;

pub use place::Placement;

use super::messages::{ConnPool, Messages};
use super::{mean, quantile, AppNote, Application, Demand, DemandCx, Env, Metric};
use crate::ctx::Ctx;
use std::collections::HashMap;
use std::collections::VecDeque;
use std::fmt::Write as _;
use xco_core::sicc::{
    AggTree, QueueReport, SlidingWindow, SpeedConfig, SpeedControl, SwConfig, UplinkReading,
};
use xco_core::{Dur, Rng, Time};

/// Timer tokens (below 2^28, the event queue's limit): kind in bits 25..28, payload below.
const KIND_SHIFT: u32 = 25;
const PERIOD: u32 = 1;
const REPORT: u32 = 2;
const SEND: u32 = 3;
const PAYLOAD: u32 = (1 << KIND_SHIFT) - 1;
/// No root hub owes the object.
const NONE: u32 = u32::MAX;

/// How a front-end fetches a request's objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Query every target server at once.
    OneAll,
    /// A sliding window of target servers queried at once.
    Sw,
    /// Every target at once, each connection's advertised window set by ICTCP.
    Ictcp,
    /// Swarms, hubs and Algorithm 1's tree.
    Sicc {
        /// Rule 1 (false: SICC-NPS, children at random across the data center).
        proximity: bool,
        /// Algorithm 1's tree (false: SICC-NMT, every hub to the front-end).
        multi_tree: bool,
        /// Two-level speed control (false: SICC-NSSC).
        speed: bool,
        /// Query redirection (false: SICC-NQR).
        redirect: bool,
    },
}

impl Method {
    /// The method's name as written in the scenario and the outputs.
    pub fn name(self) -> &'static str {
        match self {
            Method::OneAll => "one_all",
            Method::Sw => "sw",
            Method::Ictcp => "ictcp",
            Method::Sicc {
                proximity: true,
                multi_tree: true,
                speed: true,
                redirect: true,
            } => "sicc",
            Method::Sicc { proximity: false, .. } => "sicc-nps",
            Method::Sicc {
                multi_tree: false, ..
            } => "sicc-nmt",
            Method::Sicc { speed: false, .. } => "sicc-nssc",
            Method::Sicc { redirect: false, .. } => "sicc-nqr",
        }
    }
}

/// Configuration of a web fan-in app.
#[derive(Clone, Debug)]
pub struct WebFaninConfig {
    /// Data server host nodes (every host of the topology).
    pub servers: Vec<u32>,
    /// Front-end host nodes (each also a data server).
    pub front_ends: Vec<u32>,
    /// Objects in the catalogue.
    pub objects: u32,
    /// Copies of each object, on distinct servers.
    pub replicas: u32,
    /// Smallest object, bytes.
    pub object_min_bytes: u32,
    /// Largest object, bytes.
    pub object_max_bytes: u32,
    /// Objects per request (Q).
    pub queries: u32,
    /// Requests per front-end, back to back.
    pub requests: u32,
    /// The method.
    pub method: Method,
    /// Bytes of a query message besides its objects.
    pub query_header_bytes: u32,
    /// Bytes per object named in a query.
    pub query_object_bytes: u32,
    /// SICC: s of eq 1, bytes.
    pub mean_packet_bytes: u32,
    /// SICC: how eq 1's uplink becomes a number.
    pub uplink_reading: UplinkReading,
    /// SICC: N given outright (None: eq 1 with m = 1).
    pub hubs_per_request: Option<u32>,
    /// SICC: the hub of the largest swarm fails at every request, before it is asked (the backup takes over).
    pub fail_largest_hub: bool,
    /// Rows of `queries.csv` at most.
    pub max_query_rows: u64,
    /// SICC: speed control's settings (period, alpha, beta, T).
    pub speed: SpeedConfig,
    /// A hub is overloaded with this probability, ppm (drawn per hub and request).
    pub overload_ppm: u32,
    /// An overloaded hub sends at this fraction of its assigned rate (or of its line rate without one), ppm.
    pub overload_fraction_ppm: u32,
    /// SICC: a hub packs the objects it may send into messages of at most
    /// one MSS, each written at once (packet compression); false: every
    /// object is its own message, sent as soon as its rate allows.
    pub compression: bool,
    /// Where the servers sit.
    pub place: Placement,
}

/// A message of the web fan-in.
#[derive(Clone, Debug)]
enum Msg {
    /// Answer each of front-end `fe`'s request objects `idx` to host `reply_to`.
    Query {
        fe: u32,
        req: u32,
        idx: Vec<u32>,
        reply_to: u32,
    },
    /// Be hub `hub` of front-end `fe`'s request tree, sending at `rate_bps` (0: as TCP allows).
    HubQuery {
        fe: u32,
        req: u32,
        hub: u32,
        rate_bps: u64,
    },
    /// Speed control: send at `rate_bps` from now on.
    Rate { fe: u32, req: u32, rate_bps: u64 },
    /// Redirection, to a root hub: hand object `idx` to root hub `to_hub` (at `to_hub_server`), asked of `to_server`.
    Release {
        fe: u32,
        req: u32,
        idx: u32,
        to_hub: u32,
        to_hub_server: u32,
        to_server: u32,
    },
    /// Redirection, to the front-end: whether object `idx` moved (false: it was already sent).
    Released {
        fe: u32,
        req: u32,
        idx: u32,
        to_hub: u32,
        moved: bool,
    },
    /// Redirection, to the new root hub: forward object `idx`, asked of `server`.
    Adopt {
        fe: u32,
        req: u32,
        idx: u32,
        server: u32,
    },
    /// Object `idx` of front-end `fe`'s request `req`.
    Object { fe: u32, req: u32, idx: u32 },
    /// Objects `idx` of front-end `fe`'s request `req`, packed by a hub into one write of at most one MSS.
    Batch { fe: u32, req: u32, idx: Vec<u32> },
}

/// One front-end's current request.
struct FrontEnd {
    host: u32,
    req: u32,
    start: Time,
    /// Per request object: catalogue id.
    objs: Vec<u32>,
    /// Per request object: the server asked.
    asked: Vec<u32>,
    /// Per request object: arrivals so far.
    got: Vec<u32>,
    left: u32,
    /// Target servers in ascending order, and each one's request objects.
    targets: Vec<u32>,
    target_objs: Vec<Vec<u32>>,
    /// Per request object: its target's index.
    target_of: Vec<u32>,
    /// SW: objects each target still owes, and when its query left.
    owed: Vec<u32>,
    asked_at: Vec<Time>,
    /// SW: responses that came back late enough to have met a timeout (losses it inferred).
    sw_losses: u64,
    sw: SlidingWindow,
    /// SICC: the tree, each hub's server, and each hub server's parent server.
    tree: AggTree,
    parent_of: HashMap<u32, u32>,
    hub_index: HashMap<u32, u32>,
    failovers: u64,
    /// Per request object: asked of a replica straight from the front-end after a hub failed.
    refetched: Vec<bool>,
    /// SICC: per request object, the root hub position whose stream owes it (`NONE`: asked directly).
    owner: Vec<u32>,
    /// Redirection: per request object, whether it was moved; bytes per root hub this period;
    /// each rack's root hub position; when the period began; moves in this request.
    moved: Vec<bool>,
    period_bytes: Vec<u64>,
    rack_root: HashMap<u32, u32>,
    period_start: Time,
    redirects: u64,
    failed_server: u32,
    /// SICC: per hub, whether it is overloaded in this request.
    overloaded: Vec<bool>,
    /// Speed control: the state, each root hub's position by server, what each still owes.
    sc: Option<SpeedControl>,
    root_pos: HashMap<u32, u32>,
    root_servers: Vec<u32>,
    root_left: Vec<u64>,
    /// Queue reports travelling toward the front-end (arrive in order).
    reports: VecDeque<QueueReport>,
    /// Ports into the front-end's rack from above, and the report's travel time.
    agg_ports: Vec<u32>,
    report_delay: Dur,
    rate_msgs: u64,
    /// ICTCP's receiver and its connections.
    ictcp: Option<ictcp::FeIctcp>,
    /// Counters when the request started.
    uplink_pkts0: u64,
    fe_pkts0: u64,
    fe_bytes0: u64,
    timeouts0: u64,
    done: bool,
}

/// The running application.
pub struct WebFanin {
    id: u32,
    cfg: WebFaninConfig,
    rng: Rng,
    size_bytes: Vec<u32>,
    holders: Vec<u32>,
    perm: Vec<u32>,
    fes: Vec<FrontEnd>,
    msgs: Messages<Msg>,
    pool: ConnPool,
    buf: Vec<Msg>,
    requests_csv: String,
    queries_csv: String,
    query_rows: u64,
    latencies_us: Vec<f64>,
    duplicates: u64,
    stale_dropped: u64,
    n: u32,
    senders: Vec<Option<HubSender>>,
    /// Redirected objects a hub drops when they reach it: (front-end, request, object, hub host).
    dropped: std::collections::HashSet<(u32, u32, u32, u32)>,
    redirector: xco_core::sicc::Redirector,
    free_senders: Vec<usize>,
    sender_of: HashMap<(u32, u32), usize>,
    ready: Vec<(u32, u32)>,
}

impl WebFanin {
    /// A web fan-in app with id `id` drawing from `rng`.
    pub fn new(id: u32, cfg: WebFaninConfig, rng: Rng) -> WebFanin {
        let fes = cfg
            .front_ends
            .iter()
            .map(|&host| FrontEnd {
                host,
                req: 0,
                start: Time::ZERO,
                objs: Vec::new(),
                asked: Vec::new(),
                got: Vec::new(),
                left: 0,
                targets: Vec::new(),
                target_objs: Vec::new(),
                target_of: Vec::new(),
                owed: Vec::new(),
                asked_at: Vec::new(),
                sw_losses: 0,
                sw: SlidingWindow::new(SwConfig::default()),
                tree: AggTree::new(),
                parent_of: HashMap::new(),
                hub_index: HashMap::new(),
                failovers: 0,
                refetched: Vec::new(),
                owner: Vec::new(),
                moved: Vec::new(),
                period_bytes: Vec::new(),
                rack_root: HashMap::new(),
                period_start: Time::ZERO,
                redirects: 0,
                failed_server: u32::MAX,
                overloaded: Vec::new(),
                sc: None,
                root_pos: HashMap::new(),
                root_servers: Vec::new(),
                root_left: Vec::new(),
                reports: VecDeque::new(),
                agg_ports: Vec::new(),
                report_delay: Dur::ZERO,
                rate_msgs: 0,
                ictcp: None,
                uplink_pkts0: 0,
                fe_pkts0: 0,
                fe_bytes0: 0,
                timeouts0: 0,
                done: false,
            })
            .collect();
        WebFanin {
            id,
            cfg,
            rng,
            size_bytes: Vec::new(),
            holders: Vec::new(),
            perm: Vec::new(),
            fes,
            msgs: Messages::new(),
            pool: ConnPool::new(),
            buf: Vec::new(),
            requests_csv: String::from(
                "method,front_end,request,queries,targets,hubs,tree_depth,latency_us,inter_rack_packets,packets,bytes,timeouts,failovers,redirected\n",
            ),
            queries_csv: String::from("method,front_end,request,query,latency_us\n"),
            query_rows: 0,
            latencies_us: Vec::new(),
            duplicates: 0,
            stale_dropped: 0,
            n: 0,
            senders: Vec::new(),
            dropped: std::collections::HashSet::new(),
            redirector: xco_core::sicc::Redirector::new(),
            free_senders: Vec::new(),
            sender_of: HashMap::new(),
            ready: Vec::new(),
        }
    }

    /// Draw the catalogue: sizes and distinct replica holders.
    fn draw_catalogue(&mut self) {
        let c = &self.cfg;
        let (lo, hi) = (c.object_min_bytes as u64, c.object_max_bytes as u64);
        let servers = c.servers.len() as u64;
        let r = c.replicas as usize;
        self.size_bytes = (0..c.objects)
            .map(|_| self.rng.range_inclusive(lo, hi) as u32)
            .collect();
        self.holders = Vec::with_capacity(c.objects as usize * r);
        for _ in 0..c.objects {
            let first = self.holders.len();
            while self.holders.len() < first + r {
                let s = c.servers[self.rng.below(servers) as usize];
                if !self.holders[first..].contains(&s) {
                    self.holders.push(s);
                }
            }
        }
        self.perm = (0..c.objects).collect();
    }

    fn ep(&mut self, env: &mut Env, from: u32, to: u32) -> Result<u32, String> {
        self.pool.endpoint(env, self.id, from, to)
    }

    fn query_bytes(&self, objects: u64) -> u64 {
        self.cfg.query_header_bytes as u64 + self.cfg.query_object_bytes as u64 * objects
    }

    fn send(&mut self, env: &mut Env, from: u32, to: u32, bytes: u64, m: Msg) -> Result<(), String> {
        let ep = self.ep(env, from, to)?;
        self.msgs.send(env, ep, bytes, m);
        Ok(())
    }

    fn port_counts(&self, env: &Env, fe: usize) -> (u64, u64, u64, u64) {
        let ports = &env.cx.net.ports;
        let up: u64 = self
            .cfg
            .place
            .uplink_ports
            .iter()
            .map(|&p| ports[p as usize].stats.arrived_packets)
            .sum();
        let d = &ports[self.cfg.place.down_port[self.fes[fe].host as usize] as usize].stats;
        let timeouts: u64 = env
            .cx
            .net
            .flows
            .iter()
            .filter(|f| f.app == self.id)
            .map(|f| f.timeouts)
            .sum();
        (up, d.arrived_packets, d.arrived_bytes, timeouts)
    }

    /// Start front-end `fe`'s next request.
    fn begin(&mut self, env: &mut Env, fe: usize) -> Result<(), String> {
        let q = self.cfg.queries as usize;
        let fe_host = self.fes[fe].host;
        // Q distinct objects: a partial shuffle of the catalogue
        let n = self.perm.len();
        let mut objs = std::mem::take(&mut self.fes[fe].objs);
        objs.clear();
        for i in 0..q {
            let j = i + self.rng.below((n - i) as u64) as usize;
            self.perm.swap(i, j);
            objs.push(self.perm[i]);
        }
        // one holder of each, never the front-end
        let r = self.cfg.replicas as usize;
        let mut asked = std::mem::take(&mut self.fes[fe].asked);
        asked.clear();
        for &o in &objs {
            let h = &self.holders[o as usize * r..o as usize * r + r];
            let others = h.iter().filter(|&&s| s != fe_host).count() as u64;
            let mut k = self.rng.below(others);
            let s = *h
                .iter()
                .filter(|&&s| s != fe_host)
                .find(|_| {
                    let hit = k == 0;
                    k = k.wrapping_sub(1);
                    hit
                })
                .expect("an object has a holder besides the front-end");
            asked.push(s);
        }
        let counts = self.port_counts(env, fe);
        let f = &mut self.fes[fe];
        f.objs = objs;
        f.asked = asked;
        f.got.clear();
        f.got.resize(q, 0);
        f.left = q as u32;
        f.start = env.cx.now;
        (f.uplink_pkts0, f.fe_pkts0, f.fe_bytes0, f.timeouts0) = counts;
        // targets: distinct servers asked, ascending, with their objects
        let mut order: Vec<u32> = (0..q as u32).collect();
        order.sort_by_key(|&i| (f.asked[i as usize], i));
        f.targets.clear();
        f.target_of.clear();
        f.target_of.resize(q, 0);
        let mut used = 0;
        for &i in &order {
            let s = f.asked[i as usize];
            if f.targets.last() != Some(&s) {
                f.targets.push(s);
                if f.target_objs.len() < f.targets.len() {
                    f.target_objs.push(Vec::new());
                }
                f.target_objs[f.targets.len() - 1].clear();
                used = f.targets.len();
            }
            f.target_objs[used - 1].push(i);
            f.target_of[i as usize] = (used - 1) as u32;
        }
        let req = f.req;
        match self.cfg.method {
            Method::OneAll => {
                for t in 0..self.fes[fe].targets.len() {
                    self.ask_target(env, fe, t, fe_host)?;
                }
            }
            Method::Ictcp => {
                for t in 0..self.fes[fe].targets.len() {
                    let server = self.fes[fe].targets[t];
                    self.ictcp_prepare(env, fe, server)?;
                    self.ask_target(env, fe, t, fe_host)?;
                }
            }
            Method::Sw => {
                let f = &mut self.fes[fe];
                let nt = f.targets.len();
                f.owed.clear();
                f.owed.extend(f.target_objs[..nt].iter().map(|v| v.len() as u32));
                f.asked_at.clear();
                f.asked_at.resize(nt, Time::ZERO);
                f.sw.start(nt as u32);
                self.sw_pump(env, fe)?;
            }
            Method::Sicc {
                proximity,
                multi_tree,
                ..
            } => {
                self.sicc_begin(env, fe, req, proximity, multi_tree)?;
            }
        }
        Ok(())
    }

    /// Query target `t` of front-end `fe` for its objects, answers to `reply_to`.
    fn ask_target(&mut self, env: &mut Env, fe: usize, t: usize, reply_to: u32) -> Result<(), String> {
        let f = &self.fes[fe];
        let server = f.targets[t];
        let idx = f.target_objs[t].clone();
        let m = Msg::Query {
            fe: fe as u32,
            req: f.req,
            idx,
            reply_to,
        };
        let bytes = self.query_bytes(f.target_objs[t].len() as u64);
        self.send(env, reply_to, server, bytes, m)
    }

    fn sw_pump(&mut self, env: &mut Env, fe: usize) -> Result<(), String> {
        while let Some(t) = self.fes[fe].sw.next_query() {
            let host = self.fes[fe].host;
            self.fes[fe].asked_at[t as usize] = env.cx.now;
            self.ask_target(env, fe, t as usize, host)?;
        }
        Ok(())
    }

    fn send_object(
        &mut self,
        env: &mut Env,
        from: u32,
        to: u32,
        fe: usize,
        req: u32,
        i: u32,
    ) -> Result<(), String> {
        let o = self.fes[fe].objs[i as usize];
        let bytes = self.size_bytes[o as usize] as u64;
        self.send(
            env,
            from,
            to,
            bytes,
            Msg::Object {
                fe: fe as u32,
                req,
                idx: i,
            },
        )
    }

    /// Object `i` of front-end `fe`'s request arrived at the front-end.
    fn on_object_at_fe(&mut self, env: &mut Env, fe: usize, i: u32, from: u32) -> Result<(), String> {
        let now = env.cx.now;
        let method = self.cfg.method.name();
        let o = self.fes[fe].objs[i as usize];
        let bytes = self.size_bytes[o as usize] as u64;
        let f = &mut self.fes[fe];
        let via = f.root_pos.get(&from).copied();
        if let Some(k) = via {
            if let Some(b) = f.period_bytes.get_mut(k as usize) {
                *b += bytes;
            }
        }
        if let Some(sc) = &mut f.sc {
            match via {
                Some(k) => sc.on_hub_bytes(k as usize, bytes),
                None => sc.on_other_bytes(bytes),
            }
        }
        if f.got[i as usize] == 0 && matches!(self.cfg.method, Method::Sicc { .. }) {
            let k = f.owner[i as usize];
            if k != NONE {
                f.root_done_one(k);
            }
        }
        if self.cfg.method == Method::Ictcp {
            self.ictcp_on_data(env, fe, from, bytes);
        }
        let f = &mut self.fes[fe];
        f.got[i as usize] += 1;
        if f.got[i as usize] > 1 {
            self.duplicates += 1;
            return Ok(());
        }
        f.left -= 1;
        let lat_us = (now - f.start).as_secs_f64() * 1e6;
        if self.query_rows < self.cfg.max_query_rows {
            self.query_rows += 1;
            let _ = writeln!(self.queries_csv, "{method},{},{},{i},{lat_us:.3}", f.host, f.req);
        }
        if self.cfg.method == Method::Sw {
            let t = f.target_of[i as usize] as usize;
            f.owed[t] -= 1;
            if f.owed[t] == 0 {
                // a loss, as the front-end can tell it: the response took at least
                // its connection's RTO_min, so some segment of it (or of the query)
                // waited out a retransmission timeout
                let (server, host, asked) = (f.targets[t], f.host, f.asked_at[t]);
                let ep = self.pool.endpoint(env, self.id, host, server)?;
                let rto_min = env.stack.tcp.cfg_of(env.tcp.eps[ep as usize].cfg).rto_min;
                let f = &mut self.fes[fe];
                if now.saturating_since(asked) >= rto_min {
                    f.sw_losses += 1;
                    f.sw.on_loss(t as u32);
                }
                f.sw.on_response(t as u32);
                self.sw_pump(env, fe)?;
            }
        }
        if self.fes[fe].left == 0 {
            self.end(env, fe)?;
        }
        Ok(())
    }

    fn end(&mut self, env: &mut Env, fe: usize) -> Result<(), String> {
        let (up, pk, by, to) = self.port_counts(env, fe);
        let f = &mut self.fes[fe];
        let lat_us = (env.cx.now - f.start).as_secs_f64() * 1e6;
        self.latencies_us.push(lat_us);
        let (hubs, depth) = match self.cfg.method {
            Method::Sicc { .. } => (f.tree.hubs().to_string(), f.tree.max_depth().to_string()),
            _ => (String::new(), String::new()),
        };
        let _ = writeln!(
            self.requests_csv,
            "{},{},{},{},{},{hubs},{depth},{lat_us:.3},{},{},{},{},{},{}",
            self.cfg.method.name(),
            f.host,
            f.req,
            f.objs.len(),
            f.targets.len(),
            up - f.uplink_pkts0,
            pk - f.fe_pkts0,
            by - f.fe_bytes0,
            to - f.timeouts0,
            f.failovers,
            f.redirects,
        );
        f.failovers = 0;
        let done_req = f.req;
        f.req += 1;
        // copies still travelling to a hub that would drop them are dropped as stale from now on
        self.dropped
            .retain(|&(x, r, _, _)| !(x == fe as u32 && r == done_req));
        let f = &mut self.fes[fe];
        self.n += 1;
        if f.req >= self.cfg.requests {
            f.done = true;
            return Ok(());
        }
        self.begin(env, fe)
    }

    fn on_msg(&mut self, env: &mut Env, host: u32, from: u32, m: Msg) -> Result<(), String> {
        match m {
            Msg::Query {
                fe,
                req,
                idx,
                reply_to,
            } => {
                for i in idx {
                    self.send_object(env, host, reply_to, fe as usize, req, i)?;
                }
            }
            Msg::HubQuery {
                fe,
                req,
                hub,
                rate_bps,
            } => self.on_hub_query(env, host, fe as usize, req, hub, rate_bps)?,
            Msg::Release {
                fe,
                req,
                idx,
                to_hub,
                to_hub_server,
                to_server,
            } => self.on_release(env, host, fe, req, idx, to_hub, to_hub_server, to_server)?,
            Msg::Released {
                fe,
                req,
                idx,
                to_hub,
                moved,
            } => self.on_released(fe, req, idx, to_hub, moved),
            Msg::Adopt { fe, req, idx, server } => self.on_adopt(env, host, fe, req, idx, server)?,
            Msg::Rate { fe, req, rate_bps } => {
                if req == self.fes[fe as usize].req {
                    if let Some(&slot) = self.sender_of.get(&(fe, host)) {
                        let hub = self.fes[fe as usize].hub_index[&host];
                        let rate = self.hub_rate(env, fe as usize, hub, host, rate_bps);
                        self.senders[slot]
                            .as_mut()
                            .expect("live sender")
                            .set_rate(env.cx.now, rate);
                        self.pump(env, slot)?;
                    }
                }
            }
            Msg::Object { fe, req, idx } => self.on_object(env, host, from, fe, req, idx)?,
            Msg::Batch { fe, req, idx } => {
                for i in idx {
                    self.on_object(env, host, from, fe, req, i)?;
                }
            }
        }
        Ok(())
    }

    /// Object `idx` of front-end `fe`'s request `req` arrived at `host` from `from`:
    /// the front-end takes it, a hub queues it to forward.
    fn on_object(
        &mut self,
        env: &mut Env,
        host: u32,
        from: u32,
        fe: u32,
        req: u32,
        idx: u32,
    ) -> Result<(), String> {
        if self.dropped.remove(&(fe, req, idx, host)) {
            // redirected away while it was on its way to this hub: the new hub sent it
            return Ok(());
        }
        let f = &self.fes[fe as usize];
        if req < f.req && host != f.host {
            // a redirected copy that outlived its request (its hub upstream
            // would have dropped it): nobody waits for it
            self.stale_dropped += 1;
            return Ok(());
        }
        if req != f.req {
            return Err(format!(
                "object {idx} of request {req} arrived at host {host} from {from} during request {}",
                f.req
            ));
        }
        if host == f.host {
            return self.on_object_at_fe(env, fe as usize, idx, from);
        }
        // a hub forwards what its members and children deliver, as it arrives
        let slot = *self
            .sender_of
            .get(&(fe, host))
            .ok_or_else(|| format!("host {host} got an object but is no hub"))?;
        let o = f.objs[idx as usize];
        let b = self.size_bytes[o as usize];
        self.senders[slot].as_mut().expect("live sender").push(idx, b);
        self.pump(env, slot)
    }

    /// The requests finished so far.
    pub fn requests_done(&self) -> u32 {
        self.n
    }

    /// SW: front-end `fe`'s window now (servers queried at once) and the
    /// losses it inferred so far (for tests).
    pub fn sw_state(&self, fe: usize) -> (u32, u64) {
        (self.fes[fe].sw.window(), self.fes[fe].sw_losses)
    }
}

impl FrontEnd {
    /// Root stream `k` owes one object fewer; at none it leaves speed control's H.
    fn root_done_one(&mut self, k: u32) {
        let left = &mut self.root_left[k as usize];
        *left -= 1;
        if *left == 0 {
            if let Some(sc) = &mut self.sc {
                sc.hub_done(k as usize);
            }
        }
    }
}

impl Application for WebFanin {
    fn kind(&self) -> &'static str {
        "web_fanin"
    }
    fn start(&mut self, env: &mut Env) -> Result<(), String> {
        self.draw_catalogue();
        if let Method::Sicc { speed, redirect, .. } = self.cfg.method {
            if speed || redirect {
                self.start_speed_control(env, speed)?;
            }
        }
        for fe in 0..self.fes.len() {
            self.begin(env, fe)?;
        }
        Ok(())
    }
    fn on_note(&mut self, env: &mut Env, note: AppNote) -> Result<(), String> {
        let AppNote::Delivered { ep, bytes, .. } = note else {
            return Ok(());
        };
        let host = env.tcp.eps[ep as usize].host;
        let from = env.tcp.eps[ep as usize].peer_host;
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        self.msgs.on_delivered(ep, bytes, &mut buf);
        let mut r = Ok(());
        for m in buf.drain(..) {
            if r.is_ok() {
                r = self.on_msg(env, host, from, m);
            }
        }
        self.buf = buf;
        r
    }
    fn on_timer(&mut self, env: &mut Env, token: u32) -> Result<(), String> {
        let payload = (token & PAYLOAD) as usize;
        match token >> KIND_SHIFT {
            PERIOD => self.on_period(env, payload),
            REPORT => {
                let f = &mut self.fes[payload];
                if let (Some(r), Some(sc)) = (f.reports.pop_front(), &mut f.sc) {
                    sc.on_queue_report(r);
                }
                Ok(())
            }
            SEND => {
                let now = env.cx.now;
                match self.senders.get_mut(payload).and_then(|s| s.as_mut()) {
                    Some(s) if s.wake_at == now => {
                        s.wake_at = Time::NEVER;
                        self.pump(env, payload)
                    }
                    _ => Ok(()),
                }
            }
            _ => Err(format!("web_fanin: unknown timer {token}")),
        }
    }
    fn finished(&self) -> bool {
        self.fes.iter().all(|f| f.done)
    }
    fn endless(&self) -> bool {
        false
    }
    fn demand(&self, _cx: &DemandCx) -> Demand {
        let reqs = self.cfg.requests as f64 * self.cfg.front_ends.len() as f64;
        let per_req = self.cfg.queries as f64
            * (self.cfg.object_max_bytes as f64 + 2.0 * self.cfg.query_object_bytes as f64);
        // connections open as pairs first talk and stay: a front-end's with the
        // servers it asks (at most every server), and hubs' with members and
        // other hubs (at most every pair within a rack, plus a hub per query)
        let fes = self.cfg.front_ends.len() as u64;
        let asked = (self.cfg.requests as u64).saturating_mul(self.cfg.queries as u64);
        let servers = self.cfg.servers.len() as u64;
        let mut per_rack: HashMap<u32, u64> = HashMap::new();
        for &h in &self.cfg.servers {
            *per_rack.entry(self.cfg.place.rack_of[h as usize]).or_default() += 1;
        }
        let rack_pairs: u64 = per_rack.values().map(|&n| n * n.saturating_sub(1) / 2).sum();
        let fe_pairs = fes.saturating_mul(servers.min(asked));
        let hub_pairs = match self.cfg.method {
            Method::Sicc { .. } => fes.saturating_mul(asked).min(rack_pairs + servers),
            _ => 0,
        };
        Demand {
            tcp_connections: fe_pairs + hub_pairs,
            concurrent: self.cfg.queries as u64 * fes,
            flight_bytes: per_req * self.cfg.front_ends.len() as f64,
            bytes: per_req * reqs,
            data_flows: self.cfg.queries as f64 * 2.0,
            ..Demand::default()
        }
    }
    fn summary(&self, _cx: &Ctx) -> Vec<Metric> {
        vec![
            ("requests_done", self.n as f64),
            ("latency_us_mean", mean(&self.latencies_us)),
            ("latency_us_p99", quantile(&self.latencies_us, 0.99)),
            ("duplicate_objects", self.duplicates as f64),
            ("stale_copies_dropped", self.stale_dropped as f64),
            ("connections", self.pool.len() as f64),
            ("query_rows_written", self.query_rows as f64),
        ]
    }
    fn tables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("requests.csv", self.requests_csv.clone()),
            ("queries.csv", self.queries_csv.clone()),
        ]
    }
}
