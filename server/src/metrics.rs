//! What Verdict measures, served as Prometheus text by `GET /metrics` (`http::observe`).
//!
//! The recorder is the `metrics` crate's, installed once per process by [`install`]
//! (`verdict serve` does); without it (the in-process tests, the other subcommands) every
//! measurement here is a no-op. Work per request is a few atomic updates and no database
//! query: what lives in the database is read when the endpoint is scraped ([`sample`]).
//!
//! | metric | kind | labels | what |
//! | --- | --- | --- | --- |
//! | `verdict_http_request_duration_seconds` | histogram | `route`, `status` | every HTTP request: the matched route (`other` for the web client's pages and unknown paths) and the status class (`2xx`, ...); its `_count` counts requests |
//! | `verdict_graphql_requests_total` | counter | `operation`, `outcome` | GraphQL operations over HTTP and websocket, counted when they end: `outcome` is `ok` or the first error's `extensions.code` |
//! | `verdict_graphql_request_duration_seconds` | histogram | `operation` | how long queries and mutations took (subscriptions have no duration) |
//! | `verdict_websocket_connections_active` | gauge | | open `/graphql/ws` connections |
//! | `verdict_graphql_subscriptions_active` | gauge | | subscriptions running (validated and not yet ended) |
//! | `verdict_db_pool_connections` | gauge | `state` (`in_use`, `idle`) | the connection pool at scrape time |
//! | `verdict_db_pool_max_connections` | gauge | | the pool's size limit |
//! | `verdict_outbox_pending` | gauge | `queue` (`mail`, `webhook`) | messages and webhook deliveries waiting to be sent, at scrape time |
//! | `verdict_outbox_oldest_pending_age_seconds` | gauge | `queue` | how long the oldest of them has waited (0 when none) |
//! | `verdict_audit_head_seq` | gauge | | the audit chain's head seq (its length), at scrape time |
//! | `verdict_calibration_run_duration_seconds` | histogram | | computing a calibration run (`runCalibration`, `startCalibration`), each attempt |
//! | `verdict_build_info` | gauge | `version` | always 1 |
//!
//! Operation names are chosen by clients, so they are bounded before they become labels
//! ([`operation_label`]): a name of `[A-Za-z0-9_]`, 1 to 64 characters, among the first
//! [`MAX_OPERATIONS`] distinct names this process saw; anything else is `other`, and an
//! operation without a name is `anonymous`. Outcomes are the contract's codes or `OTHER`.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use async_graphql::ServerError;
use axum::http::StatusCode;
use entity::{outbox_message, webhook_delivery};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use sea_orm::{
    ColumnTrait, DatabaseConnectionType, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use crate::db::Db;
use crate::error::{AppError, AppResult};

pub const HTTP_DURATION: &str = "verdict_http_request_duration_seconds";
pub const GRAPHQL_REQUESTS: &str = "verdict_graphql_requests_total";
pub const GRAPHQL_DURATION: &str = "verdict_graphql_request_duration_seconds";
pub const WEBSOCKETS: &str = "verdict_websocket_connections_active";
pub const SUBSCRIPTIONS: &str = "verdict_graphql_subscriptions_active";
pub const WEBSOCKET_CLOSES: &str = "verdict_websocket_closes_total";
pub const POOL_CONNECTIONS: &str = "verdict_db_pool_connections";
pub const POOL_MAX: &str = "verdict_db_pool_max_connections";
pub const OUTBOX_PENDING: &str = "verdict_outbox_pending";
pub const OUTBOX_OLDEST: &str = "verdict_outbox_oldest_pending_age_seconds";
pub const AUDIT_HEAD: &str = "verdict_audit_head_seq";
pub const CALIBRATION_DURATION: &str = "verdict_calibration_run_duration_seconds";
pub const BUILD_INFO: &str = "verdict_build_info";

/// Distinct operation names kept as labels; later new names count as `other`.
pub const MAX_OPERATIONS: usize = 200;

/// Longest operation name kept as a label.
const MAX_NAME: usize = 64;

/// Request latencies: 1 ms to 30 s (the default request timeout).
const LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Calibration runs: 10 ms (a small event) to 2 minutes (tens of thousands of projects).
const CALIBRATION_BUCKETS: &[f64] = &[0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 120.0];

/// The codes an outcome may be; any other code counts as `OTHER`.
const CODES: &[&str] = &[
    "UNAUTHENTICATED",
    "FORBIDDEN",
    "NOT_FOUND",
    "BAD_USER_INPUT",
    "CONFLICT",
    "WINDOW_CLOSED",
    "RATE_LIMITED",
    "QUERY_TOO_COMPLEX",
    "INTERNAL",
    "UNAVAILABLE",
    "PERSISTED_QUERY_NOT_FOUND",
];

/// Installs the process's recorder, once; later calls return the same handle.
pub fn install() -> AppResult<PrometheusHandle> {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    if let Some(h) = HANDLE.get() {
        return Ok(h.clone());
    }
    let failed = |e: &dyn std::fmt::Display| AppError::Internal(format!("metrics recorder: {e}"));
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.into()), LATENCY_BUCKETS)
        .and_then(|b| {
            b.set_buckets_for_metric(Matcher::Full(GRAPHQL_DURATION.into()), LATENCY_BUCKETS)
        })
        .and_then(|b| {
            b.set_buckets_for_metric(
                Matcher::Full(CALIBRATION_DURATION.into()),
                CALIBRATION_BUCKETS,
            )
        })
        .map_err(|e| failed(&e))?
        .install_recorder()
        .map_err(|e| failed(&e))?;
    describe();
    ::metrics::gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
    // Shown from the first scrape, before anything opened.
    ::metrics::gauge!(WEBSOCKETS).set(0.0);
    ::metrics::gauge!(SUBSCRIPTIONS).set(0.0);
    Ok(HANDLE.get_or_init(|| handle).clone())
}

