//! Algorithm 1: the multi-level aggregation tree (spec §Design 3).
//!
//! When a request has more hubs than N (the hubs that may stream to the
//! front-end at once, [`super::hub_count`]), hubs are linked under other
//! hubs until at most N talk to the front-end:
//!
//! ```text
//! cluster target servers by rack into swarms
//! for each swarm: hub := server with most requested objects; push hub on Q_h
//! sort Q_h ascending by requested objects in the hub's subtree
//! while |Q_h| > N:
//!     h_i := dequeue(Q_h)
//!     h_j := hub with fewest objects under the same aggregation router as h_i
//!     link h_i as a child of h_j
//!     while h_j has < N children and h_i has children:
//!         move h_i's last child (largest first) to h_j
//!     h_j.objects += h_i.objects; reposition h_j in Q_h
//! ```
//!
//! - Rule 1 (proximity): a hub is only ever linked under a hub of the same
//!   aggregation router ([`Proximity::Aggregation`]). SICC-NPS, the ablation
//!   without proximity, draws h_j at random across the data center instead
//!   ([`Proximity::Random`]).
//! - Rule 2: a child has fewer requested objects (its subtree included) than
//!   its parent. It holds by construction: h_i leaves Q_h as its minimum, so
//!   h_j had at least as many objects *before* h_i joined it (checked in the
//!   [`Link`] log), and every hub holds at least one object of its own, so
//!   afterwards the parent's subtree strictly exceeds the child's.
//!
//! Points the pseudocode leaves open, decided here (`docs/sicc.md`):
//! - h_j needs at least h_i's objects. Every hub still in Q_h has, since
//!   h_i is its minimum; the condition matters only for a hub that found
//!   no partner before (below), which may hold fewer.
//! - N bounds a hub's children where it can: h_j is the fewest-objects hub
//!   of the router *with fewer than N children*; only when every candidate
//!   of the router is full does h_i join the fewest-objects full one (the
//!   link log marks it, [`Link::parent_full`]). The front-end's fan-in is
//!   what N is for, so it wins over a hub's: refusing those links instead
//!   leaves many full hubs at the front-end (160 of 2,500 for N = 10 in
//!   `sicc_treetime`'s data center, where 50 routers allow 50).
//! - A hub with no partner (it is the only hub of its router still at the
//!   front-end, or the others hold fewer objects) stays a child of the
//!   front-end and the loop goes on with the next; no partner can appear
//!   later. So the front-end has more than N children only when Rule 1
//!   leaves no choice: then they are all under different routers.
//!
//! Ties are broken by swarm index (rack order), so the tree depends only on
//! the targets, N and (for [`Proximity::Random`]) the generator's state.
//! [`AggTree::build`] reuses every buffer: after the first request of a size
//! it does not allocate. Cost: two linear passes over the targets, then
//! O(H log H) over H hubs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::swarm::{Failover, Member, Swarm, Swarms};
use super::{SiccError, Target};
use crate::Rng;

/// Where a hub streams its objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parent {
    /// Straight to the front-end (the root).
    FrontEnd,
    /// To this hub, which forwards on.
    Hub(u32),
}

/// How h_j is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Proximity {
    /// Rule 1: the fewest-objects hub under the same aggregation router.
    #[default]
    Aggregation,
    /// SICC-NPS: a random hub anywhere (uses the generator).
    Random,
}

/// Settings of one tree build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeConfig {
    /// N: the most children any node takes (at least 1; see the module doc
    /// for when the front-end takes more). `u32::MAX`: no tree (SICC-NMT).
    pub max_children: u32,
    /// Rule 1 or the SICC-NPS ablation.
    pub proximity: Proximity,
}

impl TreeConfig {
    /// Algorithm 1 with at most `max_children` (N) children per node.
    pub fn new(max_children: u32) -> TreeConfig {
        TreeConfig {
            max_children,
            proximity: Proximity::Aggregation,
        }
    }

    /// SICC-NMT: every hub streams straight to the front-end.
    pub fn flat() -> TreeConfig {
        TreeConfig::new(u32::MAX)
    }
}

