//! DCTCP's switch marking (RFC 8257 §3.1, the DCTCP paper's K threshold): an
//! ECN-capable packet that arrives while more than `k_bytes` wait is marked
//! CE; everything else is drop-tail. The instantaneous queue, no averaging —
//! the RED configuration DCTCP asks for (min = max = K, weight 1) in its
//! plainest form, for DCTCP's tests and experiments; RED proper is its own
//! discipline.

use super::packet::Packet;
use super::qdisc::{Arrival, ArrivalHook, DropReason, DropTail, Verdict};

/// Mark above `k_bytes`, drop beyond `limit_bytes`.
#[derive(Clone, Copy, Debug)]
pub struct StepMark {
    /// The marking threshold K, bytes waiting.
    pub k_bytes: u64,
    /// The buffer, bytes.
    pub limit_bytes: u64,
    /// Packets marked CE.
    pub marked: u64,
    /// ECN-capable packets admitted (marked or not).
    pub ect_admitted: u64,
}

impl StepMark {
    /// A marker with threshold `k_bytes` in a buffer of `limit_bytes`.
    pub fn new(k_bytes: u64, limit_bytes: u64) -> StepMark {
        StepMark {
            k_bytes,
            limit_bytes,
            marked: 0,
            ect_admitted: 0,
        }
    }
}

impl ArrivalHook for StepMark {
    fn on_arrival(&mut self, a: &Arrival, pkt: &mut Packet) -> Verdict {
        if a.idle_since.is_none() && !DropTail::fits(self.limit_bytes, a.backlog_bytes, a.frame_bytes) {
            return Verdict::Drop(DropReason::TailDrop);
        }
        if !pkt.is_ect() {
            return Verdict::Admit;
        }
        self.ect_admitted += 1;
        if a.backlog_bytes > self.k_bytes {
            self.marked += 1;
            Verdict::AdmitMarked
        } else {
            Verdict::Admit
        }
    }
    fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }
}
