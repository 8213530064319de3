//! The simulation driver, on top of every other layer: owns the context
//! (clock, events, network), the host stack, the transports and the
//! applications, pops events in order and hands each to the element it names.
//! Nothing below it imports it.

use crate::app::{App, AppNote, Env};
use crate::control::{RunControl, CHECK_EVERY};
use crate::ctx::Ctx;
use crate::engine::{Event, EventQueue};
use crate::net::Net;
use crate::output::timeseries::Timeseries;
use crate::tcp::select::TcpSettings;
use crate::tcp::table::TcpTable;
use crate::tcp::TcpConfig;
use crate::xco::Stack;
use std::sync::Arc;
use xco_core::{Dur, Time};

/// Which ports a time series records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortSampling {
    /// No ports.
    None,
    /// Switch output ports only.
    Switches,
    /// Every port, host NICs included.
    All,
}

/// How a run ended and how much work it did.
#[derive(Clone, Debug)]
pub struct RunStats {
    /// Simulated time at the end.
    pub end: Time,
    /// Events handled.
    pub events: u64,
    /// Data packets that crossed a link.
    pub data_packet_hops: u64,
    /// Why the run stopped: `apps_done`, `duration`, `no_events`, or
    /// `interrupted` (its [`RunControl`] was stopped).
    pub stop_reason: &'static str,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A complete simulation.
pub struct Sim {
    /// Clock, events, network.
    pub cx: Ctx,
    /// The host stack: egress (with XCo's gate), receive, notes for apps.
    pub stack: Stack,
    /// TCP endpoints.
    pub tcp: TcpTable,
    /// Applications.
    pub apps: Vec<App>,
    /// Stop at this time at the latest.
    pub stop_at: Option<Time>,
    sample_bin: Option<Dur>,
    port_sampling: PortSampling,
    /// The time series so far, as CSV text (bounded in bytes).
    pub timeseries: Timeseries,
    /// Watched every [`CHECK_EVERY`] events: a stop request, published progress.
    pub control: Option<Arc<RunControl>>,
    /// Warm the caches for the packet arrivals ahead ([`crate::net::prefetch`]);
    /// on by default for networks larger than the caches. Results are the
    /// same either way.
    pub prefetch: bool,
    note_scratch: Vec<AppNote>,
}

impl Sim {
    /// A simulation over `net` with TCP settings `tcp_cfg` and `seed`.
    pub fn new(net: Net, tcp_cfg: TcpConfig, seed: u64) -> Sim {
        // wheel buckets of about half the shortest frame time (an ACK on the
        // fastest link), a horizon of two link crossings of a jumbo frame
        let ack_frame = tcp_cfg.header_bytes + net.framing.frame_overhead_bytes + net.framing.gap_bytes;
        let jumbo = 9000 + net.framing.frame_overhead_bytes + net.framing.gap_bytes;
        let bucket_ps = net
            .ports
            .iter()
            .map(|p| p.serialization(ack_frame).ps() / 2)
            .min()
            .unwrap_or(1000);
        let horizon_ps = net
            .ports
            .iter()
            .map(|p| 2 * (p.delay + p.serialization(jumbo)).ps())
            .max()
            .unwrap_or(1_000_000);
        let n_nodes = net.nodes.len();
        let prefetch = net.prefetch_pays();
        Sim {
            cx: Ctx {
                now: Time::ZERO,
                ev: EventQueue::for_timescale(bucket_ps, horizon_ps),
                net,
            },
            stack: Stack::new(n_nodes, TcpSettings::new(tcp_cfg), seed),
            tcp: TcpTable::default(),
            apps: Vec::new(),
            stop_at: None,
            sample_bin: None,
            port_sampling: PortSampling::None,
            timeseries: Timeseries::new(u64::MAX),
            control: None,
            prefetch,
            note_scratch: Vec::new(),
        }
    }

    /// The id the next added app will get.
    pub fn next_app_id(&self) -> u32 {
        self.apps.len() as u32
    }

    /// Add an application that starts at `start`; returns its id.
    pub fn add_app(&mut self, app: App, start: Time) -> u32 {
        let id = self.apps.len() as u32;
        self.apps.push(app);
        self.cx.ev.schedule(start, Event::App { app: id, token: 0 });
        id
    }

    /// Record a time series with bins of `bin`.
    pub fn sample_every(&mut self, bin: Dur, ports: PortSampling) {
        assert!(bin > Dur::ZERO, "sample bin must be positive");
        self.sample_bin = Some(bin);
        self.port_sampling = ports;
        self.cx.ev.schedule(Time::ZERO + bin, Event::Sample);
    }

