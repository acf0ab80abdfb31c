//! The one error type of Verdict's domain. The GraphQL layer maps it once to an error with
//! `extensions.code` (see `graphql::error`).

use sea_orm::sqlx::Error as Sqlx;
use sea_orm::{DbErr, RuntimeErr};

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("sign in first")]
    Unauthenticated,
    #[error("wrong email or password")]
    BadCredentials,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("{field}: {message}")]
    BadInput { field: String, message: String },
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    WindowClosed(String),
    #[error("too many attempts; retry in {retry_after} seconds")]
    RateLimited { retry_after: u64 },
    #[error("{0}")]
    TooComplex(String),
    #[error("database: {0}")]
    Db(#[from] DbErr),
    /// The database cannot serve the request right now, found before asking it (the
    /// process knows it does not answer): the detail is for the log.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    #[error("{0}")]
    Internal(String),
}

pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    pub fn bad_input(field: impl Into<String>, message: impl Into<String>) -> Self {
        AppError::BadInput {
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        AppError::Forbidden(message.into())
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        AppError::Conflict(message.into())
    }

    /// The stable code clients branch on (`extensions.code`).
    pub fn code(&self) -> &'static str {
        match self {
            AppError::Unauthenticated | AppError::BadCredentials => "UNAUTHENTICATED",
            AppError::Forbidden(_) => "FORBIDDEN",
            AppError::NotFound(_) => "NOT_FOUND",
            AppError::BadInput { .. } => "BAD_USER_INPUT",
            AppError::Conflict(_) => "CONFLICT",
            AppError::WindowClosed(_) => "WINDOW_CLOSED",
            AppError::RateLimited { .. } => "RATE_LIMITED",
            AppError::TooComplex(_) => "QUERY_TOO_COMPLEX",
            AppError::Db(e) if is_unique_violation(e) || is_race_lost(e) => "CONFLICT",
            AppError::Db(e) if is_unavailable(e) => "UNAVAILABLE",
            AppError::Unavailable(_) => "UNAVAILABLE",
            AppError::Db(_) | AppError::Internal(_) => "INTERNAL",
        }
    }

    /// Whether the same write, begun again, may go through: the database could not serve
    /// (UNAVAILABLE), or PostgreSQL ended the transaction because it raced another one
    /// ([`is_race_lost`]). Either way nothing was written. For work with no client to send
    /// the request again (a calibration job); a request answers with the code instead.
    pub fn is_transient(&self) -> bool {
        match self {
            AppError::Db(e) => is_race_lost(e) || is_unavailable(e),
            AppError::Unavailable(_) => true,
            _ => false,
        }
    }
}

/// How long a client is told to wait before retrying a request refused with UNAVAILABLE
/// (`extensions.retryAfter`, the `Retry-After` header): a pace for retries, not a promise
/// that the database is back by then.
pub const UNAVAILABLE_RETRY_AFTER: u64 = 5;

