//! The control channel of a daemon: a non-blocking UDP socket speaking the
//! `xco_core::wire` protocol. The controller signs what it sends and checks
//! each agent's MAC and session; an agent MACs what it sends and checks the
//! controller's signature and run. Rejected datagrams are counted by reason
//! and never reach the daemon's logic.

use std::net::{SocketAddr, UdpSocket};
use xco_core::wire::{
    Accepted, AgentKeys, AgentSessions, ControllerKeys, ControllerSession, Message, RejectCounts, Repr,
    WireError, CONTROLLER_ID,
};

/// Counters of a channel.
#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams accepted.
    pub accepted: u64,
    /// Datagrams rejected, by reason.
    pub rejected: RejectCounts,
    /// Send errors (e.g. no route while the peer's network is down).
    pub send_errors: u64,
}

/// Which end of the protocol a channel is, with its keys and session state.
enum End {
    Controller {
        keys: ControllerKeys,
        sessions: AgentSessions,
    },
    Agent {
        keys: AgentKeys,
        session: ControllerSession,
    },
}

/// What a received datagram was.
#[derive(Debug)]
pub enum Received {
    /// Accepted.
    Msg(Repr),
    /// A hello: the agent now obeys controller run `run`.
    NewRun(u64),
    /// Rejected, and why.
    Rejected(WireError),
}

/// An authenticated, session-checked UDP endpoint.
pub struct Channel {
    /// The socket.
    pub sock: UdpSocket,
    end: End,
    me: u32,
    /// The session written on what this end sends (controller: its run id;
    /// agent: the nonce of its latest join).
    run: u64,
    seq: u64,
    buf: Vec<u8>,
    /// Counters.
    pub stats: ChannelStats,
}

impl Channel {
    fn bind(local: SocketAddr, end: End, me: u32, run: u64) -> std::io::Result<Channel> {
        let sock = UdpSocket::bind(local)?;
        sock.set_nonblocking(true)?;
        Ok(Channel {
            sock,
            end,
            me,
            run,
            seq: 0,
            buf: vec![0; 65536],
            stats: ChannelStats::default(),
        })
    }

    /// The controller's channel on `local`, in run `run` (random per start).
    pub fn controller(
        local: SocketAddr,
        keys: ControllerKeys,
        hosts: usize,
        run: u64,
    ) -> std::io::Result<Channel> {
        let end = End::Controller {
            keys,
            sessions: AgentSessions::new(hosts),
        };
        Channel::bind(local, end, CONTROLLER_ID, run)
    }

    /// An agent's channel on `local` (no session until [`Channel::join`]).
    pub fn agent(local: SocketAddr, keys: AgentKeys) -> std::io::Result<Channel> {
        let me = keys.host();
        let end = End::Agent {
            keys,
            session: ControllerSession::new(me),
        };
        Channel::bind(local, end, me, 0)
    }

    /// The session this end writes on what it sends.
    pub fn run(&self) -> u64 {
        self.run
    }

    /// Agent: true while a controller run is obeyed.
    pub fn obeys_a_run(&self) -> bool {
        matches!(&self.end, End::Agent { session, .. } if session.run().is_some())
    }

    /// Agent: start a new session with `nonce` and send a join for it to `to`.
    ///
    /// Panics on the controller's channel.
    pub fn join(&mut self, to: SocketAddr, nonce: u64) {
        let End::Agent { session, .. } = &mut self.end else {
            panic!("only agents join");
        };
        session.joining(nonce);
        self.run = nonce;
        self.send(to, Message::Join);
    }

    /// Controller: forget `host`'s session (it left).
    pub fn forget(&mut self, host: u32) {
        if let End::Controller { sessions, .. } = &mut self.end {
            sessions.forget(host);
        }
    }

    /// Authenticate and send `msg` to `to`.
    ///
    /// Panics if this end does not send `msg`'s type.
    pub fn send(&mut self, to: SocketAddr, msg: Message) {
        self.seq += 1;
        let repr = Repr {
            host: self.me,
            run: self.run,
            seq: self.seq,
            msg,
        };
        let d = match &self.end {
            End::Controller { keys, .. } => keys.encode(&repr),
            End::Agent { keys, .. } => keys.encode(&repr),
        };
        match self.sock.send_to(&d, to) {
            Ok(_) => self.stats.sent += 1,
            Err(_) => self.stats.send_errors += 1,
        }
    }

    /// The next datagram: `None` when none is waiting, otherwise the sender
    /// and what it was.
    pub fn recv(&mut self) -> Option<(SocketAddr, Received)> {
        loop {
            let (n, from) = match self.sock.recv_from(&mut self.buf) {
                Ok(x) => x,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return None,
                Err(_) => continue, // ICMP errors surfacing on the socket: ignore
            };
            let d = &self.buf[..n];
            let r = match &mut self.end {
                End::Controller { keys, sessions } => keys
                    .decode(d)
                    .and_then(|r| sessions.check(&r).map(|()| Received::Msg(r))),
                End::Agent { keys, session } => keys.decode(d).and_then(|r| match session.accept(&r)? {
                    Accepted::NewRun { run } => Ok(Received::NewRun(run)),
                    Accepted::InRun => Ok(Received::Msg(r)),
                }),
            };
            let r = r.unwrap_or_else(Received::Rejected);
            let c = &mut self.stats.rejected;
            match &r {
                Received::Msg(_) | Received::NewRun(_) => self.stats.accepted += 1,
                Received::Rejected(WireError::BadTag) => c.auth += 1,
                Received::Rejected(WireError::Replay { .. }) => c.replay += 1,
                Received::Rejected(WireError::Session { .. } | WireError::UnknownSender(_)) => c.session += 1,
                Received::Rejected(_) => c.malformed += 1,
            }
            return Some((from, r));
        }
    }
}
