//! What the controller tells a host's local coordinator.

use crate::time::Dur;

/// A transmission directive for one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// The host it is for.
    pub host: u32,
    /// Per-host directive counter (increases with every directive to that host).
    pub epoch: u64,
    /// When it takes effect, as a delay after "now" at its sender: the
    /// scheduler decided it this far ahead of the instant it was handling
    /// (its lead, see `SchedConfig::lead`), the driver subtracts the time it
    /// took to send it ([`Directive::aged`]), and the receiver adds it to its
    /// own clock at receipt ([`crate::coord::start_at`]). Zero: at once.
    pub start_in: Dur,
    /// What the host may do.
    pub kind: DirectiveKind,
}

impl Directive {
    /// The directive leaves its sender `elapsed` after the instant its
    /// `start_in` was computed from: its start is that much nearer (at once
    /// if that has passed).
    pub fn aged(mut self, elapsed: Dur) -> Directive {
        self.start_in = self.start_in - elapsed;
        self
    }
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
