//! Pacing as Linux paces: segments leave `frame / (gain x cwnd / SRTT)`
//! apart, the gain 200% in slow start and 120% in congestion avoidance.

use crate::support::sender_established;
use xco_core::Dur;
use xco_sim::tcp::TcpConfig;

/// Gaps between consecutive departures, ps.
fn gaps(sent: &[(u64, u64, xco_core::Time)]) -> Vec<u64> {
    sent.windows(2).map(|w| w[1].2.ps() - w[0].2.ps()).collect()
}

#[test]
fn paced_segments_leave_frame_over_gain_cwnd_over_srtt_apart() {
    let cfg = TcpConfig {
        pacing: true,
        ..TcpConfig::for_mtu(1500)
    };
    for (slow_start, gain) in [(true, 200u128), (false, 120)] {
        let mut s = sender_established(cfg.clone());
        let mss = s.mss;
        let frame =
            (cfg.header_bytes as u64 + mss + s.sim.cx.net.framing.frame_overhead_bytes as u64) as u128;
        s.write(1_000 * mss);
        let first = s.drain_timed();
        assert_eq!(first.len(), 10, "no RTT yet: the initial window unpaced");
        assert!(first.iter().all(|x| x.2 == first[0].2));
        if !slow_start {
            s.sim.tcp.eps[s.ep as usize].win.ssthresh = 4 * mss;
        }
        s.advance(Dur::from_us(100));
        s.ack_with_ts(6 * mss, 1); // SRTT = 100 us (less 1 ps)
        let cwnd = s.ep().win.cwnd as u128;
        let srtt_ps = s.ep().rtt.srtt().unwrap().ps() as u128;
        s.advance(Dur::from_ms(1));
        let sent = s.drain_timed();
        assert!(sent.len() >= 6, "{} sent", sent.len());
        // rate = gain x cwnd / SRTT bytes per second; gap = frame / rate
        let rate_bytes_per_s = cwnd * gain * 10_000_000_000 / srtt_ps;
        let want_ps = (frame * 1_000_000_000_000 / rate_bytes_per_s) as u64;
        for g in gaps(&sent) {
            assert_eq!(g, want_ps, "gain {gain}%: gap {g} ps");
        }
        let unpaced = gaps(&first);
        assert!(unpaced.iter().all(|&g| g == 0));
    }
}

#[test]
fn without_pacing_the_window_leaves_at_once() {
    let mut s = sender_established(TcpConfig::for_mtu(1500));
    let mss = s.mss;
    s.write(1_000 * mss);
    s.drain_timed();
    s.advance(Dur::from_us(100));
    s.ack_with_ts(2 * mss, 1);
    let sent = s.drain_timed();
    assert!(sent.len() >= 3);
    assert!(gaps(&sent).iter().all(|&g| g == 0));
}
