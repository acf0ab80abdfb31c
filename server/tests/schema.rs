//! The checked-in SDL matches the code, and every field of the schema declares an
//! authorization policy.

use std::collections::BTreeSet;

use async_graphql::parser::parse_schema;
use async_graphql::parser::types::{TypeKind, TypeSystemDefinition};
use verdict::graphql::registry::{field_policies, rule_of};

fn schema_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema.graphql")
}

/// Regenerate with `UPDATE_SCHEMA=1 cargo test -p verdict --test schema`.
#[test]
fn schema_graphql_matches_the_code() {
    let sdl = verdict::graphql::sdl();
    if std::env::var("UPDATE_SCHEMA").is_ok_and(|v| v == "1") {
        std::fs::write(schema_path(), &sdl).expect("write schema.graphql");
    }
    let checked_in = std::fs::read_to_string(schema_path()).unwrap_or_default();
    assert!(
        checked_in == sdl,
        "schema.graphql is out of date: run `UPDATE_SCHEMA=1 cargo test -p verdict --test schema` and commit it"
    );
}

/// Connections, edges and page info only carry what the field returning them authorized.
fn structural(type_name: &str) -> bool {
    type_name.ends_with("Connection") || type_name.ends_with("Edge") || type_name == "PageInfo"
}

#[test]
fn every_field_declares_a_policy_and_every_policy_names_a_field() {
    let doc = parse_schema(verdict::graphql::sdl()).expect("the SDL parses");
    let mut fields = BTreeSet::new();
    for def in &doc.definitions {
        let TypeSystemDefinition::Type(t) = def else {
            continue;
        };
        let name = t.node.name.node.as_str();
        let TypeKind::Object(obj) = &t.node.kind else {
            continue;
        };
        if structural(name) {
            continue;
        }
        for f in &obj.fields {
            fields.insert(format!("{name}.{}", f.node.name.node));
        }
    }
    assert!(
        fields.len() > 50,
        "the walk found too few fields: {}",
        fields.len()
    );
    let missing: Vec<_> = fields
        .iter()
        .filter(|f| {
            let (t, n) = f.split_once('.').unwrap_or_default();
            rule_of(t, n).is_none()
        })
        .collect();
    assert!(
        missing.is_empty(),
        "fields without a declared policy: {missing:?}"
    );
    let stale: Vec<_> = field_policies()
        .map(|(k, _)| *k)
        .filter(|k| !fields.contains(*k))
        .collect();
    assert!(
        stale.is_empty(),
        "policies for fields that do not exist: {stale:?}"
    );
    let mut declared = BTreeSet::new();
    let twice: Vec<_> = field_policies()
        .map(|(k, _)| *k)
        .filter(|k| !declared.insert(*k))
        .collect();
    assert!(
        twice.is_empty(),
        "policies declared more than once: {twice:?}"
    );
}

/// Descriptions are what people read in the playground: every type, field, argument, input
/// field and enum value carries one (`///` doc comments; `#[graphql(desc = "...")]` on
/// arguments). Built-in scalars and directives are the library's.
#[test]
fn every_type_field_argument_and_enum_value_is_described() {
    use async_graphql::parser::Positioned;
    use async_graphql::parser::types::InputValueDefinition;

    fn described(d: &Option<Positioned<String>>) -> bool {
        d.as_ref().is_some_and(|d| !d.node.trim().is_empty())
    }
    fn check_inputs(
        missing: &mut Vec<String>,
        kind: &str,
        owner: &str,
        inputs: &[Positioned<InputValueDefinition>],
    ) {
        for i in inputs {
            if !described(&i.node.description) {
                missing.push(format!("{kind} {owner}.{}", i.node.name.node));
            }
        }
    }

    let doc = parse_schema(verdict::graphql::sdl()).expect("the SDL parses");
    let mut missing = Vec::new();
    let mut walked = 0;
    for def in &doc.definitions {
        let TypeSystemDefinition::Type(t) = def else {
            continue;
        };
        let t = &t.node;
        let name = t.name.node.as_str();
        if name.starts_with("__") || ["String", "Int", "Float", "Boolean", "ID"].contains(&name) {
            continue;
        }
        walked += 1;
        if !described(&t.description) {
            missing.push(format!("type {name}"));
        }
        match &t.kind {
            TypeKind::Object(o) => {
                for f in &o.fields {
                    let f = &f.node;
                    if !described(&f.description) {
                        missing.push(format!("field {name}.{}", f.name.node));
                    }
                    let owner = format!("{name}.{}", f.name.node);
                    check_inputs(&mut missing, "argument", &owner, &f.arguments);
                }
            }
            TypeKind::Interface(i) => {
                for f in &i.fields {
                    let f = &f.node;
                    if !described(&f.description) {
                        missing.push(format!("field {name}.{}", f.name.node));
                    }
                    let owner = format!("{name}.{}", f.name.node);
                    check_inputs(&mut missing, "argument", &owner, &f.arguments);
                }
            }
            TypeKind::InputObject(i) => check_inputs(&mut missing, "input field", name, &i.fields),
            TypeKind::Enum(e) => {
                for v in &e.values {
                    if !described(&v.node.description) {
                        missing.push(format!("enum value {name}.{}", v.node.value.node));
                    }
                }
            }
            TypeKind::Scalar | TypeKind::Union(_) => {}
        }
    }
    assert!(walked > 30, "the walk found too few types: {walked}");
    assert!(
        missing.is_empty(),
        "{} without a description (add a `///` doc comment, or \
         `#[graphql(desc = \"...\")]` on an argument):\n{}",
        missing.len(),
        missing.join("\n")
    );
}
