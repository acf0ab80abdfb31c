//! A judge's standing sign-in (issue 28): what Jury gives judges. Per judge membership, a
//! link `{public-url}/judge-sign-in/{token}` that signs its holder in with one tap, and a
//! short code (`K7QM-2XPD`) typed with the event's slug on `/judge-sign-in`. Both are
//! credentials, so only their SHA-256 hashes are stored and the organizer sees them once,
//! when issuing (`issueJudgeSignIn`, or every judge at once on the Invitation links page).
//! Reissuing revokes the old link and code and ends the sessions they started;
//! `revokeJudgeSignIn` does the same without a new one.
//!
//! Never a password reset in disguise: a session it starts is marked with the judge
//! membership (`sessions.judge_membership_id`, [`Credential::JudgeLink`]) and acts only as
//! that judge in that event (its access holds that one role, never site admin; see
//! [`judge_access`]), and only the judging mutations in [`ALLOWED_MUTATIONS`] run on it:
//! no password, email, profile or API-token change, nothing an organizer or participant
//! does. Logging in with the password is the way to those.
//!
//! Refused (FORBIDDEN unless said otherwise, writing nothing but the throttle's count):
//! an unknown link or code NOT_FOUND; a revoked or replaced one; a membership that lost
//! the judge role (the row is gone); a deleted event; an erased account; and, with
//! WINDOW_CLOSED, once the event's judging has closed. Why the last: the link exists so a
//! judge can score on the floor; after judging closes there is nothing left to score,
//! while a printed link or QR code lying around the venue would otherwise sign anyone in
//! as the judge for as long as it exists. A session it starts ends when judging closes,
//! for the same reason (and after [`accounts::SESSION_DAYS`] when judging has no end).
//!
//! Throttled like `logIn` (buckets in `login_throttle`, counted before the secret is
//! checked, in a transaction of their own): per client address, [`ADDRESS_FACTOR`] ×
//! `--login-attempts` attempts per window; per link (its hash), `--login-attempts`; per
//! event for codes, [`ACCOUNT_FACTOR`] × `--login-attempts`, so a guesser spread over
//! many addresses still meets a ceiling (a code has 40 bits). A successful sign-in gives
//! its slots back, so judges behind one venue address are not locked out by each other.
//!
//! Audited: `judge_sign_in.issued`, `judge_sign_in.revoked`, `judge_sign_in.used`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use entity::{event, judge_sign_in, membership, session, user};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter,
    QueryOrder,
};
use serde_json::json;

use super::accounts;
use super::links::{LinkInfo, LinkKind, LinkState, mask_email};
use super::throttle::{self, ACCOUNT_FACTOR, ADDRESS_FACTOR};
use super::write::{Organizer, Write};
use super::{Access, Role};
use crate::audit::Entry;
use crate::crypto::{bearer_token, sha256_hex};
use crate::error::{AppError, AppResult};

/// The mutations a session started by a standing sign-in may run: scoring, and leaving.
/// Everything else (account, organizer and participant writes) is refused with FORBIDDEN
/// by the schema's guard, before it resolves.
pub const ALLOWED_MUTATIONS: &[&str] = &[
    "saveReview",
    "compareProjects",
    "skipComparison",
    "logOut",
    "logIn",
    "signInAsJudge",
    "signInAsJudgeByCode",
];

/// The refusal of any other mutation on such a session.
pub const REFUSAL: &str = "this session was started by a judge's sign-in link or code: it only \
     scores projects. Log in with your password to change your account or do anything else";

/// The letters of a code: no 0/O, 1/I/L, so it reads aloud and types on a phone.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// Letters in a code (shown as two groups of four).
pub const CODE_LEN: usize = 8;

/// The path of a standing sign-in link under the public URL.
pub fn link(public_url: &str, token: &str) -> String {
    format!("{}/judge-sign-in/{token}", public_url.trim_end_matches('/'))
}

fn new_code() -> String {
    use rand::RngExt;
    let mut rng = rand::rng();
    (0..CODE_LEN)
        .map(|_| CODE_ALPHABET[rng.random_range(0..CODE_ALPHABET.len())] as char)
        .collect()
}

