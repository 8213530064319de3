//! Which TCP settings an endpoint runs: the run's `[tcp]`, a host's
//! profile (`[[tcp.hosts]]`) or an application's (`[[apps]] tcp = ...`).
//!
//! The settings live in [`TcpSettings`] (the host stack keeps them): index 0
//! is the run's (`cfg`), indices 1.. are `alt`. Each endpoint keeps its index, so a
//! NewReno host and a DCTCP host can share a run. An application's choice
//! applies to both ends of its connections; otherwise each end takes its
//! own host's, and what the two ends must agree on is negotiated as the
//! SYN exchange does in Linux ([`negotiate`]): SACK (and with it RACK) and
//! ECN are used only if both ends have them, and DCTCP without ECN falls
//! back to NewReno (Linux's `dctcp_reno`). Everything else (congestion
//! control, probes, pacing, RTO_min, delayed ACKs) is each end's own.

use super::cc::CcKind;
use super::TcpConfig;

/// Per-host and per-app choices of TCP settings (empty: the run's everywhere).
#[derive(Clone, Debug, Default)]
pub struct TcpSelect {
    /// Settings index of each node (empty: 0 for all).
    pub host: Vec<u8>,
    /// Settings index of each app, if it names one.
    pub app: Vec<Option<u8>>,
}

/// The settings `own` runs with against a peer running `peer`.
pub fn negotiate(own: &TcpConfig, peer: &TcpConfig) -> TcpConfig {
    let mut c = own.clone();
    c.sack = own.sack && peer.sack;
    c.rack = c.rack && c.sack;
    c.ecn = own.ecn && peer.ecn;
    if c.cc == CcKind::Dctcp && !c.ecn {
        c.cc = CcKind::NewReno;
    }
    c
}

/// Every TCP setting of a run: index 0 is the run's (`[tcp]`), 1.. the
/// profiles of hosts and apps and what two of them negotiated.
#[derive(Clone, Debug)]
pub struct TcpSettings {
    /// The run's settings (index 0).
    pub cfg: TcpConfig,
    /// Further settings (indices 1..).
    pub alt: Vec<TcpConfig>,
    /// Per-host and per-app choice of settings.
    pub select: TcpSelect,
}

impl TcpSettings {
    /// The run's settings `cfg` and no others.
    pub fn new(cfg: TcpConfig) -> TcpSettings {
        TcpSettings {
            cfg,
            alt: Vec::new(),
            select: TcpSelect::default(),
        }
    }

    /// TCP settings number `i` (0: the run's `[tcp]`).
    #[inline(always)]
    pub fn cfg_of(&self, i: u8) -> &TcpConfig {
        if i == 0 {
            &self.cfg
        } else {
            &self.alt[i as usize - 1]
        }
    }

    /// Add settings `c` (or find them): their index. Panics past 255 settings
    /// (the scenario bounds the profiles far below that).
    pub fn index(&mut self, c: TcpConfig) -> u8 {
        if c == self.cfg {
            return 0;
        }
        let i = match self.alt.iter().position(|x| *x == c) {
            Some(i) => i,
            None => {
                self.alt.push(c);
                self.alt.len() - 1
            }
        };
        u8::try_from(i + 1).expect("at most 255 TCP settings")
    }

    /// The settings indices of the two ends of a connection of `app`
    /// between hosts `client` and `server`.
    pub fn for_connection(&mut self, app: u32, client: u32, server: u32) -> (u8, u8) {
        if let Some(Some(i)) = self.select.app.get(app as usize) {
            return (*i, *i);
        }
        let of = |n: u32| self.select.host.get(n as usize).copied().unwrap_or(0);
        let (a, b) = (of(client), of(server));
        if a == b {
            return (a, a);
        }
        let ca = negotiate(self.cfg_of(a), self.cfg_of(b));
        let cb = negotiate(self.cfg_of(b), self.cfg_of(a));
        (self.index(ca), self.index(cb))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::profile::TcpProfile;

    #[test]
    fn sack_and_ecn_need_both_ends_and_dctcp_without_ecn_is_newreno() {
        let linux = TcpProfile::Linux.config(1500);
        let dctcp = TcpProfile::Dctcp.config(1500);
        let reno = TcpProfile::NewReno.config(1500);
        let d = negotiate(&dctcp, &linux);
        assert_eq!(
            (d.cc, d.ecn, d.sack, d.rack),
            (CcKind::NewReno, false, true, true)
        );
        let d = negotiate(&dctcp, &dctcp);
        assert_eq!((d.cc, d.ecn), (CcKind::Dctcp, true));
        let l = negotiate(&linux, &reno);
        assert_eq!((l.cc, l.sack, l.rack, l.tlp), (CcKind::Cubic, false, false, true));
        assert_eq!(negotiate(&reno, &linux), reno);
    }
}
