//! The output types, one file per domain. Each type wraps a database row (or a computed
//! value) with the [`Scope`](super::policy::Scope) its guard checks; none derives a GraphQL
//! type on a database model. Each file declares, in its `POLICIES`, who may read every
//! field of its types; [`super::policy`] collects them.

pub mod audit;
pub mod calibration;
pub mod checklist;
pub mod comment;
pub mod event;
pub mod expo;
pub mod judge_sign_in;
pub mod judging;
pub mod links;
pub mod my_events;
pub mod pairwise;
pub mod people;
pub mod prize;
pub mod project;
pub mod results;
pub mod user;
pub mod voting;
pub mod webhooks;
