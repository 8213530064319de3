//! Routing: which output ports a flow's packets cross, decided once per flow.
//!
//! A [`Routing`] computes a path (the list of output ports from the source
//! host's NIC to the last switch port) when a flow is set up; the path is
//! stored in the [`RouteTable`] and a packet carries only the path's offset
//! and its hop index, so forwarding is an array read, never a lookup.
//! Shortest-path ECMP is implemented now; address-bit fat-tree routing and
//! equal-length routing plug in here as further implementations.

use super::topology::NodeKind;
use std::collections::HashMap;
use xco_core::rng::mix64;

/// Read-only view of the wired network that routing needs.
pub struct Graph<'a> {
    /// Kind of each node.
    pub kinds: &'a [NodeKind],
    /// Output ports of each node: `(port id, neighbour node)`.
    pub out: &'a [Vec<(u32, u32)>],
}

/// Chooses the path of a flow.
pub trait Routing {
    /// Append to `path` the output ports from `src` to `dst` (host nodes);
    /// `flow_hash` picks among equal-cost choices. Returns false if `dst` is
    /// unreachable.
    fn path(&mut self, g: &Graph, src: u32, dst: u32, flow_hash: u64, path: &mut Vec<u32>) -> bool;
}

/// Shortest paths (in hops); among equal next hops, per-flow hashing (ECMP).
#[derive(Default)]
pub struct ShortestPathEcmp {
    /// Hop distance to each destination, computed on first use.
    dist: HashMap<u32, Vec<u32>>,
    /// The equal next hops at one node (kept to reuse its memory).
    candidates: Vec<u32>,
}

impl ShortestPathEcmp {
    fn distances(g: &Graph, dst: u32) -> Vec<u32> {
        let mut dist = vec![u32::MAX; g.kinds.len()];
        let mut frontier = std::collections::VecDeque::new();
        dist[dst as usize] = 0;
        frontier.push_back(dst);
        while let Some(u) = frontier.pop_front() {
            // hosts do not forward: only the destination itself is expanded
            if u != dst && g.kinds[u as usize] == NodeKind::Host {
                continue;
            }
            for &(_, v) in &g.out[u as usize] {
                if dist[v as usize] == u32::MAX {
                    dist[v as usize] = dist[u as usize] + 1;
                    frontier.push_back(v);
                }
            }
        }
        dist
    }
}

impl Routing for ShortestPathEcmp {
    fn path(&mut self, g: &Graph, src: u32, dst: u32, flow_hash: u64, path: &mut Vec<u32>) -> bool {
        let dist = self.dist.entry(dst).or_insert_with(|| Self::distances(g, dst));
        if dist[src as usize] == u32::MAX {
            return false;
        }
        let mut u = src;
        let candidates = &mut self.candidates;
        while u != dst {
            let d = dist[u as usize];
            candidates.clear();
            for &(port, v) in &g.out[u as usize] {
                let vk = g.kinds[v as usize];
                if dist[v as usize] + 1 == d && (v == dst || vk == NodeKind::Switch) {
                    candidates.push(port);
                }
            }
            let pick = (mix64(flow_hash, u as u64) % candidates.len() as u64) as usize;
            let port = candidates[pick];
            path.push(port);
            u = g.out[u as usize]
                .iter()
                .find(|&&(p, _)| p == port)
                .map(|&(_, v)| v)
                .expect("port belongs to node");
        }
        true
    }
}

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
