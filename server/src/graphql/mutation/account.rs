//! Account mutations: sign up, log in and out (with the web client's session cookie),
//! personal API tokens, and a site administrator's erasure of an account.

use async_graphql::{Context, ID, Object};

use super::write::{begin, commit};
use crate::domain::accounts::{self, Credential};
use crate::domain::{erasure, recovery};
use crate::error::AppError;
use crate::graphql::bus::BusEvent;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::object::user::{ApiToken, ApiTokenScope, CreatedApiToken, Session, User};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// The web client's session cookie.
pub const COOKIE: &str = "verdict_session";

pub(super) fn session_cookie(ctx: &Context<'_>, token: &str, max_age: i64) -> String {
    let secure = if ctx.services().served_over_tls {
        "; Secure"
    } else {
        ""
    };
    format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}")
}

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.signUp", Rule::Public),
    ("Mutation.logIn", Rule::Public),
    ("Mutation.logOut", Rule::SignedIn),
    ("Mutation.createApiToken", Rule::SignedIn),
    ("Mutation.revokeApiToken", Rule::SignedIn),
    // The link is the credential.
    ("Mutation.confirmEmail", Rule::Public),
    ("Mutation.resendConfirmation", Rule::SignedIn),
    ("Mutation.changePassword", Rule::SignedIn),
    ("Mutation.changeEmail", Rule::SignedIn),
    ("Mutation.updateProfile", Rule::SignedIn),
    ("Mutation.eraseAccount", Rule::SiteAdmin),
    ("Mutation.eraseAddress", Rule::SiteAdmin),
];

#[derive(Default)]
pub struct AccountMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl AccountMutation {
    /// Creates an account and signs in (anyone). Also sets the web client's session cookie;
    /// the session lasts 30 days. CONFLICT when an account has this email. A link that
    /// confirms the address is mailed to it (`confirmEmail`); until then no organizer can
    /// grant the account a role by its email.
    #[graphql(complexity = "cost::password(child_complexity)")]
    async fn sign_up(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The email to sign in with; stored trimmed and lower-cased.")]
        email: String,
        #[graphql(desc = "10 to 256 characters.")] password: String,
        #[graphql(desc = "The name other people see: one line of 1 to 100 characters.")]
        display_name: String,
    ) -> async_graphql::Result<Session> {
        let w = begin(ctx).await?;
        let links = &ctx.services().links;
        let (user, token) = accounts::sign_up(&w, &email, &password, &display_name, links)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().mail.wake();
        ctx.append_http_header(
            "set-cookie",
            session_cookie(ctx, &token, accounts::SESSION_DAYS * 86_400),
        );
        Ok(Session { token, user })
    }

    /// Signs in (anyone) and sets the web client's session cookie; the session lasts 30 days.
    /// Throttled per email and per client address: RATE_LIMITED, with
    /// `extensions.retryAfter` in seconds. A wrong email or password is UNAUTHENTICATED.
    #[graphql(complexity = "cost::password(child_complexity)")]
    async fn log_in(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The account's email (case and surrounding spaces do not matter).")]
        email: String,
        #[graphql(desc = "The account's password.")] password: String,
    ) -> async_graphql::Result<Session> {
        let limit = ctx.services().limits.login_attempts;
        let (user, token) = accounts::log_in(ctx.db(), &email, &password, &ctx.rc().client, limit)
            .await
            .gql(ctx)?;
        ctx.append_http_header(
            "set-cookie",
            session_cookie(ctx, &token, accounts::SESSION_DAYS * 86_400),
        );
        Ok(Session { token, user })
    }

