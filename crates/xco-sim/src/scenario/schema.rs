//! The scenario schema as read from TOML. Units are in field names; string
//! choices are enums (an unknown one names its key and the choices); the
//! bounds of every number are in `limits.rs`; `[[apps]]` entries are a
//! tagged enum read kind by kind (`apps.rs`), and so are the port
//! disciplines of `topology.queue` and `[[topology.queues]]` (`queues.rs`).

use super::apps::AppSpec;
use super::limits::{MAX_SIM_TIME_MS, MIN_BIN_US};
use super::queues::Queues;
use super::units::{bytes_in_name, Hosts, Quantity};
use serde::de::{self, Deserializer, IgnoredAny};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-form name.
    #[serde(default)]
    pub name: Option<String>,
    /// Run-wide settings.
    #[serde(default)]
    pub run: RunSpec,
    /// The network.
    pub topology: TopologySpec,
    /// TCP settings.
    #[serde(default)]
    pub tcp: TcpSpec,
    /// The traffic, as read by `apps::read_apps` (the array is only checked here).
    #[serde(default, rename = "apps")]
    pub apps_raw: Vec<IgnoredAny>,
    /// The traffic: one tagged entry per `[[apps]]`.
    #[serde(skip)]
    pub apps: Vec<AppSpec>,
    /// Each `[[apps]]` entry's `tcp` profile, if it names one.
    #[serde(skip)]
    pub app_tcp: Vec<Option<String>>,
    /// What to write.
    #[serde(default)]
    pub output: OutputSpec,
    /// XCo coordination (absent: none).
    pub xco: Option<XcoSpec>,
    /// PDN, packet drop notification (absent: none).
    pub pdn: Option<PdnSpec>,
    /// The host model (absent: the old one, `crate::host::settings`).
    pub host: Option<HostSpec>,
    /// Named bundles of settings a reproduction runs under (`run.profile` picks one).
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileSpec>,
}

/// `[host]`: the host model (`crate::host::settings`). Every key defaults
/// to the old model, which the golden runs pin.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// NIC queue length in packets, like Linux's `txqueuelen` (Linux's
    /// default is 1000); default: unset, the NIC queue is bounded by
    /// `topology.host_buffer` bytes alone. When set and `host_buffer` is
    /// not, the byte bound becomes `txqueuelen` MTU-sized frames.
    pub txqueuelen: Option<u32>,
    /// UDP writes block until the whole message fits (default false: UDP
    /// sends on its own clock and a full host queue loses fragments).
    pub blocking_udp: Option<bool>,
    /// A UDP socket's send buffer with `blocking_udp` (default 212992 B,
    /// Linux's `net.core.wmem_default`).
    pub udp_sndbuf: Option<Quantity>,
    /// TCP Small Queues: the most one TCP socket keeps in its host, the cap
    /// of its `max(2 frames, ~1 ms at its pacing rate)` limit (Linux's
    /// `net.ipv4.tcp_limit_output_bytes`, 1 MiB); default unset or 0: off.
    /// A bare number is bytes (the key names its unit).
    #[serde(default, deserialize_with = "bytes_in_name")]
    pub tsq_limit_bytes: Option<Quantity>,
}

/// `[profiles.NAME]`: settings that override the scenario's own when
/// `run.profile = "NAME"` (e.g. the defaults of the simulator a paper used,
/// next to today's). Tables merge key by key: a key the profile leaves out
/// keeps the scenario's value.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSpec {
    /// One line on where the settings come from (shown in summaries).
    pub about: Option<String>,
    /// `[tcp]` keys.
    pub tcp: Option<TcpSpec>,
    /// `[run]` keys a profile may set.
    pub run: Option<ProfileRunSpec>,
    /// Keys merged into every `[[apps]]` entry (how the paper's applications
    /// used TCP, e.g. `reuse_connections`); each app checks them as its own.
    pub apps: Option<toml::Table>,
}

/// The `[run]` keys of a profile.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileRunSpec {
    /// MTU of every host, bytes (the segment size follows from it).
    pub mtu_bytes: Option<u32>,
}

/// `[pdn]`: switches notify senders of congestion drops (spec `pdn.md`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PdnSpec {
    /// Hosts whose TCP uses PDN (their MSS is 20 bytes smaller and switches
    /// notify them of their dropped segments); default every host (`"*"`).
    pub hosts: Option<Hosts>,
    /// Switches that make and forward notifications: a list of names, or
    /// `"*"` (default) for every switch.
    pub switches: Option<Hosts>,
    /// Notifications one output port's notification queue holds (default 64).
    pub queue_notices: Option<u32>,
    /// How senders resend notified segments: `at-once` (default, the
    /// spec), `once` or `window` (`tcp/endpoint/pdn.rs`).
    pub resend: Option<String>,
}

