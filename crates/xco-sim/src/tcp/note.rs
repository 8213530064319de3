//! What the transports tell applications: [`AppNote`].
//!
//! TCP raises its notes (connected, bytes delivered, everything acked)
//! through its host ([`super::host::TcpHost::note`]); the host stack raises
//! echo replies the same way. The host stack collects them and the driver
//! hands each to the application it names after the event: transports never
//! call an application.

use xco_core::Dur;

/// Something a transport tells an application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppNote {
    /// The connection of endpoint `ep` is established.
    Connected {
        /// App.
        app: u32,
        /// Endpoint.
        ep: u32,
    },
    /// `bytes` more in-order bytes arrived at endpoint `ep`.
    Delivered {
        /// App.
        app: u32,
        /// Endpoint.
        ep: u32,
        /// Bytes.
        bytes: u64,
    },
    /// Everything endpoint `ep` was given to send is acknowledged.
    SendAcked {
        /// App.
        app: u32,
        /// Endpoint.
        ep: u32,
    },
    /// An echo reply for probe `seq` came back after `rtt`.
    PingReply {
        /// App.
        app: u32,
        /// Probe number.
        seq: u64,
        /// Round-trip time.
        rtt: Dur,
    },
}

impl AppNote {
    /// The application the note is for.
    pub fn app(&self) -> u32 {
        match *self {
            AppNote::Connected { app, .. }
            | AppNote::Delivered { app, .. }
            | AppNote::SendAcked { app, .. }
            | AppNote::PingReply { app, .. } => app,
        }
    }
}
