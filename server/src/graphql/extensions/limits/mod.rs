//! Query limits: fields per document, depth, cost, directives per field and nesting,
//! refused with QUERY_TOO_COMPLEX before anything runs.
//!
//! async-graphql can enforce these itself (`limit_depth`, `limit_complexity`,
//! `limit_directives`), but its refusals carry only English text, so the schema is built
//! without them and this extension checks each limit at the step that measures it:
//!
//! - `prepare_request`: the extension parses the request itself, so the parser's recursion
//!   limit is told from a syntax error by its variant; then it checks nesting, the number
//!   of fields and directives on the document, and notes whether the operation is
//!   introspection only. The parsed document is handed on; async-graphql does not parse it
//!   again.
//! - `validation`: validation measures depth and complexity ([`ValidationResult`]); they
//!   are compared with the configuration here. Complexity is the cost of the fields (see
//!   [`crate::graphql::cost`]), held to the anonymous budget unless the caller is signed
//!   in. Operations that select only `__schema`, `__type` and `__typename` get
//!   [`INTROSPECTION_DEPTH`] (when introspection is on).
//!
//! The field count comes before validation because validation walks every fragment
//! spread in full, once per rule: a document of a few kilobytes whose fragments each
//! spread the previous one twice expands to billions of fields, and validation (which no
//! timeout can interrupt) would take minutes. Counted with each fragment's size computed
//! once, the same document is refused in microseconds.
//! - `request`: an error that still has no code after execution is a request-level
//!   refusal (unknown operation name: BAD_USER_INPUT) or, with a path, INTERNAL.
//!
//! Errors from parsing and validation are the caller's: BAD_USER_INPUT. Validation
//! measures depth and complexity only of a document without mistakes, so a document that
//! is both wrong and too deep is told about its mistakes.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_graphql::extensions::ExtensionContext;
use async_graphql::parser::types::{
    DocumentOperations, ExecutableDocument, Field, Selection, SelectionSet,
};
use async_graphql::registry::{MetaType, MetaTypeName, Registry};
use async_graphql::{
    Name, Positioned, Request, Response, ServerError, ServerResult, ValidationResult,
};

use super::{BAD_USER_INPUT, INTERNAL, set_code, too_complex};
use crate::config::Limits;
use crate::graphql::RequestCtx;

/// Depth allowed to introspection-only operations: the standard introspection query
/// (GraphiQL's, codegen tools') nests about 13 levels, deeper than data queries may.
pub const INTROSPECTION_DEPTH: usize = 16;

/// How deeply selection sets may nest, counting fragment spreads and inline fragments.
/// This guards the recursive walks of validation; the schema sets async-graphql's own
/// guard (`limit_recursive_depth`) to the same value, so this check, which runs first,
/// is the one that refuses.
pub const MAX_NESTING: usize = 32;

/// The limits of the configuration, read once when the schema is built.
pub struct QueryLimits {
    config: Arc<Config>,
}

struct Config {
    max_depth: usize,
    /// The cost budget of a signed-in caller.
    max_complexity: usize,
    /// The cost budget of an anonymous caller.
    max_complexity_anonymous: usize,
    max_fields: usize,
    max_directives: usize,
    /// Whether introspection is on (and so whether introspection-only operations get the
    /// deeper limit).
    introspection: bool,
}

impl QueryLimits {
    pub fn new(limits: &Limits, introspection: bool) -> Self {
        QueryLimits {
            config: Arc::new(Config {
                max_depth: limits.max_depth,
                max_complexity: limits.max_complexity,
                max_complexity_anonymous: limits.max_complexity_anonymous,
                max_fields: limits.max_fields,
                max_directives: limits.max_directives,
                introspection,
            }),
        }
    }
}

impl QueryLimits {
    /// One request's checks.
    pub(super) fn checker(&self) -> Checker {
        Checker {
            config: self.config.clone(),
            introspection_only: AtomicBool::new(false),
        }
    }
}

/// One request's checks, run by [`super::Edge`] at the steps named in the module docs.
pub(super) struct Checker {
    config: Arc<Config>,
    /// Set in `prepare`, read in `validated`.
    introspection_only: AtomicBool,
}

impl Checker {
    /// `request`, after execution: codes for the errors that still have none.
    pub(super) fn answered(&self, resp: &mut Response) {
        for e in resp.errors.iter_mut() {
            // No path: the request itself was refused (an unknown operation name).
            let code = if e.path.is_empty() {
                BAD_USER_INPUT
            } else {
                INTERNAL
            };
            set_code(e, code);
        }
    }

