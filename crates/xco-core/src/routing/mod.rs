//! Routing: the one place that decides which directed links a packet from
//! host `s` to host `d` crosses.
//!
//! The simulator's packets, the simulator's XCo controller and the real XCo
//! controller all ask a [`Router`] built from the same [`Graph`] and
//! [`RoutingMode`], so the paths the controller schedules are the paths the
//! packets take. A path is computed once per flow (the simulator interns it
//! and packets carry only its offset); only per-packet spraying asks again
//! for every packet.
//!
//! Modes (the scenario's and the daemons' `[topology] routing` key):
//! - `ecmp` — shortest paths in hops; among equal next hops, per-flow hashing.
//! - `address-bits` — deterministic three-tier fat-tree routing from the
//!   destination's address (PortLand-like): an edge switch sends a packet for
//!   another edge switch up to the aggregation switch chosen by the
//!   destination's position on its edge switch (its address's last digit in
//!   base k/2); an aggregation switch sends a packet for another pod up to the
//!   core switch chosen by the destination edge switch's position in its pod
//!   (the second-to-last digit); down paths are unique.
//! - `equal-length-flow`, `equal-length-packet`, `equal-length-dest` — every
//!   packet climbs to the top tier (a core switch in a fat-tree) even when
//!   source and destination share a pod or an edge switch, then descends: the
//!   TCP Outcast remedy that gives every flow the same RTT. The switch taken
//!   on each climb is chosen per flow (hash), per packet (a fresh hash for
//!   every packet) or from the destination's address digits as in
//!   `address-bits`.
//!
//! Tiers are measured, not declared: a switch's tier is its hop distance to
//! the nearest host (edge 1, aggregation 2, core 3 in a fat-tree).
//!
//! State grows with the network, not with its host pairs: hop distances are
//! kept per attachment group (the hosts on one edge switch), one `u16` per
//! switch, filled on first use ([`distances`]). Nothing here allocates once
//! the tables a run needs exist.

mod distances;
mod graph;
mod tiers;

use distances::Distances;
pub use graph::Graph;
use tiers::Tiers;

pub use crate::rng::mix64;

/// Index of a directed link (in the simulator: an output port).
pub type LinkId = u32;

/// The ECMP hash every flow between hosts `src` and `dst` uses when routing
/// is per host pair (XCo schedules per host pair, so its flows share a path).
pub fn pair_hash(src: u32, dst: u32) -> u64 {
    mix64(0x9A1E_5EED, (src as u64) << 32 | dst as u64)
}

/// Which paths packets take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RoutingMode {
    /// Shortest paths, per-flow hashing among equal next hops.
    #[default]
    Ecmp,
    /// Deterministic fat-tree routing from the destination's address digits.
    AddressBits,
    /// Up to the top tier and down; the climb chosen as `CoreChoice` says.
    EqualLength(CoreChoice),
}

/// How equal-length routing picks the switch it climbs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreChoice {
    /// A hash of the flow: every packet of a flow takes the same path.
    Flow,
    /// A fresh draw for every packet (packet spraying).
    Packet,
    /// The destination's address digits (deterministic, like `address-bits`).
    Destination,
}

impl RoutingMode {
    /// Every mode's name as the configuration files spell it.
    pub const NAMES: [&'static str; 5] = [
        "ecmp",
        "address-bits",
        "equal-length-flow",
        "equal-length-packet",
        "equal-length-dest",
    ];

    /// The mode named `s` (one of [`RoutingMode::NAMES`]).
    pub fn parse(s: &str) -> Result<RoutingMode, String> {
        Ok(match s {
            "ecmp" => RoutingMode::Ecmp,
            "address-bits" => RoutingMode::AddressBits,
            "equal-length-flow" => RoutingMode::EqualLength(CoreChoice::Flow),
            "equal-length-packet" => RoutingMode::EqualLength(CoreChoice::Packet),
            "equal-length-dest" => RoutingMode::EqualLength(CoreChoice::Destination),
            _ => {
                return Err(format!(
                    "'{s}' is not a routing mode (one of: {})",
                    RoutingMode::NAMES.join(", ")
                ))
            }
        })
    }

    /// The configuration name of this mode.
    pub fn name(self) -> &'static str {
        match self {
            RoutingMode::Ecmp => "ecmp",
            RoutingMode::AddressBits => "address-bits",
            RoutingMode::EqualLength(CoreChoice::Flow) => "equal-length-flow",
            RoutingMode::EqualLength(CoreChoice::Packet) => "equal-length-packet",
            RoutingMode::EqualLength(CoreChoice::Destination) => "equal-length-dest",
        }
    }

    /// True if each packet may take another path (nothing can schedule "the" path).
    pub fn per_packet(self) -> bool {
        self == RoutingMode::EqualLength(CoreChoice::Packet)
    }
}