/// A unique-constraint violation that slipped past the service's own checks (two requests
/// racing for the same name) is a conflict, not an internal error.
pub fn is_unique_violation(e: &DbErr) -> bool {
    matches!(
        e.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}

/// A transaction PostgreSQL ended because it raced another one: `40001` (a serialization
/// failure) or `40P01` (chosen as a deadlock's victim: two writes locking the same rows in
/// opposite orders, as an erasure and a comment edit can). It was rolled back, so nothing
/// was written, and the same request sent again goes through: CONFLICT with a sentence
/// that says so (`graphql::error`), never INTERNAL. SQLite has no such state (one writer
/// at a time; a writer that waited too long is UNAVAILABLE).
pub fn is_race_lost(e: &DbErr) -> bool {
    let Some(Sqlx::Database(d)) = sqlx_error(e) else {
        return false;
    };
    d.try_downcast_ref::<sea_orm::sqlx::postgres::PgDatabaseError>()
        .is_some_and(|pg| postgres_race(pg.code()))
}

/// PostgreSQL SQLSTATEs of a transaction that lost a race (see [`is_race_lost`]).
fn postgres_race(sqlstate: &str) -> bool {
    matches!(sqlstate, "40001" | "40P01")
}

/// The driver's error inside a statement's or connection's error.
fn sqlx_error(e: &DbErr) -> Option<&Sqlx> {
    match e {
        DbErr::Conn(RuntimeErr::SqlxError(e))
        | DbErr::Exec(RuntimeErr::SqlxError(e))
        | DbErr::Query(RuntimeErr::SqlxError(e)) => Some(e.as_ref()),
        _ => None,
    }
}

/// A database error that says the database cannot serve anyone right now, not that the
/// request was wrong: it cannot be reached, or it cannot write. Read from the driver's typed
/// error, never from its message:
///
/// - no connection: the pool timed out or is closed, the socket failed (refused, reset,
///   closed: `Io`), TLS failed, a driver worker crashed;
/// - PostgreSQL SQLSTATE classes `08` (connection exception), `53` (insufficient
///   resources: disk full, out of memory, too many connections), `58` (system error: I/O),
///   and `57P01`-`57P03` (shut down by an administrator, crashed, not accepting connections
///   yet), `25006` (a read-only transaction: a standby or a read-only database);
/// - SQLite result codes `SQLITE_BUSY` (the write lock was not had within the busy
///   timeout), `SQLITE_NOMEM`, `SQLITE_READONLY`, `SQLITE_IOERR`, `SQLITE_FULL`,
///   `SQLITE_CANTOPEN`, `SQLITE_PROTOCOL` (the primary code of an extended one).
///
/// Everything else (a constraint, a corrupt file, a bug) stays INTERNAL or CONFLICT.
pub fn is_unavailable(e: &DbErr) -> bool {
    if matches!(e, DbErr::ConnectionAcquire(_)) {
        return true;
    }
    let Some(sqlx) = sqlx_error(e) else {
        return false;
    };
    match sqlx {
        Sqlx::Io(_)
        | Sqlx::Tls(_)
        | Sqlx::PoolTimedOut
        | Sqlx::PoolClosed
        | Sqlx::WorkerCrashed => true,
        Sqlx::Database(d) => {
            let Some(code) = d.code() else {
                return false;
            };
            if d.try_downcast_ref::<sea_orm::sqlx::postgres::PgDatabaseError>()
                .is_some()
            {
                postgres_unavailable(&code)
            } else if d
                .try_downcast_ref::<sea_orm::sqlx::sqlite::SqliteError>()
                .is_some()
            {
                code.parse::<i64>()
                    .is_ok_and(|c| sqlite_unavailable(c & 0xff))
            } else {
                false
            }
        }
        _ => false,
    }
}

/// PostgreSQL SQLSTATEs of a database that cannot serve right now (see [`is_unavailable`]).
fn postgres_unavailable(sqlstate: &str) -> bool {
    let class = sqlstate.get(..2).unwrap_or_default();
    matches!(class, "08" | "53" | "58") || matches!(sqlstate, "57P01" | "57P02" | "57P03" | "25006")
}

/// SQLite primary result codes of a database that cannot serve right now.
fn sqlite_unavailable(primary: i64) -> bool {
    const BUSY: i64 = 5;
    const NOMEM: i64 = 7;
    const READONLY: i64 = 8;
    const IOERR: i64 = 10;
    const FULL: i64 = 13;
    const CANTOPEN: i64 = 14;
    const PROTOCOL: i64 = 15;
    matches!(
        primary,
        BUSY | NOMEM | READONLY | IOERR | FULL | CANTOPEN | PROTOCOL
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_outage_states_are_unavailable_and_others_are_not() {
        for s in [
            "08006", "08001", "57P01", "57P02", "57P03", "53100", "53300", "58030", "25006",
        ] {
            assert!(postgres_unavailable(s), "{s}");
        }
        for s in [
            "23505", "23503", "40001", "40P01", "42P01", "XX000", "57014",
        ] {
            assert!(!postgres_unavailable(s), "{s}");
        }
        for s in ["40001", "40P01"] {
            assert!(postgres_race(s) && !postgres_unavailable(s), "{s}");
        }
        assert!(!postgres_race("23505") && !postgres_race("40002"));
    }

    #[test]
    fn sqlite_full_read_only_io_and_busy_are_unavailable_and_corruption_is_not() {
        // Primary codes, and extended ones by their low byte.
        for c in [
            5,
            7,
            8,
            10,
            13,
            14,
            15,
            8 | (1 << 8),
            10 | (3 << 8),
            5 | (1 << 8),
        ] {
            assert!(sqlite_unavailable(c & 0xff), "{c}");
        }
        // SQLITE_ERROR, CONSTRAINT, CORRUPT, NOTADB, MISMATCH
        for c in [1, 19, 11, 26, 20, 19 | (8 << 8)] {
            assert!(!sqlite_unavailable(c & 0xff), "{c}");
        }
    }

    #[test]
    fn lost_connections_are_unavailable() {
        use sea_orm::sqlx::Error as Sqlx;
        use std::sync::Arc;
        let io = || {
            Sqlx::Io(std::io::Error::new(
                std::io::ErrorKind::ConnectionRefused,
                "refused",
            ))
        };
        let wrap = |e: Sqlx| RuntimeErr::SqlxError(Arc::new(e));
        assert!(is_unavailable(&DbErr::Conn(wrap(io()))));
        assert!(is_unavailable(&DbErr::Query(wrap(io()))));
        assert!(is_unavailable(&DbErr::Exec(wrap(Sqlx::PoolTimedOut))));
        assert!(is_unavailable(&DbErr::ConnectionAcquire(
            sea_orm::ConnAcquireErr::Timeout
        )));
        assert!(!is_unavailable(&DbErr::Query(wrap(Sqlx::RowNotFound))));
        assert!(!is_unavailable(&DbErr::Custom("no".into())));
        assert!(!is_unavailable(&DbErr::Conn(RuntimeErr::Internal(
            "cannot connect".into()
        ))));
    }
}
