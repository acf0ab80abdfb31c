//! What runs around each operation, each check refusing with its `extensions.code` where
//! it is checked, never by matching message text afterwards. One extension, [`Edge`], runs
//! them all (see [`edge`] for why one):
//!
//! - `limits`: depth, complexity, directives per field and nesting; parse and validation
//!   errors are the caller's (BAD_USER_INPUT).
//! - `timeout`: the per-request time budget.
//! - `credential`: on a websocket, each operation re-checks the connection's credential
//!   and loads access fresh.
//! - `observe`: each operation's name and outcome to the metrics and the request log, and
//!   the request id into every error's `extensions.requestId`.
//!
//! [`Edge`] is installed by [`super::schema`], so the HTTP handlers, the websocket and the
//! in-process tests get the same limits.

use async_graphql::{Pos, ServerError};

use crate::error::AppError;

mod credential;
pub mod edge;
mod limits;
mod observe;
mod timeout;

pub use edge::Edge;
pub use limits::MAX_NESTING;

/// The code of errors the caller caused: a syntax error, an unknown field, a variable of
/// the wrong type, an unknown operation name.
const BAD_USER_INPUT: &str = "BAD_USER_INPUT";

/// The code of an error raised during execution without one of Verdict's codes (Verdict's
/// own resolvers always set one, through `graphql::error`).
const INTERNAL: &str = "INTERNAL";

/// A limit's refusal: QUERY_TOO_COMPLEX, with the message the client sees.
fn too_complex(message: String, pos: Option<Pos>) -> ServerError {
    let err = AppError::TooComplex(message);
    let mut e = ServerError::new(err.to_string(), pos);
    set_code(&mut e, err.code());
    e
}

/// Gives `err` the code `code` unless it already carries one.
fn set_code(err: &mut ServerError, code: &str) {
    let ext = err.extensions.get_or_insert_with(Default::default);
    if ext.get("code").is_none() {
        ext.set("code", code);
    }
}