/// Keeps the recorder's memory bounded: histogram observations are kept raw until they are
/// folded into their buckets, which a scrape does, and so does this task every few seconds
/// when nobody scrapes. It also publishes the `# HELP` lines.
pub async fn upkeep(handle: PrometheusHandle) {
    let mut every = tokio::time::interval(Duration::from_secs(5));
    loop {
        every.tick().await;
        handle.run_upkeep();
    }
}

/// The `# HELP` lines.
fn describe() {
    use ::metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_histogram!(
        HTTP_DURATION,
        Unit::Seconds,
        "HTTP requests by matched route and status class"
    );
    describe_counter!(
        GRAPHQL_REQUESTS,
        "GraphQL operations by operation name and outcome (ok or the error code)"
    );
    describe_histogram!(
        GRAPHQL_DURATION,
        Unit::Seconds,
        "GraphQL queries and mutations by operation name"
    );
    describe_gauge!(WEBSOCKETS, "open /graphql/ws connections");
    describe_gauge!(SUBSCRIPTIONS, "GraphQL subscriptions running");
    describe_counter!(
        WEBSOCKET_CLOSES,
        "websockets the server closed, by close code: 1001 shutting down, 1009 a message too \
         big, 1013 too slow to read or the database away, 4403 access revoked, 44xx the \
         GraphQL protocol's own"
    );
    describe_gauge!(
        POOL_CONNECTIONS,
        "database pool connections by state, at scrape time"
    );
    describe_gauge!(POOL_MAX, "database pool size limit");
    describe_gauge!(
        OUTBOX_PENDING,
        "mail messages and webhook deliveries waiting, at scrape time"
    );
    describe_gauge!(
        OUTBOX_OLDEST,
        Unit::Seconds,
        "age of the oldest waiting message or delivery, at scrape time"
    );
    describe_gauge!(AUDIT_HEAD, "the audit chain's head seq, at scrape time");
    describe_histogram!(
        CALIBRATION_DURATION,
        Unit::Seconds,
        "computing one calibration run"
    );
    describe_gauge!(BUILD_INFO, "the running version");
}

/// The label of a client-chosen operation name (see the module documentation).
pub fn operation_label(name: Option<&str>) -> String {
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let Some(name) = name else {
        return "anonymous".into();
    };
    let well_formed = (1..=MAX_NAME).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !well_formed {
        return "other".into();
    }
    let mut seen = SEEN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if seen.contains(name) || (seen.len() < MAX_OPERATIONS && seen.insert(name.to_owned())) {
        name.to_owned()
    } else {
        "other".into()
    }
}

/// The outcome of a response with `errors`: `ok`, or the first error's code.
pub fn outcome(errors: &[ServerError]) -> &'static str {
    let Some(first) = errors.first() else {
        return "ok";
    };
    let code = first.extensions.as_ref().and_then(|e| match e.get("code") {
        Some(async_graphql::Value::String(c)) => Some(c.as_str()),
        _ => None,
    });
    code.and_then(|c| CODES.iter().find(|known| **known == c).copied())
        .unwrap_or("OTHER")
}

/// One GraphQL operation ended; `elapsed` for queries and mutations.
pub fn graphql_request(operation: &str, outcome: &'static str, elapsed: Option<Duration>) {
    ::metrics::counter!(GRAPHQL_REQUESTS, "operation" => operation.to_owned(), "outcome" => outcome)
        .increment(1);
    if let Some(elapsed) = elapsed {
        ::metrics::histogram!(GRAPHQL_DURATION, "operation" => operation.to_owned())
            .record(elapsed.as_secs_f64());
    }
}

/// One HTTP request was answered.
pub fn http_request(route: &str, status: StatusCode, elapsed: Duration) {
    let class = match status.as_u16() {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    };
    ::metrics::histogram!(HTTP_DURATION, "route" => route.to_owned(), "status" => class)
        .record(elapsed.as_secs_f64());
}

/// The server closed a websocket with `code` (a handful of codes: a bounded label).
pub fn websocket_closed(code: u16) {
    ::metrics::counter!(WEBSOCKET_CLOSES, "code" => code.to_string()).increment(1);
}

