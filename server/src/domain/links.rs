//! What a link someone was sent is, read without using it: the state every link page shows
//! before asking for anything (`Query.link`). Reads only.
//!
//! Enumeration: the token is the credential. An unknown token is NOT_FOUND whatever the
//! kind, and a known one tells its holder only what the mail that carried it already said:
//! the event, role and team it is for, and the address it was sent to, masked
//! (`a***@example.com`). Nothing is said about any other account, not even whether the
//! address has one.

use chrono::{DateTime, Utc};
use entity::invitation::InvitationStatus;
use entity::membership::Role;
use entity::{email_confirmation, event, invitation, password_reset, team, user};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use super::clock;
use crate::crypto::sha256_hex;
use crate::error::{AppError, AppResult};

/// Where a one-time link stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// It works: using it now would succeed.
    Valid,
    /// It was used; it works once.
    Used,
    /// Its time ran out.
    Expired,
    /// It was withdrawn (an invitation revoked or resent, a setup link made moot by an
    /// existing account, a link of an event that was deleted).
    Revoked,
}

/// The kinds of link people are sent, each with its page in the web client.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinkKind {
    /// `/invite/{token}`: a role in an event (a participant's may name a team).
    Invitation,
    /// `/reset/{token}`: a new password.
    PasswordReset,
    /// `/confirm/{token}`: proves an address is the account's.
    EmailConfirmation,
    /// `/join/{code}`: a team's shared join code.
    TeamJoin,
    /// `/judge-sign-in/{token}`: a judge's standing sign-in (never USED: it works until
    /// revoked, replaced, the role goes, or judging closes, which reads EXPIRED).
    JudgeSignIn,
}

/// What a link is for, as its page shows it.
#[derive(Clone, Debug)]
pub struct LinkInfo {
    pub kind: LinkKind,
    pub state: LinkState,
    pub expires_at: Option<DateTime<Utc>>,
    /// The address the link was sent to, masked; none for a team's join code.
    pub masked_email: Option<String>,
    pub role: Option<Role>,
    pub event: Option<event::Model>,
    pub team: Option<String>,
}

/// `ada@example.com` as `a***@example.com`: enough for its owner to recognise, not enough
/// to learn an address from.
pub fn mask_email(email: &str) -> String {
    match email.split_once('@') {
        Some((local, domain)) => {
            let first: String = local.chars().take(1).collect();
            format!("{first}***@{domain}")
        }
        None => "***".to_owned(),
    }
}

/// The event a link belongs to, unless it was deleted (archived): then the link is void.
async fn live_event<C: ConnectionTrait>(db: &C, id: i64) -> AppResult<Option<event::Model>> {
    Ok(event::Entity::find_by_id(id)
        .one(db)
        .await?
        .filter(|e| e.archived_at.is_none()))
}

/// What the link of `kind` with `token` is now. NOT_FOUND when no such link exists.
pub async fn read<C: ConnectionTrait>(db: &C, kind: LinkKind, token: &str) -> AppResult<LinkInfo> {
    // A read, part of no write: the link's state at this request's own reading of the clock.
    let now = clock(db).await?;
    let hash = sha256_hex(token.trim().as_bytes());
    let mut info = LinkInfo {
        kind,
        state: LinkState::Valid,
        expires_at: None,
        masked_email: None,
        role: None,
        event: None,
        team: None,
    };
    match kind {
        LinkKind::Invitation => {
            let inv = invitation::Entity::find()
                .filter(invitation::Column::TokenHash.eq(&hash))
                .one(db)
                .await?
                .ok_or(AppError::NotFound("link"))?;
            info.state = match inv.status(now) {
                InvitationStatus::Pending => LinkState::Valid,
                InvitationStatus::Redeemed => LinkState::Used,
                InvitationStatus::Expired => LinkState::Expired,
                InvitationStatus::Revoked => LinkState::Revoked,
            };
            info.expires_at = Some(inv.expires_at);
            info.masked_email = Some(mask_email(&inv.email));
            info.role = Some(inv.role);
            if let Some(team_id) = inv.team_id {
                info.team = team::Entity::find_by_id(team_id)
                    .one(db)
                    .await?
                    .map(|t| t.name);
            }
            info.event = live_event(db, inv.event_id).await?;
            if info.event.is_none() {
                info.state = LinkState::Revoked;
            }
        }
        LinkKind::PasswordReset => {
            let r = password_reset::Entity::find()
                .filter(password_reset::Column::TokenHash.eq(&hash))
                .one(db)
                .await?
                .ok_or(AppError::NotFound("link"))?;
            info.state = if r.used_at.is_some() {
                LinkState::Used
            } else if r.expires_at <= now {
                LinkState::Expired
            } else {
                LinkState::Valid
            };
            info.expires_at = Some(r.expires_at);
            info.masked_email = user::Entity::find_by_id(r.user_id)
                .one(db)
                .await?
                .map(|u| mask_email(&u.email));
        }
        LinkKind::EmailConfirmation => {
            let c = email_confirmation::Entity::find()
                .filter(email_confirmation::Column::TokenHash.eq(&hash))
                .one(db)
                .await?
                .ok_or(AppError::NotFound("link"))?;
            info.state = if c.used_at.is_some() {
                LinkState::Used
            } else if c.expires_at <= now {
                LinkState::Expired
            } else {
                LinkState::Valid
            };
            info.expires_at = Some(c.expires_at);
            info.masked_email = Some(mask_email(&c.email));
        }
        LinkKind::TeamJoin => {
            let t = team::Entity::find()
                .filter(team::Column::InviteCode.eq(token.trim()))
                .one(db)
                .await?
                .ok_or(AppError::NotFound("link"))?;
            let e = live_event(db, t.event_id)
                .await?
                .ok_or(AppError::NotFound("link"))?;
            // As `joinTeam` judges it: teams close at the deadline, a code at its expiry.
            let until = t
                .invite_code_expires_at
                .map_or(e.submissions_close, |x| x.min(e.submissions_close));
            info.state = if until <= now {
                LinkState::Expired
            } else {
                LinkState::Valid
            };
            info.expires_at = Some(until);
            info.role = Some(Role::Participant);
            info.team = Some(t.name);
            info.event = Some(e);
        }
        LinkKind::JudgeSignIn => info = super::judge_sign_in::link_info(db, token, now).await?,
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::mask_email;

    #[test]
    fn a_masked_address_keeps_one_letter_and_the_domain() {
        assert_eq!(mask_email("ada@example.com"), "a***@example.com");
        assert_eq!(mask_email("x@example.org"), "x***@example.org");
        assert_eq!(mask_email("élodie@exemple.fr"), "é***@exemple.fr");
        assert_eq!(mask_email("nonsense"), "***");
    }
}
