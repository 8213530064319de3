//! All TCP endpoints of a run, and connection set-up.

use super::endpoint::{EndpointInit, TcpEndpoint, TcpState};
use super::note::AppNote;
use crate::ctx::Ctx;
use crate::net::NetError;
use crate::stats::{FlowKind, FlowStats};
use crate::tcp::host::TcpHost;
use xco_core::rng::mix64;

/// The endpoints, indexed by id (ids are never reused within a run).
#[derive(Default)]
pub struct TcpTable {
    /// Endpoints.
    pub eps: Vec<TcpEndpoint>,
    connections: u64,
}

/// Roles of the two directions of a connection, for flow statistics.
#[derive(Clone, Copy, Debug)]
pub struct Roles {
    /// What the client's sending direction is called (`request`, `bulk`).
    pub client: &'static str,
    /// What the server's sending direction is called (`response`, `ack`).
    pub server: &'static str,
}

impl TcpTable {
    /// Create a connection from host `client` to host `server` for `app`;
    /// returns (client endpoint, server endpoint). With a handshake the client
    /// sends its SYN now; without, both ends start established and an
    /// `AppNote::Connected` is queued for each.
    #[allow(clippy::too_many_arguments)]
    pub fn open<H: TcpHost>(
        &mut self,
        cx: &mut Ctx,
        h: &mut H,
        app: u32,
        client: u32,
        server: u32,
        tag: u32,
        roles: Roles,
    ) -> Result<(u32, u32), NetError> {
        let handshake = h.tcp().cfg.handshake;
        self.open_with(cx, h, app, client, server, tag, roles, handshake)
    }

    /// Like [`TcpTable::open`], but both ends start established whatever
    /// `tcp.handshake` says: a persistent connection opened before the run's
    /// traffic, its set-up not simulated (no RTT sample from a handshake).
    #[allow(clippy::too_many_arguments)]
    pub fn open_established<H: TcpHost>(
        &mut self,
        cx: &mut Ctx,
        h: &mut H,
        app: u32,
        client: u32,
        server: u32,
        tag: u32,
        roles: Roles,
    ) -> Result<(u32, u32), NetError> {
        self.open_with(cx, h, app, client, server, tag, roles, false)
    }

    #[allow(clippy::too_many_arguments)]
    fn open_with<H: TcpHost>(
        &mut self,
        cx: &mut Ctx,
        h: &mut H,
        app: u32,
        client: u32,
        server: u32,
        tag: u32,
        roles: Roles,
        handshake: bool,
    ) -> Result<(u32, u32), NetError> {
        let conn = self.connections;
        self.connections += 1;
        let fwd = cx.net.route(client, server, mix64(h.seed(), conn * 2))?;
        let rev = cx.net.route(server, client, mix64(h.seed(), conn * 2 + 1))?;
        let c_id = self.eps.len() as u32;
        let s_id = c_id + 1;
        let now = cx.now;
        let c_flow = h.open_flow(
            cx,
            FlowStats::new(FlowKind::Tcp, app, roles.client, client, server, now).with_route(fwd),
        );
        let s_flow = h.open_flow(
            cx,
            FlowStats::new(FlowKind::Tcp, app, roles.server, server, client, now).with_route(rev),
        );
        let (cs, ss) = if handshake {
            (TcpState::SynSent, TcpState::Listen)
        } else {
            (TcpState::Established, TcpState::Established)
        };
        let (c_cfg, s_cfg) = h.tcp_mut().for_connection(app, client, server);
        self.eps.push(TcpEndpoint::new(
            EndpointInit {
                id: c_id,
                host: client,
                peer_host: server,
                peer_ep: s_id,
                app,
                tag,
                route: fwd,
                tx_flow: c_flow,
                rx_flow: s_flow,
                state: cs,
                cfg: c_cfg,
            },
            h.tcp().cfg_of(c_cfg),
        ));
        self.eps.push(TcpEndpoint::new(
            EndpointInit {
                id: s_id,
                host: server,
                peer_host: client,
                peer_ep: c_id,
                app,
                tag,
                route: rev,
                tx_flow: s_flow,
                rx_flow: c_flow,
                state: ss,
                cfg: s_cfg,
            },
            h.tcp().cfg_of(s_cfg),
        ));
        for (ep, host) in [(c_id, client), (s_id, server)] {
            if let Some(rule) = h.pdn(cx, host) {
                self.eps[ep as usize].use_pdn(rule);
            }
        }
        if handshake {
            self.eps[c_id as usize].connect(cx, h);
        } else {
            for ep in [c_id, s_id] {
                h.note(AppNote::Connected { app, ep });
            }
        }
        Ok((c_id, s_id))
    }

    /// Write `bytes` on endpoint `ep`.
    pub fn write<H: TcpHost>(&mut self, cx: &mut Ctx, h: &mut H, ep: u32, bytes: u64) {
        self.eps[ep as usize].write(cx, h, bytes);
    }

    /// Close both ends of the connection of `ep`.
    pub fn close_pair(&mut self, ep: u32) {
        let peer = self.eps[ep as usize].peer_ep;
        self.eps[ep as usize].close();
        self.eps[peer as usize].close();
    }
}
