//! Erasure (issue 13): a site administrator erases a person's account on their request.
//!
//! ## What `eraseAccount` does, in one transaction
//!
//! The account row stays as an anonymous placeholder, so that everything that points at
//! it keeps its meaning: the person's memberships (a judge's reviews, and so every
//! calibration run and published result, stay consistent), their team memberships, the
//! projects their team made, and the audit rows that name them by public id. What made it
//! theirs goes:
//!
//! - the account: email becomes `erased+<public id>@erased.invalid` (a reserved domain
//!   that receives no mail), the display name `Erased account`, no password (so nobody can
//!   log in to it), not a site admin, not confirmed;
//! - every credential: sessions and personal API tokens are deleted (their open websockets
//!   close), and so are pending email confirmations, password resets, idempotency keys,
//!   log-in throttle buckets that name the address and mail to any of their addresses;
//! - what they wrote: the body of each of their comments becomes `[erased]` (and an
//!   organizer's reason for hiding one of them too), each of their review comments
//!   (current and every revision) becomes `[erased]`; scores stay;
//! - where others wrote their address: invitations to it and account-voter rows get the
//!   placeholder address, allowlist entries for it are deleted;
//! - the audit chain: each row that holds their personal data is redacted in place (see
//!   [`crate::audit`]'s module doc): `display_name` of their profile updates, `label` of
//!   their API tokens, `body_sha256` of their comments, an organizer's `reason` for hiding
//!   their comment or taking them off a team, and any value anywhere equal to one of their
//!   addresses. Hashes stay, so `verdict audit verify` still passes;
//! - one `account.erased` entry by the administrator, whose payload holds counts and the
//!   seqs it redacted with the hash of each redacted payload, no personal data.
//!
//! Published results carry no names (projects, ranks and pseudonymous judge ids), so they
//! and their signatures are untouched; wherever a result shows a person (a team's members),
//! the name now reads `Erased account`. A result bundle exported before the erasure still
//! verifies: it carries its own copy of the rows.
//!
//! Refused with nothing written: a caller who is not a site administrator (FORBIDDEN), a
//! confirmation that is not the email typed again (BAD_USER_INPUT on `confirm`), an address
//! with no account (NOT_FOUND), the caller's own account (CONFLICT: another administrator
//! erases it).

use std::collections::BTreeSet;

use entity::{
    api_token, audit_event, comment, email_confirmation, idempotency_key, invitation,
    login_throttle, membership, outbox_message, password_reset, review, review_revision, session,
    user, vote_allowlist, voter,
};
use sea_orm::sea_query::{Expr, LikeExpr};
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::{Value, json};

use super::{Actor, validate};
use crate::audit::{self, Entry, redact};
use crate::error::{AppError, AppResult};

/// What replaces erased text.
pub const ERASED: &str = "[erased]";
/// The display name of an erased account.
pub const ERASED_NAME: &str = "Erased account";

/// The placeholder address of an erased account (or voter row).
pub fn placeholder_email(public_id: &str) -> String {
    format!("erased+{public_id}@erased.invalid").to_lowercase()
}

/// What an erasure did, for the caller (and the bus).
#[derive(Debug, Clone)]
pub struct Erased {
    pub user: user::Model,
    pub redacted_rows: usize,
}

