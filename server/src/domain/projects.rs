//! Projects: drafted, edited and submitted by their team inside the submission window.

use chrono::{DateTime, Utc};
use entity::project::ProjectStatus;
use entity::{event, project};
use sea_orm::{ActiveEnum, ActiveModelTrait, ActiveValue::Set, ConnectionTrait, IntoActiveModel};
use serde_json::json;

use super::{Access, Write, require_submissions_open, validate};
use crate::audit::Entry;
use crate::crypto::public_id;
use crate::error::{AppError, AppResult};

/// Project content from a client; on update, `None` leaves a field unchanged.
#[derive(Debug, Clone, Default)]
pub struct ProjectFields {
    pub title: Option<String>,
    pub tagline: Option<String>,
    pub summary: Option<String>,
    pub description: Option<String>,
    pub repo_url: Option<String>,
    pub demo_url: Option<String>,
    pub tags: Option<Vec<String>>,
    pub track: Option<String>,
    /// The expo table; empty clears it (see [`super::tables`]).
    pub table: Option<String>,
}

impl ProjectFields {
    fn changed(&self) -> Vec<&'static str> {
        [
            ("title", self.title.is_some()),
            ("tagline", self.tagline.is_some()),
            ("summary", self.summary.is_some()),
            ("description", self.description.is_some()),
            ("repoUrl", self.repo_url.is_some()),
            ("demoUrl", self.demo_url.is_some()),
            ("tags", self.tags.is_some()),
            ("track", self.track.is_some()),
            ("table", self.table.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, set)| set.then_some(k))
        .collect()
    }
}

async fn apply<C: ConnectionTrait>(
    txn: &C,
    am: &mut project::ActiveModel,
    event_id: i64,
    project_id: Option<i64>,
    f: ProjectFields,
) -> AppResult<()> {
    if let Some(v) = f.table {
        let table = super::tables::parse("table", &v)?;
        if let Some(t) = &table {
            super::tables::ensure_free(txn, event_id, t, project_id).await?;
        }
        am.expo_table = Set(table);
    }
    if let Some(v) = f.title {
        am.title = Set(validate::name("title", &v, validate::TITLE_MAX)?);
    }
    if let Some(v) = f.tagline {
        am.tagline = Set(validate::line("tagline", &v, validate::TAGLINE_MAX)?);
    }
    if let Some(v) = f.summary {
        am.summary = Set(validate::text("summary", &v, validate::SUMMARY_MAX)?);
    }
    if let Some(v) = f.description {
        am.description = Set(validate::text(
            "description",
            &v,
            validate::DESCRIPTION_MAX,
        )?);
    }
    if let Some(v) = f.repo_url {
        am.repo_url = Set(validate::url("repoUrl", &v)?);
    }
    if let Some(v) = f.demo_url {
        am.demo_url = Set(validate::url("demoUrl", &v)?);
    }
    if let Some(v) = f.tags {
        let tags = validate::tags("tags", &v)?;
        am.tags = Set(serde_json::to_string(&tags).unwrap_or_else(|_| "[]".into()));
    }
    if let Some(t) = f.track {
        // A track of another event is, from here, simply not a track.
        let tr = super::find_track(txn, &t, Some(event_id))
            .await?
            .filter(|tr| tr.event_id == event_id)
            .ok_or_else(|| AppError::bad_input("track", "no such track in this event"))?;
        am.track_id = Set(tr.id);
    }
    Ok(())
}

