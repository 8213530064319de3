//! Hop distances to destination hosts, kept per *attachment group*, not per
//! host: the hosts reached from the same set of switches (every host on one
//! edge switch of a fat-tree) are the same distance from every switch, so
//! they share one table (the per-switch table indexed by destination prefix
//! of a real fabric, stored transposed).
//!
//! A table holds one `u16` per switch and is filled by one breadth-first
//! search over the switches the first time a destination of its group is
//! asked for. Memory is therefore at most groups x switches x 2 B plus
//! O(nodes + links) (a k = 84 fat-tree, 148,176 hosts: 3,528 groups x 8,820
//! switches, 62 MB), where one table per destination host was hosts x nodes
//! x 4 B (87 GiB). Hosts do not forward: a path crosses hosts only at its
//! two ends, exactly as one breadth-first search from each destination
//! would give.

use super::Graph;
use std::collections::{HashMap, VecDeque};

/// Unreachable, in a table.
const FAR: u16 = u16::MAX;

/// Distance tables of one graph (see the module docs).
#[derive(Clone, Debug)]
pub(super) struct Distances {
    /// Per node: its index among the switches, or `u32::MAX` for a host.
    switch_index: Vec<u32>,
    /// Per node: the attachment group of a host, or `u32::MAX` for a switch.
    group_of: Vec<u32>,
    /// Group `g`'s seeds (the switches with a link into its hosts, as
    /// switch indices) are `seeds[seed_start[g]..seed_start[g + 1]]`.
    seed_start: Vec<u32>,
    seeds: Vec<u32>,
    /// Switch `x`'s in-neighbours that are switches (switch indices) are
    /// `ins[in_start[x]..in_start[x + 1]]`: the search walks links backwards.
    in_start: Vec<u32>,
    ins: Vec<u32>,
    /// Group `g`'s table once asked for: each switch's hop distance to the
    /// group's hosts ([`FAR`] if none is reachable).
    tables: Vec<Option<Box<[u16]>>>,
    /// The search's frontier (kept to reuse its memory).
    queue: VecDeque<u32>,
}

impl Distances {
    /// The groups and search structure of `g`; fails if `g` has so many
    /// switches that a distance might not fit a table entry.
    pub(super) fn new(g: &Graph) -> Result<Distances, String> {
        let n = g.nodes();
        let mut switch_index = vec![u32::MAX; n];
        let mut switches = 0u32;
        for v in 0..n as u32 {
            if !g.is_host(v) {
                switch_index[v as usize] = switches;
                switches += 1;
            }
        }
        if switches >= FAR as u32 {
            return Err(format!(
                "{switches} switches: routing supports at most {} (distances are kept in 16 bits)",
                FAR - 1
            ));
        }
        // in-neighbours of each node that are switches, flat
        let mut in_count = vec![0u32; n + 1];
        for a in 0..n as u32 {
            if g.is_host(a) {
                continue;
            }
            for &(_, b) in g.out(a) {
                in_count[b as usize + 1] += 1;
            }
        }
        for v in 0..n {
            in_count[v + 1] += in_count[v];
        }
        let mut fill = in_count.clone();
        let mut in_all = vec![0u32; in_count[n] as usize];
        for a in 0..n as u32 {
            if g.is_host(a) {
                continue;
            }
            for &(_, b) in g.out(a) {
                in_all[fill[b as usize] as usize] = switch_index[a as usize];
                fill[b as usize] += 1;
            }
        }
        // hosts grouped by their (sorted, distinct) switch in-neighbours
        let mut group_of = vec![u32::MAX; n];
        let mut groups: HashMap<Vec<u32>, u32> = HashMap::new();
        let (mut seed_start, mut seeds) = (vec![0u32], Vec::new());
        let mut key = Vec::new();
        for h in (0..n as u32).filter(|&h| g.is_host(h)) {
            key.clear();
            key.extend_from_slice(&in_all[in_count[h as usize] as usize..in_count[h as usize + 1] as usize]);
            key.sort_unstable();
            key.dedup();
            let next = groups.len() as u32;
            let id = *groups.entry(key.clone()).or_insert_with(|| {
                seeds.extend_from_slice(&key);
                seed_start.push(seeds.len() as u32);
                next
            });
            group_of[h as usize] = id;
        }
        // the switches' part of the in-neighbour lists, re-indexed by switch
        let (mut in_start, mut ins) = (Vec::with_capacity(switches as usize + 1), Vec::new());
        in_start.push(0);
        for v in (0..n as u32).filter(|&v| !g.is_host(v)) {
            ins.extend_from_slice(&in_all[in_count[v as usize] as usize..in_count[v as usize + 1] as usize]);
            in_start.push(ins.len() as u32);
        }
        let tables = vec![None; groups.len()];
        Ok(Distances {
            switch_index,
            group_of,
            seed_start,
            seeds,
            in_start,
            ins,
            tables,
            queue: VecDeque::new(),
        })
    }

