//! Topologies as plain descriptions (nodes and bidirectional links), and the
//! builders for the shapes scenarios ask for: star, two switches joined by an
//! uplink, k-ary fat-tree, and explicit lists.

use xco_core::Dur;

/// Whether a node is an end host or a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end host: originates and sinks traffic, never forwards.
    Host,
    /// An output-queued switch.
    Switch,
}

/// A node of the topology.
#[derive(Clone, Debug)]
pub struct NodeSpec {
    /// Unique name, used by scenarios (`a0`, `sw1`, `e0_1`, ...).
    pub name: String,
    /// Host or switch.
    pub kind: NodeKind,
}

/// A full-duplex link; each direction gets its own output port and buffer.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    /// One end (node index).
    pub a: usize,
    /// The other end (node index).
    pub b: usize,
    /// Line rate in bits per second, both directions.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Dur,
    /// Buffer of the port sending from `a` to `b`, bytes (`None`: the default for `a`'s kind).
    pub buffer_a_bytes: Option<u64>,
    /// Buffer of the port sending from `b` to `a`, bytes (`None`: the default for `b`'s kind).
    pub buffer_b_bytes: Option<u64>,
}

/// A topology: nodes and links.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    /// All nodes; hosts and switches interleave freely.
    pub nodes: Vec<NodeSpec>,
    /// All links.
    pub links: Vec<LinkSpec>,
}

impl Topology {
    /// Add a node and return its index.
    pub fn add_node(&mut self, name: impl Into<String>, kind: NodeKind) -> usize {
        self.nodes.push(NodeSpec {
            name: name.into(),
            kind,
        });
        self.nodes.len() - 1
    }

    /// Add a link with default buffers and return its index.
    pub fn add_link(&mut self, a: usize, b: usize, rate_bps: u64, delay: Dur) -> usize {
        self.links.push(LinkSpec {
            a,
            b,
            rate_bps,
            delay,
            buffer_a_bytes: None,
            buffer_b_bytes: None,
        });
        self.links.len() - 1
    }

    /// Index of the node called `name`.
    pub fn node(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Indices of all hosts, in node order.
    pub fn hosts(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].kind == NodeKind::Host)
            .collect()
    }

    /// One switch `s0` with hosts `h0..h{n-1}`.
    pub fn star(hosts: usize, rate_bps: u64, delay: Dur) -> Topology {
        let mut t = Topology::default();
        let s = t.add_node("s0", NodeKind::Switch);
        for i in 0..hosts {
            let h = t.add_node(format!("h{i}"), NodeKind::Host);
            t.add_link(h, s, rate_bps, delay);
        }
        t
    }

    /// Switches `sa` and `sb` joined by an uplink; hosts `a*` on `sa`, `b*` on `sb`.
    pub fn two_switch(
        hosts_a: usize,
        hosts_b: usize,
        rate_a_bps: u64,
        rate_b_bps: u64,
        uplink_bps: u64,
        delay: Dur,
    ) -> Topology {
        let mut t = Topology::default();
        let sa = t.add_node("sa", NodeKind::Switch);
        let sb = t.add_node("sb", NodeKind::Switch);
        t.add_link(sa, sb, uplink_bps, delay);
        for i in 0..hosts_a {
            let h = t.add_node(format!("a{i}"), NodeKind::Host);
            t.add_link(h, sa, rate_a_bps, delay);
        }
        for i in 0..hosts_b {
            let h = t.add_node(format!("b{i}"), NodeKind::Host);
            t.add_link(h, sb, rate_b_bps, delay);
        }
        t
    }

    /// A k-ary fat-tree (k even): k pods of k/2 edge (`e{pod}_{i}`) and k/2
    /// aggregation (`g{pod}_{i}`) switches, (k/2)^2 cores (`c{i}`), k^3/4
    /// hosts (`h{i}`, k/2 per edge switch, numbered pod by pod).
    ///
    /// Panics if `k` is odd or zero (scenario validation rejects those first).
    pub fn fat_tree(k: usize, rate_bps: u64, delay: Dur) -> Topology {
        assert!(k >= 2 && k % 2 == 0, "fat-tree k must be even and >= 2");
        let half = k / 2;
        let mut t = Topology::default();
        let cores: Vec<usize> = (0..half * half)
            .map(|i| t.add_node(format!("c{i}"), NodeKind::Switch))
            .collect();
        let mut host_no = 0;
        for pod in 0..k {
            let aggs: Vec<usize> = (0..half)
                .map(|i| t.add_node(format!("g{pod}_{i}"), NodeKind::Switch))
                .collect();
            for (i, &agg) in aggs.iter().enumerate() {
                for j in 0..half {
                    t.add_link(agg, cores[i * half + j], rate_bps, delay);
                }
            }
            for e in 0..half {
                let edge = t.add_node(format!("e{pod}_{e}"), NodeKind::Switch);
                for &agg in &aggs {
                    t.add_link(edge, agg, rate_bps, delay);
                }
                for _ in 0..half {
                    let h = t.add_node(format!("h{host_no}"), NodeKind::Host);
                    host_no += 1;
                    t.add_link(h, edge, rate_bps, delay);
                }
            }
        }
        t
    }
}

