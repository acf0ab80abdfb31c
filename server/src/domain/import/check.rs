//! Every rule a fixture must satisfy before anything is written: valid fields and ranges,
//! unique external ids and emails, and references (team members, judges, projects,
//! reviews) that name rows of the same file. A refusal names the offending row.

use std::collections::{HashMap, HashSet};

use entity::project::ProjectStatus;
use sea_orm::ActiveEnum;

use super::format::{Fixture, FxCriterion, FxProject};
use crate::domain::{judging, validate};
use crate::error::{AppError, AppResult};

/// A refusal of the whole file, naming the row at fault (e.g. `project prj_007: ...`).
pub(super) fn row_err(row: impl std::fmt::Display, message: impl std::fmt::Display) -> AppError {
    AppError::bad_input("fixture", format!("{row}: {message}"))
}

/// A fixture project's status, which the file spells as the database stores it.
pub(super) fn status_of(p: &FxProject) -> AppResult<ProjectStatus> {
    ProjectStatus::try_from_value(&p.status).map_err(|_| {
        row_err(
            format!("project {}", p.external_id),
            format!("unknown status {:?}", p.status),
        )
    })
}

fn unique<'a>(kind: &str, ids: impl Iterator<Item = &'a str>) -> AppResult<()> {
    let mut seen = HashSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(row_err(format!("{kind} {id}"), "duplicate external id"));
        }
    }
    Ok(())
}

