//! Signed event bundles (issue 12): `verdict event export` writes an event as one signed
//! JSON document, and `verdict event import` brings it in as a new event, on this
//! deployment or another.
//!
//! A bundle carries the event's structure and people, never its judging: the event as a
//! `verdict.event.v1` fixture ([`crate::domain::import`]) with its settings and windows,
//! tracks, rubric, people (email and display name), organizers, judges (with their tracks),
//! teams and members, and projects, but no reviews; beside it the participants without a
//! team, the prizes (without winners), the community vote's configuration (mode, credits,
//! allowlist; the window is the fixture's voting window) and the organizers' moderation of
//! projects (hidden, disqualified, duplicates), so that a hidden project does not come back.
//! Never scores, comments, assignments, results, the audit chain, password hashes, tokens or
//! votes.
//!
//! ## The document (`verdict.event-bundle.v1`)
//!
//! Canonical JSON of `{ "format", "bundle", "public_key", "signature" }`: `signature` is
//! the deployment's Ed25519 signature under the domain tag [`EVENT_BUNDLE_TAG`] over the
//! canonical JSON of `bundle`, whose `key_fingerprint` names the key; `public_key` is that
//! key as PEM. Any changed byte fails, as for participation records.
//!
//! ## Import
//!
//! The signature is checked first, against this deployment's key or a pinned one (another
//! deployment's bundle), before anything is written. The event arrives new or not at all:
//! an existing external id or slug is a CONFLICT (`--slug` and `--external-id` import it
//! under another name). It arrives invite-only, with no passwords (people who have no
//! account yet are invited as after any import), no results and an unpublished vote.

use std::collections::{HashMap, HashSet};

use entity::{
    criterion, event, membership, prize, project, team, team_member, track, user, vote_allowlist,
    vote_campaign,
};
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait,
    QueryFilter, QueryOrder,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::audit::canonical_time;
use crate::crypto::signing::{EVENT_BUNDLE_TAG, PublicKey, Signer25519};
use crate::crypto::{canonical_json, public_id};
use crate::domain::{
    Role, Write, clock, event_by_slug, events::insert_membership, import, json_ids,
};
use crate::domain::{json_list, voting};
use crate::error::{AppError, AppResult};

/// The `format` of an event bundle document.
pub const FORMAT: &str = EVENT_BUNDLE_TAG;

/// A prize, without its winner.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BundlePrize {
    pub name: String,
    pub description: String,
    pub position: i32,
    /// The track's external id; none for an overall prize.
    pub track: Option<String>,
}

/// The community vote's configuration; never its voters, votes or tally.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BundleVoting {
    pub mode: String,
    pub credits: i32,
    /// The normalized addresses of an `email_allowlist` vote.
    pub allowlist: Vec<String>,
}

/// What the organizers decided about a project.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BundleModeration {
    pub project: String,
    pub hidden_reason: Option<String>,
    pub disqualified_reason: Option<String>,
    /// The external id of the project it duplicates.
    pub duplicate_of: Option<String>,
}

/// The signed content.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Contents {
    /// The event as a `verdict.event.v1` fixture with no reviews.
    pub fixture: Value,
    /// People (fixture external ids) with the participant role and no team.
    pub participants: Vec<String>,
    pub prizes: Vec<BundlePrize>,
    pub voting: Option<BundleVoting>,
    pub moderation: Vec<BundleModeration>,
    pub exported_at: String,
    pub key_fingerprint: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Document {
    format: String,
    bundle: Contents,
    public_key: String,
    signature: String,
}

fn canonical<T: Serialize>(v: &T) -> AppResult<String> {
    serde_json::to_value(v)
        .map(|v| canonical_json(&v))
        .map_err(|e| AppError::Internal(format!("event bundle: {e}")))
}

fn time(t: Option<chrono::DateTime<chrono::Utc>>) -> Value {
    t.map(|t| json!(t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)))
        .unwrap_or(Value::Null)
}

