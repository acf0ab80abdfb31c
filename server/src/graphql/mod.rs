//! The GraphQL API: one side-effect-free [`schema`] builder shared by the server, the SDL
//! export and the tests.

use std::sync::Arc;

use async_graphql::{Data, Schema, SchemaBuilder};

pub mod bus;
pub mod connection;
pub mod context;
pub mod error;
pub mod loaders;
pub mod mutation;
pub mod object;
pub mod policy;
pub mod query;
pub mod subscription;

pub use context::{RequestCtx, Services};
use loaders::Loaders;
use mutation::Mutation;
use query::Query;
use subscription::Subscription;

pub type VerdictSchema = Schema<Query, Mutation, Subscription>;

fn builder() -> SchemaBuilder<Query, Mutation, Subscription> {
    connection::describe(Schema::build(Query, Mutation::default(), Subscription))
        .disable_suggestions()
        .with_sorted_fields()
        .with_sorted_enums()
}

/// Depth allowed to introspection-only operations: the standard introspection query
/// (GraphiQL's, codegen tools') nests about 13 levels, deeper than data queries may.
pub const INTROSPECTION_DEPTH: usize = 16;

/// Builds the schema with its limits. Building has no side effects.
pub fn schema(services: Services, introspection: bool) -> VerdictSchema {
    build(services, introspection, None)
}

/// The same schema for operations that select only `__schema`, `__type` and
/// `__typename`, whose depth limit is [`INTROSPECTION_DEPTH`]; every other limit is the
/// same. `None` when introspection is off.
pub fn introspection_schema(services: Services, introspection: bool) -> Option<VerdictSchema> {
    introspection.then(|| build(services, true, Some(INTROSPECTION_DEPTH)))
}

fn build(services: Services, introspection: bool, depth: Option<usize>) -> VerdictSchema {
    let l = &services.limits;
    let mut b = builder()
        .limit_depth(depth.unwrap_or(l.max_depth).max(l.max_depth))
        .limit_complexity(l.max_complexity)
        .limit_directives(l.max_directives);
    if !introspection {
        b = b.disable_introspection();
    }
    b.data(services).finish()
}

/// Whether every operation of `query` selects only introspection fields.
pub fn is_introspection_only(query: &str) -> bool {
    use async_graphql::parser::types::Selection;
    // Most requests are not introspection: skip the extra parse on the hot path.
    if !query.contains("__schema") && !query.contains("__type") {
        return false;
    }
    let Ok(doc) = async_graphql::parser::parse_query(query) else {
        return false;
    };
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

/// The SDL, as checked in at `schema.graphql`.
pub fn sdl() -> String {
    builder().finish().sdl()
}

/// The data one request (or websocket connection) carries: who is calling, and fresh
/// DataLoaders whose caches live as long as the request.
pub fn request_data(services: &Services, rc: Arc<RequestCtx>) -> Data {
    let mut d = Data::default();
    d.insert(rc);
    d.insert(Loaders::new(&services.db, services.limits.loader_batch()));
    d
}
