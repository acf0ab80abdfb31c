//! The mutation root, merged from one object per domain. Each resolver opens one write
//! transaction, calls one domain function (which checks, writes and appends exactly one
//! audit entry), commits, and only then publishes to subscribers; [`write`] holds what they
//! share.

pub mod account;
pub mod event;
pub mod judging;
pub mod project;
pub mod results;
mod write;

use async_graphql::MergedObject;

pub use account::COOKIE;

#[derive(MergedObject, Default)]
pub struct Mutation(
    account::AccountMutation,
    event::EventMutation,
    project::ProjectMutation,
    judging::JudgingMutation,
    results::ResultsMutation,
);
