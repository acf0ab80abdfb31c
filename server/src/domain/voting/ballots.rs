//! Ballots: who is voting (an account or an email voter's key), the caller's ballot, and
//! casting (`castVotes`), which replaces the voter's whole allocation.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use entity::vote_campaign::VotingMode;
use entity::{event, membership, project, team_member, user, vote, vote_campaign, voter};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, Set,
};
use serde_json::json;

use super::{VOTES_MAX, campaign_of, normalize_email, open_now, require_campaign};
use crate::audit::Entry;
use crate::crypto::{public_id, sha256_fields, sha256_hex};
use crate::domain::{Role, Write};
use crate::error::{AppError, AppResult};

/// Who is voting: a signed-in account, or an email voter's key.
#[derive(Clone, Copy)]
pub enum Who<'a> {
    Account(&'a user::Model),
    Key(&'a str),
}

/// The caller's voter row in `c`, if they have one. A key that fits no voter of the
/// campaign is UNAUTHENTICATED.
async fn find_voter<C: ConnectionTrait>(
    db: &C,
    c: &vote_campaign::Model,
    who: Who<'_>,
    lock: bool,
) -> AppResult<Option<voter::Model>> {
    let mut q = voter::Entity::find().filter(voter::Column::CampaignId.eq(c.id));
    q = match who {
        Who::Account(u) => q.filter(voter::Column::UserId.eq(u.id)),
        Who::Key(k) => q.filter(voter::Column::KeyHash.eq(sha256_hex(k.trim().as_bytes()))),
    };
    if lock {
        q = q.lock_exclusive();
    }
    let v = q.one(db).await?;
    match (who, &v) {
        (Who::Key(_), None) => Err(AppError::Unauthenticated),
        _ => Ok(v),
    }
}

/// Refuses a caller of the wrong kind for the campaign's mode.
fn check_mode(c: &vote_campaign::Model, who: Who<'_>) -> AppResult<()> {
    match (c.mode, who) {
        (VotingMode::Account, Who::Key(_)) => Err(AppError::forbidden(
            "this vote is for signed-in accounts: sign in to vote",
        )),
        (VotingMode::Email | VotingMode::EmailAllowlist, Who::Account(_)) => {
            Err(AppError::forbidden(
                "this vote is by confirmed email: ask for a voting link (registerVoter)",
            ))
        }
        _ => Ok(()),
    }
}

/// The account's voter row, created on its first cast (once per account however many
/// casts race: the insert does nothing when the row exists), locked. An account votes
/// only with a confirmed address, and not when another account with the same mailbox
/// already did (CONFLICT).
async fn account_voter<C: ConnectionTrait>(
    txn: &C,
    c: &vote_campaign::Model,
    u: &user::Model,
    t: DateTime<Utc>,
) -> AppResult<voter::Model> {
    if u.email_confirmed_at.is_none() {
        return Err(AppError::forbidden(
            "confirm your account's email address before you vote",
        ));
    }
    let mailbox = normalize_email(&u.email);
    let twin = voter::Entity::find()
        .filter(voter::Column::CampaignId.eq(c.id))
        .filter(voter::Column::Email.eq(&mailbox))
        .filter(voter::Column::UserId.ne(u.id))
        .one(txn)
        .await?;
    if twin.is_some() {
        return Err(AppError::conflict(
            "another account with this mailbox has already voted",
        ));
    }
    voter::Entity::insert(voter::ActiveModel {
        public_id: Set(public_id("vtr")),
        campaign_id: Set(c.id),
        user_id: Set(Some(u.id)),
        email: Set(mailbox),
        address: Set(u.email.clone()),
        confirm_token_hash: Set(None),
        confirm_expires_at: Set(None),
        key_hash: Set(None),
        confirmed_at: Set(u.email_confirmed_at),
        credits: Set(c.credits),
        spent: Set(0),
        created_at: Set(t),
        updated_at: Set(t),
        ..Default::default()
    })
    .on_conflict(
        OnConflict::columns([voter::Column::CampaignId, voter::Column::UserId])
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(txn)
    .await?;
    find_voter(txn, c, Who::Account(u), true)
        .await?
        .ok_or_else(|| AppError::Internal("a voter row vanished".into()))
}

/// Whether the voter judges the event, and the teams they are on: by account, and for an
/// email voter by any account of the event whose address reaches the same mailbox.
async fn standing<C: ConnectionTrait>(
    db: &C,
    event_id: i64,
    v: &voter::Model,
) -> AppResult<(bool, HashSet<i64>)> {
    let judges: Vec<i64> = membership::Entity::find_in_role(event_id, Role::Judge)
        .select_only()
        .column(membership::Column::UserId)
        .into_tuple()
        .all(db)
        .await?;
    let members: Vec<(i64, i64)> = team_member::Entity::find()
        .select_only()
        .column(team_member::Column::UserId)
        .column(team_member::Column::TeamId)
        .filter(team_member::Column::EventId.eq(event_id))
        .into_tuple()
        .all(db)
        .await?;
    let me: HashSet<i64> = match v.user_id {
        Some(u) => HashSet::from([u]),
        None => {
            let ids: HashSet<i64> = judges
                .iter()
                .copied()
                .chain(members.iter().map(|m| m.0))
                .collect();
            let mut found = HashSet::new();
            for chunk in ids
                .into_iter()
                .collect::<Vec<_>>()
                .chunks(crate::domain::accounts::IN_CHUNK)
            {
                let rows: Vec<(i64, String)> = user::Entity::find()
                    .select_only()
                    .column(user::Column::Id)
                    .column(user::Column::Email)
                    .filter(user::Column::Id.is_in(chunk.iter().copied()))
                    .into_tuple()
                    .all(db)
                    .await?;
                found.extend(
                    rows.into_iter()
                        .filter(|(_, email)| normalize_email(email) == v.email)
                        .map(|(id, _)| id),
                );
            }
            found
        }
    };
    let judge = judges.iter().any(|u| me.contains(u));
    let teams = members
        .iter()
        .filter(|(u, _)| me.contains(u))
        .map(|m| m.1)
        .collect();
    Ok((judge, teams))
}

/// A caller's ballot: their budget, their allocation, and the seed of their own order of
/// the projects.
pub struct Ballot {
    pub campaign: vote_campaign::Model,
    pub credits: i32,
    pub spent: i32,
    /// (project id, votes), in the voter's order.
    pub votes: Vec<(i64, i32)>,
    /// Orders the event's projects for this voter, the same on every read.
    pub seed: String,
    /// The address an email voter confirmed.
    pub address: Option<String>,
}

impl Ballot {
    fn of(
        c: vote_campaign::Model,
        v: Option<&voter::Model>,
        who: Who<'_>,
        votes: Vec<(i64, i32)>,
    ) -> Ballot {
        // An account's order exists before its first cast; an email voter has a row from
        // registration on (a key always names one).
        let seed = match who {
            Who::Account(u) => format!("{}/{}", c.public_id, u.public_id),
            Who::Key(_) => v.map(|v| v.public_id.clone()).unwrap_or_default(),
        };
        let mut ballot = Ballot {
            credits: v.map_or(c.credits, |v| v.credits),
            spent: v.map_or(0, |v| v.spent),
            votes,
            seed,
            address: v.filter(|v| v.user_id.is_none()).map(|v| v.address.clone()),
            campaign: c,
        };
        let mut votes = std::mem::take(&mut ballot.votes);
        votes.sort_by_cached_key(|(p, _)| ballot.order_key(*p));
        ballot.votes = votes;
        ballot
    }

    /// Where project `id` stands in this voter's order.
    fn order_key(&self, id: i64) -> String {
        sha256_fields("verdict.ballot", &[self.seed.as_bytes(), &id.to_le_bytes()])
    }

    /// Sorts `projects` into this voter's own stable order.
    pub fn shuffle(&self, projects: &mut [project::Model]) {
        projects.sort_by_cached_key(|p| self.order_key(p.id));
    }
}

async fn votes_of<C: ConnectionTrait>(db: &C, voter_id: i64) -> AppResult<Vec<(i64, i32)>> {
    Ok(vote::Entity::find()
        .select_only()
        .column(vote::Column::ProjectId)
        .column(vote::Column::Votes)
        .filter(vote::Column::VoterId.eq(voter_id))
        .into_tuple()
        .all(db)
        .await?)
}

/// `Event.myBallot`: the caller's ballot, or None when the event has no campaign or the
/// caller is of the wrong kind for its mode. Reads only.
pub async fn ballot<C: ConnectionTrait>(
    db: &C,
    event_id: i64,
    who: Who<'_>,
) -> AppResult<Option<Ballot>> {
    let Some(c) = campaign_of(db, event_id).await? else {
        return Ok(None);
    };
    if check_mode(&c, who).is_err() {
        return Ok(None);
    }
    let v = find_voter(db, &c, who, false).await?;
    let votes = match &v {
        Some(v) => votes_of(db, v.id).await?,
        None => Vec::new(),
    };
    Ok(Some(Ballot::of(c, v.as_ref(), who, votes)))
}

/// One line of a cast: a project (by id or external id) and the votes on it (0 removes).
pub struct Cast {
    pub project: String,
    pub votes: i32,
}

/// `castVotes`: replaces the caller's whole allocation with `casts`, while the campaign
/// takes votes (WINDOW_CLOSED otherwise). Over budget is refused whole (BAD_USER_INPUT on
/// `votes`); judges of the event (FORBIDDEN), their own team's project (FORBIDDEN), and
/// projects not in the event's gallery (BAD_USER_INPUT naming the line) are refused.
/// Concurrent casts of one voter queue on the voter's row: the allocation is always one
/// of them whole.
pub async fn cast(
    w: &Write,
    e: &event::Model,
    who: Who<'_>,
    casts: Vec<Cast>,
) -> AppResult<Ballot> {
    let txn = w.txn();
    let c = require_campaign(txn, e.id, false).await?;
    check_mode(&c, who)?;
    let t = open_now(w, e, &c).await?;
    let v = match who {
        Who::Account(u) => account_voter(txn, &c, u, t).await?,
        Who::Key(_) => find_voter(txn, &c, who, true)
            .await?
            .ok_or(AppError::Unauthenticated)?,
    };
    let (judge, teams) = standing(txn, e.id, &v).await?;
    if judge {
        return Err(AppError::forbidden("judges of the event do not vote"));
    }
    let ids: Vec<&str> = casts.iter().map(|c| c.project.as_str()).collect();
    let projects = gallery_by_id(txn, e.id, &ids).await?;
    let mut seen = HashSet::new();
    let mut chosen: Vec<(i64, i32)> = Vec::new();
    let mut cost: i64 = 0;
    for (i, line) in casts.iter().enumerate() {
        if !(0..=VOTES_MAX).contains(&line.votes) {
            return Err(AppError::bad_input(
                format!("votes[{i}].votes"),
                format!("must be 0 to {VOTES_MAX}"),
            ));
        }
        let p = projects.get(line.project.as_str()).ok_or_else(|| {
            AppError::bad_input(
                format!("votes[{i}].project"),
                "is not a project on this event's ballot",
            )
        })?;
        if !seen.insert(p.id) {
            return Err(AppError::bad_input(
                format!("votes[{i}].project"),
                "appears twice",
            ));
        }
        if teams.contains(&p.team_id) {
            return Err(AppError::forbidden(
                "nobody votes for their own team's project",
            ));
        }
        if line.votes > 0 {
            chosen.push((p.id, line.votes));
            cost += i64::from(line.votes) * i64::from(line.votes);
        }
    }
    if cost > i64::from(v.credits) {
        return Err(AppError::bad_input(
            "votes",
            format!(
                "these votes cost {cost} credits (n votes on one project cost n²); the budget is {}",
                v.credits
            ),
        ));
    }
    vote::Entity::delete_many()
        .filter(vote::Column::VoterId.eq(v.id))
        .exec(txn)
        .await?;
    if !chosen.is_empty() {
        vote::Entity::insert_many(chosen.iter().map(|(p, n)| vote::ActiveModel {
            voter_id: Set(v.id),
            event_id: Set(e.id),
            project_id: Set(*p),
            votes: Set(*n),
        }))
        .exec_without_returning(txn)
        .await?;
    }
    let mut row: voter::ActiveModel = v.clone().into();
    row.spent = Set(cost as i32);
    row.updated_at = Set(t);
    let v = row.update(txn).await?;
    let actor = match who {
        Who::Account(u) => u.public_id.as_str(),
        Who::Key(_) => "",
    };
    w.append(
        Entry::new("votes.cast", "voter", &v.public_id)
            .by(actor)
            .in_event(&e.external_id)
            .with(json!({ "projects": chosen.len(), "credits": cost })),
    )
    .await?;
    Ok(Ballot::of(c, Some(&v), who, chosen))
}

/// The event's gallery projects named by `ids` (public or external ids), by each name.
async fn gallery_by_id<'a, C: ConnectionTrait>(
    db: &C,
    event_id: i64,
    ids: &[&'a str],
) -> AppResult<HashMap<&'a str, project::Model>> {
    use sea_orm::Condition;
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows = project::Entity::find_gallery(event_id)
        .filter(
            Condition::any()
                .add(project::Column::PublicId.is_in(ids.iter().copied()))
                .add(project::Column::ExternalId.is_in(ids.iter().copied())),
        )
        .all(db)
        .await?;
    let mut by = HashMap::new();
    for id in ids {
        if let Some(p) = rows
            .iter()
            .find(|p| p.public_id == *id)
            .or_else(|| rows.iter().find(|p| p.external_id == *id))
        {
            by.insert(*id, p.clone());
        }
    }
    Ok(by)
}
