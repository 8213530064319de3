//! The ICTCP baseline: the receiver's advertised window per connection.
//!
//! ICTCP (Wu, Feng, Guo, Zhang, "ICTCP: Incast Congestion Control for TCP
//! in Data Center Networks", CoNEXT 2010) sets each connection's receive
//! window at the receiver from the ratio of measured to expected
//! throughput. The rules as built (sources in `docs/sicc.md`):
//! - **Available bandwidth.** With link capacity C and BW_T the total
//!   incoming traffic measured on the interface, BW_A = max(0, α·C − BW_T),
//!   α = 0.9.
//! - **Two sub-slots.** Time runs in slots of 2T, each split into two
//!   sub-slots of T = Σ_i w_i · RTT_i (w_i: connection i's share of the
//!   traffic in the last slot). The first sub-slot measures BW_T; in the
//!   second, BW_A is a quota that window increases spend: raising a window
//!   by Δ bytes spends Δ / RTT_i of it. Windows grow only in the second
//!   sub-slot, and a connection's at most once per 2 RTT_i (one for the
//!   new window to act, one to measure it).
//! - **Per connection, every RTT_i:** the sample b_s = bytes received in
//!   the last RTT / RTT; measured b_m := max(b_s, β·b_m + (1 − β)·b_s),
//!   β = 0.75; expected b_e = max(b_m, rwnd / RTT); difference ratio
//!   d_b = (b_e − b_m) / b_e. If d_b ≤ γ1 (0.1) or d_b ≤ MSS / rwnd: grow
//!   by one MSS (if the sub-slot, the spacing and the quota allow). If
//!   d_b > γ2 (0.5) for three RTTs in a row: shrink by one MSS (at most
//!   one MSS per RTT while it holds), never below 2 MSS. Otherwise keep.
//!
//! Not built: ICTCP's fairness rule among connections when BW_A is small
//! (not in the sources at hand). Rates are bit/s, windows bytes, time ns.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{rate_bps, PPM};

/// Settings of the ICTCP receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IctcpConfig {
    /// Segment size, bytes: the step of every window change.
    pub mss_bytes: u32,
    /// α: share of the link ICTCP may fill, ppm.
    pub alpha_ppm: u32,
    /// γ1: grow at or below this difference ratio, ppm.
    pub gamma1_ppm: u32,
    /// γ2: shrink above this difference ratio, ppm.
    pub gamma2_ppm: u32,
    /// β: weight of the old measured throughput, ppm.
    pub ewma_beta_ppm: u32,
    /// RTTs in a row above γ2 before a shrink.
    pub decrease_after_rtts: u32,
    /// Smallest window, bytes.
    pub min_window_bytes: u32,
    /// Window of a new connection, bytes.
    pub initial_window_bytes: u32,
    /// Largest window (the receive buffer), bytes.
    pub max_window_bytes: u32,
    /// T while no connection is open.
    pub idle_subslot_ns: u64,
}

impl Default for IctcpConfig {
    /// The paper's values with a 1,460-B MSS: α = 0.9, γ1 = 0.1, γ2 = 0.5,
    /// β = 0.75, three RTTs, windows from 2 MSS to 1 MiB, T = 100 µs idle.
    fn default() -> IctcpConfig {
        IctcpConfig {
            mss_bytes: 1460,
            alpha_ppm: 900_000,
            gamma1_ppm: 100_000,
            gamma2_ppm: 500_000,
            ewma_beta_ppm: 750_000,
            decrease_after_rtts: 3,
            min_window_bytes: 2 * 1460,
            initial_window_bytes: 2 * 1460,
            max_window_bytes: 1 << 20,
            idle_subslot_ns: 100_000,
        }
    }
}

/// What the last per-RTT check of a connection did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Adjust {
    /// No check yet.
    #[default]
    None,
    /// Grew by one MSS.
    Increased,
    /// Would grow, but not in the second sub-slot, too soon, or no quota.
    IncreaseBlocked,
    /// Shrank by one MSS.
    Decreased,
    /// Kept.
    Kept,
}

#[derive(Clone, Copy, Debug, Default)]
struct Conn {
    open: bool,
    rtt_ns: u64,
    rwnd: u32,
    bm_bps: u64,
    sample_bytes: u64,
    sample_start_ns: u64,
    last_increase_ns: Option<u64>,
    over: u32,
    slot_bytes: u64,
    last: Adjust,
    /// Parked at this check's time: idle at the minimum window with nothing
    /// measured, so every check until its next data would repeat this one.
    parked_at_ns: Option<u64>,
}

/// An ICTCP receiver: one network interface and its connections.
///
/// Driver calls: [`IctcpReceiver::open`] per connection;
/// [`IctcpReceiver::on_data`] / [`IctcpReceiver::on_other_data`] as bytes
/// arrive; [`IctcpReceiver::on_rtt`] with RTT estimates;
/// [`IctcpReceiver::handle_timeout`] at [`IctcpReceiver::poll_at`]; then
/// advertise [`IctcpReceiver::window_bytes`].
#[derive(Clone, Debug)]
pub struct IctcpReceiver {
    cfg: IctcpConfig,
    link_bps: u64,
    conns: Vec<Conn>,
    due: BinaryHeap<Reverse<(u64, u32)>>,
    slot_start_ns: u64,
    subslot_ns: u64,
    bw_t_bytes: u64,
    /// In the second sub-slot (the quota is set).
    second: bool,
    quota_bps: u64,
    available_bps: u64,
    /// The latest `now` handled: checks due up to it have run.
    handled_ns: u64,
}

