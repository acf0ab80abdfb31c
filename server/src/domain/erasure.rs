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
//!   every throttle bucket that names one of their addresses or its mailbox (log-in,
//!   reset, invitation and voting-link limits) and mail to any of their addresses;
//! - what they wrote: the body of each of their comments becomes `[erased]` (and an
//!   organizer's reason for hiding one of them too), each of their review comments
//!   (current and every revision) becomes `[erased]`; scores stay;
//! - where others wrote their address: invitations to it and voter rows (the account's,
//!   and email voters of the address or its mailbox) get a placeholder address, allow-list
//!   entries for its mailbox are deleted;
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
//! ## `eraseAddress`: a person without an account
//!
//! Someone who voted by email, was invited or was allow-listed, and never had an account,
//! may ask to be erased too: [`erase_address`] does what the two items above do for
//! addresses (voter rows and invitations keep their place under a placeholder, so ballots
//! still count; allow-list entries, mail and throttle buckets go) and redacts the address
//! from the audit log, with the same kind of `account.erased` entry (on an object of kind
//! `address` with an id of its own).
//!
//! ## Refusals
//!
//! Refused with nothing written, both: a caller who is not a site administrator
//! (FORBIDDEN), a confirmation that is not the email typed again (BAD_USER_INPUT on
//! `confirm`). `eraseAccount`: an address with no account (NOT_FOUND), the caller's own
//! account (CONFLICT: another administrator erases it). `eraseAddress`: an account's
//! address (CONFLICT: erase the account), an address nothing names (NOT_FOUND).

use std::collections::BTreeSet;

use entity::{
    api_token, audit_event, comment, email_confirmation, idempotency_key, invitation,
    login_throttle, membership, outbox_message, password_reset, review, review_revision, session,
    user, vote_allowlist, voter,
};
use sea_orm::sea_query::{Expr, LikeExpr};
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::{Value, json};

use super::{Actor, Write, validate};
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
pub async fn erase_account(w: &Write, email: &str, confirm: &str) -> AppResult<Erased> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let email = confirmed(actor, email, confirm)?;
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
    let redacted = redact_audit(txn, Some(&u), &comment_ids, &addresses).await?;

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
    let traces = erase_traces(txn, &addresses, Some(u.id)).await?;

    let placeholder = placeholder_email(&u.public_id);
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

    w.append(
        Entry::new(redact::ERASED_ACTION, "user", &u.public_id)
            .by(actor.public_id())
            .with(erasure_entry(
                &redacted,
                json!({
                    "comments": comments.len(),
                    "review_comments": reviews_erased,
                    "sessions": sessions,
                    "api_tokens": api_tokens,
                    "voters": traces.voters,
                    "invitations": traces.invitations,
                }),
            )),
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

/// `eraseAddress`: erases an address that no account has (a person who voted by email, was
/// invited or allow-listed, and asks to be forgotten): everything [`erase_traces`] finds
/// and every audit payload holding the address. One `account.erased` entry on an object
/// of kind `address` with an id of its own (never the address), holding counts and the
/// redacted rows. Returns how many records named the address. Refused with nothing
/// written: as [`erase_account`], CONFLICT when an account has the address (erase the
/// account: its erasure covers the same), NOT_FOUND when nothing names it.
pub async fn erase_address(w: &Write, email: &str, confirm: &str) -> AppResult<u64> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let email = confirmed(actor, email, confirm)?;
    audit::lock_head(txn).await?;
    if super::user_by_email(txn, &email).await?.is_some() {
        return Err(AppError::conflict(
            "an account has this address: erase the account (eraseAccount), which erases \
             the address too",
        ));
    }
    let addresses = BTreeSet::from([email]);
    let traces = erase_traces(txn, &addresses, None).await?;
    let redacted = redact_audit(txn, None, &[], &addresses).await?;
    let records = traces.total() + redacted.len() as u64;
    if records == 0 {
        // Every statement above changed nothing: there is nothing to roll back.
        return Err(AppError::NotFound("record naming this address"));
    }
    w.append(
        Entry::new(
            redact::ERASED_ACTION,
            "address",
            &crate::crypto::public_id("era"),
        )
        .by(actor.public_id())
        .with(erasure_entry(
            &redacted,
            json!({
                "voters": traces.voters,
                "invitations": traces.invitations,
                "allowlist_entries": traces.allowlist,
                "mail": traces.mail,
            }),
        )),
    )
    .await?;
    Ok(records)
}

/// The payload of an `account.erased` entry: the rows it redacted (their seqs, and each
/// redacted payload's hash, which binds it to the chain: [`redact::claim`]) and `counts`
/// (no personal data).
fn erasure_entry(redacted: &[(i64, String)], counts: Value) -> Value {
    let mut payload = json!({
        "redacted_seqs": redacted.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(),
        "redacted_rows": redacted
            .iter()
            .map(|(seq, payload)| redact::claim(*seq, payload))
            .collect::<Vec<_>>(),
    });
    if let (Some(p), Value::Object(counts)) = (payload.as_object_mut(), counts) {
        p.extend(counts);
    }
    payload
}