/// One link Algorithm 1 made, in the order it made them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The hub linked (h_i, or one of h_i's children moved up).
    pub child: u32,
    /// Its new parent (h_j).
    pub parent: u32,
    /// The child's subtree objects at that moment.
    pub child_objects: u64,
    /// The parent's subtree objects before h_i joined it.
    pub parent_objects: u64,
    /// Whether this is one of h_i's children moved to h_j.
    pub moved: bool,
    /// Whether h_j already had N children: no hub of the router with room
    /// held at least h_i's objects.
    pub parent_full: bool,
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// In Q_h.
    Queued,
    /// Talks to the front-end and no partner exists: out of Q_h's order but
    /// still a possible parent.
    Stuck,
    /// Linked under another hub.
    Linked,
}

/// A queue entry: subtree objects above, hub index in the low 24 bits
/// (one integer compares faster than a pair), smallest first.
type Key = Reverse<u64>;

/// Objects of a request must stay below this for [`key`].
const MAX_OBJECTS: u64 = 1 << 40;

fn key(objects: u64, h: u32) -> Key {
    debug_assert!(objects < MAX_OBJECTS && h < super::MAX_ID);
    Reverse(objects << 24 | h as u64)
}

fn unkey(k: Key) -> (u64, u32) {
    (k.0 >> 24, (k.0 & 0xFF_FFFF) as u32)
}

/// The aggregation tree of one request: swarms, hubs, and who streams to whom.
#[derive(Clone, Debug, Default)]
pub struct AggTree {
    swarms: Swarms,
    n: u32,
    parent: Vec<u32>,
    subtree: Vec<u64>,
    nchild: Vec<u32>,
    first_child: Vec<u32>,
    next_sib: Vec<u32>,
    state: Vec<State>,
    child_start: Vec<u32>,
    child_list: Vec<u32>,
    root: Vec<u32>,
    depth: Vec<u32>,
    links: Vec<Link>,
    // Scratch.
    global: BinaryHeap<Key>,
    agg_stamp: Vec<u32>,
    agg_slot: Vec<u32>,
    stamp: u32,
    /// Per router: hubs with room for a child, and full ones.
    room_heaps: Vec<BinaryHeap<Key>>,
    full_heaps: Vec<BinaryHeap<Key>>,
    hub_agg: Vec<u32>,
    hold: Vec<Key>,
    kids: Vec<u32>,
    moving: Vec<u32>,
    /// SICC-NPS: live hubs with room, and all live hubs.
    open: Pool,
    alive: Pool,
}

/// A set of hubs with O(1) removal and uniform draws (SICC-NPS).
#[derive(Clone, Debug, Default)]
struct Pool {
    items: Vec<u32>,
    pos: Vec<u32>,
}

impl Pool {
    fn fill(&mut self, h: usize) {
        self.items.clear();
        self.items.extend(0..h as u32);
        self.pos.clear();
        self.pos.extend(0..h as u32);
    }

    fn remove(&mut self, x: u32) {
        let p = self.pos[x as usize];
        if p == NONE {
            return;
        }
        let last = *self.items.last().expect("x is in the pool");
        self.items.swap_remove(p as usize);
        if last != x {
            self.pos[last as usize] = p;
        }
        self.pos[x as usize] = NONE;
    }

    /// A uniformly drawn member other than `x` with at least `need` objects.
    fn draw(&self, x: u32, need: u64, subtree: &[u64], rng: &mut Rng) -> Option<u32> {
        let p = self.pos[x as usize];
        let others = self.items.len() - usize::from(p != NONE);
        if others == 0 {
            return None;
        }
        let mut k = rng.below(others as u64) as usize;
        if p != NONE && k >= p as usize {
            k += 1;
        }
        let c = self.items[k];
        if subtree[c as usize] >= need {
            return Some(c);
        }
        // Only a hub that found no partner can hold fewer objects than h_i: rare, scan.
        self.items
            .iter()
            .copied()
            .find(|&c| c != x && subtree[c as usize] >= need)
    }
}

/// The fewest-objects hub in `heap` other than `hi` with at least `need`
/// objects that is live and has room for a child (`room`) or is full
/// (`!room`). Drops stale entries and `hi`'s; keeps the others.
#[allow(clippy::too_many_arguments)]
fn search(
    heap: &mut BinaryHeap<Key>,
    hold: &mut Vec<Key>,
    hi: u32,
    need: u64,
    room: bool,
    state: &[State],
    subtree: &[u64],
    nchild: &[u32],
    n: u32,
) -> Option<u32> {
    hold.clear();
    let mut found = None;
    while let Some(k) = heap.pop() {
        let (objects, c) = unkey(k);
        let ci = c as usize;
        let valid = state[ci] != State::Linked && subtree[ci] == objects && (nchild[ci] < n) == room;
        if !valid || c == hi {
            continue; // stale (or h_i, which leaves Q_h; run() puts it back if it gets stuck)
        }
        if objects < need {
            hold.push(k);
            continue;
        }
        found = Some(c); // link() pushes its new key
        break;
    }
    heap.extend(hold.drain(..));
    found
}

