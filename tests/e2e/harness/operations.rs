//! The GraphQL operations the end-to-end tests share: the setup flows of the harness and
//! the scenario, and the operations more than one test file sends. They live in
//! `tests/e2e/operations/*.graphql`, one file per domain, each operation named and
//! self-contained (no fragments), so [`op`] can pick one by name and send it alone.
//!
//! `server/tests/operations.rs` includes this file by path and validates every operation
//! against the checked-in `schema.graphql`: a schema change breaks a test at validation
//! time, not in the middle of a run. So this file depends on nothing else of the harness.
//! One-off operations, deliberately invalid ones above all (limits, bad input, the
//! authorization probes), stay inline in their tests.

use std::{collections::BTreeMap, sync::OnceLock};

use apollo_compiler::ast::{Definition, Document};

/// Every operations file, as compiled into the tests. A new file in
/// `tests/e2e/operations/` goes here too (the validation test checks).
pub const FILES: &[(&str, &str)] = &[
    (
        "accounts.graphql",
        include_str!("../operations/accounts.graphql"),
    ),
    (
        "events.graphql",
        include_str!("../operations/events.graphql"),
    ),
    ("teams.graphql", include_str!("../operations/teams.graphql")),
    (
        "judge_sign_in.graphql",
        include_str!("../operations/judge_sign_in.graphql"),
    ),
    (
        "people.graphql",
        include_str!("../operations/people.graphql"),
    ),
    (
        "projects.graphql",
        include_str!("../operations/projects.graphql"),
    ),
    (
        "judging.graphql",
        include_str!("../operations/judging.graphql"),
    ),
    (
        "pairwise.graphql",
        include_str!("../operations/pairwise.graphql"),
    ),
    (
        "results.graphql",
        include_str!("../operations/results.graphql"),
    ),
    (
        "import.graphql",
        include_str!("../operations/import.graphql"),
    ),
];

/// The text of the operation called `name`, alone, ready to send.
pub fn op(name: &str) -> &'static str {
    operations()
        .get(name)
        .copied()
        .unwrap_or_else(|| panic!("no operation {name} in tests/e2e/operations/*.graphql"))
}

/// Every shared operation: its name and its source text.
pub fn operations() -> &'static BTreeMap<String, &'static str> {
    static OPERATIONS: OnceLock<BTreeMap<String, &'static str>> = OnceLock::new();
    OPERATIONS.get_or_init(|| {
        let mut ops = BTreeMap::new();
        for (file, text) in FILES {
            let doc = Document::parse(*text, *file)
                .unwrap_or_else(|e| panic!("{file} does not parse:\n{}", e.errors));
            for definition in &doc.definitions {
                let Definition::OperationDefinition(operation) = definition else {
                    panic!("{file}: only operations (each is sent alone, so no fragments)");
                };
                let name = operation
                    .name
                    .as_ref()
                    .unwrap_or_else(|| panic!("{file}: every operation needs a name"));
                let span = operation.location().expect("parsed from source text");
                let source = &text[span.offset()..span.end_offset()];
                if ops.insert(name.to_string(), source).is_some() {
                    panic!("{file}: operation {name} is defined twice");
                }
            }
        }
        ops
    })
}
