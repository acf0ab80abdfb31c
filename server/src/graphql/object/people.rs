//! People: who may register for an event, invitations, and the messages in an event's
//! outbox.

use async_graphql::{Context, Enum, ID, Object};
use chrono::{DateTime, Utc};
use entity::{event, invitation, membership, outbox_message};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::event::Team;
use super::user::{Membership, Role};
use crate::graphql::connection::{Page, page};
use crate::graphql::context::CtxExt;
use crate::graphql::cost;
use crate::graphql::loaders::{LoadersExt, TeamId, maybe};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    // An event's invitations are its organizers'; a team's are also its members'.
    ("Invitation.id", Rule::OwnTeam),
    ("Invitation.email", Rule::OwnTeam),
    ("Invitation.role", Rule::OwnTeam),
    ("Invitation.createdAt", Rule::OwnTeam),
    ("Invitation.expiresAt", Rule::OwnTeam),
    ("Invitation.redeemedAt", Rule::OwnTeam),
    ("Invitation.status", Rule::OwnTeam),
    ("Invitation.team", Rule::OwnTeam),
    ("CreatedTeamInvitation.invitation", Rule::OwnTeam),
    ("CreatedTeamInvitation.link", Rule::OwnTeam),
    ("OutboxMessage.id", Rule::Organizer),
    ("OutboxMessage.to", Rule::Organizer),
    ("OutboxMessage.subject", Rule::Organizer),
    ("OutboxMessage.body", Rule::Organizer),
    ("OutboxMessage.status", Rule::Organizer),
    ("OutboxMessage.attempts", Rule::Organizer),
    ("OutboxMessage.lastError", Rule::Organizer),
    ("OutboxMessage.createdAt", Rule::Organizer),
    ("OutboxMessage.sentAt", Rule::Organizer),
    ("OutboxMessage.serverSendsMail", Rule::Organizer),
    ("Event.members", Rule::Organizer),
    ("Event.registration", Rule::Public),
    ("Event.invitations", Rule::Organizer),
    ("Event.outbox", Rule::Organizer),
];

/// Who takes part: members, who may register, invitations and their messages: a part of [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventPeople(pub(super) super::event::EventRow);

/// Who takes part: members, who may register, invitations and their messages: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventPeople {
    /// Everyone holding a role here (organizers only).
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn members(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Only members with this role; all when omitted.")] role: Option<Role>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<Membership>> {
        let mut q = membership::Entity::find().filter(membership::Column::EventId.eq(self.0.id));
        if let Some(r) = role {
            q = q.filter(membership::Column::Role.eq(membership::Role::from(r)));
        }
        page(
            ctx,
            q,
            membership::Column::Id,
            |m| m.id,
            first,
            after,
            Membership,
        )
        .await
    }
    /// Who may register as a participant with `registerForEvent`.
    async fn registration(&self) -> Registration {
        self.0.registration.into()
    }
    /// The event's invitations, oldest first (organizers).
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn invitations(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<Invitation>> {
        let q = invitation::Entity::find().filter(invitation::Column::EventId.eq(self.0.id));
        page(
            ctx,
            q,
            invitation::Column::Id,
            |i| i.id,
            first,
            after,
            Invitation,
        )
        .await
    }
    /// The messages of this event's invitations, oldest first (organizers): without a mail
    /// server, copy each link from its body. Messages that carry someone's own secret
    /// (password resets) are never here.
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn outbox(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<OutboxMessage>> {
        let q = outbox_message::Entity::find()
            .filter(outbox_message::Column::EventId.eq(self.0.id))
            .filter(outbox_message::Column::Kind.eq(outbox_message::Kind::Invitation));
        page(
            ctx,
            q,
            outbox_message::Column::Id,
            |m| m.id,
            first,
            after,
            OutboxMessage,
        )
        .await
    }
}

/// Who may register for an event as a participant with `registerForEvent`.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[graphql(remote = "event::Registration")]
pub enum Registration {
    /// Anyone signed in may register.
    Open,
    /// Only invited people join, through their invitation (the default for new events).
    InviteOnly,
    /// Nobody registers; invitations still work.
    Closed,
}

/// A single-use link for one person to take one role in one event (organizers read them).
/// The link itself is in the invitation's message (`Event.outbox`), never here.
pub struct Invitation(pub invitation::Model);

/// A single-use link for one person to take one role in one event (organizers read them).
/// The link itself is in the invitation's message (`Event.outbox`), never here.
#[Object(
    guard = "FieldGuard::new(\"Invitation\", Scope { event: Some(self.0.event_id), team: self.0.team_id, ..Scope::none() })"
)]
impl Invitation {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The address the invitation was sent to; redeeming it gives this account the role.
    async fn email(&self) -> &str {
        &self.0.email
    }
    /// The role redeeming it gives.
    async fn role(&self) -> Role {
        self.0.role.into()
    }
    /// When the current link was made (a resend makes a new one).
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// When the link stops working.
    async fn expires_at(&self) -> DateTime<Utc> {
        self.0.expires_at
    }
    /// When it was redeemed; null until then.
    async fn redeemed_at(&self) -> Option<DateTime<Utc>> {
        self.0.redeemed_at
    }
    /// `pending`, `redeemed`, `expired` or `revoked`.
    async fn status(&self) -> &'static str {
        self.0.status(Utc::now()).as_str()
    }
    /// For a team's invitation (`inviteToTeam`): the team it joins; null for an event's.
    async fn team(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Team>> {
        let Some(id) = self.0.team_id else {
            return Ok(None);
        };
        Ok(maybe(ctx, ctx.loaders().teams(), TeamId(id))
            .await?
            .map(Team))
    }
}

