//! Two-level transmission speed control (spec §Design 4).
//!
//! Every period t_i (10 ms) a front-end
//! 1. updates its planned downlink B_p from the aggregation router's queue
//!    toward its edge switch (the front-ends of one rack share that port):
//!    with q the reported queue (bytes) and S_a that port's buffer,
//!    ```text
//!    q / S_a >= T:  B_p := B_p · (1 − β · q / S_a)              (eq 5)
//!    otherwise:     B_p := min(B_d, B_p · (1 + α · B_a / B_p))  (eq 6)
//!    ```
//!    where B_a is what the front-end actually received in the last
//!    period. B_a is given as bytes; eq 6 compares it with the rate B_p, so
//!    we use it as a rate: bytes received × 8 / period (and eq 6 becomes
//!    B_p + α · B_a). B_p starts at B_d − B_a, read the same way;
//! 2. splits B_p among the hubs H that stream to it, from each hub's rate
//!    b_r(h) measured over the last period:
//!    ```text
//!    b_a(h) := B_p / |H|                                    (eq 2)
//!    H^o = {h : b_r(h) > b_a(h)},  H^u = {h : b_r(h) < b_a(h)}
//!    b_a(h) += Σ_{u ∈ H^u} (b_a(u) − b_r(u)) / |H^o|, h ∈ H^o   (eq 3)
//!    b_a(h) := b_r(h),                                h ∈ H^u   (eq 4)
//!    ```
//!    so the allocations sum to B_p (integer remainders go to the first
//!    hubs, the sum is exact) and the downlink never overflows. With no
//!    over-utilised hub the surplus has no taker: every hub keeps eq 2's
//!    share.
//!
//! Defaults α = β = 20 %, T = 10 % (parts per million here). The queue
//! reaches the front-end as a report that travels the network
//! ([`QueueReport`], stamped with when it was measured): each period uses
//! the newest report that arrived since the last period, if it is at most
//! `max_report_age_ns` old, and uses it once; with none, B_p holds (no
//! news is not taken as an empty queue). The pure steps are
//! [`update_planned`] and [`allocate_hub_rates`]; [`SpeedControl`] is the
//! state machine a driver feeds bytes, reports and period ticks.

use super::{bytes_in, rate_bps, PPM};

/// Settings of speed control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpeedConfig {
    /// t_i, the control period.
    pub period_ns: u64,
    /// α of eq 6, parts per million.
    pub alpha_ppm: u32,
    /// β of eq 5, parts per million.
    pub beta_ppm: u32,
    /// T, the queue fraction q / S_a from which eq 5 applies, ppm.
    pub threshold_ppm: u32,
    /// A queue report older than this at a period's end is ignored.
    pub max_report_age_ns: u64,
}

impl Default for SpeedConfig {
    /// The paper's values: 10 ms, α = β = 20 %, T = 10 %; reports up to two
    /// periods old count.
    fn default() -> SpeedConfig {
        SpeedConfig {
            period_ns: 10_000_000,
            alpha_ppm: 200_000,
            beta_ppm: 200_000,
            threshold_ppm: 100_000,
            max_report_age_ns: 20_000_000,
        }
    }
}

/// The aggregation router's queue toward the front-end's edge switch, as
/// reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueReport {
    /// q: bytes queued at the port.
    pub queue_bytes: u64,
    /// When the router measured it (the driver's clock, ns).
    pub measured_at_ns: u64,
}

/// What eqs 5–6 did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanStep {
    /// Eq 5: q / S_a ≥ T.
    Decreased,
    /// Eq 6: q / S_a < T.
    Increased,
    /// No usable report (or S_a = 0): B_p unchanged.
    Held,
}

/// Eqs 5–6: the new planned downlink from the old one, the downlink B_d,
/// the rate actually received last period (B_a) and the queue q of a
/// buffer of `agg_buffer_bytes` (S_a); `queue_bytes` `None`: no report.
/// The result never exceeds `downlink_bps` (unless the old plan did and
/// eq 5 applied).
pub fn update_planned(
    cfg: &SpeedConfig,
    planned_bps: u64,
    downlink_bps: u64,
    received_bps: u64,
    queue_bytes: Option<u64>,
    agg_buffer_bytes: u64,
) -> (u64, PlanStep) {
    let Some(q) = queue_bytes else {
        return (planned_bps, PlanStep::Held);
    };
    if agg_buffer_bytes == 0 {
        return (planned_bps, PlanStep::Held);
    }
    let frac_ppm = (q as u128 * PPM as u128 / agg_buffer_bytes as u128).min(PPM as u128);
    if frac_ppm >= cfg.threshold_ppm as u128 {
        let cut = planned_bps as u128 * cfg.beta_ppm as u128 * frac_ppm / (PPM as u128 * PPM as u128);
        (planned_bps - cut as u64, PlanStep::Decreased)
    } else {
        let add = received_bps as u128 * cfg.alpha_ppm as u128 / PPM as u128;
        let p = (planned_bps as u128 + add).min(downlink_bps as u128);
        (p as u64, PlanStep::Increased)
    }
}

