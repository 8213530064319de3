//! What the agent's `/metrics` endpoint shows (served by [`crate::http`]):
//! per-destination held and released traffic, the gate, fail-opens, watchdog
//! releases, the small-packet bypass's rate,
//! rejected control datagrams, how long held packets waited, and the data
//! path's own counters (GSO packets, batch and single verdicts, packets the
//! kernel passed or dropped at the queue).

use super::{Agent, PacketGate};
use crate::http::Prom;
use xco_core::coord::Gate;

/// Render the agent's metrics text (`name`: this host).
pub(super) fn render<G: PacketGate>(a: &Agent<G>, name: &str) -> String {
    let mut p = Prom::default();
    let host = format!("host=\"{name}\"");
    let names: Vec<&str> = a.topo.file.hosts.iter().map(|h| h.name.as_str()).collect();
    let per = |f: &dyn Fn(&super::DestStats) -> u64| -> Vec<(String, String)> {
        a.stats
            .per_dest
            .iter()
            .enumerate()
            .filter(|&(d, _)| d as u32 != a.me)
            .map(|(d, s)| (format!("{{{host},dest=\"{}\"}}", names[d]), f(s).to_string()))
            .collect()
    };
    p.metric(
        "xco_agent_held_packets_total",
        "counter",
        "Packets held for a directive, per destination host.",
        &per(&|s| s.held_pkts),
    );
    p.metric(
        "xco_agent_held_bytes_total",
        "counter",
        "IP bytes held for a directive, per destination host.",
        &per(&|s| s.held_bytes),
    );
    p.metric(
        "xco_agent_released_packets_total",
        "counter",
        "Held packets released, per destination host.",
        &per(&|s| s.released_pkts),
    );
    p.metric(
        "xco_agent_released_bytes_total",
        "counter",
        "IP bytes released after being held, per destination host.",
        &per(&|s| s.released_bytes),
    );
    let held_now: Vec<(String, String)> = (0..names.len() as u32)
        .filter(|&d| d != a.me)
        .map(|d| {
            (
                format!("{{{host},dest=\"{}\"}}", names[d as usize]),
                a.node.coord.held_bytes(d).to_string(),
            )
        })
        .collect();
    p.metric(
        "xco_agent_queued_bytes",
        "gauge",
        "Bytes held now, per destination host.",
        &held_now,
    );
    let state = match a.node.coord.state.gate {
        Gate::Closed => "closed",
        Gate::Open { .. } => "open",
        Gate::Rated => "rated",
        Gate::FailOpen => "fail_open",
    };
    let gate: Vec<(String, String)> = ["closed", "open", "rated", "fail_open"]
        .iter()
        .map(|s| {
            (
                format!("{{{host},state=\"{s}\"}}"),
                u8::from(*s == state).to_string(),
            )
        })
        .collect();
    p.metric(
        "xco_agent_gate",
        "gauge",
        "The gate's state (1 for the current one).",
        &gate,
    );
    let one = |v: u64| vec![(format!("{{{host}}}"), v.to_string())];
    let k = &a.node.coord.stats;
    p.metric(
        "xco_agent_fail_open_total",
        "counter",
        "Times the agent failed open (backlogged without a directive).",
        &one(k.fail_opens),
    );
    p.metric(
        "xco_agent_watchdog_releases_total",
        "counter",
        "Times the watchdog released the host while the agent was silent (hung or stopped).",
        &one(a.stats.watchdog_releases),
    );
    p.metric(
        "xco_agent_watchdog_released_packets_total",
        "counter",
        "Packets the kernel held for the agent that the watchdog released.",
        &one(a.stats.watchdog_released_pkts),
    );
    p.metric(
        "xco_agent_bypass_limit_packets_per_second",
        "gauge",
        "Small packets (at most bypass_bytes) that may pass the gate uncounted, per second and IP family.",
        &one(u64::from(a.topo.bypass_pps())),
    );
    p.metric(
        "xco_agent_directives_total",
        "counter",
        "Directives applied.",
        &one(k.directives),
    );
    p.metric(
        "xco_agent_passed_packets_total",
        "counter",
        "Intercepted packets passed at once (not coordinated, or failed open).",
        &one(a.stats.passed),
    );
    let g = a.gate.counters();
    p.metric(
        "xco_agent_release_errors_total",
        "counter",
        "Verdicts the kernel did not take.",
        &one(a.stats.release_errors + g.verdict_errors),
    );
    p.metric(
        "xco_agent_gso_packets_total",
        "counter",
        "Packets intercepted whole as GSO packets (one verdict for several segments).",
        &one(g.gso_packets),
    );
    p.metric(
        "xco_agent_verdict_messages_total",
        "counter",
        "Verdict messages sent: a batch verdict accepts a run of packets.",
        &[
            (format!("{{{host},kind=\"batch\"}}"), g.batch_verdicts.to_string()),
            (
                format!("{{{host},kind=\"single\"}}"),
                g.single_verdicts.to_string(),
            ),
        ],
    );
    p.metric(
        "xco_agent_kernel_bypassed_packets_total",
        "counter",
        "Packets the kernel passed uncoordinated because the agent's queue socket was full (fail-open).",
        &one(g.kernel_bypassed),
    );
    p.metric(
        "xco_agent_kernel_dropped_packets_total",
        "counter",
        "Packets the kernel dropped at the agent's queue (its queue_dropped + queue_user_dropped).",
        &one(g.kernel_dropped),
    );
    p.metric(
        "xco_agent_kernel_queue_packets",
        "gauge",
        "Packets awaiting the agent's verdict in the kernel now (held, and on their way).",
        &one(g.kernel_queued),
    );
    p.metric(
        "xco_agent_kernel_queue_max_packets",
        "gauge",
        "The kernel queue's length: at this many, further packets pass uncoordinated (fail-open).",
        &one(g.kernel_queue_max),
    );
    let r = &a.node.rejected;
    let rej: Vec<(String, String)> = [
        ("auth", r.auth),
        ("replay", r.replay),
        ("malformed", r.malformed),
        ("session", r.session),
    ]
    .iter()
    .map(|(why, n)| (format!("{{{host},reason=\"{why}\"}}"), n.to_string()))
    .collect();
    p.metric(
        "xco_agent_rejected_total",
        "counter",
        "Control datagrams rejected, by reason.",
        &rej,
    );
    p.metric(
        "xco_agent_controller_run",
        "gauge",
        "1 while a controller run is obeyed (adopted from a signed answer to its join).",
        &one(u64::from(a.node.run().is_some())),
    );
    p.metric(
        "xco_agent_stale_term_total",
        "counter",
        "Controller messages refused: of a lower term than the highest seen, or another run of it.",
        &one(a.node.stats.stale_term),
    );
    p.metric(
        "xco_agent_controller_term",
        "gauge",
        "The highest controller term seen signed.",
        &one(a.node.max_term()),
    );
    if let Some((_, gap_us)) = a.last_run_change {
        p.metric(
            "xco_agent_run_change_gap_microseconds",
            "gauge",
            "At the latest change of controller run: time from the last directive of the previous run to the first of the new.",
            &one(gap_us),
        );
    }
    p.metric(
        "xco_agent_control_dropped_total",
        "counter",
        "Control datagrams dropped unread: not from the controller's address, or over the signature budget.",
        &[
            (
                format!("{{{host},why=\"foreign\"}}"),
                a.node.stats.foreign.to_string(),
            ),
            (
                format!("{{{host},why=\"over_budget\"}}"),
                a.node.stats.over_budget.to_string(),
            ),
        ],
    );
    p.histogram(
        "xco_agent_verdict_latency_seconds",
        "How long held packets waited from interception to their verdict.",
        &a.stats.verdict_latency,
    );
    p.out
}
