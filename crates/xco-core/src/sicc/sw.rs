//! The SW baseline: a sliding window over concurrently queried servers.
//!
//! The spec names the method only ("grow until incast loss, then shrink");
//! the rule, stated here and in `docs/sicc.md`, is TCP's window logic
//! applied to servers instead of segments:
//! - at most `window` servers are being queried at once: the front-end
//!   queries the next server (in the request's order) whenever fewer are
//!   outstanding;
//! - each complete response grows the window by `grow_per_response` (1):
//!   a window's worth of responses doubles it, as slow start does;
//! - a loss (a response segment retransmitted or timed out, as the driver
//!   detects it) multiplies the window by `shrink_ppm` (½), at least
//!   `min_window`; losses of queries issued before the last shrink do not
//!   shrink it again (one reduction per window, as TCP's recovery);
//! - the window never exceeds `max_window` and carries over from one
//!   request to the next (the front-end keeps what it learned), unless the
//!   driver calls [`SlidingWindow::reset_window`].

use super::PPM;

/// Settings of the SW baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwConfig {
    /// Window at the first request, servers.
    pub initial_window: u32,
    /// Growth per complete response, servers.
    pub grow_per_response: u32,
    /// Factor applied on loss, ppm of the window.
    pub shrink_ppm: u32,
    /// Smallest window (at least 1).
    pub min_window: u32,
    /// Largest window.
    pub max_window: u32,
}

impl Default for SwConfig {
    /// Start at 1, +1 per response, halve on loss, never below 1.
    fn default() -> SwConfig {
        SwConfig {
            initial_window: 1,
            grow_per_response: 1,
            shrink_ppm: 500_000,
            min_window: 1,
            max_window: u32::MAX,
        }
    }
}

/// A front-end's SW state: the window and one request's progress.
#[derive(Clone, Debug)]
pub struct SlidingWindow {
    cfg: SwConfig,
    window: u32,
    servers: u32,
    next: u32,
    in_flight: u32,
    answered: u32,
    /// Queries with an index below this were issued before the last shrink.
    shrink_mark: u32,
}

impl SlidingWindow {
    /// A front-end with no request yet.
    pub fn new(cfg: SwConfig) -> SlidingWindow {
        let min = cfg.min_window.max(1);
        SlidingWindow {
            cfg,
            window: cfg.initial_window.clamp(min, cfg.max_window.max(min)),
            servers: 0,
            next: 0,
            in_flight: 0,
            answered: 0,
            shrink_mark: 0,
        }
    }

    /// A new request over servers `0..servers` (the driver's order); the
    /// window carries over.
    pub fn start(&mut self, servers: u32) {
        self.servers = servers;
        self.next = 0;
        self.in_flight = 0;
        self.answered = 0;
        self.shrink_mark = 0;
    }

    /// Back to the initial window.
    pub fn reset_window(&mut self) {
        *self = SlidingWindow {
            servers: self.servers,
            next: self.next,
            in_flight: self.in_flight,
            answered: self.answered,
            shrink_mark: self.shrink_mark,
            ..SlidingWindow::new(self.cfg)
        };
    }

    /// The next server to query now (`None`: the window is full or every
    /// server was queried). Call until `None` after every event.
    pub fn next_query(&mut self) -> Option<u32> {
        if self.in_flight >= self.window || self.next >= self.servers {
            return None;
        }
        self.in_flight += 1;
        self.next += 1;
        Some(self.next - 1)
    }

    /// Server `idx` answered completely: the window grows.
    pub fn on_response(&mut self, idx: u32) {
        debug_assert!(idx < self.next, "a response to a query never sent");
        self.in_flight = self.in_flight.saturating_sub(1);
        self.answered += 1;
        self.window = self
            .window
            .saturating_add(self.cfg.grow_per_response)
            .min(self.cfg.max_window.max(self.cfg.min_window.max(1)));
    }

    /// A loss on server `idx`'s response: the window shrinks, once per
    /// window of queries. Returns whether it shrank.
    pub fn on_loss(&mut self, idx: u32) -> bool {
        if idx < self.shrink_mark {
            return false;
        }
        let shrunk = (self.window as u64 * self.cfg.shrink_ppm as u64 / PPM) as u32;
        self.window = shrunk.max(self.cfg.min_window.max(1));
        self.shrink_mark = self.next;
        true
    }

    /// Servers that may be queried at once.
    pub fn window(&self) -> u32 {
        self.window
    }

    /// Servers queried and not yet answered.
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Whether every server of the request answered.
    pub fn is_done(&self) -> bool {
        self.answered >= self.servers
    }
}