    /// Ends the current session (bearer or cookie) and clears the cookie. A request signed
    /// in with an API token gets CONFLICT: revoke the token with `revokeApiToken` instead.
    async fn log_out(&self, ctx: &Context<'_>) -> async_graphql::Result<bool> {
        let actor = ctx.actor()?;
        let Some((_, credential @ (Credential::Session { id } | Credential::JudgeLink { id, .. }))) =
            ctx.rc().caller.clone()
        else {
            return Err(ctx.err(AppError::conflict(
                "this request uses an API token; revoke it with revokeApiToken",
            )));
        };
        let w = begin(ctx).await?;
        accounts::log_out(&w, id).await.gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().bus.publish(BusEvent::AccessRevoked {
            user_id: actor.user.id,
            credential: Some(credential),
        });
        ctx.append_http_header("set-cookie", session_cookie(ctx, "", 0));
        Ok(true)
    }

    /// Mints a personal API token for scripts (signed-in users); the secret is returned once.
    /// A `READ` token answers queries and subscriptions and is refused (FORBIDDEN) on any
    /// document with a mutation: the token to give a dashboard.
    async fn create_api_token(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "A name to recognise the token by: one line of 1 to 100 characters.")]
        label: String,
        #[graphql(desc = "What the token may do: `READ` (queries and subscriptions) or \
                          `WRITE` (everything the owner may do; the default).")]
        scope: Option<ApiTokenScope>,
        #[graphql(desc = "When the token stops working (in the future); never when omitted.")]
        expires_at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> async_graphql::Result<CreatedApiToken> {
        let actor = ctx.actor()?;
        let w = begin(ctx).await?;
        let (api_token, token) = accounts::create_api_token(
            &w,
            &actor,
            &label,
            scope.unwrap_or(ApiTokenScope::Write).into(),
            expires_at,
        )
        .await
        .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(CreatedApiToken { token, api_token })
    }

    /// Revokes one of the caller's API tokens: NOT_FOUND for anyone else's, CONFLICT when it
    /// is already revoked.
    async fn revoke_api_token(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The token's id (`ApiToken.id`).")] id: ID,
    ) -> async_graphql::Result<ApiToken> {
        let actor = ctx.actor()?;
        let w = begin(ctx).await?;
        let t = accounts::revoke_api_token(&w, &id).await.gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().bus.publish(BusEvent::AccessRevoked {
            user_id: actor.user.id,
            credential: Some(Credential::ApiToken {
                id: t.id,
                read_only: t.scope == entity::api_token::TokenScope::Read,
            }),
        });
        Ok(ApiToken(t))
    }

    /// Confirms an address with the link mailed to it (anyone holding the link): the
    /// account's own after sign-up, or the new one of `changeEmail`, which then becomes the
    /// account's (the old address is told). An unknown link is NOT_FOUND, a used one
    /// CONFLICT, an expired one WINDOW_CLOSED.
    async fn confirm_email(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The token: the last part of the confirmation link.")] token: String,
    ) -> async_graphql::Result<bool> {
        let w = begin(ctx).await?;
        recovery::confirm_email(&w, &token).await.gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().mail.wake();
        Ok(true)
    }

    /// Mails a new confirmation link for the caller's address (CONFLICT when it is
    /// confirmed; RATE_LIMITED after 5 in 15 minutes).
    async fn resend_confirmation(&self, ctx: &Context<'_>) -> async_graphql::Result<bool> {
        let actor = ctx.actor()?;
        recovery::resend_confirmation(ctx.db(), &actor, &ctx.services().links)
            .await
            .gql(ctx)?;
        ctx.services().mail.wake();
        Ok(true)
    }

    /// Changes the caller's password; the current one is required (BAD_USER_INPUT on
    /// `currentPassword` when wrong, throttled like a log-in). Every other session of the
    /// account is revoked; the one making the change and the API tokens stay. Returns how
    /// many sessions were revoked.
    #[graphql(complexity = "cost::password(child_complexity)")]
    async fn change_password(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The password the account has now.")] current_password: String,
        #[graphql(desc = "The new password: 10 to 256 characters.")] new_password: String,
    ) -> async_graphql::Result<i32> {
        let actor = ctx.actor()?;
        let keep = match ctx.rc().caller {
            Some((_, Credential::Session { id })) => Some(id),
            _ => None,
        };
        let limit = ctx.services().limits.login_attempts;
        let revoked = recovery::change_password(
            ctx.db(),
            &actor,
            &current_password,
            &new_password,
            keep,
            &ctx.rc().client,
            limit,
        )
        .await
        .gql(ctx)?;
        // After the commit: close the websockets of the sessions that ended.
        ctx.services().bus.publish(BusEvent::SessionsEnded {
            user_id: actor.user.id,
            except: keep.map(|id| Credential::Session { id }),
        });
        Ok(i32::try_from(revoked).unwrap_or(i32::MAX))
    }

    /// Asks to change the caller's email address; the current password is required. A
    /// confirmation link goes to the new address, which becomes the account's only when the
    /// link is used (`confirmEmail`). CONFLICT when another account has the address.
    #[graphql(complexity = "cost::password(child_complexity)")]
    async fn change_email(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The new address.")] new_email: String,
        #[graphql(desc = "The password the account has now.")] current_password: String,
    ) -> async_graphql::Result<bool> {
        let actor = ctx.actor()?;
        let limit = ctx.services().limits.login_attempts;
        recovery::change_email(
            ctx.db(),
            &actor,
            &new_email,
            &current_password,
            &ctx.rc().client,
            limit,
            &ctx.services().links,
        )
        .await
        .gql(ctx)?;
        ctx.services().mail.wake();
        Ok(true)
    }

    /// Changes the caller's display name: one line of 1 to 100 characters.
    async fn update_profile(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The name other people see.")] display_name: String,
    ) -> async_graphql::Result<User> {
        // Signed in, or UNAUTHENTICATED before the write begins; the write's actor is them.
        ctx.actor()?;
        let w = begin(ctx).await?;
        let u = recovery::update_profile(&w, &display_name).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(User(u))
    }

    /// Erases a person's account on their request (site administrators). The account stays
    /// as an anonymous placeholder (display name `Erased account`, no email, no password),
    /// so their reviews, memberships and every published result stay consistent; their
    /// sessions and API tokens are deleted (open websockets close), what they wrote
    /// (comments, review comments) becomes `[erased]`, and their personal data is redacted
    /// from the audit log without breaking its hash chain. Audited as `account.erased`.
    /// BAD_USER_INPUT on `confirm` unless it is the email typed again, NOT_FOUND when no
    /// account has the email, CONFLICT for the caller's own account.
    async fn erase_account(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The email of the account to erase.")] email: String,
        #[graphql(desc = "The same email typed again, to confirm.")] confirm: String,
    ) -> async_graphql::Result<User> {
        // Signed in, or UNAUTHENTICATED before the write begins; the write's actor is them.
        ctx.actor()?;
        let w = begin(ctx).await?;
        let erased = erasure::erase_account(&w, &email, &confirm)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        // After the commit: every websocket the person still has open closes.
        ctx.services().bus.publish(BusEvent::AccessRevoked {
            user_id: erased.user.id,
            credential: None,
        });
        Ok(User(erased.user))
    }

    /// Erases an email address that no account has, on its owner's request (site
    /// administrators): someone who voted by email, was invited or put on a voting
    /// allow-list. Their voter rows and invitations keep their place (ballots and counts
    /// stay) under a placeholder address, allow-list entries for their mailbox and mail
    /// queued to them are deleted, and the address is redacted from the audit log without
    /// breaking its hash chain. Audited as `account.erased`. Returns how many records named
    /// the address. BAD_USER_INPUT on `confirm` unless it is the email typed again,
    /// CONFLICT when an account has the address (`eraseAccount` erases it with the
    /// account), NOT_FOUND when nothing names it.
    async fn erase_address(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The email address to erase.")] email: String,
        #[graphql(desc = "The same address typed again, to confirm.")] confirm: String,
    ) -> async_graphql::Result<u64> {
        // Signed in, or UNAUTHENTICATED before the write begins; the write's actor is them.
        ctx.actor()?;
        let w = begin(ctx).await?;
        let records = erasure::erase_address(&w, &email, &confirm)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(records)
    }
}
