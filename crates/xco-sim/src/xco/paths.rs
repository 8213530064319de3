//! The scheduler's P_sd taken from the simulator's own routing, so the
//! controller's view of the paths is the one packets follow.

use crate::net::routing::{Graph, Routing, ShortestPathEcmp};
use crate::net::topology::NodeKind;
use crate::net::Net;
use xco_core::sched::{LinkId, PathProvider};

/// Paths as `Net::route` computes them for a host pair (ports = links).
pub struct SimPaths {
    kinds: Vec<NodeKind>,
    out: Vec<Vec<(u32, u32)>>,
    routing: ShortestPathEcmp,
    node_of_host: Vec<u32>,
}

impl SimPaths {
    /// A copy of `net`'s wiring; scheduler host `i` is node `node_of_host[i]`.
    pub fn new(net: &Net, node_of_host: Vec<u32>) -> SimPaths {
        let (kinds, out) = net.wiring();
        SimPaths {
            kinds,
            out,
            routing: ShortestPathEcmp::default(),
            node_of_host,
        }
    }
}

impl PathProvider for SimPaths {
    fn path(&mut self, s: u32, d: u32, out: &mut Vec<LinkId>) {
        let (sn, dn) = (self.node_of_host[s as usize], self.node_of_host[d as usize]);
        let g = Graph {
            kinds: &self.kinds,
            out: &self.out,
        };
        if !self.routing.path(&g, sn, dn, crate::net::pair_hash(sn, dn), out) {
            out.clear();
        }
    }
}
