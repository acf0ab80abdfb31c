//! The GraphQL operations the end-to-end tests share (`tests/e2e/operations/*.graphql`)
//! are valid against the checked-in `schema.graphql`: a renamed field, a changed argument
//! or a new required input breaks this test when the schema changes, not an end-to-end
//! run halfway through a scenario. (`cargo test --test schema` keeps `schema.graphql`
//! equal to the code.)

use std::collections::BTreeSet;

use apollo_compiler::{ExecutableDocument, Schema, validation::Valid};

/// The operations, as the end-to-end harness loads them.
#[path = "../../tests/e2e/harness/operations.rs"]
mod operations;

use operations::{FILES, op, operations};

const SCHEMA: &str = include_str!("../../schema.graphql");

fn schema() -> Valid<Schema> {
    Schema::parse_and_validate(SCHEMA, "schema.graphql")
        .unwrap_or_else(|e| panic!("schema.graphql is not a valid schema:\n{}", e.errors))
}

#[test]
fn every_shared_operation_validates_against_the_schema() {
    let schema = schema();
    let mut failures = vec![];
    // Each file as a whole (names are unique, variables declared and used) ...
    for (file, text) in FILES {
        if let Err(e) = ExecutableDocument::parse_and_validate(&schema, *text, *file) {
            failures.push(e.errors.to_string());
        }
    }
    // ... and each operation alone, exactly as `op` sends it.
    for name in operations().keys() {
        if let Err(e) = ExecutableDocument::parse_and_validate(&schema, op(name), name.as_str()) {
            failures.push(e.errors.to_string());
        }
    }
    assert!(
        failures.is_empty(),
        "operations in tests/e2e/operations/ do not match schema.graphql:\n{}",
        failures.join("\n")
    );
    assert!(
        operations().len() >= 20,
        "the shared operations were found: {:?}",
        operations().keys()
    );
}

#[test]
fn every_operations_file_is_loaded_by_the_harness() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/e2e/operations");
    let on_disk: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|entry| entry.expect("directory entry").file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".graphql"))
        .collect();
    let loaded: BTreeSet<String> = FILES.iter().map(|(f, _)| f.to_string()).collect();
    assert_eq!(
        on_disk, loaded,
        "every .graphql file in {dir} is listed in FILES (tests/e2e/harness/operations.rs)"
    );
}

/// The check has teeth: an operation the schema does not have is refused.
#[test]
fn an_operation_off_the_schema_is_refused() {
    let schema = schema();
    for wrong in [
        "query Wrong { noSuchField }",
        "mutation Wrong($e: String!) { createTrack(event: $e) { id } }",
        "query Wrong($s: Int!) { event(slug: $s) { id } }",
    ] {
        assert!(
            ExecutableDocument::parse_and_validate(&schema, wrong, "wrong.graphql").is_err(),
            "validation accepted {wrong}"
        );
    }
}