/// Computes paths over one [`Graph`] in one [`RoutingMode`].
#[derive(Clone, Debug)]
pub struct Router {
    graph: Graph,
    mode: RoutingMode,
    /// Hop distances to the destinations, per attachment group.
    dist: Distances,
    /// Tiers and address digits (the fat-tree modes only).
    tiers: Option<Tiers>,
    /// The candidate links at one node (kept to reuse its memory).
    candidates: Vec<LinkId>,
}

impl Router {
    /// A router for `mode` over `graph`; the fat-tree modes fail with a
    /// sentence saying why if `graph` is not a tree of tiers they can climb.
    pub fn new(graph: Graph, mode: RoutingMode) -> Result<Router, String> {
        let tiers = match mode {
            RoutingMode::Ecmp => None,
            RoutingMode::AddressBits | RoutingMode::EqualLength(_) => Some(Tiers::new(&graph)?),
        };
        Ok(Router {
            dist: Distances::new(&graph)?,
            graph,
            mode,
            tiers,
            candidates: Vec::new(),
        })
    }

    /// The mode.
    pub fn mode(&self) -> RoutingMode {
        self.mode
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Bytes of routing state held now (graph, tiers, filled distance tables).
    pub fn bytes(&self) -> u64 {
        self.graph.bytes() + self.dist.bytes() + self.tiers.as_ref().map_or(0, |t| t.bytes())
    }

    /// Bytes of routing state once every distance table is filled: the most
    /// a run holds for routing.
    pub fn table_bytes_bound(&self) -> u64 {
        self.graph.bytes() + self.dist.bytes_bound() + self.tiers.as_ref().map_or(0, |t| t.bytes())
    }

    /// Append to `path` the links from host `src` to host `dst`; `flow_hash`
    /// picks among equal choices (for `equal-length-packet`, pass a fresh
    /// value per packet). Returns false, leaving `path` as it was, if `dst`
    /// cannot be reached or either end is not a host.
    pub fn path(&mut self, src: u32, dst: u32, flow_hash: u64, path: &mut Vec<LinkId>) -> bool {
        let g = &self.graph;
        if !g.is_host(dst) || !g.is_host(src) {
            return false; // paths run between hosts; switches are not destinations
        }
        let dist = self.dist.to(dst);
        if dist.of(g, src).is_none() {
            return false;
        }
        let mut u = src;
        // equal-length: climb first, from the source's NIC to the top tier
        if let (RoutingMode::EqualLength(choice), Some(t)) = (self.mode, &self.tiers) {
            if src != dst {
                let nic = g.out(u)[0].0;
                path.push(nic);
                u = g.head(u, nic);
                while t.tier(u) < t.top() {
                    let c = &mut self.candidates;
                    c.clear();
                    c.extend(t.up(g, u));
                    let pick = match choice {
                        CoreChoice::Flow | CoreChoice::Packet => mix64(flow_hash, u as u64) as usize,
                        CoreChoice::Destination => t.digit(dst, t.tier(u)) as usize,
                    } % c.len();
                    path.push(c[pick]);
                    u = g.head(u, c[pick]);
                }
            }
        }
        while u != dst {
            let d = dist
                .of(g, u)
                .expect("a path only enters nodes that reach the destination");
            let c = &mut self.candidates;
            c.clear();
            for &(link, v) in g.out(u) {
                if dist.forwarding(v).is_some_and(|dv| dv + 1 == d) {
                    c.push(link);
                }
            }
            let pick = match (self.mode, &self.tiers) {
                // address bits: the up choices by the destination's digits
                (RoutingMode::AddressBits, Some(t)) if c.len() > 1 => {
                    t.digit(dst, t.tier(u)) as usize % c.len()
                }
                _ => (mix64(flow_hash, u as u64) % c.len() as u64) as usize,
            };
            let link = c[pick];
            path.push(link);
            u = g.head(u, link);
        }
        true
    }
}

/// The scheduler's P_sd from a [`Router`]: scheduler host `i` is graph node
/// `node_of_host[i]`, and every flow of a host pair follows the pair's path
/// (hashed with [`pair_hash`]), as the simulator routes XCo's hosts.
pub struct HostPaths {
    router: Router,
    node_of_host: Vec<u32>,
}

impl HostPaths {
    /// Paths of `router` between the hosts listed in `node_of_host`. Fails
    /// for per-packet routing: a controller cannot schedule a path packets
    /// do not keep.
    pub fn new(router: Router, node_of_host: Vec<u32>) -> Result<HostPaths, String> {
        if router.mode().per_packet() {
            return Err(format!(
                "routing '{}' sprays each packet over another path: XCo needs a path per host pair",
                router.mode().name()
            ));
        }
        Ok(HostPaths { router, node_of_host })
    }
}

impl crate::sched::PathProvider for HostPaths {
    fn path(&mut self, s: u32, d: u32, out: &mut Vec<LinkId>) {
        let (sn, dn) = (self.node_of_host[s as usize], self.node_of_host[d as usize]);
        if !self.router.path(sn, dn, pair_hash(sn, dn), out) {
            out.clear();
        }
    }
}

#[cfg(test)]
mod tests;