/// The shape of a three-tier tree (`[topology] kind = "tree3"`).
#[derive(Clone, Debug)]
pub struct Tree3 {
    /// Servers under each rack's top-of-rack switch.
    pub servers_per_rack: usize,
    /// Racks.
    pub racks: usize,
    /// Racks under each aggregation switch (divides `racks`).
    pub racks_per_agg: usize,
    /// Core switches (every aggregation switch links to every core).
    pub cores: usize,
    /// Rate of a server's link to its ToR, bits/s.
    pub edge_rate_bps: u64,
    /// Parallel links from each ToR to its aggregation switch.
    pub tor_uplinks: usize,
    /// Rate of one ToR–aggregation link, bits/s.
    pub tor_uplink_rate_bps: u64,
    /// Rate of one aggregation–core link, bits/s.
    pub agg_core_rate_bps: u64,
    /// Buffer of a ToR's port toward a server, bytes.
    pub edge_buffer_bytes: u64,
    /// Buffer of a ToR's uplink ports and of an aggregation switch's ports, bytes.
    pub agg_buffer_bytes: u64,
    /// Buffer of a core switch's ports, bytes.
    pub core_buffer_bytes: u64,
}

impl Topology {
    /// A three-tier tree: racks of servers (`h{i}`, numbered rack by rack)
    /// under ToR switches (`t{r}`), each ToR linked by `tor_uplinks` parallel
    /// links to one aggregation switch (`g{a}`, racks `a * racks_per_agg ..`),
    /// every aggregation switch linked to every core (`c{i}`). A server's
    /// rack is `i / servers_per_rack`; its aggregation switch is its rack's
    /// over `racks_per_agg`.
    ///
    /// Panics if `racks_per_agg` does not divide `racks` or a count is 0
    /// (scenario validation refuses those first).
    pub fn tree3(s: &Tree3, delay: Dur) -> Topology {
        assert!(s.servers_per_rack > 0 && s.racks > 0 && s.cores > 0 && s.tor_uplinks > 0);
        assert!(
            s.racks_per_agg > 0 && s.racks % s.racks_per_agg == 0,
            "racks_per_agg must divide racks"
        );
        let mut t = Topology::default();
        let cores: Vec<usize> = (0..s.cores)
            .map(|i| t.add_node(format!("c{i}"), NodeKind::Switch))
            .collect();
        let aggs: Vec<usize> = (0..s.racks / s.racks_per_agg)
            .map(|a| t.add_node(format!("g{a}"), NodeKind::Switch))
            .collect();
        for &g in &aggs {
            for &c in &cores {
                t.links.push(LinkSpec {
                    a: g,
                    b: c,
                    rate_bps: s.agg_core_rate_bps,
                    delay,
                    buffer_a_bytes: Some(s.agg_buffer_bytes),
                    buffer_b_bytes: Some(s.core_buffer_bytes),
                });
            }
        }
        let mut tors = Vec::with_capacity(s.racks);
        for r in 0..s.racks {
            let tor = t.add_node(format!("t{r}"), NodeKind::Switch);
            tors.push(tor);
            for _ in 0..s.tor_uplinks {
                t.links.push(LinkSpec {
                    a: tor,
                    b: aggs[r / s.racks_per_agg],
                    rate_bps: s.tor_uplink_rate_bps,
                    delay,
                    buffer_a_bytes: Some(s.agg_buffer_bytes),
                    buffer_b_bytes: Some(s.agg_buffer_bytes),
                });
            }
        }
        for i in 0..s.racks * s.servers_per_rack {
            let h = t.add_node(format!("h{i}"), NodeKind::Host);
            let tor = tors[i / s.servers_per_rack];
            t.links.push(LinkSpec {
                a: h,
                b: tor,
                rate_bps: s.edge_rate_bps,
                delay,
                buffer_a_bytes: None,
                buffer_b_bytes: Some(s.edge_buffer_bytes),
            });
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fat_tree_has_the_textbook_counts() {
        for k in [4usize, 8] {
            let t = Topology::fat_tree(k, 1, Dur::ZERO);
            let hosts = t.hosts().len();
            let switches = t.nodes.len() - hosts;
            assert_eq!(hosts, k * k * k / 4);
            assert_eq!(switches, 5 * k * k / 4);
            // every switch has exactly k ports
            let mut degree = vec![0; t.nodes.len()];
            for l in &t.links {
                degree[l.a] += 1;
                degree[l.b] += 1;
            }
            for (i, n) in t.nodes.iter().enumerate() {
                let want = if n.kind == NodeKind::Host { 1 } else { k };
                assert_eq!(degree[i], want, "{}", n.name);
            }
        }
    }
}