/// The address to erase, once the caller may erase and typed it twice: FORBIDDEN for
/// anyone but a site administrator, BAD_USER_INPUT on `email` when it is not an address
/// and on `confirm` when it is not the same one.
fn confirmed(actor: &Actor, email: &str, confirm: &str) -> AppResult<String> {
    if !actor.user.is_site_admin {
        return Err(AppError::forbidden("only site administrators erase people"));
    }
    let email = validate::email("email", email)?;
    if confirm.trim().to_lowercase() != email {
        return Err(AppError::bad_input(
            "confirm",
            "type the email again to confirm the erasure",
        ));
    }
    Ok(email)
}

/// What [`erase_traces`] changed or removed.
struct Traces {
    buckets: u64,
    mail: u64,
    invitations: u64,
    voters: u64,
    allowlist: u64,
}

impl Traces {
    fn total(&self) -> u64 {
        self.buckets + self.mail + self.invitations + self.voters + self.allowlist
    }
}

/// Everything outside an account that names one of `addresses` (and, given the account,
/// what names it): log-in throttle buckets and queued mail are deleted; invitations to
/// the address (or redeemed by the account) and voter rows for it (by the address as
/// given, its normalized mailbox, or the account) get a placeholder address of their own;
/// allow-list entries of its mailbox are deleted. Allow-lists and email voters hold the
/// normalized mailbox (`voting::normalize_email`), so `Ada.Lovelace+x@gmail.com` is
/// found under `adalovelace@gmail.com` too.
async fn erase_traces<C: ConnectionTrait>(
    txn: &C,
    addresses: &BTreeSet<String>,
    user_id: Option<i64>,
) -> AppResult<Traces> {
    let addresses_list: Vec<String> = addresses.iter().cloned().collect();
    let mailboxes: Vec<String> = addresses
        .iter()
        .map(|a| super::voting::normalize_email(a))
        .collect();
    // Throttle buckets are `kind:key` or `kind:key|client` (`acct:`, `pair:`, `seen:`,
    // `reset:`, `invite-to:`, `vote-link:` name an address or mailbox): every kind, so that
    // a bucket added later is erased too.
    let mut buckets = Condition::any();
    for a in addresses_list.iter().chain(&mailboxes) {
        let key = like_escape(&format!(":{a}"));
        buckets = buckets
            .add(login_throttle::Column::Bucket.like(LikeExpr::new(format!("%{key}")).escape('\\')))
            .add(
                login_throttle::Column::Bucket
                    .like(LikeExpr::new(format!("%{key}|%")).escape('\\')),
            );
    }
    let buckets = login_throttle::Entity::delete_many()
        .filter(buckets)
        .exec(txn)
        .await?
        .rows_affected;
    let mail = outbox_message::Entity::delete_many()
        .filter(outbox_message::Column::ToEmail.is_in(addresses_list.clone()))
        .exec(txn)
        .await?
        .rows_affected;
    let mut invited = Condition::any().add(invitation::Column::Email.is_in(addresses_list.clone()));
    if let Some(id) = user_id {
        invited = invited.add(invitation::Column::RedeemedBy.eq(id));
    }
    let invitations = invitation::Entity::find().filter(invited).all(txn).await?;
    for inv in &invitations {
        invitation::Entity::update_many()
            .col_expr(
                invitation::Column::Email,
                Expr::value(placeholder_email(&inv.public_id)),
            )
            .filter(invitation::Column::Id.eq(inv.id))
            .exec(txn)
            .await?;
    }
    let mut voting = Condition::any()
        .add(voter::Column::Email.is_in(addresses_list.clone()))
        .add(voter::Column::Email.is_in(mailboxes.clone()))
        .add(voter::Column::Address.is_in(addresses_list));
    if let Some(id) = user_id {
        voting = voting.add(voter::Column::UserId.eq(id));
    }
    let voters = voter::Entity::find().filter(voting).all(txn).await?;
    for v in &voters {
        let p = placeholder_email(&v.public_id);
        voter::Entity::update_many()
            .col_expr(voter::Column::Email, Expr::value(p.clone()))
            .col_expr(voter::Column::Address, Expr::value(p))
            .filter(voter::Column::Id.eq(v.id))
            .exec(txn)
            .await?;
    }
    let allowlist = vote_allowlist::Entity::delete_many()
        .filter(vote_allowlist::Column::Email.is_in(mailboxes))
        .exec(txn)
        .await?
        .rows_affected;
    Ok(Traces {
        buckets,
        mail,
        invitations: invitations.len() as u64,
        voters: voters.len() as u64,
        allowlist,
    })
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
    u: Option<&user::Model>,
    comment_ids: &[String],
    addresses: &BTreeSet<String>,
) -> AppResult<Vec<(i64, String)>> {
    let me = u.map(|u| u.public_id.as_str());
    let mut candidates = Condition::any();
    if let Some(me) = me {
        candidates = candidates
            .add(audit_event::Column::Actor.eq(me))
            .add(audit_event::Column::ObjectId.eq(me))
            .add(audit_event::Column::Action.eq("team.member_removed"));
    }
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
        let own = me.is_some_and(|me| row.actor == me || row.object_id == me);
        let about_their_comment =
            row.action == "comment.hidden" && comment_ids.contains(&row.object_id);
        let took_them_off = me.is_some_and(|me| {
            row.action == "team.member_removed" && payload.get("user") == Some(&json!(me))
        });
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
