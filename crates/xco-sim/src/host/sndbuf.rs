//! A UDP socket's send buffer, as Linux keeps it: a datagram's bytes are
//! charged to its socket from the write until the NIC has sent its last
//! fragment (the driver frees the buffer at transmit completion). A write
//! may go ahead while the charged bytes are below the buffer's size (Linux's
//! `sock_alloc_send_skb` waits for `sk_wmem_alloc < sk_sndbuf`, so one
//! datagram may overshoot it); otherwise the application blocks.
//!
//! On a host XCo coordinates, the guest's socket hands datagrams to the
//! coordinator (the paper's Dom0) at once; the bound there is the
//! coordinator's per-destination queue, which the caller checks instead.
//!
//! The charged fragments are a list of (transmit-complete time, frame bytes)
//! in sending order, trimmed lazily when the buffer is asked, like a FIFO
//! port's waiting list: nothing is scheduled per packet.

use std::collections::VecDeque;
use xco_core::Time;

/// One socket's send buffer.
#[derive(Clone, Debug, Default)]
pub struct SendBuffer {
    /// Size, bytes.
    pub limit_bytes: u64,
    /// Charged fragments: (time the NIC finishes sending it, frame bytes).
    charged: VecDeque<(Time, u32)>,
    charged_bytes: u64,
}

impl SendBuffer {
    /// An empty buffer of `limit_bytes`.
    pub fn new(limit_bytes: u64) -> SendBuffer {
        SendBuffer {
            limit_bytes,
            charged: VecDeque::new(),
            charged_bytes: 0,
        }
    }

    /// Bytes still charged at `now` (fragments not yet sent by the NIC).
    pub fn charged_bytes(&mut self, now: Time) -> u64 {
        while let Some(&(done, bytes)) = self.charged.front() {
            if done > now {
                break;
            }
            self.charged.pop_front();
            self.charged_bytes -= bytes as u64;
        }
        self.charged_bytes
    }

    /// True if a write may go ahead at `now`.
    pub fn writable(&mut self, now: Time) -> bool {
        self.charged_bytes(now) < self.limit_bytes
    }

    /// When a write may go ahead if nothing more is charged (`None`: now).
    pub fn writable_at(&mut self, now: Time) -> Option<Time> {
        let mut left = self.charged_bytes(now);
        if left < self.limit_bytes {
            return None;
        }
        for &(done, bytes) in &self.charged {
            left -= bytes as u64;
            if left < self.limit_bytes {
                return Some(done);
            }
        }
        None
    }

    /// Charge a fragment of `frame_bytes` that the NIC finishes sending at `done`.
    pub fn charge(&mut self, done: Time, frame_bytes: u32) {
        self.charged.push_back((done, frame_bytes));
        self.charged_bytes += frame_bytes as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xco_core::Dur;

    fn us(x: u64) -> Time {
        Time::ZERO + Dur::from_us(x)
    }

    #[test]
    fn a_write_waits_until_the_nic_has_sent_enough() {
        let mut b = SendBuffer::new(3_000);
        assert!(b.writable(Time::ZERO));
        b.charge(us(10), 1_500);
        b.charge(us(20), 1_500);
        // 3,000 charged: not below the size
        assert!(!b.writable(us(5)));
        assert_eq!(b.writable_at(us(5)), Some(us(10)));
        // the first fragment's transmit completion frees it
        assert!(b.writable(us(10)));
        assert_eq!(b.charged_bytes(us(10)), 1_500);
        assert_eq!(b.charged_bytes(us(20)), 0);
    }
}
