//! `xco-daemon controller`: the XCo controller on a real network.
//!
//! It loads the topology file, listens for agents on UDP, and drives
//! `xco_core::sched::Scheduler` — the code the simulator runs — with the
//! monotonic clock: each agent's report, give-back or heartbeat is a
//! `handle_*` call, the scheduler's next deadline arms a `timerfd`, and every
//! directive it emits is signed and sent to the agent's last known address.
//!
//! All state is soft. Every start draws a random run id; agents adopt it
//! through a signed hello answering their join, so a restarted controller
//! (whatever its clock says) is obeyed one round trip after its first
//! directive, and directives of an earlier run are never obeyed again. An
//! agent whose session the controller does not know (it restarted, or the
//! agent did) is asked to join again; agents report their whole backlog set
//! every report interval, so the schedule is rebuilt within one interval.

mod metrics;

use crate::channel::{Channel, Received};
use crate::config::Topology;
use crate::http::{Histogram, HttpServer};
use crate::log::{Level, Logger, Throttle};
use crate::runtime::{Clock, Poller, Wake};
use std::net::SocketAddr;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};
use xco_core::sched::{Directive, Scheduler};
use xco_core::wire::{ControllerKeys, Message, RejectCounts};
use xco_core::{Dur, Time};

/// How the controller is started.
pub struct ControllerOpts {
    /// The topology.
    pub topo: Topology,
    /// The master secret.
    pub master: Vec<u8>,
    /// UDP address to listen on (default: `control.controller` of the topology).
    pub listen: SocketAddr,
    /// Serve Prometheus metrics and health here.
    pub metrics: Option<SocketAddr>,
    /// Log level.
    pub log_level: Level,
}

/// Counters beyond the scheduler's own.
#[derive(Clone, Debug, Default)]
pub struct ControllerStats {
    /// Accepted messages by type: join, leave, heartbeat, report, give-back, rejections.
    pub msgs: [u64; 6],
    /// Directives for a host whose address is not known yet.
    pub undeliverable: u64,
    /// Timer expiries handled.
    pub timer_fires: u64,
    /// Rejection counts each agent last reported.
    pub agent_rejections: Vec<Option<RejectCounts>>,
}

/// Rejoin requests to one host at most this often.
const REJOIN_EVERY: Duration = Duration::from_millis(50);

struct Controller {
    sched: Scheduler,
    chan: Channel,
    addrs: Vec<Option<SocketAddr>>,
    names: Vec<String>,
    /// Hosts the scheduler had registered, as of the last check (to name those it times out).
    joined: Vec<bool>,
    last_rejoin: Vec<Option<Instant>>,
    clock: Clock,
    log: Logger,
    rejected_log: Throttle,
    stats: ControllerStats,
    lateness: Histogram,
    timer_at: Time,
    timed_out_seen: u64,
}

impl Controller {
    /// Send the scheduler's directives, decided for the input stamped `input_at`.
    fn flush(&mut self, input_at: Time) {
        while let Some(d) = self.sched.poll_directive() {
            // its start is relative to the input's instant: nearer by the time spent since
            let d = d.aged(self.clock.now().saturating_since(input_at));
            self.send_directive(d);
        }
    }

    fn send_directive(&mut self, d: Directive) {
        let Some(to) = self.addrs.get(d.host as usize).copied().flatten() else {
            self.stats.undeliverable += 1;
            return;
        };
        if self.log.enabled(Level::Debug) {
            self.log.log(
                Level::Debug,
                "directive",
                &[
                    ("host", &d.host),
                    ("start_in_us", &format!("{:.1}", d.start_in.as_secs_f64() * 1e6)),
                    ("kind", &format!("{:?}", d.kind)),
                ],
            );
        }
        self.chan.send(to, Message::Directive(d));
    }

    fn rejected(&mut self, from: SocketAddr, why: &dyn std::fmt::Display) {
        if let Some(n) = self.rejected_log.event(Instant::now()) {
            let total = self.chan.stats.rejected.total();
            self.log.warn(
                "rejected",
                &[
                    ("count", &n),
                    ("total", &total),
                    ("last_from", &from),
                    ("last_why", why),
                ],
            );
        }
    }