    /// The time series' bin, if one is recorded.
    pub fn sample_bin(&self) -> Option<Dur> {
        self.sample_bin
    }

    /// Which ports the time series records.
    pub fn port_sampling(&self) -> PortSampling {
        self.port_sampling
    }

    /// Keep the time series and every capture under `bytes` (each as the
    /// file it becomes); rows and records beyond are not kept.
    pub fn set_max_file_bytes(&mut self, bytes: u64) {
        self.timeseries.set_limit(bytes);
        for c in &mut self.cx.net.captures {
            c.set_limit(bytes);
        }
    }

    /// Run until every app with an end has finished (if all apps have one),
    /// the stop time, or until nothing is left to do.
    pub fn run(&mut self) -> Result<RunStats, SimError> {
        let endless = self.apps.iter().any(|a| a.endless());
        if endless && self.stop_at.is_none() {
            return Err(SimError(
                "an application runs forever (no bytes/count limit): set a duration".into(),
            ));
        }
        let stop_at = self.stop_at.unwrap_or(Time::NEVER);
        let control = self.control.clone();
        let (events, stop_reason) = self.run_events(stop_at, endless, control.as_deref())?;
        self.poll_control(events);
        Ok(RunStats {
            end: self.cx.now,
            events,
            data_packet_hops: self.cx.net.data_packet_hops,
            stop_reason,
        })
    }

    /// The event loop of [`Sim::run`]: events handled and why it stopped.
    /// With [`Sim::prefetch`] it warms the caches for the arrivals ahead
    /// ([`crate::net::prefetch`]). With a `control`, its stop flag is read
    /// before every event (one load): one event of a large network can take
    /// many milliseconds (a wake-up of 100,000 blocked senders), so a count
    /// of events alone could delay a stop by minutes. One loop tests both
    /// per event: one copy of the loop per choice (four) made the compiler
    /// stop inlining the arrival path, 6.7–9 % more instructions at k = 8.
    #[inline(always)]
    fn run_events(
        &mut self,
        stop_at: Time,
        endless: bool,
        control: Option<&RunControl>,
    ) -> Result<(u64, &'static str), SimError> {
        let mut events = 0u64;
        loop {
            if let Some(c) = control {
                if c.stop_requested() {
                    return Ok((events, "interrupted"));
                }
                if events & (CHECK_EVERY - 1) == 0 {
                    self.poll_control(events);
                }
            }
            match self.cx.ev.peek_time() {
                None => return Ok((events, "no_events")),
                Some(t) if t > stop_at => {
                    self.cx.now = stop_at;
                    return Ok((events, "duration"));
                }
                _ => {}
            }
            let (t, ev) = self.cx.ev.pop().expect("peeked");
            self.cx.now = t;
            events += 1;
            if self.prefetch {
                self.cx.net.prefetch_ahead(&self.cx.ev);
            }
            let mut check_done = matches!(ev, Event::App { .. });
            self.dispatch(ev)?;
            if !self.stack.notes.is_empty() {
                check_done |= self.deliver_notes()?;
            }
            if check_done && !endless && self.apps_done() {
                return Ok((events, "apps_done"));
            }
        }
    }

    /// Publish progress to the control (if any).
    #[cold]
    #[inline(never)]
    fn poll_control(&self, events: u64) {
        if let Some(c) = &self.control {
            c.publish(self.cx.now, events, self.cx.net.data_packet_hops);
        }
    }

