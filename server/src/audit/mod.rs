//! The hash-chained audit log: the spine of every mutation.
//!
//! Every mutation appends exactly one [`Entry`] inside its own transaction, so the business
//! write and its audit record commit or roll back together. On PostgreSQL the entry is
//! committed without its place on the chain and a sequencer gives it its `seq` and hashes
//! right after, many writes' entries at a time, so that writes commit in parallel: see
//! [`sequencer`].
//!
//! ## Encoding (version `verdict.audit.v1`)
//!
//! - `occurred_at`: RFC 3339, UTC, microseconds, `Z` (e.g. `2026-03-15T22:53:00.000000Z`),
//!   stored as the exact string that was hashed. It is the database's clock read in the
//!   mutation's transaction ([`crate::db::now`]): on PostgreSQL the time that transaction
//!   began, so entries of overlapping transactions may be a few milliseconds out of `seq`
//!   order; `seq` is the order.
//! - `payload`: canonical JSON (sorted keys, no insignificant whitespace, UTF-8);
//!   `payload_hash` = SHA-256 of those bytes, lower-case hex.
//! - `row_hash` = SHA-256 over the domain tag `verdict.audit.v1` followed by the fields
//!   `prev_hash, seq (decimal), occurred_at, actor, event, action, object_type, object_id,
//!   payload_hash`, each prefixed by its length as 8 bytes big-endian
//!   ([`crate::crypto::sha256_fields`]).
//! - The first row's `prev_hash` is 64 zeros; each later row's is the previous `row_hash`.
//!
//! The append also writes the event's webhook deliveries ([`deliveries`]), in the same
//! transaction: a delivery exists exactly when its audit event does.
//!
//! `seq` comes from the single `audit_head` row, locked by the transaction that appends,
//! never from an auto-increment (sequences gap on rollback). The database itself refuses
//! deletes of audit rows, every update but a redaction (below), an append that does not
//! extend the chain's last row, and a head that does not move forward onto the last row.
//!
//! ## Erasure: redacting a payload without breaking the chain
//!
//! A person may ask to be erased (`eraseAccount`, [`crate::domain::erasure`]). Their email,
//! name and what they wrote must go, yet every row hash must still check. The encoding above
//! already makes that possible, for every row ever written (rows on deployed databases
//! included, with no new payload format): the row hash covers the payload only through
//! `payload_hash`, a SHA-256 digest stored beside the payload. So a row can be *redacted*:
//!
//! - its `payload` is replaced by a redacted payload ([`redact`]): the same canonical JSON
//!   object with each personal value replaced by `null` and a `"redacted"` member listing
//!   the JSON pointers of what was removed (`{"display_name":null,"redacted":["/display_name"]}`);
//! - `payload_hash`, `row_hash` and every header field stay exactly as they were, so the
//!   row hash still recomputes and the chain still links (the database's trigger refuses
//!   any other update of an audit row, and a redaction that drops the `"redacted"` list);
//! - the erasure itself appends one `account.erased` entry whose payload lists the seqs it
//!   redacted (`redacted_seqs`) and, for each, the SHA-256 of the redacted payload it left
//!   (`redacted_rows`), and holds no personal data. That entry is on the chain, so the
//!   redacted payload is bound to the chain again, through it.
//!
//! [`verify`] (`verdict audit verify`) then checks, for each row: header, link and row hash
//! as always; the payload against `payload_hash` when it is whole; and when it is not, that
//! it is a redacted payload (canonical, with its `"redacted"` list) and that the latest
//! `account.erased` entry naming its seq recorded exactly this payload's hash. A payload
//! changed in any other way, redacted without an erasure entry on the chain, or changed
//! after its redaction, still breaks the chain at that seq.
//!
//! What redaction costs, honestly:
//! - A redacted row's payload is bound to the chain through the erasure entry's hash of
//!   it, not through its own `payload_hash` (computed over the original). Anyone who kept
//!   the original payload (a webhook receiver, a result bundle exported earlier) can still
//!   check it against `payload_hash`, and a bundle exported before an erasure still
//!   verifies offline; a bundle exported after it holds the redacted row without the
//!   erasure entry (another event's row), so there the redacted payload's kept members
//!   are only as trustworthy as the signed bundle.
//! - The header fields are covered by the row hash directly and cannot be redacted: the
//!   actor's and the object's public ids (opaque `usr_…` ids, not names or addresses) stay.
//!   After erasure they point at an anonymous placeholder account. One header holds a
//!   derivative of an address: a password reset asked for an address with no account names
//!   that address by its unsalted SHA-256 as `object_id`; it stays.
//! - `comment.posted` recorded the body's SHA-256 (`body_sha256`); a short body could be
//!   guessed from it, so it is redacted with the body.
//!
//! Which rows and members are personal is decided in [`crate::domain::erasure`].

