//! What the controller's `/metrics` endpoint shows (served by [`crate::http`]).

use crate::channel::ChannelStats;
use crate::http::{Histogram, Kind, Labels, Prom, Value};
use crate::intake::{Intake, TICK};
use xco_core::control::controller::MESSAGE_NAMES;
use xco_core::control::ControllerStats;
use xco_core::sched::Scheduler;
use xco_core::wire::RejectCounts;
use xco_core::Time;

/// Directives per second over the last full second.
#[derive(Clone, Debug, Default)]
pub struct RateWindow {
    start: Option<(Time, u64)>,
    /// The rate.
    pub per_s: f64,
}

impl RateWindow {
    /// Update with the running total at `now`.
    pub fn update(&mut self, now: Time, total: u64) {
        match self.start {
            None => self.start = Some((now, total)),
            Some((t0, n0)) => {
                let dt = now.saturating_since(t0).as_secs_f64();
                if dt >= 1.0 {
                    self.per_s = (total - n0) as f64 / dt;
                    self.start = Some((now, total));
                }
            }
        }
    }
}

fn by_reason(c: &RejectCounts, host: Option<&str>) -> Vec<(Labels, Value)> {
    [
        ("auth", c.auth),
        ("replay", c.replay),
        ("malformed", c.malformed),
        ("session", c.session),
    ]
    .iter()
    .map(|(r, n)| {
        let mut l: Labels = host.map(|h| ("host", h.to_string())).into_iter().collect();
        l.push(("reason", r.to_string()));
        (l, (*n).into())
    })
    .collect()
}

/// What the render needs besides the scheduler.
pub struct View<'a> {
    /// Controller counters.
    pub st: &'a ControllerStats,
    /// Channel counters.
    pub ch: &'a ChannelStats,
    /// Timer lateness.
    pub late: &'a Histogram,
    /// The datagram intake.
    pub intake: &'a Intake,
    /// Directed link names.
    pub link_names: &'a [String],
    /// Host names, by id.
    pub host_names: &'a [String],
    /// Directives per second.
    pub directives_per_s: f64,
    /// The controller's run id (its term is the high half).
    pub run: u64,
    /// It directs (false: a standby).
    pub active: bool,
}

