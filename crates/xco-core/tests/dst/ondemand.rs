//! The on-demand invariant (issue 28 item 4), from the harness's own record
//! of the traffic it offers:
//!
//! - **on-demand**: once a link's demand has exceeded its capacity (the
//!   bytes offered through it over a window, of senders whose line rates
//!   together exceed it) in every window for the bound, no honest agent
//!   sends a flow through it ungated that was large (at least the threshold
//!   offered in a window) in every window for the bound too.
//!
//! The demand counted is what the controller can be told: every honest
//! host's traffic, and the hostile host's only while its agent is in a
//! session of the directing controller and not failed open (the world's
//! `demand_knowable`); out of one it reports nothing, and it may withhold or
//! misstate its demand at will.
//!
//! Windows are a fixed grid of true time, one report interval wide; the
//! agents' own windows are not aligned with it (nor with each other), so
//! the bound covers a report window, an evaluation period and the trips.

use std::collections::HashMap;
use xco_core::routing::LinkId;
use xco_core::sched::{BfsPaths, PathProvider};
use xco_core::{Dur, Time};

/// The on-demand check's state.
pub struct OnDemandCheck {
    window: Dur,
    threshold_bytes: u64,
    /// A link over capacity this long must be coordinated.
    pub bound: Dur,
    /// Checked from here on (faults delay everything before).
    pub from: Time,
    link_bps: Vec<u64>,
    host_bps: u64,
    paths: BfsPaths,
    cur_start: Time,
    cur: HashMap<(u32, u32), u64>,
    last: HashMap<(u32, u32), u64>,
    /// Per link: the start of the first window of its current run of windows over capacity.
    over_since: Vec<Option<Time>>,
    /// Per pair: the start of the first window of its current run of windows as a large flow.
    large_since: HashMap<(u32, u32), Time>,
    /// Windows in which some link was over capacity (so the check was not vacuous).
    pub over_windows: u64,
    /// Times a large flow crossed a link over capacity for the bound at an agent step (checked).
    pub checked: u64,
}

impl OnDemandCheck {
    pub fn new(
        window: Dur,
        threshold_bytes: u64,
        bound: Dur,
        link_bps: Vec<u64>,
        host_bps: u64,
        paths: BfsPaths,
    ) -> OnDemandCheck {
        OnDemandCheck {
            window,
            threshold_bytes,
            bound,
            from: Time::ZERO,
            over_since: vec![None; link_bps.len()],
            link_bps,
            host_bps,
            paths,
            cur_start: Time::ZERO,
            cur: HashMap::new(),
            last: HashMap::new(),
            large_since: HashMap::new(),
            over_windows: 0,
            checked: 0,
        }
    }

    /// Close every window that ended by `t`.
    fn roll(&mut self, t: Time) {
        let mut path = Vec::new();
        while t >= self.cur_start + self.window {
            let mut demand = vec![0u64; self.link_bps.len()];
            let mut senders: Vec<Vec<u32>> = vec![Vec::new(); self.link_bps.len()];
            for (&(h, d), &b) in &self.cur {
                path.clear();
                self.paths.path(h, d, &mut path);
                for &l in &path {
                    demand[l as usize] += b;
                    if !senders[l as usize].contains(&h) {
                        senders[l as usize].push(h);
                    }
                }
            }
            let mut any = false;
            for l in 0..self.link_bps.len() {
                let cap_bytes =
                    (self.link_bps[l] as u128 * self.window.ps() as u128 / 8 / 1_000_000_000_000) as u64;
                let over =
                    demand[l] > cap_bytes && senders[l].len() as u64 * self.host_bps > self.link_bps[l];
                if over {
                    self.over_since[l].get_or_insert(self.cur_start);
                    any = true;
                } else {
                    self.over_since[l] = None;
                }
            }
            self.over_windows += u64::from(any);
            let threshold = self.threshold_bytes;
            let cur = &self.cur;
            self.large_since
                .retain(|p, _| cur.get(p).is_some_and(|&b| b >= threshold));
            for (&p, &b) in cur {
                if b >= threshold {
                    self.large_since.entry(p).or_insert(self.cur_start);
                }
            }
            self.last = std::mem::take(&mut self.cur);
            self.cur_start += self.window;
        }
    }

    /// Host `h` was offered `bytes` for `d` at `t`.
    pub fn offered(&mut self, t: Time, h: u32, d: u32, bytes: u64) {
        self.roll(t);
        *self.cur.entry((h, d)).or_insert(0) += bytes;
    }

    /// Honest agent `h` sends to `ungated` without a gate at `t`: none of
    /// its large flows through a link over capacity for the bound may be
    /// among them.
    pub fn ungated(&mut self, t: Time, h: u32, ungated: &[u32]) -> Option<String> {
        self.roll(t);
        if t < self.from {
            return None;
        }
        let mut path = Vec::new();
        let mut large: Vec<(u32, u64)> = self
            .last
            .iter()
            .filter(|(&(x, _), &b)| x == h && b >= self.threshold_bytes)
            .map(|(&(_, d), &b)| (d, b))
            .collect();
        large.sort_unstable();
        for (d, bytes) in large {
            path.clear();
            self.paths.path(h, d, &mut path);
            for &l in &path {
                let Some(since) = self.over_since[l as usize] else {
                    continue;
                };
                // both the link over capacity and the flow large for the bound
                let since = since.max(self.large_since[&(h, d)]);
                if t < since + self.bound {
                    continue;
                }
                self.checked += 1;
                if ungated.contains(&d) {
                    return Some(over(l, since, h, d, bytes));
                }
            }
        }
        None
    }
}

fn over(l: LinkId, since: Time, h: u32, d: u32, bytes: u64) -> String {
    format!(
        "on-demand: link {l} over capacity and h{h}->h{d} large since {since} ({bytes} B in the last window), still ungated"
    )
}
