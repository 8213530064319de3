//! The topology file: hosts (with their own and their guests' addresses),
//! switches, links with capacities, and the control settings. The controller,
//! every agent and `xco testbed` read the same file, so a host's id is its
//! position in the `[[host]]` list everywhere.
//!
//! ```toml
//! [control]
//! controller = "10.200.0.1:7400"   # the controller's UDP address (agents send here)
//! standby = "10.200.0.2:7400"      # optional: a hot standby's (agents send to both)
//! takeover_ms = 2.0                # optional: the standby takes over after this
//!                                  # long without the primary's beat (default one slice)
//! control_mark = 0x58430000        # optional: the firewall mark (SO_MARK) of the daemons'
//!                                  # control sockets; agents let only this mark past the gate
//! bypass_pps = 10000               # optional: small packets (<= bypass_bytes) that may pass
//!                                  # the gate uncounted, per second and IP family (0: none)
//! mode = "timeslice"               # timeslice | ratelimit | hybrid
//! slice_ms = 2.0
//!
//! [[switch]]
//! name = "s1"
//!
//! [[host]]
//! name = "h1"
//! addr = "10.0.0.1"                # the host's address on the data network
//! guests = ["10.1.1.0/24"]         # optional: its containers/VMs
//! addr6 = ["fd00::1", "fe80::1"]   # optional: its IPv6 addresses/prefixes (and its guests');
//!                                  # IPv6 to them is gated like IPv4
//! switch = "s1"                    # its access link ...
//! rate_mbps = 100                  # ... and that link's rate, both ways
//!
//! [[link]]                          # switch-to-switch links (both directions)
//! a = "s1"
//! b = "s2"
//! rate_mbps = 1000
//!
//! [topology]                        # optional
//! routing = "ecmp"                 # the paths the controller schedules; the
//!                                  # simulator's [topology] routing, same names
//! ```

use serde::Deserialize;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use xco_core::coord::Settings;
use xco_core::routing::{Graph, HostPaths, Router, RoutingMode};
use xco_core::sched::SchedTopology;

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    /// Control settings.
    pub control: Control,
    /// Switches.
    #[serde(default, rename = "switch")]
    pub switches: Vec<Switch>,
    /// Hosts, in id order.
    #[serde(rename = "host")]
    pub hosts: Vec<Host>,
    /// Switch-to-switch links.
    #[serde(default, rename = "link")]
    pub links: Vec<Link>,
    /// Network-wide settings.
    #[serde(default)]
    pub topology: TopologySettings,
    /// Settings only `xco testbed` reads.
    #[serde(default)]
    pub testbed: Option<toml::Table>,
}

/// `[topology]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySettings {
    /// The routing mode the network's switches follow (the shared router's
    /// names: ecmp, address-bits, equal-length-flow, equal-length-dest), so
    /// the controller schedules the paths packets take. Default ecmp.
    pub routing: Option<String>,
}

xco_core::xco_settings_table! {
    /// `[control]`: the controller's address and the XCo settings (the
    /// vocabulary of `xco_core::coord::settings`, shared with scenarios' `[xco]`).
    #[derive(Clone, Debug)]
    pub struct Control {
        /// The controller's UDP address.
        pub controller: SocketAddr,
        /// A hot standby controller's UDP address (agents send to both).
        pub standby: Option<SocketAddr>,
        /// The standby takes over after this long without the primary's beat, ms (default one slice).
        pub takeover_ms: Option<f64>,
        /// The firewall mark of the daemons' control sockets (default [`DEFAULT_CONTROL_MARK`]).
        pub control_mark: Option<u32>,
        /// Small packets that may pass the gate uncounted, per second and IP family
        /// (default [`DEFAULT_BYPASS_PPS`]; 0: every packet is counted).
        pub bypass_pps: Option<u32>,
    }
}

/// `[[switch]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    /// Name.
    pub name: String,
}

/// `[[host]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// Name.
    pub name: String,
    /// Address on the data network.
    pub addr: Ipv4Addr,
    /// Guest (container/VM) prefixes behind this host, "a.b.c.d/len".
    #[serde(default)]
    pub guests: Vec<String>,
    /// IPv6 addresses or prefixes of this host and its guests (link-local ones too).
    #[serde(default)]
    pub addr6: Vec<String>,
    /// Switch of its access link.
    pub switch: String,
    /// Access link rate, Mbit/s.
    pub rate_mbps: f64,
}

