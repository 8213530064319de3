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