    /// Handle every event up to and including time `t`, then set the clock to `t`
    /// (for tests and tools that drive the model step by step).
    pub fn run_until(&mut self, t: Time) -> Result<(), SimError> {
        while self.cx.ev.peek_time().is_some_and(|x| x <= t) {
            let (now, ev) = self.cx.ev.pop().expect("peeked");
            self.cx.now = now;
            self.dispatch(ev)?;
            if !self.stack.notes.is_empty() {
                self.deliver_notes()?;
            }
        }
        self.cx.now = t;
        Ok(())
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Event) -> Result<(), SimError> {
        let cx = &mut self.cx;
        let stack = &mut self.stack;
        match ev {
            Event::PipeArrive(port) => {
                if let Some(pkt) = cx.net.on_pipe_arrive(cx.now, &mut cx.ev, port) {
                    stack.deliver(cx, &mut self.tcp, pkt);
                }
            }
            Event::PortDepart(port) => cx.net.on_port_depart(cx.now, &mut cx.ev, port),
            Event::NicRoom(host) => stack.on_nic_room(cx, host),
            Event::Coordinator(host) => {
                if let Some(x) = stack.xco.as_mut() {
                    x.on_coordinator_timer(cx.now, &mut cx.ev, &mut cx.net, &mut stack.hosts, host);
                }
            }
            Event::Controller => {
                if let Some(x) = stack.xco.as_mut() {
                    x.on_controller_timer(cx.now, &mut cx.ev, &mut cx.net);
                }
            }
            Event::ControlMessage(slot) => {
                if let Some(x) = stack.xco.as_mut() {
                    x.on_message(cx.now, &mut cx.ev, &mut cx.net, &mut stack.hosts, slot);
                }
            }
            Event::TcpRto(ep) => self.tcp.eps[ep as usize].on_rto_event(cx, stack),
            Event::TcpDelack(ep) => self.tcp.eps[ep as usize].on_delack_event(cx, stack),
            Event::TcpPace(ep) => self.tcp.eps[ep as usize].on_pace_event(cx, stack),
            Event::App { app, token } => {
                let mut env = Env {
                    cx,
                    stack,
                    tcp: &mut self.tcp,
                };
                let a = &mut self.apps[app as usize];
                let r = if token == 0 {
                    a.start(&mut env)
                } else {
                    a.on_timer(&mut env, token)
                };
                r.map_err(|e| SimError(format!("app {app} ({}): {e}", a.kind())))?;
            }
            Event::Sample => self.sample(),
            Event::Probe(_) | Event::Timer { .. } => {}
        }
        self.stack.after_event(&mut self.cx, &mut self.tcp);
        Ok(())
    }

    /// Hand queued notes to their apps; true when one of them finished.
    fn deliver_notes(&mut self) -> Result<bool, SimError> {
        let mut any_finished = false;
        while !self.stack.notes.is_empty() {
            std::mem::swap(&mut self.note_scratch, &mut self.stack.notes);
            for i in 0..self.note_scratch.len() {
                let note = self.note_scratch[i];
                let app = note.app() as usize;
                let mut env = Env {
                    cx: &mut self.cx,
                    stack: &mut self.stack,
                    tcp: &mut self.tcp,
                };
                let Some(a) = self.apps.get_mut(app) else {
                    continue; // a connection opened by a test harness without an app
                };
                let was = a.finished();
                a.on_note(&mut env, note)
                    .map_err(|e| SimError(format!("app {app} ({}): {e}", a.kind())))?;
                any_finished |= !was && a.finished();
            }
            self.note_scratch.clear();
        }
        Ok(any_finished)
    }

    fn apps_done(&self) -> bool {
        self.apps.iter().all(|a| a.finished())
    }

    #[inline(never)]
    fn sample(&mut self) {
        let Some(bin) = self.sample_bin else { return };
        let now = self.cx.now;
        let secs = bin.as_secs_f64();
        let Net {
            flows, nodes, ports, ..
        } = &mut self.cx.net;
        let ts = &mut self.timeseries;
        // a full time series (its size limit reached) still empties the bins
        let t_s = now.as_secs_f64().to_string();
        for (id, f) in flows.iter_mut().enumerate() {
            if f.app_bytes_written == 0 && f.bin_bytes == 0 {
                continue;
            }
            if !ts.is_full() {
                let name = format!("{}->{}", nodes[f.src as usize].name, nodes[f.dst as usize].name);
                let mbps = f.bin_bytes as f64 * 8.0 / secs / 1e6;
                ts.row(now, &t_s, "flow", id as u32, &name, mbps, 0, 0);
            }
            f.bin_bytes = 0;
        }
        if self.port_sampling != PortSampling::None {
            for (id, p) in ports.iter_mut().enumerate() {
                let from_switch = nodes[p.from as usize].kind == crate::net::topology::NodeKind::Switch;
                if self.port_sampling == PortSampling::Switches && !from_switch {
                    continue;
                }
                if !ts.is_full() {
                    let name = format!("{}->{}", nodes[p.from as usize].name, nodes[p.to as usize].name);
                    ts.row(
                        now,
                        &t_s,
                        "port",
                        id as u32,
                        &name,
                        0.0,
                        p.backlog_bytes(now),
                        p.stats.bin_drops,
                    );
                }
                p.stats.bin_drops = 0;
            }
        }
        self.cx.ev.schedule(now + bin, Event::Sample);
    }
}
