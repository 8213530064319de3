//! Units in scenario files: rates ("1Gbps", "100 Mbit/s", 1e9), byte sizes
//! ("300KB", "9KiB", 300000) and host selectors ("a0..a31", "b*", lists).
//!
//! Units are case-sensitive, as in SI and IEC: `b` is a bit and `B` a byte,
//! `M` mega and `m` (milli) is no unit of ours. A rate takes bits per second
//! (`Gbps`, `Gbit/s`, `Gb/s`) or bytes per second (`GB/s`, `GBps`: times 8).
//! A size takes bytes only: `"64Kb"` (bits) or `"1GB/s"` (a rate) in a size
//! field is an error that names the field, never a silent factor of 8.

use super::limits::{MAX_BYTES, MAX_RATE_BPS};
use super::ScenarioError;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A rate or size as written: a number or a string with a unit.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Quantity {
    /// A plain number (bits per second, or bytes).
    Num(f64),
    /// A number with a unit.
    Text(String),
}

/// Split `"2.5 Gbps"` into `(2.5, "Gbps")`; the unit keeps its case, spaces go.
fn split_number(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let v: f64 = num.trim().parse().ok()?;
    Some((v, unit.replace(' ', "")))
}

/// Bits per second per unit of a rate, or `None` for an unknown unit.
fn rate_multiplier(unit: &str) -> Option<f64> {
    let bits = |p: &str| match p {
        "" => Some(1.0),
        "k" | "K" => Some(1e3),
        "M" => Some(1e6),
        "G" => Some(1e9),
        "T" => Some(1e12),
        _ => None,
    };
    if unit.is_empty() {
        return Some(1.0);
    }
    for suffix in ["bps", "bit/s", "b/s"] {
        if let Some(p) = unit.strip_suffix(suffix) {
            return bits(p);
        }
    }
    for suffix in ["Bps", "B/s"] {
        if let Some(p) = unit.strip_suffix(suffix) {
            return bits(p).map(|m| m * 8.0);
        }
    }
    // a bare prefix: "2.5G" is 2.5 Gbit/s
    match unit {
        "K" | "k" | "M" | "G" | "T" => bits(unit),
        _ => None,
    }
}