/// Render the metrics text.
pub fn render(sched: &Scheduler, v: &View<'_>) -> String {
    let mut p = Prom::default();
    let s = sched.stats();
    let hosts = v.host_names.len() as u32;
    p.metric(
        "xco_run_info",
        Kind::Gauge,
        "The controller's run id (random per start; agents adopt it from a signed challenge answering their join).",
        vec![(vec![("run", format!("{:016x}", v.run))], 1u64.into())],
    );
    p.one(
        "xco_controller_active",
        Kind::Gauge,
        "1 while this controller directs; 0 while it stands by (hot standby).",
        u64::from(v.active),
    );
    p.one(
        "xco_controller_term",
        Kind::Gauge,
        "The term of this controller's run (the high half of the run id).",
        xco_core::wire::term_of(v.run),
    );
    p.one(
        "xco_controller_takeovers_total",
        Kind::Counter,
        "Terms this controller took (a standby's takeovers, a term above one taken).",
        v.st.takeovers,
    );
    p.one(
        "xco_controller_stepped_down_total",
        Kind::Counter,
        "Times this controller stopped directing: it learned of a higher term.",
        v.st.stepped_down,
    );
    p.one(
        "xco_controller_unleased_total",
        Kind::Counter,
        "Times this controller stopped granting (fenced again): neither its standby's lease nor every host's held.",
        v.st.unleased,
    );
    p.one(
        "xco_controller_takeover_rechecks_total",
        Kind::Counter,
        "Takeovers put off to a re-check: the standby had not run for more than a beat.",
        v.st.rechecks,
    );
    p.one(
        "xco_directives_total",
        Kind::Counter,
        "Directives issued.",
        s.directives,
    );
    p.one(
        "xco_directives_per_second",
        Kind::Gauge,
        "Directives issued per second over the last second.",
        v.directives_per_s,
    );
    p.one(
        "xco_scheduler_events_total",
        Kind::Counter,
        "Scheduling events handled.",
        s.events,
    );
    p.one(
        "xco_scheduler_nodes_considered_total",
        Kind::Counter,
        "Hosts considered by Algorithm 1.",
        s.nodes_considered,
    );
    let joined = (0..hosts).filter(|&x| sched.joined(x)).count();
    let backlogged = (0..hosts)
        .filter(|&x| sched.joined(x) && !sched.backlog(x).is_empty())
        .count();
    let sending = (0..hosts).filter(|&x| sched.dest(x).is_some()).count();
    p.one(
        "xco_active_hosts",
        Kind::Gauge,
        "Hosts registered with the controller.",
        joined,
    );
    p.one(
        "xco_backlogged_hosts",
        Kind::Gauge,
        "Registered hosts with backlogged traffic.",
        backlogged,
    );
    p.one(
        "xco_sending_hosts",
        Kind::Gauge,
        "Hosts holding a timeslice now.",
        sending,
    );
    p.one(
        "xco_hosts_timed_out_total",
        Kind::Counter,
        "Hosts dropped for silence.",
        s.hosts_timed_out,
    );
    let link = |f: &dyn Fn(u32) -> u64| -> Vec<(Labels, Value)> {
        (0..sched.links() as u32)
            .map(|l| (vec![("link", v.link_names[l as usize].clone())], f(l).into()))
            .collect()
    };
    p.metric(
        "xco_link_admitted_bps",
        Kind::Gauge,
        "Capacity the schedule admits on each directed link, bit/s.",
        link(&|l| sched.admitted_bps(l)),
    );
    p.metric(
        "xco_link_capacity_bps",
        Kind::Gauge,
        "Schedulable capacity of each directed link, bit/s.",
        link(&|l| sched.link_bps(l)),
    );
    let msgs: Vec<(Labels, Value)> = MESSAGE_NAMES
        .iter()
        .zip(v.st.msgs)
        .map(|(t, n)| (vec![("type", t.to_string())], n.into()))
        .collect();
    p.metric(
        "xco_messages_total",
        Kind::Counter,
        "Accepted control messages by type.",
        msgs,
    );
    p.metric(
        "xco_rejected_total",
        Kind::Counter,
        "Control datagrams the controller rejected, by reason.",
        by_reason(&v.st.rejected, None),
    );
    let mut agents = Vec::new();
    for (h, c) in v.st.agent_rejections.iter().enumerate() {
        if let Some(c) = c {
            agents.extend(by_reason(c, Some(&v.host_names[h])));
        }
    }
    p.metric(
        "xco_agent_rejected_total",
        Kind::Counter,
        "Control datagrams each agent rejected, by reason (as the agents last reported).",
        agents,
    );
    p.metric(
        "xco_datagrams_total",
        Kind::Counter,
        "Control datagrams received and sent, and sends that failed.",
        vec![
            (vec![("dir", "received".to_string())], v.ch.received.into()),
            (vec![("dir", "sent".to_string())], v.ch.sent.into()),
            (vec![("dir", "send_error".to_string())], v.ch.send_errors.into()),
        ],
    );
    p.one(
        "xco_socket_drops_total",
        Kind::Counter,
        "Datagrams the kernel dropped at the control socket, its buffer full (SO_RXQ_OVFL, as of the last datagram read).",
        v.ch.kernel_drops,
    );
    p.one(
        "xco_datagram_reads_total",
        Kind::Counter,
        "Reads of the control socket (one recvmmsg each) that returned datagrams.",
        v.ch.reads,
    );
    p.one(
        "xco_datagram_batch_max",
        Kind::Gauge,
        "The most datagrams handled in one read, between two checks of the scheduler's timer.",
        v.intake.stats.largest_batch,
    );
    p.one(
        "xco_datagram_budget_per_tick",
        Kind::Gauge,
        "Datagrams the controller reads per tick at most (the rest wait in the socket or are dropped by the kernel).",
        v.intake.per_tick() as u64,
    );
    p.one(
        "xco_datagram_tick_seconds",
        Kind::Gauge,
        "The length of the datagram budget's tick.",
        TICK.as_secs_f64(),
    );
    p.one(
        "xco_datagram_budget_spent_total",
        Kind::Counter,
        "Ticks whose datagram budget ran out with datagrams still waiting.",
        v.intake.stats.spent_ticks,
    );
    p.one(
        "xco_challenges_limited_total",
        Kind::Counter,
        "Joins not answered because the host had a challenge too recently.",
        v.st.challenges_limited,
    );
    p.one(
        "xco_undeliverable_total",
        Kind::Counter,
        "Directives for hosts of unknown address.",
        v.st.undeliverable,
    );
    p.one(
        "xco_timer_fires_total",
        Kind::Counter,
        "Scheduler timer expiries handled.",
        v.st.timer_fires,
    );
    p.histogram(
        "xco_timer_lateness_seconds",
        "How late the scheduler's timer fired.",
        Labels::new(),
        v.late,
    );
    p.one(
        "xco_timer_lateness_max_seconds",
        Kind::Gauge,
        "The latest the scheduler's timer fired.",
        v.late.max().as_secs_f64(),
    );
    p.finish()
}
