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
//! - [`html`]: HTML escaping for the pages and mail the server writes itself.
//! - [`graphql`]: the schema, its policies, limits, loaders and resolvers.
//! - [`http`]: the axum router that serves it all (authentication happens there), and
//!   `http::assets`, the playground and web client compiled into the binary.
//! - [`mail`]: the worker that delivers the outbox over SMTP.
//! - [`webhooks`]: the SSRF gate, delivery signatures, and the worker that sends deliveries.
//! - [`memo`]: a bounded map of immutable values shared by every request.
//! - [`backup`]: `verdict backup` and `verdict restore` (SQLite copies, pg_dump archives).
//! - [`metrics`]: what `GET /metrics` reports, and the process's recorder.
//! - [`bundle`]: result bundles: export, and offline verification.
//! - [`event_bundle`]: signed event bundles (`verdict event export` and `import`).
//! - [`error`]: the one domain error type; `graphql::error` maps it to `extensions.code`.
//!
//! The layers call downwards only: a module uses only modules on floors below its own
//! (`server/tests/layers.rs` holds this, with the same table). Lowest first:
//!
//! | floor | modules | why there |
//! | --- | --- | --- |
//! | 0 | `calibrate`, `config`, `error`, `html`, `memo` | nothing of the app |
//! | 1 | `crypto`, `planner` | crypto returns the error type; the planner shares the estimator's helpers |
//! | 2 | `db` | connections and transactions |
//! | 3 | `audit` | the log every write appends to |
//! | 4 | `mail`, `metrics`, `webhooks` | services beside the rules: workers, the recorder, the address gate |
//! | 5 | `domain` | the business rules |
//! | 6 | `backup`, `bundle`, `demo`, `event_bundle` | the command line's tools, built on the rules |
//! | 7 | `graphql` | the schema, its policies and resolvers |
//! | 8 | `http` | the router, the handlers, the client's assets |
//! | 9 | `fuzz` | fuzz targets, tests only |
//!
//! The binary (`main.rs` and its `cli/`, one file per group of commands) stands above them
//! all, and uses the library as `verdict::`.

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
pub mod html;
pub mod http;
pub mod mail;
pub mod memo;
pub mod metrics;
pub mod planner;
pub mod webhooks;

#[cfg(test)]
mod fuzz;
