//! Target 1: the canonical JSON encoder ([`crate::crypto::canonical_json`]), which the audit
//! chain hashes and `audit verify` (and the bundle verifier) re-derive from the stored text:
//! `canonical_json(parse(payload)) == payload` must hold for every payload the encoder
//! wrote, or an untouched chain is reported as tampered.
//!
//! Properties: the output is canonical (keys strictly increasing by bytes at every depth,
//! no whitespace outside strings); it parses back to an equal value whose encoding is the
//! same bytes; spellings of one value (keys in any order, whitespace, `\u` escapes,
//! exponent notation) encode to the same bytes; nothing panics, also on deep nesting.

use std::fmt;

use proptest::prelude::*;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use super::support;
use crate::crypto::canonical_json;

/// The deepest nesting serde_json's parser accepts (its recursion limit).
const PARSER_DEPTH: usize = 127;

fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        // Every class of double (subnormal, huge, negative zero); NaN and infinity are not
        // JSON numbers and never reach a `Value`.
        any::<f64>().prop_filter_map("a JSON number is finite", Number::from_f64),
        // Short decimals across the exponent range: the values people and code write.
        (any::<i32>(), -330i32..310).prop_filter_map("finite", |(m, e)| {
            format!("{m}e{e}").parse().ok().and_then(Number::from_f64)
        }),
        prop::sample::select(vec![
            0.0,
            -0.0,
            0.1,
            0.3,
            1e21,
            1e-7,
            5e-324,
            f64::MIN_POSITIVE,
            2.225_073_858_507_201e-308,
            f64::MAX,
            f64::MIN,
            9_007_199_254_740_993.0,
        ])
        .prop_filter_map("finite", Number::from_f64),
    ]
}

fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        // Escapes, controls, the line separators JavaScript once choked on, BOM, and
        // characters outside the basic plane.
        "[\\x00-\\x1f\"\\\\/\\x7f\u{80}\u{2028}\u{2029}\u{fffd}\u{feff}\u{1F600}a-c]{0,12}",
        // Few distinct short keys: collisions, prefixes and case pairs in one object.
        "[aAbé]{0,3}",
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        string().prop_map(Value::String),
    ];
    leaf.prop_recursive(8, 256, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((string(), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A JSON value as its text spelled it: object members in text order, duplicates kept.
/// Lets the test see the key order of the encoder's output without trusting the parser's
/// map to keep it.
enum Spelled {
    Leaf,
    Array(Vec<Spelled>),
    Object(Vec<(String, Spelled)>),
}

impl<'de> Deserialize<'de> for Spelled {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Spelled;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Spelled, E> {
                Ok(Spelled::Leaf)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Spelled, E> {
                Ok(Spelled::Leaf)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Spelled, E> {
                Ok(Spelled::Leaf)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Spelled, E> {
                Ok(Spelled::Leaf)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Spelled, E> {
                Ok(Spelled::Leaf)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Spelled, E> {
                Ok(Spelled::Leaf)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Spelled, A::Error> {
                let mut items = vec![];
                while let Some(x) = a.next_element()? {
                    items.push(x);
                }
                Ok(Spelled::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Spelled, A::Error> {
                let mut members = vec![];
                while let Some(kv) = a.next_entry()? {
                    members.push(kv);
                }
                Ok(Spelled::Object(members))
            }
        }
        d.deserialize_any(V)
    }
}

/// Whether every object's keys are strictly increasing by bytes (so also unique).
fn keys_sorted(s: &Spelled) -> bool {
    match s {
        Spelled::Leaf => true,
        Spelled::Array(items) => items.iter().all(keys_sorted),
        Spelled::Object(m) => {
            m.windows(2).all(|w| w[0].0.as_bytes() < w[1].0.as_bytes())
                && m.iter().all(|(_, v)| keys_sorted(v))
        }
    }
}

/// Whether `text` has whitespace outside its strings.
fn has_insignificant_whitespace(text: &str) -> bool {
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\n' | '\r' | '\t') {
            return true;
        }
    }
    false
}

/// Whether `a` and `b` are the same JSON value, numbers compared exactly: the same kind of
/// number and, for floats, the same bits (`Value`'s own `==` takes `-0.0` for `0.0`, which
/// the encoding, and so every hash over it, tells apart).
fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            _ if x.is_f64() != y.is_f64() => false,
            (Some(p), Some(q)) if x.is_f64() => p.to_bits() == q.to_bits(),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| identical(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| identical(p, q)))
        }
        _ => a == b,
    }
}

/// The encoder's properties for one value: canonical form, round trip, same bytes again.
fn check_encoding(v: &Value) -> Result<(), TestCaseError> {
    let text = canonical_json(v);
    prop_assert!(!has_insignificant_whitespace(&text), "whitespace in {text}");
    let spelled: Spelled = serde_json::from_str(&text)
        .map_err(|e| TestCaseError::fail(format!("output does not parse ({e}): {text}")))?;
    prop_assert!(keys_sorted(&spelled), "keys out of order in {text}");
    let back: Value = serde_json::from_str(&text)
        .map_err(|e| TestCaseError::fail(format!("output does not parse ({e}): {text}")))?;
    prop_assert!(
        identical(&back, v),
        "the output means another value: {}",
        text
    );
    let again = canonical_json(&back);
    prop_assert_eq!(&again, &text, "encode, parse, encode changed the bytes");
    Ok(())
}

/// A tiny deterministic generator for the respellings below (the value's own shrinking
/// stays proptest's).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// `v` written another way: object members shuffled, whitespace between tokens, some
/// characters of strings as `\u` escapes, floats in exponent notation.
fn respell(v: &Value, rng: &mut Lcg, out: &mut String) {
    const SPACE: [&str; 5] = ["", " ", "\n", "\t", "\r\n  "];
    let ws = |rng: &mut Lcg, out: &mut String| out.push_str(SPACE[rng.below(SPACE.len())]);
    match v {
        Value::String(s) => respell_string(s, rng, out),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && rng.below(2) == 0 => out.push_str(&format!("{f:e}")),
            _ => out.push_str(&n.to_string()),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    ws(rng, out);
                    out.push(',');
                }
                ws(rng, out);
                respell(item, rng, out);
                ws(rng, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut members: Vec<(&String, &Value)> = m.iter().collect();
            for i in (1..members.len()).rev() {
                members.swap(i, rng.below(i + 1));
            }
            out.push('{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                respell_string(k, rng, out);
                ws(rng, out);
                out.push(':');
                ws(rng, out);
                respell(v, rng, out);
                ws(rng, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn respell_string(s: &str, rng: &mut Lcg, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' || (c as u32) < 0x20 || rng.below(4) == 0 {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04X}"));
            }
        } else {
            out.push(c);
        }
    }
    out.push('"');
}

/// Nested arrays and objects, `depth` levels deep, around a string leaf.
fn nested(depth: usize) -> Value {
    (0..depth).fold(Value::String("é\u{0}".into()), |inner, i| {
        if i % 2 == 0 {
            Value::Array(vec![inner, Value::Null])
        } else {
            let mut m = serde_json::Map::new();
            m.insert("b".into(), inner);
            m.insert("a".into(), Value::from(-0.0));
            Value::Object(m)
        }
    })
}

/// The corpus: `*.json` files are values as serde_json parses them; `*.doubles` files list
/// one double per line, read with Rust's correctly rounded parser, so a double that JSON
/// parsing would move is kept exactly as it was found.
#[test]
fn fuzz_canonical_json_seed_corpus() {
    for (name, bytes) in support::corpus("canonical") {
        let values: Vec<Value> = if name.ends_with(".doubles") {
            String::from_utf8_lossy(&bytes)
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(|l| {
                    let x: f64 = l
                        .parse()
                        .unwrap_or_else(|e| panic!("corpus canonical/{name}: {l}: {e}"));
                    Value::from(x)
                })
                .collect()
        } else {
            vec![
                serde_json::from_slice(&bytes)
                    .unwrap_or_else(|e| panic!("corpus canonical/{name}: {e}")),
            ]
        };
        for v in values {
            if let Err(e) = check_encoding(&v) {
                panic!("corpus canonical/{name}: {e}");
            }
        }
    }
}

#[test]
fn fuzz_canonical_json_round_trips_to_the_same_bytes() {
    support::run("canonical_json_round_trip", 512, &value(), |v| {
        check_encoding(&v)
    });
}

#[test]
fn fuzz_canonical_json_ignores_key_order_whitespace_and_escapes() {
    support::run(
        "canonical_json_spellings",
        512,
        &(value(), any::<u64>()),
        |(v, seed)| {
            let mut text = String::new();
            respell(&v, &mut Lcg(seed), &mut text);
            let reparsed: Value = serde_json::from_str(&text)
                .map_err(|e| TestCaseError::fail(format!("respelling does not parse ({e})")))?;
            prop_assert!(
                identical(&reparsed, &v),
                "the respelling {} means another value",
                text
            );
            prop_assert_eq!(
                canonical_json(&reparsed),
                canonical_json(&v),
                "from {}",
                text
            );
            Ok(())
        },
    );
}

#[test]
fn fuzz_canonical_json_survives_deep_nesting() {
    // Up to the parser's limit the round trip holds; past it the encoder still answers
    // (payloads come from the server's own code, never from a deeper document).
    for depth in (0..=PARSER_DEPTH).chain([PARSER_DEPTH + 1, 200, 1_000]) {
        let v = nested(depth);
        if depth <= PARSER_DEPTH {
            if let Err(e) = check_encoding(&v) {
                panic!("depth {depth}: {e}");
            }
        } else {
            let text = canonical_json(&v);
            assert!(text.ends_with(['}', ']']), "depth {depth}");
            assert!(
                serde_json::from_str::<Value>(&text).is_err(),
                "depth {depth}"
            );
        }
    }
}
