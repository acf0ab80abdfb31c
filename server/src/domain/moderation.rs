//! Organizer control of submissions: hide a project (it leaves the gallery), disqualify it
//! (it leaves the ranking), mark it a duplicate of another (it leaves both), each with the
//! reason its team is shown, each reversible and audited; moving a project to another
//! track on its team's behalf after the deadline; and the duplicates Verdict suggests.

use std::collections::{BTreeSet, HashMap};

use entity::{event, project};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel,
    QueryFilter, QueryOrder,
};
use serde_json::json;

use super::{Write, find_project, validate};
use crate::audit::Entry;
use crate::error::{AppError, AppResult};

/// What an organizer does to a project.
#[derive(Clone, Debug)]
pub enum Action {
    Hide(String),
    Unhide,
    Disqualify(String),
    Requalify,
    /// Marks it a duplicate of the project with this id.
    MarkDuplicate(String),
    ClearDuplicate,
    /// Moves it to another track of its event (the team's own edits stop at the deadline;
    /// this does not), with the reason.
    MoveTrack {
        track: String,
        reason: String,
    },
}

impl Action {
    fn audit_action(&self) -> &'static str {
        match self {
            Action::Hide(_) => "project.hidden",
            Action::Unhide => "project.unhidden",
            Action::Disqualify(_) => "project.disqualified",
            Action::Requalify => "project.requalified",
            Action::MarkDuplicate(_) => "project.marked_duplicate",
            Action::ClearDuplicate => "project.duplicate_cleared",
            Action::MoveTrack { .. } => "project.track_changed",
        }
    }
}

/// The project with `id` and its event, for that event's organizers.
async fn organized(w: &Write, id: &str) -> AppResult<(project::Model, event::Model)> {
    let txn = w.txn();
    let p = find_project(txn, id, None)
        .await?
        .ok_or(AppError::NotFound("project"))?;
    let e = w.event_by_id(p.event_id).await?;
    w.organizer(&e).await?;
    Ok((p, e))
}

fn reason(raw: &str) -> AppResult<String> {
    validate::name("reason", raw, 500)
}

/// Applies `action` to the project with `id` (organizers; at any time, since these are
/// the organizers' decisions, not the team's). Refuses what would change nothing
/// (CONFLICT), so the audit log records only real changes.
pub async fn moderate(w: &Write, id: &str, action: Action) -> AppResult<project::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let (p, e) = organized(w, id).await?;
    let mut payload = json!({});
    let mut am = p.clone().into_active_model();
    match &action {
        Action::Hide(r) => {
            if p.hidden_reason.is_some() {
                return Err(AppError::conflict("this project is already hidden"));
            }
            let r = reason(r)?;
            payload = json!({ "reason": r });
            am.hidden_reason = Set(Some(r));
        }
        Action::Unhide => {
            if p.hidden_reason.is_none() {
                return Err(AppError::conflict("this project is not hidden"));
            }
            am.hidden_reason = Set(None);
        }
        Action::Disqualify(r) => {
            if p.disqualified_reason.is_some() {
                return Err(AppError::conflict("this project is already disqualified"));
            }
            let r = reason(r)?;
            payload = json!({ "reason": r });
            am.disqualified_reason = Set(Some(r));
        }
        Action::Requalify => {
            if p.disqualified_reason.is_none() {
                return Err(AppError::conflict("this project is not disqualified"));
            }
            am.disqualified_reason = Set(None);
        }
        Action::MarkDuplicate(of) => {
            let original = find_project(txn, of, Some(e.id))
                .await?
                .filter(|o| o.event_id == e.id)
                .ok_or_else(|| AppError::bad_input("of", "no such project in this event"))?;
            if original.id == p.id {
                return Err(AppError::bad_input(
                    "of",
                    "a project is not a duplicate of itself",
                ));
            }
            if original.duplicate_of.is_some() {
                return Err(AppError::bad_input(
                    "of",
                    "that project is itself a duplicate: name the original",
                ));
            }
            if p.duplicate_of == Some(original.id) {
                return Err(AppError::conflict("this project is already marked so"));
            }
            let copies = project::Entity::find()
                .filter(project::Column::DuplicateOf.eq(p.id))
                .order_by_asc(project::Column::Id)
                .all(txn)
                .await?;
            if !copies.is_empty() {
                return Err(AppError::conflict(
                    "other projects are marked as duplicates of this one: clear them first",
                ));
            }
            payload = json!({ "of": original.public_id });
            am.duplicate_of = Set(Some(original.id));
        }
        Action::ClearDuplicate => {
            if p.duplicate_of.is_none() {
                return Err(AppError::conflict(
                    "this project is not marked as a duplicate",
                ));
            }
            am.duplicate_of = Set(None);
        }
        Action::MoveTrack { track, reason: r } => {
            let r = reason(r)?;
            let to = super::find_track(txn, track, Some(e.id))
                .await?
                .filter(|t| t.event_id == e.id)
                .ok_or_else(|| AppError::bad_input("track", "no such track in this event"))?;
            if to.id == p.track_id {
                return Err(AppError::conflict("the project is on this track already"));
            }
            payload = json!({ "to": to.public_id, "reason": r });
            am.track_id = Set(to.id);
        }
    }
    am.updated_at = Set(w.now());
    let p = am.update(txn).await?;
    w.append(
        Entry::new(action.audit_action(), "project", &p.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(payload),
    )
    .await?;
    Ok(p)
}

