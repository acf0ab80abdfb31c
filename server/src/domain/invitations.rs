//! Invitations: single-use links for one person to take one role in one event.
//!
//! A link carries a random token; only its SHA-256 is stored, bound to (event, role, email,
//! expiry). Redeeming it creates the account if there is none (the person sets their
//! password then), gives the role, and signs in. Single use is a property of the database:
//! redemption is one conditional update (`redeemed_at IS NULL AND revoked_at IS NULL AND
//! expires_at > now`), so of any number of simultaneous redemptions exactly one changes the
//! row and the others find it used. Every invitation's message goes through the outbox.

use chrono::Duration;
use entity::invitation::{self, InvitationStatus};
use entity::{event, membership, team, user};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait,
    IntoActiveModel, QueryFilter, QueryOrder,
};
use serde_json::json;

use super::outbox::{self, Links};
use super::throttle::take_slot;
use super::{Organizer, Role, Write, validate};
use crate::audit::Entry;
use crate::crypto::{bearer_token, password, public_id, sha256_hex};
use crate::error::{AppError, AppResult};

/// How long an invitation link works.
pub const INVITATION_DAYS: i64 = 14;
/// The most addresses one `inviteToEvent` takes.
pub const MAX_INVITES: usize = 500;
/// Invitation mails one address receives per throttle window
/// ([`super::throttle::THROTTLE_WINDOW_SECS`]), from every event and sender together:
/// beyond it RATE_LIMITED, so a link resent in a loop cannot flood someone's inbox.
pub const MAILS_PER_ADDRESS: i32 = 5;
/// Invitation mails one event sends per throttle window: a large import's invitations
/// fit, an organizer account used to spam does not get far. Counted in the database, so
/// the limits hold across every server process.
pub const MAILS_PER_EVENT: i32 = 2_000;

/// Takes one invitation mail's slot for `email` and for `e`, in the transaction that
/// writes the mail (a refusal writes nothing, the count included).
async fn take_mail_slot<C: ConnectionTrait>(
    txn: &C,
    e: &event::Model,
    email: &str,
    t: chrono::DateTime<chrono::Utc>,
) -> AppResult<()> {
    take_slot(txn, &format!("invite-to:{email}"), MAILS_PER_ADDRESS, t).await?;
    take_slot(txn, &format!("invite-event:{}", e.id), MAILS_PER_EVENT, t).await
}

/// A fresh invitation token: shown once (in the link), stored only as its hash.
fn new_token() -> String {
    bearer_token("vi_")
}

fn role_word(role: Role) -> &'static str {
    match role {
        Role::Participant => "a participant",
        Role::Judge => "a judge",
        Role::Organizer => "an organizer",
    }
}

