//! Community voting (issue 12): one campaign per event, quadratic (n votes on one project
//! cost n² of the voter's credits), in the event's voting window.
//!
//! Who votes depends on the campaign's mode: signed-in accounts with a confirmed address
//! (`account`), anyone who confirms an address (`email`), or only the addresses the
//! organizers listed (`email_allowlist`). An email voter asks for a link
//! ([`register`]), which carries a single-use token through the mail outbox; following it
//! ([`confirm`]) gives the voter a key to vote with. Identity is accounted for by the
//! schema: one voter per (campaign, account) and per (campaign, normalized address), so the
//! spellings of one mailbox ([`normalize_email`]) vote once.
//!
//! Casting ([`cast`]) replaces the voter's whole allocation; judges of the event do not
//! vote, and nobody votes for their own team's project. The tally is computed once, when
//! an organizer publishes it after the window closed ([`publish_tally`]), and stored: it is
//! invisible until then and never feeds the calibration or the judged results.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Duration, Utc};
use entity::vote_campaign::VotingMode;
use entity::{
    event, membership, project, team_member, user, vote, vote_allowlist, vote_campaign, voter,
};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait,
    QueryFilter, QuerySelect, Set,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::outbox::{self, Links};
use super::throttle::take_slot;
use super::{Organizer, Role, Write, validate};
use crate::audit::Entry;
use crate::crypto::{bearer_token, public_id, sha256_fields, sha256_hex};
use crate::error::{AppError, AppResult};

/// The most credits a campaign may give each voter.
pub const CREDITS_MAX: i32 = 10_000;
/// The most votes one voter may put on one project (the schema's CHECK says the same).
pub const VOTES_MAX: i32 = 100;
/// The most addresses an allowlist may hold.
pub const ALLOWLIST_MAX: usize = 20_000;
/// How long a voting link works.
pub const LINK_HOURS: i64 = 48;
/// Voting links per address, and per event, per throttle window (15 minutes).
pub const LINKS_PER_ADDRESS: i32 = 3;
/// See [`LINKS_PER_ADDRESS`].
pub const LINKS_PER_EVENT: i32 = 2_000;
/// Voting links per client address: this many times [`LINKS_PER_ADDRESS`] per window.
pub const LINKS_CLIENT_FACTOR: i32 = 10;

/// The mailbox an address reaches, so that its spellings count as one voter: lower case,
/// without a `+tag`, and for Gmail (gmail.com, googlemail.com) without dots in the local
/// part and on one domain. `address` is a validated, lower-cased address
/// ([`validate::email`]).
pub fn normalize_email(address: &str) -> String {
    let (local, domain) = address.rsplit_once('@').unwrap_or((address, ""));
    let untagged = match local.split_once('+') {
        Some((base, _)) if !base.is_empty() => base,
        _ => local,
    };
    if domain == "gmail.com" || domain == "googlemail.com" {
        format!("{}@gmail.com", untagged.replace('.', ""))
    } else {
        format!("{untagged}@{domain}")
    }
}

/// A validated address and its mailbox ([`normalize_email`]).
fn voter_address(field: &str, raw: &str) -> AppResult<(String, String)> {
    let address = validate::email(field, raw)?;
    let mailbox = normalize_email(&address);
    Ok((address, mailbox))
}

/// The event's campaign, if any.
pub async fn campaign_of<C: ConnectionTrait>(
    db: &C,
    event_id: i64,
) -> AppResult<Option<vote_campaign::Model>> {
    Ok(vote_campaign::Entity::find()
        .filter(vote_campaign::Column::EventId.eq(event_id))
        .one(db)
        .await?)
}

/// The event's campaign, locked for the rest of the transaction (PostgreSQL; SQLite runs
/// one writer at a time): shared by the writes that spend or ask for votes (casts and
/// links), exclusive for those that change the campaign (configuring, publishing). So a
/// change of credits never meets a voter being created with the old ones, and a cast that
/// began before the close either commits before the tally is computed or is refused after.
async fn locked_campaign<C: ConnectionTrait>(
    txn: &C,
    event_id: i64,
    exclusive: bool,
) -> AppResult<Option<vote_campaign::Model>> {
    let q = vote_campaign::Entity::find().filter(vote_campaign::Column::EventId.eq(event_id));
    let q = if exclusive {
        q.lock_exclusive()
    } else {
        q.lock_shared()
    };
    Ok(q.one(txn).await?)
}

