//! What the scheduler knows of the network: directed links with capacities,
//! each host's single outgoing link, and the path P_sd between two hosts.

use std::collections::HashMap;

/// Index of a directed link.
pub type LinkId = u32;

/// How the scheduler learns P_sd.
pub trait PathProvider: Send {
    /// Append to `out` the directed links from host `s` to host `d`.
    fn path(&mut self, s: u32, d: u32, out: &mut Vec<LinkId>);
}

/// Shortest paths in hops over a graph of hosts and switches, ties broken by
/// the lowest link index (a single consistent path per pair, like a spanning tree).
pub struct BfsPaths {
    /// Out-links of each node: (link, head node).
    out: Vec<Vec<(LinkId, u32)>>,
    is_host: Vec<bool>,
    /// Per destination: the link each node takes towards it.
    next: HashMap<u32, Vec<LinkId>>,
}

impl BfsPaths {
    /// Paths over `links` = (tail node, head node) among `nodes` nodes.
    pub fn new(nodes: usize, is_host: Vec<bool>, links: &[(u32, u32)]) -> BfsPaths {
        let mut out = vec![Vec::new(); nodes];
        for (i, &(a, b)) in links.iter().enumerate() {
            out[a as usize].push((i as LinkId, b));
        }
        BfsPaths {
            out,
            is_host,
            next: HashMap::new(),
        }
    }

    fn tree(&self, d: u32) -> Vec<LinkId> {
        // BFS on reversed links from d; hosts other than d do not forward
        let n = self.out.len();
        let mut rev: Vec<Vec<(LinkId, u32)>> = vec![Vec::new(); n];
        for (a, outs) in self.out.iter().enumerate() {
            for &(l, b) in outs {
                rev[b as usize].push((l, a as u32));
            }
        }
        let mut next = vec![LinkId::MAX; n];
        let mut seen = vec![false; n];
        let mut q = std::collections::VecDeque::new();
        seen[d as usize] = true;
        q.push_back(d);
        while let Some(v) = q.pop_front() {
            if v != d && self.is_host[v as usize] {
                continue;
            }
            let mut ins = rev[v as usize].clone();
            ins.sort_unstable();
            for (l, u) in ins {
                if !seen[u as usize] {
                    seen[u as usize] = true;
                    next[u as usize] = l;
                    q.push_back(u);
                }
            }
        }
        next
    }
}

impl PathProvider for BfsPaths {
    fn path(&mut self, s: u32, d: u32, out: &mut Vec<LinkId>) {
        if !self.next.contains_key(&d) {
            let t = self.tree(d);
            self.next.insert(d, t);
        }
        let next = &self.next[&d];
        let mut v = s;
        let mut hops = 0;
        while v != d && hops <= self.out.len() {
            let l = next[v as usize];
            if l == LinkId::MAX {
                out.clear();
                return;
            }
            out.push(l);
            v = self.out[v as usize]
                .iter()
                .find(|&&(x, _)| x == l)
                .expect("own link")
                .1;
            hops += 1;
        }
    }
}

/// A path stored in the topology's arena: `len` links from `start`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathRef {
    start: u32,
    len: u32,
}

impl PathRef {
    /// True for "no path".
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// (start, length) in the arena, for compact storage.
    pub(crate) fn to_raw(self) -> (u32, u32) {
        (self.start, self.len)
    }

    /// The reference [`to_raw`](Self::to_raw) gave.
    pub(crate) fn from_raw(start: u32, len: u32) -> PathRef {
        PathRef { start, len }
    }
}

/// The network as the scheduler sees it.
pub struct SchedTopology {
    /// Capacity of each directed link, bit/s.
    pub link_bps: Vec<u64>,
    /// Capacity of each host's outgoing link, bit/s (C_x).
    pub host_bps: Vec<u64>,
    paths: Box<dyn PathProvider>,
    cache: HashMap<(u32, u32), PathRef>,
    arena: Vec<LinkId>,
    scratch: Vec<LinkId>,
}

