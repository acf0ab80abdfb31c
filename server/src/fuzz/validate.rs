//! Target 5a: input validation ([`crate::domain::validate`]). Every rule answers every
//! string without panicking, refuses with BAD_USER_INPUT naming the field it was given, and
//! what it accepts it accepts again unchanged (normalization is idempotent), within the
//! limits it states.

use proptest::prelude::*;

use super::support;
use crate::domain::validate;
use crate::error::AppError;

/// Strings that reach the edges of the rules: email- and URL-shaped text, padding of every
/// kind of whitespace, case pairs, controls, invisible formatting, long runs.
pub(super) fn text() -> impl Strategy<Value = String> {
    let pad = "[ \t\n\r\u{85}\u{a0}\u{2000}\u{3000}\u{feff}]{0,2}";
    prop_oneof![
        any::<String>(),
        (pad, "[a-zA-Z0-9._%+\\-\"\\\\ ()<>,;:\u{e9}\u{130}\u{3a3}]{0,16}@[a-zA-Z0-9.\\-\\[\\]:\u{e9}]{0,16}", pad)
            .prop_map(|(a, b, c)| format!("{a}{b}{c}")),
        (pad, "(?i)(https?|ftp|javascript|file)", ":(//)?", "[a-zA-Z0-9.:@\\[\\]%/?#=&+ \u{e9}\u{1F600}\\\\-]{0,24}", pad)
            .prop_map(|(a, s, c, r, p)| format!("{a}{s}{c}{r}{p}")),
        "[\\x00-\\x1f\\x7f\u{200b}\u{200c}\u{200d}\u{202e}\u{2066}\u{feff}a A\u{130}\u{3a3}\u{df}]{0,40}",
        // Long runs around the length limits (200, 254, 2,000 characters or bytes).
        ("[a-zA-Z \u{e9}\u{1F600}]", 190usize..2_100).prop_map(|(c, n)| c.repeat(n)),
        (0usize..2_100, "[ \u{e9}\u{1F600}%]").prop_map(|(n, c)| format!("http://example.org/{}", c.repeat(n))),
    ]
}

fn refusal_names(field: &str, e: &AppError) -> Result<(), TestCaseError> {
    match e {
        AppError::BadInput { field: f, .. } if f == field => Ok(()),
        other => Err(TestCaseError::fail(format!(
            "refused with {other:?}, not BAD_USER_INPUT naming {field}"
        ))),
    }
}

fn has_control(s: &str, allowed: &[char]) -> bool {
    s.chars().any(|c| c.is_control() && !allowed.contains(&c))
}

/// Every rule on one input.
fn check(raw: &str) -> Result<(), TestCaseError> {
    match validate::email("email", raw) {
        Ok(e) => {
            prop_assert_eq!(
                validate::email("email", &e).ok(),
                Some(e.clone()),
                "not idempotent"
            );
            prop_assert_eq!(e.trim(), e.as_str());
            prop_assert_eq!(e.to_lowercase(), e.clone());
            prop_assert!(e.len() <= 254 && e.contains('@'), "{}", e);
            // ASCII case never makes two addresses.
            let flipped: String = raw
                .chars()
                .map(|c| {
                    if c.is_ascii_lowercase() {
                        c.to_ascii_uppercase()
                    } else {
                        c.to_ascii_lowercase()
                    }
                })
                .collect();
            prop_assert_eq!(validate::email("email", &flipped).ok(), Some(e));
        }
        Err(e) => refusal_names("email", &e)?,
    }
    for max in [1, 32, validate::NAME_MAX] {
        match validate::name("name", raw, max) {
            Ok(s) => {
                prop_assert_eq!(validate::name("name", &s, max).ok(), Some(s.clone()));
                prop_assert!(!s.is_empty() && s.trim() == s && s.chars().count() <= max);
                prop_assert!(!has_control(&s, &['\n', '\t', '\r']));
                prop_assert!(!s.chars().any(validate::is_invisible_formatting));
            }
            Err(e) => refusal_names("name", &e)?,
        }
        match validate::text("body", raw, max) {
            Ok(s) => {
                prop_assert_eq!(&s, raw);
                prop_assert!(s.chars().count() <= max && !has_control(&s, &['\n', '\t', '\r']));
            }
            Err(e) => refusal_names("body", &e)?,
        }
    }
    match validate::url("repoUrl", raw) {
        Ok(u) => {
            prop_assert_eq!(
                validate::url("repoUrl", &u).ok(),
                Some(u.clone()),
                "not idempotent"
            );
            prop_assert!(
                u.is_empty() || u.starts_with("http://") || u.starts_with("https://"),
                "{}",
                u
            );
            prop_assert!(u.len() <= 2_000, "accepted {} bytes", u.len());
        }
        Err(e) => refusal_names("repoUrl", &e)?,
    }
    let parts: Vec<String> = raw.split(',').map(str::to_owned).collect();
    match validate::tags("tags", &parts) {
        Ok(t) => {
            prop_assert_eq!(
                validate::tags("tags", &t).ok(),
                Some(t.clone()),
                "not idempotent"
            );
            prop_assert!(t.len() <= validate::TAGS_MAX);
            for (i, tag) in t.iter().enumerate() {
                prop_assert!(!tag.is_empty() && tag.chars().count() <= validate::TAG_MAX);
                prop_assert_eq!(&tag.to_lowercase(), tag);
                prop_assert!(!t[..i].contains(tag), "duplicate tag {}", tag);
            }
        }
        Err(e) => refusal_names("tags", &e)?,
    }
    for (rule, field, result) in [
        ("slug", "slug", validate::slug("slug", raw)),
        (
            "external_id",
            "externalId",
            validate::external_id("externalId", raw),
        ),
        (
            "time_zone",
            "timeZone",
            validate::time_zone("timeZone", raw),
        ),
    ] {
        match result {
            Ok(s) => {
                let again = match rule {
                    "slug" => validate::slug(field, &s),
                    "external_id" => validate::external_id(field, &s),
                    _ => validate::time_zone(field, &s),
                };
                prop_assert_eq!(again.ok(), Some(s.clone()), "{} not idempotent", rule);
                prop_assert!(!s.is_empty() && s.len() <= 64 || rule == "time_zone");
            }
            Err(e) => refusal_names(field, &e)?,
        }
    }
    if let Err(e) = validate::password("password", raw) {
        refusal_names("password", &e)?;
    }
    Ok(())
}

#[test]
fn fuzz_validate_seed_corpus() {
    for (name, input) in support::corpus_strings("validate") {
        if let Err(e) = check(&input) {
            panic!("corpus validate/{name} {input:?}: {e}");
        }
    }
}

#[test]
fn fuzz_validate_rules_are_total_and_idempotent() {
    support::run("validate", 1_024, &text(), |raw| check(&raw));
}
