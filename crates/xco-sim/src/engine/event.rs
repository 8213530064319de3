//! What the engine schedules: [`Event`].

/// What happens when an event fires; each variant names the element that acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head packet of port `0`'s pipe reaches the far end of the link.
    PipeArrive(u32),
    /// Scheduled port `0` finishes serialising a frame: its discipline picks
    /// the next (FIFO ports never need this event).
    PortDepart(u32),
    /// The oldest packet waiting in host `0`'s NIC queue starts serialising
    /// (wakes TCP senders blocked on a full NIC queue).
    NicRoom(u32),
    /// Retransmission-timer check of TCP endpoint `0`.
    TcpRto(u32),
    /// Delayed-ACK timer check of TCP endpoint `0`.
    TcpDelack(u32),
    /// Pacing timer check of TCP endpoint `0`.
    TcpPace(u32),
    /// A timer of application `app`, with an app-defined `token` (below 2^28).
    App {
        /// Application index.
        app: u32,
        /// App-defined token.
        token: u32,
    },
    /// Periodic statistics sample.
    Sample,
    /// A test or tool event carrying a tag (never produced by the model).
    Probe(u32),
    /// XCo: the local coordinator of host node `0` has work due.
    Coordinator(u32),
    /// XCo: the controller's scheduler has work due.
    Controller,
    /// XCo: an out-of-band control message (slot `0`) reaches its receiver.
    ControlMessage(u32),
    /// Internal: a cancellable timer, resolved through the slab.
    #[doc(hidden)]
    Timer {
        /// Slab slot.
        slot: u32,
        /// Generation the slot had when scheduled.
        generation: u32,
    },
}