fn reset<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

impl AggTree {
    /// An empty tree; [`AggTree::build`] fills it.
    pub fn new() -> AggTree {
        AggTree::default()
    }

    /// Build the swarms of `targets` and Algorithm 1's tree over their hubs.
    /// `rng` is drawn from only with [`Proximity::Random`]. Errors: those of
    /// [`Swarms::build`].
    pub fn build(&mut self, targets: &[Target], cfg: &TreeConfig, rng: &mut Rng) -> Result<(), SiccError> {
        self.swarms.build(targets)?;
        let total: u64 = self.swarms.all().iter().map(|s| s.objects).sum();
        if total >= MAX_OBJECTS {
            return Err(SiccError::TooManyObjects { objects: total });
        }
        let h = self.swarms.len();
        let n = cfg.max_children.max(1);
        self.n = n;
        reset(&mut self.parent, h, NONE);
        reset(&mut self.nchild, h, 0);
        reset(&mut self.first_child, h, NONE);
        reset(&mut self.next_sib, h, NONE);
        reset(&mut self.state, h, State::Queued);
        self.subtree.clear();
        self.subtree.extend(self.swarms.all().iter().map(|s| s.objects));
        self.links.clear();
        if h > n as usize {
            let mut v = std::mem::take(&mut self.global).into_vec();
            v.clear();
            v.extend((0..h).map(|i| key(self.subtree[i], i as u32)));
            self.global = BinaryHeap::from(v);
            match cfg.proximity {
                Proximity::Aggregation => self.init_agg_heaps(),
                Proximity::Random => {
                    self.open.fill(h);
                    self.alive.fill(h);
                }
            }
            self.run(h, cfg.proximity, rng);
        }
        self.finish();
        Ok(())
    }

    /// The loop of Algorithm 1 over `h` hubs.
    fn run(&mut self, h: usize, proximity: Proximity, rng: &mut Rng) {
        let mut live = h;
        while live > self.n as usize {
            let Some(k) = self.global.pop() else {
                break;
            };
            let (objects, hi) = unkey(k);
            let i = hi as usize;
            if self.state[i] != State::Queued || self.subtree[i] != objects {
                continue; // a stale entry: h_i was repositioned or linked
            }
            let partner = match proximity {
                Proximity::Aggregation => self.partner_in_agg(hi),
                Proximity::Random => self.partner_random(hi, rng),
            };
            match partner {
                Some((hj, full)) => {
                    self.link(hi, hj, full, proximity);
                    live -= 1;
                }
                None => {
                    self.state[i] = State::Stuck;
                    if proximity == Proximity::Aggregation {
                        // Still a possible parent for its router's other hubs.
                        self.requeue_in_agg(hi);
                    }
                }
            }
        }
    }

