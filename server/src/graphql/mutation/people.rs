//! People mutations: invitations (invite, invite the imported, redeem, revoke, resend) and
//! password reset.

use async_graphql::{Context, ID, Object};

use super::account::session_cookie;
use super::write::{begin, commit, team_of};
use crate::domain::{accounts, invitations, recovery};
use crate::graphql::bus::BusEvent;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::object::people::{CreatedTeamInvitation, Invitation};
use crate::graphql::object::user::{Role, Session};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    // The domain checks that the caller organizes the event.
    ("Mutation.inviteToEvent", Rule::SignedIn),
    ("Mutation.inviteImported", Rule::SignedIn),
    ("Mutation.revokeInvitation", Rule::SignedIn),
    ("Mutation.resendInvitation", Rule::SignedIn),
    // The domain checks that the caller is on the team or organizes its event.
    ("Mutation.inviteToTeam", Rule::SignedIn),
    // The link is the credential.
    ("Mutation.redeemInvitation", Rule::Public),
    ("Mutation.requestPasswordReset", Rule::Public),
    ("Mutation.resetPassword", Rule::Public),
];

#[derive(Default)]
pub struct PeopleMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl PeopleMutation {
    /// Invites people by email to a role in an event (organizers). Each gets a single-use
    /// link, valid 14 days, in a message in the outbox (sent when a mail server is
    /// configured; otherwise organizers copy it from `Event.outbox`). Inviting someone
    /// whose invitation is still open renews it (the old link stops working); people who
    /// already hold the role and can sign in are left out of the answer.
    async fn invite_to_event(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The addresses to invite (1 to 500).")] emails: Vec<String>,
        #[graphql(desc = "The role redeeming the link gives.")] role: Role,
    ) -> async_graphql::Result<Vec<Invitation>> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let made = invitations::invite(
            &w,
            w.organizer(&e).await.gql(ctx)?,
            &emails,
            role.into(),
            &ctx.services().links,
        )
        .await
        .gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().mail.wake();
        Ok(made.into_iter().map(Invitation).collect())
    }

    /// Invites everyone the event's import brought in who cannot sign in yet (no password),
    /// each to the roles they hold (organizers); people whose link is still pending are
    /// skipped. Returns how many invitations were made.
    async fn invite_imported(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
    ) -> async_graphql::Result<i32> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        // The write has the caller as its actor: they must organize the event.
        let made = invitations::invite_imported(&w, &e, &ctx.services().links)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().mail.wake();
        Ok(made.len() as i32)
    }

    /// Accepts an invitation (anyone holding the link) and signs in, setting the session
    /// cookie. A new account is created with `password`; an imported account without a
    /// password sets `password` now; an account that already has a password must be the
    /// signed-in caller (UNAUTHENTICATED otherwise). An unknown link is NOT_FOUND, a used
    /// one CONFLICT, a revoked one FORBIDDEN, an expired one WINDOW_CLOSED.
    #[graphql(complexity = "cost::password(child_complexity)")]
    async fn redeem_invitation(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The token: the last part of the invitation link.")] token: String,
        #[graphql(
            desc = "The password to set (10 to 256 characters); required unless the \
                          account already has one."
        )]
        password: Option<String>,
        #[graphql(desc = "The name others see, for a new account (default: the part of \
                          the email before the @).")]
        display_name: Option<String>,
    ) -> async_graphql::Result<Session> {
        // The write's actor is the caller when signed in (see `invitations::redeem`).
        let w = begin(ctx).await?;
        let r = invitations::redeem(&w, &token, password.as_deref(), display_name.as_deref())
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        ctx.append_http_header(
            "set-cookie",
            session_cookie(ctx, &r.token, accounts::SESSION_DAYS * 86_400),
        );
        Ok(Session {
            token: r.token,
            user: r.user,
        })
    }

    /// Revokes an invitation (the event's organizers): its link stops working and its
    /// unsent messages are cancelled. CONFLICT once it was redeemed or revoked.
    async fn revoke_invitation(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The invitation (`Invitation.id`).")] id: ID,
    ) -> async_graphql::Result<Invitation> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let inv = invitations::revoke(&w, &id).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Invitation(inv))
    }

    /// Sends an invitation again with a new link and expiry (the event's organizers); the
    /// old link stops working. CONFLICT once it was redeemed or revoked.
    async fn resend_invitation(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The invitation (`Invitation.id`).")] id: ID,
    ) -> async_graphql::Result<Invitation> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let inv = invitations::resend(&w, &id, &ctx.services().links)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().mail.wake();
        Ok(Invitation(inv))
    }

    /// Asks for a password-reset link (anyone). Always true, after the same time, whether
    /// or not an account has this email; when one does, a single-use link valid 30 minutes
    /// is mailed to it. Throttled per email and per address (RATE_LIMITED).
    async fn request_password_reset(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The account's email.")] email: String,
    ) -> async_graphql::Result<bool> {
        recovery::request_password_reset(ctx.db(), &email, &ctx.rc().client, &ctx.services().links)
            .await
            .gql(ctx)?;
        ctx.services().mail.wake();
        Ok(true)
    }

    /// Sets a new password with a reset link (anyone holding it) and signs in, setting the
    /// session cookie. Every other session and every API token of the account is revoked.
    /// An unknown link is NOT_FOUND, a used one CONFLICT, an expired one WINDOW_CLOSED.
    #[graphql(complexity = "cost::password(child_complexity)")]
    async fn reset_password(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The token: the last part of the reset link.")] token: String,
        #[graphql(desc = "The new password: 10 to 256 characters.")] password: String,
    ) -> async_graphql::Result<Session> {
        let w = begin(ctx).await?;
        let (user, token) = recovery::reset_password(&w, &token, &password)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().bus.publish(BusEvent::AccessRevoked {
            user_id: user.id,
            credential: None,
        });
        ctx.append_http_header(
            "set-cookie",
            session_cookie(ctx, &token, accounts::SESSION_DAYS * 86_400),
        );
        Ok(Session { token, user })
    }

    /// Makes a link for one person to join a team (its members while submissions are open,
    /// or the event's organizers): single use, valid 72 hours or until the deadline, whichever
    /// is first. Redeeming it registers the person as a participant and joins the team under
    /// the team-size limit (CONFLICT when full). The link is returned to pass on and mailed
    /// when a mail server is configured.
    async fn invite_to_team(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The team, by id or external id.")] team: ID,
        #[graphql(desc = "The address of the person to invite.")] email: String,
    ) -> async_graphql::Result<CreatedTeamInvitation> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let tm = team_of(w.txn(), &team).await.gql(ctx)?;
        let (invitation, link) =
            invitations::invite_to_team(&w, &tm, &email, &ctx.services().links)
                .await
                .gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().mail.wake();
        Ok(CreatedTeamInvitation { invitation, link })
    }
}