/// How [`allocate_hub_rates`] classified the hubs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Allocation {
    /// |H^o|: hubs that sent faster than eq 2's share.
    pub over: u32,
    /// |H^u|: hubs that sent slower.
    pub under: u32,
    /// Σ over H^u of (b_a − b_r): what eq 3 hands to H^o.
    pub surplus_bps: u64,
}

/// Eqs 2–4: split `planned_bps` among hubs whose last-period rates are
/// `measured_bps`, into `alloc_bps` (same length). The allocations sum to
/// `planned_bps` exactly. Panics if the lengths differ.
pub fn allocate_hub_rates(planned_bps: u64, measured_bps: &[u64], alloc_bps: &mut [u64]) -> Allocation {
    assert_eq!(measured_bps.len(), alloc_bps.len(), "one allocation per hub");
    let n = measured_bps.len() as u64;
    if n == 0 {
        return Allocation::default();
    }
    let (share, rem) = (planned_bps / n, planned_bps % n);
    for (i, a) in alloc_bps.iter_mut().enumerate() {
        *a = share + u64::from((i as u64) < rem);
    }
    let mut out = Allocation::default();
    for (&r, &a) in measured_bps.iter().zip(alloc_bps.iter()) {
        if r > a {
            out.over += 1;
        } else if r < a {
            out.under += 1;
            out.surplus_bps += a - r;
        }
    }
    if out.over == 0 {
        // Nobody can use the surplus: eq 2's shares stand.
        return out;
    }
    let (extra, extra_rem) = (
        out.surplus_bps / out.over as u64,
        out.surplus_bps % out.over as u64,
    );
    let mut k = 0u64;
    for (&r, a) in measured_bps.iter().zip(alloc_bps.iter_mut()) {
        if r > *a {
            *a += extra + u64::from(k < extra_rem);
            k += 1;
        } else if r < *a {
            *a = r;
        }
    }
    out
}

/// What one period's end did ([`SpeedControl::on_period`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeriodOutcome {
    /// Eq 5, eq 6 or neither.
    pub step: PlanStep,
    /// B_a: bytes received in the period, as a rate.
    pub received_bps: u64,
    /// B_p after the step.
    pub planned_bps: u64,
    /// Eqs 2–4's classification of the hubs still sending.
    pub allocation: Allocation,
}

/// A front-end's speed control: B_p across requests, the hubs' shares
/// within one.
///
/// Driver calls: [`SpeedControl::start_request`] with the hubs streaming
/// to the front-end; [`SpeedControl::on_hub_bytes`] / [`SpeedControl::on_other_bytes`]
/// as bytes arrive; [`SpeedControl::on_queue_report`] when a report
/// arrives; [`SpeedControl::hub_done`] when a hub has sent everything;
/// [`SpeedControl::on_period`] at [`SpeedControl::next_period_ns`]; then
/// apply [`SpeedControl::hub_rate_bps`] (or [`SpeedControl::hub_window_bytes`])
/// to each hub.
#[derive(Clone, Debug)]
pub struct SpeedControl {
    cfg: SpeedConfig,
    downlink_bps: u64,
    agg_buffer_bytes: u64,
    planned_bps: u64,
    period_start_ns: u64,
    other_bytes: u64,
    hub_bytes: Vec<u64>,
    active: Vec<bool>,
    rates: Vec<u64>,
    report: Option<QueueReport>,
    idx: Vec<usize>,
    measured: Vec<u64>,
    alloc: Vec<u64>,
}

impl SpeedControl {
    /// A front-end with downlink B_d, aggregation-port buffer S_a, and
    /// `background_bps` already arriving (B_p starts at B_d − that); the
    /// first period starts at `now_ns`.
    pub fn new(
        cfg: SpeedConfig,
        downlink_bps: u64,
        agg_buffer_bytes: u64,
        background_bps: u64,
        now_ns: u64,
    ) -> SpeedControl {
        SpeedControl {
            cfg,
            downlink_bps,
            agg_buffer_bytes,
            planned_bps: downlink_bps.saturating_sub(background_bps),
            period_start_ns: now_ns,
            other_bytes: 0,
            hub_bytes: Vec::new(),
            active: Vec::new(),
            rates: Vec::new(),
            report: None,
            idx: Vec::new(),
            measured: Vec::new(),
            alloc: Vec::new(),
        }
    }

