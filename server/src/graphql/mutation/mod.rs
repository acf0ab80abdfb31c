//! The mutation root, merged from one object per domain. Each resolver opens one write
//! transaction, calls one domain function (which checks, writes and appends exactly one
//! audit entry), commits, and only then publishes to subscribers; [`write`] holds what they
//! share.

pub mod account;
pub mod comment;
pub mod event;
pub mod expo;
pub mod export;
pub mod judge_sign_in;
pub mod judging;
pub mod moderation;
pub mod pairwise;
pub mod people;
pub mod prize;
pub mod project;
pub mod records;
pub mod results;
pub mod setup;
pub mod tracks;
pub mod voting;
pub mod webhooks;
mod write;

use async_graphql::MergedObject;

pub use account::COOKIE;

/// Every write. Each change commits in one transaction with its audit entry, and
/// subscribers hear of it only after the commit. Errors carry `extensions.code`
/// (UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, BAD_USER_INPUT with `extensions.field`, CONFLICT,
/// WINDOW_CLOSED, RATE_LIMITED, and UNAVAILABLE with `extensions.retryAfter` when the
/// database cannot serve or write right now). Mutations that take an `idempotencyKey` may
/// be retried safely with it.
#[derive(MergedObject, Default)]
pub struct Mutation(
    account::AccountMutation,
    event::EventMutation,
    project::ProjectMutation,
    judging::JudgingMutation,
    results::ResultsMutation,
    export::ExportMutation,
    people::PeopleMutation,
    moderation::ModerationMutation,
    prize::PrizeMutation,
    voting::VotingMutation,
    comment::CommentMutation,
    records::RecordsMutation,
    webhooks::WebhookMutation,
    setup::SetupMutation,
    expo::ExpoMutation,
    tracks::TrackMutation,
    judge_sign_in::JudgeSignInMutation,
    pairwise::PairwiseMutation,
);