/// Writes (or renews) the invitation of `email` to `role` and its message; returns it with
/// its raw token. An open invitation for the same person and role (pending or expired) is
/// renewed in place: a new token and expiry, its unsent messages cancelled, so at most one
/// link of a person for a role works at any time. RATE_LIMITED past [`MAILS_PER_ADDRESS`]
/// or [`MAILS_PER_EVENT`].
#[allow(clippy::too_many_arguments)]
async fn issue(
    w: &Write,
    by: &str,
    inviter: &str,
    e: &event::Model,
    email: &str,
    role: Role,
    team: Option<&team::Model>,
    links: &Links,
) -> AppResult<(invitation::Model, String)> {
    let txn = w.txn();
    let t = w.now();
    take_mail_slot(txn, e, email, t).await?;
    let token = new_token();
    let expires = match team {
        Some(_) => super::teams::code_expiry(e, t),
        None => t + Duration::days(INVITATION_DAYS),
    };
    let mut open = invitation::Entity::find()
        .filter(invitation::Column::EventId.eq(e.id))
        .filter(invitation::Column::Email.eq(email))
        .filter(invitation::Column::Role.eq(role))
        .filter(invitation::Column::RedeemedAt.is_null())
        .filter(invitation::Column::RevokedAt.is_null());
    open = match team {
        Some(tm) => open.filter(invitation::Column::TeamId.eq(tm.id)),
        None => open.filter(invitation::Column::TeamId.is_null()),
    };
    let open = open.one(txn).await?;
    let inv = match open {
        Some(old) => {
            outbox::cancel_for_invitation(txn, old.id).await?;
            let mut am = old.into_active_model();
            am.token_hash = Set(sha256_hex(token.as_bytes()));
            am.created_at = Set(t);
            am.expires_at = Set(expires);
            am.update(txn).await?
        }
        None => {
            invitation::ActiveModel {
                public_id: Set(public_id("inv")),
                event_id: Set(e.id),
                email: Set(email.to_owned()),
                role: Set(role),
                token_hash: Set(sha256_hex(token.as_bytes())),
                created_by: Set(by.to_owned()),
                created_at: Set(t),
                expires_at: Set(expires),
                redeemed_at: Set(None),
                redeemed_by: Set(None),
                revoked_at: Set(None),
                team_id: Set(team.map(|tm| tm.id)),
                ..Default::default()
            }
            .insert(txn)
            .await?
        }
    };
    let joining = team.map(|tm| format!("a member of team {}", tm.name));
    let message = outbox::invitation(
        email,
        &e.name,
        joining.as_deref().unwrap_or(role_word(role)),
        inviter,
        expires,
        &links.invitation(&token),
    );
    outbox::enqueue(w, message, Some(e.id), Some(inv.id)).await?;
    Ok((inv, token))
}

/// Whether the account behind `email` already holds `role` in `e` and can sign in: such a
/// person needs no invitation.
async fn already_in<C: ConnectionTrait>(
    txn: &C,
    e: &event::Model,
    email: &str,
    role: Role,
) -> AppResult<bool> {
    let Some(u) = super::user_by_email(txn, email).await? else {
        return Ok(false);
    };
    if u.password_hash.is_none() {
        return Ok(false);
    }
    Ok(membership::Entity::find_in_role(e.id, role)
        .filter(membership::Column::UserId.eq(u.id))
        .one(txn)
        .await?
        .is_some())
}

/// `inviteToEvent`: organizers invite people by email to a role. People who already hold
/// the role (and have a password) are left out; everyone else gets a fresh link.
pub async fn invite(
    w: &Write,
    org: Organizer<'_>,
    emails: &[String],
    role: Role,
    links: &Links,
) -> AppResult<Vec<invitation::Model>> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    if emails.is_empty() {
        return Err(AppError::bad_input("emails", "name at least one address"));
    }
    if emails.len() > MAX_INVITES {
        return Err(AppError::bad_input(
            "emails",
            format!("at most {MAX_INVITES} addresses at a time"),
        ));
    }
    let mut wanted: Vec<String> = Vec::new();
    for (i, raw) in emails.iter().enumerate() {
        // The whole batch is refused; the message names the address and where it is, so
        // one typo among two hundred is found at once.
        let email = validate::email("emails", raw).map_err(|_| {
            AppError::bad_input(
                "emails",
                format!(
                    "{:?} (address {} of {}) is not a valid email address",
                    raw.trim(),
                    i + 1,
                    emails.len()
                ),
            )
        })?;
        if !wanted.contains(&email) {
            wanted.push(email);
        }
    }
    let mut made = Vec::new();
    for email in &wanted {
        if already_in(txn, e, email, role).await? {
            continue;
        }
        let (inv, _) = issue(
            w,
            actor.public_id(),
            &actor.user.display_name,
            e,
            email,
            role,
            None,
            links,
        )
        .await?;
        made.push(inv);
    }
    w.append(
        Entry::new("invitations.sent", "event", &e.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({
                "role": role.to_value(),
                "invitations": made.iter().map(|i| &i.public_id).collect::<Vec<_>>(),
            })),
    )
    .await?;
    Ok(made)
}

