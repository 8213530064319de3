//! `xco-daemon`: the XCo controller and host agent (see the crate docs), and
//! `dst`, the control plane's simulation harness as a command.

// the harness's files, shared with `cargo test -p xco-core --test dst`
#[allow(dead_code)]
#[path = "../../xco-core/tests/dst/check.rs"]
mod check;
mod dst;
#[allow(dead_code)]
#[path = "../../xco-core/tests/dst/net.rs"]
mod net;
#[allow(dead_code)]
#[path = "../../xco-core/tests/dst/ondemand.rs"]
mod ondemand;
// the simulator's packet network as the harness's transport (`cargo test -p xco-sim --test dst_sim`)
#[allow(dead_code)]
#[path = "../../xco-sim/tests/dst_sim/simnet.rs"]
mod simnet;
#[allow(dead_code)]
#[path = "../../xco-core/tests/dst/world.rs"]
mod world;

use clap::{Parser, Subcommand, ValueEnum};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::process::ExitCode;
use std::time::Duration;
use xco_daemon::agent::gate::PacketGate;
use xco_daemon::agent::nfqueue::{Intercept, NfQueueGate};
use xco_daemon::agent::{self, AgentOpts};
use xco_daemon::config::Topology;
use xco_daemon::controller::{self, ControllerOpts};
use xco_daemon::keys::{self, AgentKeyFile};
use xco_daemon::log::Level;
use xco_daemon::runtime::Poller;

/// XCo on real hosts: a controller issues per-timeslice transmission
/// directives; an agent on every host holds each destination's traffic until
/// a directive lets it go. Both read the same topology file.
#[derive(Parser)]
#[command(name = "xco-daemon", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// The network of `dst`'s runs.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DstNetwork {
    /// One-way delays drawn per datagram; no queue, no link, no data on the wire.
    Model,
    /// The simulator's packet network: queues and links shared with the agents' data.
    Sim,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogLevel {
    Debug,
    Info,
    Warn,
    Error,
}