    /// One heap of candidate parents per aggregation router.
    fn init_agg_heaps(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.agg_stamp.iter_mut().for_each(|s| *s = 0);
            self.stamp = 1;
        }
        self.hub_agg.clear();
        let mut used = 0usize;
        for (i, s) in self.swarms.all().iter().enumerate() {
            let a = s.agg as usize;
            if a >= self.agg_stamp.len() {
                self.agg_stamp.resize(a + 1, 0);
                self.agg_slot.resize(a + 1, 0);
            }
            if self.agg_stamp[a] != self.stamp {
                self.agg_stamp[a] = self.stamp;
                self.agg_slot[a] = used as u32;
                if used == self.room_heaps.len() {
                    self.room_heaps.push(BinaryHeap::new());
                    self.full_heaps.push(BinaryHeap::new());
                } else {
                    self.room_heaps[used].clear();
                    self.full_heaps[used].clear();
                }
                used += 1;
            }
            let slot = self.agg_slot[a];
            self.hub_agg.push(slot);
            self.room_heaps[slot as usize].push(key(self.subtree[i], i as u32));
        }
    }

    /// Put hub `h` (its current key) in its router's room or full heap.
    fn requeue_in_agg(&mut self, h: u32) {
        let slot = self.hub_agg[h as usize] as usize;
        let k = key(self.subtree[h as usize], h);
        if self.nchild[h as usize] < self.n {
            self.room_heaps[slot].push(k);
        } else {
            self.full_heaps[slot].push(k);
        }
    }

    /// h_j under Rule 1: the fewest-objects hub of h_i's aggregation
    /// router other than h_i, still talking to the front-end, with at least
    /// h_i's objects, among those with room for a child if any, else among
    /// the full ones (then the flag is true).
    fn partner_in_agg(&mut self, hi: u32) -> Option<(u32, bool)> {
        let need = self.subtree[hi as usize];
        let slot = self.hub_agg[hi as usize] as usize;
        let (state, subtree, nchild, n) = (&self.state, &self.subtree, &self.nchild, self.n);
        let room = &mut self.room_heaps[slot];
        if let Some(c) = search(room, &mut self.hold, hi, need, true, state, subtree, nchild, n) {
            return Some((c, false));
        }
        let full = &mut self.full_heaps[slot];
        search(full, &mut self.hold, hi, need, false, state, subtree, nchild, n).map(|c| (c, true))
    }

    /// h_j for SICC-NPS: a random hub anywhere with at least h_i's objects,
    /// among those with room if any, else among all.
    fn partner_random(&mut self, hi: u32, rng: &mut Rng) -> Option<(u32, bool)> {
        let need = self.subtree[hi as usize];
        if let Some(c) = self.open.draw(hi, need, &self.subtree, rng) {
            return Some((c, false));
        }
        self.alive.draw(hi, need, &self.subtree, rng).map(|c| (c, true))
    }

    fn attach(&mut self, c: u32, p: u32) {
        self.parent[c as usize] = p;
        self.next_sib[c as usize] = self.first_child[p as usize];
        self.first_child[p as usize] = c;
        self.nchild[p as usize] += 1;
    }

    /// Move h_i's largest children (ties: lowest index) to h_j while h_j
    /// has fewer than N children; h_i keeps the rest in their order.
    fn move_children_up(&mut self, hi: u32, hj: u32, before_j: u64) {
        let (i, j) = (hi as usize, hj as usize);
        let room = self.n.saturating_sub(self.nchild[j]) as usize;
        if room == 0 || self.nchild[i] == 0 {
            return;
        }
        self.kids.clear();
        let mut c = self.first_child[i];
        while c != NONE {
            self.kids.push(c);
            c = self.next_sib[c as usize];
        }
        self.moving.clear();
        self.moving.extend_from_slice(&self.kids);
        let subtree = &self.subtree;
        self.moving
            .sort_unstable_by(|&a, &b| subtree[b as usize].cmp(&subtree[a as usize]).then(a.cmp(&b)));
        self.moving.truncate(room);
        for &c in &self.moving {
            self.parent[c as usize] = hj; // marks it moved
        }
        // h_i's list without the moved ones, in the same order.
        self.first_child[i] = NONE;
        for &c in self.kids.iter().rev() {
            if self.parent[c as usize] == hi {
                self.next_sib[c as usize] = self.first_child[i];
                self.first_child[i] = c;
            }
        }
        self.nchild[i] -= self.moving.len() as u32;
        for k in 0..self.moving.len() {
            let c = self.moving[k];
            self.subtree[i] -= self.subtree[c as usize];
            self.attach(c, hj);
            self.links.push(Link {
                child: c,
                parent: hj,
                child_objects: self.subtree[c as usize],
                parent_objects: before_j,
                moved: true,
                parent_full: false,
            });
        }
    }

    /// Link h_i under h_j, move h_i's largest children up while h_j has
    /// room, add h_i's objects to h_j and reposition h_j.
    fn link(&mut self, hi: u32, hj: u32, parent_full: bool, proximity: Proximity) {
        let (i, j) = (hi as usize, hj as usize);
        let total_i = self.subtree[i];
        let before_j = self.subtree[j];
        self.attach(hi, hj);
        self.links.push(Link {
            child: hi,
            parent: hj,
            child_objects: total_i,
            parent_objects: before_j,
            moved: false,
            parent_full,
        });
        self.move_children_up(hi, hj, before_j);
        self.subtree[j] = before_j + total_i;
        self.state[i] = State::Linked;
        if self.state[j] == State::Queued {
            self.global.push(key(self.subtree[j], hj));
        }
        match proximity {
            Proximity::Aggregation => self.requeue_in_agg(hj),
            Proximity::Random => {
                self.open.remove(hi);
                self.alive.remove(hi);
                if self.nchild[j] >= self.n {
                    self.open.remove(hj);
                }
            }
        }
    }

    /// Lay the children out (in link order), list the front-end's, and
    /// compute depths.
    fn finish(&mut self) {
        let h = self.parent.len();
        self.child_start.clear();
        self.child_start.reserve(h + 1);
        let mut at = 0u32;
        for &k in &self.nchild {
            self.child_start.push(at);
            at += k;
        }
        self.child_start.push(at);
        reset(&mut self.child_list, at as usize, NONE);
        for p in 0..h {
            // Head insertion listed the newest first: fill from the end.
            let mut w = self.child_start[p + 1];
            let mut c = self.first_child[p];
            while c != NONE {
                w -= 1;
                self.child_list[w as usize] = c;
                c = self.next_sib[c as usize];
            }
        }
        self.root.clear();
        self.root
            .extend((0..h as u32).filter(|&i| self.parent[i as usize] == NONE));
        reset(&mut self.depth, h, 0);
        // Parents before children: a stack walk from the front-end's children.
        self.kids.clear();
        self.kids.extend_from_slice(&self.root);
        while let Some(x) = self.kids.pop() {
            let d = match self.parent[x as usize] {
                NONE => 1,
                p => self.depth[p as usize] + 1,
            };
            self.depth[x as usize] = d;
            let (a, b) = (
                self.child_start[x as usize] as usize,
                self.child_start[x as usize + 1] as usize,
            );
            for &c in &self.child_list[a..b] {
                self.kids.push(c);
            }
        }
    }

    /// Number of hubs (= swarms).
    pub fn hubs(&self) -> usize {
        self.swarms.len()
    }

    /// N as used by the last build (at least 1).
    pub fn max_children(&self) -> u32 {
        self.n
    }

    /// The swarms the tree is built over.
    pub fn swarms(&self) -> &Swarms {
        &self.swarms
    }

    /// Hub `h`'s swarm: rack, router, hub and backup servers, own objects.
    /// Panics if `h >= hubs()`.
    pub fn swarm(&self, h: u32) -> &Swarm {
        self.swarms.swarm(h as usize)
    }

    /// Live members of hub `h`'s swarm. Panics if `h >= hubs()`.
    pub fn members(&self, h: u32) -> &[Member] {
        self.swarms.members(h as usize)
    }

    /// Where hub `h` streams. Panics if `h >= hubs()`.
    pub fn parent(&self, h: u32) -> Parent {
        match self.parent[h as usize] {
            NONE => Parent::FrontEnd,
            p => Parent::Hub(p),
        }
    }

    /// Hubs that stream to hub `h`, in link order. Panics if `h >= hubs()`.
    pub fn children(&self, h: u32) -> &[u32] {
        let (a, b) = (
            self.child_start[h as usize] as usize,
            self.child_start[h as usize + 1] as usize,
        );
        &self.child_list[a..b]
    }

    /// Hubs that stream to the front-end, in rack order.
    pub fn root_children(&self) -> &[u32] {
        &self.root
    }

    /// Requested objects of hub `h`'s subtree (its swarm and every hub
    /// below it): what it will forward. Panics if `h >= hubs()`.
    pub fn subtree_objects(&self, h: u32) -> u64 {
        self.subtree[h as usize]
    }

    /// Depth of hub `h`: 1 for the front-end's children. Panics if `h >= hubs()`.
    pub fn depth(&self, h: u32) -> u32 {
        self.depth[h as usize]
    }

    /// Deepest hub's depth (0 without hubs).
    pub fn max_depth(&self) -> u32 {
        self.depth.iter().copied().max().unwrap_or(0)
    }

    /// The links in the order Algorithm 1 made them.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// Hub `h`'s server failed: the backup takes over in the same place of
    /// the tree (same parent and children), and the failed server's objects
    /// leave the subtree counts of `h` and its ancestors (the driver fetches
    /// them from replicas). Rule 2 still holds: the new hub holds at least
    /// one object. Errors: no such hub, no live member left.
    pub fn fail_hub(&mut self, h: u32) -> Result<Failover, SiccError> {
        if h as usize >= self.hubs() {
            return Err(SiccError::NoSuchHub { hub: h });
        }
        let f = self.swarms.fail_hub(h as usize)?;
        let lost = f.lost_objects as u64;
        let mut x = h;
        while x != NONE {
            self.subtree[x as usize] -= lost;
            x = self.parent[x as usize];
        }
        Ok(f)
    }
}