/// `inviteImported` and `verdict invite`: an invitation for every member of `e` who has
/// no password yet (people an import brought in), for each role they hold, except those
/// whose link is still pending. Returns the new invitations with their tokens.
///
/// A write with an actor (the GraphQL mutation) needs them to organize `e`; one without
/// (the command line) is the system's.
pub async fn invite_imported(
    w: &Write,
    e: &event::Model,
    links: &Links,
) -> AppResult<Vec<(invitation::Model, String)>> {
    let txn = w.txn();
    let organizer = match w.caller() {
        Some(_) => Some(w.organizer(e).await?),
        None => None,
    };
    let (by, inviter) = match organizer.map(|o| o.actor()) {
        Some(a) => (a.public_id().to_owned(), a.user.display_name.clone()),
        None => (String::new(), "The organizers".to_owned()),
    };
    let t = w.now();
    let members = membership::Entity::find()
        .filter(membership::Column::EventId.eq(e.id))
        .order_by_asc(membership::Column::Id)
        .all(txn)
        .await?;
    let ids: Vec<i64> = members.iter().map(|m| m.user_id).collect();
    let passwordless: std::collections::HashMap<i64, user::Model> = user::Entity::find()
        .filter(user::Column::Id.is_in(ids))
        .filter(user::Column::PasswordHash.is_null())
        .all(txn)
        .await?
        .into_iter()
        .map(|u| (u.id, u))
        .collect();
    let pending: Vec<(String, Role)> = invitation::Entity::find()
        .filter(invitation::Column::EventId.eq(e.id))
        .filter(invitation::Column::RedeemedAt.is_null())
        .filter(invitation::Column::RevokedAt.is_null())
        .filter(invitation::Column::ExpiresAt.gt(t))
        .all(txn)
        .await?
        .into_iter()
        .map(|i| (i.email, i.role))
        .collect();
    let mut made = Vec::new();
    for m in &members {
        let Some(u) = passwordless.get(&m.user_id) else {
            continue;
        };
        if pending.contains(&(u.email.clone(), m.role)) {
            continue;
        }
        made.push(issue(w, &by, &inviter, e, &u.email, m.role, None, links).await?);
    }
    w.append(
        Entry::new("invitations.sent_to_imported", "event", &e.public_id)
            .by(&by)
            .in_event(&e.external_id)
            .with(json!({
                "invitations": made.iter().map(|(i, _)| &i.public_id).collect::<Vec<_>>(),
            })),
    )
    .await?;
    Ok(made)
}

/// The invitation with public id `id`, for its event's organizers.
async fn for_organizer(w: &Write, id: &str) -> AppResult<(invitation::Model, event::Model)> {
    let txn = w.txn();
    let inv = invitation::Entity::find()
        .filter(invitation::Column::PublicId.eq(id))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("invitation"))?;
    let e = event::Entity::find_by_id(inv.event_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("event"))?;
    w.organizer(&e).await?;
    Ok((inv, e))
}

/// `revokeInvitation`: the link stops working and its unsent messages are cancelled.
/// CONFLICT once it was redeemed or revoked.
pub async fn revoke(w: &Write, id: &str) -> AppResult<invitation::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let (inv, e) = for_organizer(w, id).await?;
    let t = w.now();
    match inv.status(t) {
        InvitationStatus::Redeemed => {
            return Err(AppError::conflict("this invitation was already used"));
        }
        InvitationStatus::Revoked => {
            return Err(AppError::conflict("this invitation is already revoked"));
        }
        InvitationStatus::Pending | InvitationStatus::Expired => {}
    }
    outbox::cancel_for_invitation(txn, inv.id).await?;
    let mut am = inv.into_active_model();
    am.revoked_at = Set(Some(t));
    let inv = am.update(txn).await?;
    w.append(
        Entry::new("invitation.revoked", "invitation", &inv.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id),
    )
    .await?;
    Ok(inv)
}