/// Every rule a fixture must satisfy before anything is written.
pub(super) fn check(f: &Fixture) -> AppResult<()> {
    let e = &f.event;
    let row = format!("event {}", e.external_id);
    validate::external_id("event.external_id", &e.external_id).map_err(|m| row_err(&row, m))?;
    validate::slug("event.slug", &e.slug).map_err(|m| row_err(&row, m))?;
    validate::name("event.name", &e.name, validate::NAME_MAX).map_err(|m| row_err(&row, m))?;
    validate::window(
        "submissions",
        Some(e.submissions_open),
        Some(e.submissions_close),
    )
    .map_err(|m| row_err(&row, m))?;
    validate::window("judging", e.judging_open, e.judging_close).map_err(|m| row_err(&row, m))?;
    validate::window("voting", e.voting_open, e.voting_close).map_err(|m| row_err(&row, m))?;
    if let Some(z) = &e.time_zone {
        validate::time_zone("event.time_zone", z).map_err(|m| row_err(&row, m))?;
    }
    if e.reviews_per_project < 1 || e.max_team_size < 1 {
        return Err(row_err(
            &row,
            "reviews_per_project and max_team_size must be at least 1",
        ));
    }
    unique("track", f.tracks.iter().map(|t| t.external_id.as_str()))?;
    unique("person", f.people.iter().map(|t| t.external_id.as_str()))?;
    unique("judge", f.judges.iter().map(|t| t.external_id.as_str()))?;
    unique("team", f.teams.iter().map(|t| t.external_id.as_str()))?;
    unique("project", f.projects.iter().map(|t| t.external_id.as_str()))?;
    unique("criterion", f.criteria.iter().map(|t| t.key.as_str()))?;
    let mut emails = HashSet::new();
    for p in &f.people {
        let r = format!("person {}", p.external_id);
        let email = validate::email("email", &p.email).map_err(|m| row_err(&r, m))?;
        if !emails.insert(email) {
            return Err(row_err(&r, "duplicate email (emails are case-insensitive)"));
        }
        validate::name("display_name", &p.display_name, 100).map_err(|m| row_err(&r, m))?;
    }
    for t in &f.tracks {
        validate::name("name", &t.name, validate::NAME_MAX)
            .map_err(|m| row_err(format!("track {}", t.external_id), m))?;
    }
    let people: HashSet<&str> = f.people.iter().map(|p| p.external_id.as_str()).collect();
    let tracks: HashSet<&str> = f.tracks.iter().map(|p| p.external_id.as_str()).collect();
    let teams: HashSet<&str> = f.teams.iter().map(|p| p.external_id.as_str()).collect();
    let mut organizers = HashSet::new();
    for o in &f.organizers {
        if !people.contains(o.as_str()) {
            return Err(row_err(format!("organizer {o}"), "unknown person"));
        }
        if !organizers.insert(o.as_str()) {
            return Err(row_err(format!("organizer {o}"), "listed twice"));
        }
    }
    let mut on_team: HashMap<&str, &str> = HashMap::new();
    for t in &f.teams {
        let r = format!("team {}", t.external_id);
        validate::name("name", &t.name, validate::NAME_MAX).map_err(|m| row_err(&r, m))?;
        if t.members.len() > e.max_team_size as usize {
            return Err(row_err(
                &r,
                format!("more than {} members", e.max_team_size),
            ));
        }
        for m in &t.members {
            if !people.contains(m.as_str()) {
                return Err(row_err(&r, format!("unknown person {m}")));
            }
            if let Some(other) = on_team.insert(m.as_str(), t.external_id.as_str()) {
                return Err(row_err(&r, format!("{m} is already on team {other}")));
            }
        }
    }
    let mut judging: HashMap<&str, &str> = HashMap::new();
    for j in &f.judges {
        let r = format!("judge {}", j.external_id);
        if !people.contains(j.person.as_str()) {
            return Err(row_err(&r, format!("unknown person {}", j.person)));
        }
        // One judge row per person: an event has one judge membership per person.
        if let Some(other) = judging.insert(j.person.as_str(), j.external_id.as_str()) {
            return Err(row_err(
                &r,
                format!("{} already judges as {other}", j.person),
            ));
        }
        if let Some(t) = on_team.get(j.person.as_str()) {
            return Err(row_err(
                &r,
                format!("{} is on team {t} and cannot judge", j.person),
            ));
        }
        for t in &j.tracks {
            if !tracks.contains(t.as_str()) {
                return Err(row_err(&r, format!("unknown track {t}")));
            }
        }
    }
    let mut project_status: HashMap<&str, ProjectStatus> = HashMap::new();
    let mut tables: HashMap<String, &str> = HashMap::new();
    for p in &f.projects {
        let r = format!("project {}", p.external_id);
        if let Some(t) = crate::domain::tables::parse("table", p.table.as_deref().unwrap_or(""))
            .map_err(|m| row_err(&r, m))?
            && let Some(other) = tables.insert(t.to_lowercase(), p.external_id.as_str())
        {
            return Err(row_err(&r, format!("table {t:?} is project {other}'s too")));
        }
        if !teams.contains(p.team.as_str()) {
            return Err(row_err(&r, format!("unknown team {}", p.team)));
        }
        if !tracks.contains(p.track.as_str()) {
            return Err(row_err(&r, format!("unknown track {}", p.track)));
        }
        validate::name("title", &p.title, validate::TITLE_MAX).map_err(|m| row_err(&r, m))?;
        validate::line("tagline", &p.tagline, validate::TAGLINE_MAX).map_err(|m| row_err(&r, m))?;
        validate::text("summary", &p.summary, validate::SUMMARY_MAX).map_err(|m| row_err(&r, m))?;
        validate::text("description", &p.description, validate::DESCRIPTION_MAX)
            .map_err(|m| row_err(&r, m))?;
        validate::url("repo_url", &p.repo_url).map_err(|m| row_err(&r, m))?;
        validate::url("demo_url", &p.demo_url).map_err(|m| row_err(&r, m))?;
        validate::tags("tags", &p.tags).map_err(|m| row_err(&r, m))?;
        let status = status_of(p)?;
        match (status, p.submitted_at) {
            (ProjectStatus::Submitted, Some(_))
            | (ProjectStatus::Draft, None)
            | (ProjectStatus::Withdrawn, _) => {}
            (ProjectStatus::Submitted, None) => {
                return Err(row_err(&r, "a submitted project needs submitted_at"));
            }
            (ProjectStatus::Draft, Some(_)) => {
                return Err(row_err(&r, "a draft has no submitted_at"));
            }
        }
        project_status.insert(p.external_id.as_str(), status);
    }
    let criteria: HashMap<&str, &FxCriterion> =
        f.criteria.iter().map(|c| (c.key.as_str(), c)).collect();
    for c in &f.criteria {
        let r = format!("criterion {}", c.key);
        if !(c.weight > 0.0 && c.weight.is_finite()) || c.min >= c.max {
            return Err(row_err(&r, "weight must be positive and min below max"));
        }
        // The rules saveCriterion holds a criterion to (key, name, description).
        judging::check_criterion(&judging::CriterionFields {
            key: c.key.clone(),
            name: c.name.clone(),
            weight: c.weight,
            min: c.min,
            max: c.max,
            position: c.position,
            description: Some(c.description.clone()),
        })
        .map_err(|m| row_err(&r, m))?;
    }
    let judges: HashSet<&str> = f.judges.iter().map(|j| j.external_id.as_str()).collect();
    let mut reviewed = HashSet::new();
    for (i, rv) in f.reviews.iter().enumerate() {
        let r = format!("review #{} ({} on {})", i + 1, rv.judge, rv.project);
        if !judges.contains(rv.judge.as_str()) {
            return Err(row_err(&r, "unknown judge"));
        }
        if !project_status.contains_key(rv.project.as_str()) {
            return Err(row_err(&r, "unknown project"));
        }
        validate::text("comment", &rv.comment, judging::COMMENT_MAX).map_err(|m| row_err(&r, m))?;
        if !reviewed.insert((rv.judge.as_str(), rv.project.as_str())) {
            return Err(row_err(&r, "a judge reviews a project once"));
        }
        for (k, v) in &rv.scores {
            let c = criteria
                .get(k.as_str())
                .ok_or_else(|| row_err(&r, format!("unknown criterion {k}")))?;
            if *v < c.min as i64 || *v > c.max as i64 {
                return Err(row_err(
                    &r,
                    format!("score {v} for {k} is outside {}..{}", c.min, c.max),
                ));
            }
        }
        if rv.scores.len() != criteria.len() {
            return Err(row_err(&r, "a review scores every criterion"));
        }
    }
    Ok(())
}
