//! Units in scenario files: rates ("1Gbps", "100 Mbit/s", 1e9), byte sizes
//! ("300KB", "9KiB", 300000) and host selectors ("a0..a31", "b*", lists).

use super::ScenarioError;
use serde::Deserialize;

/// A rate or size as written: a number or a string with a unit.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Quantity {
    /// A plain number (bits per second, or bytes).
    Num(f64),
    /// A number with a unit.
    Text(String),
}

fn split_number(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let v: f64 = num.trim().parse().ok()?;
    Some((v, unit.trim().to_ascii_lowercase().replace(' ', "")))
}

/// Parse a rate in bits per second; `field` names it in errors.
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
            let mult = match unit.as_str() {
                "" | "bps" | "bit/s" | "b/s" => 1.0,
                "k" | "kbps" | "kbit/s" | "kb/s" => 1e3,
                "m" | "mbps" | "mbit/s" | "mb/s" => 1e6,
                "g" | "gbps" | "gbit/s" | "gb/s" => 1e9,
                "t" | "tbps" | "tbit/s" | "tb/s" => 1e12,
                _ => {
                    return Err(bad(format!(
                        "unknown rate unit {unit:?} in {s:?}; use bps, Kbps, Mbps, Gbps or Tbps"
                    )))
                }
            };
            v * mult
        }
    };
    if !(v.is_finite() && v >= 1.0) {
        return Err(bad(format!(
            "must be a positive rate of at least 1 bit/s, got {v}"
        )));
    }
    Ok(v.round() as u64)
}

/// Parse a size in bytes; `field` names it in errors.
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
            let mult = match unit.as_str() {
                "" | "b" | "bytes" => 1.0,
                "kb" => 1e3,
                "mb" => 1e6,
                "gb" => 1e9,
                "kib" => 1024.0,
                "mib" => 1024.0 * 1024.0,
                "gib" => 1024.0 * 1024.0 * 1024.0,
                _ => {
                    return Err(bad(format!(
                        "unknown size unit {unit:?} in {s:?}; use B, KB, MB, GB, KiB, MiB or GiB"
                    )))
                }
            };
            v * mult
        }
    };
    if !(v.is_finite() && v >= 0.0) {
        return Err(bad(format!("must be a non-negative number of bytes, got {v}")));
    }
    Ok(v.round() as u64)
}

/// Host selection as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Hosts {
    /// One selector string.
    One(String),
    /// A list of selector strings.
    Many(Vec<String>),
}

/// Resolve a selector into host names: `"a3"`, `"a0..a31"` (inclusive range),
/// `"a*"` (every host whose name starts with `a`), or a list of those.
pub fn select_hosts(sel: &Hosts, host_names: &[String], field: &str) -> Result<Vec<String>, ScenarioError> {
    let items: Vec<&String> = match sel {
        Hosts::One(s) => vec![s],
        Hosts::Many(v) => v.iter().collect(),
    };
    let mut out = Vec::new();
    for s in items {
        let s = s.trim();
        if let Some(prefix) = s.strip_suffix('*') {
            let before = out.len();
            out.extend(host_names.iter().filter(|n| n.starts_with(prefix)).cloned());
            if out.len() == before {
                return Err(ScenarioError::field(field, format!("{s:?} matches no host")));
            }
        } else if let Some((a, b)) = s.split_once("..") {
            let (pa, na) = split_index(a).ok_or_else(|| range_err(field, s))?;
            let (pb, nb) = split_index(b).ok_or_else(|| range_err(field, s))?;
            if pa != pb || na > nb {
                return Err(range_err(field, s));
            }
            for i in na..=nb {
                let name = format!("{pa}{i}");
                if !host_names.contains(&name) {
                    return Err(ScenarioError::field(
                        field,
                        format!("no host named {name:?} (from {s:?})"),
                    ));
                }
                out.push(name);
            }
        } else {
            if !host_names.iter().any(|n| n == s) {
                return Err(ScenarioError::field(field, format!("no host named {s:?}")));
            }
            out.push(s.to_string());
        }
    }
    if out.is_empty() {
        return Err(ScenarioError::field(field, "selects no host".into()));
    }
    Ok(out)
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
        assert!(r("-1Gbps").unwrap_err().to_string().contains("positive"));
        assert!(r("1 furlong").unwrap_err().to_string().contains("unit"));
        let b = |s: &str| bytes(&Quantity::Text(s.into()), "x");
        assert_eq!(b("300KB").unwrap(), 300_000);
        assert_eq!(b("9KiB").unwrap(), 9216);
        assert!(bytes(&Quantity::Num(-5.0), "x").is_err());
    }

    #[test]
    fn host_selectors() {
        let names: Vec<String> = ["a0", "a1", "a2", "b0"].iter().map(|s| s.to_string()).collect();
        let sel = |h: Hosts| select_hosts(&h, &names, "apps[0].servers");
        assert_eq!(sel(Hosts::One("a0..a2".into())).unwrap(), vec!["a0", "a1", "a2"]);
        assert_eq!(sel(Hosts::One("a*".into())).unwrap().len(), 3);
        assert_eq!(
            sel(Hosts::Many(vec!["b0".into(), "a1".into()])).unwrap(),
            vec!["b0", "a1"]
        );
        let e = sel(Hosts::One("a0..a9".into())).unwrap_err().to_string();
        assert!(e.contains("apps[0].servers") && e.contains("a3"), "{e}");
    }
}