    /// `prepare_request`: parses the request and checks the document's limits.
    pub(super) fn prepare(
        &self,
        ctx: &ExtensionContext<'_>,
        request: &mut Request,
    ) -> ServerResult<()> {
        let doc = match async_graphql::parser::parse_query(&request.query) {
            Ok(doc) => doc,
            Err(e @ async_graphql::parser::Error::RecursionLimitExceeded) => {
                let e = ServerError::from(e);
                return Err(too_complex(e.message, e.locations.first().copied()));
            }
            Err(e) => {
                let mut e = ServerError::from(e);
                set_code(&mut e, BAD_USER_INPUT);
                return Err(e);
            }
        };
        check_variables(&ctx.schema_env.registry, &doc, request)?;
        check_nesting(&doc)?;
        check_fields(&doc, self.config.max_fields)?;
        check_directives(&doc, self.config.max_directives)?;
        check_typename(&doc, &ctx.schema_env.registry)?;
        self.introspection_only.store(
            self.config.introspection && is_introspection_only(&doc),
            Ordering::Relaxed,
        );
        request.set_parsed_query(doc);
        Ok(())
    }

    /// `validation`: its errors are the caller's; depth and complexity against the limits.
    pub(super) fn validated(
        &self,
        ctx: &ExtensionContext<'_>,
        result: Result<ValidationResult, Vec<ServerError>>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        let result = result.map_err(|mut errors| {
            for e in errors.iter_mut() {
                set_code(e, BAD_USER_INPUT);
            }
            errors
        })?;
        let c = &self.config;
        // The caller is in the request's data (HTTP) or the connection's (websocket); a
        // schema executed without one (in-process tests) is anonymous.
        let signed_in = ctx
            .data_opt::<Arc<RequestCtx>>()
            .is_some_and(|rc| rc.user().is_some());
        let (budget, flag, who) = if signed_in {
            (c.max_complexity, "--max-complexity", "a signed-in caller")
        } else {
            (
                c.max_complexity_anonymous,
                "--max-complexity-anonymous",
                "an anonymous caller",
            )
        };
        if result.complexity > budget {
            let hint = if !signed_in && c.max_complexity > budget {
                "; signed-in callers may spend more"
            } else {
                ""
            };
            return Err(vec![too_complex(
                format!(
                    "Query is too complex: it costs {}, over the limit of {budget} for {who} \
                     (`{flag}`){hint}.",
                    result.complexity
                ),
                None,
            )]);
        }
        let max_depth = if self.introspection_only.load(Ordering::Relaxed) {
            c.max_depth.max(INTROSPECTION_DEPTH)
        } else {
            c.max_depth
        };
        if result.depth > max_depth {
            return Err(vec![too_complex("Query is nested too deep.".into(), None)]);
        }
        Ok(result)
    }
}

/// Refuses an operation whose variables do not fit their declared types (a required one
/// missing or null, a value of the wrong type, an input object with an unknown or a missing
/// required field), as a request error: BAD_USER_INPUT, before validation. async-graphql
/// would instead fail at the field that uses the variable, with an error that has a path
/// and no code, which `request` could only call INTERNAL. Only the operation that runs is
/// checked (by operationName, or the only one).
fn check_variables(
    registry: &Registry,
    doc: &ExecutableDocument,
    request: &Request,
) -> ServerResult<()> {
    let op = match (&request.operation_name, &doc.operations) {
        (Some(name), ops) => ops
            .iter()
            .find(|(n, _)| n.is_some_and(|n| n.as_str() == name.as_str()))
            .map(|(_, op)| op),
        (None, DocumentOperations::Single(op)) => Some(op),
        (None, DocumentOperations::Multiple(ops)) if ops.len() == 1 => ops.values().next(),
        // No operation to run: async-graphql refuses the request itself.
        _ => None,
    };
    let Some(op) = op else {
        return Ok(());
    };
    for def in &op.node.variable_definitions {
        let d = &def.node;
        let ty = d.var_type.node.to_string();
        let problem = match request.variables.get(&d.name.node) {
            None if d.var_type.node.nullable || d.default_value.is_some() => None,
            None => Some("was not provided".to_owned()),
            Some(v) => {
                input_problem(registry, &ty, v).map(|p| format!("got an invalid value: {p}"))
            }
        };
        if let Some(p) = problem {
            let mut e = ServerError::new(
                format!("Variable \"${}\" of type \"{ty}\" {p}.", d.name.node),
                Some(def.pos),
            );
            set_code(&mut e, BAD_USER_INPUT);
            return Err(e);
        }
    }
    Ok(())
}

