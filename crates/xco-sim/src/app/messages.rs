//! Messages over TCP: the application-layer seam for apps that exchange
//! *messages* (a query naming objects, a response carrying objects, a
//! forwarded batch) rather than byte counts.
//!
//! TCP in the simulator carries sizes, never payload bytes, and delivers a
//! byte stream in order. A message is therefore a size plus a value of the
//! app's own type `M`: [`Messages::send`] writes the size on the sending
//! endpoint and queues the value at the receiving endpoint with the stream
//! offset where it ends; [`Messages::on_delivered`] advances the receiving
//! endpoint's offset by the bytes TCP delivered in order and hands back every
//! message whose last byte has arrived. Boundaries are thus known to the
//! receiver exactly when a real receiver that parsed length-prefixed frames
//! would know them, and a message is handed over once (TCP delivers every
//! byte once, in order).
//!
//! [`ConnPool`] keeps one persistent connection per pair of hosts, used in
//! both directions. A connection is opened the first time a pair talks,
//! established at once (`TcpTable::open_established`): it stands for a
//! connection opened before the first request, so its set-up is neither
//! simulated nor counted in any latency. It has no RTT sample until its first
//! acknowledged segment, so its first retransmission timer is `tcp.rto_initial_ms`.
//!
//! A hub that receives and forwards is an app that calls `on_delivered` for
//! the connections it receives on and `send` on the one it forwards on.

use super::Env;
use crate::tcp::table::Roles;
use std::collections::{HashMap, VecDeque};

/// Messages in flight, per receiving endpoint, for one app.
pub struct Messages<M> {
    /// Per endpoint id: stream bytes written on it so far.
    sent_bytes: Vec<u64>,
    /// Per endpoint id: stream bytes delivered to it so far.
    got_bytes: Vec<u64>,
    /// Per endpoint id (receiving end): (stream offset of the message's end, message).
    pending: Vec<VecDeque<(u64, M)>>,
}

impl<M> Default for Messages<M> {
    fn default() -> Self {
        Messages {
            sent_bytes: Vec::new(),
            got_bytes: Vec::new(),
            pending: Vec::new(),
        }
    }
}

impl<M> Messages<M> {
    /// No message yet.
    pub fn new() -> Messages<M> {
        Messages::default()
    }

    fn grow(&mut self, ep: u32) {
        let n = ep as usize + 1;
        if self.sent_bytes.len() < n {
            self.sent_bytes.resize(n, 0);
            self.got_bytes.resize(n, 0);
            self.pending.resize_with(n, VecDeque::new);
        }
    }

    /// Send `msg` of `bytes` on endpoint `ep` (the receiver gets it once its
    /// last byte arrives). Panics if `bytes` is 0 (a message has a size).
    pub fn send(&mut self, env: &mut Env, ep: u32, bytes: u64, msg: M) {
        assert!(bytes > 0, "a message has at least one byte");
        let peer = env.tcp.eps[ep as usize].peer_ep;
        self.grow(ep.max(peer));
        self.sent_bytes[ep as usize] += bytes;
        let end = self.sent_bytes[ep as usize];
        self.pending[peer as usize].push_back((end, msg));
        env.tcp.write(env.cx, env.stack, ep, bytes);
    }

    /// `bytes` more arrived in order at endpoint `ep`: push every message
    /// now complete onto `out`, in the order sent; returns how many.
    pub fn on_delivered(&mut self, ep: u32, bytes: u64, out: &mut Vec<M>) -> usize {
        self.grow(ep);
        let i = ep as usize;
        self.got_bytes[i] += bytes;
        let got = self.got_bytes[i];
        let mut n = 0;
        while self.pending[i].front().is_some_and(|&(end, _)| end <= got) {
            let (_, m) = self.pending[i].pop_front().expect("front exists");
            out.push(m);
            n += 1;
        }
        n
    }

    /// Messages sent toward endpoint `ep` whose last byte has not arrived.
    pub fn in_flight(&self, ep: u32) -> usize {
        self.pending.get(ep as usize).map_or(0, |q| q.len())
    }

    /// Messages not yet fully delivered, over every endpoint.
    pub fn in_flight_total(&self) -> usize {
        self.pending.iter().map(|q| q.len()).sum()
    }
}

/// One persistent connection per pair of hosts, for one app.
#[derive(Default)]
pub struct ConnPool {
    /// (lower host, higher host) -> (endpoint at the lower host, endpoint at the higher).
    conns: HashMap<(u32, u32), (u32, u32)>,
}

impl ConnPool {
    /// An empty pool.
    pub fn new() -> ConnPool {
        ConnPool::default()
    }

    /// The endpoint at host `from` of the connection between `from` and
    /// `to`, opened (established, no handshake) if the pair has none yet.
    pub fn endpoint(&mut self, env: &mut Env, app: u32, from: u32, to: u32) -> Result<u32, String> {
        if from == to {
            return Err(format!("host {from} cannot open a connection to itself"));
        }
        let key = (from.min(to), from.max(to));
        let (lo_ep, hi_ep) = match self.conns.get(&key) {
            Some(&c) => c,
            None => {
                let c = env
                    .tcp
                    .open_established(
                        env.cx,
                        env.stack,
                        app,
                        key.0,
                        key.1,
                        0,
                        Roles {
                            client: "message",
                            server: "message",
                        },
                    )
                    .map_err(|e| e.0)?;
                self.conns.insert(key, c);
                c
            }
        };
        Ok(if from == key.0 { lo_ep } else { hi_ep })
    }

    /// Connections open.
    pub fn len(&self) -> usize {
        self.conns.len()
    }

    /// True if no connection is open.
    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }
}
