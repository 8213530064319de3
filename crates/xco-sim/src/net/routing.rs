//! Routes: which output ports a flow's packets cross, decided once per flow.
//!
//! The shared [`Router`] of `xco-core` (the one the XCo controllers ask too)
//! computes a path (the list of output ports from the source host's NIC to
//! the last switch port; an output port is a directed link) when a flow is
//! set up; the path is stored in the [`RouteTable`] and a packet carries
//! only the path's offset and its hop index, so forwarding is an array read,
//! never a lookup. Only per-packet spraying routes each packet anew.

use std::collections::HashMap;
pub use xco_core::routing::{pair_hash, CoreChoice, Graph, Router, RoutingMode};

/// All routes in one flat array; a route is identified by its offset.
#[derive(Default)]
pub struct RouteTable {
    /// Concatenated port lists.
    pub ports: Vec<u32>,
    interned: HashMap<Vec<u32>, u32>,
}

impl RouteTable {
    /// Store `path` (or find the identical stored one) and return its offset.
    pub fn intern(&mut self, path: &[u32]) -> u32 {
        if let Some(&off) = self.interned.get(path) {
            return off;
        }
        let off = self.ports.len() as u32;
        self.ports.extend_from_slice(path);
        self.interned.insert(path.to_vec(), off);
        off
    }

    /// The port at `hop` of the route starting at `offset`.
    #[inline(always)]
    pub fn port(&self, offset: u32, hop: u16) -> u32 {
        self.ports[offset as usize + hop as usize]
    }
}
