//! Participation records (issue 12): a member fetches a signed statement of their own
//! participation; anyone checks one against this deployment's key.

use async_graphql::{Context, Object};

use super::write::{begin, commit};
use crate::domain::records::{self, Invalid};
use crate::error::AppError;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    // Membership of the named event is checked in the domain (FORBIDDEN otherwise).
    ("Mutation.participationRecord", Rule::SignedIn),
    // A pure check: anyone holding a record may ask whether it is genuine.
    ("Mutation.verifyRecord", Rule::Public),
];

#[derive(Default)]
pub struct RecordsMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl RecordsMutation {
    /// A signed statement of the caller's own participation in the event, as a JSON
    /// document (`verdict.participation.v1`): the event, the caller's name, email and roles,
    /// the projects they judged (a submitted review) or built (their team's submitted
    /// projects), by title and external id, the time of issue and the deployment's key
    /// fingerprint, signed with the deployment's Ed25519 key. No scores, no comments,
    /// nothing about anyone else. Any member of the event may ask (FORBIDDEN otherwise);
    /// each issue is recorded in the audit log (`record.issued`). Keep the text byte for
    /// byte: any change makes it fail verification.
    async fn participation_record(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug.")] event: String,
    ) -> async_graphql::Result<String> {
        ctx.actor()?;
        let signer = ctx.services().signer.clone();
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let document = records::issue(&w, &e, &signer).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(document)
    }

    /// Whether `document` is a participation record issued by this deployment, unaltered:
    /// true only for the exact text `participationRecord` returned, signed by this
    /// deployment's key under `verdict.participation.v1`. Any changed byte, another kind of
    /// signed artifact, or another deployment's key gives false; text that is not JSON at
    /// all is BAD_USER_INPUT. A pure check that writes nothing (a mutation only because the
    /// contract puts it there); offline, `verdict record verify FILE --key FINGERPRINT`
    /// does the same without the server.
    async fn verify_record(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The record's text, exactly as issued.")] document: String,
    ) -> async_graphql::Result<bool> {
        match records::verify(&document, &ctx.services().signer.public()) {
            Ok(_) => Ok(true),
            Err(Invalid::NotJson) => Err(ctx.err(AppError::bad_input(
                "document",
                "not JSON: a participation record is a JSON document",
            ))),
            Err(Invalid::NotARecord | Invalid::OtherKey | Invalid::BadSignature) => Ok(false),
        }
    }
}