impl IctcpReceiver {
    /// A receiver on a link of `link_bps`; its first slot starts at `now_ns`.
    pub fn new(cfg: IctcpConfig, link_bps: u64, now_ns: u64) -> IctcpReceiver {
        IctcpReceiver {
            cfg,
            link_bps,
            conns: Vec::new(),
            due: BinaryHeap::new(),
            slot_start_ns: now_ns,
            subslot_ns: cfg.idle_subslot_ns.max(1),
            bw_t_bytes: 0,
            second: false,
            quota_bps: 0,
            available_bps: 0,
            handled_ns: now_ns,
        }
    }

    /// A new connection with RTT estimate `rtt_ns` (at least 1); returns its id.
    pub fn open(&mut self, rtt_ns: u64, now_ns: u64) -> u32 {
        self.handle_timeout(now_ns);
        let id = self.conns.len() as u32;
        let rtt_ns = rtt_ns.max(1);
        self.conns.push(Conn {
            open: true,
            rtt_ns,
            rwnd: self.cfg.initial_window_bytes.max(self.cfg.min_window_bytes),
            sample_start_ns: now_ns,
            ..Conn::default()
        });
        self.due.push(Reverse((now_ns + rtt_ns, id)));
        id
    }

    /// Connection `id` closed. Panics if `id` was never opened.
    pub fn close(&mut self, id: u32) {
        self.conns[id as usize].open = false;
    }

    /// `bytes` of connection `id` arrived at `now_ns` (runs due timers
    /// first). Panics if `id` was never opened.
    pub fn on_data(&mut self, id: u32, bytes: u64, now_ns: u64) {
        self.handle_timeout(now_ns);
        self.unpark(id);
        self.count_interface(bytes);
        let c = &mut self.conns[id as usize];
        c.sample_bytes += bytes;
        c.slot_bytes += bytes;
    }

    /// `bytes` of other traffic arrived on the interface (counts in BW_T).
    pub fn on_other_data(&mut self, bytes: u64, now_ns: u64) {
        self.handle_timeout(now_ns);
        self.count_interface(bytes);
    }

    fn count_interface(&mut self, bytes: u64) {
        if !self.second {
            self.bw_t_bytes += bytes;
        }
    }

    /// A new RTT estimate for connection `id` (used from its next check).
    pub fn on_rtt(&mut self, id: u32, rtt_ns: u64) {
        if self.conns[id as usize].rtt_ns != rtt_ns.max(1) {
            // the checks it skipped were due under the old RTT
            self.unpark(id);
        }
        self.conns[id as usize].rtt_ns = rtt_ns.max(1);
    }

    /// Connection `id` leaves its parking: the checks it skipped, each due
    /// one RTT after the last up to the latest `now` handled, would each
    /// have found it idle and changed nothing but their count and the
    /// sample's start; set those, and schedule its next check.
    fn unpark(&mut self, id: u32) {
        let upto = self.handled_ns;
        let c = &mut self.conns[id as usize];
        let Some(at) = c.parked_at_ns.take() else {
            return;
        };
        let skipped = upto.saturating_sub(at) / c.rtt_ns;
        let last = at + skipped * c.rtt_ns;
        c.over = c.over.saturating_add(skipped.min(u32::MAX as u64) as u32);
        c.sample_start_ns = last;
        self.due.push(Reverse((last + c.rtt_ns, id)));
    }

    /// Per-RTT checks scheduled now (a parked connection, idle at its
    /// window's floor, has none until its next data).
    pub fn scheduled_checks(&self) -> usize {
        self.due.len()
    }

    /// When [`IctcpReceiver::handle_timeout`] next has work.
    pub fn poll_at(&self) -> u64 {
        let boundary = self.next_boundary();
        match self.due.peek() {
            Some(&Reverse((t, _))) => t.min(boundary),
            None => boundary,
        }
    }

    fn next_boundary(&self) -> u64 {
        if self.second {
            self.slot_start_ns + 2 * self.subslot_ns
        } else {
            self.slot_start_ns + self.subslot_ns
        }
    }

    /// Run every boundary and per-RTT check due at or before `now_ns`, in
    /// time order.
    pub fn handle_timeout(&mut self, now_ns: u64) {
        self.handled_ns = self.handled_ns.max(now_ns);
        loop {
            let boundary = self.next_boundary();
            let sample = self.due.peek().map(|&Reverse(k)| k);
            match sample {
                Some((t, id)) if t < boundary && t <= now_ns => {
                    self.due.pop();
                    self.check(id, t);
                }
                _ if boundary <= now_ns => self.cross_boundary(boundary),
                _ => break,
            }
        }
    }

