//! Verdict's sea-orm entities: one file per table, plain data. Business rules live in the
//! server's `domain` module; constraints live in the migrations.
//!
//! The states a row can be in (project status, assignment status and source, membership
//! role) are typed enums stored as TEXT with the values the migrations' CHECKs list. The
//! visibility rules that are queries (the public projects of an event, its judges and
//! organizers) are finders on the entity, so each is written once.

pub mod api_token;
pub mod assignment;
pub mod audit_event;
pub mod audit_head;
pub mod audit_pending;
pub mod calibration_job;
pub mod calibration_run;
pub mod comment;
pub mod comparison;
pub mod comparison_skip;
pub mod criterion;
pub mod email_confirmation;
pub mod event;
pub mod idempotency_key;
pub mod invitation;
pub mod judge_sign_in;
pub mod login_throttle;
pub mod membership;
pub mod outbox_message;
pub mod password_reset;
pub mod prize;
pub mod project;
pub mod recusal;
pub mod result_publication;
pub mod review;
pub mod review_revision;
pub mod session;
pub mod setup_link;
pub mod team;
pub mod team_member;
pub mod track;
pub mod user;
pub mod vote;
pub mod vote_allowlist;
pub mod vote_campaign;
pub mod voter;
pub mod webhook;
pub mod webhook_attempt;
pub mod webhook_delivery;

#[cfg(test)]
mod tests {
    use sea_orm::ActiveEnum;

    use super::{
        api_token, assignment, event, membership, outbox_message, project, vote_campaign,
        webhook_delivery,
    };

    /// `'a', 'b', 'c'`: the values of `E` as a CHECK constraint lists them, in order.
    fn check_list<E: ActiveEnum<Value = String>>() -> String {
        E::iter()
            .map(|v| format!("'{}'", v.to_value()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every value an enum writes is one the database accepts.
    #[test]
    fn stored_values_are_those_the_migrations_allow() {
        let core = include_str!("../../migration/src/m20261130_000001_core.rs");
        let judging = include_str!("../../migration/src/m20261130_000002_judging.rs");
        let people = include_str!("../../migration/src/m20261201_000001_people.rs");
        let voting = include_str!("../../migration/src/m20261202_000001_voting.rs");
        let webhooks = include_str!("../../migration/src/m20261202_000003_webhooks.rs");
        let pairwise = include_str!("../../migration/src/m20261205_000101_pairwise.rs");
        for (sql, check) in [
            (
                core,
                format!("role IN ({})", check_list::<membership::Role>()),
            ),
            (
                core,
                format!("status IN ({})", check_list::<project::ProjectStatus>()),
            ),
            (
                judging,
                format!(
                    "status IN ({})",
                    check_list::<assignment::AssignmentStatus>()
                ),
            ),
            (
                judging,
                format!(
                    "source IN ({})",
                    check_list::<assignment::AssignmentSource>()
                ),
            ),
            (
                people,
                format!("registration IN ({})", check_list::<event::Registration>()),
            ),
            (
                people,
                format!("kind IN ({})", check_list::<outbox_message::Kind>()),
            ),
            (
                people,
                format!("scope IN ({})", check_list::<api_token::TokenScope>()),
            ),
            (
                people,
                format!("status IN ({})", check_list::<outbox_message::Status>()),
            ),
            (
                pairwise,
                format!("judging_mode IN ({})", check_list::<event::JudgingMode>()),
            ),
            (
                voting,
                format!("mode IN ({})", check_list::<vote_campaign::VotingMode>()),
            ),
            (
                webhooks,
                format!(
                    "status IN ({})",
                    check_list::<webhook_delivery::DeliveryStatus>()
                ),
            ),
        ] {
            assert!(sql.contains(&check), "no migration says {check}");
        }
    }
}
