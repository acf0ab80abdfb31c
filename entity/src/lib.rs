//! Verdict's sea-orm entities: one file per table, plain data. Business rules live in the
//! server's `domain` module; constraints live in the migrations.

pub mod api_token;
pub mod audit_event;
pub mod audit_head;
pub mod event;
pub mod idempotency_key;
pub mod login_throttle;
pub mod membership;
pub mod project;
pub mod session;
pub mod team;
pub mod team_member;
pub mod track;
pub mod user;
