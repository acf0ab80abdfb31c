//! Redacting an audit row's payload in place, as the module doc of [`super`] describes: the
//! personal values become `null`, a `"redacted"` member lists their JSON pointers, and the
//! row's hashes stay. The pure part ([`redact`], [`is_redaction`]) is shared by the
//! erasure and the verifiers; [`store`] writes one redacted row (and the webhook
//! deliveries that carry it).

use entity::{audit_event, webhook_delivery};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, sea_query::Expr,
};
use serde_json::{Map, Value};

use crate::crypto::{canonical_json, sha256_hex};
use crate::error::AppResult;

/// The action of the entry an erasure appends; its payload's `redacted_seqs` names every
/// row it redacted.
pub const ERASED_ACTION: &str = "account.erased";

/// The member of a redacted payload that lists what was removed.
pub const MARKER: &str = "redacted";

/// Whether `payload` has the shape of a redacted payload: a JSON object whose `"redacted"`
/// member is a non-empty list of JSON pointers. (Whether it is canonical is checked with
/// every payload.)
pub fn is_redaction(payload: &str) -> bool {
    serde_json::from_str::<Value>(payload).is_ok_and(|v| {
        v.get(MARKER)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty() && a.iter().all(|p| p.as_str().is_some()))
    })
}

/// Whether row `r` carries a redacted payload instead of the one its `payload_hash` names.
pub fn is_redacted(r: &audit_event::Model) -> bool {
    sha256_hex(r.payload.as_bytes()) != r.payload_hash && is_redaction(&r.payload)
}

/// The rows an `account.erased` payload says it redacted, each with the SHA-256 of the
/// redacted payload it left there (`redacted_rows: [{"seq", "payload_sha256"}]`).
pub fn claimed_rows(payload: &str) -> Vec<(i64, String)> {
    serde_json::from_str::<Value>(payload)
        .ok()
        .and_then(|v| {
            v.get("redacted_rows").and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|r| {
                        Some((
                            r.get("seq")?.as_i64()?,
                            r.get("payload_sha256")?.as_str()?.to_owned(),
                        ))
                    })
                    .collect()
            })
        })
        .unwrap_or_default()
}

/// One `redacted_rows` element of an `account.erased` payload.
pub fn claim(seq: i64, redacted_payload: &str) -> Value {
    serde_json::json!({ "seq": seq, "payload_sha256": sha256_hex(redacted_payload.as_bytes()) })
}

/// `payload` with every value that `personal(member name, value)` picks replaced by `null`
/// (at any depth; array elements are asked with an empty name) and their pointers added to
/// the `"redacted"` list (kept sorted, merged with an earlier redaction's). `None` when
/// nothing was picked, or the payload is not an object.
pub fn redact(payload: &Value, personal: &dyn Fn(&str, &Value) -> bool) -> Option<Value> {
    let Value::Object(top) = payload else {
        return None;
    };
    let mut pointers: Vec<String> = top
        .get(MARKER)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let before = pointers.len();
    let mut out = Map::new();
    for (k, v) in top {
        if k == MARKER {
            continue;
        }
        let path = format!("/{}", escape(k));
        out.insert(k.clone(), walk(k, v, &path, personal, &mut pointers));
    }
    if pointers.len() == before {
        return None;
    }
    pointers.sort();
    pointers.dedup();
    out.insert(
        MARKER.to_owned(),
        Value::Array(pointers.into_iter().map(Value::String).collect()),
    );
    Some(Value::Object(out))
}

fn walk(
    name: &str,
    v: &Value,
    path: &str,
    personal: &dyn Fn(&str, &Value) -> bool,
    pointers: &mut Vec<String>,
) -> Value {
    if !v.is_null() && personal(name, v) {
        pointers.push(path.to_owned());
        return Value::Null;
    }
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let p = format!("{path}/{}", escape(k));
                    (k.clone(), walk(k, x, &p, personal, pointers))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, x)| walk("", x, &format!("{path}/{i}"), personal, pointers))
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// A member name as a JSON pointer token (RFC 6901).
fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