xco_core::xco_settings_table! {
    /// `[xco]`: run the XCo controller and local coordinators. Besides the
    /// keys below, every XCo setting of the shared vocabulary (the
    /// daemons' `[control]` uses the same names, units and defaults;
    /// `xco_core::coord::settings` documents them): `mode`, `slice_ms`,
    /// `min_active_us`, `work_conservation`, `giveback_hysteresis_us`,
    /// `bypass_bytes`, `bypass_flow_bytes`, `fail_open_ms`,
    /// `report_interval_ms`, `feedback_timeout_ms`, `capacity_headroom`.
    #[derive(Clone, Debug)]
    pub struct XcoSpec {
        /// Host running the controller (required).
        pub controller: String,
        /// `inband` (default: control packets cross the simulated network) or `outofband`.
        pub control: Option<ControlChannel>,
        /// Out-of-band control latency, us (default 20).
        pub control_latency_us: Option<f64>,
        /// Per-destination queue limit at each host (default "4MB"); the simulator's only:
        /// the agent never drops (the kernel holds its packets).
        pub v2v_queue: Option<Quantity>,
        /// Hosts that run a coordinator (default: every host but the controller).
        pub hosts: Option<Hosts>,
        /// Stop the controller at this time, ms (to exercise fail-open).
        pub controller_stop_ms: Option<f64>,
        /// `true` (default): the agents join the controller (join, signed
        /// challenge, confirm) over a copy of the network before t = 0, and the
        /// new controller run's fence (one slice plus the lead) ends before it,
        /// as for a control plane that has run a while; the summary's
        /// `joined_before_us` says how long that took. `false`: they join at
        /// t = 0, within the run.
        pub join_before_start: Option<bool>,
        /// How controller messages are authenticated: `ed25519` (default: signed
        /// and verified, the protocol) or `keyed` (HMAC-SHA512 under one key all
        /// agents hold: the same datagram sizes and checks for about fifty times
        /// less CPU per directive; no protection against a host; docs/control-plane.md).
        pub auth: Option<ControlAuth>,
    }
}

/// `[run]`
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Random seed (default 1); `--seed` overrides it.
    pub seed: Option<u64>,
    /// Stop at this simulated time at the latest.
    pub duration_ms: Option<f64>,
    /// MTU of every host, bytes (default 1500).
    pub mtu_bytes: Option<u32>,
    /// The `[profiles.NAME]` whose settings override the scenario's (default: none).
    pub profile: Option<String>,
}

/// `[topology]`
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    /// `star`, `two_switch`, `fat_tree` or `explicit`.
    pub kind: TopologyKind,
    /// star: number of hosts.
    pub hosts: Option<usize>,
    /// two_switch: hosts on switch `sa`.
    pub hosts_a: Option<usize>,
    /// two_switch: hosts on switch `sb`.
    pub hosts_b: Option<usize>,
    /// fat_tree: k (even).
    pub k: Option<usize>,
    /// Rate of host links (default 1 Gbps).
    pub host_rate: Option<Quantity>,
    /// two_switch: rate of the `a*` host links (default host_rate).
    pub rate_a: Option<Quantity>,
    /// two_switch: rate of the `b*` host links (default host_rate).
    pub rate_b: Option<Quantity>,
    /// two_switch: rate of the sa–sb uplink (default host_rate).
    pub uplink_rate: Option<Quantity>,
    /// fat_tree: rate of switch-to-switch links (default host_rate).
    pub fabric_rate: Option<Quantity>,
    /// tree3: servers per rack.
    pub servers_per_rack: Option<usize>,
    /// tree3: racks.
    pub racks: Option<usize>,
    /// tree3: racks under each aggregation switch (must divide `racks`).
    pub racks_per_agg: Option<usize>,
    /// tree3: core switches (default 1).
    pub cores: Option<usize>,
    /// tree3: ToR over-subscription, servers' rate : uplink rate, as "1:4" or 4.
    pub tor_oversubscription: Option<Ratio>,
    /// tree3: rate of one ToR–aggregation link (default host_rate).
    pub tor_uplink_rate: Option<Quantity>,
    /// tree3: rate of one aggregation–core link (default tor_uplink_rate).
    pub agg_core_rate: Option<Quantity>,
    /// tree3: buffer of a ToR's port toward a server (default switch_buffer).
    pub edge_buffer: Option<Quantity>,
    /// tree3: buffer of ToR uplink and aggregation ports (default switch_buffer).
    pub agg_buffer: Option<Quantity>,
    /// tree3: buffer of core ports (default switch_buffer).
    pub core_buffer: Option<Quantity>,
    /// One-way propagation delay of every link, microseconds.
    pub link_delay_us: Option<f64>,
    /// Timing noise of hosts: every frame a host sends reaches its switch
    /// later by a uniform draw from [0, this], microseconds, never before the
    /// frame ahead of it (default 0: none; docs/timing-noise.md).
    pub host_jitter_us: Option<f64>,
    /// Timing noise of switches: the same for every frame a switch forwards
    /// (default 0: none).
    pub switch_jitter_us: Option<f64>,
    /// Which paths packets take: `ecmp` (default: hashed per flow),
    /// `ecmp-pair` (hashed per host pair: every flow between two hosts takes
    /// one path, as XCo routes), `address-bits`, `equal-length-flow`,
    /// `equal-length-packet` or `equal-length-dest`.
    pub routing: Option<String>,
    /// Buffer of each switch output port, bytes.
    pub switch_buffer: Option<Quantity>,
    /// Buffer of each host NIC queue, bytes.
    pub host_buffer: Option<Quantity>,
    /// The discipline of every switch port, as read by `queues::read_queues` (only checked here).
    #[serde(default, rename = "queue")]
    pub queue_raw: Option<IgnoredAny>,
    /// Per-switch and per-port disciplines, as read by `queues::read_queues`.
    #[serde(default, rename = "queues")]
    pub queues_raw: Vec<IgnoredAny>,
    /// The disciplines: `topology.queue` and `[[topology.queues]]`.
    #[serde(skip)]
    pub queues: Queues,
    /// explicit: nodes.
    #[serde(default)]
    pub nodes: Vec<NodeEntry>,
    /// explicit: links.
    #[serde(default)]
    pub links: Vec<LinkEntry>,
}