/// `eraseAccount`: see the module doc.
pub async fn erase_account<C: ConnectionTrait>(
    txn: &C,
    actor: &Actor,
    email: &str,
    confirm: &str,
) -> AppResult<Erased> {
    if !actor.user.is_site_admin {
        return Err(AppError::forbidden(
            "only site administrators erase accounts",
        ));
    }
    let email = validate::email("email", email)?;
    if confirm.trim().to_lowercase() != email {
        return Err(AppError::bad_input(
            "confirm",
            "type the account's email again to confirm the erasure",
        ));
    }
    // Every write appends, so holding the head keeps the rows read below as they are
    // until the erasure commits.
    audit::lock_head(txn).await?;
    let u = super::user_by_email(txn, &email)
        .await?
        .ok_or(AppError::NotFound("account"))?;
    if u.id == actor.user.id {
        return Err(AppError::conflict(
            "you cannot erase your own account: another site administrator can",
        ));
    }

    // Every address that was theirs: the account's, and any it was changing to.
    let mut addresses: BTreeSet<String> = BTreeSet::from([u.email.clone()]);
    for c in email_confirmation::Entity::find()
        .filter(email_confirmation::Column::UserId.eq(u.id))
        .all(txn)
        .await?
    {
        addresses.insert(c.email);
    }

    // What they wrote.
    let comments = comment::Entity::find()
        .filter(comment::Column::AuthorId.eq(u.id))
        .all(txn)
        .await?;
    let comment_ids: Vec<String> = comments.iter().map(|c| c.public_id.clone()).collect();
    comment::Entity::update_many()
        .col_expr(comment::Column::Body, Expr::value(ERASED))
        .filter(comment::Column::AuthorId.eq(u.id))
        .exec(txn)
        .await?;
    comment::Entity::update_many()
        .col_expr(comment::Column::HiddenReason, Expr::value(ERASED))
        .filter(comment::Column::AuthorId.eq(u.id))
        .filter(comment::Column::HiddenReason.is_not_null())
        .exec(txn)
        .await?;
    let judge_ids: Vec<i64> = membership::Entity::find()
        .filter(membership::Column::UserId.eq(u.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|m| m.id)
        .collect();
    let reviews: Vec<i64> = review::Entity::find()
        .filter(review::Column::JudgeId.is_in(judge_ids.clone()))
        .all(txn)
        .await?
        .into_iter()
        .map(|r| r.id)
        .collect();
    let reviews_erased = review::Entity::update_many()
        .col_expr(review::Column::Comment, Expr::value(ERASED))
        .filter(review::Column::Id.is_in(reviews.clone()))
        .filter(review::Column::Comment.ne(""))
        .exec(txn)
        .await?
        .rows_affected;
    review_revision::Entity::update_many()
        .col_expr(review_revision::Column::Comment, Expr::value(ERASED))
        .filter(review_revision::Column::ReviewId.is_in(reviews))
        .filter(review_revision::Column::Comment.ne(""))
        .filter(review_revision::Column::Comment.ne(ERASED))
        .exec(txn)
        .await?;

    // The audit rows that hold their personal data.
    let redacted = redact_audit(txn, &u, &comment_ids, &addresses).await?;

    // Credentials and what names their address.
    let sessions = session::Entity::delete_many()
        .filter(session::Column::UserId.eq(u.id))
        .exec(txn)
        .await?
        .rows_affected;
    let api_tokens = api_token::Entity::delete_many()
        .filter(api_token::Column::UserId.eq(u.id))
        .exec(txn)
        .await?
        .rows_affected;
    email_confirmation::Entity::delete_many()
        .filter(email_confirmation::Column::UserId.eq(u.id))
        .exec(txn)
        .await?;
    password_reset::Entity::delete_many()
        .filter(password_reset::Column::UserId.eq(u.id))
        .exec(txn)
        .await?;
    idempotency_key::Entity::delete_many()
        .filter(idempotency_key::Column::ActorUserId.eq(u.id))
        .exec(txn)
        .await?;
    let mut buckets = Condition::any();
    for a in &addresses {
        buckets = buckets
            .add(login_throttle::Column::Bucket.eq(format!("acct:{a}")))
            .add(login_throttle::Column::Bucket.like(prefix(&format!("pair:{a}|"))))
            .add(login_throttle::Column::Bucket.like(prefix(&format!("seen:{a}|"))));
    }
    login_throttle::Entity::delete_many()
        .filter(buckets)
        .exec(txn)
        .await?;
    let addresses_list: Vec<String> = addresses.iter().cloned().collect();
    outbox_message::Entity::delete_many()
        .filter(outbox_message::Column::ToEmail.is_in(addresses_list.clone()))
        .exec(txn)
        .await?;
    let placeholder = placeholder_email(&u.public_id);
    for inv in invitation::Entity::find()
        .filter(
            Condition::any()
                .add(invitation::Column::Email.is_in(addresses_list.clone()))
                .add(invitation::Column::RedeemedBy.eq(u.id)),
        )
        .all(txn)
        .await?
    {
        invitation::Entity::update_many()
            .col_expr(
                invitation::Column::Email,
                Expr::value(placeholder_email(&inv.public_id)),
            )
            .filter(invitation::Column::Id.eq(inv.id))
            .exec(txn)
            .await?;
    }
    for v in voter::Entity::find()
        .filter(
            Condition::any()
                .add(voter::Column::UserId.eq(u.id))
                .add(voter::Column::Email.is_in(addresses_list.clone()))
                .add(voter::Column::Address.is_in(addresses_list.clone())),
        )
        .all(txn)
        .await?
    {
        let p = placeholder_email(&v.public_id);
        voter::Entity::update_many()
            .col_expr(voter::Column::Email, Expr::value(p.clone()))
            .col_expr(voter::Column::Address, Expr::value(p))
            .filter(voter::Column::Id.eq(v.id))
            .exec(txn)
            .await?;
    }
    vote_allowlist::Entity::delete_many()
        .filter(vote_allowlist::Column::Email.is_in(addresses_list))
        .exec(txn)
        .await?;

    // The account itself, as the placeholder.
    user::Entity::update_many()
        .col_expr(user::Column::Email, Expr::value(placeholder))
        .col_expr(user::Column::DisplayName, Expr::value(ERASED_NAME))
        .col_expr(
            user::Column::PasswordHash,
            Expr::value(Option::<String>::None),
        )
        .col_expr(user::Column::IsSiteAdmin, Expr::value(false))
        .col_expr(
            user::Column::EmailConfirmedAt,
            Expr::value(Option::<chrono::DateTime<chrono::Utc>>::None),
        )
        .filter(user::Column::Id.eq(u.id))
        .exec(txn)
        .await?;

    audit::append(
        txn,
        Entry::new(redact::ERASED_ACTION, "user", &u.public_id)
            .by(actor.public_id())
            .with(json!({
                "redacted_seqs": redacted.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(),
                "redacted_rows": redacted
                    .iter()
                    .map(|(seq, payload)| redact::claim(*seq, payload))
                    .collect::<Vec<_>>(),
                "comments": comments.len(),
                "review_comments": reviews_erased,
                "sessions": sessions,
                "api_tokens": api_tokens,
            })),
    )
    .await?;
    let user = user::Entity::find_by_id(u.id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("account"))?;
    Ok(Erased {
        user,
        redacted_rows: redacted.len(),
    })
}

/// A LIKE pattern matching every text that starts with `s` (its wildcards escaped).
fn prefix(s: &str) -> LikeExpr {
    LikeExpr::new(format!("{}%", like_escape(s))).escape('\\')
}

fn like_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// Redacts every audit row that holds `u`'s personal data (see the module doc); returns
/// their seqs, ascending.
async fn redact_audit<C: ConnectionTrait>(
    txn: &C,
    u: &user::Model,
    comment_ids: &[String],
    addresses: &BTreeSet<String>,
) -> AppResult<Vec<(i64, String)>> {
    let me = u.public_id.as_str();
    let mut candidates = Condition::any()
        .add(audit_event::Column::Actor.eq(me))
        .add(audit_event::Column::ObjectId.eq(me))
        .add(audit_event::Column::Action.eq("team.member_removed"));
    if !comment_ids.is_empty() {
        candidates = candidates.add(audit_event::Column::ObjectId.is_in(comment_ids.to_vec()));
    }
    for a in addresses {
        candidates = candidates.add(
            audit_event::Column::Payload
                .like(LikeExpr::new(format!("%{}%", like_escape(a))).escape('\\')),
        );
    }
    let rows = audit_event::Entity::find()
        .filter(candidates)
        .order_by_asc(audit_event::Column::Seq)
        .all(txn)
        .await?;
    let mut seqs = Vec::new();
    for row in rows {
        let Ok(payload) = serde_json::from_str::<Value>(&row.payload) else {
            continue;
        };
        let own = row.actor == me || row.object_id == me;
        let about_their_comment =
            row.action == "comment.hidden" && comment_ids.contains(&row.object_id);
        let took_them_off =
            row.action == "team.member_removed" && payload.get("user") == Some(&json!(me));
        let personal = |name: &str, v: &Value| {
            let address = v
                .as_str()
                .is_some_and(|s| addresses.contains(&s.trim().to_lowercase()));
            address
                || (own && matches!(name, "display_name" | "label" | "body_sha256"))
                || ((about_their_comment || took_them_off) && name == "reason")
        };
        if let Some(redacted) = redact::redact(&payload, &personal) {
            let stored = redact::store(txn, &row, &redacted).await?;
            seqs.push((row.seq, stored));
        }
    }
    Ok(seqs)
}
