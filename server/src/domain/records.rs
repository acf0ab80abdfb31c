//! Participation records (issue 12): a signed statement of one person's own participation
//! in an event, which anyone can check later, online (`verifyRecord`) or offline
//! (`verdict record verify`).
//!
//! A record says who (the person's display name and email), where (the event's external
//! id, slug and name), as what (their roles), and which projects they judged (those with a
//! submitted review of theirs) or built (their team's submitted projects), by title and
//! external id; when it was issued, and by which key. It holds no scores, no comments and
//! nothing about anyone else.
//!
//! ## The document (`verdict.participation.v1`)
//!
//! Canonical JSON ([`canonical_json`]: sorted keys, no whitespace) of
//! `{ "format", "record", "public_key", "signature" }`, where `signature` is the
//! deployment's Ed25519 signature under the domain tag [`PARTICIPATION_TAG`] over one field,
//! the canonical JSON of `record` ([`Signer25519::sign`]), and `record.key_fingerprint` is
//! the SHA-256 fingerprint of that key. `public_key` is the key as PEM, so that a verifier
//! without the server can check it after pinning its fingerprint.
//!
//! A document verifies only byte for byte as issued: its text must be its own canonical
//! JSON, so any changed byte (even whitespace) fails, as for result bundles.

use entity::{event, membership, project, review, team_member};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::Write;
use crate::audit::{Entry, canonical_time};
use crate::crypto::signing::{PARTICIPATION_TAG, PublicKey, Signer25519};
use crate::crypto::{canonical_json, public_id, sha256_hex};
use crate::error::{AppError, AppResult};

/// The `format` of a participation record document.
pub const FORMAT: &str = PARTICIPATION_TAG;

/// The event a record is about.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EventRef {
    pub external_id: String,
    pub slug: String,
    pub name: String,
}

/// The person a record is about: themselves, nobody else.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub display_name: String,
    pub email: String,
}

/// A project the person judged or built.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProjectRef {
    pub external_id: String,
    pub title: String,
}

/// The signed statement.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// A fresh id per issued record (`rec.…`), the object of its audit entry.
    pub id: String,
    pub event: EventRef,
    pub person: Person,
    /// `participant`, `judge`, `organizer`: every role held in the event, sorted.
    pub roles: Vec<String>,
    /// Projects with a submitted review by the person, by title.
    pub judged: Vec<ProjectRef>,
    /// The person's team's submitted projects, by title.
    pub built: Vec<ProjectRef>,
    /// RFC 3339, UTC, microseconds (the audit log's encoding): the database's clock.
    pub issued_at: String,
    /// SHA-256 of the deployment's public key, hex.
    pub key_fingerprint: String,
}

/// The issued document: [`Record`] with its signature and the signing public key.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Document {
    pub format: String,
    pub record: Record,
    pub public_key: String,
    pub signature: String,
}

fn record_bytes(record: &Record) -> AppResult<String> {
    serde_json::to_value(record)
        .map(|v| canonical_json(&v))
        .map_err(|e| AppError::Internal(format!("record: {e}")))
}

fn document_text(doc: &Document) -> AppResult<String> {
    serde_json::to_value(doc)
        .map(|v| canonical_json(&v))
        .map_err(|e| AppError::Internal(format!("record document: {e}")))
}

fn project_refs(mut projects: Vec<project::Model>) -> Vec<ProjectRef> {
    projects.sort_by(|a, b| a.title.cmp(&b.title).then(a.id.cmp(&b.id)));
    projects
        .into_iter()
        .map(|p| ProjectRef {
            external_id: p.external_id,
            title: p.title,
        })
        .collect()
}

/// `participationRecord`: signs a record of `actor`'s own participation in `e` and appends
/// `record.issued` (its id and the document's SHA-256; nothing personal). FORBIDDEN when
/// the actor holds no role in the event (site admins included: they did not take part).
pub async fn issue(w: &Write, e: &event::Model, signer: &Signer25519) -> AppResult<String> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let memberships = membership::Entity::find()
        .filter(membership::Column::UserId.eq(actor.user.id))
        .filter(membership::Column::EventId.eq(e.id))
        .all(txn)
        .await?;
    if memberships.is_empty() {
        return Err(AppError::forbidden(
            "only the event's members have a participation record",
        ));
    }
    let mut roles: Vec<String> = memberships
        .iter()
        .map(|m| sea_orm::ActiveEnum::to_value(&m.role))
        .collect();
    roles.sort();
    roles.dedup();

    let judge_ids: Vec<i64> = memberships.iter().map(|m| m.id).collect();
    let judged_ids: Vec<i64> = review::Entity::find()
        .filter(review::Column::EventId.eq(e.id))
        .filter(review::Column::JudgeId.is_in(judge_ids))
        .filter(review::Column::Submitted.eq(true))
        .all(txn)
        .await?
        .into_iter()
        .map(|r| r.project_id)
        .collect();
    let judged = if judged_ids.is_empty() {
        vec![]
    } else {
        project::Entity::find()
            .filter(project::Column::EventId.eq(e.id))
            .filter(project::Column::Id.is_in(judged_ids))
            .all(txn)
            .await?
    };
    let team = team_member::Entity::find()
        .filter(team_member::Column::UserId.eq(actor.user.id))
        .filter(team_member::Column::EventId.eq(e.id))
        .one(txn)
        .await?;
    let built = match team {
        Some(t) => {
            project::Entity::find_public(e.id)
                .filter(project::Column::TeamId.eq(t.team_id))
                .all(txn)
                .await?
        }
        None => vec![],
    };

    let record = Record {
        id: public_id("rec"),
        event: EventRef {
            external_id: e.external_id.clone(),
            slug: e.slug.clone(),
            name: e.name.clone(),
        },
        person: Person {
            display_name: actor.user.display_name.clone(),
            email: actor.user.email.clone(),
        },
        roles,
        judged: project_refs(judged),
        built: project_refs(built),
        issued_at: canonical_time(w.now()),
        key_fingerprint: signer.fingerprint(),
    };
    let signature = signer.sign(PARTICIPATION_TAG, &[record_bytes(&record)?.as_bytes()]);
    let id = record.id.clone();
    let text = document_text(&Document {
        format: FORMAT.to_owned(),
        record,
        public_key: signer.public().to_pem(),
        signature,
    })?;
    w.append(
        Entry::new("record.issued", "participation_record", &id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "document_sha256": sha256_hex(text.as_bytes()) })),
    )
    .await?;
    Ok(text)
}

