//! A judge's standing sign-in (`crate::domain::judge_sign_in`): organizers issue, reissue
//! and revoke a judge's link and code; the judge signs in with either, like `logIn` (the
//! session cookie, the bearer token) but into a session that only scores.

use async_graphql::{Context, ID, Object};

use super::account::session_cookie;
use super::write::{begin, commit};
use crate::domain::judge_sign_in::{self, Presented};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::object::judge_sign_in::{IssuedJudgeSignIn, JudgeSignInSheet};
use crate::graphql::object::user::{Membership, Session};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    // Checked against the event in the domain: organizers only.
    ("Mutation.issueJudgeSignIn", Rule::SignedIn),
    ("Mutation.issueJudgeSignIns", Rule::SignedIn),
    ("Mutation.revokeJudgeSignIn", Rule::SignedIn),
    // The link or code is the credential.
    ("Mutation.signInAsJudge", Rule::Public),
    ("Mutation.signInAsJudgeByCode", Rule::Public),
];

#[derive(Default)]
pub struct JudgeSignInMutation;

/// Starts the judge's session with what they presented, throttled first like `logIn`.
async fn sign_in(ctx: &Context<'_>, presented: Presented) -> async_graphql::Result<Session> {
    let client = &ctx.rc().client;
    let limit = ctx.services().limits.login_attempts;
    judge_sign_in::take_attempt(ctx.db(), &presented, client, limit)
        .await
        .gql(ctx)?;
    let w = begin(ctx).await?;
    let s = judge_sign_in::sign_in(&w, &presented, client)
        .await
        .gql(ctx)?;
    commit(ctx, w).await?;
    let max_age = (s.expires_at - chrono::Utc::now()).num_seconds().max(1);
    ctx.append_http_header("set-cookie", session_cookie(ctx, &s.token, max_age));
    Ok(Session {
        token: s.token,
        user: s.user,
    })
}

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl JudgeSignInMutation {
    /// Issues a judge of the event a standing sign-in: a link that signs them in with one
    /// tap and a short code to type with the event's slug (the event's organizers;
    /// FORBIDDEN for others). Both are returned this once. Reissuing replaces the judge's
    /// link and code and ends the sessions they started. The session it starts only scores:
    /// it cannot change the account's password, email or API tokens. Audited as
    /// `judge_sign_in.issued`. BAD_USER_INPUT on `judge` when it names no judge of the event.
    async fn issue_judge_sign_in(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The judge: their membership's id or external id.")] judge: ID,
    ) -> async_graphql::Result<IssuedJudgeSignIn> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let org = w.organizer(&e).await.gql(ctx)?;
        let issued = judge_sign_in::issue(&w, org, &judge, &ctx.services().links)
            .await
            .gql(ctx)?;
        // The sessions it ended: their websockets stop at their next operation or message
        // (the live-credential check), as across processes.
        commit(ctx, w).await?;
        Ok(IssuedJudgeSignIn(issued))
    }

    /// Issues every judge of the event a new standing sign-in at once (the event's
    /// organizers), replacing theirs: the links, codes and QR codes for the Invitation links
    /// page, and the same as CSV. Audited once as `judge_sign_in.issued`, naming the judges.
    #[graphql(complexity = "cost::export(child_complexity)")]
    async fn issue_judge_sign_ins(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
    ) -> async_graphql::Result<JudgeSignInSheet> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let org = w.organizer(&e).await.gql(ctx)?;
        let issued = judge_sign_in::issue_all(&w, org, &ctx.services().links)
            .await
            .gql(ctx)?;
        let csv = judge_sign_in::sheet_csv(&issued).gql(ctx)?;
        commit(ctx, w).await?;
        Ok(JudgeSignInSheet {
            event_id: e.id,
            issued,
            csv,
        })
    }

    /// Revokes a judge's standing sign-in link and code (the event's organizers): they stop
    /// working at once and the sessions they started end. CONFLICT when the judge has none;
    /// audited as `judge_sign_in.revoked`.
    async fn revoke_judge_sign_in(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The judge: their membership's id or external id.")] judge: ID,
    ) -> async_graphql::Result<Membership> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let org = w.organizer(&e).await.gql(ctx)?;
        let m = judge_sign_in::revoke(&w, org, &judge).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Membership(m))
    }

    /// Signs a judge in with their standing sign-in link (anyone holding it), like `logIn`:
    /// the session cookie, and the bearer token. The session acts only as that judge in that
    /// event, ends when judging closes, and any mutation but scoring is FORBIDDEN on it.
    /// Throttled per client address and per link (RATE_LIMITED with `retryAfter`). An
    /// unknown link is NOT_FOUND; a revoked or replaced one, or a judge role that is gone,
    /// FORBIDDEN; after judging has closed, WINDOW_CLOSED. Audited as `judge_sign_in.used`.
    async fn sign_in_as_judge(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The token: the last part of the link.")] token: String,
    ) -> async_graphql::Result<Session> {
        sign_in(ctx, Presented::Link(token)).await
    }

    /// Signs a judge in with their event's slug and their short code, as `signInAsJudge`
    /// does with the link. Throttled per client address and per event; a wrong event or
    /// code is NOT_FOUND.
    async fn sign_in_as_judge_by_code(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event's slug (the part after `/e/` in its address).")] event: String,
        #[graphql(desc = "The code, e.g. `K7QM-P2XD`; case, spaces and dashes do not matter.")]
        code: String,
    ) -> async_graphql::Result<Session> {
        sign_in(ctx, Presented::Code { event, code }).await
    }
}
