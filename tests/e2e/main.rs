//! End-to-end tests: the real `verdict` binary on port 0 against a fresh database, over
//! HTTP and websocket. Every test runs twice, `name::sqlite` and `name::postgres`
//! (PostgreSQL from `VERDICT_TEST_PG_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`;
//! skipped when unreachable unless `CI=true`). The exceptions bring their own database and
//! run on one backend: the PostgreSQL-only tests of `e2e_postgres!`, and `database_faults`
//! (a PostgreSQL cluster of its own to stop and start; SQLite on volumes of its own to fill
//! up and turn read-only, which needs root).

#[macro_use]
mod harness;

mod attacks;
mod audit;
mod auth;
mod authz;
mod backup;
mod browser;
mod bundles;
mod comments;
mod database_faults;
mod demo;
mod deployment;
mod devpost;
mod edge;
mod embed;
mod erasure;
mod event_bundles;
mod exports;
mod faults;
mod import;
mod input;
mod invitations;
mod jobs;
mod judge_sign_in;
mod judging;
mod limits;
mod links;
mod metrics;
mod moderation;
mod my_events;
mod pairwise;
mod prizes;
mod processes;
mod proofs;
mod records;
mod recovery;
mod results;
mod roles;
mod scripting;
mod setup;
mod slow_clients;
mod startup;
mod subscription;
mod tables;
mod teams;
mod throttle;
mod tracks;
mod voting;
mod webhooks;
mod websocket;
mod windows;