/// Why a document is not a valid record.
#[derive(Debug, PartialEq, Eq)]
pub enum Invalid {
    /// Not JSON at all.
    NotJson,
    /// JSON, but not a record as issued (other fields, another format, not canonical).
    NotARecord,
    /// A record, but signed by another key than the one trusted.
    OtherKey,
    /// The signature does not sign this record under `verdict.participation.v1`.
    BadSignature,
}

/// Checks `text` as a participation record signed by `key`: byte for byte as issued, the
/// embedded key and the record's fingerprint are `key`'s, and the signature is valid under
/// [`PARTICIPATION_TAG`]. Pure: no database, no network.
pub fn verify(text: &str, key: &PublicKey) -> Result<Record, Invalid> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|_| Invalid::NotJson)?;
    let doc: Document = serde_json::from_value(value).map_err(|_| Invalid::NotARecord)?;
    if doc.format != FORMAT || document_text(&doc).ok().as_deref() != Some(text) {
        return Err(Invalid::NotARecord);
    }
    let fingerprint = key.fingerprint();
    // Spellings that decode alike (upper-case hex, another PEM wrapping) are changed bytes.
    let embedded = PublicKey::from_pem(&doc.public_key)
        .ok()
        .filter(|k| k.to_pem() == doc.public_key)
        .ok_or(Invalid::NotARecord)?;
    if !doc
        .signature
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(Invalid::NotARecord);
    }
    if embedded.fingerprint() != fingerprint || doc.record.key_fingerprint != fingerprint {
        return Err(Invalid::OtherKey);
    }
    let bytes = record_bytes(&doc.record).map_err(|_| Invalid::NotARecord)?;
    if !key.verify(PARTICIPATION_TAG, &[bytes.as_bytes()], &doc.signature) {
        return Err(Invalid::BadSignature);
    }
    Ok(doc.record)
}

/// The public key a document carries (for an offline verifier, who must then pin it).
pub fn embedded_key(text: &str) -> Option<PublicKey> {
    let doc: Document = serde_json::from_str(text).ok()?;
    PublicKey::from_pem(&doc.public_key).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::signing::RUN_TAG;

    fn signed(signer: &Signer25519, tag: &str) -> String {
        let record = Record {
            id: "rec.test".into(),
            event: EventRef {
                external_id: "evt_1".into(),
                slug: "spring".into(),
                name: "Spring".into(),
            },
            person: Person {
                display_name: "Ada".into(),
                email: "ada@example.org".into(),
            },
            roles: vec!["judge".into()],
            judged: vec![ProjectRef {
                external_id: "prj_1".into(),
                title: "One".into(),
            }],
            built: vec![],
            issued_at: "2026-03-15T22:53:00.000000Z".into(),
            key_fingerprint: signer.fingerprint(),
        };
        let signature = signer.sign(tag, &[record_bytes(&record).unwrap().as_bytes()]);
        document_text(&Document {
            format: FORMAT.into(),
            record,
            public_key: signer.public().to_pem(),
            signature,
        })
        .unwrap()
    }

    fn signature_of(doc: &str) -> String {
        serde_json::from_str::<Document>(doc).unwrap().signature
    }

    #[test]
    fn a_record_verifies_only_unaltered_under_its_own_tag_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let signer = Signer25519::load_or_create(&dir.path().join("k")).unwrap();
        let other = Signer25519::load_or_create(&dir.path().join("other")).unwrap();
        let doc = signed(&signer, PARTICIPATION_TAG);
        let key = signer.public();
        assert_eq!(
            verify(&doc, &key).map(|r| r.roles),
            Ok(vec!["judge".into()])
        );
        // A run signature over the same bytes is not a record's.
        assert_eq!(
            verify(&signed(&signer, RUN_TAG), &key),
            Err(Invalid::BadSignature)
        );
        assert_eq!(verify(&doc, &other.public()), Err(Invalid::OtherKey));
        // Any changed byte: a title, whitespace, a key order.
        let edited = doc.replace("\"One\"", "\"Two\"");
        assert_eq!(verify(&edited, &key), Err(Invalid::BadSignature));
        assert_eq!(verify(&format!("{doc} "), &key), Err(Invalid::NotARecord));
        assert_eq!(
            verify(&doc.replacen('{', "{ ", 1), &key),
            Err(Invalid::NotARecord)
        );
        let upper = doc.replace(&signature_of(&doc), &signature_of(&doc).to_uppercase());
        assert_eq!(verify(&upper, &key), Err(Invalid::NotARecord));
        assert_eq!(verify("not json", &key), Err(Invalid::NotJson));
        assert_eq!(verify("{}", &key), Err(Invalid::NotARecord));
        // Another deployment's record is not ours, even with its own valid signature.
        assert_eq!(
            verify(&signed(&other, PARTICIPATION_TAG), &key),
            Err(Invalid::OtherKey)
        );
    }
}
