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

mod ballots;
mod campaign;
mod registration;
mod tally;

pub use ballots::{Ballot, Cast, Who, ballot, cast};
pub use campaign::{Config, allowlist_len, configure, voter_count};
pub use registration::{confirm, register};
pub use tally::{TallyRow, publish_tally, published_tally};

use chrono::{DateTime, Utc};
use entity::{event, vote_campaign};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

use super::{Write, validate};
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
