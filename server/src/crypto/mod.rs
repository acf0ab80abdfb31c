//! Hashing, canonical JSON, random identifiers and tokens, and password hashing.

use rand::{Rng, RngExt};
use sha2::{Digest, Sha256};

pub mod merkle;
pub mod password;
pub mod signing;

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// SHA-256 over a domain-separated sequence of fields: the domain tag, then each field as
/// its byte length (8 bytes, big-endian) followed by its bytes. No field can run into the
/// next, and no hash of one kind can be replayed as another.
pub fn sha256_fields(domain: &str, fields: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for f in std::iter::once(domain.as_bytes()).chain(fields.iter().copied()) {
        h.update((f.len() as u64).to_be_bytes());
        h.update(f);
    }
    hex::encode(h.finalize())
}

/// Canonical JSON: object keys sorted, no insignificant whitespace, UTF-8.
/// (`serde_json`'s default map is ordered by key, so re-serializing a `Value` sorts it.)
pub fn canonical_json(value: &serde_json::Value) -> String {
    fn sort(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                let sorted: std::collections::BTreeMap<_, _> =
                    m.iter().map(|(k, v)| (k.clone(), sort(v))).collect();
                serde_json::Value::Object(sorted.into_iter().collect())
            }
            serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(value).to_string()
}

const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";

/// `n` random characters from an unambiguous lower-case alphabet (no 0/o, 1/l).
pub fn random_string(n: usize) -> String {
    let mut rng = rand::rng();
    (0..n)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// A fresh opaque public id: a kind prefix and 20 random characters (about 100 bits),
/// never sequential and never confusable with a fixture's external id.
pub fn public_id(kind: &str) -> String {
    format!("{kind}.{}", random_string(20))
}

/// A fresh bearer secret: 32 random bytes, hex, with a kind prefix that tells session
/// tokens (`vs_`) from personal API tokens (`vt_`).
pub fn bearer_token(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth_and_drops_whitespace() {
        let v: serde_json::Value =
            serde_json::from_str(r#"{ "b": 1, "a": { "z": [ {"y":2, "x":1} ], "c": "é" } }"#)
                .unwrap();
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"c":"é","z":[{"x":1,"y":2}]},"b":1}"#
        );
    }

    #[test]
    fn field_hash_is_unambiguous_across_field_boundaries() {
        assert_ne!(
            sha256_fields("d", &[b"ab", b"c"]),
            sha256_fields("d", &[b"a", b"bc"])
        );
        assert_ne!(sha256_fields("d1", &[b"x"]), sha256_fields("d2", &[b"x"]));
    }

    #[test]
    fn public_ids_are_distinct_and_prefixed() {
        let a = public_id("prj");
        let b = public_id("prj");
        assert_ne!(a, b);
        assert!(a.starts_with("prj.") && a.len() == 24);
    }
}
