//! What a run leaves behind: CSV tables, `meta.json` and pcap captures.
//!
//! Everything is produced as text/bytes in memory and written by the caller
//! (the Python package or a test), so the simulator never touches the file
//! system. Floats print in Rust's shortest round-trip form, so the same run
//! gives byte-identical files.

pub mod csv_table;
pub mod hosts;
pub mod meta;
pub mod pcap;
pub mod tables;
