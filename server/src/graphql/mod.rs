//! The GraphQL API: one side-effect-free [`schema`] builder shared by the server, the SDL
//! export and the tests.

use std::sync::Arc;

use async_graphql::{Data, Schema, SchemaBuilder};

pub mod bus;
pub mod connection;
pub mod context;
pub mod cost;
pub mod error;
pub mod extensions;
pub mod feed;
pub mod jobs;
pub mod loaders;
pub mod mutation;
pub mod object;
pub mod policy;
pub mod query;
pub mod registry;
pub mod relay;
pub mod subscription;

pub use context::{RequestCtx, Services};
use extensions::Edge;
use loaders::Loaders;
use mutation::Mutation;
use query::Query;
use subscription::Subscription;

pub type VerdictSchema = Schema<Query, Mutation, Subscription>;

fn builder() -> SchemaBuilder<Query, Mutation, Subscription> {
    registry::describe_connections(Schema::build(Query, Mutation::default(), Subscription))
        .disable_suggestions()
        .with_sorted_fields()
        .with_sorted_enums()
}

/// Builds the schema with its limits (see [`extensions`]). Building has no side effects.
pub fn schema(services: Services, introspection: bool) -> VerdictSchema {
    let l = &services.limits;
    // One extension runs every check of an operation (see `extensions::edge`).
    let mut b = builder()
        .extension(Edge::new(l, introspection))
        .limit_recursive_depth(extensions::MAX_NESTING);
    if !introspection {
        b = b.disable_introspection();
    }
    // Every field's guard reads its rule from the schema's data (`policy::Rules`).
    b.data(services).data(registry::rules()).finish()
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