/// `[[link]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// One switch.
    pub a: String,
    /// The other switch.
    pub b: String,
    /// Rate, Mbit/s (each direction).
    pub rate_mbps: f64,
}

/// An IPv4 prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix {
    /// Network address.
    pub net: Ipv4Addr,
    /// Prefix length.
    pub len: u8,
}

impl Prefix {
    /// Parse "a.b.c.d/len" (or a bare address: /32).
    pub fn parse(s: &str) -> Result<Prefix, String> {
        let (a, l) = s.split_once('/').unwrap_or((s, "32"));
        let net: Ipv4Addr = a
            .parse()
            .map_err(|_| format!("'{s}' is not an IPv4 address/prefix"))?;
        let len: u8 = l
            .parse()
            .ok()
            .filter(|&l| l <= 32)
            .ok_or_else(|| format!("'{s}': prefix length must be 0-32"))?;
        Ok(Prefix { net, len })
    }

    fn mask(self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - self.len)
        }
    }

    /// True if `a` is inside.
    pub fn contains(self, a: Ipv4Addr) -> bool {
        (u32::from(a) & self.mask()) == (u32::from(self.net) & self.mask())
    }
}

/// An IPv6 prefix: network address and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix6 {
    /// Network address.
    pub net: Ipv6Addr,
    /// Prefix length.
    pub len: u8,
}

impl Prefix6 {
    /// Parse "addr/len" (or a bare address: /128).
    pub fn parse(s: &str) -> Result<Prefix6, String> {
        let (a, l) = s.split_once('/').unwrap_or((s, "128"));
        let net: Ipv6Addr = a
            .parse()
            .map_err(|_| format!("'{s}' is not an IPv6 address/prefix"))?;
        let len: u8 = l
            .parse()
            .ok()
            .filter(|&l| l <= 128)
            .ok_or_else(|| format!("'{s}': prefix length must be 0-128"))?;
        Ok(Prefix6 { net, len })
    }

    fn mask(self) -> u128 {
        if self.len == 0 {
            0
        } else {
            u128::MAX << (128 - self.len)
        }
    }

    /// True if `a` is inside.
    pub fn contains(self, a: Ipv6Addr) -> bool {
        (u128::from(a) & self.mask()) == (u128::from(self.net) & self.mask())
    }
}

impl std::fmt::Display for Prefix6 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.net, self.len)
    }
}

impl std::fmt::Display for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.net, self.len)
    }
}

/// A checked topology.
#[derive(Clone, Debug)]
pub struct Topology {
    /// The file as read.
    pub file: TopologyFile,
    /// Per host: its address and guest prefixes.
    pub prefixes: Vec<Vec<Prefix>>,
    /// Per host: its IPv6 addresses and prefixes (`addr6`).
    pub prefixes6: Vec<Vec<Prefix6>>,
    /// The XCo settings, checked and completed.
    pub settings: Settings,
    /// The paths packets take.
    pub routing: RoutingMode,
}

/// Bounds of the daemons' own fields (the XCo settings' bounds are the
/// shared ones of `xco_core::coord::settings`; these add what real hosts need).
pub mod bounds {
    /// Most hosts: a backlog report or rate directive lists at most this many.
    pub const MAX_HOSTS: usize = xco_core::wire::repr::MAX_ENTRIES;
    /// Link rates, Mbit/s: 10 kbit/s to 1 Tbit/s.
    pub const RATE_MBPS: (f64, f64) = (0.01, 1_000_000.0);
    /// Shortest slice a real controller schedules, ms: its timer and a
    /// directive's trip take tens of microseconds; shorter slices would be
    /// mostly control traffic (2,000 directives per second per host at this bound).
    pub const MIN_SLICE_MS: f64 = 0.5;
    /// Shortest report interval, ms (at most 1,000 reports per second per host).
    pub const MIN_REPORT_MS: f64 = 1.0;
    /// `bypass_bytes` must stay below this: it is for small packets (ACKs,
    /// pings); a bound at or above the smallest IP MTU (IPv6's 1280) would let
    /// full-size packets bypass, and XCo would coordinate nothing.
    pub const MAX_BYPASS_BYTES: u32 = 1279;
    /// Most small packets per second (and IP family) that may bypass the gate.
    pub const MAX_BYPASS_PPS: u32 = 1_000_000;
    /// A host or switch name: 1 to 64 of letters, digits, `-`, `_`, `.`
    /// (names go into logs, metric labels and key derivation).
    pub const MAX_NAME_LEN: usize = 64;
}