use chrono::{DateTime, Utc};
use entity::{audit_event, audit_head, audit_pending};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

pub mod deliveries;
pub mod redact;
pub mod sequencer;

use crate::crypto::{canonical_json, sha256_fields, sha256_hex};
use crate::db::Db;
use crate::error::{AppError, AppResult};

pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
const DOMAIN: &str = "verdict.audit.v1";

/// One audit record to append. Payloads never hold secrets, passwords or token material.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The acting user's public id, or empty for the system (CLI, import).
    pub actor: String,
    /// The event's external id, or empty for actions outside any event.
    pub event: String,
    /// `noun.verb_past`, e.g. `project.submitted`.
    pub action: &'static str,
    pub object_type: &'static str,
    pub object_id: String,
    pub payload: serde_json::Value,
    /// When it happened: the write context's clock ([`crate::domain::Write::now`]); `None`
    /// reads the database's clock at the append.
    pub at: Option<DateTime<Utc>>,
}

impl Entry {
    pub fn new(action: &'static str, object_type: &'static str, object_id: &str) -> Entry {
        Entry {
            actor: String::new(),
            event: String::new(),
            action,
            object_type,
            object_id: object_id.to_owned(),
            payload: serde_json::json!({}),
            at: None,
        }
    }
    pub fn by(mut self, actor: &str) -> Self {
        self.actor = actor.to_owned();
        self
    }
    pub fn in_event(mut self, event_external_id: &str) -> Self {
        self.event = event_external_id.to_owned();
        self
    }
    pub fn with(mut self, payload: serde_json::Value) -> Self {
        self.payload = payload;
        self
    }
    /// Stamps the entry with `t` (the write's one clock reading) instead of reading the
    /// clock again at the append.
    pub fn at(mut self, t: DateTime<Utc>) -> Self {
        self.at = Some(t);
        self
    }
}

/// The canonical timestamp string that is stored and hashed.
pub fn canonical_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// The hash `r` must carry: [`row_hash`] of its own fields (its `row_hash` is not read).
pub fn row_hash_of(r: &audit_event::Model) -> String {
    row_hash(
        &r.prev_hash,
        r.seq,
        &r.occurred_at,
        &r.actor,
        &r.event,
        &r.action,
        &r.object_type,
        &r.object_id,
        &r.payload_hash,
    )
}

#[allow(clippy::too_many_arguments)]
pub fn row_hash(
    prev_hash: &str,
    seq: i64,
    occurred_at: &str,
    actor: &str,
    event: &str,
    action: &str,
    object_type: &str,
    object_id: &str,
    payload_hash: &str,
) -> String {
    sha256_fields(
        DOMAIN,
        &[
            prev_hash.as_bytes(),
            seq.to_string().as_bytes(),
            occurred_at.as_bytes(),
            actor.as_bytes(),
            event.as_bytes(),
            action.as_bytes(),
            object_type.as_bytes(),
            object_id.as_bytes(),
            payload_hash.as_bytes(),
        ],
    )
}

/// Locks the chain's head row until `txn` ends and appends to the chain every entry
/// committed before (on PostgreSQL, where writes enqueue: [`sequencer`]); the head as it
/// then stands. Once a transaction holds the head no other write commits before it does
/// (on PostgreSQL it holds the writers' gate exclusively; on SQLite the write transaction
/// is exclusive anyway), so what it reads after this is still true when it commits, and
/// every committed entry is on the chain.
pub async fn lock_head<C: ConnectionTrait>(txn: &C) -> AppResult<audit_head::Model> {
    if txn.get_database_backend() == DbBackend::Postgres {
        sequencer::close_gate(txn).await?;
    }
    let head = audit_head::Entity::find_by_id(1)
        .lock_exclusive()
        .one(txn)
        .await?
        .ok_or_else(|| AppError::Internal("audit head row is missing".into()))?;
    Ok(sequencer::drain(txn, head).await?.0)
}

/// The seq of the chain's head: every committed write has advanced it, so an unchanged
/// seq means nothing was written since (the relay's starting point, and the key of the
/// answers `http::graphql` shares between anonymous requests).
pub async fn head_seq<C: ConnectionTrait>(db: &C) -> AppResult<i64> {
    let seq: Option<i64> = audit_head::Entity::find_by_id(1)
        .select_only()
        .column(audit_head::Column::Seq)
        .into_tuple()
        .one(db)
        .await?;
    Ok(seq.unwrap_or(0))
}

