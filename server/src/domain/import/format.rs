//! The `verdict.event.v1` file format: the serde types a fixture deserializes into, and
//! [`parse`], which refuses a file that does not fit the format or breaks one of the rules
//! in `check.rs`. Nothing here touches the database.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::error::{AppError, AppResult};

pub const FORMAT: &str = "verdict.event.v1";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    pub format: String,
    pub event: FxEvent,
    #[serde(default)]
    pub tracks: Vec<FxTrack>,
    #[serde(default)]
    pub people: Vec<FxPerson>,
    #[serde(default)]
    pub organizers: Vec<String>,
    #[serde(default)]
    pub judges: Vec<FxJudge>,
    #[serde(default)]
    pub teams: Vec<FxTeam>,
    #[serde(default)]
    pub projects: Vec<FxProject>,
    #[serde(default)]
    pub criteria: Vec<FxCriterion>,
    #[serde(default)]
    pub reviews: Vec<FxReview>,
}

#[derive(Debug, Deserialize)]
pub struct FxEvent {
    pub external_id: String,
    pub slug: String,
    pub name: String,
    pub submissions_open: DateTime<Utc>,
    pub submissions_close: DateTime<Utc>,
    pub judging_open: Option<DateTime<Utc>>,
    pub judging_close: Option<DateTime<Utc>>,
    pub voting_open: Option<DateTime<Utc>>,
    pub voting_close: Option<DateTime<Utc>>,
    pub reviews_per_project: i32,
    pub max_team_size: i32,
    /// An IANA time zone name (optional; UTC when absent).
    #[serde(default)]
    pub time_zone: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct FxTrack {
    pub external_id: String,
    pub name: String,
}

#[derive(Debug, Deserialize)]
pub struct FxPerson {
    pub external_id: String,
    pub email: String,
    pub display_name: String,
}

#[derive(Debug, Deserialize)]
pub struct FxJudge {
    pub external_id: String,
    pub person: String,
    #[serde(default)]
    pub tracks: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct FxTeam {
    pub external_id: String,
    pub name: String,
    pub members: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct FxProject {
    pub external_id: String,
    pub team: String,
    pub track: String,
    pub title: String,
    #[serde(default)]
    pub tagline: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub repo_url: String,
    #[serde(default)]
    pub demo_url: String,
    #[serde(default)]
    pub tags: Vec<String>,
    pub status: String,
    pub submitted_at: Option<DateTime<Utc>>,
    /// The expo table (optional; at most 16 characters, unique in the event).
    #[serde(default)]
    pub table: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct FxCriterion {
    pub key: String,
    pub name: String,
    pub weight: f64,
    pub min: i32,
    pub max: i32,
    pub position: i32,
    /// What judges should look for (optional).
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Deserialize)]
pub struct FxReview {
    pub judge: String,
    pub project: String,
    pub scores: HashMap<String, i64>,
    #[serde(default)]
    pub comment: String,
    pub submitted_at: Option<DateTime<Utc>>,
}

/// Parses a fixture from JSON, naming the problem when it does not fit the format.
pub fn parse(value: serde_json::Value) -> AppResult<Fixture> {
    let f: Fixture =
        serde_json::from_value(value).map_err(|e| AppError::bad_input("fixture", e.to_string()))?;
    if f.format != FORMAT {
        return Err(AppError::bad_input(
            "fixture",
            format!("format must be {FORMAT:?}"),
        ));
    }
    super::check::check(&f)?;
    Ok(f)
}