/// What is wrong with `v` as a value of the GraphQL type `ty` (as the SDL spells it), by
/// the input coercion rules: null only where nullable, a single value for a list, enum
/// names, input objects with known fields and their required ones, scalars by their own
/// check.
fn input_problem(registry: &Registry, ty: &str, v: &async_graphql::Value) -> Option<String> {
    use async_graphql::Value;
    match MetaTypeName::create(ty) {
        MetaTypeName::NonNull(inner) => match v {
            Value::Null => Some(format!("expected {ty}, found null")),
            v => input_problem(registry, inner, v),
        },
        MetaTypeName::List(inner) => match v {
            Value::List(items) => items.iter().find_map(|x| input_problem(registry, inner, x)),
            Value::Null => None,
            v => input_problem(registry, inner, v),
        },
        MetaTypeName::Named(name) => {
            if *v == Value::Null {
                return None;
            }
            match registry.types.get(name)? {
                MetaType::Scalar {
                    is_valid: Some(ok), ..
                } => (!ok(v)).then(|| format!("expected {name}")),
                MetaType::Enum { enum_values, .. } => match v {
                    Value::Enum(n) if enum_values.contains_key(n.as_str()) => None,
                    Value::String(n) if enum_values.contains_key(n.as_str()) => None,
                    _ => Some(format!("expected a value of {name}")),
                },
                MetaType::InputObject {
                    input_fields,
                    oneof,
                    ..
                } => {
                    let Value::Object(m) = v else {
                        return Some(format!("expected {name}"));
                    };
                    if let Some(k) = m.keys().find(|k| !input_fields.contains_key(k.as_str())) {
                        return Some(format!("{name} has no field {k}"));
                    }
                    if *oneof && m.len() != 1 {
                        return Some(format!("{name} takes exactly one field"));
                    }
                    input_fields
                        .values()
                        .find_map(|f| match m.get(f.name.as_str()) {
                            Some(x) => input_problem(registry, &f.ty, x)
                                .map(|p| format!("{name}.{}: {p}", f.name)),
                            None if f.ty.ends_with('!') && f.default_value.is_none() => {
                                Some(format!("{name}.{} is required", f.name))
                            }
                            None => None,
                        })
                }
                _ => None,
            }
        }
    }
}

/// Refuses a document whose selection sets nest deeper than [`MAX_NESTING`].
fn check_nesting(doc: &ExecutableDocument) -> ServerResult<()> {
    let mut memo = HashMap::new();
    for (_, op) in doc.operations.iter() {
        let set = &op.node.selection_set;
        if nesting(doc, &set.node, MAX_NESTING, &mut memo).is_none() {
            return Err(too_complex(
                format!("The recursion depth of the query cannot be greater than `{MAX_NESTING}`"),
                Some(set.pos),
            ));
        }
    }
    Ok(())
}

/// The longest chain of selection sets below `set` (a field's selection, a fragment
/// spread, an inline fragment each count one), or `None` once it would pass `room`. Each
/// fragment's nesting is computed once, so fragments spread many times cost nothing more;
/// a fragment cycle runs out of room.
fn nesting<'a>(
    doc: &'a ExecutableDocument,
    set: &'a SelectionSet,
    room: usize,
    memo: &mut HashMap<&'a Name, usize>,
) -> Option<usize> {
    let mut deepest = 0;
    for item in &set.items {
        let below = match &item.node {
            Selection::Field(f) if f.node.selection_set.node.items.is_empty() => continue,
            Selection::Field(f) => {
                nesting(doc, &f.node.selection_set.node, room.checked_sub(1)?, memo)?
            }
            Selection::InlineFragment(i) => {
                nesting(doc, &i.node.selection_set.node, room.checked_sub(1)?, memo)?
            }
            Selection::FragmentSpread(s) => {
                let name = &s.node.fragment_name.node;
                // An unknown fragment is validation's to report.
                let Some((name, fragment)) = doc.fragments.get_key_value(name) else {
                    continue;
                };
                match memo.get(name) {
                    Some(&n) => n,
                    None => {
                        let n = nesting(
                            doc,
                            &fragment.node.selection_set.node,
                            room.checked_sub(1)?,
                            memo,
                        )?;
                        memo.insert(name, n);
                        n
                    }
                }
            }
        };
        deepest = deepest.max(below + 1);
        if deepest > room {
            return None;
        }
    }
    Some(deepest)
}

/// Refuses a document that selects more than `max` fields (aliases are fields too): over
/// every operation and every fragment definition, as validation walks them, each fragment
/// spread counting the fragment's fields. Each fragment is counted once (memoised), so
/// the count takes time in proportion to the text, however far the spreads expand.
fn check_fields(doc: &ExecutableDocument, max: usize) -> ServerResult<()> {
    let mut memo = HashMap::new();
    let mut total = 0usize;
    for fragment in doc.fragments.values() {
        total = total.saturating_add(fields(doc, &fragment.node.selection_set.node, &mut memo));
    }
    for (_, op) in doc.operations.iter() {
        total = total.saturating_add(fields(doc, &op.node.selection_set.node, &mut memo));
    }
    if total > max {
        return Err(too_complex(
            format!(
                "Query selects too many fields: {total} once fragments are expanded, over the \
                 limit of {max} (`--max-fields`)."
            ),
            None,
        ));
    }
    Ok(())
}