fn check_name(kind: &str, name: &str) -> Result<(), ConfigError> {
    let ok = !name.is_empty()
        && name.len() <= bounds::MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ConfigError(format!(
            "{kind}.name: {name:?} must be 1 to {} letters, digits, '-', '_' or '.'",
            bounds::MAX_NAME_LEN
        )))
    }
}

fn check_rate(field: String, mbps: f64) -> Result<(), ConfigError> {
    let (lo, hi) = bounds::RATE_MBPS;
    if mbps.is_finite() && (lo..=hi).contains(&mbps) {
        Ok(())
    } else {
        Err(ConfigError(format!(
            "{field}: {mbps} is outside {lo} to {hi} Mbit/s"
        )))
    }
}

fn check_unicast(field: &str, a: Ipv4Addr) -> Result<(), ConfigError> {
    if a.is_unspecified() || a.is_multicast() || a.is_broadcast() {
        Err(ConfigError(format!(
            "{field}: {a} is not a host's unicast address"
        )))
    } else {
        Ok(())
    }
}

/// A TOML error on one line: where, the key written there, and what is wrong.
fn toml_error(text: &str, e: &toml::de::Error) -> ConfigError {
    let msg = e.message().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let line_no = text[..span.start.min(text.len())].matches('\n').count() + 1;
            let line = text.lines().nth(line_no - 1).unwrap_or("").trim();
            let line: String = line.chars().take(60).collect();
            ConfigError(format!("line {line_no} ({line}): {msg}"))
        }
        None => ConfigError(msg),
    }
}

/// Error reading a topology file: the field and the problem.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The control sockets' firewall mark unless `control.control_mark` says otherwise ("XC").
pub const DEFAULT_CONTROL_MARK: u32 = 0x5843_0000;
/// Small packets per second (and IP family) that may bypass the gate unless
/// `control.bypass_pps` says otherwise: at most 10.24 Mbit/s of 128-byte packets.
pub const DEFAULT_BYPASS_PPS: u32 = 10_000;

/// The largest topology file read (a 100,000-host file is about 6 MB).
pub const MAX_TOPOLOGY_BYTES: u64 = 16 << 20;

/// Read a topology file: a regular file (never a device or FIFO, which would
/// never end or never answer) of at most [`MAX_TOPOLOGY_BYTES`].
fn read_bounded(path: &str) -> Result<String, ConfigError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let err = |m: String| ConfigError(format!("{path}: {m}"));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| err(e.to_string()))?;
    let meta = f.metadata().map_err(|e| err(e.to_string()))?;
    if !meta.is_file() {
        return Err(err(
            "not a regular file (a device, FIFO or directory); give the topology file".into(),
        ));
    }
    if meta.len() > MAX_TOPOLOGY_BYTES {
        return Err(err(format!(
            "{} bytes; a topology file holds at most {MAX_TOPOLOGY_BYTES}",
            meta.len()
        )));
    }
    let mut text = String::new();
    f.take(MAX_TOPOLOGY_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| err(e.to_string()))?;
    Ok(text)
}

impl Topology {
    /// The controllers agents send to: the primary, then the standby if any.
    pub fn controllers(&self) -> Vec<SocketAddr> {
        let c = &self.file.control;
        std::iter::once(c.controller).chain(c.standby).collect()
    }

    /// How long a standby waits for the primary's beat before it takes over
    /// (`takeover_ms`, default one slice).
    pub fn takeover_after(&self) -> xco_core::Dur {
        match self.file.control.takeover_ms {
            Some(ms) => xco_core::Dur::from_ns((ms * 1e6) as u64),
            None => self.settings.slice,
        }
    }

    /// Read and check the file at `path`.
    pub fn load(path: &str) -> Result<Topology, ConfigError> {
        let text = read_bounded(path)?;
        Topology::parse(&text).map_err(|e| ConfigError(format!("{path}: {}", e.0)))
    }

