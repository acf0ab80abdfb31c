//! Event mutations: create and configure events, grant and revoke roles, register, and
//! build the event's tracks and teams; `importEvent` loads a whole fixture.

use async_graphql::{Context, ID, InputObject, Json, Object};
use chrono::{DateTime, Utc};
use entity::membership;
use sea_orm::ActiveEnum;
use serde::Serialize;
use serde_json::json;

use super::write::{begin, commit, idempotent, team_of};
use crate::domain::events::{self, EventFields};
use crate::domain::idempotency::Key;
use crate::domain::{import, teams};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::object::event::{Event, ImportReport, Team, Track};
use crate::graphql::object::people::Registration;
use crate::graphql::object::user::{Membership, Role};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Input of `createEvent`.
#[derive(InputObject, Serialize)]
pub struct CreateEventInput {
    /// URL-safe: lower-case letters, digits and dashes (1 to 64, not starting with a dash),
    /// unique across events.
    pub slug: String,
    /// The display name: one line of 1 to 200 characters.
    pub name: String,
    /// Defaults to `evt_<slug>`.
    pub external_id: Option<String>,
    /// When teams may start drafting and submitting projects.
    pub submissions_open: DateTime<Utc>,
    /// The submission deadline; after `submissionsOpen`.
    pub submissions_close: DateTime<Utc>,
    /// When judges may start saving reviews. Give both judging times or neither; without
    /// them no review can be saved.
    pub judging_open: Option<DateTime<Utc>>,
    /// When the judging window closes; after `judgingOpen`.
    pub judging_close: Option<DateTime<Utc>>,
    /// When the voting window opens. Give both voting times or neither.
    pub voting_open: Option<DateTime<Utc>>,
    /// When the voting window closes; after `votingOpen`.
    pub voting_close: Option<DateTime<Utc>>,
    /// Reviews each submitted project should get (at least 1): `autoAssign`'s default
    /// target. Defaults to 3.
    pub reviews_per_project: Option<i32>,
    /// The most members a team may have (at least 1). Defaults to 5.
    pub max_team_size: Option<i32>,
    /// Who may register as a participant. Defaults to `INVITE_ONLY`.
    pub registration: Option<Registration>,
    /// The event's IANA time zone (`Europe/Berlin`), for showing its times beside the
    /// viewer's; deadlines themselves are instants. Defaults to `UTC`.
    pub time_zone: Option<String>,
}

/// Input of `updateEvent`: every field is optional; absent fields stay as they are. The
/// windows must still open before they close, and a window time cannot be cleared.
#[derive(InputObject, Serialize)]
pub struct UpdateEventInput {
    /// A new slug, under the same rules as `createEvent`'s (CONFLICT when another event has
    /// it).
    pub slug: Option<String>,
    /// A new display name: one line of 1 to 200 characters.
    pub name: Option<String>,
    /// When teams may start drafting and submitting projects.
    pub submissions_open: Option<DateTime<Utc>>,
    /// The submission deadline.
    pub submissions_close: Option<DateTime<Utc>>,
    /// When judges may start saving reviews.
    pub judging_open: Option<DateTime<Utc>>,
    /// When the judging window closes.
    pub judging_close: Option<DateTime<Utc>>,
    /// When the voting window opens.
    pub voting_open: Option<DateTime<Utc>>,
    /// When the voting window closes.
    pub voting_close: Option<DateTime<Utc>>,
    /// Reviews each submitted project should get (at least 1).
    pub reviews_per_project: Option<i32>,
    /// The most members a team may have (at least 1); existing teams keep their members.
    pub max_team_size: Option<i32>,
    /// Let teams read the (anonymous) comments on their project once results are published.
    pub comments_to_teams: Option<bool>,
    /// Who may register as a participant.
    pub registration: Option<Registration>,
    /// The event's IANA time zone (`Europe/Berlin`).
    pub time_zone: Option<String>,
}

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.createEvent", Rule::SiteAdmin),
    ("Mutation.updateEvent", Rule::SignedIn),
    ("Mutation.deleteEvent", Rule::SignedIn),
    ("Mutation.grantRole", Rule::SignedIn),
    ("Mutation.revokeRole", Rule::SignedIn),
    ("Mutation.registerForEvent", Rule::SignedIn),
    ("Mutation.createTrack", Rule::SignedIn),
    ("Mutation.createTeam", Rule::SignedIn),
    ("Mutation.joinTeam", Rule::SignedIn),
    ("Mutation.addTeamMember", Rule::SignedIn),
    ("Mutation.leaveTeam", Rule::SignedIn),
    ("Mutation.removeTeamMember", Rule::SignedIn),
    ("Mutation.renameTeam", Rule::SignedIn),
    ("Mutation.rotateInviteCode", Rule::SignedIn),
    ("Mutation.importEvent", Rule::SiteAdmin),
];