    /// A new request with hubs `0..hubs` streaming to the front-end: each
    /// gets B_p / |H| (eq 2) until the period ends. B_p and the period
    /// clock carry over from the last request.
    pub fn start_request(&mut self, hubs: usize) {
        self.hub_bytes.clear();
        self.hub_bytes.resize(hubs, 0);
        self.active.clear();
        self.active.resize(hubs, true);
        self.rates.clear();
        self.rates.resize(hubs, 0);
        self.measured.clear();
        self.measured.resize(hubs, 0);
        allocate_hub_rates(self.planned_bps, &self.measured, &mut self.rates);
    }

    /// `bytes` arrived from hub `hub`. Panics if `hub` is not of this request.
    pub fn on_hub_bytes(&mut self, hub: usize, bytes: u64) {
        self.hub_bytes[hub] += bytes;
    }

    /// `bytes` arrived from anyone else (counted in B_a only).
    pub fn on_other_bytes(&mut self, bytes: u64) {
        self.other_bytes += bytes;
    }

    /// A queue report arrived; the newest by measurement time is kept.
    pub fn on_queue_report(&mut self, r: QueueReport) {
        if self
            .report
            .is_none_or(|old| r.measured_at_ns >= old.measured_at_ns)
        {
            self.report = Some(r);
        }
    }

    /// Hub `hub` sent everything: it leaves H and its share goes to the
    /// others in equal parts (eq 3's surplus, with every other hub as a
    /// taker). Panics if `hub` is not of this request.
    pub fn hub_done(&mut self, hub: usize) {
        if !std::mem::replace(&mut self.active[hub], false) {
            return;
        }
        let freed = std::mem::take(&mut self.rates[hub]);
        let left = self.active.iter().filter(|&&a| a).count() as u64;
        if left == 0 {
            return;
        }
        let (extra, rem) = (freed / left, freed % left);
        let live = self.rates.iter_mut().zip(&self.active).filter(|(_, &a)| a);
        for (k, (r, _)) in live.enumerate() {
            *r += extra + u64::from((k as u64) < rem);
        }
    }

    /// When the current period ends.
    pub fn next_period_ns(&self) -> u64 {
        self.period_start_ns + self.cfg.period_ns
    }

    /// End the period at `now_ns` (the driver calls it at
    /// [`SpeedControl::next_period_ns`]; rates are measured over the time
    /// actually elapsed): eqs 5–6, then eqs 2–4 over the hubs still sending.
    pub fn on_period(&mut self, now_ns: u64) -> PeriodOutcome {
        let elapsed = now_ns.saturating_sub(self.period_start_ns).max(1);
        let total = self.other_bytes + self.hub_bytes.iter().sum::<u64>();
        let received_bps = rate_bps(total, elapsed);
        let q = self
            .report
            .take()
            .filter(|r| now_ns.saturating_sub(r.measured_at_ns) <= self.cfg.max_report_age_ns)
            .map(|r| r.queue_bytes);
        let (planned, step) = update_planned(
            &self.cfg,
            self.planned_bps,
            self.downlink_bps,
            received_bps,
            q,
            self.agg_buffer_bytes,
        );
        self.planned_bps = planned;
        self.idx.clear();
        self.measured.clear();
        for (i, &a) in self.active.iter().enumerate() {
            if a {
                self.idx.push(i);
                self.measured.push(rate_bps(self.hub_bytes[i], elapsed));
            }
        }
        self.alloc.clear();
        self.alloc.resize(self.idx.len(), 0);
        let allocation = allocate_hub_rates(planned, &self.measured, &mut self.alloc);
        for (&i, &a) in self.idx.iter().zip(&self.alloc) {
            self.rates[i] = a;
        }
        self.hub_bytes.iter_mut().for_each(|b| *b = 0);
        self.other_bytes = 0;
        self.period_start_ns = now_ns;
        PeriodOutcome {
            step,
            received_bps,
            planned_bps: planned,
            allocation,
        }
    }

    /// B_p now.
    pub fn planned_bps(&self) -> u64 {
        self.planned_bps
    }

    /// Hub `hub`'s allocated rate b_a (0 once done). Panics if out of range.
    pub fn hub_rate_bps(&self, hub: usize) -> u64 {
        self.rates[hub]
    }

    /// Every hub's allocated rate, by hub index.
    pub fn hub_rates_bps(&self) -> &[u64] {
        &self.rates
    }

    /// Hub `hub`'s rate as a window over `rtt_ns` (bytes per round trip).
    pub fn hub_window_bytes(&self, hub: usize, rtt_ns: u64) -> u64 {
        bytes_in(self.rates[hub], rtt_ns)
    }
}
