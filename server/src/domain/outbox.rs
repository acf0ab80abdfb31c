//! The outbox: every message Verdict sends is a row written in the transaction of the change
//! that causes it, rendered from the templates the binary ships (plain text, with a minimal
//! HTML alternative). The mail worker (`crate::mail`) delivers pending rows after commit;
//! without SMTP, organizers read their event's invitations (`Event.outbox`) and the operator
//! reads every message on the server machine (`verdict mail list`).

use chrono::{DateTime, Utc};
use entity::outbox_message::{self, Kind, Status};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter,
    QueryOrder,
};

use super::Write;
use crate::crypto::public_id;
use crate::error::AppResult;
use crate::html::escape_html;

/// Where the links in messages point: `{public-url}/invite/{token}` and
/// `{public-url}/reset/{token}`.
#[derive(Clone, Debug)]
pub struct Links {
    base: String,
}

impl Links {
    /// `public_url` without a trailing slash, e.g. `https://hack.example.org`.
    pub fn new(public_url: &str) -> Links {
        Links {
            base: public_url.trim_end_matches('/').to_owned(),
        }
    }
    pub fn invitation(&self, token: &str) -> String {
        format!("{}/invite/{token}", self.base)
    }
    pub fn reset(&self, token: &str) -> String {
        format!("{}/reset/{token}", self.base)
    }
    pub fn confirm(&self, token: &str) -> String {
        format!("{}/confirm/{token}", self.base)
    }
    /// A judge's standing sign-in link: `{public-url}/judge-sign-in/{token}`.
    pub fn judge_sign_in(&self, token: &str) -> String {
        super::judge_sign_in::link(&self.base, token)
    }
    /// An email voter's link: `{public-url}/e/{slug}/vote?link={token}`.
    pub fn vote(&self, slug: &str, token: &str) -> String {
        format!("{}/e/{slug}/vote?link={token}", self.base)
    }
}

const INVITATION: &str = include_str!("../../templates/mail/invitation.txt");
const PASSWORD_RESET: &str = include_str!("../../templates/mail/password_reset.txt");
const EMAIL_CONFIRMATION: &str = include_str!("../../templates/mail/email_confirmation.txt");
const EMAIL_CHANGED: &str = include_str!("../../templates/mail/email_changed.txt");
const VOTE_LINK: &str = include_str!("../../templates/mail/vote_link.txt");
const VOTE_ALREADY_REGISTERED: &str =
    include_str!("../../templates/mail/vote_already_registered.txt");
const VOTE_NOT_LISTED: &str = include_str!("../../templates/mail/vote_not_listed.txt");

/// A message ready for the outbox.
pub struct Message {
    pub kind: Kind,
    pub to: String,
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// Fills `{name}` placeholders of a template.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    values.iter().fold(template.to_owned(), |t, (k, v)| {
        t.replace(&format!("{{{k}}}"), v)
    })
}

/// The HTML alternative of a plain-text message: its paragraphs, escaped, with the line
/// that is the link made a link.
fn html_of(text: &str, link: &str) -> String {
    let paragraphs: String = text
        .split("\n\n")
        .map(|p| {
            let p = p.trim();
            if p == link {
                let l = escape_html(link);
                format!("<p><a href=\"{l}\">{l}</a></p>\n")
            } else {
                format!("<p>{}</p>\n", escape_html(p).replace('\n', " "))
            }
        })
        .collect();
    format!("<!doctype html>\n<html><body>\n{paragraphs}</body></html>\n")
}

/// The invitation message for `link`.
pub fn invitation(
    to: &str,
    event_name: &str,
    role: &str,
    inviter: &str,
    expires: DateTime<Utc>,
    link: &str,
) -> Message {
    let expires = expires.format("%Y-%m-%d %H:%M UTC").to_string();
    let text = fill(
        INVITATION,
        &[
            ("inviter", inviter),
            ("event", event_name),
            ("role", role),
            ("expires", &expires),
            ("link", link),
        ],
    );
    Message {
        kind: Kind::Invitation,
        to: to.to_owned(),
        subject: format!("Your invitation to {event_name}"),
        html: html_of(&text, link),
        text,
    }
}

/// The password-reset message for `link`.
pub fn password_reset(to: &str, link: &str) -> Message {
    let text = fill(PASSWORD_RESET, &[("email", to), ("link", link)]);
    Message {
        kind: Kind::PasswordReset,
        to: to.to_owned(),
        subject: "Reset your Verdict password".to_owned(),
        html: html_of(&text, link),
        text,
    }
}

/// The message that confirms `to` is the account's address.
pub fn email_confirmation(to: &str, link: &str) -> Message {
    let text = fill(EMAIL_CONFIRMATION, &[("email", to), ("link", link)]);
    Message {
        kind: Kind::EmailConfirmation,
        to: to.to_owned(),
        subject: "Confirm your email address for Verdict".to_owned(),
        html: html_of(&text, link),
        text,
    }
}

/// The notice to an account's old address that its email changed to `new`.
pub fn email_changed(old: &str, new: &str) -> Message {
    let text = fill(EMAIL_CHANGED, &[("old", old), ("new", new)]);
    Message {
        kind: Kind::EmailChanged,
        to: old.to_owned(),
        subject: "Your Verdict email address was changed".to_owned(),
        html: html_of(&text, ""),
        text,
    }
}