/// A code as typed: case, spaces and dashes do not matter.
pub fn normalize_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// `K7QMP2XD` as `K7QM-P2XD`.
fn show_code(code: &str) -> String {
    let (a, b) = code.split_at(CODE_LEN / 2);
    format!("{a}-{b}")
}

/// One judge's standing sign-in, as issued: the link and the code are here once.
#[derive(Debug, Clone)]
pub struct Issued {
    pub judge: membership::Model,
    pub user: user::Model,
    pub link: String,
    pub code: String,
    pub issued_at: DateTime<Utc>,
}

/// Revokes `membership_id`'s live sign-ins and ends the sessions they started, at `t`.
/// Returns (sign-ins revoked, sessions ended).
async fn end_live<C: ConnectionTrait>(
    txn: &C,
    membership_id: i64,
    t: DateTime<Utc>,
) -> AppResult<(u64, u64)> {
    let revoked = judge_sign_in::Entity::update_many()
        .col_expr(judge_sign_in::Column::RevokedAt, Expr::value(t))
        .filter(judge_sign_in::Column::MembershipId.eq(membership_id))
        .filter(judge_sign_in::Column::RevokedAt.is_null())
        .exec(txn)
        .await?
        .rows_affected;
    let ended = session::Entity::update_many()
        .col_expr(session::Column::RevokedAt, Expr::value(t))
        .filter(session::Column::JudgeMembershipId.eq(membership_id))
        .filter(session::Column::RevokedAt.is_null())
        .exec(txn)
        .await?
        .rows_affected;
    Ok((revoked, ended))
}