/// [`locked_campaign`], NOT_FOUND when the event has none.
async fn require_campaign<C: ConnectionTrait>(
    txn: &C,
    event_id: i64,
    exclusive: bool,
) -> AppResult<vote_campaign::Model> {
    locked_campaign(txn, event_id, exclusive)
        .await?
        .ok_or(AppError::NotFound("voting"))
}

/// Now, if the campaign takes votes: inside the event's voting window and before its tally
/// was published; otherwise WINDOW_CLOSED.
async fn open_now(
    w: &Write,
    e: &event::Model,
    c: &vote_campaign::Model,
) -> AppResult<DateTime<Utc>> {
    let t = w.now();
    if c.tally_published_at.is_some() {
        return Err(AppError::WindowClosed(
            "voting is over: its tally is published".into(),
        ));
    }
    match (e.voting_open, e.voting_close) {
        (Some(o), _) if t < o => Err(AppError::WindowClosed(format!(
            "voting opens at {}",
            o.to_rfc3339()
        ))),
        (_, Some(c)) if t >= c => Err(AppError::WindowClosed(format!(
            "voting closed at {}",
            c.to_rfc3339()
        ))),
        (Some(_), Some(_)) => Ok(t),
        _ => Err(AppError::WindowClosed("voting has no window".into())),
    }
}

/// What `configureVoting` takes.
pub struct Config {
    pub mode: VotingMode,
    pub credits: i32,
    pub opens: DateTime<Utc>,
    pub closes: DateTime<Utc>,
    /// Replaces the allowlist when given (`email_allowlist` only).
    pub allowlist: Option<Vec<String>>,
}

/// Creates or changes the event's campaign (organizers) and sets the event's voting
/// window. The mode and the credits are fixed once anyone has registered or voted; the
/// window may move (to end voting early, or extend it) until the tally is published. A
/// new allowlist may not drop an address that has registered.
pub async fn configure(
    w: &Write,
    org: Organizer<'_>,
    config: Config,
) -> AppResult<vote_campaign::Model> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    if !(1..=CREDITS_MAX).contains(&config.credits) {
        return Err(AppError::bad_input(
            "credits",
            format!("must be 1 to {CREDITS_MAX}"),
        ));
    }
    validate::window("closes", Some(config.opens), Some(config.closes))?;
    let allowlist = match &config.allowlist {
        Some(_) if config.mode != VotingMode::EmailAllowlist => {
            return Err(AppError::bad_input(
                "allowlist",
                "is only for the EMAIL_ALLOWLIST mode",
            ));
        }
        Some(list) if list.len() > ALLOWLIST_MAX => {
            return Err(AppError::bad_input(
                "allowlist",
                format!("holds at most {ALLOWLIST_MAX} addresses"),
            ));
        }
        Some(list) => {
            let mut set = HashSet::new();
            for (i, raw) in list.iter().enumerate() {
                set.insert(voter_address(&format!("allowlist[{i}]"), raw)?.1);
            }
            Some(set)
        }
        None => None,
    };
    let t = w.now();
    let existing = locked_campaign(txn, e.id, true).await?;
    let c = match existing {
        Some(c) => {
            if c.tally_published_at.is_some() {
                return Err(AppError::conflict(
                    "the tally is published: this vote is over",
                ));
            }
            let registered = voter_count(txn, c.id).await?;
            if registered > 0 && (c.mode != config.mode || c.credits != config.credits) {
                return Err(AppError::conflict(
                    "people have registered or voted: the mode and the credits can no longer change",
                ));
            }
            let mut row: vote_campaign::ActiveModel = c.into();
            row.mode = Set(config.mode);
            row.credits = Set(config.credits);
            row.updated_at = Set(t);
            row.update(txn).await?
        }
        None => {
            vote_campaign::ActiveModel {
                public_id: Set(public_id("vot")),
                event_id: Set(e.id),
                mode: Set(config.mode),
                credits: Set(config.credits),
                tally_published_at: Set(None),
                tally: Set(None),
                created_at: Set(t),
                updated_at: Set(t),
                ..Default::default()
            }
            .insert(txn)
            .await?
        }
    };
    if let Some(list) = &allowlist {
        replace_allowlist(txn, &c, list).await?;
    }
    let external_id = e.external_id.clone();
    let mut row: event::ActiveModel = e.clone().into();
    row.voting_open = Set(Some(config.opens));
    row.voting_close = Set(Some(config.closes));
    row.update(txn).await?;
    w.append(
        Entry::new("voting.configured", "vote_campaign", &c.public_id)
            .by(actor.public_id())
            .in_event(&external_id)
            .with(json!({
                "mode": c.mode.to_value(),
                "credits": c.credits,
                "opens": config.opens.to_rfc3339(),
                "closes": config.closes.to_rfc3339(),
                "allowlist": allowlist.as_ref().map(HashSet::len),
            })),
    )
    .await?;
    Ok(c)
}