/// An email voter's link to `event_name`'s community vote. Sent as an address
/// confirmation: it proves `to` is the voter's.
pub fn vote_link(to: &str, event_name: &str, expires: DateTime<Utc>, link: &str) -> Message {
    let expires = expires.format("%Y-%m-%d %H:%M UTC").to_string();
    let text = fill(
        VOTE_LINK,
        &[("event", event_name), ("expires", &expires), ("link", link)],
    );
    Message {
        kind: Kind::EmailConfirmation,
        to: to.to_owned(),
        subject: format!("Your voting link for {event_name}"),
        html: html_of(&text, link),
        text,
    }
}

/// The answer to a voting-link request for a mailbox that already registered to vote in
/// `event_name` under another spelling (or, `by_account`, through a signed-in account):
/// told to the mailbox, never to the asker.
pub fn vote_already_registered(to: &str, event_name: &str, by_account: bool) -> Message {
    let how = if by_account {
        "through a Verdict account: sign in to that account to see and change your ballot"
    } else {
        "under another spelling of this address: the link mailed to that spelling is the \
         way to your ballot, and asking again with that spelling mails a fresh one"
    };
    let text = fill(
        VOTE_ALREADY_REGISTERED,
        &[("event", event_name), ("how", how)],
    );
    Message {
        kind: Kind::EmailConfirmation,
        to: to.to_owned(),
        subject: format!("You are already registered to vote in {event_name}"),
        html: html_of(&text, ""),
        text,
    }
}

/// The answer to a voting-link request for a mailbox that is not on the allowlist of the
/// vote in `event_name`: told to the mailbox, never to the asker (who gets the same answer
/// as for a listed address).
pub fn vote_not_listed(to: &str, event_name: &str) -> Message {
    let text = fill(VOTE_NOT_LISTED, &[("event", event_name)]);
    Message {
        kind: Kind::EmailConfirmation,
        to: to.to_owned(),
        subject: format!("This address is not on the list of voters of {event_name}"),
        html: html_of(&text, ""),
        text,
    }
}

/// Writes `m` to the outbox in the write's transaction, stamped with its now; the worker
/// sends it after commit.
pub async fn enqueue(
    w: &Write,
    m: Message,
    event_id: Option<i64>,
    invitation_id: Option<i64>,
) -> AppResult<outbox_message::Model> {
    let t = w.now();
    Ok(outbox_message::ActiveModel {
        public_id: Set(public_id("msg")),
        kind: Set(m.kind),
        event_id: Set(event_id),
        invitation_id: Set(invitation_id),
        to_email: Set(m.to),
        subject: Set(m.subject),
        body_text: Set(m.text),
        body_html: Set(m.html),
        status: Set(Status::Pending),
        attempts: Set(0),
        last_error: Set(None),
        next_attempt_at: Set(t),
        created_at: Set(t),
        sent_at: Set(None),
        ..Default::default()
    }
    .insert(w.txn())
    .await?)
}

/// Cancels the messages of an invitation that are not sent yet (it was revoked or renewed:
/// its old link no longer works).
pub async fn cancel_for_invitation<C: ConnectionTrait>(
    txn: &C,
    invitation_id: i64,
) -> AppResult<u64> {
    let r = outbox_message::Entity::update_many()
        .col_expr(
            outbox_message::Column::Status,
            sea_orm::sea_query::Expr::value(Status::Cancelled),
        )
        .filter(outbox_message::Column::InvitationId.eq(invitation_id))
        .filter(outbox_message::Column::Status.eq(Status::Pending))
        .exec(txn)
        .await?;
    Ok(r.rows_affected)
}

/// The messages not sent yet (every message with `all`), oldest first: `verdict mail
/// list`, for the operator.
pub async fn list<C: ConnectionTrait>(db: &C, all: bool) -> AppResult<Vec<outbox_message::Model>> {
    let mut q = outbox_message::Entity::find();
    if !all {
        q = q.filter(outbox_message::Column::Status.eq(Status::Pending));
    }
    Ok(q.order_by_asc(outbox_message::Column::Id).all(db).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_the_link_in_text_and_html_and_escape_names() {
        let links = Links::new("https://hack.example.org/");
        let link = links.invitation("tok");
        assert_eq!(link, "https://hack.example.org/invite/tok");
        let m = invitation(
            "a@example.org",
            "Spring <Hack>",
            "judge",
            "Org & Co",
            DateTime::from_timestamp(0, 0).expect("epoch"),
            &link,
        );
        assert!(m.text.contains(&link) && m.text.contains("Spring <Hack>"));
        assert!(m.html.contains(&format!("<a href=\"{link}\">")));
        assert!(m.html.contains("Spring &lt;Hack&gt;") && m.html.contains("Org &amp; Co"));
        assert!(
            !m.text.contains('{'),
            "every placeholder is filled: {}",
            m.text
        );
        let r = password_reset("a@example.org", &links.reset("x"));
        assert!(r.text.contains("https://hack.example.org/reset/x") && !r.text.contains('{'));
    }
}