    fn switches(&self) -> usize {
        self.in_start.len() - 1
    }

    /// Number of attachment groups.
    pub(super) fn groups(&self) -> usize {
        self.tables.len()
    }

    /// Bytes held now.
    pub(super) fn bytes(&self) -> u64 {
        let filled = self.tables.iter().filter(|t| t.is_some()).count();
        self.fixed_bytes() + (filled * self.switches() * 2) as u64
    }

    /// Bytes held once every group's table is filled.
    pub(super) fn bytes_bound(&self) -> u64 {
        self.fixed_bytes() + (self.groups() * self.switches() * 2) as u64
    }

    fn fixed_bytes(&self) -> u64 {
        let words = self.switch_index.len()
            + self.group_of.len()
            + self.seed_start.len()
            + self.seeds.len()
            + self.in_start.len()
            + self.ins.len();
        (4 * words + 16 * self.tables.len()) as u64
    }

    /// The distances to host `dst` (filled on first use).
    pub(super) fn to(&mut self, dst: u32) -> DistTo<'_> {
        let group = self.group_of[dst as usize] as usize;
        if self.tables[group].is_none() {
            let table = self.search(group);
            self.tables[group] = Some(table);
        }
        DistTo {
            dst,
            switch_index: &self.switch_index,
            table: self.tables[group].as_deref().expect("filled above"),
        }
    }

    /// One breadth-first search backwards from the group's seeds (distance 1).
    fn search(&mut self, group: usize) -> Box<[u16]> {
        let mut table = vec![FAR; self.switches()].into_boxed_slice();
        let q = &mut self.queue;
        q.clear();
        for &s in &self.seeds[self.seed_start[group] as usize..self.seed_start[group + 1] as usize] {
            table[s as usize] = 1;
            q.push_back(s);
        }
        while let Some(x) = q.pop_front() {
            let d = table[x as usize] + 1;
            for &v in &self.ins[self.in_start[x as usize] as usize..self.in_start[x as usize + 1] as usize] {
                if table[v as usize] == FAR {
                    table[v as usize] = d;
                    q.push_back(v);
                }
            }
        }
        table
    }
}

/// The hop distances of nodes to one destination host.
pub(super) struct DistTo<'a> {
    dst: u32,
    switch_index: &'a [u32],
    table: &'a [u16],
}

impl DistTo<'_> {
    /// The distance of switch (or the destination) `v`; `None` for another
    /// host (hosts do not forward) or a switch that cannot reach it.
    #[inline]
    pub(super) fn forwarding(&self, v: u32) -> Option<u32> {
        if v == self.dst {
            return Some(0);
        }
        match self.switch_index[v as usize] {
            u32::MAX => None,
            x => match self.table[x as usize] {
                FAR => None,
                d => Some(d as u32),
            },
        }
    }

    /// The distance of any node `u`: a host other than the destination is
    /// one hop more than its nearest out-neighbour that forwards.
    pub(super) fn of(&self, g: &Graph, u: u32) -> Option<u32> {
        if u == self.dst || self.switch_index[u as usize] != u32::MAX {
            return self.forwarding(u);
        }
        g.out(u)
            .iter()
            .filter_map(|&(_, v)| self.forwarding(v))
            .min()
            .map(|d| d + 1)
    }
}