impl SchedTopology {
    /// `hosts` hosts with capacities `host_bps`, directed links with
    /// capacities `link_bps`, paths from `paths`.
    pub fn new(host_bps: Vec<u64>, link_bps: Vec<u64>, paths: Box<dyn PathProvider>) -> SchedTopology {
        SchedTopology {
            link_bps,
            host_bps,
            paths,
            cache: HashMap::new(),
            arena: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Number of hosts.
    pub fn hosts(&self) -> usize {
        self.host_bps.len()
    }

    /// The sentinel link: one past the last real link. It pads paths kept
    /// in flow records to a fixed length; the link table gives it unlimited
    /// free capacity and no holder, and no path crosses it.
    #[inline]
    pub fn sentinel_link(&self) -> LinkId {
        self.link_bps.len() as LinkId
    }

    /// A reference to P_sd (computed once, then cached); empty if there is no path.
    pub fn path_ref(&mut self, s: u32, d: u32) -> PathRef {
        if let Some(&r) = self.cache.get(&(s, d)) {
            return r;
        }
        self.scratch.clear();
        self.paths.path(s, d, &mut self.scratch);
        let r = PathRef {
            start: self.arena.len() as u32,
            len: self.scratch.len() as u32,
        };
        self.arena.extend_from_slice(&self.scratch);
        self.cache.insert((s, d), r);
        r
    }

    /// The links of a path reference.
    #[inline]
    pub fn links(&self, r: PathRef) -> &[LinkId] {
        &self.arena[r.start as usize..(r.start + r.len) as usize]
    }

    /// P_sd.
    pub fn path(&mut self, s: u32, d: u32) -> &[LinkId] {
        let r = self.path_ref(s, d);
        self.links(r)
    }
}

/// Paths in a k-ary fat-tree computed arithmetically (no search, no cache
/// needed): up through the aggregation switch and core chosen by the
/// destination's address bits, down the unique path (PortLand-like).
///
/// Link numbering (all directed): host h up `2h`, down `2h+1`; then for each
/// edge switch e and each of its k/2 aggregation switches a, up and down; then
/// for each aggregation switch and each of its k/2 cores, up and down.
pub struct FatTreePaths {
    k: u32,
}

impl FatTreePaths {
    /// Paths for a k-ary fat-tree (k even).
    pub fn new(k: u32) -> FatTreePaths {
        assert!(k >= 2 && k % 2 == 0, "k must be even");
        FatTreePaths { k }
    }

    /// Hosts in the tree.
    pub fn hosts(&self) -> u32 {
        self.k * self.k * self.k / 4
    }

    /// Number of directed links.
    pub fn links(&self) -> u32 {
        let h = self.k / 2;
        let hosts = self.hosts();
        let edges = self.k * h;
        2 * hosts + 2 * edges * h + 2 * edges * h
    }

    /// (edge-agg link base, agg-core link base).
    fn bases(&self) -> (u32, u32) {
        let h = self.k / 2;
        let hosts = self.hosts();
        let edges = self.k * h;
        (2 * hosts, 2 * hosts + 2 * edges * h)
    }
}

impl PathProvider for FatTreePaths {
    fn path(&mut self, s: u32, d: u32, out: &mut Vec<LinkId>) {
        let h = self.k / 2;
        let (ea_base, ac_base) = self.bases();
        let edge = |x: u32| x / h; // global edge index
        let pod = |x: u32| x / (h * h);
        let (es, ed) = (edge(s), edge(d));
        out.push(2 * s); // host up
        if es != ed {
            // aggregation switch index (within the pod) chosen by the destination
            let a = d % h;
            let ea = |e: u32, up: bool| ea_base + 2 * (e * h + a) + u32::from(!up);
            out.push(ea(es, true));
            if pod(s) != pod(d) {
                let c = (d / h) % h; // core index within the aggregation switch's group
                let agg_s = pod(s) * h + a;
                let agg_d = pod(d) * h + a;
                let ac = |g: u32, up: bool| ac_base + 2 * (g * h + c) + u32::from(!up);
                out.push(ac(agg_s, true));
                out.push(ac(agg_d, false));
            }
            out.push(ea(ed, false));
        }
        out.push(2 * d + 1); // host down
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fat_tree_paths_have_textbook_lengths_and_valid_links() {
        let mut p = FatTreePaths::new(4);
        let n = p.links();
        let mut out = Vec::new();
        p.path(0, 1, &mut out); // same edge
        assert_eq!(out.len(), 2);
        out.clear();
        p.path(0, 2, &mut out); // same pod
        assert_eq!(out.len(), 4);
        out.clear();
        p.path(0, 15, &mut out); // other pod
        assert_eq!(out.len(), 6);
        assert!(out.iter().all(|&l| l < n));
        // up and down links never coincide between opposite directions
        let mut back = Vec::new();
        p.path(15, 0, &mut back);
        assert!(out.iter().all(|l| !back.contains(l)));
    }

    #[test]
    fn bfs_paths_follow_a_star() {
        // hosts 0..3, switch 4; links h->s (0,2,4), s->h (1,3,5)
        let links = [(0, 3), (3, 0), (1, 3), (3, 1), (2, 3), (3, 2)];
        let mut p = BfsPaths::new(4, vec![true, true, true, false], &links);
        let mut out = Vec::new();
        p.path(0, 2, &mut out);
        assert_eq!(out, vec![0, 5]);
    }
}
