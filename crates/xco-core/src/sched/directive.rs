//! What the controller tells a host's local coordinator.

use crate::time::Dur;

/// A transmission directive for one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// The host it is for.
    pub host: u32,
    /// Per-host directive counter (increases with every directive to that host).
    pub epoch: u64,
    /// What the host may do.
    pub kind: DirectiveKind,
}

/// The forms of directive (see the XCo spec, "Directive forms").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirectiveKind {
    /// For the next `len`, send to `dest` only (`None`: send nothing that is
    /// coordinated). With `rate_bps` (hybrid form) the slice is also paced at
    /// that rate; without it the host sends at full line rate.
    Slice {
        /// Destination host allowed in this slice.
        dest: Option<u32>,
        /// Slice length.
        len: Dur,
        /// Rate cap inside the slice (hybrid form).
        rate_bps: Option<u64>,
    },
    /// Until the next directive, send to each listed destination at most at
    /// its rate; destinations not listed are unrestricted by this directive.
    Rates {
        /// (destination host, rate in bit/s).
        rates: Vec<(u32, u64)>,
    },
}
