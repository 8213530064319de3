//! Units in scenario files: rates ("1Gbps", "100 Mbit/s"), byte sizes
//! ("300KB", "9KiB") and host selectors ("a0..a31", "b*", lists).
//!
//! A rate or a size must carry its unit: a bare number (`host_rate = 1000`,
//! `sru = "10000"`) is an error that names the field, never read silently
//! as bits per second or bytes. Only a key whose name carries its unit
//! (`tsq_limit_bytes`, `max_file_bytes`) takes a bare number, read in that
//! unit ([`bytes_in_name`]).
//!
//! Units are case-sensitive, as in SI and IEC: `b` is a bit and `B` a byte,
//! `M` mega and `m` (milli) is no unit of ours. A rate takes bits per second
//! (`Gbps`, `Gbit/s`, `Gb/s`) or bytes per second (`GB/s`, `GBps`: times 8).
//! A size takes bytes only: `"64Kb"` (bits) or `"1GB/s"` (a rate) in a size
//! field is an error that names the field, never a silent factor of 8.

use super::limits::{MAX_BYTES, MAX_RATE_BPS};
use super::ScenarioError;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::HashMap;
use std::fmt;

/// A rate or size: a number with a unit as written, a bare number as
/// written (refused when read), or a number the program itself gives.
#[derive(Clone, Debug)]
pub enum Quantity {
    /// A number from the program, not a file (a default): bits per second, or bytes.
    Num(f64),
    /// A number with a unit, as written.
    Text(String),
    /// A number written without a unit: an error when read as a rate or size.
    Bare(f64),
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Quantity, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number with a unit, such as \"1Gbps\" or \"300KB\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Quantity, E> {
                Ok(Quantity::Text(s.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity::Bare(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity::Bare(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity::Bare(v as f64))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Quantity::Num(v) | Quantity::Bare(v) => s.serialize_f64(*v),
            Quantity::Text(t) => s.serialize_str(t),
        }
    }
}

/// Read an optional size whose key names its unit (`tsq_limit_bytes`): a
/// bare number there is bytes (for `#[serde(deserialize_with)]`).
pub fn bytes_in_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Quantity>, D::Error> {
    Ok(Option::<Quantity>::deserialize(d)?.map(|q| match q {
        Quantity::Bare(v) => Quantity::Num(v),
        q => q,
    }))
}

/// The error for a bare number in a rate or size field.
fn bare(field: &str, v: f64, what: &str, example: &str, units: &str) -> ScenarioError {
    ScenarioError::field(
        field,
        format!("a bare number ({v}) has no unit; write the {what} with one, e.g. {example} ({units})"),
    )
}

const RATE_UNITS: &str = "bps, Kbps, Mbps, Gbps, Tbps; B/s, MB/s, ... for bytes per second";
const SIZE_UNITS: &str = "B, KB, MB, GB, KiB, MiB, GiB";

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
        "B" | "bytes" => 1.0,
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
        Quantity::Bare(v) => return Err(bare(field, *v, "rate", "\"1000Mbps\" or \"1Gbps\"", RATE_UNITS)),
        Quantity::Text(s) => {
            let (v, unit) = split_number(s).ok_or_else(|| {
                bad(format!(
                    "cannot read {s:?} as a rate; write e.g. \"1Gbps\" or \"100Mbps\""
                ))
            })?;
            if unit.is_empty() {
                return Err(bare(field, v, "rate", "\"1000Mbps\" or \"1Gbps\"", RATE_UNITS));
            }
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
        Quantity::Bare(v) => return Err(bare(field, *v, "size", "\"300KB\" or \"1500B\"", SIZE_UNITS)),
        Quantity::Text(s) => {
            let (v, unit) = split_number(s).ok_or_else(|| {
                bad(format!(
                    "cannot read {s:?} as a size; write e.g. \"300KB\" or \"1500B\""
                ))
            })?;
            if unit.is_empty() {
                return Err(bare(field, v, "size", "\"300KB\" or \"1500B\"", SIZE_UNITS));
            }
            let Some(mult) = size_multiplier(&unit) else {
                let why = if bit_size(&unit) {
                    format!("{s:?} is bits; a size takes bytes, e.g. \"8KB\" (B = byte, b = bit)")
                } else if rate_multiplier(&unit).is_some() {
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
        assert_eq!(r("1e9bps").unwrap(), 1_000_000_000);
        assert!(r("-1Gbps").unwrap_err().to_string().contains("positive"));
        assert!(r("1 furlong").unwrap_err().to_string().contains("unit"));
        assert!(r("1gbps").unwrap_err().to_string().contains("case-sensitive"));
        assert!(r("1GB").unwrap_err().to_string().contains("a size, not a rate"));
        assert!(r("1e30bps").unwrap_err().to_string().contains("at most"));
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

    #[derive(Deserialize)]
    struct Read {
        q: Quantity,
        #[serde(default, deserialize_with = "bytes_in_name")]
        limit_bytes: Option<Quantity>,
    }

    fn read(toml_text: &str) -> Read {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn a_bare_number_is_an_error_naming_the_field() {
        for text in ["q = 1000", "q = 1e9", "q = \"1000\"", "q = \" 1e9 \""] {
            let q = read(text).q;
            let e = rate_bps(&q, "topology.host_rate").unwrap_err().to_string();
            assert!(
                e.starts_with("topology.host_rate: a bare number") && e.contains("Gbps"),
                "{text}: {e}"
            );
            let e = bytes(&q, "apps[0].sru").unwrap_err().to_string();
            assert!(
                e.starts_with("apps[0].sru: a bare number") && e.contains("KB"),
                "{text}: {e}"
            );
        }
        // a zero has no unit either
        assert!(bytes(&read("q = 0").q, "x").is_err());
        // the program's own defaults are numbers
        assert_eq!(rate_bps(&Quantity::Num(1e9), "x").unwrap(), 1_000_000_000);
    }

    #[test]
    fn a_key_that_names_its_unit_takes_a_bare_number() {
        let r = read("q = \"1Gbps\"\nlimit_bytes = 4096");
        assert_eq!(
            bytes(r.limit_bytes.as_ref().unwrap(), "limit_bytes").unwrap(),
            4096
        );
        let r = read("q = \"1Gbps\"\nlimit_bytes = \"4KiB\"");
        assert_eq!(
            bytes(r.limit_bytes.as_ref().unwrap(), "limit_bytes").unwrap(),
            4096
        );
        assert!(read("q = \"1Gbps\"").limit_bytes.is_none());
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
