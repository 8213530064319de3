//! The wired network as routing sees it: nodes (hosts and switches) and
//! directed links, stored flat (compressed sparse rows) so a network of
//! 150,000 hosts is a few arrays, not one allocation per node.

use super::LinkId;

/// Hosts and switches, directed links.
#[derive(Clone, Debug)]
pub struct Graph {
    is_host: Vec<bool>,
    /// Node `n`'s out-links are `out[out_start[n]..out_start[n + 1]]`.
    out_start: Vec<u32>,
    /// Out-links of every node in link-id order: (link, head node).
    out: Vec<(LinkId, u32)>,
}

impl Graph {
    /// A graph of `is_host.len()` nodes whose directed link `i` goes from
    /// `links[i].0` to `links[i].1`. Panics if a link names a node that does not exist.
    pub fn new(is_host: Vec<bool>, links: &[(u32, u32)]) -> Graph {
        let n = is_host.len();
        let mut out_start = vec![0u32; n + 1];
        for (i, &(a, b)) in links.iter().enumerate() {
            assert!((a as usize) < n && (b as usize) < n, "link {i} ends at no node");
            out_start[a as usize + 1] += 1;
        }
        for v in 0..n {
            out_start[v + 1] += out_start[v];
        }
        let mut fill = out_start.clone();
        let mut out = vec![(0, 0); links.len()];
        for (i, &(a, b)) in links.iter().enumerate() {
            out[fill[a as usize] as usize] = (i as LinkId, b);
            fill[a as usize] += 1;
        }
        Graph {
            is_host,
            out_start,
            out,
        }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.is_host.len()
    }

    /// Number of directed links.
    pub fn links(&self) -> usize {
        self.out.len()
    }

    /// True if node `n` is a host.
    #[inline]
    pub fn is_host(&self, n: u32) -> bool {
        self.is_host[n as usize]
    }

    /// Out-links of node `n`: (link, head node), in link-id order.
    #[inline]
    pub fn out(&self, n: u32) -> &[(LinkId, u32)] {
        &self.out[self.out_start[n as usize] as usize..self.out_start[n as usize + 1] as usize]
    }

    /// The node `link` (leaving `u`) enters.
    #[inline]
    pub(super) fn head(&self, u: u32, link: LinkId) -> u32 {
        self.out(u)
            .iter()
            .find(|&&(l, _)| l == link)
            .map(|&(_, v)| v)
            .expect("link leaves its node")
    }

    /// Bytes this graph holds.
    pub fn bytes(&self) -> u64 {
        (self.is_host.len() + 4 * self.out_start.len() + 8 * self.out.len()) as u64
    }
}