    /// Parse and check a topology text.
    pub fn parse(text: &str) -> Result<Topology, ConfigError> {
        let file: TopologyFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        let err = |m: String| Err(ConfigError(m));
        if file.hosts.len() < 2 || file.hosts.len() > bounds::MAX_HOSTS {
            return err(format!(
                "[[host]]: {} hosts; 2 to {} are needed",
                file.hosts.len(),
                bounds::MAX_HOSTS
            ));
        }
        let c = &file.control;
        let addrs = [
            ("control.controller", Some(c.controller)),
            ("control.standby", c.standby),
        ];
        for (key, a) in addrs {
            let Some(a) = a else { continue };
            if a.port() == 0 {
                return err(format!("{key}: {a}: port 0 is not a port agents can send to"));
            }
            match a.ip() {
                std::net::IpAddr::V4(ip) => check_unicast(key, ip)?,
                ip if ip.is_unspecified() || ip.is_multicast() => {
                    return err(format!("{key}: {ip} is not a host's unicast address"))
                }
                _ => {}
            }
        }
        if c.standby.is_some_and(|s| s.ip() == c.controller.ip()) {
            return err(format!(
                "control.standby: {} has the controller's IP: agents tell the controllers apart by IP",
                c.standby.expect("some")
            ));
        }
        if let Some(t) = c.takeover_ms {
            if !(t.is_finite() && (0.5..=10_000.0).contains(&t)) {
                return err(format!("control.takeover_ms: {t} is not 0.5 to 10000 ms"));
            }
            if c.standby.is_none() {
                return err("control.takeover_ms: set without control.standby".to_string());
            }
        }
        let settings = Settings::resolve(&c.settings_spec())
            .map_err(|e| ConfigError(format!("control.{}: {}", e.key, e.problem)))?;
        let slice_ms = settings.slice.as_secs_f64() * 1e3;
        if slice_ms < bounds::MIN_SLICE_MS {
            return err(format!(
                "control.slice_ms: {slice_ms} is below {} ms, the shortest slice a real controller schedules",
                bounds::MIN_SLICE_MS
            ));
        }
        let report_ms = settings.report_interval.as_secs_f64() * 1e3;
        if report_ms < bounds::MIN_REPORT_MS {
            return err(format!(
                "control.report_interval_ms: {report_ms} is below {} ms",
                bounds::MIN_REPORT_MS
            ));
        }
        let fail_open_ms = settings.fail_open_after.as_secs_f64() * 1e3;
        if fail_open_ms < 2.0 * slice_ms {
            return err(format!(
                "control.fail_open_ms: {fail_open_ms} ms is shorter than two slices ({} ms): \
                 hosts would fail open while they wait for their turn",
                2.0 * slice_ms
            ));
        }
        if settings.bypass.packet_bytes > bounds::MAX_BYPASS_BYTES {
            return err(format!(
                "control.bypass_bytes: {} would let full-size packets bypass and coordinate nothing \
                 (at most {}: ACKs, pings and other small packets)",
                settings.bypass.packet_bytes,
                bounds::MAX_BYPASS_BYTES
            ));
        }
        if settings.bypass.flow_bytes > 0 {
            return err(
                "control.bypass_flow_bytes: the agent cannot count a flow's bytes \
                        (it sees packets only); use bypass_bytes"
                    .into(),
            );
        }
        let mut names = HashMap::new();
        for (i, s) in file.switches.iter().enumerate() {
            check_name("switch", &s.name)?;
            if names.insert(s.name.clone(), file.hosts.len() + i).is_some() {
                return err(format!("switch '{}': duplicate name", s.name));
            }
        }
        if c.control_mark == Some(0) {
            return err("control.control_mark: 0 is every unmarked packet; give a nonzero mark".into());
        }
        if c.bypass_pps.is_some_and(|p| p > bounds::MAX_BYPASS_PPS) {
            return err(format!(
                "control.bypass_pps: {} is above {} packets per second",
                c.bypass_pps.expect("some"),
                bounds::MAX_BYPASS_PPS
            ));
        }
        let mut prefixes = Vec::new();
        let mut prefixes6 = Vec::new();
        for (i, h) in file.hosts.iter().enumerate() {
            check_name("host", &h.name)?;
            if names.insert(h.name.clone(), i).is_some() {
                return err(format!("host '{}': duplicate name", h.name));
            }
            if !names.contains_key(&h.switch) || names[&h.switch] < file.hosts.len() {
                return err(format!(
                    "host '{}': switch '{}' is not a [[switch]]",
                    h.name, h.switch
                ));
            }
            check_rate(format!("host '{}': rate_mbps", h.name), h.rate_mbps)?;
            check_unicast(&format!("host '{}': addr", h.name), h.addr)?;
            let mut p = vec![Prefix { net: h.addr, len: 32 }];
            for g in &h.guests {
                p.push(Prefix::parse(g).map_err(|e| ConfigError(format!("host '{}': guests: {e}", h.name)))?);
            }
            prefixes.push(p);
            let mut p6 = Vec::new();
            for a in &h.addr6 {
                p6.push(
                    Prefix6::parse(a).map_err(|e| ConfigError(format!("host '{}': addr6: {e}", h.name)))?,
                );
            }
            prefixes6.push(p6);
        }
        for l in &file.links {
            for end in [&l.a, &l.b] {
                if names.get(end).is_none_or(|&n| n < file.hosts.len()) {
                    return err(format!("link {}-{}: '{end}' is not a [[switch]]", l.a, l.b));
                }
            }
            if l.a == l.b {
                return err(format!(
                    "link {}-{}: a link from a switch to itself (a and b must differ)",
                    l.a, l.b
                ));
            }
            check_rate(format!("link {}-{}: rate_mbps", l.a, l.b), l.rate_mbps)?;
        }
        for (i, pi) in prefixes.iter().enumerate() {
            for (j, pj) in prefixes.iter().enumerate().skip(i + 1) {
                for a in pi {
                    if pj.iter().any(|b| a.contains(b.net) || b.contains(a.net)) {
                        return err(format!(
                            "hosts '{}' and '{}': addresses overlap ({a})",
                            file.hosts[i].name, file.hosts[j].name
                        ));
                    }
                }
            }
        }
        for (i, pi) in prefixes6.iter().enumerate() {
            for (j, pj) in prefixes6.iter().enumerate().skip(i + 1) {
                for a in pi {
                    if pj.iter().any(|b| a.contains(b.net) || b.contains(a.net)) {
                        return err(format!(
                            "hosts '{}' and '{}': addr6 overlap ({a})",
                            file.hosts[i].name, file.hosts[j].name
                        ));
                    }
                }
            }
        }
        let routing = match &file.topology.routing {
            Some(r) => RoutingMode::parse(r).map_err(|e| ConfigError(format!("topology.routing: {e}")))?,
            None => RoutingMode::Ecmp,
        };
        if routing.per_packet() {
            return err(format!(
                "topology.routing: '{}' sprays each packet over another path; the controller \
                 needs one path per host pair (use equal-length-flow or equal-length-dest)",
                routing.name()
            ));
        }
        let t = Topology {
            file,
            prefixes,
            prefixes6,
            settings,
            routing,
        };
        t.router()
            .map_err(|e| ConfigError(format!("topology.routing: '{}': {e}", routing.name())))?;
        Ok(t)
    }

