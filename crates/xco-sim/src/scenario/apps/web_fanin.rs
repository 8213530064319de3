//! `[[apps]] kind = "web_fanin"`: the scenario's settings of the web
//! fan-in, checked field by field (a bad one is named: `apps[0].queries`).

use super::AppCx;
use crate::app::web_fanin::{Method, Placement, WebFanin, WebFaninConfig};
use crate::app::App;
use crate::scenario::limits::count;
use crate::scenario::units::Hosts;
use crate::scenario::ScenarioError;
use crate::sim::Sim;
use serde::Deserialize;
use xco_core::sicc::UplinkReading;

/// The methods as written.
const METHODS: &[&str] = &[
    "one_all",
    "sw",
    "ictcp",
    "sicc",
    "sicc-nps",
    "sicc-nmt",
    "sicc-nssc",
    "sicc-nqr",
];

/// `[[apps]] kind = "web_fanin"`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebFaninSpec {
    /// Start time, ms (default 0).
    pub start_ms: Option<f64>,
    /// `one_all`, `sw`, `ictcp`, `sicc`, `sicc-nps`, `sicc-nmt`, `sicc-nssc` or `sicc-nqr`.
    pub method: String,
    /// The front-end hosts (default: one server drawn at random).
    pub front_ends: Option<Hosts>,
    /// Every server of this rack (0-based, in host order) is a front-end.
    pub front_end_rack: Option<u32>,
    /// Objects in the catalogue (default 100,000).
    pub objects: Option<u32>,
    /// Copies of each object on distinct servers (default 3).
    pub replicas: Option<u32>,
    /// Smallest object, bytes (default 20).
    pub object_min_bytes: Option<u32>,
    /// Largest object, bytes (default 1000).
    pub object_max_bytes: Option<u32>,
    /// Objects per request, Q (default 1000).
    pub queries: Option<u32>,
    /// Requests per front-end, back to back (default 1).
    pub requests: Option<u32>,
    /// Bytes of a query besides its objects (default 20).
    pub query_header_bytes: Option<u32>,
    /// Bytes per object named in a query (default 8).
    pub query_object_bytes: Option<u32>,
    /// SICC: s of eq 1, bytes (default 1500: compressed packets).
    pub mean_packet_bytes: Option<u32>,
    /// SICC: `over_downlink` (default: M = S_e/s · B_u/B_d) or `downlink_over_uplink`.
    pub uplink_reading: Option<String>,
    /// SICC: N outright (default: eq 1 with one request at a time).
    pub hubs_per_request: Option<u32>,
    /// SICC: the largest swarm's hub fails at every request (default false).
    pub fail_largest_hub: Option<bool>,
    /// Rows of queries.csv at most (default 1,000,000).
    pub max_query_rows: Option<u64>,
    /// SICC: speed control's period, ms (default 10).
    pub speed_period_ms: Option<f64>,
    /// SICC: probability that a hub is overloaded, 0..1 (default 0).
    pub overload_probability: Option<f64>,
    /// SICC: fraction of its assigned rate an overloaded hub sends at, 0..1 (default 0.1).
    pub overload_fraction: Option<f64>,
    /// SICC: hubs pack objects into writes of at most one MSS (default true); false: each object its own message and packet.
    pub compression: Option<bool>,
}