/// Bytes per unit of a size, or `None` for an unknown unit.
fn size_multiplier(unit: &str) -> Option<f64> {
    Some(match unit {
        "" | "B" | "bytes" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// Parse a rate in bits per second, from 1 bit/s to [`MAX_RATE_BPS`]; `field` names it in errors.
pub fn rate_bps(q: &Quantity, field: &str) -> Result<u64, ScenarioError> {
    let bad = |why: String| ScenarioError::field(field, why);
    let v = match q {
        Quantity::Num(v) => *v,
        Quantity::Text(s) => {
            let (v, unit) = split_number(s).ok_or_else(|| {
                bad(format!(
                    "cannot read {s:?} as a rate; write e.g. \"1Gbps\" or \"100Mbps\""
                ))
            })?;
            let Some(mult) = rate_multiplier(&unit) else {
                let hint = if size_multiplier(&unit).is_some() || bit_size(&unit) {
                    format!(
                        "{s:?} is a size, not a rate; write e.g. \"1Gbps\" (bits/s) or \"125MB/s\" (bytes/s)"
                    )
                } else if rate_multiplier(&case_fixed(&unit)).is_some() {
                    format!(
                        "unknown rate unit {unit:?} in {s:?}: units are case-sensitive (b = bit, B = byte, \
                         M = mega); did you mean {:?}?",
                        case_fixed(&unit)
                    )
                } else {
                    format!("unknown rate unit {unit:?} in {s:?}; use bps, Kbps, Mbps, Gbps or Tbps (or B/s, MB/s, ...)")
                };
                return Err(bad(hint));
            };
            v * mult
        }
    };
    if !(v.is_finite() && v >= 1.0) {
        return Err(bad(format!(
            "must be a positive rate of at least 1 bit/s, got {v}"
        )));
    }
    if v > MAX_RATE_BPS {
        return Err(bad(format!(
            "must be at most 10 Tbit/s ({MAX_RATE_BPS:e} bit/s), got {v:e} bit/s"
        )));
    }
    Ok(v.round() as u64)
}

/// True for a bit-count unit (`b`, `Kb`, `Mbit`, ...), which a size field refuses.
fn bit_size(unit: &str) -> bool {
    let p = unit
        .strip_suffix("bits")
        .or_else(|| unit.strip_suffix("bit"))
        .or_else(|| unit.strip_suffix('b'));
    matches!(p, Some("" | "k" | "K" | "M" | "G" | "T" | "Ki" | "Mi" | "Gi"))
}

/// `unit` with its prefix and byte/bit letters in the usual case (`gbps` -> `Gbps`), for hints.
fn case_fixed(unit: &str) -> String {
    let mut c = unit.chars();
    match c.next() {
        Some(p @ ('m' | 'g' | 't')) => format!("{}{}", p.to_ascii_uppercase(), c.as_str()),
        _ => unit.to_string(),
    }
}

/// Parse a size in bytes, from 0 to [`MAX_BYTES`]; `field` names it in errors.
pub fn bytes(q: &Quantity, field: &str) -> Result<u64, ScenarioError> {
    let bad = |why: String| ScenarioError::field(field, why);
    let v = match q {
        Quantity::Num(v) => *v,
        Quantity::Text(s) => {
            let (v, unit) = split_number(s).ok_or_else(|| {
                bad(format!(
                    "cannot read {s:?} as a size; write e.g. \"300KB\" or 300000"
                ))
            })?;
            let Some(mult) = size_multiplier(&unit) else {
                let why = if bit_size(&unit) {
                    format!("{s:?} is bits; a size takes bytes, e.g. \"8KB\" (B = byte, b = bit)")
                } else if rate_multiplier(&unit).is_some() && !unit.is_empty() {
                    format!("{s:?} is a rate; a size takes bytes, e.g. \"300KB\"")
                } else if ["b", "bytes", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib"]
                    .contains(&unit.to_ascii_lowercase().as_str())
                {
                    format!(
                        "unknown size unit {unit:?} in {s:?}: units are case-sensitive; a size takes bytes \
                         (B, KB, MB, GB, KiB, MiB, GiB; b is a bit)"
                    )
                } else {
                    format!("unknown size unit {unit:?} in {s:?}; use B, KB, MB, GB, KiB, MiB or GiB")
                };
                return Err(bad(why));
            };
            v * mult
        }
    };
    if !(v.is_finite() && v >= 0.0) {
        return Err(bad(format!("must be a non-negative number of bytes, got {v}")));
    }
    if v > MAX_BYTES {
        return Err(bad(format!(
            "must be at most 1 TB ({MAX_BYTES:e} bytes), got {v:e}"
        )));
    }
    Ok(v.round() as u64)
}

/// Host selection as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Hosts {
    /// One selector string.
    One(String),
    /// A list of selector strings.
    Many(Vec<String>),
}

/// The hosts of a topology by name, for selectors: lookups cost O(1), so a
/// 100,000-host scenario validates in well under a second.
pub struct HostIndex {
    names: Vec<String>,
    node_of: HashMap<String, u32>,
}

impl HostIndex {
    /// An index of `hosts`: (name, node id) in host order.
    pub fn new(hosts: impl IntoIterator<Item = (String, u32)>) -> HostIndex {
        let mut names = Vec::new();
        let mut node_of = HashMap::new();
        for (name, node) in hosts {
            node_of.insert(name.clone(), node);
            names.push(name);
        }
        HostIndex { names, node_of }
    }

    /// The node of host `name`.
    pub fn node(&self, name: &str) -> Option<u32> {
        self.node_of.get(name).copied()
    }

    /// Host names in node order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The node of the host named `name`, or an error about `field`.
    pub fn one(&self, name: &str, field: &str) -> Result<u32, ScenarioError> {
        self.node(name)
            .ok_or_else(|| ScenarioError::field(field, format!("no host named {name:?}")))
    }

    /// Resolve a selector into host nodes: `"a3"`, `"a0..a31"` (inclusive range),
    /// `"a*"` (every host whose name starts with `a`), or a list of those.
    pub fn select(&self, sel: &Hosts, field: &str) -> Result<Vec<u32>, ScenarioError> {
        Ok(self
            .select_names(sel, field)?
            .iter()
            .map(|n| self.node_of[n.as_str()])
            .collect())
    }

    /// [`HostIndex::select`], returning names.
    pub fn select_names(&self, sel: &Hosts, field: &str) -> Result<Vec<String>, ScenarioError> {
        let items: Vec<&String> = match sel {
            Hosts::One(s) => vec![s],
            Hosts::Many(v) => v.iter().collect(),
        };
        let mut out = Vec::new();
        for s in items {
            let s = s.trim();
            if let Some(prefix) = s.strip_suffix('*') {
                let before = out.len();
                out.extend(self.names.iter().filter(|n| n.starts_with(prefix)).cloned());
                if out.len() == before {
                    return Err(ScenarioError::field(field, format!("{s:?} matches no host")));
                }
            } else if let Some((a, b)) = s.split_once("..") {
                let (pa, na) = split_index(a).ok_or_else(|| range_err(field, s))?;
                let (pb, nb) = split_index(b).ok_or_else(|| range_err(field, s))?;
                if pa != pb || na > nb {
                    return Err(range_err(field, s));
                }
                if nb - na >= self.names.len() as u64 {
                    return Err(ScenarioError::field(
                        field,
                        format!(
                            "{s:?} names more hosts than the topology has ({})",
                            self.names.len()
                        ),
                    ));
                }
                for i in na..=nb {
                    let name = format!("{pa}{i}");
                    if self.node(&name).is_none() {
                        return Err(ScenarioError::field(
                            field,
                            format!("no host named {name:?} (from {s:?})"),
                        ));
                    }
                    out.push(name);
                }
            } else {
                self.one(s, field)?;
                out.push(s.to_string());
            }
        }
        if out.is_empty() {
            return Err(ScenarioError::field(field, "selects no host".into()));
        }
        Ok(out)
    }
}

fn split_index(s: &str) -> Option<(&str, u64)> {
    let i = s.find(|c: char| c.is_ascii_digit())?;
    let (p, n) = s.split_at(i);
    Some((p, n.parse().ok()?))
}

fn range_err(field: &str, s: &str) -> ScenarioError {
    ScenarioError::field(
        field,
        format!("{s:?} is not a range like \"a0..a31\" (same prefix, ascending)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_sizes_with_units() {
        let r = |s: &str| rate_bps(&Quantity::Text(s.into()), "x");
        assert_eq!(r("1Gbps").unwrap(), 1_000_000_000);
        assert_eq!(r("100 Mbps").unwrap(), 100_000_000);
        assert_eq!(r("2.5G").unwrap(), 2_500_000_000);
        assert_eq!(r("10Gbit/s").unwrap(), 10_000_000_000);
        assert_eq!(r("1GB/s").unwrap(), 8_000_000_000, "B/s is bytes per second");
        assert_eq!(r("1e9").unwrap(), 1_000_000_000);
        assert!(r("-1Gbps").unwrap_err().to_string().contains("positive"));
        assert!(r("1 furlong").unwrap_err().to_string().contains("unit"));
        assert!(r("1gbps").unwrap_err().to_string().contains("case-sensitive"));
        assert!(r("1GB").unwrap_err().to_string().contains("a size, not a rate"));
        assert!(r("1e30").unwrap_err().to_string().contains("at most"));
        let b = |s: &str| bytes(&Quantity::Text(s.into()), "x");
        assert_eq!(b("300KB").unwrap(), 300_000);
        assert_eq!(b("9KiB").unwrap(), 9216);
        assert_eq!(b("1.5kB").unwrap(), 1500);
        assert!(bytes(&Quantity::Num(-5.0), "x").is_err());
        assert!(b("64Kb").unwrap_err().to_string().contains("is bits"));
        assert!(b("8b").unwrap_err().to_string().contains("is bits"));
        assert!(b("1GB/s").unwrap_err().to_string().contains("is a rate"));
        assert!(b("1gb").unwrap_err().to_string().contains("case-sensitive"));
        assert!(b("2TB").unwrap_err().to_string().contains("at most"));
    }

    #[test]
    fn host_selectors() {
        let idx = HostIndex::new(
            ["a0", "a1", "a2", "b0"]
                .iter()
                .enumerate()
                .map(|(i, s)| (s.to_string(), i as u32)),
        );
        let sel = |h: Hosts| idx.select_names(&h, "apps[0].servers");
        assert_eq!(sel(Hosts::One("a0..a2".into())).unwrap(), vec!["a0", "a1", "a2"]);
        assert_eq!(sel(Hosts::One("a*".into())).unwrap().len(), 3);
        assert_eq!(
            sel(Hosts::Many(vec!["b0".into(), "a1".into()])).unwrap(),
            vec!["b0", "a1"]
        );
        assert_eq!(idx.select(&Hosts::One("b0".into()), "f").unwrap(), vec![3]);
        let e = sel(Hosts::One("a0..a9".into())).unwrap_err().to_string();
        assert!(e.contains("apps[0].servers") && e.contains("more hosts"), "{e}");
        let e = sel(Hosts::One("a0..a3".into())).unwrap_err().to_string();
        assert!(e.contains("apps[0].servers") && e.contains("a3"), "{e}");
    }
}