/// Appends `entry` to the chain inside `txn`, in place, and returns its seq: the head is
/// held until `txn` ends ([`lock_head`]). `origin` names the writing process. Writes on
/// PostgreSQL that need no seq enqueue instead ([`sequencer::enqueue`]).
pub async fn append<C: ConnectionTrait>(txn: &C, origin: &str, entry: Entry) -> AppResult<i64> {
    let head = lock_head(txn).await?;
    let row = sequencer::queued(txn, origin, entry).await?;
    let (head, _) = sequencer::integrate(txn, head, std::slice::from_ref(&row)).await?;
    Ok(head.seq)
}

/// The outcome of recomputing the chain.
#[derive(Debug, PartialEq, Eq)]
pub enum Verification {
    /// Every row fits; the head is at `seq` with `hash`; `redacted` payloads were redacted
    /// by erasures, each as its erasure entry recorded.
    Intact {
        seq: i64,
        hash: String,
        redacted: u64,
        /// Entries committed with their writes and not yet on the chain ([`sequencer`]):
        /// a running server appends them within a second.
        pending: u64,
    },
    /// The first row that does not fit, and why.
    Broken { seq: i64, reason: String },
}

/// [`verify`] on one snapshot of a database that servers may be writing to ([`Db::read`]):
/// what `verdict audit verify` runs. Read statement by statement instead, a sequencer run
/// committing between the last page of rows and the head would look like a head that does
/// not match its last row.
pub async fn verify_snapshot(db: &Db) -> AppResult<Verification> {
    let snapshot = db.read().await?;
    let out = verify(&snapshot).await;
    // Read only: nothing to keep.
    let _ = snapshot.rollback().await;
    out
}

/// Recomputes every row's hashes and links from genesis, in pages, and checks the head.
/// Reads `db` as it is given: a snapshot ([`verify_snapshot`]) where writers may be running.
pub async fn verify<C: ConnectionTrait>(db: &C) -> AppResult<Verification> {
    const PAGE: u64 = 1000;
    let mut walk = ChainWalk::new();
    loop {
        let rows = audit_event::Entity::find()
            .filter(audit_event::Column::Seq.gte(walk.next_seq))
            .order_by_asc(audit_event::Column::Seq)
            .limit(PAGE)
            .all(db)
            .await?;
        let n = rows.len() as u64;
        for r in &rows {
            if let Err(broken) = walk.push(r) {
                return Ok(broken);
            }
        }
        if n < PAGE {
            break;
        }
    }
    let head = audit_head::Entity::find_by_id(1)
        .one(db)
        .await?
        .ok_or_else(|| AppError::Internal("audit head row is missing".into()))?;
    // SQLite appends in place and never queues (see [`sequencer`]); a SQLite copy may also
    // come from a version without the table (`verdict restore` verifies before migrating).
    let pending = match db.get_database_backend() {
        DbBackend::Postgres => audit_pending::Entity::find().count(db).await?,
        _ => 0,
    };
    Ok(match walk.finish(&head) {
        Verification::Intact {
            seq,
            hash,
            redacted,
            ..
        } => Verification::Intact {
            seq,
            hash,
            redacted,
            pending,
        },
        broken => broken,
    })
}

/// The chain walked from genesis one row at a time, in seq order: [`verify`] feeds it the
/// database's rows page by page, a PostgreSQL restore the rows of a `pg_dump` archive
/// before anything is loaded (`crate::backup`).
pub struct ChainWalk {
    prev: String,
    next_seq: i64,
    /// Redacted rows seen, with the SHA-256 of the payload they hold now.
    redacted_rows: std::collections::BTreeMap<i64, String>,
    /// What the latest `account.erased` entry naming a row says its payload hashes to.
    claims: std::collections::BTreeMap<i64, String>,
    redacted: u64,
}

impl Default for ChainWalk {
    fn default() -> Self {
        ChainWalk::new()
    }
}

impl ChainWalk {
    pub fn new() -> ChainWalk {
        ChainWalk {
            prev: GENESIS.to_owned(),
            next_seq: 1,
            redacted_rows: Default::default(),
            claims: Default::default(),
            redacted: 0,
        }
    }

