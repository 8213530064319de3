//! Queue entries: a time and an event packed into one word (16 bytes).

use super::event::Event;

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
            Event::PipeArrive(x) => (0, x, 0), // no hint: use `Entry::arrival`
            Event::NicRoom(x) => (1, x, 0),
            Event::TcpRto(x) => (2, x, 0),
            Event::TcpDelack(x) => (3, x, 0),
            Event::App { app, token } => (4, app, token),
            Event::Sample => (5, 0, 0),
            Event::Probe(x) => (6, x, 0),
            Event::Timer { slot, generation } => (7, slot, generation),
            Event::Coordinator(x) => (8, x, 0),
            Event::Controller => (9, 0, 0),
            Event::ControlMessage(x) => (10, x, 0),
            Event::PortDepart(x) => (11, x, 0),
            Event::TcpPace(x) => (12, x, 0),
        };
        // tag: 4 bits; a: 32 bits; b: 28 bits (app tokens and timer generations fit)
        debug_assert!(b < 1 << 28, "event payload too large");
        Entry {
            time,
            packed: tag | (a as u64) << 4 | ((b as u64) & ((1 << 28) - 1)) << 36,
        }
    }

    /// A [`Event::PipeArrive`] of `port` whose head packet is `pkt`: the
    /// packet rides in the spare bits as a hint for warming caches ahead
    /// (`net::prefetch`); of a packet id past 28 bits only the low 28 are
    /// kept (the hint then names another packet, which costs a useless
    /// prefetch only).
    #[inline(always)]
    pub fn arrival(time: u64, port: u32, pkt: u32) -> Entry {
        // the shift drops the packet id's bits past 28
        Entry {
            time,
            packed: (port as u64) << 4 | (pkt as u64) << 36,
        }
    }

    /// The (port, packet hint) of an [`Entry::arrival`], or `None` for any other event.
    #[inline(always)]
    pub fn as_arrival(&self) -> Option<(u32, u32)> {
        (self.packed & 15 == 0).then_some(((self.packed >> 4) as u32, (self.packed >> 36) as u32))
    }

    #[inline(always)]
    /// Unpack the event.
    pub fn event(&self) -> Event {
        let a = (self.packed >> 4) as u32;
        let b = (self.packed >> 36) as u32;
        match self.packed & 15 {
            0 => Event::PipeArrive(a),
            1 => Event::NicRoom(a),
            2 => Event::TcpRto(a),
            3 => Event::TcpDelack(a),
            4 => Event::App { app: a, token: b },
            5 => Event::Sample,
            6 => Event::Probe(a),
            7 => Event::Timer {
                slot: a,
                generation: b,
            },
            8 => Event::Coordinator(a),
            9 => Event::Controller,
            10 => Event::ControlMessage(a),
            11 => Event::PortDepart(a),
            _ => Event::TcpPace(a),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_survives_packing() {
        let all = [
            Event::PipeArrive(u32::MAX),
            Event::NicRoom(7),
            Event::TcpRto(123_456),
            Event::TcpDelack(0),
            Event::App {
                app: u32::MAX,
                token: (1 << 28) - 1,
            },
            Event::Sample,
            Event::Probe(42),
            Event::Timer {
                slot: 9,
                generation: 77,
            },
            Event::Coordinator(5),
            Event::Controller,
            Event::ControlMessage(31),
            Event::PortDepart(u32::MAX),
            Event::TcpPace(3),
        ];
        for e in all {
            let x = Entry::new(u64::MAX - 1, e);
            assert_eq!(x.event(), e);
            assert_eq!(x.time, u64::MAX - 1);
        }
    }

    #[test]
    fn an_arrival_carries_its_packet_as_a_hint_and_stays_a_pipe_arrival() {
        let x = Entry::arrival(5, u32::MAX, (1 << 28) - 1);
        assert_eq!(x.event(), Event::PipeArrive(u32::MAX));
        assert_eq!(x.as_arrival(), Some((u32::MAX, (1 << 28) - 1)));
        // a packet id past the spare bits keeps its low bits, never mixed into the port
        let y = Entry::arrival(5, 7, (1 << 28) + 3);
        assert_eq!(y.as_arrival(), Some((7, 3)));
        assert_eq!(Entry::new(5, Event::NicRoom(7)).as_arrival(), None);
    }
}
