//! The in-person expo: organizers place projects at tables and bring projects, teams and
//! their members in from a Devpost export.

use async_graphql::{Context, ID, Object};

use super::write::{begin, commit};
use crate::domain::{devpost, invitation_links, tables};
use crate::graphql::bus::BusEvent;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::object::expo::{DevpostImport, InvitationLink};
use crate::graphql::object::project::Project;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
/// The domain checks that the caller organizes the project's event.
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.setProjectTable", Rule::SignedIn),
    ("Mutation.importDevpost", Rule::SignedIn),
    ("Mutation.exportInvitationLinks", Rule::SignedIn),
];

#[derive(Default)]
pub struct ExpoMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl ExpoMutation {
    /// Sets or clears the expo table of a project (the event's organizers, at any time,
    /// also after the deadline). BAD_USER_INPUT on `table` when it is longer than 16
    /// characters or not one line; CONFLICT when another project of the event has that
    /// table (named in the message) or the project is at it already.
    async fn set_project_table(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or external id.")] project: ID,
        #[graphql(desc = "The table, for example \"12\" or \"A-07\"; null or empty clears it.")]
        table: Option<String>,
    ) -> async_graphql::Result<Project> {
        let txn = begin(ctx).await?;
        let p = tables::set_table(&txn, &project, table.as_deref())
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        // Judges' queues are ordered by table.
        ctx.services().bus.publish(BusEvent::JudgingChanged {
            event_id: p.event_id,
        });
        Ok(Project(p))
    }

    /// Imports projects, teams and team members from a Devpost submissions export (CSV, as
    /// Devpost writes it; see the server's `domain/devpost.rs` for the columns read) into
    /// the event (its organizers). Each new submission becomes a project in the event's
    /// first track, with a team of its members as participants (accounts without a
    /// password: `inviteImported` sends their links) and its table when the file has a
    /// "Table Number" column. Idempotent by submission URL: a project imported before is
    /// left as it is. Rows that cannot be imported are left out and listed in `problems`
    /// by line. One transaction, one `event.imported` audit entry; with `dryRun`, nothing is
    /// written and the answer previews the import. BAD_USER_INPUT on `csv` when the file is
    /// not a Devpost export.
    async fn import_devpost(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The CSV text of the export (a leading byte-order mark is fine).")]
        csv: String,
        #[graphql(desc = "Preview only: answer what would be imported and write nothing.")]
        dry_run: Option<bool>,
    ) -> async_graphql::Result<DevpostImport> {
        ctx.actor()?;
        let dry_run = dry_run.unwrap_or(false);
        let txn = begin(ctx).await?;
        let e = txn.event(&event).await.gql(ctx)?;
        let org = txn.organizer(&e).await.gql(ctx)?;
        let report = devpost::import_devpost(&txn, org, &e, &csv)
            .await
            .gql(ctx)?;
        if dry_run {
            txn.rollback().await;
        } else {
            commit(ctx, txn).await?;
        }
        Ok(DevpostImport {
            event_id: e.id,
            dry_run,
            report,
        })
    }

    /// Every pending invitation of the event with its link (the event's organizers), oldest
    /// first: for a CSV to mail-merge or a printed page of QR codes when the server sends no
    /// mail. Each link redeems its invitation, so handing them all out is audited
    /// (`invitations.links_exported`), which is why this is a mutation.
    async fn export_invitation_links(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
    ) -> async_graphql::Result<Vec<InvitationLink>> {
        ctx.actor()?;
        let txn = begin(ctx).await?;
        let e = txn.event(&event).await.gql(ctx)?;
        let org = txn.organizer(&e).await.gql(ctx)?;
        let links = invitation_links::export_links(&txn, org, &e)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(links.into_iter().map(|l| InvitationLink(e.id, l)).collect())
    }
}