impl From<LogLevel> for Level {
    fn from(l: LogLevel) -> Level {
        match l {
            LogLevel::Debug => Level::Debug,
            LogLevel::Info => Level::Info,
            LogLevel::Warn => Level::Warn,
            LogLevel::Error => Level::Error,
        }
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the controller (until SIGTERM/SIGINT).
    ///
    /// Example: xco-daemon controller --topology star.toml --key master.key --metrics 127.0.0.1:9464
    Controller {
        /// Topology file (hosts, switches, links, [control]).
        #[arg(long)]
        topology: String,
        /// The master secret (make one with `xco-daemon keygen FILE`; never leaves the controller).
        #[arg(long)]
        key: String,
        /// UDP address to listen on [default: control.controller of the
        /// topology, control.standby with --standby].
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// Run as the hot standby (control.standby of the topology): watch the
        /// agents, take over when the primary's beats stop for control.takeover_ms.
        #[arg(long)]
        standby: bool,
        /// Serve Prometheus metrics at http://ADDR/metrics (and health at /healthz).
        #[arg(long)]
        metrics: Option<SocketAddr>,
        /// Least severe log events printed.
        #[arg(long, value_enum, default_value = "info")]
        log_level: LogLevel,
    },
    /// Run a host agent (root: it installs iptables rules and binds a netfilter queue).
    ///
    /// Example: xco-daemon agent --topology star.toml --key h1.key --host h1
    Agent {
        /// Topology file.
        #[arg(long)]
        topology: String,
        /// This host's agent key file (made on the controller with `xco-daemon agent-key`).
        #[arg(long)]
        key: String,
        /// This host's name in the topology.
        #[arg(long)]
        host: String,
        /// Local address of the control socket [default: this host's address
        /// towards the controller, any port]; never a wildcard address.
        #[arg(long)]
        bind: Option<SocketAddr>,
        /// Serve Prometheus metrics at http://ADDR/metrics (and health at /healthz).
        #[arg(long)]
        metrics: Option<SocketAddr>,
        /// Netfilter queue number.
        #[arg(long, default_value_t = 7)]
        queue: u16,
        /// Log the agent's counters every this many seconds.
        #[arg(long, default_value_t = 10.0)]
        stats_every_s: f64,
        /// Least severe log events printed.
        #[arg(long, value_enum, default_value = "info")]
        log_level: LogLevel,
        /// Run without the watchdog process (a hung agent then holds its host).
        #[arg(long)]
        no_watchdog: bool,
        /// Testing only: SIGUSR1 makes the agent's loop spin this many ms (a busy loop).
        #[arg(long, hide = true)]
        debug_spin_on_sigusr1_ms: Option<u64>,
    },
    /// The agent's watchdog (started by the agent itself; not for operators).
    #[command(hide = true)]
    AgentWatchdog {
        #[arg(long)]
        queue: u16,
        #[arg(long)]
        stale_us: u64,
        /// The queue's socket, the beats pipe and the releases pipe, inherited.
        #[arg(long)]
        fds: String,
        #[arg(long)]
        agent_pid: u32,
        #[arg(long, value_enum, default_value = "info")]
        log_level: LogLevel,
    },
    /// Write a new random 32-byte master secret (hex) to FILE, a new regular
    /// file of mode 0600 in a directory only its owner may write. Only the
    /// controller holds it.
    Keygen {
        /// Where to write it (refused if it exists, unless --force).
        file: String,
        /// Replace an existing key file (a new file is renamed over it; a
        /// link, device or FIFO at FILE is still refused).
        #[arg(long)]
        force: bool,
    },
    /// Write host HOST's agent key file (its own MAC key and the controller's
    /// public key, mode 0600) to FILE, from the master secret. Copy it to
    /// that host only.
    ///
    /// Example: xco-daemon agent-key --key master.key --topology star.toml --host h1 h1.key
    AgentKey {
        /// The master secret.
        #[arg(long)]
        key: String,
        /// Topology file (the host must be one of its hosts).
        #[arg(long)]
        topology: String,
        /// The host.
        #[arg(long)]
        host: String,
        /// Where to write its key file.
        file: String,
    },
    /// Check a topology file and print what it describes.
    Check {
        /// Topology file.
        topology: String,
    },
    /// Run the control plane's deterministic simulation harness: seeds of
    /// faults, a hostile host and a hot standby, every invariant checked
    /// (exit 1 if a seed breaks one; it prints the command that replays it).
    ///
    /// Examples: xco-daemon dst --seeds 100000 --start 10000; xco-daemon dst --replay 170;
    /// xco-daemon dst --network sim --seeds 1000
    Dst {
        /// The network the datagrams travel: `model` (one-way delays drawn per
        /// datagram, no queue) or `sim` (the simulator's packet network: drop-tail
        /// queues and links of the seed's capacities, shared with the agents' data).
        #[arg(long, value_enum, default_value_t = DstNetwork::Model)]
        network: DstNetwork,
        /// Run this many seeds.
        #[arg(long, conflicts_with = "replay")]
        seeds: Option<u64>,
        /// The first seed of --seeds.
        #[arg(long, default_value_t = 0, requires = "seeds")]
        start: u64,
        /// Threads of --seeds.
        #[arg(long, default_value_t = 2, requires = "seeds")]
        threads: u64,
        /// Run one seed with a trace of every message and fault (on standard error).
        #[arg(long)]
        replay: Option<u64>,
        /// With --replay: the seed's network without faults.
        #[arg(long, requires = "replay", conflicts_with = "scenario")]
        calm: bool,
        /// With --replay: a calm network with a standby and one fault: takeover, pause, split, standby-pause or standby-pause-dead.
        #[arg(long, requires = "replay")]
        scenario: Option<String>,
    },
}

/// The local address of the route to `controller` (the control network's side of this host).
fn control_address(controller: SocketAddr) -> Result<IpAddr, String> {
    let probe = UdpSocket::bind(if controller.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    })
    .and_then(|s| s.connect(controller).map(|()| s))
    .and_then(|s| s.local_addr())
    .map_err(|e| format!("--bind: no route to the controller {controller}: {e}"))?;
    Ok(probe.ip())
}

