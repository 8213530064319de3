//! Proportional Rate Reduction (RFC 6937) as Linux runs it in SACK recovery.
//!
//! Without PRR the SACK recovery of [`super::sack_recovery`] sets cwnd to
//! ssthresh at once (RFC 6675): with a window's worth of data still in
//! flight it sends nothing until the pipe has drained below ssthresh, then a
//! burst. Linux (since 3.2) spreads the reduction over the recovery instead:
//! per ACK, the segments it may send follow what that ACK reports delivered
//! (`tcp_cwnd_reduction` in `net/ipv4/tcp_input.c`, 6.x):
//!
//! ```text
//! prr_delivered += newly_acked_sacked
//! delta = ssthresh - in_flight
//! if delta < 0:  sndcnt = ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out
//! else:          sndcnt = min(delta, max(prr_delivered - prr_out, newly_acked_sacked)
//!                                    + 1 if snd_una advanced and nothing was newly lost)
//! sndcnt = max(sndcnt, 1 if prr_out == 0 else 0)   # the fast retransmit
//! cwnd = in_flight + sndcnt
//! ```
//!
//! and `prr_out` counts every segment sent in the episode. Here the counts
//! are bytes (Linux counts packets; one segment = one MSS), `in_flight` is
//! RFC 6675's pipe, `prior_cwnd` the window before the congestion control
//! reduced it, and "newly lost" means the ACK moved the lost boundary (the
//! scoreboard's or RACK's). Leaving recovery sets cwnd = ssthresh, as
//! before and as Linux's `tcp_end_cwnd_reduction`. Not modelled: PRR in
//! NewReno (non-SACK) recovery and in the ECN window reduction (Linux's CWR
//! state); both keep their RFC behaviour.

/// One recovery episode's PRR counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// cwnd when the episode began, bytes (Linux's `prior_cwnd`).
    pub prior_cwnd_bytes: u64,
    /// Bytes the receiver reported delivered (cumulatively or by SACK) in the episode.
    pub delivered_bytes: u64,
    /// Bytes sent in the episode (retransmissions and new data).
    pub out_bytes: u64,
    /// The lost boundary after the previous ACK (to tell newly lost data).
    pub lost_mark: u64,
}

impl Prr {
    /// A new episode that began with a window of `prior_cwnd_bytes`.
    pub fn start(prior_cwnd_bytes: u64, lost_mark: u64) -> Prr {
        Prr {
            prior_cwnd_bytes: prior_cwnd_bytes.max(1),
            delivered_bytes: 0,
            out_bytes: 0,
            lost_mark,
        }
    }

    /// The cwnd after an ACK that reported `delivered_bytes` delivered, with
    /// `pipe_bytes` in flight; `una_advanced`: the ACK moved snd_una;
    /// `newly_lost`: it marked data lost. An ACK that delivered nothing
    /// leaves the window as it was (`None`).
    pub fn cwnd_after_ack(
        &mut self,
        delivered_bytes: u64,
        pipe_bytes: u64,
        ssthresh_bytes: u64,
        mss_bytes: u64,
        una_advanced: bool,
        newly_lost: bool,
    ) -> Option<u64> {
        if delivered_bytes == 0 {
            return None;
        }
        self.delivered_bytes += delivered_bytes;
        let sndcnt = if pipe_bytes > ssthresh_bytes {
            // proportional part: ceil(ssthresh * delivered / prior_cwnd) - out,
            // rounded up to whole segments as Linux's packet counts are
            let due = (ssthresh_bytes as u128 * self.delivered_bytes as u128)
                .div_ceil(self.prior_cwnd_bytes as u128);
            let seg = mss_bytes.max(1);
            ((due as u64).div_ceil(seg) * seg).saturating_sub(self.out_bytes)
        } else {
            // slow-start reduction bound: grow back towards ssthresh no
            // faster than slow start would
            let mut limit = self
                .delivered_bytes
                .saturating_sub(self.out_bytes)
                .max(delivered_bytes);
            if una_advanced && !newly_lost {
                limit += mss_bytes;
            }
            limit.min(ssthresh_bytes - pipe_bytes)
        };
        let sndcnt = if self.out_bytes == 0 {
            sndcnt.max(mss_bytes)
        } else {
            sndcnt
        };
        Some(pipe_bytes + sndcnt)
    }

    /// `len_bytes` were sent in the episode.
    #[inline]
    pub fn on_sent(&mut self, len_bytes: u64) {
        self.out_bytes += len_bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn while_the_pipe_is_above_ssthresh_the_sender_sends_ssthresh_over_prior_cwnd_per_delivered_byte() {
        // prior cwnd 20 segments, ssthresh 14 (CUBIC's 0.7): after d segments
        // delivered, ceil(14 d / 20) may have been sent in all
        let mut p = Prr::start(20 * MSS, 0);
        p.on_sent(MSS); // the fast retransmit
        let mut sent = MSS;
        for d in 1..=10u64 {
            let cwnd = p
                .cwnd_after_ack(MSS, 18 * MSS, 14 * MSS, MSS, false, false)
                .unwrap();
            let may = cwnd - 18 * MSS;
            p.on_sent(may);
            sent += may;
            assert_eq!(sent, (14 * d).div_ceil(20).max(1) * MSS, "after {d} delivered");
        }
        assert_eq!(sent, 7 * MSS);
    }

    #[test]
    fn below_ssthresh_the_window_grows_back_by_at_most_what_was_delivered_plus_one_segment() {
        let mut p = Prr::start(20 * MSS, 0);
        p.on_sent(3 * MSS);
        // pipe 4 segments, ssthresh 14: the bound, not the gap of 10, limits
        let cwnd = p
            .cwnd_after_ack(2 * MSS, 4 * MSS, 14 * MSS, MSS, true, false)
            .unwrap();
        assert_eq!(cwnd, 4 * MSS + 2 * MSS + MSS);
        // a newly lost segment takes the extra one away
        let mut q = Prr::start(20 * MSS, 0);
        q.on_sent(3 * MSS);
        let cwnd = q
            .cwnd_after_ack(2 * MSS, 4 * MSS, 14 * MSS, MSS, true, true)
            .unwrap();
        assert_eq!(cwnd, 4 * MSS + 2 * MSS);
        // never above ssthresh
        let mut r = Prr::start(20 * MSS, 0);
        r.on_sent(MSS);
        let cwnd = r
            .cwnd_after_ack(9 * MSS, 12 * MSS, 14 * MSS, MSS, true, false)
            .unwrap();
        assert_eq!(cwnd, 14 * MSS);
    }

    #[test]
    fn the_first_ack_of_an_episode_allows_the_fast_retransmit_and_an_empty_ack_changes_nothing() {
        let mut p = Prr::start(10 * MSS, 0);
        // 1 byte delivered of a 10-segment window: the proportional share
        // rounds up to one segment, the fast retransmit
        let cwnd = p.cwnd_after_ack(1, 9 * MSS, 7 * MSS, MSS, false, false).unwrap();
        assert_eq!(cwnd, 10 * MSS);
        assert_eq!(p.cwnd_after_ack(0, 9 * MSS, 7 * MSS, MSS, true, false), None);
    }
}