/// `resendInvitation`: a new link (the old one stops working) with a new expiry, and a new
/// message. CONFLICT once it was redeemed or revoked.
pub async fn resend(w: &Write, id: &str, links: &Links) -> AppResult<invitation::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let (inv, e) = for_organizer(w, id).await?;
    match inv.status(w.now()) {
        InvitationStatus::Redeemed => {
            return Err(AppError::conflict("this invitation was already used"));
        }
        InvitationStatus::Revoked => {
            return Err(AppError::conflict(
                "this invitation was revoked; invite the person again",
            ));
        }
        InvitationStatus::Pending | InvitationStatus::Expired => {}
    }
    let team = match inv.team_id {
        Some(id) => team::Entity::find_by_id(id).one(txn).await?,
        None => None,
    };
    let (inv, _) = issue(
        w,
        actor.public_id(),
        &actor.user.display_name,
        &e,
        &inv.email,
        inv.role,
        team.as_ref(),
        links,
    )
    .await?;
    w.append(
        Entry::new("invitation.resent", "invitation", &inv.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id),
    )
    .await?;
    Ok(inv)
}

/// What redeeming a link gave.
pub struct Redeemed {
    pub user: user::Model,
    /// The new session's secret.
    pub token: String,
    pub invitation: invitation::Model,
}

