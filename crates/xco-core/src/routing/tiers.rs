//! Tiers of a tree-of-switches network and the address digits of its hosts,
//! for the fat-tree routing modes.
//!
//! A switch's tier is its hop distance to the nearest host (edge 1,
//! aggregation 2, core 3 in a fat-tree). A host's address digit at tier `L`
//! is the position, among its siblings ordered by node id, of the host's
//! ancestor at tier `L - 1` under its first parent at tier `L`: at tier 1
//! the host's position on its edge switch, at tier 2 its edge switch's
//! position in its pod. These are the digits PortLand-like addressing
//! routes by.

use super::{Graph, LinkId};

/// Tiers and address digits, computed once per graph.
#[derive(Clone, Debug)]
pub(super) struct Tiers {
    tier: Vec<u32>,
    top: u32,
    /// Host `h`'s digit at tier L is `digits[h * top + L - 1]` (0 for switches
    /// and for tiers a host has no digit at).
    digits: Vec<u32>,
}

impl Tiers {
    /// Measure `g`; fails if a switch reaches no host or a switch below the
    /// top tier has no link up (the climb of equal-length routing would stall).
    pub(super) fn new(g: &Graph) -> Result<Tiers, String> {
        let n = g.nodes();
        let mut tier = vec![u32::MAX; n];
        let mut frontier = std::collections::VecDeque::new();
        for v in 0..n as u32 {
            if g.is_host(v) {
                tier[v as usize] = 0;
                frontier.push_back(v);
            }
        }
        while let Some(u) = frontier.pop_front() {
            for &(_, v) in g.out(u) {
                if tier[v as usize] == u32::MAX {
                    tier[v as usize] = tier[u as usize] + 1;
                    frontier.push_back(v);
                }
            }
        }
        if let Some(v) = (0..n).find(|&v| tier[v] == u32::MAX) {
            return Err(format!("node {v} is connected to no host"));
        }
        let top = tier.iter().copied().max().unwrap_or(0);
        let up_of = |u: u32| -> Option<u32> {
            g.out(u)
                .iter()
                .find(|&&(_, v)| !g.is_host(v) && tier[v as usize] == tier[u as usize] + 1)
                .map(|&(_, v)| v)
        };
        for v in 0..n as u32 {
            if !g.is_host(v) && tier[v as usize] < top && up_of(v).is_none() {
                return Err(format!(
                    "switch {v} (tier {}) has no link to a switch of tier {}: the fat-tree \
                     routing modes need every switch below the top tier to have one",
                    tier[v as usize],
                    tier[v as usize] + 1
                ));
            }
        }
        let mut digits = vec![0u32; n * top as usize];
        // each parent's sorted children at a level, listed once (a star's
        // hub has every host as a child: listing them per host was quadratic)
        let mut children: std::collections::HashMap<(u32, u32), Vec<u32>> = Default::default();
        for h in (0..n as u32).filter(|&h| g.is_host(h)) {
            let d = &mut digits[h as usize * top as usize..(h as usize + 1) * top as usize];
            let mut child = h;
            let mut parent = match g.out(h).first() {
                Some(&(_, p)) => p,
                None => continue,
            };
            for level in 1..=top {
                let siblings = children.entry((parent, level)).or_insert_with(|| {
                    let mut v: Vec<u32> = g
                        .out(parent)
                        .iter()
                        .map(|&(_, v)| v)
                        .filter(|&v| tier[v as usize] == level - 1 && (level > 1 || g.is_host(v)))
                        .collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                });
                d[level as usize - 1] = siblings.binary_search(&child).unwrap_or(0) as u32;
                child = parent;
                match up_of(parent) {
                    Some(p) => parent = p,
                    None => break,
                }
            }
        }
        Ok(Tiers { tier, top, digits })
    }

    /// The tier of node `n`.
    #[inline]
    pub(super) fn tier(&self, n: u32) -> u32 {
        self.tier[n as usize]
    }

    /// The highest tier.
    #[inline]
    pub(super) fn top(&self) -> u32 {
        self.top
    }

    /// Host `h`'s address digit at tier `level` (0 where it has none).
    #[inline]
    pub(super) fn digit(&self, h: u32, level: u32) -> u32 {
        match level {
            1.. if level <= self.top => self.digits[h as usize * self.top as usize + level as usize - 1],
            _ => 0,
        }
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> u64 {
        4 * (self.tier.len() + self.digits.len()) as u64
    }

    /// The links from `u` up to the next tier, in link-id order.
    pub(super) fn up<'a>(&'a self, g: &'a Graph, u: u32) -> impl Iterator<Item = LinkId> + 'a {
        let t = self.tier(u);
        g.out(u)
            .iter()
            .filter(move |&&(_, v)| !g.is_host(v) && self.tier(v) == t + 1)
            .map(|&(l, _)| l)
    }
}