/// A team's invitation with its link, returned once to the member who made it (to pass
/// on; it is also mailed when a mail server is configured).
pub struct CreatedTeamInvitation {
    pub invitation: invitation::Model,
    pub link: String,
}

/// A team's invitation with its link, returned once to the member who made it (to pass
/// on; it is also mailed when a mail server is configured).
#[Object(
    guard = "FieldGuard::new(\"CreatedTeamInvitation\", Scope { event: Some(self.invitation.event_id), team: self.invitation.team_id, ..Scope::none() })"
)]
impl CreatedTeamInvitation {
    /// The invitation.
    async fn invitation(&self) -> Invitation {
        Invitation(self.invitation.clone())
    }
    /// `{public-url}/invite/{token}`: works once, for 72 hours or until the deadline.
    async fn link(&self) -> &str {
        &self.link
    }
}

/// A message Verdict sends, as its event's organizers read it: their event's invitations
/// (copy the link from `body` when no mail server is configured). Messages carrying
/// someone else's secret (password resets) are never readable through the API.
pub struct OutboxMessage(pub outbox_message::Model);

/// A message Verdict sends, as its event's organizers read it: their event's invitations.
/// Messages carrying someone else's secret (password resets) are never readable here.
#[Object(
    guard = "FieldGuard::new(\"OutboxMessage\", Scope { event: self.0.event_id, ..Scope::none() })"
)]
impl OutboxMessage {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The recipient's address.
    async fn to(&self) -> &str {
        &self.0.to_email
    }
    /// The subject line.
    async fn subject(&self) -> &str {
        &self.0.subject
    }
    /// The plain-text body, with the link.
    async fn body(&self) -> &str {
        &self.0.body_text
    }
    /// Whether this server sends mail at all (it was started with `--smtp-url`). When false,
    /// a `pending` message is never sent: hand its link out yourself (the Invitation links
    /// page, `exportCsv(kind: INVITATION_LINKS)`, or the link in `body`).
    async fn server_sends_mail(&self, ctx: &Context<'_>) -> bool {
        ctx.services().mail.delivers()
    }
    /// `pending`, `sent`, `failed` (after the last attempt) or `cancelled` (its invitation
    /// was revoked or renewed).
    async fn status(&self) -> &'static str {
        match self.0.status {
            outbox_message::Status::Pending => "pending",
            outbox_message::Status::Sent => "sent",
            outbox_message::Status::Failed => "failed",
            outbox_message::Status::Cancelled => "cancelled",
        }
    }
    /// How often delivery was tried.
    async fn attempts(&self) -> i32 {
        self.0.attempts
    }
    /// Why the last attempt failed, if it did.
    async fn last_error(&self) -> Option<&str> {
        self.0.last_error.as_deref()
    }
    /// When the message was written.
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// When the mail server accepted it; null until then.
    async fn sent_at(&self) -> Option<DateTime<Utc>> {
        self.0.sent_at
    }
}
