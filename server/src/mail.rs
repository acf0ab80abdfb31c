//! The mail worker: delivers the outbox (`domain::outbox`) over SMTP after commit.
//!
//! Runs in `verdict serve` when `--smtp-url` is set. It wakes when a mutation commits a
//! message (and every few seconds, for retries and for messages other processes wrote),
//! claims each due message with a conditional update (so several processes sharing one
//! PostgreSQL never send one message twice), sends it, and records the outcome: `sent`, or
//! the error with the next attempt after an exponential backoff, or `failed` after the last
//! attempt.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use entity::outbox_message::{self, Status};
use lettre::message::{Mailbox, MultiPart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use tokio::sync::Notify;

use crate::db::Db;
use crate::error::{AppError, AppResult};

/// Delivery attempts before a message is marked `failed`.
pub const MAX_ATTEMPTS: i32 = 8;
/// How long a claimed message is left to its worker before another may try it.
const LEASE_SECS: i64 = 120;
/// How often the worker looks for due messages without being woken.
const POLL: Duration = Duration::from_secs(5);
/// Messages claimed per round.
const BATCH: u64 = 20;

/// Wakes the worker after a commit that wrote to the outbox. Without a worker (no SMTP
/// configured) waking does nothing.
#[derive(Clone, Default)]
pub struct Wake(Arc<Notify>, Arc<std::sync::atomic::AtomicBool>);

impl Wake {
    pub fn wake(&self) {
        self.0.notify_one();
    }
    /// Whether this process delivers mail: a worker was started with it ([`run`]). Without
    /// one, the outbox's messages stay `pending` and organizers hand out links themselves.
    pub fn delivers(&self) -> bool {
        self.1.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The wait before attempt `n + 1` after `n` failed ones: 30 s, doubling, at most an hour.
pub fn backoff(attempts: i32) -> chrono::Duration {
    let secs = 30i64.saturating_mul(1 << attempts.clamp(1, 8).saturating_sub(1));
    chrono::Duration::seconds(secs.min(3600))
}

/// An SMTP connection from `--smtp-url`: `smtp://host:port` (plain, for a relay on the same
/// machine), `smtp://host?tls=required` (STARTTLS), `smtps://host` (TLS); credentials as
/// `smtp://user:password@host`.
pub struct Smtp {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl Smtp {
    pub fn new(url: &str, from: &str) -> AppResult<Smtp> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| AppError::bad_input("smtp-url", e.to_string()))?
            .timeout(Some(Duration::from_secs(30)))
            .build();
        let from = from
            .parse()
            .map_err(|e| AppError::bad_input("mail-from", format!("{e}")))?;
        Ok(Smtp { transport, from })
    }

    async fn send(&self, m: &outbox_message::Model) -> Result<(), String> {
        let to: Mailbox = m.to_email.parse().map_err(|e| format!("recipient: {e}"))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(&m.subject)
            .message_id(Some(format!("<{}@verdict>", m.public_id)))
            .multipart(MultiPart::alternative_plain_html(
                m.body_text.clone(),
                m.body_html.clone(),
            ))
            .map_err(|e| format!("message: {e}"))?;
        self.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// Runs the worker until the process ends (waiting while the database does not answer).
pub fn run(db: Db, smtp: Smtp, wake: Wake) -> impl std::future::Future<Output = ()> {
    // Marked as soon as the worker is made, before it is first polled: the first request
    // already knows that this server mails.
    wake.1.store(true, std::sync::atomic::Ordering::Relaxed);
    async move {
        loop {
            // While the database does not answer there is nothing to claim: wait for it.
            db.availability().up().await;
            if let Err(e) = deliver_due(&db, &smtp).await {
                tracing::warn!(error = %e, "mail worker: a round failed; retrying");
            }
            let _ = tokio::time::timeout(POLL, wake.0.notified()).await;
        }
    }
}

/// Claims `m` for this worker: one conditional update that moves its next attempt past the
/// lease and counts the attempt. Another worker that read it too finds nothing to update.
async fn claim(db: &Db, m: &outbox_message::Model, now: DateTime<Utc>) -> AppResult<bool> {
    let r = outbox_message::Entity::update_many()
        .col_expr(
            outbox_message::Column::NextAttemptAt,
            Expr::value(now + chrono::Duration::seconds(LEASE_SECS)),
        )
        .col_expr(
            outbox_message::Column::Attempts,
            Expr::value(m.attempts + 1),
        )
        .filter(outbox_message::Column::Id.eq(m.id))
        .filter(outbox_message::Column::Status.eq(Status::Pending))
        .filter(outbox_message::Column::Attempts.eq(m.attempts))
        .exec(&db.conn)
        .await?;
    Ok(r.rows_affected == 1)
}

/// Sends every due message once; returns how many were sent.
pub async fn deliver_due(db: &Db, smtp: &Smtp) -> AppResult<usize> {
    let mut sent = 0;
    loop {
        let now = crate::db::now(&db.conn).await?;
        let due = outbox_message::Entity::find()
            .filter(outbox_message::Column::Status.eq(Status::Pending))
            .filter(outbox_message::Column::NextAttemptAt.lte(now))
            .order_by_asc(outbox_message::Column::Id)
            .limit(BATCH)
            .all(&db.conn)
            .await?;
        if due.is_empty() {
            return Ok(sent);
        }
        for m in due {
            if !claim(db, &m, now).await? {
                continue;
            }
            let attempts = m.attempts + 1;
            let outcome = smtp.send(&m).await;
            let done = crate::db::now(&db.conn).await?;
            let mut update = outbox_message::Entity::update_many()
                .filter(outbox_message::Column::Id.eq(m.id))
                .filter(outbox_message::Column::Status.eq(Status::Pending));
            update = match &outcome {
                Ok(()) => {
                    sent += 1;
                    update
                        .col_expr(outbox_message::Column::Status, Expr::value(Status::Sent))
                        .col_expr(outbox_message::Column::SentAt, Expr::value(done))
                        .col_expr(
                            outbox_message::Column::LastError,
                            Expr::value(Option::<String>::None),
                        )
                }
                Err(e) => {
                    tracing::warn!(message = %m.public_id, attempts, error = %e, "mail not sent");
                    let update = update.col_expr(
                        outbox_message::Column::LastError,
                        Expr::value(Some(e.chars().take(500).collect::<String>())),
                    );
                    if attempts >= MAX_ATTEMPTS {
                        update.col_expr(outbox_message::Column::Status, Expr::value(Status::Failed))
                    } else {
                        update.col_expr(
                            outbox_message::Column::NextAttemptAt,
                            Expr::value(done + backoff(attempts)),
                        )
                    }
                }
            };
            update.exec(&db.conn).await?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_thirty_seconds_to_an_hour() {
        let secs: Vec<i64> = (1..=9).map(|n| backoff(n).num_seconds()).collect();
        assert_eq!(secs, [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
    }

    /// (The transport's connection pool needs a runtime, as in `verdict serve`.)
    #[tokio::test]
    async fn smtp_urls_and_senders_are_checked() {
        assert!(Smtp::new("smtp://127.0.0.1:2525", "Verdict <verdict@example.org>").is_ok());
        assert!(Smtp::new("smtps://mail.example.org", "verdict@example.org").is_ok());
        assert!(matches!(
            Smtp::new("http://nope", "verdict@example.org"),
            Err(AppError::BadInput { .. })
        ));
        assert!(matches!(
            Smtp::new("smtp://127.0.0.1:2525", "not an address"),
            Err(AppError::BadInput { .. })
        ));
    }
}
