//! TCP profiles: named sets of [`TcpConfig`] settings a scenario starts from
//! (`[tcp] profile = "linux"`), every other `[tcp]` key overriding one
//! setting. `docs/tcp-profiles.md` lists what each sets.
//!
//! * `newreno` (the default): RFC 5681 / 6582 NewReno, no SACK, no probes —
//!   the simulator's TCP before the profiles existed, output for output.
//! * `linux`: what a current Linux sender and receiver do, as far as the
//!   model has it: CUBIC, SACK with RFC 6675 recovery and proportional rate
//!   reduction (RFC 6937), RACK-TLP (time-based loss detection
//!   and tail loss probes),
//!   quick ACKs for the first 16 segments of a connection, and the settings
//!   `newreno` already shares with Linux (timestamps, IW 10, RTO_min 200 ms,
//!   a 40 ms delayed-ACK timer, an immediate ACK for out-of-order data and
//!   for a filled hole, cwnd restart after idle).
//! * `dctcp`: `linux` with DCTCP (RFC 8257) in place of CUBIC, and ECN.

use super::cc::CcKind;
use super::TcpConfig;

/// A named starting point for the TCP settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpProfile {
    /// NewReno as before the profiles.
    NewReno,
    /// Linux's defaults as far as the model has them.
    Linux,
    /// `linux` with DCTCP and ECN.
    Dctcp,
}

impl TcpProfile {
    /// Parse a scenario name.
    pub fn from_name(s: &str) -> Option<TcpProfile> {
        match s {
            "newreno" => Some(TcpProfile::NewReno),
            "linux" => Some(TcpProfile::Linux),
            "dctcp" => Some(TcpProfile::Dctcp),
            _ => None,
        }
    }

    /// The names a scenario may use.
    pub const NAMES: &'static str = "newreno, linux, dctcp";

    /// The settings of this profile for `mtu_bytes`.
    pub fn config(self, mtu_bytes: u32) -> TcpConfig {
        let base = TcpConfig::for_mtu(mtu_bytes);
        match self {
            TcpProfile::NewReno => base,
            TcpProfile::Linux => TcpConfig {
                cc: CcKind::Cubic,
                sack: true,
                tlp: true,
                tlp_linux_pto: true,
                rack: true,
                prr: true,
                quickack_segments: LINUX_QUICKACKS,
                ..base
            },
            TcpProfile::Dctcp => TcpConfig {
                cc: CcKind::Dctcp,
                ecn: true,
                ..TcpProfile::Linux.config(mtu_bytes)
            },
        }
    }
}

/// Linux's quick-ACK budget at connection start (`TCP_MAX_QUICKACKS`).
pub const LINUX_QUICKACKS: u32 = 16;