/// Stores `redacted` as row `row`'s payload (its hashes stay), and re-renders the bodies
/// of the webhook deliveries that carry the row, so a delivery not yet sent (or sent
/// again) carries the redacted payload too.
/// Returns the stored payload (what the erasure entry's claim hashes).
pub async fn store<C: ConnectionTrait>(
    txn: &C,
    row: &audit_event::Model,
    redacted: &Value,
) -> AppResult<String> {
    let payload = canonical_json(redacted);
    audit_event::Entity::update_many()
        .col_expr(audit_event::Column::Payload, Expr::value(payload.clone()))
        .filter(audit_event::Column::Seq.eq(row.seq))
        .exec(txn)
        .await?;
    let changed = audit_event::Model {
        payload,
        ..row.clone()
    };
    let body = super::deliveries::body(&changed);
    let deliveries = webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::Seq.eq(row.seq))
        .all(txn)
        .await?;
    for d in deliveries {
        webhook_delivery::Entity::update(webhook_delivery::ActiveModel {
            id: Set(d.id),
            body: Set(body.clone()),
            ..Default::default()
        })
        .exec(txn)
        .await?;
    }
    Ok(changed.payload)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn redaction_nulls_what_is_picked_and_lists_it() {
        let p = json!({ "display_name": "Ann", "n": 3, "list": ["a@x.org", "b@x.org"] });
        let r = redact(&p, &|k, v| k == "display_name" || v == "a@x.org").unwrap();
        assert_eq!(
            r,
            json!({ "display_name": null, "n": 3, "list": [null, "b@x.org"],
                    "redacted": ["/display_name", "/list/0"] })
        );
        assert!(is_redaction(&canonical_json(&r)));
        // Nothing personal: nothing to do; a second pass merges.
        assert_eq!(redact(&p, &|_, _| false), None);
        let again = redact(&r, &|_, v| v == "b@x.org").unwrap();
        assert_eq!(
            again["redacted"],
            json!(["/display_name", "/list/0", "/list/1"])
        );
        assert!(!is_redaction(&canonical_json(&p)));
        assert!(!is_redaction(r#"{"redacted":[]}"#));
    }

    #[test]
    fn a_redacted_row_still_checks_but_any_other_change_does_not() {
        let payload = canonical_json(&json!({ "display_name": "Ann" }));
        let payload_hash = sha256_hex(payload.as_bytes());
        let row_hash = super::super::row_hash(
            super::super::GENESIS,
            1,
            "t",
            "usr_1",
            "",
            "user.profile_updated",
            "user",
            "usr_1",
            &payload_hash,
        );
        let row = audit_event::Model {
            seq: 1,
            occurred_at: "t".into(),
            actor: "usr_1".into(),
            event: String::new(),
            action: "user.profile_updated".into(),
            object_type: "user".into(),
            object_id: "usr_1".into(),
            payload,
            payload_hash,
            prev_hash: super::super::GENESIS.into(),
            row_hash,
        };
        let check = |r: &audit_event::Model| super::super::check_row(r, super::super::GENESIS, 1);
        assert_eq!(check(&row), None);
        let redacted = redact(&serde_json::from_str(&row.payload).unwrap(), &|k, _| {
            k == "display_name"
        })
        .unwrap();
        let mut r = row.clone();
        r.payload = canonical_json(&redacted);
        assert_eq!(check(&r), None);
        assert!(is_redacted(&r));
        // Another name in its place is not a redaction.
        let mut forged = row.clone();
        forged.payload = canonical_json(&json!({ "display_name": "Bob" }));
        assert_eq!(check(&forged), Some("payload does not match payload_hash"));
        // Non-canonical redaction fails too.
        let mut spaced = r.clone();
        spaced.payload = format!(" {}", r.payload);
        assert!(check(&spaced).is_some());
    }
}
