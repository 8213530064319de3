//! `xco-daemon controller`: the XCo controller on a real network.
//!
//! It loads the topology file, listens for agents on UDP, and drives
//! `xco_core::sched::Scheduler` — the code the simulator runs — with the
//! monotonic clock: each agent's report, give-back or heartbeat is a
//! `handle_*` call, the scheduler's next deadline arms a `timerfd`, and every
//! directive it emits is signed and sent to the agent's last known address.
//!
//! All state is soft. A restarted controller knows no host until it hears
//! from it; agents report their whole backlog set every report interval, so
//! the schedule is rebuilt within one interval. Directive epochs on the wire
//! are offset by the start time, so agents accept a new controller's
//! directives without a handshake.

mod metrics;

use crate::channel::{Channel, CONTROLLER_ID};
use crate::config::Topology;
use crate::log::{Level, Logger};
use crate::runtime::{Clock, Poller, Wake};
use metrics::{Lateness, MetricsServer};
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use xco_core::sched::{Directive, Scheduler};
use xco_core::wire::Message;
use xco_core::{Dur, Time};

/// How the controller is started.
pub struct ControllerOpts {
    /// The topology.
    pub topo: Topology,
    /// Shared key.
    pub key: Vec<u8>,
    /// UDP address to listen on (default: `control.controller` of the topology).
    pub listen: SocketAddr,
    /// Serve Prometheus metrics here.
    pub metrics: Option<SocketAddr>,
    /// Log level.
    pub log_level: Level,
}

/// Counters beyond the scheduler's own.
#[derive(Clone, Debug, Default)]
pub struct ControllerStats {
    /// Accepted messages by type: join, leave, heartbeat, report, give-back.
    pub msgs: [u64; 5],
    /// Messages from an id outside the topology, or a directive sent to the controller.
    pub rejected_sender: u64,
    /// Directives for a host whose address is not known yet.
    pub undeliverable: u64,
    /// Timer expiries handled.
    pub timer_fires: u64,
}

struct Controller {
    sched: Scheduler,
    chan: Channel,
    addrs: Vec<Option<SocketAddr>>,
    clock: Clock,
    epoch_base: u64,
    log: Logger,
    stats: ControllerStats,
    lateness: Lateness,
    timer_at: Time,
    timed_out_seen: u64,
}

impl Controller {
    fn flush(&mut self) {
        while let Some(d) = self.sched.poll_directive() {
            self.send_directive(d);
        }
    }

    fn send_directive(&mut self, mut d: Directive) {
        let Some(to) = self.addrs.get(d.host as usize).copied().flatten() else {
            self.stats.undeliverable += 1;
            return;
        };
        d.epoch += self.epoch_base;
        if self.log.enabled(Level::Debug) {
            self.log.log(
                Level::Debug,
                "directive",
                &[("host", &d.host), ("kind", &format!("{:?}", d.kind))],
            );
        }
        self.chan.send(to, Message::Directive(d));
    }

    fn on_datagrams(&mut self) {
        while let Some((from, r)) = self.chan.recv() {
            let repr = match r {
                Ok(r) => r,
                Err(e) => {
                    self.log
                        .log(Level::Debug, "rejected", &[("from", &from), ("why", &e)]);
                    continue;
                }
            };
            let h = repr.host;
            if h as usize >= self.addrs.len() {
                self.stats.rejected_sender += 1;
                continue;
            }
            let now = self.clock.now();
            let known = self.sched.joined(h);
            self.addrs[h as usize] = Some(from);
            match repr.msg {
                Message::Join => {
                    self.stats.msgs[0] += 1;
                    self.sched.handle_join(now, h);
                    self.log.info("join", &[("host", &h), ("from", &from)]);
                }
                Message::Leave => {
                    self.stats.msgs[1] += 1;
                    self.sched.handle_leave(now, h);
                    self.addrs[h as usize] = None;
                    self.log.info("leave", &[("host", &h)]);
                }
                Message::Heartbeat => {
                    self.stats.msgs[2] += 1;
                    self.sched.handle_feedback(now, h);
                }
                Message::Report { dests } => {
                    self.stats.msgs[3] += 1;
                    if !known {
                        self.log
                            .info("registered_by_report", &[("host", &h), ("backlog", &dests.len())]);
                    }
                    self.sched.handle_feedback(now, h);
                    let valid: Vec<u32> = dests
                        .into_iter()
                        .filter(|&d| (d as usize) < self.addrs.len())
                        .collect();
                    self.sched.handle_backlog(now, h, &valid);
                }
                Message::GiveBack { dest } => {
                    self.stats.msgs[4] += 1;
                    if (dest as usize) < self.addrs.len() {
                        self.sched.handle_giveback(now, h, dest);
                    }
                }
                Message::Directive(_) => self.stats.rejected_sender += 1,
            }
            self.flush();
        }
    }

