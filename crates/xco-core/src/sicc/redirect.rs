//! Query redirection (spec §Design 6).
//!
//! The progress of hub h is the time it still needs:
//! ```text
//! p_h = |D_h| · s / b_r(h)                                     (eq 7)
//! p̄  = (1 / |H|) · Σ_h p_h                                     (eq 8)
//! ```
//! with D_h the untransmitted objects of h's subtree, s the mean object
//! size and b_r(h) h's measured rate. Hubs above the mean are low-progress,
//! below it high-progress. For each low-progress hub (slowest first), walk
//! its untransmitted queries from the last to be sent (the ones it would
//! reach latest); if a replica of the object lives in the swarm of a
//! high-progress hub, move the query there (to that replica holder; among
//! several high-progress hubs, the one with the least progress time), and
//! update both hubs' p. Stop with a hub once it is no longer low-progress;
//! a receiving hub leaves the high-progress set once it no longer is.
//!
//! Units: p in ns (bytes × 8 × 10^9 / bit/s). A hub with objects left and
//! a measured rate of 0 has infinite progress time: it is low-progress and
//! left out of the mean (which would be infinite too). A hub with nothing
//! left has p = 0.
//!
//! A query only ever moves to a server that [`ReplicaMap::holders`] lists
//! for its object, and only into the swarm of another hub
//! ([`ReplicaMap::hub_of`]).

/// Where replicas are, as the driver knows it.
pub trait ReplicaMap {
    /// Servers holding a copy of `object` (the queried one may be listed).
    fn holders(&self, object: u32) -> &[u32];
    /// The hub whose swarm `server` answers in for this request (`None`:
    /// none; a driver may map every server of a hub's rack to that hub).
    fn hub_of(&self, server: u32) -> Option<u32>;
}

/// One untransmitted query: asked of `server`, attributed to `hub`'s subtree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingQuery {
    /// The hub whose subtree owes it (index into the rates).
    pub hub: u32,
    /// Object id.
    pub object: u32,
    /// The server asked for it.
    pub server: u32,
}

/// A query to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// Index of the query in the pending list.
    pub query: u32,
    /// Object id.
    pub object: u32,
    /// Hub it leaves.
    pub from_hub: u32,
    /// Hub it joins.
    pub to_hub: u32,
    /// The replica holder to ask instead.
    pub to_server: u32,
}

/// What one [`Redirector::plan`] saw and did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedirectStats {
    /// p̄ (eq 8), ns.
    pub mean_progress_ns: u64,
    /// Low-progress hubs at the start.
    pub low: u32,
    /// High-progress hubs at the start.
    pub high: u32,
    /// Queries moved.
    pub moved: u32,
}

/// Eq 7: ns hub needs for `remaining_objects` of `mean_object_bytes` at
/// `rate_bps` (0 with nothing left; `u64::MAX` at rate 0).
pub fn progress_ns(remaining_objects: u64, mean_object_bytes: u64, rate_bps: u64) -> u64 {
    if remaining_objects == 0 {
        return 0;
    }
    if rate_bps == 0 {
        return u64::MAX;
    }
    let ns = remaining_objects as u128 * mean_object_bytes as u128 * 8_000_000_000 / rate_bps as u128;
    ns.min(u64::MAX as u128 - 1) as u64
}

/// Query redirection with reusable buffers.
#[derive(Clone, Debug, Default)]
pub struct Redirector {
    remaining: Vec<u64>,
    progress: Vec<u64>,
    high: Vec<bool>,
    order: Vec<u32>,
    start: Vec<u32>,
    by_hub: Vec<u32>,
}

impl Redirector {
    /// A redirector; buffers grow on first use.
    pub fn new() -> Redirector {
        Redirector::default()
    }

