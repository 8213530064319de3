//! Which congestion control an endpoint runs: [`Cc`], an enum dispatch over
//! the built-in algorithms ([`super::cc`]'s NewReno, [`super::cubic`],
//! [`super::dctcp`]) and any other behind a box. The algorithms share the
//! vocabulary of [`super::cc`] and never name this dispatch.

use super::cc::{AckSample, CcKind, CongestionControl, CongestionEvent, EventSample, NewReno, Window};
use super::cubic::Cubic;
use super::dctcp::Dctcp;
use super::hystart::{HyStart, HyStartParams};
use super::TcpConfig;

/// Enum dispatch over the algorithms.
pub enum Cc {
    /// NewReno.
    NewReno(NewReno),
    /// CUBIC (RFC 9438).
    Cubic(Box<Cubic>),
    /// DCTCP (RFC 8257).
    Dctcp(Box<Dctcp>),
    /// Any other algorithm, boxed (experiments and tests; one branch away
    /// from the built-in ones).
    Custom(Box<dyn CongestionControl + Send>),
}

impl std::fmt::Debug for Cc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cc::NewReno(c) => c.fmt(f),
            Cc::Cubic(c) => c.fmt(f),
            Cc::Dctcp(c) => c.fmt(f),
            Cc::Custom(_) => f.write_str("Custom"),
        }
    }
}

impl Cc {
    /// A fresh instance of the algorithm `cfg` names.
    pub fn new(cfg: &TcpConfig) -> Cc {
        let abc_limit_bytes = cfg.abc_limit_segments as u64 * cfg.mss_bytes as u64;
        match cfg.cc {
            CcKind::NewReno => Cc::NewReno(NewReno { abc_limit_bytes }),
            CcKind::Cubic if cfg.hystart => {
                let h = HyStart::new(HyStartParams::default(), cfg.pacing);
                Cc::Cubic(Box::new(Cubic::with_hystart(abc_limit_bytes, h)))
            }
            CcKind::Cubic => Cc::Cubic(Box::new(Cubic::new(abc_limit_bytes))),
            CcKind::Dctcp => Cc::Dctcp(Box::new(Dctcp::new(abc_limit_bytes))),
        }
    }
}

impl CongestionControl for Cc {
    #[inline(always)]
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        match self {
            Cc::NewReno(c) => c.on_ack(w, s),
            Cc::Cubic(c) => c.on_ack(w, s),
            Cc::Dctcp(c) => c.on_ack(w, s),
            Cc::Custom(c) => c.on_ack(w, s),
        }
    }
    #[inline]
    fn on_congestion(&mut self, w: &mut Window, ev: CongestionEvent, s: &EventSample) {
        match self {
            Cc::NewReno(c) => c.on_congestion(w, ev, s),
            Cc::Cubic(c) => c.on_congestion(w, ev, s),
            Cc::Dctcp(c) => c.on_congestion(w, ev, s),
            Cc::Custom(c) => c.on_congestion(w, ev, s),
        }
    }
}
