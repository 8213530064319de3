//! Scenario files (TOML): the schema, its validation and the run.
//!
//! A scenario names a topology, TCP settings, applications and outputs. Every
//! field is checked; an unknown field, a negative rate or an unknown topology
//! gives a [`ScenarioError`] that names the field and says what is wrong.
//! See `scenarios/*.toml` in the repository for commented examples.

pub mod apps;
mod build;
pub mod estimate;
pub mod limits;
mod locate;
pub mod queues;
mod record;
mod schema;
mod tree3;
pub mod units;

pub use build::{
    build, estimate, run_built, run_scenario, run_scenario_opts, run_scenario_with, Built, RunOptions,
    RunOutput,
};
pub use record::{RunRecord, SeedSource};
pub use schema::Scenario;
use serde::Deserialize;

/// A scenario that cannot be run, with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// Dotted path of the field (`topology.host_rate`), or empty for the whole file.
    pub field: String,
    /// What is wrong and, where possible, what to write instead.
    pub message: String,
}

impl ScenarioError {
    /// An error about `field`.
    pub fn field(field: &str, message: String) -> ScenarioError {
        ScenarioError {
            field: field.to_string(),
            message,
        }
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Parse scenario text; a reading error names the key at fault (`apps[2].sru`).
pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    let mut sc: Scenario = toml::from_str(text).map_err(|e| located(text, e))?;
    // a profile may set app keys: the apps are read from the merged text then
    let mut merged = None;
    if let Some(name) = sc.run.profile.clone() {
        let (with, apps_text) = with_profile(text, sc, &name)?;
        sc = with;
        merged = apps_text;
    }
    (sc.apps, sc.app_tcp) = apps::read_apps(merged.as_deref().unwrap_or(text))?;
    sc.topology.queues = queues::read_queues(text)?;
    Ok(sc)
}

/// `sc` (read from `text`, its profiles already checked) with profile
/// `name`'s settings merged over its own, key by key; and, when the profile
/// sets app keys, the merged scenario's text to read the apps from.
fn with_profile(text: &str, sc: Scenario, name: &str) -> Result<(Scenario, Option<String>), ScenarioError> {
    if !sc.profiles.contains_key(name) {
        let names: Vec<&str> = sc.profiles.keys().map(String::as_str).collect();
        let defined = if names.is_empty() {
            "the scenario defines none: add a [profiles.NAME] table".to_string()
        } else {
            format!("defined: {}", names.join(", "))
        };
        return Err(ScenarioError::field(
            "run.profile",
            format!("no profile {name:?} ({defined})"),
        ));
    }
    let mut doc: toml::Table = toml::from_str(text).map_err(|e| located(text, e))?;
    let over = doc
        .get("profiles")
        .and_then(|p| p.get(name))
        .and_then(|p| p.as_table())
        .cloned()
        .unwrap_or_default();
    let sets_apps = over.contains_key("apps");
    for (key, value) in over {
        if key == "about" {
            continue;
        }
        if key == "apps" {
            // one table of keys for every [[apps]] entry
            if let Some(toml::Value::Array(apps)) = doc.get_mut("apps") {
                for app in apps.iter_mut() {
                    merge(app, value.clone());
                }
            }
            continue;
        }
        merge(
            doc.entry(key)
                .or_insert_with(|| toml::Value::Table(toml::Table::new())),
            value,
        );
    }
    let apps_text = if sets_apps {
        Some(
            toml::to_string(&doc)
                .map_err(|e| ScenarioError::field(&format!("profiles.{name}"), e.to_string()))?,
        )
    } else {
        None
    };
    let sc = Scenario::deserialize(toml::Value::Table(doc))
        .map_err(|e| ScenarioError::field(&format!("profiles.{name}"), e.to_string()))?;
    Ok((sc, apps_text))
}

/// Merge `over` into `base`: tables key by key, anything else replaced.
fn merge(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

/// A TOML reading error as a [`ScenarioError`] naming the key path of its span.
pub(crate) fn located(text: &str, e: toml::de::Error) -> ScenarioError {
    {
        let msg = e.message().trim_end().to_string();
        let Some(span) = e.span() else {
            return ScenarioError::field("", format!("invalid scenario: {msg}"));
        };
        let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
        let mut path = locate::key_path_at(text, span.start);
        // an unknown or missing field reported at its table: name the field
        if let Some(name) = msg
            .strip_prefix("unknown field `")
            .or_else(|| msg.strip_prefix("missing field `"))
            .and_then(|r| r.split('`').next())
        {
            if !path.ends_with(name) {
                path = if path.is_empty() {
                    name.to_string()
                } else {
                    format!("{path}.{name}")
                };
            }
        }
        if path.is_empty() {
            ScenarioError::field("", format!("invalid scenario (line {line}): {msg}"))
        } else {
            ScenarioError::field(&path, format!("{msg} (line {line})"))
        }
    }
}