    /// Number of hosts.
    pub fn hosts(&self) -> usize {
        self.file.hosts.len()
    }

    /// Host id of `name`.
    pub fn host_id(&self, name: &str) -> Option<u32> {
        self.file
            .hosts
            .iter()
            .position(|h| h.name == name)
            .map(|i| i as u32)
    }

    /// Host owning address `a` (its own or a guest's).
    pub fn host_of(&self, a: Ipv4Addr) -> Option<u32> {
        self.prefixes
            .iter()
            .position(|ps| ps.iter().any(|p| p.contains(a)))
            .map(|i| i as u32)
    }

    /// Host owning address `a`, IPv4 or IPv6 (its own or a guest's).
    pub fn host_of_ip(&self, a: IpAddr) -> Option<u32> {
        match a {
            IpAddr::V4(a) => self.host_of(a),
            IpAddr::V6(a) => match a.to_ipv4_mapped() {
                Some(v4) => self.host_of(v4),
                None => self
                    .prefixes6
                    .iter()
                    .position(|ps| ps.iter().any(|p| p.contains(a)))
                    .map(|i| i as u32),
            },
        }
    }

    /// The firewall mark of the daemons' control sockets.
    pub fn control_mark(&self) -> u32 {
        self.file.control.control_mark.unwrap_or(DEFAULT_CONTROL_MARK)
    }

    /// Small packets per second (and IP family) that may pass the gate uncounted.
    pub fn bypass_pps(&self) -> u32 {
        self.file.control.bypass_pps.unwrap_or(DEFAULT_BYPASS_PPS)
    }