/// The caller's team creates a draft. The team comes from the caller's own membership,
/// never from the input.
pub async fn create_project(
    w: &Write,
    e: &event::Model,
    f: ProjectFields,
) -> AppResult<project::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    // `e` was read (and locked) in this write: a window moved since the client's last read
    // is seen here.
    let t = w.now();
    require_submissions_open(e, t)?;
    let access = Access::load(txn, &actor.user).await?;
    let team_id = access
        .team_in(e.id)
        .ok_or_else(|| AppError::forbidden("join or create a team in this event first"))?;
    if f.title.is_none() {
        return Err(AppError::bad_input("title", "is required"));
    }
    if f.track.is_none() {
        return Err(AppError::bad_input("track", "is required"));
    }
    let changed = f.changed();
    let mut am = project::ActiveModel {
        public_id: Set(public_id("prj")),
        event_id: Set(e.id),
        team_id: Set(team_id),
        external_id: Set(public_id("p")),
        tagline: Set(String::new()),
        summary: Set(String::new()),
        description: Set(String::new()),
        repo_url: Set(String::new()),
        demo_url: Set(String::new()),
        tags: Set("[]".into()),
        status: Set(ProjectStatus::Draft),
        submitted_at: Set(None),
        duplicate_of: Set(None),
        created_at: Set(t),
        updated_at: Set(t),
        ..Default::default()
    };
    apply(txn, &mut am, e.id, None, f).await?;
    let p = am.insert(txn).await?;
    w.append(
        Entry::new("project.created", "project", &p.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "title": p.title, "fields": changed })),
    )
    .await?;
    Ok(p)
}

/// Loads a project for a write by its own team: NOT_FOUND when the caller cannot see it,
/// FORBIDDEN when they can but it is not theirs, WINDOW_CLOSED outside the window. Returns
/// it with its event and the time the window was checked at (the database's clock).
async fn for_team_write(
    w: &Write,
    id: &str,
) -> AppResult<(project::Model, event::Model, DateTime<Utc>)> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let p = super::find_project(txn, id, None)
        .await?
        .ok_or(AppError::NotFound("project"))?;
    let access = Access::load(txn, &actor.user).await?;
    if !access.can_see_project(&p) {
        return Err(AppError::NotFound("project"));
    }
    // Locked: the window is checked against the event as it stands until commit.
    let e = w.event_by_id(p.event_id).await?;
    // Who may change it before when: a caller off the team is refused as such, whatever
    // the time (a closed window is news only to the team).
    if !access.on_team(p.event_id, p.team_id) {
        return Err(AppError::forbidden("only the project's team may change it"));
    }
    let t = w.now();
    require_submissions_open(&e, t)?;
    Ok((p, e, t))
}

pub async fn update_project(w: &Write, id: &str, f: ProjectFields) -> AppResult<project::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let (p, e, t) = for_team_write(w, id).await?;
    if p.status == ProjectStatus::Withdrawn {
        return Err(AppError::conflict(
            "a withdrawn project cannot be edited; submit it again first",
        ));
    }
    let changed = f.changed();
    let id = p.id;
    let mut am = p.into_active_model();
    apply(txn, &mut am, e.id, Some(id), f).await?;
    am.updated_at = Set(t);
    let p = am.update(txn).await?;
    w.append(
        Entry::new("project.updated", "project", &p.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "fields": changed })),
    )
    .await?;
    Ok(p)
}

async fn set_status(w: &Write, id: &str, to: ProjectStatus) -> AppResult<project::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let (p, e, t) = for_team_write(w, id).await?;
    let from = p.status;
    let allowed = match to {
        ProjectStatus::Submitted => from != ProjectStatus::Submitted,
        _ => from == ProjectStatus::Submitted,
    };
    if !allowed {
        return Err(AppError::conflict(format!(
            "a {} project cannot become {}",
            from.to_value(),
            to.to_value()
        )));
    }
    let mut am = p.into_active_model();
    am.status = Set(to);
    if to == ProjectStatus::Submitted {
        am.submitted_at = Set(Some(t));
    }
    am.updated_at = Set(t);
    let p = am.update(txn).await?;
    let action = if to == ProjectStatus::Submitted {
        "project.submitted"
    } else {
        "project.withdrawn"
    };
    w.append(
        Entry::new(action, "project", &p.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "from": from.to_value() })),
    )
    .await?;
    Ok(p)
}

pub async fn submit_project(w: &Write, id: &str) -> AppResult<project::Model> {
    set_status(w, id, ProjectStatus::Submitted).await
}

/// Withdrawal is a status change, never a delete.
pub async fn withdraw_project(w: &Write, id: &str) -> AppResult<project::Model> {
    set_status(w, id, ProjectStatus::Withdrawn).await
}
