//! `xco-daemon`: the XCo controller and host agent (see the crate docs).

use clap::{Parser, Subcommand, ValueEnum};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;
use xco_daemon::agent::nfqueue::{Intercept, NfQueueGate};
use xco_daemon::agent::{self, AgentOpts};
use xco_daemon::config::Topology;
use xco_daemon::controller::{self, ControllerOpts};
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
    /// Example: xco-daemon controller --topology star.toml --key xco.key --metrics 127.0.0.1:9464
    Controller {
        /// Topology file (hosts, switches, links, [control]).
        #[arg(long)]
        topology: String,
        /// Shared key file (make one with `xco-daemon keygen FILE`).
        #[arg(long)]
        key: String,
        /// UDP address to listen on [default: control.controller of the topology].
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// Serve Prometheus metrics at http://ADDR/metrics.
        #[arg(long)]
        metrics: Option<SocketAddr>,
        /// Least severe log events printed.
        #[arg(long, value_enum, default_value = "info")]
        log_level: LogLevel,
    },
    /// Run a host agent (root: it installs iptables rules and binds a netfilter queue).
    ///
    /// Example: xco-daemon agent --topology star.toml --key xco.key --host h1
    Agent {
        /// Topology file.
        #[arg(long)]
        topology: String,
        /// Shared key file.
        #[arg(long)]
        key: String,
        /// This host's name in the topology.
        #[arg(long)]
        host: String,
        /// Local address of the control socket.
        #[arg(long, default_value = "0.0.0.0:0")]
        bind: SocketAddr,
        /// Netfilter queue number.
        #[arg(long, default_value_t = 7)]
        queue: u16,
        /// Log the agent's counters every this many seconds.
        #[arg(long, default_value_t = 10.0)]
        stats_every_s: f64,
        /// Least severe log events printed.
        #[arg(long, value_enum, default_value = "info")]
        log_level: LogLevel,
    },
    /// Write a new random 32-byte key (hex) to FILE (mode 0600).
    Keygen {
        /// Where to write it.
        file: String,
    },
    /// Check a topology file and print what it describes.
    Check {
        /// Topology file.
        topology: String,
    },
}

fn keygen(path: &str) -> Result<(), String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut key = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .map_err(|e| format!("/dev/urandom: {e}"))?;
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("{path}: {e}"))?;
    std::io::Write::write_all(&mut f, format!("{hex}\n").as_bytes()).map_err(|e| format!("{path}: {e}"))
}

fn run(cli: Cli) -> Result<(), String> {
    let load = |p: &str| Topology::load(p).map_err(|e| e.to_string());
    let key = |p: &str| xco_daemon::channel::read_key(p);
    match cli.cmd {
        Cmd::Controller {
            topology,
            key: k,
            listen,
            metrics,
            log_level,
        } => {
            let topo = load(&topology)?;
            let listen = listen.unwrap_or(topo.file.control.controller);
            controller::run(ControllerOpts {
                topo,
                key: key(&k)?,
                listen,
                metrics,
                log_level: log_level.into(),
            })
        }
        Cmd::Agent {
            topology,
            key: k,
            host,
            bind,
            queue,
            stats_every_s,
            log_level,
        } => {
            let topo = load(&topology)?;
            let me = topo.host_id(&host).ok_or_else(|| {
                format!(
                    "--host: '{host}' is not a [[host]] of {topology} (hosts: {})",
                    names(&topo)
                )
            })?;
            let key = key(&k)?;
            if !stats_every_s.is_finite() || stats_every_s <= 0.0 {
                return Err("--stats-every-s must be positive".into());
            }
            // signals are blocked and the poller made before the gate is opened
            let poller = Poller::new().map_err(|e| format!("event loop: {e}"))?;
            let dests: Vec<_> = (0..topo.hosts())
                .filter(|&h| h as u32 != me)
                .flat_map(|h| topo.prefixes[h].iter().copied())
                .collect();
            let gate = NfQueueGate::install(
                queue,
                &Intercept {
                    dests: &dests,
                    bypass_bytes: topo.settings.bypass.packet_bytes,
                    controller: topo.file.control.controller,
                },
            )?;
            let opts = AgentOpts {
                topo,
                host: me,
                key,
                bind,
                log_level: log_level.into(),
                stats_every: Duration::from_secs_f64(stats_every_s),
            };
            agent::run(opts, gate, poller)
        }
        Cmd::Keygen { file } => keygen(&file),
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
    }
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
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xco-daemon: error: {e}");
            ExitCode::from(2)
        }
    }
}
