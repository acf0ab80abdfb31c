//! The one mapping from [`AppError`] to a GraphQL error with `extensions.code`.
//! Internal details go to the log with the request id; the client sees only the id, in
//! the message of an internal or unavailable error and in `extensions.requestId` of every
//! error (the same id as the request's log line and its `x-request-id` header).

use async_graphql::{Error, ErrorExtensions};

use crate::error::{AppError, UNAVAILABLE_RETRY_AFTER};

/// What a client is told when the database cannot serve it (`UNAVAILABLE`).
pub fn unavailable_message(request_id: &str) -> String {
    format!(
        "the database cannot serve this request right now; retry in {UNAVAILABLE_RETRY_AFTER} \
         seconds (request id {request_id})"
    )
}

/// Converts a domain error into the error the client sees.
pub fn to_graphql(err: AppError, request_id: &str) -> Error {
    let code = err.code();
    let message = match &err {
        AppError::Db(_) | AppError::Internal(_) if code == "INTERNAL" => {
            tracing::error!(request_id, error = %err, "internal error");
            format!("internal error (request id {request_id})")
        }
        AppError::Db(_) | AppError::Unavailable(_) if code == "UNAVAILABLE" => {
            tracing::warn!(request_id, error = %err, "database unavailable");
            unavailable_message(request_id)
        }
        AppError::Db(e) if crate::error::is_race_lost(e) => {
            tracing::info!(request_id, error = %err, "transaction lost a race");
            "another request changed the same records at the same moment; nothing was \
             written: send this one again"
                .to_owned()
        }
        AppError::Db(_) => {
            tracing::info!(request_id, error = %err, "constraint conflict");
            "this conflicts with an existing record".to_owned()
        }
        other => other.to_string(),
    };
    Error::new(message).extend_with(|_, e| {
        e.set("code", code);
        e.set("requestId", request_id);
        match &err {
            AppError::BadInput { field, .. } => e.set("field", field.as_str()),
            AppError::RateLimited { retry_after } => e.set("retryAfter", *retry_after),
            _ if code == "UNAVAILABLE" => e.set("retryAfter", UNAVAILABLE_RETRY_AFTER),
            _ => {}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(err: AppError) -> (String, async_graphql::Value, String) {
        let e = to_graphql(err, "req-1");
        let ext = e.extensions.clone().unwrap_or_default();
        let code = ext
            .get("code")
            .cloned()
            .unwrap_or(async_graphql::Value::Null);
        (
            code.to_string(),
            async_graphql::Value::Object(
                ext.get("field")
                    .map(|f| {
                        [(async_graphql::Name::new("field"), f.clone())]
                            .into_iter()
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            e.message,
        )
    }

    #[test]
    fn every_variant_maps_to_its_contract_code() {
        let cases = [
            (AppError::Unauthenticated, "UNAUTHENTICATED"),
            (AppError::forbidden("x"), "FORBIDDEN"),
            (AppError::NotFound("project"), "NOT_FOUND"),
            (AppError::bad_input("title", "too long"), "BAD_USER_INPUT"),
            (AppError::conflict("x"), "CONFLICT"),
            (AppError::WindowClosed("late".into()), "WINDOW_CLOSED"),
            (AppError::RateLimited { retry_after: 7 }, "RATE_LIMITED"),
            (AppError::TooComplex("x".into()), "QUERY_TOO_COMPLEX"),
            (AppError::Internal("secret detail".into()), "INTERNAL"),
            (
                AppError::Db(sea_orm::DbErr::Custom("password=hunter2".into())),
                "INTERNAL",
            ),
            (AppError::Unavailable("no answer".into()), "UNAVAILABLE"),
            (
                AppError::Db(sea_orm::DbErr::ConnectionAcquire(
                    sea_orm::ConnAcquireErr::Timeout,
                )),
                "UNAVAILABLE",
            ),
        ];
        for (err, code) in cases {
            let (got, _, _) = ext(err);
            assert_eq!(got, format!("\"{code}\""));
        }
    }

    #[test]
    fn internal_detail_never_reaches_the_client() {
        let (_, _, msg) = ext(AppError::Db(sea_orm::DbErr::Custom(
            "password=hunter2".into(),
        )));
        assert!(!msg.contains("hunter2"));
        assert!(msg.contains("req-1"));
    }

    #[test]
    fn unavailable_says_when_to_retry_and_keeps_the_detail_in_the_log() {
        let refused = sea_orm::sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "connect to 10.0.0.7:5432 refused",
        ));
        let err = AppError::Db(sea_orm::DbErr::Conn(sea_orm::RuntimeErr::SqlxError(
            std::sync::Arc::new(refused),
        )));
        let e = to_graphql(err, "req-3");
        assert!(!e.message.contains("10.0.0.7"), "{}", e.message);
        assert!(e.message.contains("req-3"), "{}", e.message);
        let ext = e.extensions.unwrap_or_default();
        assert_eq!(
            ext.get("code").map(|v| v.to_string()),
            Some("\"UNAVAILABLE\"".into())
        );
        assert_eq!(
            ext.get("retryAfter").map(|v| v.to_string()),
            Some(UNAVAILABLE_RETRY_AFTER.to_string())
        );
    }

    #[test]
    fn every_error_names_its_request() {
        for err in [
            AppError::forbidden("x"),
            AppError::bad_input("title", "too long"),
            AppError::Internal("secret detail".into()),
        ] {
            let e = to_graphql(err, "req-7");
            let id = e.extensions.as_ref().and_then(|x| x.get("requestId"));
            assert_eq!(id.map(|v| v.to_string()), Some("\"req-7\"".into()));
        }
    }

    #[test]
    fn bad_input_names_the_field_and_rate_limit_says_when() {
        let (_, field, _) = ext(AppError::bad_input("title", "too long"));
        assert_eq!(field.to_string(), "{field: \"title\"}");
        let e = to_graphql(AppError::RateLimited { retry_after: 7 }, "r");
        let ext = e.extensions.unwrap_or_default();
        assert_eq!(
            ext.get("retryAfter").map(|v| v.to_string()),
            Some("7".into())
        );
    }

    /// A real deadlock on PostgreSQL (`VERDICT_TEST_PG_URL`, or the default local server;
    /// skipped, said on stderr, when none answers, except under `CI=true`): the victim's
    /// error, as the driver raises it, is CONFLICT with the sentence that says to send it
    /// again, never INTERNAL.
    #[tokio::test]
    async fn a_deadlock_victim_is_a_conflict_not_internal() {
        use sea_orm::{ConnectionTrait, TransactionTrait};
        let url = std::env::var("VERDICT_TEST_PG_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
        let db = match sea_orm::Database::connect(&url).await {
            Ok(db) => db,
            Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "\n*** PostgreSQL unreachable ({e}): the deadlock test passes WITHOUT RUNNING\n"
                );
                return;
            }
            Err(e) => panic!("PostgreSQL unreachable at {url} (CI=true): {e}"),
        };
        let table = format!(
            "deadlock_{}_{}",
            std::process::id(),
            chrono::Utc::now().timestamp_micros()
        );
        db.execute_unprepared(&format!(
            "CREATE TABLE {table} (id INT PRIMARY KEY); INSERT INTO {table} VALUES (1), (2)"
        ))
        .await
        .expect("create");
        let lock = |id: i32| format!("UPDATE {table} SET id = id WHERE id = {id}");
        let (a, b) = (db.begin().await.expect("a"), db.begin().await.expect("b"));
        a.execute_unprepared(&lock(1)).await.expect("a locks 1");
        b.execute_unprepared(&lock(2)).await.expect("b locks 2");
        // Each now waits for the other's row: PostgreSQL ends one of them (deadlock_timeout).
        let (to_2, to_1) = (lock(2), lock(1));
        let (ra, rb) = tokio::join!(a.execute_unprepared(&to_2), b.execute_unprepared(&to_1));
        let errors: Vec<sea_orm::DbErr> = [ra.err(), rb.err()].into_iter().flatten().collect();
        let _ = (a.rollback().await, b.rollback().await);
        let _ = db.execute_unprepared(&format!("DROP TABLE {table}")).await;
        assert_eq!(errors.len(), 1, "one victim: {errors:?}");
        let err = AppError::Db(errors.into_iter().next().expect("the victim"));
        assert_eq!(err.code(), "CONFLICT", "{err}");
        let e = to_graphql(err, "req-1");
        assert!(e.message.contains("send this one again"), "{}", e.message);
    }
}
