//! The schema's registries, kept beside [`super::schema`], where it is assembled: the lists
//! that name the files defining fields and types (each file's `POLICIES`, the connection
//! types to describe). The files below them (`policy`, `connection`, `context`) name none
//! of the files above them; a new file of fields is listed here.

use std::sync::LazyLock;

use async_graphql::SchemaBuilder;

use super::connection::Page;
use super::policy::{Rule, Rules};

/// The declared rules, by `Type.field`: each file declares the rules of the fields it
/// defines, next to their resolvers. Connection, edge and page-info types are structural:
/// they expose only what the field that returned them already authorized.
const DECLARED: &[&[(&str, Rule)]] = &[
    super::query::POLICIES,
    super::subscription::POLICIES,
    super::mutation::account::POLICIES,
    super::mutation::event::POLICIES,
    super::mutation::project::POLICIES,
    super::mutation::judging::POLICIES,
    super::mutation::results::POLICIES,
    super::mutation::export::POLICIES,
    super::object::user::POLICIES,
    super::object::event::POLICIES,
    super::object::project::POLICIES,
    super::object::audit::POLICIES,
    super::object::judging::POLICIES,
    super::object::results::POLICIES,
    super::object::calibration::POLICIES,
    super::object::people::POLICIES,
    super::mutation::people::POLICIES,
    super::mutation::moderation::POLICIES,
    super::mutation::expo::POLICIES,
    super::object::expo::POLICIES,
    super::mutation::tracks::POLICIES,
    super::mutation::prize::POLICIES,
    super::object::prize::POLICIES,
    super::mutation::voting::POLICIES,
    super::object::voting::POLICIES,
    super::object::comment::POLICIES,
    super::mutation::comment::POLICIES,
    super::mutation::records::POLICIES,
    super::mutation::webhooks::POLICIES,
    super::object::webhooks::POLICIES,
    super::mutation::setup::POLICIES,
    super::object::links::POLICIES,
    super::object::checklist::POLICIES,
    super::object::my_events::POLICIES,
    super::mutation::judge_sign_in::POLICIES,
    super::object::judge_sign_in::POLICIES,
    super::mutation::pairwise::POLICIES,
    super::object::pairwise::POLICIES,
];

/// Every declared rule, by `Type.field`.
pub fn field_policies() -> impl Iterator<Item = &'static (&'static str, Rule)> {
    DECLARED.iter().flat_map(|rules| rules.iter())
}

/// The rules of [`DECLARED`], by type and field, built once per process.
pub fn rules() -> &'static Rules {
    static RULES: LazyLock<Rules> = LazyLock::new(|| Rules::new(DECLARED));
    &RULES
}

/// The declared rule of `Type.field`, if any.
pub fn rule_of(type_name: &str, field: &str) -> Option<Rule> {
    rules().get(type_name, field)
}

/// The description of a connection of `$items`.
macro_rules! page_of {
    ($items:literal) => {
        concat!(
            "A page of ",
            $items,
            ": `edges` (or `nodes`), `pageInfo` to ask for the next page with `after`, and \
             `totalCount`."
        )
    };
}

/// Describes each connection type in the SDL: async-graphql generates them without a
/// description.
pub(super) fn describe_connections<Q, M, S>(b: SchemaBuilder<Q, M, S>) -> SchemaBuilder<Q, M, S> {
    use super::object::{
        audit::AuditEvent, comment::Comment, event::Event, event::Team, judging::Assignment,
        pairwise::Comparison, people::Invitation, people::OutboxMessage, project::Project,
        results::CalibratedProject, user::Membership, webhooks::WebhookDelivery,
    };
    b.override_output_type_description::<Page<Assignment>>(page_of!("assignments"))
        .override_output_type_description::<Page<AuditEvent>>(page_of!("audit log entries"))
        .override_output_type_description::<Page<Comment>>(page_of!("comments"))
        .override_output_type_description::<Page<Comparison>>(page_of!("comparisons"))
        .override_output_type_description::<Page<Event>>(page_of!("events"))
        .override_output_type_description::<Page<Invitation>>(page_of!("invitations"))
        .override_output_type_description::<Page<Membership>>(page_of!("memberships"))
        .override_output_type_description::<Page<OutboxMessage>>(page_of!("outbox messages"))
        .override_output_type_description::<Page<Project>>(page_of!("projects"))
        .override_output_type_description::<Page<Team>>(page_of!("teams"))
        .override_output_type_description::<Page<CalibratedProject>>(page_of!("ranked projects"))
        .override_output_type_description::<Page<WebhookDelivery>>(page_of!("webhook deliveries"))
}
