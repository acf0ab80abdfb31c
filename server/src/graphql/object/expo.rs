//! The in-person expo and bulk imports: what a Devpost import did or, as a preview, would do.

use async_graphql::{Json, Object};

use super::event::Event;
use super::user::Role;
use crate::domain::devpost::{Outcome, Problem, Report};
use crate::domain::invitation_links::{self, InvitationLink as Link};
use crate::graphql::loaders::{EventId, LoadersExt, one};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("DevpostImport.event", Rule::Organizer),
    ("DevpostImport.dryRun", Rule::Organizer),
    ("DevpostImport.projects", Rule::Organizer),
    ("DevpostImport.teams", Rule::Organizer),
    ("DevpostImport.people", Rule::Organizer),
    ("DevpostImport.counts", Rule::Organizer),
    ("DevpostImport.rows", Rule::Organizer),
    ("DevpostImport.problems", Rule::Organizer),
    ("DevpostRow.line", Rule::Organizer),
    ("DevpostRow.title", Rule::Organizer),
    ("DevpostRow.table", Rule::Organizer),
    ("DevpostRow.members", Rule::Organizer),
    ("DevpostRow.new", Rule::Organizer),
    ("DevpostProblem.line", Rule::Organizer),
    ("DevpostProblem.message", Rule::Organizer),
    ("InvitationLink.email", Rule::Organizer),
    ("InvitationLink.role", Rule::Organizer),
    ("InvitationLink.link", Rule::Organizer),
    ("InvitationLink.expiresAt", Rule::Organizer),
    ("InvitationLink.qrSvg", Rule::Organizer),
];

/// What a Devpost import wrote, or with `dryRun` would write.
pub struct DevpostImport {
    pub event_id: i64,
    pub dry_run: bool,
    pub report: Report,
}

/// What a Devpost import wrote, or with `dryRun` would write.
#[Object(guard = "FieldGuard::new(\"DevpostImport\", Scope::event(self.event_id))")]
impl DevpostImport {
    /// The event imported into.
    async fn event(&self, ctx: &async_graphql::Context<'_>) -> async_graphql::Result<Event> {
        one(ctx, ctx.loaders().events(), EventId(self.event_id), "event")
            .await
            .map(Event::new)
    }
    /// True for a preview: nothing was written.
    async fn dry_run(&self) -> bool {
        self.dry_run
    }
    /// Projects created (or, in a preview, to create).
    async fn projects(&self) -> i32 {
        self.report.counts.projects
    }
    /// Teams created, one per new project.
    async fn teams(&self) -> i32 {
        self.report.counts.teams
    }
    /// Accounts created for team members Verdict did not know (without a password:
    /// `inviteImported` sends them their links).
    async fn people(&self) -> i32 {
        self.report.counts.people
    }
    /// Rows created, by kind (as `importEvent` counts them).
    async fn counts(&self) -> Json<serde_json::Value> {
        Json(serde_json::to_value(&self.report.counts).unwrap_or_default())
    }
    /// The rows read, in file order: new ones and ones imported before.
    async fn rows(&self) -> Vec<DevpostRow> {
        self.report
            .rows
            .iter()
            .cloned()
            .map(|o| DevpostRow(self.event_id, o))
            .collect()
    }
    /// The rows left out, each named by its line in the file, with why.
    async fn problems(&self) -> Vec<DevpostProblem> {
        self.report
            .problems
            .iter()
            .cloned()
            .map(|p| DevpostProblem(self.event_id, p))
            .collect()
    }
}

/// A submission read from a Devpost export.
pub struct DevpostRow(i64, Outcome);

/// A submission read from a Devpost export.
#[Object(guard = "FieldGuard::new(\"DevpostRow\", Scope::event(self.0))")]
impl DevpostRow {
    /// Its line in the file (the header is line 1).
    async fn line(&self) -> i64 {
        self.1.line as i64
    }
    /// The project's title.
    async fn title(&self) -> &str {
        &self.1.title
    }
    /// Its expo table; null when the file gives none.
    async fn table(&self) -> Option<&str> {
        self.1.table.as_deref()
    }
    /// Its team members' email addresses.
    async fn members(&self) -> &[String] {
        &self.1.members
    }
    /// False when the project was imported before: it is left as it is.
    async fn new(&self) -> bool {
        self.1.new
    }
}

/// A row of a Devpost export left out, and why.
pub struct DevpostProblem(i64, Problem);

/// A row of a Devpost export left out, and why.
#[Object(guard = "FieldGuard::new(\"DevpostProblem\", Scope::event(self.0))")]
impl DevpostProblem {
    /// Its line in the file (the header is line 1).
    async fn line(&self) -> i64 {
        self.1.line as i64
    }
    /// What is wrong, naming the column and the value at fault.
    async fn message(&self) -> &str {
        &self.1.message
    }
}

/// A pending invitation and the link that redeems it.
pub struct InvitationLink(pub i64, pub Link);

/// A pending invitation and the link that redeems it.
#[Object(guard = "FieldGuard::new(\"InvitationLink\", Scope::event(self.0))")]
impl InvitationLink {
    /// The address invited.
    async fn email(&self) -> &str {
        &self.1.email
    }
    /// The role the invitation grants.
    async fn role(&self) -> Role {
        self.1.role.into()
    }
    /// The link (`{public-url}/invite/{token}`): whoever opens it can redeem the invitation.
    async fn link(&self) -> &str {
        &self.1.link
    }
    /// When the link stops working.
    async fn expires_at(&self) -> chrono::DateTime<chrono::Utc> {
        self.1.expires_at
    }
    /// The link as a QR code: an SVG document to print, rendered by the server (no network).
    async fn qr_svg(&self) -> Option<String> {
        invitation_links::qr_svg(&self.1.link)
    }
}