    /// Directed links (tail, head) over nodes (hosts first, then switches), with names and rates.
    pub fn directed_links(&self) -> Vec<(u32, u32, String, u64)> {
        let h = self.hosts();
        let node = |name: &str| -> u32 {
            if let Some(i) = self.file.hosts.iter().position(|x| x.name == name) {
                return i as u32;
            }
            (h + self
                .file
                .switches
                .iter()
                .position(|s| s.name == name)
                .expect("checked")) as u32
        };
        let mut out = Vec::new();
        let bps = |mbps: f64| (mbps * 1e6) as u64;
        for x in &self.file.hosts {
            let (a, b) = (node(&x.name), node(&x.switch));
            out.push((a, b, format!("{}->{}", x.name, x.switch), bps(x.rate_mbps)));
            out.push((b, a, format!("{}->{}", x.switch, x.name), bps(x.rate_mbps)));
        }
        for l in &self.file.links {
            let (a, b) = (node(&l.a), node(&l.b));
            out.push((a, b, format!("{}->{}", l.a, l.b), bps(l.rate_mbps)));
            out.push((b, a, format!("{}->{}", l.b, l.a), bps(l.rate_mbps)));
        }
        out
    }

    /// The shared router over this file's hosts, switches and links (host
    /// `i` is node `i`; directed link ids as [`Topology::directed_links`]).
    pub fn router(&self) -> Result<Router, String> {
        let nodes = self.hosts() + self.file.switches.len();
        let is_host = (0..nodes).map(|n| n < self.hosts()).collect();
        let pairs: Vec<(u32, u32)> = self.directed_links().iter().map(|l| (l.0, l.1)).collect();
        Router::new(Graph::new(is_host, &pairs), self.routing)
    }

