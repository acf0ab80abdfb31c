//! Several server processes on one PostgreSQL database: every process hears what every
//! other process committed.
//!
//! Each audit entry is announced on the channel `verdict_audit` by the transaction that
//! appends it to the chain (`audit::sequencer`), so an announcement is delivered only on
//! commit, in commit order (`seq` order: appends serialize on the audit head), and names
//! the process that committed the entry's write. Each process listens on its own connection and turns the entries of other
//! processes that move a subscription into [`BusEvent`]s on its in-process [`Bus`]; its own
//! commits it has published already, at once (an announcement names the committing
//! process: the `application_name` of its connections, [`Db::origin`]).
//!
//! When the listening connection drops (a restart of PostgreSQL, `pg_terminate_backend`),
//! the relay listens again (once the database answers: [`crate::db::Availability`]) and
//! reads the entries after the last `seq` it saw from the audit log itself, so nothing
//! committed meanwhile is missed. The log does not say which process
//! committed an entry, so after a loss this process's own entries of that gap are heard a
//! second time: the feeds are snapshots and do not mind, and a `projectSubmitted`
//! subscriber may see a project twice (its id tells).
//!
//! What is not relayed: the revocation events that close a connection's sockets at once
//! ([`BusEvent::AccessRevoked`], [`BusEvent::SessionsEnded`]) stay per process; another
//! process refuses the revoked credential at its next operation and its next subscription
//! message, which re-check it in the database.

use std::collections::HashMap;
use std::time::Duration;

use entity::{audit_event, event, result_publication};
use sea_orm::sqlx::postgres::PgListener;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use serde::Deserialize;

use super::bus::{Bus, BusEvent};
use crate::db::Db;
use crate::domain::find_project;
use crate::error::AppResult;

/// The channel the audit trigger announces on.
pub const CHANNEL: &str = crate::audit::sequencer::CHANNEL;

/// How long to wait before connecting again after the listening connection failed.
const RECONNECT: Duration = Duration::from_millis(250);

/// Entries read per statement when catching up.
const CATCH_UP_BATCH: u64 = 500;

/// One announced entry: what the trigger sends.
#[derive(Deserialize)]
struct Announced {
    seq: i64,
    action: String,
    event: String,
    object: String,
    /// The committing process (None when read from the log).
    #[serde(default)]
    origin: Option<String>,
}

/// Relays the changes other processes commit into `bus` until the process ends: every
/// entry appended after it has read where the audit log stands.
pub async fn run(db: Db, url: String, bus: Bus) {
    let start = loop {
        db.availability().up().await;
        match crate::audit::head_seq(&db.conn).await {
            Ok(seq) => break seq,
            Err(e) => tracing::warn!("the audit relay cannot read the audit head yet: {e}"),
        }
        tokio::time::sleep(RECONNECT).await;
    };
    let mut relay = Relay {
        db,
        bus,
        events: HashMap::new(),
        last: start,
    };
    loop {
        if let Err(e) = relay.listen(&url).await {
            tracing::warn!("the audit relay lost its connection, reconnecting: {e}");
        }
        tokio::time::sleep(RECONNECT).await;
        // While the database does not answer, wait for it rather than knock every 250 ms.
        relay.db.availability().up().await;
    }
}

struct Relay {
    db: Db,
    bus: Bus,
    /// Event ids by external id (events are never deleted).
    events: HashMap<String, i64>,
    /// The last `seq` relayed (or, before the first, where the log stood at start).
    last: i64,
}

impl Relay {
    /// One listening connection's life: listen, catch up on what was committed since the
    /// last entry relayed, then relay each announcement until the connection fails.
    async fn listen(&mut self, url: &str) -> Result<(), Box<dyn std::error::Error>> {
        let mut listener = PgListener::connect(url).await?;
        listener.listen(CHANNEL).await?;
        // Listening before reading the log: an entry committed in between is both read
        // and announced, and relayed once (by `seq`).
        self.catch_up().await?;
        loop {
            // `None`: the connection was lost, and the next call listens again on a new
            // one; what was announced in between is read from the log.
            let Some(note) = listener.try_recv().await? else {
                tracing::warn!("the audit relay lost its connection; catching up from the log");
                self.catch_up().await?;
                continue;
            };
            match serde_json::from_str::<Announced>(note.payload()) {
                Ok(entry) => self.relay(entry).await?,
                Err(e) => tracing::warn!("an audit announcement does not parse: {e}"),
            }
        }
    }

