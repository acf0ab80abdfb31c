//! The `/graphql` handlers: POST (queries and mutations, batches) and GET (queries only;
//! the playground without a `query`). The websocket is [`super::ws`].
//!
//! Refusals of the request itself (content type, body, batch size, CSRF, credential) are
//! answered here with an HTTP status; the limits on an operation (depth, complexity,
//! directives, time) are the schema's (`graphql::extensions`).

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::{BatchRequest, BatchResponse, Request};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::auth::Caller;
use super::{AppState, gql_error};
use crate::graphql::{RequestCtx, request_data};

/// Whether any operation of `query` is a mutation (a query that does not parse is not).
pub(super) fn is_mutation(query: &str) -> bool {
    use async_graphql::parser::types::OperationType;
    match async_graphql::parser::parse_query(query) {
        Ok(doc) => doc
            .operations
            .iter()
            .any(|(_, op)| op.node.ty == OperationType::Mutation),
        Err(_) => false,
    }
}

/// The media type GraphQL over HTTP defines for responses. A client that accepts it gets
/// it, and a request that fails before execution (it does not parse or validate) is then a
/// 4xx, as that spec says; other clients get `application/json` with 200, as before.
const GRAPHQL_RESPONSE: &str = "application/graphql-response+json";

fn accepts_graphql_response(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            t.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case(GRAPHQL_RESPONSE))
        })
}

/// Runs the operations of a batch one after another, for one caller, and answers with
/// their results (a single result for a single request).
async fn execute(
    st: &AppState,
    rc: RequestCtx,
    batch: BatchRequest,
    graphql_response: bool,
) -> Response {
    let rc = Arc::new(rc);
    let requests: Vec<Request> = match batch {
        BatchRequest::Single(r) => vec![r],
        BatchRequest::Batch(v) => v,
    };
    let single = requests.len() == 1;
    let mut responses = Vec::with_capacity(requests.len());
    for mut req in requests {
        req.data = request_data(&st.services, rc.clone());
        responses.push(st.schema.execute(req).await);
    }
    let mut headers = HeaderMap::new();
    for r in &responses {
        for (k, v) in r.http_headers.iter() {
            headers.append(k, v.clone());
        }
    }
    // Nothing executed: the request itself was refused (parse, validation, a limit).
    let request_error = single
        && responses
            .first()
            .is_some_and(|r| r.data == async_graphql::Value::Null && !r.errors.is_empty());
    let body = if single {
        BatchResponse::Single(responses.remove(0))
    } else {
        BatchResponse::Batch(responses)
    };
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    let (status, content_type) = if graphql_response {
        let status = if request_error {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::OK
        };
        (status, "application/graphql-response+json; charset=utf-8")
    } else {
        (StatusCode::OK, "application/json")
    };
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    let json = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
    (status, headers, json).into_response()
}

/// POST runs queries and mutations, single or batched, sent as JSON.
pub(super) async fn post(
    State(st): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return gql_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "BAD_USER_INPUT",
                &format!(
                    "the request body is larger than {} bytes",
                    st.services.limits.max_body
                ),
            );
        }
        Err(rejection) => {
            return gql_error(
                rejection.status(),
                "BAD_USER_INPUT",
                &format!("the request body could not be read: {rejection}"),
            );
        }
    };
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
        .unwrap_or(false);
    if !json_type {
        return gql_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "BAD_USER_INPUT",
            "send GraphQL as a POST with Content-Type: application/json",
        );
    }
    let batch: BatchRequest = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => {
            return gql_error(
                StatusCode::BAD_REQUEST,
                "BAD_USER_INPUT",
                &format!("the body is not a GraphQL request: {e}"),
            );
        }
    };
    let max = st.services.limits.max_batch;
    if let BatchRequest::Batch(v) = &batch {
        if v.len() > max {
            return gql_error(
                StatusCode::BAD_REQUEST,
                "QUERY_TOO_COMPLEX",
                &format!("at most {max} operations per batch"),
            );
        }
        if v.is_empty() {
            return gql_error(
                StatusCode::BAD_REQUEST,
                "BAD_USER_INPUT",
                "the batch is empty",
            );
        }
    }
    if let Some(refused) = caller.csrf_refusal(&batch) {
        return refused;
    }
    match caller.authenticate(&st.services).await {
        Ok(rc) => execute(&st, rc, batch, accepts_graphql_response(&headers)).await,
        Err(refused) => refused,
    }
}

/// GET runs queries (never mutations); without a `query` parameter it is the playground.
pub(super) async fn get(
    State(st): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let Some(query) = params.get("query") else {
        return crate::web::playground().into_response();
    };
    if is_mutation(query) {
        return gql_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "BAD_USER_INPUT",
            "mutations are only accepted over POST",
        );
    }
    let mut req = Request::new(query.clone());
    if let Some(v) = params.get("variables") {
        match serde_json::from_str(v) {
            Ok(vars) => req = req.variables(async_graphql::Variables::from_json(vars)),
            Err(_) => {
                return gql_error(
                    StatusCode::BAD_REQUEST,
                    "BAD_USER_INPUT",
                    "variables is not JSON",
                );
            }
        }
    }
    if let Some(op) = params.get("operationName") {
        req = req.operation_name(op.clone());
    }
    match caller.authenticate(&st.services).await {
        Ok(rc) => {
            execute(
                &st,
                rc,
                BatchRequest::Single(req),
                accepts_graphql_response(&headers),
            )
            .await
        }
        Err(refused) => refused,
    }
}