/// `[[topology.nodes]]`
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeEntry {
    /// Unique name, an identifier (see [`identifier`]).
    #[serde(deserialize_with = "identifier")]
    pub name: String,
    /// `host` or `switch`.
    pub kind: NodeKindSpec,
}

/// `[[topology.links]]`
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkEntry {
    /// One end.
    pub a: String,
    /// Other end.
    pub b: String,
    /// Line rate.
    pub rate: Quantity,
    /// One-way delay, microseconds (default topology.link_delay_us).
    pub delay_us: Option<f64>,
    /// Buffer of the port a->b (default by a's kind).
    pub buffer_a: Option<Quantity>,
    /// Buffer of the port b->a (default by b's kind).
    pub buffer_b: Option<Quantity>,
}

/// `[tcp]`
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// The settings to start from: `newreno` (default) or `linux`
    /// (`docs/tcp-profiles.md`); every other key overrides one of them.
    pub profile: Option<String>,
    /// Initial window, segments (default 10).
    pub initial_cwnd_segments: Option<u32>,
    /// RTO_min, ms (default 200).
    pub rto_min_ms: Option<f64>,
    /// Initial RTO, ms (default 1000).
    pub rto_initial_ms: Option<f64>,
    /// RTO_max, ms (default 60000).
    pub rto_max_ms: Option<f64>,
    /// Clock granularity G, us (default 1).
    pub clock_granularity_us: Option<f64>,
    /// Delayed ACKs on (default true).
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timer, ms (default 40).
    pub delayed_ack_timeout_ms: Option<f64>,
    /// SYN handshake (default true).
    pub handshake: Option<bool>,
    /// Timestamps option (12 header bytes; default true).
    pub timestamps: Option<bool>,
    /// Receive buffer, bytes (default 6 MiB).
    pub rcv_buf_bytes: Option<u64>,
    /// cwnd restart after idle (default true).
    pub restart_after_idle: Option<bool>,
    /// Limited Transmit, RFC 3042: a new segment on each of the first two
    /// duplicate ACKs (default false; ns-3 from 3.25 and Linux have it).
    pub limited_transmit: Option<bool>,
    /// `newreno` (default), `cubic` or `dctcp`.
    pub cc: Option<CcName>,
    /// ECN (RFC 3168): data ECT(0), receivers echo CE (default false; true with `dctcp`).
    pub ecn: Option<bool>,
    /// SACK (RFC 2018) with SACK-based loss recovery (RFC 6675) (default false).
    pub sack: Option<bool>,
    /// Tail loss probes (RFC 8985 §7) (default false).
    pub tlp: Option<bool>,
    /// RACK time-based loss detection (RFC 8985 §6; needs `sack`) (default false).
    pub rack: Option<bool>,
    /// Proportional rate reduction (RFC 6937) in SACK recovery, as Linux
    /// (needs `sack`; default false, true in the `linux` and `dctcp` profiles).
    pub prr: Option<bool>,
    /// Pace at gain x cwnd / SRTT, 200% in slow start, 120% after (default false).
    pub pacing: Option<bool>,
    /// HyStart++ (RFC 9406) in CUBIC's initial slow start (default false; `cc = cubic` only).
    pub hystart: Option<bool>,
    /// Data segments ACKed at once at connection start (default 0).
    pub quickack_segments: Option<u32>,
    /// `[[tcp.hosts]]`: hosts whose TCP starts from another profile.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<TcpHostsSpec>,
}