fn run(cli: Cli) -> Result<u8, String> {
    let load = |p: &str| Topology::load(p).map_err(|e| e.to_string());
    let cmd = match cli.cmd {
        Cmd::Dst {
            network,
            seeds,
            start,
            threads,
            replay,
            calm,
            scenario,
        } => {
            let sim = network == DstNetwork::Sim;
            let cmd = match (seeds, replay) {
                (Some(n), None) => dst::DstCmd::Sweep {
                    start,
                    n,
                    threads,
                    sim,
                },
                (None, Some(seed)) => dst::DstCmd::Replay {
                    seed,
                    sim,
                    setup: if calm { Some("calm".into()) } else { scenario },
                },
                _ => return Err("dst: give --seeds N (and --start S) or --replay SEED".into()),
            };
            return dst::run(cmd);
        }
        cmd => cmd,
    };
    match cmd {
        Cmd::Controller {
            topology,
            key: k,
            listen,
            standby,
            metrics,
            log_level,
        } => {
            let topo = load(&topology)?;
            let c = &topo.file.control;
            let listen = match (listen, standby, c.standby) {
                (Some(l), ..) => l,
                (None, true, Some(s)) => s,
                (None, true, None) => {
                    return Err(format!("--standby: {topology} has no control.standby address"))
                }
                (None, false, _) => c.controller,
            };
            if standby && c.standby.is_none() {
                return Err(format!("--standby: {topology} has no control.standby address"));
            }
            controller::run(ControllerOpts {
                topo,
                master: keys::read_master(&k)?,
                listen,
                standby,
                metrics,
                log_level: log_level.into(),
            })
        }
        Cmd::Agent {
            topology,
            key: k,
            host,
            bind,
            metrics,
            queue,
            stats_every_s,
            log_level,
            no_watchdog,
            debug_spin_on_sigusr1_ms,
        } => {
            let topo = load(&topology)?;
            let me = topo.host_id(&host).ok_or_else(|| {
                format!(
                    "--host: '{host}' is not a [[host]] of {topology} (hosts: {})",
                    names(&topo)
                )
            })?;
            let file = AgentKeyFile::read(&k)?;
            if file.host != host {
                return Err(format!(
                    "--key: {k} is the key of host '{}', not of '{host}'",
                    file.host
                ));
            }
            let agent_keys = xco_core::wire::AgentKeys::new(me, &file.host_key, &file.controller_public)
                .map_err(|e| format!("key file {k}: controller_public: {e}"))?;
            let controller_addr = topo.file.control.controller;
            let bind = match bind {
                Some(b) if b.ip().is_unspecified() => {
                    return Err(format!(
                        "--bind: {b} is every address; give this host's control-network address"
                    ))
                }
                Some(b) => b,
                None => SocketAddr::new(control_address(controller_addr)?, 0),
            };
            if !stats_every_s.is_finite() || stats_every_s <= 0.0 {
                return Err("--stats-every-s must be positive".into());
            }
            // signals are blocked and the poller made before the gate is opened
            let poller = Poller::new().map_err(|e| format!("event loop: {e}"))?;
            let others = || (0..topo.hosts()).filter(|&h| h as u32 != me);
            let dests: Vec<_> = others().flat_map(|h| topo.prefixes[h].iter().copied()).collect();
            let dests6: Vec<_> = others().flat_map(|h| topo.prefixes6[h].iter().copied()).collect();
            let gate = NfQueueGate::install(
                queue,
                &Intercept {
                    dests: &dests,
                    dests6: &dests6,
                    bypass_bytes: topo.settings.bypass.packet_bytes,
                    bypass_pps: topo.bypass_pps(),
                    control_mark: topo.control_mark(),
                },
            )?;
            if gate.removed_stale {
                xco_daemon::log::Logger::new("agent", Level::from(log_level)).warn(
                    "stale_chain_removed",
                    &[
                        ("chain", &format!("XCO-Q{queue}")),
                        ("why", &"left by an agent that did not exit cleanly"),
                    ],
                );
            }
            let watchdog = if no_watchdog {
                None
            } else {
                let fail_open = Duration::from_nanos(topo.settings.fail_open_after.as_ns());
                let level = format!("{:?}", Level::from(log_level)).to_lowercase();
                Some(agent::watchdog::Watchdog::spawn(
                    queue,
                    gate.fd(),
                    agent::watchdog::stale_after(fail_open),
                    &level,
                )?)
            };
            let opts = AgentOpts {
                topo,
                host: me,
                keys: agent_keys,
                bind,
                metrics,
                log_level: log_level.into(),
                stats_every: Duration::from_secs_f64(stats_every_s),
                watchdog,
                debug_spin_on_sigusr1: debug_spin_on_sigusr1_ms.map(Duration::from_millis),
            };
            agent::run(opts, gate, poller)
        }
        Cmd::AgentWatchdog {
            queue,
            stale_us,
            fds,
            agent_pid,
            log_level,
        } => {
            let fds: Vec<i32> = fds.split(',').filter_map(|x| x.parse().ok()).collect();
            let fds: [i32; 3] = fds
                .try_into()
                .map_err(|_| "--fds: three descriptors, comma-separated".to_string())?;
            agent::watchdog::run(agent::watchdog::WatchdogOpts {
                queue,
                stale: Duration::from_micros(stale_us),
                fds,
                agent_pid,
                log_level: log_level.into(),
            })
        }
        Cmd::Keygen { file, force } => keys::keygen(&file, force),
        Cmd::AgentKey {
            key,
            topology,
            host,
            file,
        } => {
            let topo = load(&topology)?;
            if topo.host_id(&host).is_none() {
                return Err(format!(
                    "--host: '{host}' is not a [[host]] of {topology} (hosts: {})",
                    names(&topo)
                ));
            }
            let master = keys::read_master(&key)?;
            let controller = xco_core::wire::ControllerKeys::new(&master, &[]);
            let f = AgentKeyFile {
                host: host.clone(),
                host_key: xco_core::wire::host_key(&master, &host).to_vec(),
                controller_public: controller.public_key(),
            };
            // derived from the master: writing it again gives the same file, so it is replaced
            keys::write_secret(&file, &f.render(), true)
        }
        Cmd::Check { topology } => {
            let t = load(&topology)?;
            println!(
                "{topology}: {} hosts, {} switches, {} directed links; mode {}, slice {} ms, routing {}",
                t.hosts(),
                t.file.switches.len(),
                t.directed_links().len(),
                format!("{:?}", t.settings.mode).to_lowercase(),
                t.settings.slice.as_secs_f64() * 1e3,
                t.routing.name()
            );
            Ok(())
        }
        Cmd::Dst { .. } => unreachable!("handled above"),
    }
    .map(|()| 0)
}

fn names(t: &Topology) -> String {
    t.file
        .hosts
        .iter()
        .map(|h| h.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("xco-daemon: error: {e}");
            ExitCode::from(2)
        }
    }
}
