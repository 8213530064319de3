//! Continuous forwarding at a hub (spec §Design 1 and 3).
//!
//! A hub streams to its parent (the front-end or another hub) without
//! waiting for its swarm or its children: its own objects first, then every
//! object a swarm member or a child hub delivers, in arrival order. The
//! driver tells a [`Forwarder`] what arrived and asks it what to send next,
//! one object ([`Forwarder::next_object`]) or one packet's worth
//! ([`Forwarder::next_batch`], packet compression: objects packed up to the
//! maximum payload, see [`super::compress`]).
//!
//! The forwarder also counts what its subtree still owes ([`Forwarder::remaining`]):
//! |D_h| of query redirection (eq 7) as this hub sees it.

use std::collections::VecDeque;

/// One requested object: the driver's id and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Object {
    /// Object id.
    pub id: u32,
    /// Size in bytes.
    pub bytes: u32,
}

/// A hub's send queue for one request.
#[derive(Clone, Debug, Default)]
pub struct Forwarder {
    own: VecDeque<Object>,
    arrived: VecDeque<Object>,
    expected: u64,
    sent: u64,
}

impl Forwarder {
    /// An idle forwarder; [`Forwarder::start`] begins a request.
    pub fn new() -> Forwarder {
        Forwarder::default()
    }

    /// Begin a request: the hub's own objects (sent first, in this order)
    /// and how many objects its subtree will send in all (own included:
    /// [`super::AggTree::subtree_objects`]). Keeps the queues' memory.
    pub fn start(&mut self, own: &[Object], expected_objects: u64) {
        self.own.clear();
        self.arrived.clear();
        self.own.extend(own.iter().copied());
        self.expected = expected_objects;
        self.sent = 0;
    }

    /// One of the hub's own objects became ready later (read from disk): it
    /// goes ahead of everything that arrived from others.
    pub fn push_own(&mut self, obj: Object) {
        self.own.push_back(obj);
    }

    /// An object arrived from a swarm member or a child hub.
    pub fn on_arrival(&mut self, obj: Object) {
        self.arrived.push_back(obj);
    }

    /// The subtree will send `n` fewer objects (queries redirected away or
    /// lost with a failed server). Saturates at what was already sent.
    pub fn expect_fewer(&mut self, n: u64) {
        self.expected = self.expected.saturating_sub(n).max(self.sent);
    }

    /// The subtree will send `n` more objects (queries redirected here).
    pub fn expect_more(&mut self, n: u64) {
        self.expected += n;
    }

    /// What to send next: an own object while any is queued, else the
    /// oldest arrival; `None` when nothing is queued now.
    pub fn next_object(&mut self) -> Option<Object> {
        let o = self.own.pop_front().or_else(|| self.arrived.pop_front())?;
        self.sent += 1;
        Some(o)
    }

    /// Packet compression: move the next objects, in [`Forwarder::next_object`]'s
    /// order, into `out` while their bytes plus `per_object_bytes` each fit in
    /// `payload_bytes`; returns the payload bytes taken (0: nothing queued).
    /// An object that alone exceeds the payload is taken alone (its transport
    /// splits it). `out` is cleared first.
    pub fn next_batch(&mut self, payload_bytes: u32, per_object_bytes: u32, out: &mut Vec<Object>) -> u32 {
        out.clear();
        let mut used = 0u32;
        loop {
            let head = self.own.front().or_else(|| self.arrived.front());
            let Some(&o) = head else { break };
            let framed = o.bytes.saturating_add(per_object_bytes);
            if !out.is_empty() && used.saturating_add(framed) > payload_bytes {
                break;
            }
            self.next_object();
            out.push(o);
            used = used.saturating_add(framed);
            if used >= payload_bytes {
                break;
            }
        }
        used
    }

    /// Objects queued now (own and arrived).
    pub fn queued(&self) -> usize {
        self.own.len() + self.arrived.len()
    }

    /// Objects sent so far in this request.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Objects of the subtree not yet sent on (queued or still to arrive).
    pub fn remaining(&self) -> u64 {
        self.expected.saturating_sub(self.sent)
    }

    /// Whether every expected object was sent on.
    pub fn is_done(&self) -> bool {
        self.sent >= self.expected
    }
}