    fn on_datagrams(&mut self) {
        while let Some((from, r)) = self.chan.recv() {
            let repr = match r {
                Received::Msg(r) => r,
                Received::NewRun(_) => continue, // never at the controller
                Received::Rejected(e) => {
                    if let xco_core::wire::WireError::Session { host, .. } = e {
                        // a genuine host (its MAC checked) in a session this run does not know
                        self.ask_rejoin(host, from);
                    }
                    self.rejected(from, &e);
                    continue;
                }
            };
            let h = repr.host;
            let now = self.clock.now();
            let known = self.sched.joined(h);
            self.addrs[h as usize] = Some(from);
            match repr.msg {
                Message::Join => {
                    self.stats.msgs[0] += 1;
                    self.chan.send(
                        from,
                        Message::Hello {
                            host: h,
                            nonce: repr.run,
                        },
                    );
                    self.sched.handle_join(now, h);
                    self.log
                        .info("join", &[("host", &self.names[h as usize]), ("from", &from)]);
                }
                Message::Leave => {
                    self.stats.msgs[1] += 1;
                    self.sched.handle_leave(now, h);
                    self.chan.forget(h);
                    self.addrs[h as usize] = None;
                    self.log.info("leave", &[("host", &self.names[h as usize])]);
                }
                Message::Heartbeat => {
                    self.stats.msgs[2] += 1;
                    self.sched.handle_feedback(now, h);
                }
                Message::Report { dests } => {
                    self.stats.msgs[3] += 1;
                    if !known {
                        self.log.info(
                            "registered_by_report",
                            &[("host", &self.names[h as usize]), ("backlog", &dests.len())],
                        );
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
                Message::Rejections(c) => {
                    self.stats.msgs[5] += 1;
                    let before = self.stats.agent_rejections[h as usize].unwrap_or_default();
                    if c.total() > before.total() {
                        self.log.warn(
                            "agent_rejected",
                            &[
                                ("host", &self.names[h as usize]),
                                ("new", &(c.total() - before.total())),
                                ("auth", &c.auth),
                                ("replay", &c.replay),
                                ("malformed", &c.malformed),
                                ("session", &c.session),
                            ],
                        );
                    }
                    self.stats.agent_rejections[h as usize] = Some(c);
                }
                // the channel accepts agents' message types only
                Message::Directive(_) | Message::Hello { .. } | Message::Rejoin { .. } => {}
            }
            self.joined[h as usize] = self.sched.joined(h);
            self.flush(now);
        }
    }

    fn ask_rejoin(&mut self, host: u32, to: SocketAddr) {
        let now = Instant::now();
        let last = &mut self.last_rejoin[host as usize];
        if last.is_some_and(|t| now.duration_since(t) < REJOIN_EVERY) {
            return;
        }
        *last = Some(now);
        self.chan.send(to, Message::Rejoin { host });
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
            self.timed_out_seen = timed_out;
            for h in 0..self.joined.len() {
                if self.joined[h] && !self.sched.joined(h as u32) {
                    self.joined[h] = false;
                    self.addrs[h] = None;
                    self.log.warn(
                        "host_timed_out",
                        &[("host", &self.names[h]), ("id", &h), ("total", &timed_out)],
                    );
                }
            }
        }
        self.flush(now);
    }
}

/// Run the controller until SIGTERM/SIGINT.
pub fn run(opts: ControllerOpts) -> Result<(), String> {
    let log = Logger::new("controller", opts.log_level);
    let mut poller = Poller::new().map_err(|e| format!("event loop: {e}"))?;
    let names: Vec<String> = opts.topo.file.hosts.iter().map(|h| h.name.clone()).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let keys = ControllerKeys::new(&opts.master, &name_refs);
    let hosts = opts.topo.hosts();
    let run = crate::keys::random_u64()?;
    let chan = Channel::controller(opts.listen, keys, hosts, run)
        .map_err(|e| format!("cannot listen on udp {}: {e}", opts.listen))?;
    poller
        .watch(chan.sock.as_fd(), 0)
        .map_err(|e| format!("event loop: {e}"))?;
    let link_names: Vec<String> = opts.topo.directed_links().into_iter().map(|l| l.2).collect();
    let server = match opts.metrics {
        Some(a) => Some(HttpServer::start(a).map_err(|e| format!("cannot serve metrics on {a}: {e}"))?),
        None => None,
    };
    let mut c = Controller {
        sched: Scheduler::new(opts.topo.sched_topology(), opts.topo.settings.sched_config()),
        chan,
        addrs: vec![None; hosts],
        names,
        joined: vec![false; hosts],
        last_rejoin: vec![None; hosts],
        clock: Clock::new(),
        log: log.clone(),
        rejected_log: Throttle::new(Duration::from_secs(1)),
        stats: ControllerStats {
            agent_rejections: vec![None; hosts],
            ..Default::default()
        },
        lateness: Histogram::default(),
        timer_at: Time::NEVER,
        timed_out_seen: 0,
    };
    log.info(
        "start",
        &[
            ("listen", &opts.listen),
            ("hosts", &hosts),
            ("run", &format!("{run:016x}")),
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
                    &metrics::View {
                        st: &c.stats,
                        ch: &c.chan.stats,
                        late: &c.lateness,
                        link_names: &link_names,
                        host_names: &c.names,
                        directives_per_s: rate.per_s,
                        run,
                    },
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
                    let s = &c.chan.stats.rejected;
                    log.info(
                        "stop",
                        &[
                            ("directives", &c.sched.stats().directives),
                            ("events", &c.sched.stats().events),
                            ("rejected_auth", &s.auth),
                            ("rejected_replay", &s.replay),
                            ("rejected_malformed", &s.malformed),
                            ("rejected_session", &s.session),
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