    /// Plan the moves for hubs with measured rates `rates_bps` (b_r, by hub
    /// index) and the untransmitted queries `pending` (each hub's in its
    /// send order); moves go to `out` (cleared first), in the order made.
    /// Panics if a query names a hub beyond `rates_bps`.
    pub fn plan(
        &mut self,
        rates_bps: &[u64],
        pending: &[PendingQuery],
        mean_object_bytes: u64,
        replicas: &impl ReplicaMap,
        out: &mut Vec<Redirect>,
    ) -> RedirectStats {
        out.clear();
        let h = rates_bps.len();
        self.remaining.clear();
        self.remaining.resize(h, 0);
        for q in pending {
            self.remaining[q.hub as usize] += 1;
        }
        // Queries grouped by hub, each hub's in its order.
        self.start.clear();
        let mut at = 0u32;
        for &r in &self.remaining {
            self.start.push(at);
            at += r as u32;
        }
        self.start.push(at);
        self.by_hub.clear();
        self.by_hub.resize(pending.len(), 0);
        self.order.clear();
        self.order.extend_from_slice(&self.start[..h]);
        for (k, q) in pending.iter().enumerate() {
            let slot = &mut self.order[q.hub as usize];
            self.by_hub[*slot as usize] = k as u32;
            *slot += 1;
        }
        // Eqs 7 and 8.
        self.progress.clear();
        self.progress
            .extend((0..h).map(|i| progress_ns(self.remaining[i], mean_object_bytes, rates_bps[i])));
        let (mut sum, mut finite) = (0u128, 0u128);
        for &p in &self.progress {
            if p != u64::MAX {
                sum += p as u128;
                finite += 1;
            }
        }
        let mean = sum.checked_div(finite).unwrap_or(0) as u64;
        let mut stats = RedirectStats {
            mean_progress_ns: mean,
            ..RedirectStats::default()
        };
        self.high.clear();
        self.high.extend(self.progress.iter().map(|&p| p < mean));
        stats.high = self.high.iter().filter(|&&x| x).count() as u32;
        self.order.clear();
        self.order
            .extend((0..h as u32).filter(|&i| self.progress[i as usize] > mean));
        stats.low = self.order.len() as u32;
        let progress = &self.progress;
        self.order
            .sort_by(|&a, &b| progress[b as usize].cmp(&progress[a as usize]).then(a.cmp(&b)));
        for oi in 0..self.order.len() {
            let lo = self.order[oi] as usize;
            let (a, b) = (self.start[lo] as usize, self.start[lo + 1] as usize);
            for slot in (a..b).rev() {
                if self.progress[lo] <= mean {
                    break;
                }
                let k = self.by_hub[slot];
                let q = pending[k as usize];
                let mut best: Option<(u32, u32)> = None; // (hub, server)
                for &s in replicas.holders(q.object) {
                    if s == q.server {
                        continue;
                    }
                    let Some(g) = replicas.hub_of(s) else { continue };
                    let gi = g as usize;
                    if gi == lo || gi >= h || !self.high[gi] {
                        continue;
                    }
                    if best.is_none_or(|(bg, _)| self.progress[gi] < self.progress[bg as usize]) {
                        best = Some((g, s));
                    }
                }
                let Some((g, s)) = best else { continue };
                out.push(Redirect {
                    query: k,
                    object: q.object,
                    from_hub: lo as u32,
                    to_hub: g,
                    to_server: s,
                });
                stats.moved += 1;
                let gi = g as usize;
                self.remaining[lo] -= 1;
                self.remaining[gi] += 1;
                self.progress[lo] = progress_ns(self.remaining[lo], mean_object_bytes, rates_bps[lo]);
                self.progress[gi] = progress_ns(self.remaining[gi], mean_object_bytes, rates_bps[gi]);
                if self.progress[gi] >= mean {
                    self.high[gi] = false;
                }
            }
        }
        stats
    }

    /// p of every hub after the last [`Redirector::plan`] (its moves applied).
    pub fn progress_after(&self) -> &[u64] {
        &self.progress
    }
}
