//! The discrete-event engine: a clock and one ordered queue of events.
//!
//! Events are ordered by `(time, insertion)`: two events at the same
//! picosecond pop in the order they were scheduled, so runs are
//! deterministic. Event payloads are small `Copy` values naming the element
//! that acts ([`Event`]), packed into 16-byte queue entries; there are no
//! boxed closures on the packet path.
//!
//! Elements keep at most one pending event each (a pipe schedules only its
//! head packet's arrival, a TCP endpoint one retransmission event whose
//! deadline it moves by writing a field). [`Timer`] is that pattern, written
//! once: a moving deadline with at most one pending event. Timers that really
//! must be withdrawn use [`EventQueue::schedule_cancellable`] and
//! [`EventQueue::cancel`].

mod entry;
mod event;
mod queue;
mod radix;
mod timer;

pub use queue::{Event, EventQueue, TimerKey};
pub use radix::RadixHeap;
pub use timer::Timer;

/// Bytes of one pending event in the queue (for the cost estimate).
pub const ENTRY_BYTES: usize = std::mem::size_of::<entry::Entry>();