/// Replaces the campaign's allowlist with `list` (mailboxes), unless that drops a mailbox
/// that has registered (CONFLICT).
async fn replace_allowlist<C: ConnectionTrait>(
    txn: &C,
    c: &vote_campaign::Model,
    list: &HashSet<String>,
) -> AppResult<()> {
    let registered: Vec<String> = voter::Entity::find()
        .select_only()
        .column(voter::Column::Email)
        .filter(voter::Column::CampaignId.eq(c.id))
        .into_tuple()
        .all(txn)
        .await?;
    let dropped = registered.iter().filter(|m| !list.contains(*m)).count();
    if dropped > 0 {
        return Err(AppError::conflict(format!(
            "the new allowlist drops {dropped} address(es) that already registered to vote"
        )));
    }
    vote_allowlist::Entity::delete_many()
        .filter(vote_allowlist::Column::CampaignId.eq(c.id))
        .exec(txn)
        .await?;
    let mut sorted: Vec<&String> = list.iter().collect();
    sorted.sort();
    for chunk in sorted.chunks(1_000) {
        vote_allowlist::Entity::insert_many(chunk.iter().map(|m| vote_allowlist::ActiveModel {
            campaign_id: Set(c.id),
            email: Set((*m).clone()),
        }))
        .exec_without_returning(txn)
        .await?;
    }
    Ok(())
}

/// How many addresses the campaign's allowlist holds.
pub async fn allowlist_len<C: ConnectionTrait>(db: &C, campaign_id: i64) -> AppResult<u64> {
    Ok(vote_allowlist::Entity::find()
        .filter(vote_allowlist::Column::CampaignId.eq(campaign_id))
        .count(db)
        .await?)
}

/// How many voters registered (email) or cast votes (accounts).
pub async fn voter_count<C: ConnectionTrait>(db: &C, campaign_id: i64) -> AppResult<u64> {
    Ok(voter::Entity::find()
        .filter(voter::Column::CampaignId.eq(campaign_id))
        .count(db)
        .await?)
}

