//! Account mutations: sign up, log in and out (with the web client's session cookie), and
//! personal API tokens.

use async_graphql::{Context, ID, Object};

use super::write::{begin, commit};
use crate::domain::accounts::{self, Credential};
use crate::error::AppError;
use crate::graphql::bus::BusEvent;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::object::user::{ApiToken, ApiTokenScope, CreatedApiToken, Session};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// The web client's session cookie.
pub const COOKIE: &str = "verdict_session";

pub(super) fn session_cookie(ctx: &Context<'_>, token: &str, max_age: i64) -> String {
    let secure = if ctx.services().tls_cookies {
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
];

#[derive(Default)]
pub struct AccountMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl AccountMutation {
    /// Creates an account and signs in (anyone). Also sets the web client's session cookie;
    /// the session lasts 30 days. CONFLICT when an account has this email.
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
        let txn = begin(ctx).await?;
        let (user, token) = accounts::sign_up(&txn, &email, &password, &display_name)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
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
        let Some((_, Credential::Session { id })) = ctx.rc().caller.clone() else {
            return Err(ctx.err(AppError::conflict(
                "this request uses an API token; revoke it with revokeApiToken",
            )));
        };
        let txn = begin(ctx).await?;
        accounts::log_out(&txn, &actor, id).await.gql(ctx)?;
        commit(ctx, txn).await?;
        ctx.services().bus.publish(BusEvent::AccessRevoked {
            user_id: actor.user.id,
            credential: Some(Credential::Session { id }),
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
        let txn = begin(ctx).await?;
        let (api_token, token) = accounts::create_api_token(
            &txn,
            &actor,
            &label,
            scope.unwrap_or(ApiTokenScope::Write).into(),
            expires_at,
        )
        .await
        .gql(ctx)?;
        commit(ctx, txn).await?;
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
        let txn = begin(ctx).await?;
        let t = accounts::revoke_api_token(&txn, &actor, &id)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        ctx.services().bus.publish(BusEvent::AccessRevoked {
            user_id: actor.user.id,
            credential: Some(Credential::ApiToken {
                id: t.id,
                read_only: t.scope == entity::api_token::TokenScope::Read,
            }),
        });
        Ok(ApiToken(t))
    }
}