    fn cross_boundary(&mut self, t: u64) {
        if !self.second {
            // End of the first sub-slot: BW_T, BW_A, the quota.
            let bw_t = rate_bps(self.bw_t_bytes, self.subslot_ns);
            let cap = self.link_bps as u128 * self.cfg.alpha_ppm as u128 / PPM as u128;
            self.available_bps = (cap as u64).saturating_sub(bw_t);
            self.quota_bps = self.available_bps;
            self.second = true;
            return;
        }
        // End of the slot: T from the traffic-weighted RTTs.
        let (mut wsum, mut bytes, mut rsum, mut n) = (0u128, 0u128, 0u128, 0u128);
        for c in self.conns.iter_mut().filter(|c| c.open) {
            wsum += c.slot_bytes as u128 * c.rtt_ns as u128;
            bytes += c.slot_bytes as u128;
            rsum += c.rtt_ns as u128;
            n += 1;
            c.slot_bytes = 0;
        }
        self.subslot_ns = wsum
            .checked_div(bytes)
            .or_else(|| rsum.checked_div(n))
            .map_or(self.cfg.idle_subslot_ns, |t| t as u64)
            .max(1);
        self.slot_start_ns = t;
        self.bw_t_bytes = 0;
        self.quota_bps = 0;
        self.second = false;
    }

    /// Connection `id`'s per-RTT check at `t`.
    fn check(&mut self, id: u32, t: u64) {
        let cfg = self.cfg;
        let second = self.second;
        let c = &mut self.conns[id as usize];
        if !c.open {
            return;
        }
        let dur = t.saturating_sub(c.sample_start_ns).max(1);
        let bs = rate_bps(c.sample_bytes, dur);
        let beta = cfg.ewma_beta_ppm as u128;
        let ewma = (beta * c.bm_bps as u128 + (PPM as u128 - beta) * bs as u128) / PPM as u128;
        c.bm_bps = bs.max(ewma as u64);
        let be = c.bm_bps.max(rate_bps(c.rwnd as u64, c.rtt_ns));
        let diff = (be - c.bm_bps) as u128;
        let be = be as u128;
        let small = diff * PPM as u128 <= cfg.gamma1_ppm as u128 * be
            || diff * c.rwnd as u128 <= cfg.mss_bytes as u128 * be;
        let large = diff * PPM as u128 > cfg.gamma2_ppm as u128 * be;
        c.last = if small {
            c.over = 0;
            let spaced = c.last_increase_ns.is_none_or(|l| t >= l + 2 * c.rtt_ns);
            let cost = rate_bps(cfg.mss_bytes as u64, c.rtt_ns);
            if second && spaced && self.quota_bps >= cost && c.rwnd < cfg.max_window_bytes {
                c.rwnd = (c.rwnd + cfg.mss_bytes).min(cfg.max_window_bytes);
                c.last_increase_ns = Some(t);
                self.quota_bps -= cost;
                Adjust::Increased
            } else {
                Adjust::IncreaseBlocked
            }
        } else if large {
            c.over += 1;
            if c.over >= cfg.decrease_after_rtts {
                c.rwnd = c.rwnd.saturating_sub(cfg.mss_bytes).max(cfg.min_window_bytes);
                Adjust::Decreased
            } else {
                Adjust::Kept
            }
        } else {
            c.over = 0;
            Adjust::Kept
        };
        let idle = c.sample_bytes == 0;
        c.sample_bytes = 0;
        c.sample_start_ns = t;
        if idle && c.bm_bps == 0 && c.rwnd == cfg.min_window_bytes && c.last == Adjust::Decreased {
            // every check until its next data would repeat this one (bm stays
            // 0, the window stays at its floor, `over` only grows): park it
            // instead of waking it each RTT; `unpark` accounts for them
            c.parked_at_ns = Some(t);
            return;
        }
        self.due.push(Reverse((t + c.rtt_ns, id)));
    }

    /// The window to advertise on connection `id`, bytes. Panics if never opened.
    pub fn window_bytes(&self, id: u32) -> u32 {
        self.conns[id as usize].rwnd
    }

    /// What connection `id`'s last check did. Panics if never opened.
    pub fn last_adjust(&self, id: u32) -> Adjust {
        self.conns[id as usize].last
    }

    /// Connection `id`'s measured throughput b_m. Panics if never opened.
    pub fn measured_bps(&self, id: u32) -> u64 {
        self.conns[id as usize].bm_bps
    }

    /// Whether the second sub-slot (increases allowed) is running.
    pub fn in_second_subslot(&self) -> bool {
        self.second
    }

    /// Quota left for increases in this second sub-slot (0 in the first).
    pub fn quota_bps(&self) -> u64 {
        self.quota_bps
    }

    /// BW_A as measured at the last first sub-slot's end.
    pub fn available_bps(&self) -> u64 {
        self.available_bps
    }

    /// T, the current sub-slot length.
    pub fn subslot_ns(&self) -> u64 {
        self.subslot_ns
    }
}
