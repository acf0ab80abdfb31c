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
use super::{AppState, gql_error, while_available};
use crate::crypto::sha256_hex;
use crate::graphql::{RequestCtx, request_data};
use crate::memo::Memo;

/// The metrics label of the operation an anonymous request runs, if its answer may be
/// shared: a document that parses and holds no mutation. One parse, only for requests that
/// were not answered from [`SharedAnswers`].
fn shareable(req: &Request) -> Option<String> {
    use async_graphql::parser::types::OperationType;
    let doc = async_graphql::parser::parse_query(&req.query).ok()?;
    if doc
        .operations
        .iter()
        .any(|(_, op)| op.node.ty == OperationType::Mutation)
    {
        return None;
    }
    let name = match req.operation_name.as_deref() {
        Some(wanted) => Some(wanted),
        None => doc
            .operations
            .iter()
            .next()
            .and_then(|(name, _)| name.map(|n| n.as_str())),
    };
    Some(crate::metrics::operation_label(name))
}

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

/// Persisted queries (Apollo's automatic persisted queries, version 1): a client names its
/// query by the SHA-256 of its text (`extensions.persistedQuery.sha256Hash`) and sends the
/// text only the first time it hears PERSISTED_QUERY_NOT_FOUND. A query named this way fits
/// in a GET URL, so an anonymous crowd's identical reads can be answered by a CDN (see
/// [`Caching`]). The text is filled in before anything looks at the request, so a persisted
/// mutation is still refused over GET and still needs the CSRF header.
pub struct PersistedQueries(Memo<String, Arc<str>>);

impl PersistedQueries {
    /// Distinct query texts kept (each at most the body limit, 64 KiB by default).
    pub const CAPACITY: usize = 512;

    /// Fills in the text of a request that names its query by hash, or refuses it.
    fn resolve(&self, req: &mut Request, request_id: &str) -> Result<(), Box<Response>> {
        let Some(value) = req.extensions.remove("persistedQuery") else {
            return Ok(());
        };
        let named = value
            .into_json()
            .ok()
            .and_then(|v| serde_json::from_value::<Persisted>(v).ok())
            .filter(|p| p.version == 1);
        let Some(named) = named else {
            return Err(Box::new(gql_error(
                StatusCode::BAD_REQUEST,
                "BAD_USER_INPUT",
                "extensions.persistedQuery must be {\"version\": 1, \"sha256Hash\": \"...\"}",
                request_id,
            )));
        };
        let hash = named.sha256_hash.to_ascii_lowercase();
        if req.query.is_empty() {
            match self.0.get(hash.as_str()) {
                Some(text) => req.query = text.to_string(),
                None => {
                    return Err(Box::new(gql_error(
                        StatusCode::OK,
                        "PERSISTED_QUERY_NOT_FOUND",
                        "PersistedQueryNotFound",
                        request_id,
                    )));
                }
            }
        } else if sha256_hex(req.query.as_bytes()) == hash {
            self.0.insert(hash, Arc::from(req.query.as_str()));
        } else {
            return Err(Box::new(gql_error(
                StatusCode::BAD_REQUEST,
                "BAD_USER_INPUT",
                "extensions.persistedQuery.sha256Hash is not the SHA-256 of the query",
                request_id,
            )));
        }
        Ok(())
    }
}

impl Default for PersistedQueries {
    fn default() -> Self {
        PersistedQueries(Memo::new(Self::CAPACITY))
    }
}

#[derive(serde::Deserialize)]
struct Persisted {
    version: i32,
    #[serde(rename = "sha256Hash")]
    sha256_hash: String,
}

/// Answers to anonymous queries, shared by every anonymous request that sends the same
/// one while nothing has been committed. Every write of every process appends to the audit
/// log, so an answer computed when the chain's head was at seq N is the answer for any
/// anonymous request that finds the head still at N: such a request costs one small query
/// (the head) instead of its whole execution. The crowd at a results page or a gallery is
/// anonymous; a signed-in request always executes, since its answer is its own. What
/// depends only on the clock (a window opening) is at most a second old: an answer is kept
/// for the second it was computed in.
pub struct SharedAnswers(Memo<(String, i64, i64), Arc<Answer>>);

/// The header that marks an answer given from [`SharedAnswers`].
const SHARED: &str = "x-verdict-shared";

/// An answer as sent: its status, content type and body, with the label of its
/// operation (for the metrics of the requests it answers).
pub struct Answer {
    status: StatusCode,
    content_type: &'static str,
    body: Bytes,
    operation: String,
}

impl SharedAnswers {
    /// Distinct (query, variables, head, second) answers kept; each is a page of JSON.
    pub const CAPACITY: usize = 256;

