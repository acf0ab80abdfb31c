//! The one error type of Verdict's domain. The GraphQL layer maps it once to an error with
//! `extensions.code` (see `graphql::error`).

use sea_orm::DbErr;

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
            AppError::Db(e) if is_unique_violation(e) => "CONFLICT",
            AppError::Db(_) | AppError::Internal(_) => "INTERNAL",
        }
    }
}

/// A unique-constraint violation that slipped past the service's own checks (two requests
/// racing for the same name) is a conflict, not an internal error.
pub fn is_unique_violation(e: &DbErr) -> bool {
    matches!(
        e.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}