/// Writes a fresh sign-in for judge `m` (the old one revoked first).
async fn issue_one(
    w: &Write,
    e: &event::Model,
    m: membership::Model,
    links: &super::outbox::Links,
) -> AppResult<(Issued, u64, u64)> {
    let txn = w.txn();
    let t = w.now();
    let (replaced, ended) = end_live(txn, m.id, t).await?;
    let user = user::Entity::find_by_id(m.user_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("judge"))?;
    // A code is unique within its event: draw again on the rare clash.
    let mut code = new_code();
    for _ in 0..8 {
        let taken = judge_sign_in::Entity::find()
            .filter(judge_sign_in::Column::EventId.eq(e.id))
            .filter(judge_sign_in::Column::CodeHash.eq(sha256_hex(code.as_bytes())))
            .one(txn)
            .await?
            .is_some();
        if !taken {
            break;
        }
        code = new_code();
    }
    let token = bearer_token("vjs_");
    judge_sign_in::ActiveModel {
        event_id: Set(e.id),
        membership_id: Set(m.id),
        user_id: Set(m.user_id),
        token_hash: Set(sha256_hex(token.as_bytes())),
        code_hash: Set(sha256_hex(code.as_bytes())),
        created_at: Set(t),
        last_used_at: Set(None),
        revoked_at: Set(None),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    let issued = Issued {
        judge: m,
        user,
        link: links.judge_sign_in(&token),
        code: show_code(&code),
        issued_at: t,
    };
    Ok((issued, replaced, ended))
}

/// `issueJudgeSignIn`: a new standing link and code for one judge of the event (by
/// membership id or external id; BAD_USER_INPUT on `judge` for anyone who is not a judge
/// of it), replacing theirs; appends `judge_sign_in.issued`.
pub async fn issue(
    w: &Write,
    org: Organizer<'_>,
    judge: &str,
    links: &super::outbox::Links,
) -> AppResult<Issued> {
    let e = org.event();
    let m = super::judges::find_judge(w.txn(), e.id, judge).await?;
    let (issued, replaced, ended) = issue_one(w, e, m, links).await?;
    w.append(
        Entry::new(
            "judge_sign_in.issued",
            "membership",
            &issued.judge.public_id,
        )
        .by(org.actor().public_id())
        .in_event(&e.external_id)
        .with(json!({ "replaced": replaced, "sessions_ended": ended })),
    )
    .await?;
    Ok(issued)
}

/// Every judge of the event gets a new standing link and code at once (theirs replaced),
/// for the Invitation links page's CSV and QR codes; one `judge_sign_in.issued` entry names
/// them all.
pub async fn issue_all(
    w: &Write,
    org: Organizer<'_>,
    links: &super::outbox::Links,
) -> AppResult<Vec<Issued>> {
    let e = org.event();
    let judges = membership::Entity::find_judges(e.id)
        .order_by_asc(membership::Column::Id)
        .all(w.txn())
        .await?;
    let mut out = Vec::with_capacity(judges.len());
    let (mut replaced, mut ended) = (0, 0);
    for m in judges {
        let (issued, r, s) = issue_one(w, e, m, links).await?;
        replaced += r;
        ended += s;
        out.push(issued);
    }
    let ids: Vec<&str> = out.iter().map(|i| i.judge.public_id.as_str()).collect();
    w.append(
        Entry::new("judge_sign_in.issued", "event", &e.public_id)
            .by(org.actor().public_id())
            .in_event(&e.external_id)
            .with(json!({ "judges": ids, "replaced": replaced, "sessions_ended": ended })),
    )
    .await?;
    Ok(out)
}

/// The issued links as a CSV (name, email, link, code), every cell guarded like the
/// exports' ([`super::export::neutralize`]): for a mail merge or a printed list.
pub fn sheet_csv(issued: &[Issued]) -> AppResult<String> {
    super::export::csv_text(
        &["judge_name", "judge_email", "judge_id", "link", "code"].map(String::from),
        issued
            .iter()
            .map(|i| {
                vec![
                    i.user.display_name.clone(),
                    i.user.email.clone(),
                    i.judge.public_id.clone(),
                    i.link.clone(),
                    i.code.clone(),
                ]
            })
            .collect(),
    )
}

/// `revokeJudgeSignIn`: the judge's standing link and code stop working and the sessions
/// they started end. CONFLICT when the judge has none live; appends
/// `judge_sign_in.revoked`.
pub async fn revoke(w: &Write, org: Organizer<'_>, judge: &str) -> AppResult<membership::Model> {
    let e = org.event();
    let m = super::judges::find_judge(w.txn(), e.id, judge).await?;
    let (revoked, ended) = end_live(w.txn(), m.id, w.now()).await?;
    if revoked == 0 {
        return Err(AppError::conflict(
            "this judge has no standing sign-in link to revoke",
        ));
    }
    w.append(
        Entry::new("judge_sign_in.revoked", "membership", &m.public_id)
            .by(org.actor().public_id())
            .in_event(&e.external_id)
            .with(json!({ "sessions_ended": ended })),
    )
    .await?;
    Ok(m)
}

/// What a judge presents: the link's token, or an event's slug and a code.
#[derive(Debug, Clone)]
pub enum Presented {
    Link(String),
    Code { event: String, code: String },
}

impl Presented {
    fn buckets(&self, client: &str) -> [(String, i32); 2] {
        let addr = (format!("judge-sign-in:addr:{client}"), ADDRESS_FACTOR);
        match self {
            Presented::Link(token) => [
                addr,
                (
                    format!(
                        "judge-sign-in:link:{}",
                        &sha256_hex(token.trim().as_bytes())[..32]
                    ),
                    1,
                ),
            ],
            Presented::Code { event, .. } => [
                addr,
                (
                    format!("judge-sign-in:event:{}", event.trim().to_lowercase()),
                    ACCOUNT_FACTOR,
                ),
            ],
        }
    }
}

/// Takes one attempt's slot in each of its buckets, committed before the secret is
/// checked (like `logIn`'s): RATE_LIMITED with the seconds to wait once a bucket is full.
pub async fn take_attempt(
    db: &crate::db::Db,
    presented: &Presented,
    client: &str,
    limit: i32,
) -> AppResult<()> {
    throttle::take_slots(db, &limits(presented, client, limit)).await
}

/// Each bucket of a presented secret with its limit.
fn limits(presented: &Presented, client: &str, limit: i32) -> Vec<(String, i32)> {
    presented
        .buckets(client)
        .into_iter()
        .map(|(bucket, factor)| (bucket, limit.saturating_mul(factor)))
        .collect()
}

/// Whether `u` was erased on request (`eraseAccount` leaves a placeholder without a password).
fn erased(u: &user::Model) -> bool {
    u.password_hash.is_none() && u.display_name == super::erasure::ERASED_NAME
}

/// Where a standing sign-in stands now, with the membership and event it is for (when they
/// still exist): the state its page shows and the check `signInAsJudge` makes.
struct Standing {
    state: LinkState,
    why: &'static str,
    row: judge_sign_in::Model,
    event: Option<event::Model>,
    judge: Option<membership::Model>,
    user: Option<user::Model>,
}

async fn standing<C: ConnectionTrait>(
    db: &C,
    row: judge_sign_in::Model,
    now: DateTime<Utc>,
) -> AppResult<Standing> {
    let event = event::Entity::find_by_id(row.event_id)
        .one(db)
        .await?
        .filter(|e| e.archived_at.is_none());
    let judge = membership::Entity::find_by_id(row.membership_id)
        .one(db)
        .await?
        .filter(|m| m.role == Role::Judge && m.user_id == row.user_id);
    let user = user::Entity::find_by_id(row.user_id).one(db).await?;
    let (state, why) = if row.revoked_at.is_some() {
        (
            LinkState::Revoked,
            "this sign-in link was revoked or replaced by the organizers; ask them for the new one",
        )
    } else if event.is_none() {
        (LinkState::Revoked, "this event was deleted")
    } else if judge.is_none() {
        (
            LinkState::Revoked,
            "you are no longer a judge of this event, so this link no longer signs in",
        )
    } else if user.as_ref().is_none_or(erased) {
        (LinkState::Revoked, "this account was erased")
    } else if event
        .as_ref()
        .and_then(|e| e.judging_close)
        .is_some_and(|c| c <= now)
    {
        (
            LinkState::Expired,
            "judging has closed, so this link no longer signs in; log in with your password to see your reviews",
        )
    } else {
        (LinkState::Valid, "")
    };
    Ok(Standing {
        state,
        why,
        row,
        event,
        judge,
        user,
    })
}

/// The sign-in row a presented link or code names; NOT_FOUND when none.
async fn find<C: ConnectionTrait>(
    db: &C,
    presented: &Presented,
) -> AppResult<judge_sign_in::Model> {
    let q = match presented {
        Presented::Link(token) => judge_sign_in::Entity::find()
            .filter(judge_sign_in::Column::TokenHash.eq(sha256_hex(token.trim().as_bytes()))),
        Presented::Code { event, code } => {
            let e = super::event_by_slug(db, event.trim())
                .await
                .map_err(|e| match e {
                    AppError::NotFound(_) => AppError::NotFound("judge sign-in code"),
                    other => other,
                })?;
            judge_sign_in::Entity::find()
                .filter(judge_sign_in::Column::EventId.eq(e.id))
                .filter(
                    judge_sign_in::Column::CodeHash.eq(sha256_hex(normalize_code(code).as_bytes())),
                )
        }
    };
    q.one(db).await?.ok_or(match presented {
        Presented::Link(_) => AppError::NotFound("link"),
        Presented::Code { .. } => AppError::NotFound("judge sign-in code"),
    })
}

/// A session signed in by a standing sign-in.
pub struct SignedIn {
    pub user: user::Model,
    pub token: String,
    pub expires_at: DateTime<Utc>,
    pub event: event::Model,
}

/// `signInAsJudge` / `signInAsJudgeByCode`: starts a session that acts only as the judge
/// (see the module doc), after [`take_attempt`]; appends `judge_sign_in.used`.
pub async fn sign_in(w: &Write, presented: &Presented, client: &str) -> AppResult<SignedIn> {
    let txn = w.txn();
    let t = w.now();
    let row = find(txn, presented).await?;
    let s = standing(txn, row, t).await?;
    let (Some(event), Some(judge), Some(user)) = (s.event, s.judge, s.user) else {
        return Err(AppError::forbidden(s.why));
    };
    match s.state {
        LinkState::Valid => {}
        LinkState::Expired => return Err(AppError::WindowClosed(s.why.into())),
        LinkState::Revoked | LinkState::Used => return Err(AppError::forbidden(s.why)),
    }
    let (token, expires_at) =
        accounts::start_session(w, user.id, Some(judge.id), event.judging_close).await?;
    judge_sign_in::Entity::update_many()
        .col_expr(judge_sign_in::Column::LastUsedAt, Expr::value(t))
        .filter(judge_sign_in::Column::Id.eq(s.row.id))
        .exec(txn)
        .await?;
    throttle::give_back(w, &limits(presented, client, 0)).await?;
    let via = match presented {
        Presented::Link(_) => "link",
        Presented::Code { .. } => "code",
    };
    w.append(
        Entry::new("judge_sign_in.used", "membership", &judge.public_id)
            .by(&user.public_id)
            .in_event(&event.external_id)
            .with(json!({ "via": via })),
    )
    .await?;
    Ok(SignedIn {
        user,
        token,
        expires_at,
        event,
    })
}

/// What a standing sign-in link is, for its page (`link(kind: JUDGE_SIGN_IN)`): the event,
/// the judge role and the masked address; REVOKED or EXPIRED (judging closed) at once.
pub async fn link_info<C: ConnectionTrait>(
    db: &C,
    token: &str,
    now: DateTime<Utc>,
) -> AppResult<LinkInfo> {
    let row = find(db, &Presented::Link(token.to_owned())).await?;
    let s = standing(db, row, now).await?;
    Ok(LinkInfo {
        kind: LinkKind::JudgeSignIn,
        state: s.state,
        expires_at: s.event.as_ref().and_then(|e| e.judging_close),
        masked_email: s.user.as_ref().map(|u| mask_email(&u.email)),
        role: Some(Role::Judge),
        event: s.event,
        team: None,
    })
}

/// The access of a session started by a standing sign-in: the one judge role, in its event,
/// while the membership still holds it; never site admin, no team. Two statements fewer
/// than [`Access::load`]: one.
pub async fn judge_access<C: ConnectionTrait>(
    db: &C,
    user: &user::Model,
    membership_id: i64,
) -> AppResult<Access> {
    let mut access = Access {
        user_id: user.id,
        site_admin: false,
        ..Default::default()
    };
    if let Some(m) = membership::Entity::find_by_id(membership_id)
        .filter(membership::Column::UserId.eq(user.id))
        .filter(membership::Column::Role.eq(Role::Judge))
        .one(db)
        .await?
    {
        access.roles.insert(m.event_id, vec![Role::Judge]);
    }
    Ok(access)
}

/// The live standing sign-in of each of `memberships` that has one.
pub async fn live_of<C: ConnectionTrait>(
    db: &C,
    memberships: impl IntoIterator<Item = i64>,
) -> AppResult<HashMap<i64, judge_sign_in::Model>> {
    Ok(judge_sign_in::Entity::find()
        .filter(judge_sign_in::Column::MembershipId.is_in(memberships))
        .filter(judge_sign_in::Column::RevokedAt.is_null())
        .all(db)
        .await?
        .into_iter()
        .map(|r| (r.membership_id, r))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_reads_aloud_and_types_forgivingly() {
        let c = new_code();
        assert_eq!(c.len(), CODE_LEN);
        assert!(c.bytes().all(|b| CODE_ALPHABET.contains(&b)), "{c}");
        let shown = show_code(&c);
        assert_eq!(shown.len(), CODE_LEN + 1);
        assert_eq!(normalize_code(&shown.to_lowercase()), c);
        assert_eq!(normalize_code(" k7qm - p2xd "), "K7QMP2XD");
    }

    #[test]
    fn the_link_sits_under_the_public_url() {
        assert_eq!(
            link("https://hack.example.org/", "vjs_abc"),
            "https://hack.example.org/judge-sign-in/vjs_abc"
        );
    }
}
