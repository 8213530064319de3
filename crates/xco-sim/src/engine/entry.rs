//! Queue entries: a time and an event packed into one word (16 bytes).

use super::Event;

/// A queue entry: time and the event packed into one word (16 bytes in all).
#[derive(Clone, Copy)]
pub struct Entry {
    /// Time in picoseconds.
    pub time: u64,
    packed: u64,
}

impl Entry {
    #[inline(always)]
    /// Pack `event` at `time`.
    pub fn new(time: u64, event: Event) -> Entry {
        let (tag, a, b): (u64, u32, u32) = match event {
            Event::PipeArrive(x) => (0, x, 0),
            Event::NicRoom(x) => (1, x, 0),
            Event::TcpRto(x) => (2, x, 0),
            Event::TcpDelack(x) => (3, x, 0),
            Event::App { app, token } => (4, app, token),
            Event::Sample => (5, 0, 0),
            Event::Probe(x) => (6, x, 0),
            Event::Timer { slot, generation } => (7, slot, generation),
        };
        // tag: 3 bits; a: 32 bits; b: 29 bits (app tokens and timer generations fit)
        debug_assert!(b < 1 << 29, "event payload too large");
        Entry {
            time,
            packed: tag | (a as u64) << 3 | ((b as u64) & ((1 << 29) - 1)) << 35,
        }
    }

    #[inline(always)]
    /// Unpack the event.
    pub fn event(&self) -> Event {
        let a = (self.packed >> 3) as u32;
        let b = (self.packed >> 35) as u32;
        match self.packed & 7 {
            0 => Event::PipeArrive(a),
            1 => Event::NicRoom(a),
            2 => Event::TcpRto(a),
            3 => Event::TcpDelack(a),
            4 => Event::App { app: a, token: b },
            5 => Event::Sample,
            6 => Event::Probe(a),
            _ => Event::Timer {
                slot: a,
                generation: b,
            },
        }
    }
}

/// Stable sort by time: insertion sort for the usual handful of nearly
/// sorted entries, the standard stable sort beyond that.
#[inline]
pub fn sort_by_time(v: &mut [Entry]) {
    if v.len() > 24 {
        v.sort_by_key(|e| e.time);
        return;
    }
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].time > x.time {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}