/// `registerVoter`: sends a single-use voting link to `raw` through the outbox, while the
/// campaign (an email mode) takes votes. An address on no allowlist of an
/// `email_allowlist` campaign is FORBIDDEN; the same address again gets a fresh link (the
/// old one stops working). A mailbox that already registered under another spelling (or
/// through an account) gets no link but a message saying so: the asker's answer, and the
/// work done for it (one message queued, one audit entry), are the same as for a mailbox
/// never seen, so the answer tells nobody who registered; only the mailbox learns it.
/// Throttled per mailbox, per client address and per event (RATE_LIMITED).
pub async fn register(
    w: &Write,
    e: &event::Model,
    raw: &str,
    client: &str,
    links: &Links,
) -> AppResult<()> {
    let txn = w.txn();
    let c = require_campaign(txn, e.id, false).await?;
    if c.mode == VotingMode::Account {
        return Err(AppError::forbidden(
            "this vote is for signed-in accounts: sign in to vote",
        ));
    }
    let t = open_now(w, e, &c).await?;
    let (address, mailbox) = voter_address("email", raw)?;
    if c.mode == VotingMode::EmailAllowlist
        && vote_allowlist::Entity::find_by_id((c.id, mailbox.clone()))
            .one(txn)
            .await?
            .is_none()
    {
        return Err(AppError::forbidden(
            "this address is not on the event's list of voters",
        ));
    }
    // The mailbox's bucket also orders two spellings of one mailbox: the second reads the
    // first's voter row below.
    take_slot(txn, &format!("vote-link:{mailbox}"), LINKS_PER_ADDRESS, t).await?;
    take_slot(
        txn,
        &format!("vote-link-client:{client}"),
        LINKS_PER_ADDRESS * LINKS_CLIENT_FACTOR,
        t,
    )
    .await?;
    take_slot(
        txn,
        &format!("vote-link-event:{}", e.id),
        LINKS_PER_EVENT,
        t,
    )
    .await?;
    let token = bearer_token("vv_");
    let hash = sha256_hex(token.as_bytes());
    let expires = t + Duration::hours(LINK_HOURS);
    let existing = voter::Entity::find()
        .filter(voter::Column::CampaignId.eq(c.id))
        .filter(voter::Column::Email.eq(&mailbox))
        .one(txn)
        .await?;
    let (v, action) = match existing {
        Some(v) if v.address != address || v.user_id.is_some() => {
            let message = outbox::vote_already_registered(&address, &e.name, v.user_id.is_some());
            outbox::enqueue(w, message, None, None).await?;
            w.append(
                Entry::new("voter.registration_repeated", "voter", &v.public_id)
                    .in_event(&e.external_id),
            )
            .await?;
            return Ok(());
        }
        Some(v) => {
            let mut row: voter::ActiveModel = v.into();
            row.confirm_token_hash = Set(Some(hash));
            row.confirm_expires_at = Set(Some(expires));
            row.updated_at = Set(t);
            (row.update(txn).await?, "voter.link_resent")
        }
        None => (
            voter::ActiveModel {
                public_id: Set(public_id("vtr")),
                campaign_id: Set(c.id),
                user_id: Set(None),
                email: Set(mailbox),
                address: Set(address.clone()),
                confirm_token_hash: Set(Some(hash)),
                confirm_expires_at: Set(Some(expires)),
                key_hash: Set(None),
                confirmed_at: Set(None),
                credits: Set(c.credits),
                spent: Set(0),
                created_at: Set(t),
                updated_at: Set(t),
                ..Default::default()
            }
            .insert(txn)
            .await?,
            "voter.registered",
        ),
    };
    let link = links.vote(&e.slug, &token);
    // No event id: the event's outbox, which organizers read, never shows a voter's link.
    outbox::enqueue(
        w,
        outbox::vote_link(&address, &e.name, expires, &link),
        None,
        None,
    )
    .await?;
    w.append(Entry::new(action, "voter", &v.public_id).in_event(&e.external_id))
        .await?;
    Ok(())
}

/// `confirmVoter`: follows a voting link. The token works once and for [`LINK_HOURS`],
/// while the campaign takes votes; it confirms the address and returns a fresh key to vote
/// with (a key given before stops working). An unknown or used token is NOT_FOUND, an
/// expired one WINDOW_CLOSED.
pub async fn confirm(w: &Write, token: &str) -> AppResult<(event::Model, String)> {
    let txn = w.txn();
    let v = voter::Entity::find()
        .filter(voter::Column::ConfirmTokenHash.eq(sha256_hex(token.trim().as_bytes())))
        .lock_exclusive()
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("voting link"))?;
    let c = vote_campaign::Entity::find_by_id(v.campaign_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("voting"))?;
    // Read, not locked: the voter row is locked already, and every other write locks the
    // event before a voter row; locking it here would invert that order (a deadlock).
    let e = event::Entity::find_by_id(c.event_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("event"))?;
    let t = open_now(w, &e, &c).await?;
    if v.confirm_expires_at.is_some_and(|x| t >= x) {
        return Err(AppError::WindowClosed(
            "this voting link has expired; ask for a new one".into(),
        ));
    }
    let key = bearer_token("vk_");
    let public = v.public_id.clone();
    let mut row: voter::ActiveModel = v.clone().into();
    row.confirm_token_hash = Set(None);
    row.confirm_expires_at = Set(None);
    row.key_hash = Set(Some(sha256_hex(key.as_bytes())));
    row.confirmed_at = Set(Some(v.confirmed_at.unwrap_or(t)));
    row.updated_at = Set(t);
    row.update(txn).await?;
    w.append(Entry::new("voter.confirmed", "voter", &public).in_event(&e.external_id))
        .await?;
    Ok((e, key))
}

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
                .chunks(super::accounts::IN_CHUNK)
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

/// One project's line of the published tally.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct TallyRow {
    /// 1 = most votes; equal votes share a rank.
    pub rank: i32,
    pub project_id: i64,
    pub votes: i64,
    pub voters: i64,
    pub credits: i64,
}

