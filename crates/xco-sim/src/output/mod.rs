//! What a run leaves behind: CSV tables, `meta.json` and pcap captures (taken
//! by the network's ports, [`crate::net::pcap`]).
//!
//! Everything is produced as text/bytes in memory and written by the caller
//! (the Python package or a test), so the simulator never touches the file
//! system. Floats print in Rust's shortest round-trip form, so the same run
//! gives byte-identical files.

pub mod csv_table;
pub mod hosts;
pub mod meta;
pub mod tables;
pub mod timeseries;

/// pcap captures: a tap of the network's ports ([`crate::net::pcap`]).
pub use crate::net::pcap;

/// `bytes` for people: `512 B`, `1.5 KiB`, `12.3 MiB`, `1.0 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_bytes_picks_the_unit() {
        use super::human_bytes;
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(1 << 30), "1.0 GiB");
    }
}
