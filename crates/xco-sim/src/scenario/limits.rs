//! The bounds of every numeric scenario field, and the readers that apply them.
//!
//! A scenario that passes `xco sim check` must not exhaust memory or run
//! forever, so every number has a generous but finite range. Times are read
//! in the unit their field names (`_ms`, `_us`) and turned into [`Dur`]; a
//! value outside its range is an error naming the field and the range.
//!
//! | what | bound |
//! | --- | --- |
//! | any simulated time (`run.duration_ms`, `start_ms`, `controller_stop_ms`, ...) | 0 to 3,600,000 ms (one simulated hour) |
//! | a run without `duration_ms` | stops at one simulated hour at the latest |
//! | rates | 1 bit/s to 10 Tbit/s |
//! | sizes | 0 to 1 TB |
//! | `topology.link_delay_us`, `delay_us` | 0 to 1,000,000 us (1 s) |
//! | `topology.host_jitter_us`, `switch_jitter_us` | 0 to 1,000 us |
//! | the XCo settings (`xco.slice_ms`, `xco.fail_open_ms`, ...) | as `xco_core::coord::settings` bounds them for the daemons too |
//! | `output.timeseries_bin_us` | 0 (off) or 10 us up; at most 10^7 bins in `duration_ms` |
//! | ping `interval_us` | 1 us up; at most 10^7 probes in a run |
//! | UDP messages | at most 10^9 per second per source |
//! | `pdn.queue_notices` | 1 to 1,000,000 notifications per port |
//! | `host.txqueuelen` | 64 to 1,000,000 packets (64: a 64 KB UDP message, 45 fragments at MTU 1500, fits whole with the 4-packet headroom) |
//! | `host.udp_sndbuf` | 4,608 B (Linux's smallest) to 1 GB |
//! | `host.tsq_limit_bytes` | 0 (off) or 1,538 B (one full frame) to 1 GB |
//! | hosts | 100,000 per topology (`explicit`: 200,000 nodes, 1,000,000 links) |
//! | RED `max_p`, `weight` | above 0, at most 1 |
//! | RED `mean_packet` | 64 B to 1 MB |
//! | SFQ `buckets` | 1 to 65,536 per port (as Linux); 16,000,000 over all ports (4 bytes each: 64 MB) |
//! | SFQ `quantum` | 1 B to 1 MB; `depth_packets` 1 to 100,000 |

use super::ScenarioError;
use xco_core::Dur;

/// Longest simulated time any field may name, ms (one simulated hour); also
/// where a run without `run.duration_ms` stops at the latest.
pub const MAX_SIM_TIME_MS: f64 = 3_600_000.0;
/// Largest rate, bit/s (10 Tbit/s).
pub const MAX_RATE_BPS: f64 = 1e13;
/// Largest size, bytes (1 TB).
pub const MAX_BYTES: f64 = 1e12;
/// Longest link propagation delay, us (1 s).
pub const MAX_LINK_DELAY_US: f64 = 1e6;
/// Largest timing noise of a host or a switch, us (`topology.host_jitter_us`, `switch_jitter_us`).
pub const MAX_JITTER_US: f64 = 1_000.0;
/// Shortest time-series bin, us.
pub const MIN_BIN_US: f64 = 10.0;
/// Most time-series bins in a run of known duration.
pub const MAX_BINS: f64 = 1e7;
/// Most ping probes in one ping app.
pub const MAX_PROBES: f64 = 1e7;
/// Most notifications one port's PDN notification queue may hold.
pub const MAX_PDN_QUEUE_NOTICES: u32 = 1_000_000;
/// Shortest NIC queue, packets (`host.txqueuelen`).
pub const MIN_TXQUEUELEN: u64 = 64;
/// Longest NIC queue, packets.
pub const MAX_TXQUEUELEN: u64 = 1_000_000;
/// Smallest UDP send buffer, bytes (Linux's `SOCK_MIN_SNDBUF` on 64-bit).
pub const MIN_UDP_SNDBUF_BYTES: u64 = 4_608;
/// Largest UDP send buffer, bytes (1 GB).
pub const MAX_UDP_SNDBUF_BYTES: u64 = 1_000_000_000;
/// Smallest TSQ cap, bytes (one full frame; 0 turns TSQ off).
pub const MIN_TSQ_LIMIT_BYTES: u64 = 1_538;
/// Largest TSQ cap, bytes (1 GB).
pub const MAX_TSQ_LIMIT_BYTES: u64 = 1_000_000_000;
/// Most UDP messages per second of one source.
pub const MAX_UDP_MSGS_PER_S: f64 = 1e9;
/// Most hosts of a topology (a k = 96 fat-tree has 221,184; what a run may
/// hold in memory is checked separately, from its estimate).
pub const MAX_HOSTS: usize = 250_000;
/// Most nodes of an explicit topology.
pub const MAX_NODES: usize = 300_000;
/// Most links of an explicit topology.
pub const MAX_LINKS: usize = 2_000_000;
/// Largest k of a generated fat-tree (k^3/4 hosts: 221,184 at k = 96).
pub const MAX_FAT_TREE_K: usize = 96;
/// Most incast rounds, short-flow sequences' flows, counts.
pub const MAX_COUNT: u64 = 1_000_000_000;
/// Smallest RED typical frame, bytes.
pub const MIN_RED_MEAN_PACKET_BYTES: u64 = 64;
/// Largest RED typical frame, bytes.
pub const MAX_RED_MEAN_PACKET_BYTES: u64 = 1_000_000;
/// Most hash buckets of one SFQ port (Linux's divisor limit).
pub const MAX_SFQ_BUCKETS: u32 = 65_536;
/// Most SFQ hash buckets over all ports of a run (each costs 4 bytes).
pub const MAX_QUEUE_BUCKETS: u64 = 16_000_000;
/// Largest SFQ quantum, bytes.
pub const MAX_SFQ_QUANTUM_BYTES: u64 = 1_000_000;
/// Most packets in one SFQ bucket.
pub const MAX_SFQ_DEPTH_PACKETS: u64 = 100_000;
/// Most rows one queue timeline keeps.
pub const MAX_TIMELINE_ROWS: u64 = 10_000_000;
/// `output.max_file_bytes` when the scenario does not set it: 1 GiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1 << 30;
/// The smallest `output.max_file_bytes`: 1 KiB.
pub const MIN_MAX_FILE_BYTES: u64 = 1 << 10;
/// Data frames one ON period of the ON/OFF drop model may drop.
pub const MAX_ONOFF_ON_PACKETS: u64 = 1_000_000;
/// Largest step-marking threshold, full frames.
pub const MAX_STEP_K_PACKETS: u64 = 1_000_000;

