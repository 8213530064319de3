//! Scenario files (TOML): the schema, its validation and the run.
//!
//! A scenario names a topology, TCP settings, applications and outputs. Every
//! field is checked; an unknown field, a negative rate or an unknown topology
//! gives a [`ScenarioError`] that names the field and says what is wrong.
//! See `scenarios/*.toml` in the repository for commented examples.

pub mod apps;
mod build;
pub mod limits;
mod locate;
pub mod queues;
mod record;
mod schema;
pub mod units;

pub use build::{build, run_scenario, run_scenario_with, Built, RunOutput};
pub use record::{RunRecord, SeedSource};
pub use schema::Scenario;

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
    sc.apps = apps::read_apps(text)?;
    sc.topology.queues = queues::read_queues(text)?;
    Ok(sc)
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
