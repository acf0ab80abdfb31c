//! Faults of the database under a running server, under load (issue 13): PostgreSQL stopped
//! (immediately, as a crash looks to its clients, then by an administrator's fast shutdown)
//! and started again; a SQLite volume that fills up; a SQLite volume that the kernel turns
//! read-only, as it does after a disk error.
//!
//! What each test holds the server to: while the database cannot serve, every refused
//! request is answered at once and cleanly (the GraphQL error UNAVAILABLE with
//! `extensions.retryAfter` and the request's id, HTTP 503 with `Retry-After`, and not a word
//! of the driver's detail), and nothing else goes wrong (no INTERNAL, no dropped
//! connection). A request the database left half-way (some fields answered before it went
//! away) keeps what it answered, as GraphQL does, with HTTP 200 and each failed field's
//! clean UNAVAILABLE error; what the database can still do goes on (SQLite reads); the process neither
//! exits nor panics and serves again by itself; no acknowledged write is lost, none that was
//! not sent appears, every row has its audit entry and every audit entry its row, and
//! `verdict audit verify` passes (SQLite: and `PRAGMA integrity_check` says ok).
//!
//! The tests are written out rather than listed in `e2e!`: each brings its own database (a
//! PostgreSQL cluster of its own, a SQLite file on a volume of its own) on one backend, and
//! keeps the `name::backend` test names the CI summary counts.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use sea_orm::{ConnectionTrait, Database, Statement};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::harness::{App, Backend, Cluster, Stop, TestDb, Volume, Ws, op, unique, ws_code};

mod outage;
use outage::*;
mod sqlite;
use sqlite::*;
mod checks;
use checks::*;
mod load;
use load::*;

mod postgres_outage_is_refused_cleanly_and_recovered_from {
    #[tokio::test(flavor = "multi_thread")]
    async fn postgres() {
        let _timer = crate::harness::Timer::start();
        super::postgres_outage().await
    }
}

mod sqlite_disk_full_refuses_writes_and_keeps_reads {
    #[tokio::test(flavor = "multi_thread")]
    async fn sqlite() {
        let _timer = crate::harness::Timer::start();
        super::sqlite_disk_full().await
    }
}

mod sqlite_read_only_volume_refuses_writes_and_keeps_reads {
    #[tokio::test(flavor = "multi_thread")]
    async fn sqlite() {
        let _timer = crate::harness::Timer::start();
        super::sqlite_read_only().await
    }
}

/// Writers, each a participant with a team of their own who creates projects and submits
/// them, one after another.
const WRITERS: usize = 3;

/// How long a writer or reader waits after a refusal before trying again (clients are told
/// 5 s; the test is impatient, but does not spin).
const BACK_OFF: Duration = Duration::from_millis(100);

/// The subscription every test keeps open through the fault.
const SUBMITTED: &str = "subscription($e: String!) { projectSubmitted(event: $e) { id title } }";

/// The public gallery, read anonymously.
const GALLERY: &str =
    "query($e: String!) { event(slug: $e) { projects(first: 5) { totalCount nodes { id } } } }";

// ---- PostgreSQL -----------------------------------------------------------------------
