//! What the scheduler knows of the network: directed links with capacities,
//! each host's single outgoing link, and the path P_sd between two hosts.

use crate::routing::{Graph, HostPaths, Router, RoutingMode};
use std::collections::HashMap;

/// Index of a directed link.
pub use crate::routing::LinkId;

/// How the scheduler learns P_sd.
pub trait PathProvider: Send {
    /// Append to `out` the directed links from host `s` to host `d`.
    fn path(&mut self, s: u32, d: u32, out: &mut Vec<LinkId>);
}

/// Shortest paths over a graph of hosts and switches whose node `i` is
/// scheduler host `i`: the shared [`Router`](crate::routing::Router) in ECMP
/// mode, every flow of a host pair on the pair's path.
pub struct BfsPaths(HostPaths);

impl BfsPaths {
    /// Paths over `links` = (tail node, head node) among `nodes` nodes.
    pub fn new(nodes: usize, is_host: Vec<bool>, links: &[(u32, u32)]) -> BfsPaths {
        debug_assert_eq!(is_host.len(), nodes);
        let router =
            Router::new(Graph::new(is_host, links), RoutingMode::Ecmp).expect("ECMP routes any graph");
        BfsPaths(HostPaths::new(router, (0..nodes as u32).collect()).expect("ECMP keeps one path per pair"))
    }
}

impl PathProvider for BfsPaths {
    fn path(&mut self, s: u32, d: u32, out: &mut Vec<LinkId>) {
        self.0.path(s, d, out)
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
///
/// A path of at most [`SHORT_PATH_LINKS`] links (every fat-tree path) is
/// asked of the provider each time it is wanted and copied into the flow
/// record that needs it, so the topology keeps nothing per host pair: a
/// controller that runs for days, over hosts that talk to ever new peers,
/// keeps the same memory, and no report waits for a table of every pair
/// ever seen to grow (at 8,192 hosts such a table grew to millions of
/// pairs, and each doubling stalled one report by milliseconds). Longer
/// paths are kept in an arena, once per pair, because flow records refer
/// to them there.
pub struct SchedTopology {
    /// Capacity of each directed link, bit/s.
    pub link_bps: Vec<u64>,
    /// Capacity of each host's outgoing link, bit/s (C_x).
    pub host_bps: Vec<u64>,
    paths: Box<dyn PathProvider>,
    /// The long paths: where each is in the arena.
    long: HashMap<(u32, u32), PathRef>,
    /// The first `SHORT_PATH_LINKS` entries hold the short path asked last;
    /// the long paths follow.
    arena: Vec<LinkId>,
    scratch: Vec<LinkId>,
}

/// Paths of at most this many links are not kept by the topology (a
/// fat-tree path has at most six): flow records hold them.
pub(crate) const SHORT_PATH_LINKS: usize = 6;

impl SchedTopology {
    /// `hosts` hosts with capacities `host_bps`, directed links with
    /// capacities `link_bps`, paths from `paths`.
    pub fn new(host_bps: Vec<u64>, link_bps: Vec<u64>, paths: Box<dyn PathProvider>) -> SchedTopology {
        SchedTopology {
            link_bps,
            host_bps,
            paths,
            long: HashMap::new(),
            arena: vec![0; SHORT_PATH_LINKS],
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

    /// A reference to P_sd; empty if there is no path. A path of at most
    /// [`SHORT_PATH_LINKS`] links is asked of the provider anew and its
    /// reference holds only until the next call (copy the links out before
    /// then); a longer one is kept for good, computed once.
    pub fn path_ref(&mut self, s: u32, d: u32) -> PathRef {
        if let Some(&r) = self.long.get(&(s, d)) {
            return r;
        }
        self.scratch.clear();
        self.paths.path(s, d, &mut self.scratch);
        let len = self.scratch.len();
        if len <= SHORT_PATH_LINKS {
            self.arena[..len].copy_from_slice(&self.scratch);
            return PathRef {
                start: 0,
                len: len as u32,
            };
        }
        let r = PathRef {
            start: self.arena.len() as u32,
            len: len as u32,
        };
        self.arena.extend_from_slice(&self.scratch);
        self.long.insert((s, d), r);
        r
    }

    /// Links the topology keeps for paths (the short path asked last and
    /// every long path): it does not grow with the host pairs asked.
    pub fn kept_links(&self) -> usize {
        self.arena.len()
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
/// This is the shared router's `address-bits` mode in closed form, for the
/// scheduler's benchmarks and tests at sizes where no graph is built; a
/// test holds the two equal for every host pair of k = 4 and k = 8.
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

    #[test]
    fn short_paths_are_not_kept_however_many_pairs_are_asked() {
        let mut t = SchedTopology::new(vec![1; 128], vec![1; 1024], Box::new(FatTreePaths::new(8)));
        let mut p = FatTreePaths::new(8);
        let mut want = Vec::new();
        for s in 0..128 {
            for d in (0..128).filter(|&d| d != s) {
                want.clear();
                p.path(s, d, &mut want);
                let r = t.path_ref(s, d);
                assert_eq!(t.links(r), &want[..], "{s} -> {d}");
            }
        }
        assert_eq!(
            t.kept_links(),
            SHORT_PATH_LINKS,
            "16,256 pairs asked, nothing kept"
        );
    }

    #[test]
    fn a_long_path_is_kept_once_and_outlives_later_lookups() {
        // hosts 0 and 1 at the ends of a chain of switches 2..=9: nine links a way
        let mut cables = vec![(0, 2), (1, 9)];
        cables.extend((2..9).map(|v| (v, v + 1)));
        let links: Vec<(u32, u32)> = cables.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
        let is_host = (0..10).map(|v| v < 2).collect();
        let paths = BfsPaths::new(10, is_host, &links);
        let mut t = SchedTopology::new(vec![1; 2], vec![1; links.len()], Box::new(paths));
        let r = t.path_ref(0, 1);
        let first = t.links(r).to_vec();
        assert_eq!(first.len(), 9);
        let back = t.path_ref(1, 0);
        assert_eq!(t.links(r), &first[..], "another lookup leaves it in place");
        assert_eq!(t.path_ref(0, 1), r, "computed once");
        assert_ne!(t.links(back), &first[..]);
        assert_eq!(t.kept_links(), SHORT_PATH_LINKS + 18);
    }
}
