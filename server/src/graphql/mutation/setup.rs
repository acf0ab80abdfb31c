//! The first-run setup of a fresh deployment: the printed setup link makes its holder the
//! first account and site admin.

use async_graphql::{Context, Object};

use super::account::session_cookie;
use super::write::{begin, commit};
use crate::domain::{accounts, setup};
use crate::graphql::context::ResultExt;
use crate::graphql::cost;
use crate::graphql::object::user::Session;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    // The link is the credential.
    ("Mutation.setUpSite", Rule::Public),
];

#[derive(Default)]
pub struct SetupMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl SetupMutation {
    /// Creates the deployment's first account, as site admin, with the one-time setup link
    /// that `verdict serve` prints while no account exists (anyone holding it), and signs in
    /// like `logIn` (session cookie, 30 days). An unknown link is NOT_FOUND; a used or
    /// expired link, or a site where an account exists already, is FORBIDDEN.
    #[graphql(complexity = "cost::password(child_complexity)")]
    async fn set_up_site(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The token: the last part of the setup link.")] token: String,
        #[graphql(desc = "The site admin's email; stored trimmed and lower-cased.")] email: String,
        #[graphql(desc = "10 to 256 characters.")] password: String,
        #[graphql(desc = "The name other people see: one line of 1 to 100 characters.")]
        display_name: String,
    ) -> async_graphql::Result<Session> {
        let txn = begin(ctx).await?;
        let (user, token) = setup::set_up_site(&txn, &token, &email, &password, &display_name)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        ctx.append_http_header(
            "set-cookie",
            session_cookie(ctx, &token, accounts::SESSION_DAYS * 86_400),
        );
        Ok(Session { token, user })
    }
}
