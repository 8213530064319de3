//! A queue timeline: every enqueue, dequeue, drop and eviction at one chosen
//! output port, with the time, the input the frame came by and the queue it
//! left behind — the TCP Outcast paper's queue-size timeline (spec
//! `outcast.md`), a table rather than a log.
//!
//! Ports are chosen in the scenario (`[output] queue_timeline`). Recording
//! is a push of a 24-byte row, off the fast path of every other port (a
//! port's tap field is checked where the packet capture's already was). The
//! number of rows is bounded; when the bound is reached the timeline stops
//! and the table ends with a `truncated` row at the time of the first event
//! not recorded.
//!
//! In FIFO mode a frame's dequeue (the start of its serialisation) is known
//! when it is admitted, so both rows are written then; the table is sorted by
//! time when it is read and the queue is replayed from the rows, which is
//! exact: the rows hold every change of the queue.

use xco_core::Time;

/// What happened to a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineEvent {
    /// Admitted into the queue.
    Enqueue,
    /// Started serialising (left the queue).
    Dequeue,
    /// Dropped on arrival.
    Drop,
    /// Dropped from the queue after admission (a scheduled discipline's eviction).
    Evict,
}

impl TimelineEvent {
    /// As written in the table.
    pub fn name(self) -> &'static str {
        match self {
            TimelineEvent::Enqueue => "enqueue",
            TimelineEvent::Dequeue => "dequeue",
            TimelineEvent::Drop => "drop",
            TimelineEvent::Evict => "evict",
        }
    }
}

/// One recorded event.
#[derive(Clone, Copy, Debug)]
pub struct TimelineRow {
    /// When.
    pub at: Time,
    /// Input index at the port (0 at a host NIC).
    pub input: u32,
    /// Frame bytes.
    pub frame_bytes: u32,
    /// What happened.
    pub event: TimelineEvent,
}

/// A replayed row: the event and the bytes queued after it.
#[derive(Clone, Copy, Debug)]
pub struct ReplayedRow {
    /// The event.
    pub row: TimelineRow,
    /// Frame bytes waiting after the event (not counting the frame serialising).
    pub queue_bytes: u64,
}

/// The timeline of one port.
#[derive(Clone, Debug)]
pub struct QueueTimeline {
    /// The port.
    pub port: u32,
    rows: Vec<TimelineRow>,
    max_rows: usize,
    /// The time of the first event not recorded, once the bound was reached.
    pub cut_at: Option<Time>,
}

impl QueueTimeline {
    /// A timeline of `port` keeping at most `max_rows` rows.
    pub fn new(port: u32, max_rows: usize) -> QueueTimeline {
        QueueTimeline {
            port,
            rows: Vec::with_capacity(max_rows.min(4096)),
            max_rows,
            cut_at: None,
        }
    }

    /// Record `event` of a frame of `frame_bytes` from `input` at `at`
    /// (`now` is the clock: a FIFO dequeue is recorded before it happens).
    #[inline]
    pub(crate) fn record(&mut self, now: Time, at: Time, input: u32, frame_bytes: u32, event: TimelineEvent) {
        if self.cut_at.is_some() {
            return;
        }
        if self.rows.len() >= self.max_rows {
            self.cut_at = Some(now);
            return;
        }
        self.rows.push(TimelineRow {
            at,
            input,
            frame_bytes,
            event,
        });
    }

    /// The rows in time order (ties in the order recorded) with the queue
    /// after each; rows at or after [`QueueTimeline::cut_at`] are left out
    /// (they may be incomplete).
    pub fn replay(&self) -> Vec<ReplayedRow> {
        let mut rows: Vec<TimelineRow> = self
            .rows
            .iter()
            .copied()
            .filter(|r| self.cut_at.is_none_or(|c| r.at < c))
            .collect();
        rows.sort_by_key(|r| r.at); // stable: ties keep the recording order
        let mut queue = 0u64;
        rows.into_iter()
            .map(|row| {
                match row.event {
                    TimelineEvent::Enqueue => queue += row.frame_bytes as u64,
                    TimelineEvent::Dequeue | TimelineEvent::Evict => {
                        queue = queue.saturating_sub(row.frame_bytes as u64)
                    }
                    TimelineEvent::Drop => {}
                }
                ReplayedRow {
                    row,
                    queue_bytes: queue,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TimelineEvent::*;

    #[test]
    fn a_fifo_dequeue_recorded_early_is_replayed_in_time_order() {
        let mut t = QueueTimeline::new(0, 100);
        t.record(Time(0), Time(0), 0, 1000, Enqueue);
        t.record(Time(0), Time(0), 0, 1000, Dequeue); // idle port: starts at once
        t.record(Time(1), Time(1), 1, 500, Enqueue);
        t.record(Time(1), Time(8), 1, 500, Dequeue); // starts when the first is out
        t.record(Time(2), Time(2), 0, 1000, Drop);
        let q: Vec<(u64, TimelineEvent, u64)> = t
            .replay()
            .iter()
            .map(|r| (r.row.at.0, r.row.event, r.queue_bytes))
            .collect();
        assert_eq!(
            q,
            vec![
                (0, Enqueue, 1000),
                (0, Dequeue, 0),
                (1, Enqueue, 500),
                (2, Drop, 500),
                (8, Dequeue, 0)
            ]
        );
    }

    #[test]
    fn the_bound_cuts_the_timeline_and_says_where() {
        let mut t = QueueTimeline::new(0, 2);
        t.record(Time(0), Time(0), 0, 1000, Enqueue);
        t.record(Time(0), Time(5), 0, 1000, Dequeue);
        t.record(Time(3), Time(3), 0, 1000, Enqueue);
        assert_eq!(t.cut_at, Some(Time(3)));
        // the dequeue at 5 lies after the cut: left out
        assert_eq!(t.replay().len(), 1);
    }
}
