//! Tracks renamed, and removed while nothing uses them (the organizers of their event).
//! What uses a track: its projects (drafts and withdrawn ones too), its prizes, and the
//! judges limited to it. A track in use is refused with CONFLICT naming what uses it, so
//! the organizer knows what to move first; the database's foreign keys hold the same for
//! projects and prizes.

use entity::{event, membership, prize, project, track};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, IntoActiveModel, ModelTrait,
    QueryFilter,
};
use serde_json::json;

use super::write::Write;
use super::{Role, find_track, json_ids, validate};
use crate::audit::Entry;
use crate::error::{AppError, AppResult};

/// The track with `id` (id or external id) and its event, for the event's organizers.
async fn organized(w: &Write, id: &str) -> AppResult<(track::Model, event::Model)> {
    let t = find_track(w.txn(), id, None)
        .await?
        .ok_or(AppError::NotFound("track"))?;
    let e = w.event_by_id(t.event_id).await?;
    if e.archived_at.is_some() {
        return Err(AppError::NotFound("track"));
    }
    w.organizer(&e).await?;
    Ok((t, e))
}

/// Renames a track. CONFLICT when the name is the same already (nothing to record).
pub async fn rename_track(w: &Write, id: &str, name: &str) -> AppResult<track::Model> {
    let txn = w.txn();
    let (t, e) = organized(w, id).await?;
    let name = validate::name("name", name, validate::NAME_MAX)?;
    if name == t.name {
        return Err(AppError::conflict(format!(
            "the track is called {name:?} already"
        )));
    }
    let from = t.name.clone();
    let mut am = t.into_active_model();
    am.name = Set(name);
    let t = am.update(txn).await?;
    w.append(
        Entry::new("track.renamed", "track", &t.public_id)
            .by(w.actor()?.public_id())
            .in_event(&e.external_id)
            .with(json!({ "name": t.name, "from": from })),
    )
    .await?;
    Ok(t)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Deletes a track nothing uses. CONFLICT naming its projects (the first few by title),
/// prizes and the judges limited to it otherwise.
pub async fn delete_track(w: &Write, id: &str) -> AppResult<track::Model> {
    let txn = w.txn();
    let (t, e) = organized(w, id).await?;
    let projects = project::Entity::find()
        .filter(project::Column::TrackId.eq(t.id))
        .all(txn)
        .await?;
    let prizes = prize::Entity::find()
        .filter(prize::Column::TrackId.eq(t.id))
        .all(txn)
        .await?;
    let judges = membership::Entity::find()
        .filter(membership::Column::EventId.eq(e.id))
        .filter(membership::Column::Role.eq(Role::Judge))
        .all(txn)
        .await?
        .into_iter()
        .filter(|m| json_ids(&m.judge_tracks).contains(&t.id))
        .count();
    let mut uses = vec![];
    if !projects.is_empty() {
        let titles: Vec<String> = projects
            .iter()
            .take(3)
            .map(|p| format!("{:?}", p.title))
            .collect();
        let more = if projects.len() > 3 { ", ..." } else { "" };
        uses.push(format!(
            "{} ({}{more})",
            plural(projects.len(), "project", "projects"),
            titles.join(", ")
        ));
    }
    if !prizes.is_empty() {
        let names: Vec<String> = prizes.iter().map(|p| format!("{:?}", p.name)).collect();
        uses.push(format!(
            "{} ({})",
            plural(prizes.len(), "prize", "prizes"),
            names.join(", ")
        ));
    }
    if judges > 0 {
        uses.push(plural(
            judges,
            "judge limited to it",
            "judges limited to it",
        ));
    }
    if !uses.is_empty() {
        return Err(AppError::conflict(format!(
            "the track {:?} is in use by {}: move or change them first",
            t.name,
            uses.join(", ")
        )));
    }
    t.clone().delete(txn).await?;
    w.append(
        Entry::new("track.deleted", "track", &t.public_id)
            .by(w.actor()?.public_id())
            .in_event(&e.external_id)
            .with(json!({ "name": t.name })),
    )
    .await?;
    Ok(t)
}