/// A likely duplicate: `project` looks like `of`, the earlier one.
pub struct Suggestion {
    pub project: project::Model,
    pub of: project::Model,
    /// `same_repository` or `similar_text`.
    pub reason: &'static str,
    /// 1.0 for the same repository; otherwise the similarity of title and summary.
    pub similarity: f64,
}

/// How alike two texts must be (Jaccard similarity of their word pairs) to be suggested.
pub const SIMILARITY: f64 = 0.8;

/// A repository URL reduced to what names the repository: no scheme, `www.`, trailing
/// slash or `.git`, lower case.
fn normalize_url(url: &str) -> Option<String> {
    let u = url.trim().to_lowercase();
    let u = u
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .trim_start_matches("www.")
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .to_owned();
    (!u.is_empty()).then_some(u)
}

/// The text's word pairs (shingles), lower case, punctuation dropped; single words when the
/// text has only one.
fn shingles(text: &str) -> BTreeSet<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if words.len() < 2 {
        return words.into_iter().collect();
    }
    words.windows(2).map(|w| w.join(" ")).collect()
}

/// Suggested duplicates among the event's submitted projects that are not yet marked: the
/// same repository, or near-identical title and summary. Each pair once, the later project
/// as the duplicate of the earlier (by submission, then creation).
pub async fn suggestions<C: ConnectionTrait>(db: &C, event_id: i64) -> AppResult<Vec<Suggestion>> {
    let mut projects = project::Entity::find_public(event_id)
        .filter(project::Column::DuplicateOf.is_null())
        .all(db)
        .await?;
    projects.sort_by_key(|p| (p.submitted_at, p.id));
    let mut out = Vec::new();
    let mut by_repo: HashMap<String, usize> = HashMap::new();
    let texts: Vec<BTreeSet<String>> = projects
        .iter()
        .map(|p| shingles(&format!("{} {}", p.title, p.summary)))
        .collect();
    for (i, p) in projects.iter().enumerate() {
        if let Some(url) = normalize_url(&p.repo_url) {
            if let Some(&first) = by_repo.get(&url) {
                out.push(Suggestion {
                    project: p.clone(),
                    of: projects[first].clone(),
                    reason: "same_repository",
                    similarity: 1.0,
                });
                continue;
            }
            by_repo.insert(url, i);
        }
        let best = (0..i)
            .map(|j| (j, similarity(&texts[i], &texts[j])))
            .filter(|(_, s)| *s >= SIMILARITY)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((j, s)) = best {
            out.push(Suggestion {
                project: p.clone(),
                of: projects[j].clone(),
                reason: "similar_text",
                similarity: s,
            });
        }
    }
    Ok(out)
}

/// The Jaccard similarity of two shingle sets: shared over all.
fn similarity(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let shared = a.intersection(b).count();
    shared as f64 / (a.len() + b.len() - shared) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_urls_are_compared_by_what_names_the_repository() {
        assert_eq!(
            normalize_url("https://www.GitHub.com/a/b.git/"),
            normalize_url("http://github.com/a/b")
        );
        assert_eq!(normalize_url("  "), None);
    }

    #[test]
    fn near_identical_texts_are_similar_and_different_ones_are_not() {
        let a = shingles("Solar Sync: a planner for solar-powered homes");
        let b = shingles("solar sync - a planner for solar powered homes!");
        let c = shingles("A chess engine written in Rust");
        assert_eq!(similarity(&a, &b), 1.0);
        assert!(similarity(&a, &c) < SIMILARITY);
    }
}
