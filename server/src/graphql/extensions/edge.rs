//! [`Edge`]: the one extension the schema installs, running each check at its step.
//!
//! async-graphql passes every resolved field through every installed extension (and, with
//! any installed, looks the field's type up in the registry for it), so four extensions
//! cost four hops on each of the hundreds of fields of a page. None of Verdict's checks
//! looks at single fields: they run at the steps of a request, so one extension runs them
//! all, in the order the four ran in when each was its own (the observer outermost, then
//! the live credential, the time budget and the query limits), and a field pays one hop.

use std::sync::Arc;
use std::time::Duration;

use async_graphql::extensions::{
    Extension, ExtensionContext, ExtensionFactory, NextParseQuery, NextPrepareRequest, NextRequest,
    NextSubscribe, NextValidation,
};
use async_graphql::parser::types::ExecutableDocument;
use async_graphql::{Request, Response, ServerError, ServerResult, ValidationResult, Variables};
use futures_util::stream::BoxStream;

use super::credential;
use super::limits::{Checker, QueryLimits};
use super::observe::Observer;
use super::timeout;
use crate::config::Limits;

/// The extension factory, built once with the schema from the configured limits.
pub struct Edge {
    limits: QueryLimits,
    timeout: Duration,
}

impl Edge {
    pub fn new(limits: &Limits, introspection: bool) -> Edge {
        Edge {
            limits: QueryLimits::new(limits, introspection),
            timeout: limits.request_timeout(),
        }
    }
}

impl ExtensionFactory for Edge {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(Operation {
            observer: Observer::new(),
            checker: self.limits.checker(),
            timeout: self.timeout,
        })
    }
}

/// One operation: an HTTP request's, or one on a websocket.
struct Operation {
    observer: Observer,
    checker: Checker,
    timeout: Duration,
}

#[async_graphql::async_trait::async_trait]
impl Extension for Operation {
    async fn request(&self, ctx: &ExtensionContext<'_>, next: NextRequest<'_>) -> Response {
        let mut resp = timeout::within(self.timeout, async {
            let mut resp = next.run(ctx).await;
            self.checker.answered(&mut resp);
            resp
        })
        .await;
        self.observer.answered(&mut resp);
        resp
    }

    fn subscribe<'s>(
        &self,
        ctx: &ExtensionContext<'_>,
        stream: BoxStream<'s, Response>,
        next: NextSubscribe<'_>,
    ) -> BoxStream<'s, Response> {
        self.observer.follow(next.run(ctx, stream))
    }

    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        mut request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        self.observer.prepared(ctx, &request);
        credential::recheck(ctx).await?;
        self.checker.prepare(ctx, &mut request)?;
        next.run(ctx, request).await
    }

    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        let doc = next.run(ctx, query, variables).await?;
        self.observer.parsed(&doc);
        Ok(doc)
    }

    async fn validation(
        &self,
        ctx: &ExtensionContext<'_>,
        next: NextValidation<'_>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        let result = self.checker.validated(ctx, next.run(ctx).await)?;
        self.observer.validated();
        Ok(result)
    }
}
