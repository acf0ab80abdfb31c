//! What each operation tells the operator: its name and outcome to the metrics
//! ([`crate::metrics`]), its name to the request's log line (the `operation` field of the
//! `request` span, `http::observe`), and the request id into every error's
//! `extensions.requestId`, so that what a client reports can be found in the log.
//!
//! One [`Observer`] lives as long as one operation: an HTTP request's execution, or one
//! operation on a websocket (a subscription until it ends). It is counted when it is
//! dropped, so an operation is counted once however it ends (answered, refused before
//! execution, cut off by the timeout, or a subscription stopped by its client or its
//! socket). A subscription holds the `verdict_graphql_subscriptions_active` gauge from its
//! validation until then.
//!
//! [`super::Edge`] runs it first, so it sees the request before the other checks and the
//! response after them (with the codes they set).

use std::any::TypeId;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_graphql::extensions::ExtensionContext;
use async_graphql::parser::types::{ExecutableDocument, OperationType};
use async_graphql::{Request, Response};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;

use crate::graphql::RequestCtx;
use crate::metrics::{self, Active};

/// One operation's observer, made by [`super::Edge`] for each operation.
pub(super) struct Observer(Arc<Operation>);

/// One operation, recorded in the metrics when the last reference to it is dropped.
struct Operation {
    started: Instant,
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    request_id: Option<String>,
    /// The operation name the request gave, if any.
    requested: Option<String>,
    /// The operation's label (see `metrics::operation_label`): of the operation the
    /// document selects once it is parsed, of the requested name before.
    label: Option<String>,
    subscription: bool,
    /// Held while a subscription runs.
    active: Option<Active>,
    /// `ok` until a response carries an error, then the first error's code.
    outcome: Option<&'static str>,
}

impl Operation {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes the outcome of a response and gives its errors the request id.
    fn answered(&self, resp: &mut Response) {
        let mut seen = self.seen();
        if seen.outcome.is_none_or(|o| o == "ok") {
            seen.outcome = Some(metrics::outcome(&resp.errors));
        }
        if let Some(id) = &seen.request_id {
            for e in resp.errors.iter_mut() {
                let ext = e.extensions.get_or_insert_with(Default::default);
                if ext.get("requestId").is_none() {
                    ext.set("requestId", id.as_str());
                }
            }
        }
    }
}

impl Drop for Operation {
    fn drop(&mut self) {
        let seen = self.seen.get_mut().unwrap_or_else(|p| p.into_inner());
        let label = seen.label.take().unwrap_or_else(|| "anonymous".into());
        // An operation dropped before any response (its client went away) counts as ok:
        // nothing refused it.
        let outcome = seen.outcome.unwrap_or("ok");
        let elapsed = (!seen.subscription).then(|| self.started.elapsed());
        metrics::graphql_request(&label, outcome, elapsed);
    }
}

impl Observer {
    pub(super) fn new() -> Observer {
        Observer(Arc::new(Operation {
            started: Instant::now(),
            seen: Mutex::default(),
        }))
    }

    /// `request`: the outcome of the answer, and the request id into its errors.
    pub(super) fn answered(&self, resp: &mut Response) {
        self.0.answered(resp);
    }

    /// `subscribe`: each message's outcome; counted when the stream ends.
    pub(super) fn follow<'s>(&self, stream: BoxStream<'s, Response>) -> BoxStream<'s, Response> {
        let operation = self.0.clone();
        stream
            .map(move |mut resp| {
                operation.answered(&mut resp);
                resp
            })
            .boxed()
    }

    /// `prepare_request`: the request id and the operation name asked for.
    pub(super) fn prepared(&self, ctx: &ExtensionContext<'_>, request: &Request) {
        // A websocket operation's caller is in the connection's data; an HTTP request's in
        // the request's own.
        let rc = ctx.data_opt::<Arc<RequestCtx>>().or_else(|| {
            request
                .data
                .get(&TypeId::of::<Arc<RequestCtx>>())
                .and_then(|d| d.downcast_ref::<Arc<RequestCtx>>())
        });
        let mut seen = self.0.seen();
        seen.request_id = rc.map(|rc| rc.request_id.clone());
        seen.requested = request.operation_name.clone();
        seen.label = Some(metrics::operation_label(seen.requested.as_deref()));
    }

    /// `parse_query`: the label of the operation the document selects.
    pub(super) fn parsed(&self, doc: &ExecutableDocument) {
        let mut seen = self.0.seen();
        // The operation execution will run: the one named, or the only one. (Several
        // without a name, or an unknown name, are refused; the label stays as requested.)
        let chosen = match seen.requested.as_deref() {
            Some(wanted) => doc
                .operations
                .iter()
                .find(|(name, _)| name.is_some_and(|n| n.as_str() == wanted)),
            None if doc.operations.iter().count() == 1 => doc.operations.iter().next(),
            None => None,
        };
        if let Some((name, op)) = chosen {
            seen.label = Some(metrics::operation_label(name.map(|n| n.as_str())));
            seen.subscription = op.node.ty == OperationType::Subscription;
        }
        if let Some(label) = &seen.label {
            tracing::Span::current().record("operation", label.as_str());
        }
    }

    /// `validation` passed: a subscription holds the gauge from here on.
    pub(super) fn validated(&self) {
        let mut seen = self.0.seen();
        if seen.subscription && seen.active.is_none() {
            seen.active = Some(Active::start(metrics::SUBSCRIPTIONS));
        }
    }
}