/// The fields selected in `set` and below, fragment spreads expanded (saturating). A
/// fragment in a cycle counts 0 where it spreads itself (the nesting check has refused
/// cycles already).
fn fields<'a>(
    doc: &'a ExecutableDocument,
    set: &'a SelectionSet,
    memo: &mut HashMap<&'a Name, usize>,
) -> usize {
    let mut n = 0usize;
    for item in &set.items {
        let here = match &item.node {
            Selection::Field(f) => fields(doc, &f.node.selection_set.node, memo).saturating_add(1),
            Selection::InlineFragment(i) => fields(doc, &i.node.selection_set.node, memo),
            Selection::FragmentSpread(s) => {
                // An unknown fragment is validation's to report.
                let Some((name, fragment)) =
                    doc.fragments.get_key_value(&s.node.fragment_name.node)
                else {
                    continue;
                };
                match memo.get(name) {
                    Some(&k) => k,
                    None => {
                        memo.insert(name, 0);
                        let k = fields(doc, &fragment.node.selection_set.node, memo);
                        memo.insert(name, k);
                        k
                    }
                }
            }
        };
        n = n.saturating_add(here);
    }
    n
}

/// Calls `check` on every field of `doc`, in its operations and its fragments (each
/// fragment once, where it is defined, not where it is spread).
fn each_field(
    doc: &ExecutableDocument,
    check: &mut impl FnMut(&Positioned<Field>) -> ServerResult<()>,
) -> ServerResult<()> {
    fn walk(
        set: &SelectionSet,
        check: &mut impl FnMut(&Positioned<Field>) -> ServerResult<()>,
    ) -> ServerResult<()> {
        for item in &set.items {
            match &item.node {
                Selection::Field(f) => {
                    check(f)?;
                    walk(&f.node.selection_set.node, check)?;
                }
                Selection::InlineFragment(i) => walk(&i.node.selection_set.node, check)?,
                Selection::FragmentSpread(_) => {}
            }
        }
        Ok(())
    }
    for (_, op) in doc.operations.iter() {
        walk(&op.node.selection_set.node, check)?;
    }
    for fragment in doc.fragments.values() {
        walk(&fragment.node.selection_set.node, check)?;
    }
    Ok(())
}

/// Refuses a field carrying more than `max` directives (in operations and fragments).
fn check_directives(doc: &ExecutableDocument, max: usize) -> ServerResult<()> {
    each_field(doc, &mut |f| {
        if f.node.directives.len() > max {
            return Err(too_complex(
                format!(
                    "The number of directives on the field `{}` cannot be greater than `{max}`",
                    f.node.name.node
                ),
                Some(f.pos),
            ));
        }
        Ok(())
    })
}

/// Refuses arguments and unknown directives on `__typename`, which async-graphql's
/// validation does not visit (it checks every other field's): `{ __typename @skp(if: true) }`
/// or `{ __typename(x: 1) }` would otherwise run as if the mistake were not there.
fn check_typename(doc: &ExecutableDocument, registry: &Registry) -> ServerResult<()> {
    each_field(doc, &mut |f| {
        if f.node.name.node != "__typename" {
            return Ok(());
        }
        let mistake = if let Some((name, _)) = f.node.arguments.first() {
            Some((
                format!(
                    "Unknown argument \"{}\" on field \"__typename\".",
                    name.node
                ),
                name.pos,
            ))
        } else {
            f.node
                .directives
                .iter()
                .find(|d| !registry.directives.contains_key(d.node.name.node.as_str()))
                .map(|d| {
                    (
                        format!("Unknown directive \"@{}\".", d.node.name.node),
                        d.pos,
                    )
                })
        };
        match mistake {
            Some((message, pos)) => {
                let mut e = ServerError::new(message, Some(pos));
                set_code(&mut e, BAD_USER_INPUT);
                Err(e)
            }
            None => Ok(()),
        }
    })
}

/// Whether every operation of `doc` selects only introspection fields (`__schema`,
/// `__type`, `__typename`) at its top level.
fn is_introspection_only(doc: &ExecutableDocument) -> bool {
    let mut ops = doc.operations.iter().peekable();
    ops.peek().is_some()
        && ops.all(|(_, op)| {
            op.node
                .selection_set
                .node
                .items
                .iter()
                .all(|s| match &s.node {
                    Selection::Field(f) => f.node.name.node.starts_with("__"),
                    _ => false,
                })
        })
}

#[cfg(test)]
mod tests;
