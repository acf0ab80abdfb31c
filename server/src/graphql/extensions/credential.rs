//! The live-credential check of long-lived connections: before each operation on a
//! websocket, the connection's credential must still hold (session neither revoked nor
//! expired, API token not revoked) and the caller's access is loaded fresh; a dead
//! credential refuses the operation with UNAUTHENTICATED before it is even parsed.
//!
//! An HTTP request was authenticated moments before it runs, so its context (not
//! long-lived, see [`RequestCtx::recheck`]) pays no second lookup. Within one process a
//! revocation also closes the affected sockets (`http::ws`); across processes sharing a
//! database, this check and the one before each subscription message are what hold.

use std::sync::Arc;

use async_graphql::extensions::{
    Extension, ExtensionContext, ExtensionFactory, NextPrepareRequest,
};
use async_graphql::{Pos, Request, ServerResult};

use crate::graphql::error::to_graphql;
use crate::graphql::{RequestCtx, Services};

/// The extension factory, built once with the schema.
pub struct LiveCredential;

impl ExtensionFactory for LiveCredential {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(Check)
    }
}

struct Check;

#[async_graphql::async_trait::async_trait]
impl Extension for Check {
    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        // A websocket connection's context is its session data; an HTTP request's is in
        // the request's own data and is not long-lived.
        if let Some(rc) = ctx.data_opt::<Arc<RequestCtx>>()
            && rc.is_long_lived()
            && let Some(services) = ctx.data_opt::<Services>()
            && let Err(e) = rc.recheck(&services.db).await
        {
            let mut refused = to_graphql(e, &rc.request_id).into_server_error(Pos::default());
            // The whole operation is refused, not a place in its document.
            refused.locations.clear();
            return Err(refused);
        }
        next.run(ctx, request).await
    }
}
