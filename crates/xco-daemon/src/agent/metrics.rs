//! What the agent's `/metrics` endpoint shows (served by [`crate::http`]):
//! per-destination held and released traffic, the gate, fail-opens, watchdog
//! releases, the small-packet bypass's rate,
//! rejected control datagrams, how long held packets waited, and the data
//! path's own counters (GSO packets, batch and single verdicts, packets the
//! kernel passed or dropped at the queue).

use super::{Agent, PacketGate};
use crate::http::{Kind, Labels, Prom, Value};
use xco_core::coord::Gate;

/// Render the agent's metrics text (`name`: this host).
pub(super) fn render<G: PacketGate>(a: &Agent<G>, name: &str) -> String {
    let mut p = Prom::default();
    let host = || -> Labels { vec![("host", name.to_string())] };
    let with = |k: &'static str, v: &str| -> Labels { vec![("host", name.to_string()), (k, v.to_string())] };
    let names: Vec<&str> = a.topo.file.hosts.iter().map(|h| h.name.as_str()).collect();
    let per = |f: &dyn Fn(&super::DestStats) -> u64| -> Vec<(Labels, Value)> {
        a.stats
            .per_dest
            .iter()
            .enumerate()
            .filter(|&(d, _)| d as u32 != a.me)
            .map(|(d, s)| (with("dest", names[d]), f(s).into()))
            .collect()
    };
    p.metric(
        "xco_agent_held_packets_total",
        Kind::Counter,
        "Packets held for a directive, per destination host.",
        per(&|s| s.held_pkts),
    );
    p.metric(
        "xco_agent_held_bytes_total",
        Kind::Counter,
        "IP bytes held for a directive, per destination host.",
        per(&|s| s.held_bytes),
    );
    p.metric(
        "xco_agent_released_packets_total",
        Kind::Counter,
        "Held packets released, per destination host.",
        per(&|s| s.released_pkts),
    );
    p.metric(
        "xco_agent_released_bytes_total",
        Kind::Counter,
        "IP bytes released after being held, per destination host.",
        per(&|s| s.released_bytes),
    );
    let held_now: Vec<(Labels, Value)> = (0..names.len() as u32)
        .filter(|&d| d != a.me)
        .map(|d| (with("dest", names[d as usize]), a.node.coord.held_bytes(d).into()))
        .collect();
    p.metric(
        "xco_agent_queued_bytes",
        Kind::Gauge,
        "Bytes held now, per destination host.",
        held_now,
    );
    let state = match a.node.coord.state.gate {
        Gate::Closed => "closed",
        Gate::Open { .. } => "open",
        Gate::Rated => "rated",
        Gate::FailOpen => "fail_open",
    };
    let gate: Vec<(Labels, Value)> = ["closed", "open", "rated", "fail_open"]
        .iter()
        .map(|s| (with("state", s), u64::from(*s == state).into()))
        .collect();
    p.metric(
        "xco_agent_gate",
        Kind::Gauge,
        "The gate's state (1 for the current one).",
        gate,
    );
    let one = |v: u64| vec![(host(), Value::from(v))];
    let k = &a.node.coord.stats;
    p.metric(
        "xco_agent_fail_open_total",
        Kind::Counter,
        "Times the agent failed open (backlogged without a directive).",
        one(k.fail_opens),
    );
    p.metric(
        "xco_agent_watchdog_releases_total",
        Kind::Counter,
        "Times the watchdog released the host while the agent was silent (hung or stopped).",
        one(a.stats.watchdog_releases),
    );
    p.metric(
        "xco_agent_watchdog_released_packets_total",
        Kind::Counter,
        "Packets the kernel held for the agent that the watchdog released.",
        one(a.stats.watchdog_released_pkts),
    );
    p.metric(
        "xco_agent_bypass_limit_packets_per_second",
        Kind::Gauge,
        "Small packets (at most bypass_bytes) that may pass the gate uncounted, per second and IP family.",
        one(u64::from(a.topo.bypass_pps())),
    );
    p.metric(
        "xco_agent_directives_total",
        Kind::Counter,
        "Directives applied.",
        one(k.directives),
    );
    p.metric(
        "xco_agent_passed_packets_total",
        Kind::Counter,
        "Intercepted packets passed at once (not coordinated, or failed open).",
        one(a.stats.passed),
    );
    let g = a.gate.counters();
    p.metric(
        "xco_agent_release_errors_total",
        Kind::Counter,
        "Verdicts the kernel did not take.",
        one(a.stats.release_errors + g.verdict_errors),
    );
    p.metric(
        "xco_agent_gso_packets_total",
        Kind::Counter,
        "Packets intercepted whole as GSO packets (one verdict for several segments).",
        one(g.gso_packets),
    );
    p.metric(
        "xco_agent_verdict_messages_total",
        Kind::Counter,
        "Verdict messages sent: a batch verdict accepts a run of packets.",
        vec![
            (with("kind", "batch"), g.batch_verdicts.into()),
            (with("kind", "single"), g.single_verdicts.into()),
        ],
    );
    p.metric(
        "xco_agent_kernel_bypassed_packets_total",
        Kind::Counter,
        "Packets the kernel passed uncoordinated because the agent's queue socket was full (fail-open).",
        one(g.kernel_bypassed),
    );
    p.metric(
        "xco_agent_kernel_dropped_packets_total",
        Kind::Counter,
        "Packets the kernel dropped at the agent's queue (its queue_dropped + queue_user_dropped).",
        one(g.kernel_dropped),
    );
    p.metric(
        "xco_agent_kernel_queue_packets",
        Kind::Gauge,
        "Packets awaiting the agent's verdict in the kernel now (held, and on their way).",
        one(g.kernel_queued),
    );
    p.metric(
        "xco_agent_kernel_queue_max_packets",
        Kind::Gauge,
        "The kernel queue's length: at this many, further packets pass uncoordinated (fail-open).",
        one(g.kernel_queue_max),
    );
    let r = &a.node.rejected;
    let rej: Vec<(Labels, Value)> = [
        ("auth", r.auth),
        ("replay", r.replay),
        ("malformed", r.malformed),
        ("session", r.session),
    ]
    .iter()
    .map(|(why, n)| (with("reason", why), (*n).into()))
    .collect();
    p.metric(
        "xco_agent_rejected_total",
        Kind::Counter,
        "Control datagrams rejected, by reason.",
        rej,
    );
    p.metric(
        "xco_agent_controller_run",
        Kind::Gauge,
        "1 while a controller run is obeyed (adopted from a signed answer to its join).",
        one(u64::from(a.node.run().is_some())),
    );
    p.metric(
        "xco_agent_stale_term_total",
        Kind::Counter,
        "Controller messages refused: of a lower term than the highest seen, or another run of it.",
        one(a.node.stats.stale_term),
    );
    p.metric(
        "xco_agent_stale_grants_total",
        Kind::Counter,
        "Directives and ungated sets refused as possibly older than directive_max_age_ms (wire v5 echo; counted as replays too).",
        one(a.node.stats.stale),
    );
    p.metric(
        "xco_agent_controller_term",
        Kind::Gauge,
        "The highest controller term seen signed.",
        one(a.node.max_term()),
    );
    if let Some((_, gap_us)) = a.last_run_change {
        p.metric(
            "xco_agent_run_change_gap_microseconds",
            Kind::Gauge,
            "At the latest change of controller run: time from the last directive of the previous run to the first of the new.",
            one(gap_us),
        );
    }
    p.metric(
        "xco_agent_control_dropped_total",
        Kind::Counter,
        "Control datagrams dropped unread: not from the controller's address, or over the signature budget.",
        vec![
            (with("why", "foreign"), a.node.stats.foreign.into()),
            (with("why", "over_budget"), a.node.stats.over_budget.into()),
        ],
    );
    p.metric(
        "xco_agent_control_datagrams_total",
        Kind::Counter,
        "Control datagrams read, and those the kernel dropped at the control socket, its buffer full (SO_RXQ_OVFL, as of the last datagram read).",
        vec![
            (with("dir", "received"), a.chan.stats.received.into()),
            (with("dir", "kernel_dropped"), a.chan.stats.kernel_drops.into()),
        ],
    );
    p.metric(
        "xco_agent_control_budget_spent_total",
        Kind::Counter,
        "Ticks whose control-datagram budget ran out with datagrams still waiting (the socket set aside until the next).",
        vec![(host(), a.intake.stats.spent_ticks.into())],
    );
    p.histogram(
        "xco_agent_verdict_latency_seconds",
        "How long held packets waited from interception to their verdict.",
        Labels::new(),
        &a.stats.verdict_latency,
    );
    p.finish()
}