    /// The key of `req` in the current second, with the head it was read at.
    fn key(req: &Request, graphql_response: bool, head: i64) -> (String, i64, i64) {
        let mut text = String::with_capacity(req.query.len() + 64);
        text.push_str(&req.query);
        text.push('\0');
        text.push_str(req.operation_name.as_deref().unwrap_or(""));
        text.push('\0');
        text.push_str(&serde_json::to_string(&req.variables).unwrap_or_default());
        text.push_str(if graphql_response { "\0g" } else { "\0j" });
        let second = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        (sha256_hex(text.as_bytes()), head, second)
    }
}

impl Default for SharedAnswers {
    fn default() -> Self {
        SharedAnswers(Memo::new(Self::CAPACITY))
    }
}

/// How an answer may be cached.
enum Caching {
    /// Only by the client that asked (everything but the case below).
    Private,
    /// An anonymous GET: the same for everyone who asks, so shared caches may keep it for
    /// a few seconds and revalidate it by its ETag (`If-None-Match`, the request's).
    Public(Option<HeaderValue>),
}

/// How long a shared cache may serve an anonymous answer without asking again: short,
/// because results and galleries change when people act, and cheap to revalidate.
const PUBLIC_MAX_AGE: &str = "public, max-age=5";

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
    caching: Caching,
) -> Response {
    let caching = match caching {
        Caching::Public(tag) if rc.caller.is_none() => Caching::Public(tag),
        _ => Caching::Private,
    };
    // An anonymous single request: answered from the shared answers when nothing was
    // committed since one was computed for it (see [`SharedAnswers`]).
    let started = std::time::Instant::now();
    let mut share = None;
    if rc.caller.is_none()
        && let BatchRequest::Single(req) = &batch
    {
        // When the head cannot be read, the request executes and reports what fails.
        if let Ok(head) = crate::audit::head_seq(&st.services.db.conn).await {
            let key = SharedAnswers::key(req, graphql_response, head);
            if let Some(answer) = st.shared.0.get(&key) {
                // Counted like an executed operation (`graphql::extensions::Observe`).
                tracing::Span::current().record("operation", answer.operation.as_str());
                crate::metrics::graphql_request(&answer.operation, "ok", Some(started.elapsed()));
                let mut headers = HeaderMap::new();
                headers.insert(SHARED, HeaderValue::from_static("1"));
                return respond(
                    answer.status,
                    answer.content_type,
                    headers,
                    answer.body.clone(),
                    caching,
                    true,
                );
            }
            if let Some(operation) = shareable(req) {
                share = Some((key, operation));
            }
        }
    }
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
    let clean = responses.iter().all(|r| r.errors.is_empty()) && headers.is_empty();
    // Nothing but the database's absence to say: 503, as the refusal before execution.
    let unavailable = responses.iter().all(only_unavailable);
    if unavailable {
        headers.insert(
            header::RETRY_AFTER,
            HeaderValue::from(crate::error::UNAVAILABLE_RETRY_AFTER),
        );
    }
    let body = if single {
        BatchResponse::Single(responses.remove(0))
    } else {
        BatchResponse::Batch(responses)
    };
    let content_type = if graphql_response {
        "application/graphql-response+json; charset=utf-8"
    } else {
        "application/json"
    };
    let status = if unavailable {
        StatusCode::SERVICE_UNAVAILABLE
    } else if graphql_response && request_error {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    let json = Bytes::from(serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec()));
    if clean && let Some((key, operation)) = share {
        st.shared.0.insert(
            key,
            Arc::new(Answer {
                status,
                content_type,
                body: json.clone(),
                operation,
            }),
        );
    }
    respond(status, content_type, headers, json, caching, clean)
}

/// Whether an answer says only that the database cannot serve: it has errors, each of them
/// UNAVAILABLE, and no data (none, or only null fields).
fn only_unavailable(r: &async_graphql::Response) -> bool {
    use async_graphql::Value;
    let code = Value::from("UNAVAILABLE");
    !r.errors.is_empty()
        && r.errors.iter().all(|e| {
            e.extensions
                .as_ref()
                .and_then(|x| x.get("code"))
                .is_some_and(|c| *c == code)
        })
        && match &r.data {
            Value::Null => true,
            Value::Object(fields) => fields.values().all(|v| *v == Value::Null),
            _ => false,
        }
}