/// One calibration run was computed.
pub fn calibration_run(elapsed: Duration) {
    ::metrics::histogram!(CALIBRATION_DURATION).record(elapsed.as_secs_f64());
}

/// A gauge that counts something while it is open: up by one when started, down by one
/// when dropped (however the thing ends).
pub struct Active(&'static str);

impl Active {
    pub fn start(gauge: &'static str) -> Active {
        ::metrics::gauge!(gauge).increment(1.0);
        Active(gauge)
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        ::metrics::gauge!(self.0).decrement(1.0);
    }
}

/// Reads what the gauges say about the database, at scrape time: the pool, the audit head,
/// and the mail and webhook backlogs (a count and the oldest `created_at` of each, against
/// the database's clock).
pub async fn sample(db: &Db) -> AppResult<()> {
    pool(db);
    let conn = &db.conn;
    let head = crate::audit::head_seq(conn).await?;
    ::metrics::gauge!(AUDIT_HEAD).set(head as f64);
    let now = crate::db::now(conn).await?;
    let age = |oldest: Option<chrono::DateTime<chrono::Utc>>| {
        oldest.map_or(0.0, |t| {
            ((now - t).num_milliseconds().max(0) as f64) / 1000.0
        })
    };

    let mail = || {
        outbox_message::Entity::find()
            .filter(outbox_message::Column::Status.eq(outbox_message::Status::Pending))
    };
    let pending = mail().count(conn).await?;
    let oldest = mail()
        .select_only()
        .column(outbox_message::Column::CreatedAt)
        .order_by_asc(outbox_message::Column::CreatedAt)
        .into_tuple()
        .one(conn)
        .await?;
    ::metrics::gauge!(OUTBOX_PENDING, "queue" => "mail").set(pending as f64);
    ::metrics::gauge!(OUTBOX_OLDEST, "queue" => "mail").set(age(oldest));

    let deliveries = || {
        webhook_delivery::Entity::find()
            .filter(webhook_delivery::Column::Status.eq(webhook_delivery::DeliveryStatus::Pending))
    };
    let pending = deliveries().count(conn).await?;
    let oldest = deliveries()
        .select_only()
        .column(webhook_delivery::Column::CreatedAt)
        .order_by_asc(webhook_delivery::Column::CreatedAt)
        .into_tuple()
        .one(conn)
        .await?;
    ::metrics::gauge!(OUTBOX_PENDING, "queue" => "webhook").set(pending as f64);
    ::metrics::gauge!(OUTBOX_OLDEST, "queue" => "webhook").set(age(oldest));
    Ok(())
}

/// The pool's connections: sqlx counts those open (`size`) and those idle among them.
fn pool(db: &Db) {
    // Each arm asks for the pool of the variant it matched, so the accessors (which panic
    // on another backend) cannot.
    let (size, idle, max) = match &db.conn.inner {
        DatabaseConnectionType::SqlxSqlitePoolConnection(_) => {
            let p = db.conn.get_sqlite_connection_pool();
            (p.size(), p.num_idle(), p.options().get_max_connections())
        }
        DatabaseConnectionType::SqlxPostgresPoolConnection(_) => {
            let p = db.conn.get_postgres_connection_pool();
            (p.size(), p.num_idle(), p.options().get_max_connections())
        }
        _ => return,
    };
    let idle = idle as f64;
    ::metrics::gauge!(POOL_CONNECTIONS, "state" => "idle").set(idle);
    ::metrics::gauge!(POOL_CONNECTIONS, "state" => "in_use").set((f64::from(size) - idle).max(0.0));
    ::metrics::gauge!(POOL_MAX).set(f64::from(max));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_names_become_bounded_labels() {
        assert_eq!(operation_label(None), "anonymous");
        assert_eq!(operation_label(Some("GalleryPage")), "GalleryPage");
        assert_eq!(operation_label(Some("with space")), "other");
        assert_eq!(operation_label(Some("quote\"d")), "other");
        assert_eq!(operation_label(Some("")), "other");
        assert_eq!(operation_label(Some(&"a".repeat(65))), "other");
        assert_eq!(operation_label(Some(&"a".repeat(64))), "a".repeat(64));
        // Past the cap, a new name is `other`, and names seen before keep their label.
        for i in 0..MAX_OPERATIONS {
            operation_label(Some(&format!("Op{i}")));
        }
        assert_eq!(operation_label(Some("OneTooMany")), "other");
        assert_eq!(operation_label(Some("GalleryPage")), "GalleryPage");
    }

    #[test]
    fn outcomes_are_ok_or_a_known_code() {
        let with_code = |code: &str| {
            let mut e = ServerError::new("x", None);
            e.extensions
                .get_or_insert_with(Default::default)
                .set("code", code);
            e
        };
        assert_eq!(outcome(&[]), "ok");
        assert_eq!(outcome(&[with_code("FORBIDDEN")]), "FORBIDDEN");
        assert_eq!(outcome(&[with_code("made up by someone")]), "OTHER");
        assert_eq!(outcome(&[ServerError::new("no code", None)]), "OTHER");
    }
}