/// `[[tcp.hosts]]`: the TCP of chosen hosts starts from `profile` instead
/// of `tcp.profile`; the other `[tcp]` keys still apply on top.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TcpHostsSpec {
    /// The hosts: names, or prefixes ending in `*`, as `[pdn] hosts`.
    pub hosts: Hosts,
    /// A TCP profile name (`docs/tcp-profiles.md`).
    pub profile: String,
}

/// `[output]`
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Time-series bin, us (default 1000; 0 turns the time series off);
    /// anything else below [`MIN_BIN_US`] is an error, never a silent "off".
    #[serde(default, deserialize_with = "bin_us")]
    pub timeseries_bin_us: Option<f64>,
    /// `switches` (default), `all` or `none`.
    pub timeseries_ports: Option<TimeseriesPorts>,
    /// Links to capture into pcap files, as "from->to" node names.
    #[serde(default)]
    pub capture: Vec<String>,
    /// Bytes of each captured frame kept (default: headers only).
    pub capture_snaplen: Option<u32>,
    /// Ports whose queue timeline is recorded, as "from->to" node names.
    #[serde(default)]
    pub queue_timeline: Vec<String>,
    /// Rows each queue timeline keeps at most (default 100,000).
    pub queue_timeline_max_rows: Option<u32>,
    /// The largest `timeseries.csv` and pcap file a run writes (default 1 GiB;
    /// a bare number is bytes, the key names its unit).
    #[serde(default, deserialize_with = "bytes_in_name")]
    pub max_file_bytes: Option<Quantity>,
}

/// `topology.kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// One switch `s0` with hosts `h0..`.
    Star,
    /// Switches `sa` and `sb` with hosts `a0..` and `b0..`.
    TwoSwitch,
    /// A k-ary fat-tree.
    FatTree,
    /// `[[topology.nodes]]` and `[[topology.links]]`.
    Explicit,
    /// Racks under ToRs, ToRs under aggregation switches, cores on top.
    Tree3,
}

/// A ratio written "1:4" or as the number 4 (the second term over the first).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Ratio {
    /// `4`: 1:4.
    Num(f64),
    /// `"1:4"`.
    Text(String),
}

impl TopologyKind {
    /// As written in the file.
    pub fn name(self) -> &'static str {
        match self {
            TopologyKind::Star => "star",
            TopologyKind::TwoSwitch => "two_switch",
            TopologyKind::FatTree => "fat_tree",
            TopologyKind::Explicit => "explicit",
            TopologyKind::Tree3 => "tree3",
        }
    }
}

/// `topology.nodes[i].kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKindSpec {
    /// An end host.
    Host,
    /// A switch.
    Switch,
}

/// `tcp.cc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CcName {
    /// NewReno (RFC 6582).
    Newreno,
    /// CUBIC (RFC 9438).
    Cubic,
    /// DCTCP (RFC 8257).
    Dctcp,
}

/// `output.timeseries_ports`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeseriesPorts {
    /// Switch output ports.
    Switches,
    /// Every port, host NICs included.
    All,
    /// No port rows.
    None,
}

/// `xco.control`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlChannel {
    /// Control packets cross the simulated switches.
    Inband,
    /// A separate network with `control_latency_us`.
    Outofband,
}

/// `xco.auth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlAuth {
    /// Ed25519 signatures (the protocol).
    Ed25519,
    /// HMAC-SHA512 under a key every agent holds (simulation only).
    Keyed,
}

/// Read a node name: an identifier, `[A-Za-z_][A-Za-z0-9_.-]*` without
/// `..`, so that it reads unchanged in the `path` column (names joined by
/// spaces), in host selectors (`a0..a31`, `a*`), in `"from->to"` links and
/// in pcap file names.
fn identifier<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let name = String::deserialize(d)?;
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if first_ok && rest_ok && !name.contains("..") {
        return Ok(name);
    }
    Err(de::Error::custom(format!(
        "node name {name:?} is not an identifier: a letter or _ first, then letters, digits, _, . or - \
         (no spaces, no \"..\"), e.g. \"h0\" or \"tor_1\""
    )))
}

/// Read `output.timeseries_bin_us`: 0 (off) or from [`MIN_BIN_US`] to one
/// simulated hour.
fn bin_us<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = Option::<f64>::deserialize(d)?;
    let max_us = MAX_SIM_TIME_MS * 1e3;
    match v {
        Some(x) if !(x == 0.0 || (x.is_finite() && (MIN_BIN_US..=max_us).contains(&x))) => {
            Err(de::Error::custom(format!(
                "must be 0 (no time series) or from {MIN_BIN_US} to {max_us} us, got {x:?}"
            )))
        }
        v => Ok(v),
    }
}