/// Sends an answer with its caching headers: `clean` (no errors) anonymous GETs as public
/// with an ETag (304 when the request's `If-None-Match` names it), everything else private.
fn respond(
    status: StatusCode,
    content_type: &'static str,
    mut headers: HeaderMap,
    json: Bytes,
    caching: Caching,
    clean: bool,
) -> Response {
    let public = clean && matches!(caching, Caching::Public(_));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if public {
            PUBLIC_MAX_AGE
        } else {
            "private, no-store"
        }),
    );
    // Who asked changes the answer: a shared cache keys on it (and keeps only anonymous ones).
    headers.insert(
        header::VARY,
        HeaderValue::from_static("Authorization, Cookie"),
    );
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if public && let Caching::Public(if_none_match) = caching {
        let tag = format!("\"{}\"", &sha256_hex(&json)[..32]);
        if let Ok(value) = HeaderValue::from_str(&tag) {
            headers.insert(header::ETAG, value);
        }
        if if_none_match.is_some_and(|v| v.as_bytes() == tag.as_bytes()) {
            headers.remove(header::CONTENT_TYPE);
            return (StatusCode::NOT_MODIFIED, headers).into_response();
        }
    }
    (status, headers, json).into_response()
}

/// POST runs queries and mutations, single or batched, sent as JSON.
pub(super) async fn post(
    State(st): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let request_id = caller.request_id.clone();
    let request_id = request_id.as_str();
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
                request_id,
            );
        }
        Err(rejection) => {
            return gql_error(
                rejection.status(),
                "BAD_USER_INPUT",
                &format!("the request body could not be read: {rejection}"),
                request_id,
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
            request_id,
        );
    }
    let mut batch: BatchRequest = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => {
            return gql_error(
                StatusCode::BAD_REQUEST,
                "BAD_USER_INPUT",
                &format!("the body is not a GraphQL request: {e}"),
                request_id,
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
                request_id,
            );
        }
        if v.is_empty() {
            return gql_error(
                StatusCode::BAD_REQUEST,
                "BAD_USER_INPUT",
                "the batch is empty",
                request_id,
            );
        }
    }
    let resolved = match &mut batch {
        BatchRequest::Single(r) => st.persisted.resolve(r, request_id),
        BatchRequest::Batch(v) => v
            .iter_mut()
            .try_for_each(|r| st.persisted.resolve(r, request_id)),
    };
    if let Err(refused) = resolved {
        return *refused;
    }
    if let Some(refused) = caller.csrf_refusal(&batch) {
        return refused;
    }
    let answer = async {
        match caller.authenticate(&st.services).await {
            Ok(rc) => {
                let graphql_response = accepts_graphql_response(&headers);
                execute(&st, rc, batch, graphql_response, Caching::Private).await
            }
            Err(refused) => refused,
        }
    };
    while_available(&st, request_id, answer).await
}

/// The JSON of query parameter `name`, if given; BAD_USER_INPUT when it is not JSON.
fn json_param(
    params: &HashMap<String, String>,
    name: &str,
    request_id: &str,
) -> Result<Option<serde_json::Value>, Box<Response>> {
    params
        .get(name)
        .map(|v| serde_json::from_str(v))
        .transpose()
        .map_err(|_| {
            Box::new(gql_error(
                StatusCode::BAD_REQUEST,
                "BAD_USER_INPUT",
                &format!("{name} is not JSON"),
                request_id,
            ))
        })
}

/// GET runs queries (never mutations), also named by a persisted query's hash; without a
/// `query` or `extensions` parameter it is the playground. Anonymous answers without
/// errors may be kept by shared caches ([`Caching::Public`]).
pub(super) async fn get(
    State(st): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let (query, extensions) = (params.get("query"), params.get("extensions"));
    if query.is_none() && extensions.is_none() {
        return super::assets::playground().into_response();
    }
    let request_id = caller.request_id.clone();
    let request_id = request_id.as_str();
    let mut req = Request::new(query.cloned().unwrap_or_default());
    match json_param(&params, "variables", request_id) {
        Ok(Some(vars)) => req = req.variables(async_graphql::Variables::from_json(vars)),
        Ok(None) => {}
        Err(refused) => return *refused,
    }
    match json_param(&params, "extensions", request_id) {
        Ok(Some(ext)) => req.extensions = serde_json::from_value(ext).unwrap_or_default(),
        Ok(None) => {}
        Err(refused) => return *refused,
    }
    if let Err(refused) = st.persisted.resolve(&mut req, request_id) {
        return *refused;
    }
    if is_mutation(&req.query) {
        return gql_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "BAD_USER_INPUT",
            "mutations are only accepted over POST",
            request_id,
        );
    }
    if let Some(op) = params.get("operationName") {
        req = req.operation_name(op.clone());
    }
    let caching = Caching::Public(headers.get(header::IF_NONE_MATCH).cloned());
    let answer = async {
        match caller.authenticate(&st.services).await {
            Ok(rc) => {
                let graphql_response = accepts_graphql_response(&headers);
                execute(
                    &st,
                    rc,
                    BatchRequest::Single(req),
                    graphql_response,
                    caching,
                )
                .await
            }
            Err(refused) => refused,
        }
    };
    while_available(&st, request_id, answer).await
}
