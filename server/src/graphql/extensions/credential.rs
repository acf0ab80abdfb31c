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

use async_graphql::extensions::ExtensionContext;
use async_graphql::{Pos, ServerResult};

use crate::graphql::error::to_graphql;
use crate::graphql::{RequestCtx, Services};

/// `prepare_request`: refuses the operation when a long-lived connection's credential has
/// died since the connection was opened (and loads its access fresh when it holds).
pub(super) async fn recheck(ctx: &ExtensionContext<'_>) -> ServerResult<()> {
    // A websocket connection's context is its session data; an HTTP request's is in the
    // request's own data and is not long-lived.
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
    Ok(())
}