    /// The scheduler's view: host rates, link capacities (less the headroom),
    /// and the paths of the file's routing mode.
    pub fn sched_topology(&self) -> SchedTopology {
        let links = self.directed_links();
        let router = self.router().expect("checked when the file was read");
        let paths = HostPaths::new(router, (0..self.hosts() as u32).collect())
            .expect("checked when the file was read");
        let keep = 1.0 - self.settings.capacity_headroom;
        let link_bps = links.iter().map(|l| (l.3 as f64 * keep) as u64).collect();
        let host_bps = self
            .file
            .hosts
            .iter()
            .map(|h| (h.rate_mbps * 1e6) as u64)
            .collect();
        SchedTopology::new(host_bps, link_bps, Box::new(paths))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAR: &str = r#"
[control]
controller = "10.200.0.1:7400"
[[switch]]
name = "s1"
[[host]]
name = "h1"
addr = "10.0.0.1"
guests = ["10.1.1.0/24"]
switch = "s1"
rate_mbps = 100
[[host]]
name = "h2"
addr = "10.0.0.2"
switch = "s1"
rate_mbps = 100
"#;

    #[test]
    fn maps_addresses_and_guests_to_hosts() {
        let t = Topology::parse(STAR).unwrap();
        assert_eq!(t.host_of("10.0.0.2".parse().unwrap()), Some(1));
        assert_eq!(t.host_of("10.1.1.77".parse().unwrap()), Some(0));
        assert_eq!(t.host_of("10.9.9.9".parse().unwrap()), None);
        let mut s = t.sched_topology();
        assert_eq!(s.path(0, 1).len(), 2, "h1 -> s1 -> h2");
    }

    #[test]
    fn maps_ipv6_addresses_to_hosts_and_checks_the_gate_keys() {
        let t = Topology::parse(&STAR.replace(
            "addr = \"10.0.0.2\"\n",
            "addr = \"10.0.0.2\"\naddr6 = [\"fe80::2\", \"fd00:2::/64\"]\n",
        ))
        .unwrap();
        let h = |a: &str| t.host_of_ip(a.parse().unwrap());
        assert_eq!(h("fe80::2"), Some(1));
        assert_eq!(h("fd00:2::99"), Some(1));
        assert_eq!(h("fd00:3::1"), None);
        assert_eq!(h("::ffff:10.0.0.1"), Some(0), "IPv4-mapped: the IPv4 host");
        assert_eq!(h("10.0.0.2"), Some(1));
        assert_eq!(
            (t.control_mark(), t.bypass_pps()),
            (DEFAULT_CONTROL_MARK, DEFAULT_BYPASS_PPS)
        );
        let set = |k: &str| STAR.replace("[control]\n", &format!("[control]\n{k}\n"));
        let t = Topology::parse(&set("control_mark = 7\nbypass_pps = 0")).unwrap();
        assert_eq!((t.control_mark(), t.bypass_pps()), (7, 0));
        for (text, key) in [
            (set("control_mark = 0"), "control.control_mark"),
            (set("bypass_pps = 1000001"), "control.bypass_pps"),
            (
                STAR.replace("guests = ", "addr6 = [\"fe80::/10\"]\nguests = ")
                    .replace(
                        "addr = \"10.0.0.2\"\n",
                        "addr = \"10.0.0.2\"\naddr6 = [\"fe80::2\"]\n",
                    ),
                "addr6 overlap",
            ),
            (
                STAR.replace("guests = ", "addr6 = [\"10.0.0.9\"]\nguests = "),
                "host 'h1': addr6",
            ),
        ] {
            let e = Topology::parse(&text).unwrap_err().0;
            assert!(e.contains(key), "{key}: {e}");
        }
    }

    #[test]
    fn errors_name_the_field() {
        let bad = STAR.replace(
            "switch = \"s1\"\nrate_mbps = 100\n[[host]]",
            "switch = \"s9\"\nrate_mbps = 100\n[[host]]",
        );
        let e = Topology::parse(&bad).unwrap_err().0;
        assert!(e.contains("host 'h1'") && e.contains("s9"), "{e}");
        let e = Topology::parse(&STAR.replace("10.0.0.2", "10.1.1.5"))
            .unwrap_err()
            .0;
        assert!(e.contains("overlap"), "{e}");
        let e = Topology::parse(&STAR.replace("[control]", "[control]\nmode = \"fast\""))
            .unwrap_err()
            .0;
        assert!(e.contains("control.mode"), "{e}");
        let e = Topology::parse(&STAR.replace("rate_mbps = 100\n[[host]]", "rate_mbps = 0\n[[host]]"))
            .unwrap_err()
            .0;
        assert!(e.contains("rate_mbps"), "{e}");
    }

    #[test]
    fn the_routing_mode_is_the_simulator_s_and_checked_when_read() {
        let with = |mode: &str| format!("{STAR}\n[topology]\nrouting = \"{mode}\"\n");
        let t = Topology::parse(&with("equal-length-dest")).unwrap();
        assert_eq!(
            t.routing,
            RoutingMode::EqualLength(xco_core::routing::CoreChoice::Destination)
        );
        assert_eq!(Topology::parse(STAR).unwrap().routing, RoutingMode::Ecmp);
        let e = Topology::parse(&with("spray")).unwrap_err().0;
        assert!(
            e.starts_with("topology.routing: 'spray' is not a routing mode"),
            "{e}"
        );
        let e = Topology::parse(&with("equal-length-packet")).unwrap_err().0;
        assert!(
            e.contains("topology.routing") && e.contains("one path per host pair"),
            "{e}"
        );
        // the scheduler's path h1 -> h2 crosses the two access links
        let mut st = Topology::parse(&with("address-bits")).unwrap().sched_topology();
        assert_eq!(st.path(0, 1).len(), 2);
    }

    /// Every shared XCo key, as the simulator's tests also write them.
    const ALL_SETTINGS: &str = "mode = \"hybrid\"\nslice_ms = 4\nmin_active_us = 50\n\
        work_conservation = true\ngiveback_hysteresis_us = 300\nbypass_bytes = 100\n\
        fail_open_ms = 30\nreport_interval_ms = 10\nfeedback_timeout_ms = 500\ncapacity_headroom = 0.1\n";

    #[test]
    fn control_takes_the_shared_xco_vocabulary() {
        let t = Topology::parse(&STAR.replace("[control]\n", &format!("[control]\n{ALL_SETTINGS}"))).unwrap();
        let s = &t.settings;
        assert_eq!(s.mode, xco_core::sched::Mode::Hybrid);
        assert_eq!(
            (s.slice, s.min_active),
            (xco_core::Dur::from_ms(4), xco_core::Dur::from_us(50))
        );
        assert_eq!(s.giveback_hysteresis, Some(xco_core::Dur::from_us(300)));
        assert_eq!(s.bypass.packet_bytes, 100);
        assert_eq!(
            (s.fail_open_after, s.report_interval),
            (xco_core::Dur::from_ms(30), xco_core::Dur::from_ms(10))
        );
        assert_eq!(s.feedback_timeout, xco_core::Dur::from_ms(500));
        assert_eq!(s.capacity_headroom, 0.1);
        // the old names are gone, and what the agent cannot do is refused
        let e = Topology::parse(&STAR.replace("[control]\n", "[control]\nhysteresis_us = 5\n"))
            .unwrap_err()
            .0;
        assert!(e.contains("hysteresis_us"), "{e}");
        let e = Topology::parse(&STAR.replace("[control]\n", "[control]\nbypass_flow_bytes = 5\n"))
            .unwrap_err()
            .0;
        assert!(e.starts_with("control.bypass_flow_bytes"), "{e}");
        let e = Topology::parse(&STAR.replace("[control]\n", "[control]\nslice_ms = 1e-9\n"))
            .unwrap_err()
            .0;
        assert!(e.starts_with("control.slice_ms"), "{e}");
    }

    /// Every field out of its bounds: one line naming the field.
    #[test]
    fn every_field_is_bounded_and_the_error_names_it() {
        let set = |k: &str| STAR.replace("[control]\n", &format!("[control]\n{k}\n"));
        let cases: Vec<(String, &str)> = vec![
            (set("slice_ms = 1e-9"), "control.slice_ms"),
            (set("slice_ms = 0.1"), "control.slice_ms"),
            (set("feedback_timeout_ms = 0"), "control.feedback_timeout_ms"),
            (set("bypass_bytes = 4294967295"), "control.bypass_bytes"),
            (set("bypass_bytes = 1500"), "control.bypass_bytes"),
            (set("report_interval_ms = 0.5"), "control.report_interval_ms"),
            (set("fail_open_ms = 3"), "control.fail_open_ms"),
            (set("min_active_us = -1"), "control.min_active_us"),
            (set("capacity_headroom = 0.9"), "control.capacity_headroom"),
            (set("directive_lead_us = -1"), "control.directive_lead_us"),
            (set("directive_lead_us = 1e9"), "control.directive_lead_us"),
            (STAR.replace(":7400", ":0"), "control.controller"),
            (
                STAR.replace("10.200.0.1:7400", "0.0.0.0:7400"),
                "control.controller",
            ),
            (STAR.replace("10.0.0.2", "224.0.0.1"), "host 'h2': addr"),
            (STAR.replace("10.0.0.2", "0.0.0.0"), "host 'h2': addr"),
            (
                STAR.replace("rate_mbps = 100\n[[host]]", "rate_mbps = 1e300\n[[host]]"),
                "host 'h1': rate_mbps",
            ),
            (
                STAR.replace("rate_mbps = 100\n[[host]]", "rate_mbps = nan\n[[host]]"),
                "host 'h1': rate_mbps",
            ),
            (STAR.replace("name = \"h2\"", "name = \"h 2\""), "host.name"),
            (STAR.replace("name = \"s1\"", "name = \"\"\n"), "switch.name"),
            (
                format!("{STAR}\n[[link]]\na = \"s1\"\nb = \"s1\"\nrate_mbps = 100\n"),
                "link s1-s1: a link from a switch to itself",
            ),
            (
                format!(
                    "{STAR}\n[[switch]]\nname = \"s2\"\n[[link]]\na = \"s1\"\nb = \"s2\"\nrate_mbps = 0\n"
                ),
                "link s1-s2: rate_mbps",
            ),
            (set("slice_ms = \"fast\""), "line 3 (slice_ms = \"fast\")"),
            (set("colour = 1"), "line 3 (colour = 1): unknown field `colour`"),
            (set("standby = \"10.200.0.1:7401\""), "control.standby"),
            (set("standby = \"10.200.0.2:0\""), "control.standby"),
            (set("standby = \"0.0.0.0:7400\""), "control.standby"),
            (
                set("standby = \"10.200.0.2:7400\"\ntakeover_ms = 0"),
                "control.takeover_ms",
            ),
            (set("takeover_ms = 5"), "control.takeover_ms"),
        ];
        for (text, field) in cases {
            let e = Topology::parse(&text).unwrap_err().0;
            assert!(e.starts_with(field), "want {field}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
        // at the bounds: accepted
        Topology::parse(&set("slice_ms = 0.5\nbypass_bytes = 1279\nfail_open_ms = 1")).unwrap();
    }

    #[test]
    fn a_standby_is_a_second_controller_the_agents_send_to() {
        let t = Topology::parse(&STAR.replace(
            "[control]\n",
            "[control]\nstandby = \"10.200.0.2:7400\"\ntakeover_ms = 4\n",
        ))
        .unwrap();
        let want: Vec<SocketAddr> = vec![
            "10.200.0.1:7400".parse().unwrap(),
            "10.200.0.2:7400".parse().unwrap(),
        ];
        assert_eq!(t.controllers(), want);
        assert_eq!(t.takeover_after(), xco_core::Dur::from_ms(4));
        let alone = Topology::parse(STAR).unwrap();
        assert_eq!(alone.controllers().len(), 1);
        assert_eq!(alone.takeover_after(), alone.settings.slice, "default: one slice");
    }
}