    fn on_timer(&mut self) {
        let now = self.clock.now();
        if self.timer_at != Time::NEVER && now >= self.timer_at {
            self.lateness.record(now.saturating_since(self.timer_at));
        }
        self.timer_at = Time::NEVER;
        self.stats.timer_fires += 1;
        self.sched.handle_timeout(now);
        let timed_out = self.sched.stats().hosts_timed_out;
        if timed_out > self.timed_out_seen {
            self.log.warn("hosts_timed_out", &[("total", &timed_out)]);
            self.timed_out_seen = timed_out;
        }
        self.flush();
    }
}

/// Run the controller until SIGTERM/SIGINT.
pub fn run(opts: ControllerOpts) -> Result<(), String> {
    let log = Logger::new("controller", opts.log_level);
    let mut poller = Poller::new().map_err(|e| format!("event loop: {e}"))?;
    let chan = Channel::bind(opts.listen, CONTROLLER_ID, &opts.key)
        .map_err(|e| format!("cannot listen on udp {}: {e}", opts.listen))?;
    poller
        .watch(chan.sock.as_fd(), 0)
        .map_err(|e| format!("event loop: {e}"))?;
    let link_names: Vec<String> = opts.topo.directed_links().into_iter().map(|l| l.2).collect();
    let server = match opts.metrics {
        Some(a) => Some(MetricsServer::start(a).map_err(|e| format!("cannot serve metrics on {a}: {e}"))?),
        None => None,
    };
    let hosts = opts.topo.hosts();
    let epoch_base = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut c = Controller {
        sched: Scheduler::new(opts.topo.sched_topology(), opts.topo.settings.sched_config()),
        chan,
        addrs: vec![None; hosts],
        clock: Clock::new(),
        epoch_base,
        log: log.clone(),
        stats: ControllerStats::default(),
        lateness: Lateness::default(),
        timer_at: Time::NEVER,
        timed_out_seen: 0,
    };
    log.info(
        "start",
        &[
            ("listen", &opts.listen),
            ("hosts", &hosts),
            ("mode", &format!("{:?}", opts.topo.settings.mode).to_lowercase()),
            ("slice_ms", &(opts.topo.settings.slice.as_secs_f64() * 1e3)),
            (
                "metrics",
                &opts.metrics.map_or("off".to_string(), |a| a.to_string()),
            ),
        ],
    );
    let mut wakes = Vec::new();
    let mut next_render = Time::ZERO;
    let mut rate = metrics::RateWindow::default();
    loop {
        let now = c.clock.now();
        if let Some(s) = &server {
            if now >= next_render {
                next_render = now + Dur::from_ms(100);
                rate.update(now, c.sched.stats().directives);
                s.publish(metrics::render(
                    &c.sched,
                    &c.stats,
                    &c.chan.stats,
                    &c.lateness,
                    &link_names,
                    hosts as u32,
                    rate.per_s,
                ));
            }
        }
        let at = c.sched.poll_timeout().unwrap_or(Time::NEVER);
        c.timer_at = at;
        poller.arm(now, at).map_err(|e| format!("timer: {e}"))?;
        poller
            .wait(Duration::from_millis(100), &mut wakes)
            .map_err(|e| format!("event loop: {e}"))?;
        for w in wakes.iter().copied() {
            match w {
                Wake::Readable(_) => c.on_datagrams(),
                Wake::Timer => c.on_timer(),
                Wake::Shutdown => {
                    let s = &c.chan.stats;
                    log.info(
                        "stop",
                        &[
                            ("directives", &c.sched.stats().directives),
                            ("events", &c.sched.stats().events),
                            ("rejected_auth", &s.rejected_auth),
                            ("rejected_replay", &s.rejected_replay),
                            ("rejected_malformed", &s.rejected_malformed),
                            ("timer_lateness_p99_us", &c.lateness.quantile_us(0.99)),
                        ],
                    );
                    return Ok(());
                }
            }
        }
        // the scheduler's deadline may have passed while datagrams were handled
        if c.sched.poll_timeout().is_some_and(|t| t <= c.clock.now()) {
            c.on_timer();
        }
    }
}
