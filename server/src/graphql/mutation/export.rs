//! Exports: a CSV file of an event's data for its organizers. Producing one is recorded in
//! the audit log (who took which data out, when), so it is a mutation: no query writes.

use async_graphql::{Context, Object};

use super::write::{begin, commit};
use crate::domain::export;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::object::event::ExportKind;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    // Checked against the event in the domain: organizers only.
    ("Mutation.exportCsv", Rule::SignedIn),
];

#[derive(Default)]
pub struct ExportMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl ExportMutation {
    /// A CSV export of the event's data, as text (organizers; FORBIDDEN for others). Cells
    /// a spreadsheet would run as formulas are neutralized; numbers stay numbers. Each
    /// export appends one audit entry; RESULTS is CONFLICT before any calibration run.
    #[graphql(complexity = "cost::export(child_complexity)")]
    async fn export_csv(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "Which file to produce.")] kind: ExportKind,
    ) -> async_graphql::Result<String> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let text = export::export(&w, w.organizer(&e).await.gql(ctx)?, kind.into())
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(text)
    }
}