    /// Relays every entry after the last one relayed, from the audit log.
    async fn catch_up(&mut self) -> AppResult<()> {
        loop {
            let rows = audit_event::Entity::find()
                .filter(audit_event::Column::Seq.gt(self.last))
                .order_by_asc(audit_event::Column::Seq)
                .limit(CATCH_UP_BATCH)
                .all(&self.db.conn)
                .await?;
            if rows.is_empty() {
                return Ok(());
            }
            for row in rows {
                self.relay(Announced {
                    seq: row.seq,
                    action: row.action,
                    event: row.event,
                    object: row.object_id,
                    origin: None,
                })
                .await?;
            }
        }
    }

    async fn relay(&mut self, entry: Announced) -> AppResult<()> {
        if entry.seq <= self.last {
            return Ok(());
        }
        if entry.origin.as_deref() != Some(self.db.origin()) {
            for change in self.changes(&entry).await? {
                self.bus.publish(change);
            }
        }
        self.last = entry.seq;
        Ok(())
    }

    /// The bus events an entry stands for: the same ones its mutation's process would
    /// publish after its commit.
    async fn changes(&mut self, entry: &Announced) -> AppResult<Vec<BusEvent>> {
        let judging = matches!(
            entry.action.as_str(),
            "assignment.created"
                | "assignment.removed"
                | "assignments.planned"
                | "recusal.declared"
                | "review.saved"
                | "review.submitted"
                | "comparison.recorded"
                | "comparison.revised"
                | "project.submitted"
                | "project.withdrawn"
                | "project.hidden"
                | "project.unhidden"
                | "project.disqualified"
                | "project.requalified"
                | "project.marked_duplicate"
                | "project.duplicate_cleared"
                | "project.track_changed"
        );
        let ended = matches!(
            entry.action.as_str(),
            "calibration.ran" | "calibration.failed"
        );
        if !judging && !ended && entry.action != "results.published" {
            return Ok(vec![]);
        }
        let Some(event_id) = self.event_id(&entry.event).await? else {
            return Ok(vec![]);
        };
        let db = &self.db.conn;
        let mut out = vec![];
        match entry.action.as_str() {
            "project.submitted" => {
                if let Some(p) = find_project(db, &entry.object, Some(event_id)).await? {
                    out.push(BusEvent::ProjectSubmitted {
                        event_id,
                        project: std::sync::Arc::new(p),
                    });
                }
            }
            "results.published" => {
                let id: Option<i64> = result_publication::Entity::find()
                    .filter(result_publication::Column::PublicId.eq(entry.object.as_str()))
                    .select_only()
                    .column(result_publication::Column::Id)
                    .into_tuple()
                    .one(db)
                    .await?;
                if let Some(publication_id) = id {
                    out.push(BusEvent::ResultsPublished {
                        event_id,
                        publication_id,
                    });
                }
            }
            _ => {}
        }
        if judging {
            out.push(BusEvent::JudgingChanged { event_id });
        }
        if ended {
            out.push(BusEvent::CalibrationEnded { event_id });
        }
        Ok(out)
    }

    async fn event_id(&mut self, external_id: &str) -> AppResult<Option<i64>> {
        if external_id.is_empty() {
            return Ok(None);
        }
        if let Some(id) = self.events.get(external_id) {
            return Ok(Some(*id));
        }
        let id: Option<i64> = event::Entity::find()
            .filter(event::Column::ExternalId.eq(external_id))
            .select_only()
            .column(event::Column::Id)
            .into_tuple()
            .one(&self.db.conn)
            .await?;
        if let Some(id) = id {
            self.events.insert(external_id.to_string(), id);
        }
        Ok(id)
    }
}