    /// Takes the next row; `Err` is the verdict on the first row that does not fit.
    pub fn push(&mut self, r: &audit_event::Model) -> Result<(), Verification> {
        if let Some(reason) = check_row(r, &self.prev, self.next_seq) {
            return Err(Verification::Broken {
                seq: self.next_seq,
                reason: reason.to_owned(),
            });
        }
        if redact::is_redacted(r) {
            self.redacted_rows
                .insert(r.seq, sha256_hex(r.payload.as_bytes()));
            self.redacted += 1;
        } else if r.action == redact::ERASED_ACTION {
            for (seq, hash) in redact::claimed_rows(&r.payload) {
                if seq < r.seq {
                    self.claims.insert(seq, hash);
                }
            }
        }
        self.prev.clone_from(&r.row_hash);
        self.next_seq += 1;
        Ok(())
    }

    /// How many redacted rows were pushed so far.
    pub fn redacted(&self) -> u64 {
        self.redacted
    }

    /// The verdict once every row was pushed: the head row must name the last one.
    pub fn finish(self, head: &audit_head::Model) -> Verification {
        for (seq, hash) in &self.redacted_rows {
            let reason = match self.claims.get(seq) {
                None => "payload is redacted but no later account.erased entry names it",
                Some(claimed) if claimed != hash => {
                    "payload differs from the redaction its account.erased entry recorded"
                }
                Some(_) => continue,
            };
            return Verification::Broken {
                seq: *seq,
                reason: reason.into(),
            };
        }
        let last = self.next_seq - 1;
        if head.seq != last || head.head_hash != self.prev {
            return Verification::Broken {
                seq: head.seq.max(last) + if head.seq > last { 0 } else { 1 },
                reason: "audit head does not match the last row".into(),
            };
        }
        Verification::Intact {
            seq: last,
            hash: self.prev,
            redacted: self.redacted,
            pending: 0,
        }
    }
}

/// What is wrong with row `r`, if anything, given the previous row's hash and the seq it
/// must have. Shared by `audit verify` and the offline bundle verifier. A redacted payload
/// (see the module doc) passes here; [`ChainWalk`] also requires an erasure entry to name
/// it.
pub fn check_row(r: &audit_event::Model, prev: &str, seq: i64) -> Option<&'static str> {
    if let Some(why) = check_place(r, prev, seq) {
        return Some(why);
    }
    if sha256_hex(r.payload.as_bytes()) != r.payload_hash && !redact::is_redaction(&r.payload) {
        return Some("payload does not match payload_hash");
    }
    let canonical = serde_json::from_str::<serde_json::Value>(&r.payload)
        .map(|v| canonical_json(&v) == r.payload)
        .unwrap_or(false);
    if !canonical {
        return Some("payload is not canonical JSON");
    }
    check_hash(r)
}

/// [`check_row`] without the payload: the row's place in the chain and its hash, recomputed
/// from its header and `payload_hash`. Enough to carry the chain across a row whose payload
/// is withheld (another event's row in a result bundle): the row hash commits to the
/// payload only through `payload_hash`.
pub fn check_link(r: &audit_event::Model, prev: &str, seq: i64) -> Option<&'static str> {
    check_place(r, prev, seq).or_else(|| check_hash(r))
}

fn check_place(r: &audit_event::Model, prev: &str, seq: i64) -> Option<&'static str> {
    if r.seq != seq {
        return Some("seq is not contiguous");
    }
    if r.prev_hash != prev {
        return Some("prev_hash does not match the previous row");
    }
    None
}

fn check_hash(r: &audit_event::Model) -> Option<&'static str> {
    (row_hash_of(r) != r.row_hash).then_some("row_hash does not match the row")
}

/// A signed statement of the chain's head: anyone holding the public key can check that
/// a row at or below `seq` is part of the history the deployment committed to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    pub seq: i64,
    pub head_hash: String,
    pub time: String,
    pub key_fingerprint: String,
    pub signature: String,
}

fn checkpoint_fields<'a>(seq: &'a str, head: &'a str, time: &'a str) -> [&'a [u8]; 3] {
    [seq.as_bytes(), head.as_bytes(), time.as_bytes()]
}

/// Signs the current head as `verdict.checkpoint.v1`.
pub async fn checkpoint<C: ConnectionTrait>(
    db: &C,
    signer: &crate::crypto::signing::Signer25519,
) -> AppResult<Checkpoint> {
    let head = audit_head::Entity::find_by_id(1)
        .one(db)
        .await?
        .ok_or_else(|| AppError::Internal("audit head row is missing".into()))?;
    let time = canonical_time(crate::db::now(db).await?);
    let seq = head.seq.to_string();
    let signature = signer.sign(
        crate::crypto::signing::CHECKPOINT_TAG,
        &checkpoint_fields(&seq, &head.head_hash, &time),
    );
    Ok(Checkpoint {
        seq: head.seq,
        head_hash: head.head_hash,
        time,
        key_fingerprint: signer.fingerprint(),
        signature,
    })
}

