//! The ICTCP baseline in the web fan-in: the front-end queries every
//! target at once (as One-all) while an `xco_core::sicc::IctcpReceiver`
//! sets each of its connections' advertised windows, through the receive-
//! window seam (`tcp::rcv_window::RcvWindow::Clamp` on the front-end's
//! endpoint: every segment it stamps carries the window ICTCP chose).
//!
//! The receiver hears every object's bytes as they arrive (`on_data`) and
//! each connection's smoothed RTT from its endpoint when it has one. A
//! window is put on the endpoint when the front-end is about to send on it
//! (its query) and whenever data arrives on it (the ACK): a sender sees the
//! window only in those segments. A connection is opened in ICTCP the first
//! time the front-end queries that server and stays open (connections are
//! persistent); its RTT until TCP has a sample is the base RTT of 100 us.
//!
//! **No timers.** The receiver's sub-slot boundaries and per-RTT checks
//! run when it is next touched: before a window is read (a query) and
//! before an arrival is counted or a new RTT given (`handle_timeout(now)`
//! first, which runs every boundary and check due up to now in time order,
//! each at its own due time). A window reaches a sender only in those two
//! places, so what the senders see is what timers firing at every deadline
//! would give, without an event per deadline (a check per connection per
//! RTT, over every server ever queried: most of ICTCP's run time when they
//! were events).

use super::{Env, WebFanin};
use crate::tcp::rcv_window::RcvWindow;
use xco_core::sicc::{IctcpConfig, IctcpReceiver};

/// RTT assumed for a connection with no sample yet, ns.
const BASE_RTT_NS: u64 = 100_000;

/// One front-end's ICTCP state.
pub(super) struct FeIctcp {
    rx: IctcpReceiver,
    /// (server, ICTCP id, front-end endpoint), in the order opened.
    conns: Vec<(u32, u32, u32)>,
    by_server: std::collections::HashMap<u32, usize>,
}

impl WebFanin {
    /// Front-end `fe` is about to query `server`: open it in ICTCP (first
    /// time) and put ICTCP's window on the front-end's endpoint.
    pub(super) fn ictcp_prepare(&mut self, env: &mut Env, fe: usize, server: u32) -> Result<(), String> {
        let host = self.fes[fe].host;
        let now_ns = env.cx.now.ps() / 1000;
        if self.fes[fe].ictcp.is_none() {
            let down = &env.cx.net.ports[self.cfg.place.down_port[host as usize] as usize];
            let cfg = IctcpConfig {
                mss_bytes: env.stack.tcp.cfg.mss_bytes,
                min_window_bytes: 2 * env.stack.tcp.cfg.mss_bytes,
                initial_window_bytes: 2 * env.stack.tcp.cfg.mss_bytes,
                ..IctcpConfig::default()
            };
            self.fes[fe].ictcp = Some(FeIctcp {
                rx: IctcpReceiver::new(cfg, down.rate_bps, now_ns),
                conns: Vec::new(),
                by_server: std::collections::HashMap::new(),
            });
        }
        let ep = self.ep(env, host, server)?;
        let st = self.fes[fe].ictcp.as_mut().expect("made above");
        let k = match st.by_server.get(&server) {
            Some(&k) => k,
            None => {
                let id = st.rx.open(BASE_RTT_NS, now_ns);
                st.conns.push((server, id, ep));
                st.by_server.insert(server, st.conns.len() - 1);
                st.conns.len() - 1
            }
        };
        let (_, id, ep) = st.conns[k];
        st.rx.handle_timeout(now_ns);
        let w = st.rx.window_bytes(id) as u64;
        env.tcp.eps[ep as usize].rcv_window = RcvWindow::Clamp { max_bytes: w };
        Ok(())
    }

    /// `bytes` of an object from `server` arrived at front-end `fe`.
    pub(super) fn ictcp_on_data(&mut self, env: &mut Env, fe: usize, server: u32, bytes: u64) {
        let now_ns = env.cx.now.ps() / 1000;
        let Some(st) = self.fes[fe].ictcp.as_mut() else {
            return;
        };
        // what was due before this arrival, with the RTT it was due under
        st.rx.handle_timeout(now_ns);
        match st.by_server.get(&server) {
            Some(&k) => {
                let (_, id, ep) = st.conns[k];
                if let Some(srtt) = env.tcp.eps[ep as usize].rtt.srtt() {
                    st.rx.on_rtt(id, srtt.as_ns());
                }
                st.rx.on_data(id, bytes, now_ns);
                let w = st.rx.window_bytes(id) as u64;
                env.tcp.eps[ep as usize].rcv_window = RcvWindow::Clamp { max_bytes: w };
            }
            None => st.rx.on_other_data(bytes, now_ns),
        }
    }

    /// Windows of front-end `fe`'s ICTCP connections now, bytes (for tests).
    pub fn ictcp_windows(&self, fe: usize) -> Vec<u64> {
        match &self.fes[fe].ictcp {
            Some(st) => st
                .conns
                .iter()
                .map(|&(_, id, _)| st.rx.window_bytes(id) as u64)
                .collect(),
            None => Vec::new(),
        }
    }
}