/// `redeemInvitation`. Refusals: an unknown token is NOT_FOUND, a used one CONFLICT, a
/// revoked one FORBIDDEN, an expired one WINDOW_CLOSED. An account that already has a
/// password redeems only when the request is signed in as it (the link alone does not
/// sign anyone in to an existing account); otherwise `password` is required and becomes
/// the account's password, and `displayName` names a new account (default: the part of
/// the email before the `@`). The caller signs in with a new session.
pub async fn redeem(
    w: &Write,
    token: &str,
    new_password: Option<&str>,
    display_name: Option<&str>,
) -> AppResult<Redeemed> {
    let (txn, caller) = (w.txn(), w.caller());
    let hash = sha256_hex(token.trim().as_bytes());
    let inv = invitation::Entity::find()
        .filter(invitation::Column::TokenHash.eq(&hash))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("invitation"))?;
    let t = w.now();
    match inv.status(t) {
        InvitationStatus::Redeemed => {
            return Err(AppError::conflict("this invitation link was already used"));
        }
        InvitationStatus::Revoked => {
            return Err(AppError::forbidden(
                "this invitation was revoked by the organizers",
            ));
        }
        InvitationStatus::Expired => {
            return Err(AppError::WindowClosed(
                "this invitation link has expired; ask the organizers for a new one".into(),
            ));
        }
        InvitationStatus::Pending => {}
    }
    // Claim the link first: the conditional update is what makes it single-use. A request
    // racing this one waits here (PostgreSQL's row lock; SQLite's one writer) and then
    // finds nothing to update.
    let claimed = invitation::Entity::update_many()
        .col_expr(invitation::Column::RedeemedAt, Expr::value(t))
        .filter(invitation::Column::Id.eq(inv.id))
        .filter(invitation::Column::RedeemedAt.is_null())
        .filter(invitation::Column::RevokedAt.is_null())
        .filter(invitation::Column::ExpiresAt.gt(t))
        .exec(txn)
        .await?;
    if claimed.rows_affected != 1 {
        return Err(AppError::conflict("this invitation link was already used"));
    }
    let e = w.event_by_id(inv.event_id).await?;
    let u = match super::user_by_email(txn, &inv.email).await? {
        Some(u) if u.password_hash.is_some() => {
            if caller.is_none_or(|c| c.user.id != u.id) {
                return Err(AppError::Unauthenticated);
            }
            u
        }
        found => {
            let Some(pass) = new_password else {
                return Err(AppError::bad_input(
                    "password",
                    "choose a password to finish creating your account",
                ));
            };
            validate::password("password", pass)?;
            let hash = password::hash(pass).map_err(AppError::Internal)?;
            match found {
                Some(u) => {
                    let mut am = u.into_active_model();
                    am.password_hash = Set(Some(hash));
                    if let Some(n) = display_name {
                        am.display_name = Set(validate::name("displayName", n, 100)?);
                    }
                    let u = am.update(txn).await?;
                    super::recovery::end_reset_links(txn, u.id, t).await?;
                    u
                }
                None => {
                    let name = match display_name {
                        Some(n) => validate::name("displayName", n, 100)?,
                        None => inv.email.split('@').next().unwrap_or("guest").to_owned(),
                    };
                    // The link reached this address.
                    let confirmed = super::accounts::Standing::Confirmed;
                    super::accounts::insert_user(w, inv.email.clone(), name, hash, confirmed)
                        .await?
                }
            }
        }
    };
    // The link reached the address: it is confirmed.
    let u = if u.email_confirmed_at.is_none() {
        let mut am = u.into_active_model();
        am.email_confirmed_at = Set(Some(t));
        am.update(txn).await?
    } else {
        u
    };
    let holds = membership::Entity::find_in_role(e.id, inv.role)
        .filter(membership::Column::UserId.eq(u.id))
        .one(txn)
        .await?
        .is_some();
    if !holds {
        if inv.role == Role::Judge {
            super::events::check_can_judge(txn, u.id, e.id).await?;
        }
        super::events::insert_membership(txn, u.id, e.id, inv.role, None, "[]", t).await?;
    }
    if let Some(team_id) = inv.team_id {
        // A team's link: join the team, under the same rules as a code (the deadline, one
        // team per person, no judges, the size limit, held under the team's row lock).
        let tm = team::Entity::find_by_id(team_id)
            .one(txn)
            .await?
            .ok_or(AppError::NotFound("team"))?;
        super::teams::require_teams_open(&e, t)?;
        super::teams::add_with_room(txn, &tm, &e, u.id, t).await?;
    }
    let mut am = inv.into_active_model();
    am.redeemed_at = Set(Some(t));
    am.redeemed_by = Set(Some(u.id));
    let inv = am.update(txn).await?;
    w.append(
        Entry::new("invitation.redeemed", "invitation", &inv.public_id)
            .by(&u.public_id)
            .in_event(&e.external_id)
            .with(json!({ "role": inv.role.to_value(), "user": u.public_id })),
    )
    .await?;
    let token = super::accounts::new_session(w, u.id).await?;
    Ok(Redeemed {
        token,
        user: u,
        invitation: inv,
    })
}

/// `inviteToTeam`: a member of `tm` (while submissions are open) or an organizer makes a
/// single-use link for one person to join the team, valid 72 hours or until the deadline.
/// The link is returned to the inviter (to pass on) and mailed through the outbox.
pub async fn invite_to_team(
    w: &Write,
    tm: &team::Model,
    email: &str,
    links: &Links,
) -> AppResult<(invitation::Model, String)> {
    let actor = w.actor()?;
    let e = w.event_by_id(tm.event_id).await?;
    let email = validate::email("email", email)?;
    // Members until the deadline; organizers too, since a link made after it could never
    // be used.
    if super::teams::team_actor(w, tm, &e).await? {
        super::teams::require_teams_open(&e, w.now())?;
    }
    let (inv, token) = issue(
        w,
        actor.public_id(),
        &actor.user.display_name,
        &e,
        &email,
        Role::Participant,
        Some(tm),
        links,
    )
    .await?;
    w.append(
        Entry::new("team.invitation_sent", "team", &tm.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "invitation": inv.public_id })),
    )
    .await?;
    Ok((inv, links.invitation(&token)))
}
