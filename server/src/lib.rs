//! Verdict: a self-hostable hackathon submission-and-judging platform.
//!
//! Where things live:
//! - [`config`]: the parsed configuration, passed explicitly.
//! - [`db`]: connecting, migrating, and opening write transactions.
//! - [`domain`]: the business rules; each mutation is a function taking the one write
//!   context, [`domain::Write`] (its transaction, actor and clock reading; the event read
//!   inside it), and organizer-only rules an [`domain::Organizer`] proof.
//! - [`demo`]: the demo events that `serve --demo` seeds (setup, not rules).
//! - [`audit`]: the hash-chained audit log (append, verify).
//! - [`calibrate`]: the calibration engine: pure, deterministic, no database.
//! - [`planner`]: the judge-assignment planner behind `autoAssign`: pure like `calibrate`.
//! - [`crypto`]: hashing, canonical JSON, tokens, passwords.
//! - [`graphql`]: the schema, its policies, limits, loaders and resolvers.
//! - [`http`]: the axum router that serves it all; authentication happens there.
//! - [`mail`]: the worker that delivers the outbox over SMTP.
//! - [`webhooks`]: the SSRF gate, delivery signatures, and the worker that sends deliveries.
//! - [`memo`]: a bounded map of immutable values shared by every request.
//! - [`backup`]: `verdict backup` and `verdict restore` (SQLite copies, pg_dump archives).
//! - [`metrics`]: what `GET /metrics` reports, and the process's recorder.
//! - [`bundle`]: result bundles: export, and offline verification.
//! - [`error`]: the one domain error type; `graphql::error` maps it to `extensions.code`.
//! - [`web`]: the playground and web client assets compiled into the binary.
//!
//! The layers call downwards only (`http` → `graphql` → `domain` → `audit` → `crypto`);
//! `calibrate` and `planner` are pure and depend on nothing above them.

pub mod audit;
pub mod backup;
pub mod bundle;
pub mod calibrate;
pub mod config;
pub mod crypto;
pub mod db;
pub mod demo;
pub mod domain;
pub mod error;
pub mod event_bundle;
pub mod graphql;
pub mod http;
pub mod mail;
pub mod memo;
pub mod metrics;
pub mod planner;
pub mod web;
pub mod webhooks;

#[cfg(test)]
mod fuzz;