impl WebFaninSpec {
    /// Add the web fan-in to `sim`.
    pub fn add_to(&self, sim: &mut Sim, cx: &AppCx) -> Result<(), ScenarioError> {
        let f = |s: &str| cx.field(s);
        let start = cx.start(self.start_ms)?;
        let method = match self.method.as_str() {
            "one_all" => Method::OneAll,
            "sw" => Method::Sw,
            "ictcp" => Method::Ictcp,
            "sicc" => Method::Sicc {
                proximity: true,
                multi_tree: true,
                speed: true,
                redirect: true,
            },
            "sicc-nps" => Method::Sicc {
                proximity: false,
                multi_tree: true,
                speed: true,
                redirect: true,
            },
            "sicc-nmt" => Method::Sicc {
                proximity: true,
                multi_tree: false,
                speed: true,
                redirect: true,
            },
            "sicc-nssc" => Method::Sicc {
                proximity: true,
                multi_tree: true,
                speed: false,
                redirect: true,
            },
            "sicc-nqr" => Method::Sicc {
                proximity: true,
                multi_tree: true,
                speed: true,
                redirect: false,
            },
            m => {
                return Err(ScenarioError::field(
                    &f("method"),
                    format!("unknown method {m:?}; use {}", METHODS.join(", ")),
                ))
            }
        };
        let place = Placement::of(&sim.cx.net).map_err(|e| ScenarioError::field("topology", e))?;
        let servers: Vec<u32> = cx
            .hosts
            .names()
            .iter()
            .map(|n| cx.hosts.node(n).expect("a host"))
            .collect();
        let objects = count(self.objects.unwrap_or(100_000), &f("objects"), 1, 10_000_000)?;
        let replicas = count(self.replicas.unwrap_or(3), &f("replicas"), 1, 1_000)?;
        if replicas as usize > servers.len() {
            return Err(ScenarioError::field(
                &f("replicas"),
                format!(
                    "{replicas} replicas need as many servers; the topology has {}",
                    servers.len()
                ),
            ));
        }
        if replicas < 2 && servers.len() > 1 && self.fail_largest_hub == Some(true) {
            return Err(ScenarioError::field(
                &f("replicas"),
                "a failed hub's objects need a second replica: at least 2".into(),
            ));
        }
        let lo = count(
            self.object_min_bytes.unwrap_or(20),
            &f("object_min_bytes"),
            1,
            1 << 20,
        )?;
        let hi = count(
            self.object_max_bytes.unwrap_or(1000),
            &f("object_max_bytes"),
            1,
            1 << 20,
        )?;
        if hi < lo {
            return Err(ScenarioError::field(
                &f("object_max_bytes"),
                format!("must be at least object_min_bytes ({lo}), got {hi}"),
            ));
        }
        let queries = count(self.queries.unwrap_or(1000), &f("queries"), 1, 10_000_000)?;
        if queries > objects {
            return Err(ScenarioError::field(
                &f("queries"),
                format!("{queries} queries need as many distinct objects; the catalogue has {objects}"),
            ));
        }
        let requests = count(self.requests.unwrap_or(1), &f("requests"), 1, 10_000_000)?;
        let mut rng = cx.rng(sim);
        let front_ends: Vec<u32> = match (&self.front_ends, self.front_end_rack) {
            (Some(_), Some(_)) => {
                return Err(ScenarioError::field(
                    &f("front_end_rack"),
                    "give front_ends or front_end_rack, not both".into(),
                ))
            }
            (Some(h), None) => {
                let v = cx.hosts.select(h, &f("front_ends"))?;
                if let Some(&x) = v.iter().find(|&&x| !servers.contains(&x)) {
                    return Err(ScenarioError::field(
                        &f("front_ends"),
                        format!("{:?} is not a server", sim.cx.net.name(x)),
                    ));
                }
                v
            }
            (None, Some(r)) => {
                let v: Vec<u32> = servers
                    .iter()
                    .copied()
                    .filter(|&s| place.rack_of[s as usize] == r)
                    .collect();
                if v.is_empty() {
                    return Err(ScenarioError::field(
                        &f("front_end_rack"),
                        format!("no rack {r}: the topology has {}", place.agg_of_rack.len()),
                    ));
                }
                v
            }
            (None, None) => vec![servers[rng.below(servers.len() as u64) as usize]],
        };
        if replicas == 1 && !front_ends.is_empty() && servers.len() > 1 {
            // every object needs a holder besides the front-end: with one copy,
            // objects on a front-end could not be asked of anyone
            return Err(ScenarioError::field(
                &f("replicas"),
                "must be at least 2: an object whose only copy is on a front-end cannot be fetched".into(),
            ));
        }
        let uplink_reading = match self.uplink_reading.as_deref() {
            None | Some("over_downlink") => UplinkReading::OverDownlink,
            Some("downlink_over_uplink") => UplinkReading::DownlinkOverUplink,
            Some(x) => {
                return Err(ScenarioError::field(
                    &f("uplink_reading"),
                    format!("unknown reading {x:?}; use over_downlink or downlink_over_uplink"),
                ))
            }
        };
        let fraction = |v: Option<f64>, field: &str, default: f64| -> Result<u32, ScenarioError> {
            let x = v.unwrap_or(default);
            if !(0.0..=1.0).contains(&x) {
                return Err(ScenarioError::field(
                    &f(field),
                    format!("must be from 0 to 1, got {x}"),
                ));
            }
            Ok((x * 1e6).round() as u32)
        };
        let overload_ppm = fraction(self.overload_probability, "overload_probability", 0.0)?;
        let overload_fraction_ppm = fraction(self.overload_fraction, "overload_fraction", 0.1)?;
        if overload_ppm > 0 && !matches!(method, Method::Sicc { .. }) {
            return Err(ScenarioError::field(
                &f("overload_probability"),
                "overloaded hubs exist only in SICC's methods".into(),
            ));
        }
        if overload_ppm > 0 && overload_fraction_ppm == 0 {
            return Err(ScenarioError::field(
                &f("overload_fraction"),
                "must be above 0 (a hub at 0 never finishes)".into(),
            ));
        }
        let compression = self.compression.unwrap_or(true);
        if !compression && !matches!(method, Method::Sicc { .. }) {
            return Err(ScenarioError::field(
                &f("compression"),
                "only SICC's hubs pack objects; the other methods have nothing to switch off".into(),
            ));
        }
        let period_ns =
            crate::scenario::limits::sim_ms(self.speed_period_ms, &f("speed_period_ms"), 10.0)?.as_ns();
        if period_ns == 0 {
            return Err(ScenarioError::field(
                &f("speed_period_ms"),
                "must be positive".into(),
            ));
        }
        let speed = xco_core::sicc::SpeedConfig {
            period_ns,
            max_report_age_ns: 2 * period_ns,
            ..Default::default()
        };
        let cfg = WebFaninConfig {
            servers,
            front_ends,
            objects,
            replicas,
            object_min_bytes: lo,
            object_max_bytes: hi,
            queries,
            requests,
            method,
            query_header_bytes: count(
                self.query_header_bytes.unwrap_or(20),
                &f("query_header_bytes"),
                1,
                1 << 20,
            )?,
            query_object_bytes: count(
                self.query_object_bytes.unwrap_or(8),
                &f("query_object_bytes"),
                1,
                1 << 16,
            )?,
            mean_packet_bytes: count(
                self.mean_packet_bytes.unwrap_or(1500),
                &f("mean_packet_bytes"),
                1,
                1 << 16,
            )?,
            uplink_reading,
            hubs_per_request: self
                .hubs_per_request
                .map(|n| count(n, &f("hubs_per_request"), 1, 1 << 24))
                .transpose()?,
            fail_largest_hub: self.fail_largest_hub.unwrap_or(false),
            max_query_rows: self.max_query_rows.unwrap_or(1_000_000),
            speed,
            overload_ppm,
            overload_fraction_ppm,
            compression,
            place,
        };
        let id = sim.next_app_id();
        sim.add_app(App::WebFanin(Box::new(WebFanin::new(id, cfg, rng))), start);
        Ok(())
    }

    /// The random draws it makes.
    pub fn random_draw(&self) -> Option<String> {
        Some(
            "object sizes, each object's replica servers, each request's objects and the replica asked; \
             the front-end when none is named; SICC-NPS's hub parents"
                .into(),
        )
    }
}