/// A time in ms within `[min_ms, max_ms]` (default `default_ms`), as a [`Dur`].
pub fn ms(
    v: Option<f64>,
    field: &str,
    default_ms: f64,
    min_ms: f64,
    max_ms: f64,
) -> Result<Dur, ScenarioError> {
    let x = v.unwrap_or(default_ms);
    check_range(x, field, min_ms, max_ms, "ms")?;
    Ok(Dur::from_secs_f64(x / 1e3))
}

/// A time in us within `[min_us, max_us]` (default `default_us`), as a [`Dur`].
pub fn us(
    v: Option<f64>,
    field: &str,
    default_us: f64,
    min_us: f64,
    max_us: f64,
) -> Result<Dur, ScenarioError> {
    let x = v.unwrap_or(default_us);
    check_range(x, field, min_us, max_us, "us")?;
    Ok(Dur::from_secs_f64(x / 1e6))
}

/// A simulated time in ms from 0 to [`MAX_SIM_TIME_MS`].
pub fn sim_ms(v: Option<f64>, field: &str, default_ms: f64) -> Result<Dur, ScenarioError> {
    ms(v, field, default_ms, 0.0, MAX_SIM_TIME_MS)
}

/// A simulated time in us from 0 to [`MAX_SIM_TIME_MS`].
pub fn sim_us(v: Option<f64>, field: &str, default_us: f64) -> Result<Dur, ScenarioError> {
    us(v, field, default_us, 0.0, MAX_SIM_TIME_MS * 1e3)
}

fn check_range(x: f64, field: &str, min: f64, max: f64, unit: &str) -> Result<(), ScenarioError> {
    if x.is_finite() && x >= min && x <= max {
        return Ok(());
    }
    let what = if min == 0.0 {
        "a non-negative time"
    } else {
        "a time"
    };
    Err(ScenarioError::field(
        field,
        format!("must be {what} from {min} to {max} {unit}, got {x}"),
    ))
}

/// A probability or weight in (0, 1] (default `default`).
pub fn fraction(v: Option<f64>, field: &str, default: f64) -> Result<f64, ScenarioError> {
    let x = v.unwrap_or(default);
    if x.is_finite() && x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err(ScenarioError::field(
            field,
            format!("must be above 0 and at most 1, got {x}"),
        ))
    }
}

/// A count within `[min, max]`.
pub fn count<T: Copy + Into<u64> + std::fmt::Display>(
    v: T,
    field: &str,
    min: u64,
    max: u64,
) -> Result<T, ScenarioError> {
    let x: u64 = v.into();
    if (min..=max).contains(&x) {
        Ok(v)
    } else {
        Err(ScenarioError::field(
            field,
            format!("must be from {min} to {max}, got {v}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_outside_their_range_name_the_field() {
        assert_eq!(ms(Some(2.0), "x", 0.0, 0.0, 10.0).unwrap(), Dur::from_ms(2));
        assert_eq!(us(None, "x", 5.0, 0.0, 10.0).unwrap(), Dur::from_us(5));
        for bad in [f64::NAN, f64::INFINITY, -1.0, 1e300] {
            let e = sim_ms(Some(bad), "apps[0].start_ms", 0.0)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("apps[0].start_ms: must be"), "{e}");
        }
        let e = count(0u32, "apps[1].rounds", 1, 10).unwrap_err().to_string();
        assert_eq!(e, "apps[1].rounds: must be from 1 to 10, got 0");
    }
}