/// `publishVoteTally` (organizers): computes the tally once the window has closed, stores
/// it and makes it public. Before the window closed, or a second time, CONFLICT.
pub async fn publish_tally(w: &Write, org: Organizer<'_>) -> AppResult<Vec<TallyRow>> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    let c = require_campaign(txn, e.id, true).await?;
    if c.tally_published_at.is_some() {
        return Err(AppError::conflict("the tally is already published"));
    }
    let t = w.now();
    match e.voting_close {
        Some(close) if t >= close => {}
        Some(close) => {
            return Err(AppError::conflict(format!(
                "voting is open until {}: publish the tally after it closes",
                close.to_rfc3339()
            )));
        }
        None => return Err(AppError::conflict("voting has no window")),
    }
    let rows = compute_tally(txn, e.id).await?;
    let voters = voter_count(txn, c.id).await?;
    let public = c.public_id.clone();
    let mut row: vote_campaign::ActiveModel = c.into();
    row.tally_published_at = Set(Some(t));
    row.tally = Set(Some(
        serde_json::to_string(&rows).map_err(|e| AppError::Internal(format!("tally: {e}")))?,
    ));
    row.updated_at = Set(t);
    row.update(txn).await?;
    w.append(
        Entry::new("vote_tally.published", "vote_campaign", &public)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({
                "voters": voters,
                "votes": rows.iter().map(|r| r.votes).sum::<i64>(),
            })),
    )
    .await?;
    Ok(rows)
}

/// The tally of the event's gallery as of now: every project, most votes first.
async fn compute_tally<C: ConnectionTrait>(db: &C, event_id: i64) -> AppResult<Vec<TallyRow>> {
    let projects: Vec<i64> = project::Entity::find_gallery(event_id)
        .select_only()
        .column(project::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    let votes: Vec<(i64, i32)> = vote::Entity::find()
        .select_only()
        .column(vote::Column::ProjectId)
        .column(vote::Column::Votes)
        .filter(vote::Column::EventId.eq(event_id))
        .into_tuple()
        .all(db)
        .await?;
    let mut sums: HashMap<i64, (i64, i64, i64)> =
        projects.iter().map(|p| (*p, (0, 0, 0))).collect();
    for (p, n) in votes {
        // A project that left the gallery since keeps no line.
        if let Some(s) = sums.get_mut(&p) {
            let n = i64::from(n);
            s.0 += n;
            s.1 += 1;
            s.2 += n * n;
        }
    }
    let mut rows: Vec<TallyRow> = sums
        .into_iter()
        .map(|(project_id, (votes, voters, credits))| TallyRow {
            rank: 0,
            project_id,
            votes,
            voters,
            credits,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.votes
            .cmp(&a.votes)
            .then(b.voters.cmp(&a.voters))
            .then(a.project_id.cmp(&b.project_id))
    });
    for i in 0..rows.len() {
        rows[i].rank = if i > 0 && rows[i].votes == rows[i - 1].votes {
            rows[i - 1].rank
        } else {
            i as i32 + 1
        };
    }
    Ok(rows)
}

/// `Event.voteTally`: the published tally; NOT_FOUND (for everyone) until an organizer
/// published it after the window closed.
pub fn published_tally(c: Option<&vote_campaign::Model>) -> AppResult<Vec<TallyRow>> {
    let stored = c
        .and_then(|c| c.tally.as_deref())
        .ok_or(AppError::NotFound("vote tally"))?;
    serde_json::from_str(stored).map_err(|e| AppError::Internal(format!("stored tally: {e}")))
}

#[cfg(test)]
mod tests {
    use super::normalize_email;

    #[test]
    fn spellings_of_one_mailbox_normalize_alike() {
        for (a, b) in [
            ("ada+votes@example.org", "ada@example.org"),
            ("a.d.a@gmail.com", "ada@gmail.com"),
            ("a.da+x@googlemail.com", "ada@gmail.com"),
            ("ada@gmail.com", "ada@gmail.com"),
        ] {
            assert_eq!(normalize_email(a), normalize_email(b), "{a} vs {b}");
        }
        // Dots matter outside Gmail; a bare "+" local part is kept whole.
        assert_ne!(
            normalize_email("a.da@example.org"),
            normalize_email("ada@example.org")
        );
        assert_eq!(normalize_email("+x@example.org"), "+x@example.org");
    }
}