#[derive(Default)]
pub struct EventMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl EventMutation {
    /// Creates an event (site admins); the creator becomes its first organizer. CONFLICT
    /// when another event has the slug or the external id.
    async fn create_event(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The new event's settings.")] input: CreateEventInput,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first result without writing again; the same key with \
                    another request is a CONFLICT."
        )]
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Event> {
        let actor = ctx.actor()?;
        let key = Key::new(idempotency_key, "createEvent", &json!(input)).gql(ctx)?;
        let f = EventFields {
            slug: Some(input.slug),
            name: Some(input.name),
            external_id: input.external_id,
            submissions_open: Some(input.submissions_open),
            submissions_close: Some(input.submissions_close),
            judging_open: Some(input.judging_open),
            judging_close: Some(input.judging_close),
            voting_open: Some(input.voting_open),
            voting_close: Some(input.voting_close),
            reviews_per_project: input.reviews_per_project,
            max_team_size: input.max_team_size,
            comments_to_teams: None,
            registration: input.registration.map(Into::into),
            time_zone: input.time_zone,
        };
        let e = idempotent(ctx, &actor, key, async |w| events::create_event(w, f).await).await?;
        Ok(Event::new(e))
    }

    /// Changes an event's settings (organizers).
    async fn update_event(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The settings to change; the others stay as they are.")]
        input: UpdateEventInput,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first result without writing again; the same key with \
                    another request is a CONFLICT."
        )]
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Event> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "updateEvent",
            &json!({ "event": event, "input": input }),
        )
        .gql(ctx)?;
        let f = EventFields {
            slug: input.slug,
            name: input.name,
            external_id: None,
            submissions_open: input.submissions_open,
            submissions_close: input.submissions_close,
            judging_open: input.judging_open.map(Some),
            judging_close: input.judging_close.map(Some),
            voting_open: input.voting_open.map(Some),
            voting_close: input.voting_close.map(Some),
            reviews_per_project: input.reviews_per_project,
            max_team_size: input.max_team_size,
            comments_to_teams: input.comments_to_teams,
            registration: input.registration.map(Into::into),
            time_zone: input.time_zone,
        };
        let e = idempotent(ctx, &actor, key, async |w| {
            let e = w.event(&event).await?;
            events::update_event(w, w.organizer(&e).await?, f).await
        })
        .await?;
        Ok(Event::new(e))
    }

    /// Deletes an event that has no final publication (organizers): it is archived, hidden
    /// from every query and mutation, its slug freed for a new event, its webhooks switched
    /// off and its open invitations revoked; its history stays in the audit log, which still
    /// verifies. Audited as `event.deleted`. CONFLICT once results are published as final;
    /// BAD_USER_INPUT on `confirm` unless it is the slug typed again.
    async fn delete_event(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The event's slug typed again, to confirm.")] confirm: String,
    ) -> async_graphql::Result<bool> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        events::delete_event(&w, w.organizer(&e).await.gql(ctx)?, &confirm)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(true)
    }

    /// Gives a person a role in the event (organizers). The person needs an account.
    /// CONFLICT when they already hold the role, or when a judge-to-be is on one of the
    /// event's teams.
    #[allow(clippy::too_many_arguments)]
    async fn grant_role(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The person's account email; BAD_USER_INPUT when no account has it.")]
        email: String,
        #[graphql(desc = "The role to give.")] role: Role,
        #[graphql(
            desc = "An external id for the membership (e.g. `jdg_01`), unique per role in the \
                    event: 1 to 64 letters, digits, `_`, `-` or `.`. A judge's is accepted \
                    wherever a judge is named."
        )]
        external_id: Option<String>,
        #[graphql(
            desc = "Judges only: the tracks they cover, by id or external id; all tracks when \
                    omitted or empty."
        )]
        tracks: Option<Vec<ID>>,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first result without writing again; the same key with \
                    another request is a CONFLICT."
        )]
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Membership> {
        let actor = ctx.actor()?;
        let role = membership::Role::from(role);
        let tracks: Vec<String> = tracks
            .unwrap_or_default()
            .into_iter()
            .map(|t| t.0)
            .collect();
        let key = Key::new(
            idempotency_key,
            "grantRole",
            &json!({ "event": event, "email": email, "role": role.to_value(), "externalId": external_id, "tracks": tracks }),
        )
        .gql(ctx)?;
        let m = idempotent(ctx, &actor, key, async |w| {
            let e = w.event(&event).await?;
            let org = w.organizer(&e).await?;
            events::grant_role(w, org, &email, role, external_id, tracks).await
        })
        .await?;
        Ok(Membership(m))
    }

    /// Takes a role away (organizers). The last organizer cannot be removed (CONFLICT). A
    /// judge loses their unscored assignments and recusals (CONFLICT once they have saved a
    /// review); a participant leaves their team. NOT_FOUND when the person lacks the role.
    async fn revoke_role(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The person's account email.")] email: String,
        #[graphql(desc = "The role to take away.")] role: Role,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first result without writing again; the same key with \
                    another request is a CONFLICT."
        )]
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<bool> {
        let actor = ctx.actor()?;
        let role = membership::Role::from(role);
        let key = Key::new(
            idempotency_key,
            "revokeRole",
            &json!({ "event": event, "email": email, "role": role.to_value() }),
        )
        .gql(ctx)?;
        idempotent(ctx, &actor, key, async |w| {
            let e = w.event(&event).await?;
            events::revoke_role(w, w.organizer(&e).await?, &email, role).await
        })
        .await?;
        // After the commit: close the person's open websockets (`http::ws`). Should this
        // lookup fail, their next operation or subscription message is refused anyway.
        if let Ok(Some(u)) = crate::domain::user_by_email(&ctx.db().conn, &email).await {
            let revoked = crate::graphql::bus::BusEvent::AccessRevoked {
                user_id: u.id,
                credential: None,
            };
            ctx.services().bus.publish(revoked);
        }
        Ok(true)
    }

    /// Registers the caller as a participant of the event (any signed-in user; CONFLICT when
    /// already registered).
    async fn register_for_event(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
    ) -> async_graphql::Result<Membership> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let m = events::register(&w, &e).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Membership(m))
    }

    /// Adds a track to the event (organizers).
    async fn create_track(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The track's name: one line of 1 to 200 characters.")] name: String,
        #[graphql(
            desc = "The track's external id, unique in the event (CONFLICT otherwise): 1 to 64 \
                    letters, digits, `_`, `-` or `.`; generated when omitted."
        )]
        external_id: Option<String>,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first result without writing again; the same key with \
                    another request is a CONFLICT."
        )]
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Track> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "createTrack",
            &json!({ "event": event, "name": name, "externalId": external_id }),
        )
        .gql(ctx)?;
        let t = idempotent(ctx, &actor, key, async |w| {
            let e = w.event(&event).await?;
            events::create_track(w, w.organizer(&e).await?, &name, external_id).await
        })
        .await?;
        Ok(Track(t))
    }

    /// Creates a team. A participant creates it and joins it; an organizer creates it empty;
    /// anyone else is FORBIDDEN. CONFLICT when the participant is already on a team or
    /// judges the event.
    async fn create_team(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The team's name: one line of 1 to 200 characters.")] name: String,
        #[graphql(
            desc = "The team's external id: 1 to 64 letters, digits, `_`, `-` or `.`; \
                    generated when omitted."
        )]
        external_id: Option<String>,
    ) -> async_graphql::Result<Team> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let t = teams::create_team(&w, &e, &name, external_id)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Team(t))
    }

    /// Joins the team whose invite code this is (registered participants; one team per
    /// event; a full team refuses with CONFLICT).
    async fn join_team(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The team's invite code (`Team.inviteCode`, shown to its members).")]
        invite_code: String,
    ) -> async_graphql::Result<Team> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let t = teams::join_team(&w, &invite_code).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Team(t))
    }

    /// Leaves the caller's team (its member, while submissions are open). The last member
    /// of a team with a submitted project cannot leave (CONFLICT): withdraw it first.
    async fn leave_team(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The team, by id or external id.")] team: ID,
    ) -> async_graphql::Result<Team> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let t = team_of(w.txn(), &team).await.gql(ctx)?;
        let t = teams::leave_team(&w, &t).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Team(t))
    }

    /// Takes a person off a team (the event's organizers, at any time, with a reason that is
    /// audited). The last member of a team with a submitted project stays (CONFLICT).
    async fn remove_team_member(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The team, by id or external id.")] team: ID,
        #[graphql(desc = "The member's email.")] email: String,
        #[graphql(desc = "Why: 1 to 500 characters.")] reason: String,
    ) -> async_graphql::Result<Team> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let t = team_of(w.txn(), &team).await.gql(ctx)?;
        let t = teams::remove_member(&w, &t, &email, &reason)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Team(t))
    }

    /// Renames a team: its members while submissions are open; the event's organizers at
    /// any time, giving a reason.
    async fn rename_team(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The team, by id or external id.")] team: ID,
        #[graphql(desc = "The new name: one line of 1 to 200 characters.")] name: String,
        #[graphql(desc = "Why (organizers only, who must give one): 1 to 500 characters.")]
        reason: Option<String>,
    ) -> async_graphql::Result<Team> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let t = team_of(w.txn(), &team).await.gql(ctx)?;
        let t = teams::rename_team(&w, &t, &name, reason.as_deref())
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Team(t))
    }

    /// Replaces a team's invite code (its members while submissions are open; the event's
    /// organizers at any time): the old code stops working, the new one works for 72 hours
    /// or until the submission deadline.
    async fn rotate_invite_code(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The team, by id or external id.")] team: ID,
    ) -> async_graphql::Result<Team> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let t = team_of(w.txn(), &team).await.gql(ctx)?;
        let t = teams::rotate_invite_code(&w, &t).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Team(t))
    }

    /// Puts a person on a team (organizers), registering them as a participant if needed.
    /// CONFLICT when the team is full, or the person is on another team or judges the event.
    async fn add_team_member(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The team's id or external id.")] team: ID,
        #[graphql(desc = "The person's account email; BAD_USER_INPUT when no account has it.")]
        email: String,
    ) -> async_graphql::Result<Team> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let t = team_of(w.txn(), &team).await.gql(ctx)?;
        let t = teams::add_team_member(&w, &t, &email).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Team(t))
    }

    /// Imports an event fixture (`verdict.event.v1`) in one transaction (site admins).
    /// Idempotent by external id: existing rows are never overwritten, so importing the same
    /// file again inserts nothing. A bad row refuses the whole file (BAD_USER_INPUT naming
    /// the row).
    async fn import_event(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The fixture document, as JSON (`format: \"verdict.event.v1\"`).")]
        fixture: Json<serde_json::Value>,
    ) -> async_graphql::Result<ImportReport> {
        // Signed in, or UNAUTHENTICATED before the write begins; the write's actor is them.
        ctx.actor()?;
        let f = import::parse(fixture.0).gql(ctx)?;
        let w = begin(ctx).await?;
        let (event, counts) = import::import(&w, &f).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(ImportReport { event, counts })
    }
}
