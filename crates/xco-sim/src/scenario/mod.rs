//! Scenario files (TOML): the schema, its validation and the run.
//!
//! A scenario names a topology, TCP settings, applications and outputs. Every
//! field is checked; an unknown field, a negative rate or an unknown topology
//! gives a [`ScenarioError`] that names the field and says what is wrong.
//! See `scenarios/*.toml` in the repository for commented examples.

mod build;
mod schema;
pub mod units;

pub use build::{build, run_scenario, Built, RunOutput};
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

/// Parse scenario text.
pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    toml::from_str(text).map_err(|e| {
        let msg = e.message().to_string();
        let loc = e
            .span()
            .map(|s| {
                let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                format!(" (line {line})")
            })
            .unwrap_or_default();
        ScenarioError::field("", format!("invalid scenario{loc}: {msg}"))
    })
}