/// Reads the event `slug` and returns its signed bundle (the document's text).
pub async fn export<C: ConnectionTrait>(
    db: &C,
    signer: &Signer25519,
    slug: &str,
) -> AppResult<String> {
    let e = event_by_slug(db, slug).await?;
    let tracks = track::Entity::find()
        .filter(track::Column::EventId.eq(e.id))
        .order_by_asc(track::Column::Id)
        .all(db)
        .await?;
    let track_ext: HashMap<i64, String> = tracks
        .iter()
        .map(|t| (t.id, t.external_id.clone()))
        .collect();
    let memberships = membership::Entity::find()
        .filter(membership::Column::EventId.eq(e.id))
        .order_by_asc(membership::Column::Id)
        .all(db)
        .await?;
    let members = team_member::Entity::find()
        .filter(team_member::Column::EventId.eq(e.id))
        .order_by_asc(team_member::Column::Id)
        .all(db)
        .await?;
    let user_ids: HashSet<i64> = memberships
        .iter()
        .map(|m| m.user_id)
        .chain(members.iter().map(|m| m.user_id))
        .collect();
    let users: HashMap<i64, user::Model> = user::Entity::find()
        .filter(user::Column::Id.is_in(user_ids))
        .order_by_asc(user::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(|u| (u.id, u))
        .collect();
    let person = |id: i64| users.get(&id).map(|u| u.public_id.clone());
    let mut people: Vec<&user::Model> = users.values().collect();
    people.sort_by_key(|u| u.id);
    let teams = team::Entity::find()
        .filter(team::Column::EventId.eq(e.id))
        .order_by_asc(team::Column::Id)
        .all(db)
        .await?;
    let team_ext: HashMap<i64, String> = teams
        .iter()
        .map(|t| (t.id, t.external_id.clone()))
        .collect();
    let projects = project::Entity::find()
        .filter(project::Column::EventId.eq(e.id))
        .order_by_asc(project::Column::Id)
        .all(db)
        .await?;
    let project_ext: HashMap<i64, String> = projects
        .iter()
        .map(|p| (p.id, p.external_id.clone()))
        .collect();
    let criteria = criterion::Entity::find()
        .filter(criterion::Column::EventId.eq(e.id))
        .order_by_asc(criterion::Column::Position)
        .all(db)
        .await?;
    let on_team: HashSet<i64> = members.iter().map(|m| m.user_id).collect();

    let fixture = json!({
        "format": import::FORMAT,
        "event": {
            "external_id": e.external_id, "slug": e.slug, "name": e.name,
            "submissions_open": time(Some(e.submissions_open)),
            "submissions_close": time(Some(e.submissions_close)),
            "judging_open": time(e.judging_open), "judging_close": time(e.judging_close),
            "voting_open": time(e.voting_open), "voting_close": time(e.voting_close),
            "reviews_per_project": e.reviews_per_project, "max_team_size": e.max_team_size,
            "time_zone": e.time_zone,
        },
        "tracks": tracks.iter().map(|t| json!({ "external_id": t.external_id, "name": t.name }))
            .collect::<Vec<_>>(),
        "people": people.iter().map(|u| json!({
            "external_id": u.public_id, "email": u.email, "display_name": u.display_name,
        })).collect::<Vec<_>>(),
        "organizers": memberships.iter().filter(|m| m.role == Role::Organizer)
            .filter_map(|m| person(m.user_id)).collect::<Vec<_>>(),
        "judges": memberships.iter().filter(|m| m.role == Role::Judge).filter_map(|m| {
            Some(json!({
                "external_id": m.external_id.clone().unwrap_or_else(|| m.public_id.clone()),
                "person": person(m.user_id)?,
                "tracks": json_ids(&m.judge_tracks).iter().filter_map(|t| track_ext.get(t))
                    .collect::<Vec<_>>(),
            }))
        }).collect::<Vec<_>>(),
        "teams": teams.iter().map(|t| json!({
            "external_id": t.external_id, "name": t.name,
            "members": members.iter().filter(|m| m.team_id == t.id)
                .filter_map(|m| person(m.user_id)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "projects": projects.iter().map(|p| json!({
            "external_id": p.external_id,
            "team": team_ext.get(&p.team_id), "track": track_ext.get(&p.track_id),
            "title": p.title, "tagline": p.tagline, "summary": p.summary,
            "description": p.description, "repo_url": p.repo_url, "demo_url": p.demo_url,
            "tags": json_list(&p.tags), "status": p.status.to_value(),
            // A draft never carries the time of an earlier submission.
            "submitted_at": if p.status == project::ProjectStatus::Draft {
                Value::Null
            } else {
                time(p.submitted_at)
            },
        })).collect::<Vec<_>>(),
        "criteria": criteria.iter().map(|c| json!({
            "key": c.key, "name": c.name, "weight": c.weight, "min": c.min_score,
            "max": c.max_score, "position": c.position, "description": c.description,
        })).collect::<Vec<_>>(),
        "reviews": [],
    });
    let participants = memberships
        .iter()
        .filter(|m| m.role == Role::Participant && !on_team.contains(&m.user_id))
        .filter_map(|m| person(m.user_id))
        .collect();
    let prizes = prize::Entity::find()
        .filter(prize::Column::EventId.eq(e.id))
        .order_by_asc(prize::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(|p| BundlePrize {
            name: p.name,
            description: p.description,
            position: p.position,
            track: p.track_id.and_then(|t| track_ext.get(&t).cloned()),
        })
        .collect();
    let voting = match voting::campaign_of(db, e.id).await? {
        Some(c) => Some(BundleVoting {
            mode: c.mode.to_value(),
            credits: c.credits,
            allowlist: vote_allowlist::Entity::find()
                .filter(vote_allowlist::Column::CampaignId.eq(c.id))
                .order_by_asc(vote_allowlist::Column::Email)
                .all(db)
                .await?
                .into_iter()
                .map(|a| a.email)
                .collect(),
        }),
        None => None,
    };
    let moderation = projects
        .iter()
        .filter(|p| {
            p.hidden_reason.is_some() || p.disqualified_reason.is_some() || p.duplicate_of.is_some()
        })
        .map(|p| BundleModeration {
            project: p.external_id.clone(),
            hidden_reason: p.hidden_reason.clone(),
            disqualified_reason: p.disqualified_reason.clone(),
            duplicate_of: p.duplicate_of.and_then(|d| project_ext.get(&d).cloned()),
        })
        .collect();
    let bundle = Contents {
        fixture,
        participants,
        prizes,
        voting,
        moderation,
        exported_at: canonical_time(clock(db).await?),
        key_fingerprint: signer.fingerprint(),
    };
    let signature = signer.sign(EVENT_BUNDLE_TAG, &[canonical(&bundle)?.as_bytes()]);
    canonical(&Document {
        format: FORMAT.to_owned(),
        bundle,
        public_key: signer.public().to_pem(),
        signature,
    })
}

/// The key the bundle carries (for a verifier who pins it by fingerprint).
pub fn embedded_key(text: &str) -> Option<PublicKey> {
    let doc: Document = serde_json::from_str(text).ok()?;
    PublicKey::from_pem(&doc.public_key)
        .ok()
        .filter(|k| k.to_pem() == doc.public_key)
}

/// Checks `text` as a bundle signed by `key`, byte for byte as exported; its contents.
/// Pure: no database.
pub fn verify(text: &str, key: &PublicKey) -> AppResult<Contents> {
    let refused =
        |why: &str| AppError::bad_input("file", format!("not a valid event bundle: {why}"));
    let doc: Document =
        serde_json::from_str(text).map_err(|_| refused("not an event bundle document"))?;
    if doc.format != FORMAT || canonical(&doc).ok().as_deref() != Some(text) {
        return Err(refused("not byte for byte as exported"));
    }
    let fingerprint = key.fingerprint();
    if embedded_key(text).is_none_or(|k| k.fingerprint() != fingerprint)
        || doc.bundle.key_fingerprint != fingerprint
        || !doc
            .signature
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(refused("not signed by the trusted key"));
    }
    if !key.verify(
        EVENT_BUNDLE_TAG,
        &[canonical(&doc.bundle)?.as_bytes()],
        &doc.signature,
    ) {
        return Err(refused(
            "the signature (verdict.event-bundle.v1) does not match",
        ));
    }
    Ok(doc.bundle)
}

/// Imports verified `contents` as a new event in the write `w` (one `event.imported` audit
/// entry), optionally under another slug and external id. CONFLICT when an event already
/// has its external id or slug: nothing is written.
pub async fn import(
    w: &Write,
    contents: &Contents,
    slug: Option<&str>,
    external_id: Option<&str>,
) -> AppResult<(event::Model, import::ImportCounts)> {
    let (txn, t0) = (w.txn(), w.now());
    let mut fixture = contents.fixture.clone();
    if let Some(s) = slug {
        fixture["event"]["slug"] = json!(s);
    }
    if let Some(x) = external_id {
        fixture["event"]["external_id"] = json!(x);
    }
    let f = import::parse(fixture)?;
    if !f.reviews.is_empty() {
        return Err(AppError::bad_input(
            "file",
            "an event bundle carries no reviews",
        ));
    }
    let taken = event::Entity::find()
        .filter(
            sea_orm::Condition::any()
                .add(event::Column::ExternalId.eq(&f.event.external_id))
                .add(event::Column::Slug.eq(&f.event.slug)),
        )
        .one(txn)
        .await?;
    if let Some(t) = taken {
        return Err(AppError::conflict(format!(
            "an event with this external id or slug exists ({} / {}): a bundle never \
             overwrites; import it with --slug and --external-id",
            t.external_id, t.slug
        )));
    }
    let (ev, counts) = import::import(w, &f).await?;

    let emails: HashMap<&str, String> = f
        .people
        .iter()
        .map(|p| (p.external_id.as_str(), p.email.trim().to_lowercase()))
        .collect();
    for p in &contents.participants {
        let email = emails
            .get(p.as_str())
            .ok_or_else(|| AppError::bad_input("file", format!("unknown participant {p}")))?;
        let u = crate::domain::user_by_email(txn, email)
            .await?
            .ok_or_else(|| AppError::Internal(format!("imported person {p} is missing")))?;
        insert_membership(txn, u.id, ev.id, Role::Participant, None, "[]", t0).await?;
    }
    let tracks: HashMap<String, i64> = track::Entity::find()
        .filter(track::Column::EventId.eq(ev.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|t| (t.external_id, t.id))
        .collect();
    for p in &contents.prizes {
        let track_id = match &p.track {
            Some(t) => Some(*tracks.get(t).ok_or_else(|| {
                AppError::bad_input("file", format!("prize {}: unknown track {t}", p.name))
            })?),
            None => None,
        };
        prize::ActiveModel {
            public_id: Set(public_id("prz")),
            event_id: Set(ev.id),
            track_id: Set(track_id),
            name: Set(p.name.clone()),
            description: Set(p.description.clone()),
            position: Set(p.position),
            winner_project_id: Set(None),
            created_at: Set(t0),
            ..Default::default()
        }
        .insert(txn)
        .await?;
    }
    if let Some(v) = &contents.voting {
        let mode = vote_campaign::VotingMode::try_from_value(&v.mode)
            .map_err(|_| AppError::bad_input("file", format!("unknown voting mode {}", v.mode)))?;
        let c = vote_campaign::ActiveModel {
            public_id: Set(public_id("vot")),
            event_id: Set(ev.id),
            mode: Set(mode),
            credits: Set(v.credits),
            tally_published_at: Set(None),
            tally: Set(None),
            created_at: Set(t0),
            updated_at: Set(t0),
            ..Default::default()
        }
        .insert(txn)
        .await?;
        for email in &v.allowlist {
            vote_allowlist::ActiveModel {
                campaign_id: Set(c.id),
                email: Set(email.clone()),
            }
            .insert(txn)
            .await?;
        }
    }
    let projects: HashMap<String, project::Model> = project::Entity::find()
        .filter(project::Column::EventId.eq(ev.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|p| (p.external_id.clone(), p))
        .collect();
    for m in &contents.moderation {
        let unknown = |x: &str| AppError::bad_input("file", format!("unknown project {x}"));
        let p = projects
            .get(&m.project)
            .ok_or_else(|| unknown(&m.project))?;
        let duplicate_of = match &m.duplicate_of {
            Some(d) => Some(projects.get(d).ok_or_else(|| unknown(d))?.id),
            None => None,
        };
        let mut row: project::ActiveModel = p.clone().into();
        row.hidden_reason = Set(m.hidden_reason.clone());
        row.disqualified_reason = Set(m.disqualified_reason.clone());
        row.duplicate_of = Set(duplicate_of);
        row.update(txn).await?;
    }
    Ok((ev, counts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::signing::PARTICIPATION_TAG;

    fn signed(signer: &Signer25519, tag: &str) -> String {
        let bundle = Contents {
            fixture: json!({ "format": import::FORMAT, "reviews": [] }),
            participants: vec![],
            prizes: vec![],
            voting: None,
            moderation: vec![],
            exported_at: "2026-03-15T22:53:00.000000Z".into(),
            key_fingerprint: signer.fingerprint(),
        };
        let signature = signer.sign(tag, &[canonical(&bundle).unwrap().as_bytes()]);
        canonical(&Document {
            format: FORMAT.into(),
            bundle,
            public_key: signer.public().to_pem(),
            signature,
        })
        .unwrap()
    }

    #[test]
    fn a_bundle_verifies_only_unaltered_under_its_own_tag_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let signer = Signer25519::load_or_create(&dir.path().join("k")).unwrap();
        let other = Signer25519::load_or_create(&dir.path().join("other")).unwrap();
        let key = signer.public();
        let text = signed(&signer, EVENT_BUNDLE_TAG);
        assert!(verify(&text, &key).is_ok());
        // A participation record's signature over the same bytes is not a bundle's.
        assert!(verify(&signed(&signer, PARTICIPATION_TAG), &key).is_err());
        assert!(verify(&text, &other.public()).is_err());
        assert!(verify(&signed(&other, EVENT_BUNDLE_TAG), &key).is_err());
        assert!(verify(&text.replacen("2026", "2027", 1), &key).is_err());
        assert!(verify(&format!("{text}\n"), &key).is_err());
    }
}