impl Checkpoint {
    pub fn signature_ok(&self, key: &crate::crypto::signing::PublicKey) -> bool {
        key.verify(
            crate::crypto::signing::CHECKPOINT_TAG,
            &checkpoint_fields(&self.seq.to_string(), &self.head_hash, &self.time),
            &self.signature,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_time_has_microseconds_and_z() {
        let t = DateTime::parse_from_rfc3339("2026-03-15T22:53:00.5+02:00")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(canonical_time(t), "2026-03-15T20:53:00.500000Z");
    }

    /// A chain of rows with these (action, payload), hashed as [`append`] would.
    fn chain(rows: &[(&str, serde_json::Value)]) -> Vec<audit_event::Model> {
        let mut prev = GENESIS.to_owned();
        let mut out = Vec::new();
        for (i, (action, payload)) in rows.iter().enumerate() {
            let seq = i as i64 + 1;
            let payload = canonical_json(payload);
            let payload_hash = sha256_hex(payload.as_bytes());
            let row_hash = row_hash(
                &prev,
                seq,
                "t",
                "usr.a",
                "",
                action,
                "user",
                "usr.a",
                &payload_hash,
            );
            out.push(audit_event::Model {
                seq,
                occurred_at: "t".into(),
                actor: "usr.a".into(),
                event: String::new(),
                action: (*action).into(),
                object_type: "user".into(),
                object_id: "usr.a".into(),
                payload,
                payload_hash,
                prev_hash: prev.clone(),
                row_hash: row_hash.clone(),
            });
            prev = row_hash;
        }
        out
    }

    fn walk(rows: &[audit_event::Model]) -> Verification {
        let mut w = ChainWalk::new();
        for r in rows {
            if let Err(b) = w.push(r) {
                return b;
            }
        }
        let last = rows.last().unwrap();
        w.finish(&audit_head::Model {
            id: 1,
            seq: last.seq,
            head_hash: last.row_hash.clone(),
        })
    }

    #[test]
    fn a_redaction_verifies_only_when_a_later_erasure_names_it() {
        use serde_json::json;
        let redacted =
            canonical_json(&json!({ "display_name": null, "redacted": ["/display_name"] }));
        let mut rows = chain(&[
            ("user.profile_updated", json!({ "display_name": "Ann" })),
            ("user.profile_updated", json!({ "display_name": "Ann B" })),
            (
                redact::ERASED_ACTION,
                json!({ "redacted_seqs": [1], "redacted_rows": [redact::claim(1, &redacted)] }),
            ),
        ]);
        assert!(matches!(walk(&rows), Verification::Intact { seq: 3, .. }));
        // Row 1 redacted and claimed by the erasure: intact.
        rows[0].payload = redacted.clone();
        assert!(matches!(walk(&rows), Verification::Intact { seq: 3, .. }));
        // Row 2 redacted too, but no erasure names it: broken at 2.
        rows[1].payload = redacted.clone();
        assert_eq!(
            walk(&rows),
            Verification::Broken {
                seq: 2,
                reason: "payload is redacted but no later account.erased entry names it".into()
            }
        );
        // A payload changed to anything but a redaction: broken at that row.
        rows[1].payload = canonical_json(&json!({ "display_name": "Eve" }));
        assert!(matches!(walk(&rows), Verification::Broken { seq: 2, .. }));
        // A claimed redaction changed afterwards, still redaction-shaped: broken at 1.
        rows[1] = chain(&[
            ("user.profile_updated", json!({ "display_name": "Ann" })),
            ("user.profile_updated", json!({ "display_name": "Ann B" })),
        ])[1]
            .clone();
        rows[0].payload = canonical_json(
            &json!({ "display_name": null, "extra": 1, "redacted": ["/display_name"] }),
        );
        assert_eq!(
            walk(&rows),
            Verification::Broken {
                seq: 1,
                reason: "payload differs from the redaction its account.erased entry recorded"
                    .into()
            }
        );
    }

    #[test]
    fn every_field_changes_the_row_hash() {
        let base = ["p", "o", "a", "e", "x", "t", "i", "h"];
        let h = |f: [&str; 8], seq| row_hash(f[0], seq, f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
        let original = h(base, 1);
        assert_ne!(original, h(base, 2));
        for i in 0..base.len() {
            let mut changed = base;
            changed[i] = "changed";
            assert_ne!(original, h(changed, 1), "field {i} is not covered");
        }
    }
}
