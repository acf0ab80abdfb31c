//! Verdict's sea-orm entities: one file per table, plain data. Business rules live in the
//! server's `domain` module; constraints live in the migrations.

pub mod api_token;
pub mod assignment;
pub mod audit_event;
pub mod audit_head;
pub mod calibration_run;
pub mod criterion;
pub mod event;
pub mod idempotency_key;
pub mod login_throttle;
pub mod membership;
pub mod project;
pub mod recusal;
pub mod result_publication;
pub mod review;
pub mod review_revision;
pub mod session;
pub mod team;
pub mod team_member;
pub mod track;
pub mod user;
