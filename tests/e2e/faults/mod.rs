//! Faults (issue 13): the server killed with SIGKILL in the middle of a mixed write load,
//! several times over, loses no write it acknowledged and keeps none it did not attempt,
//! and its audit chain verifies after every restart (SQLite in WAL mode and PostgreSQL).
//! The first test's load is projects (creations, submissions, edits); the second's is
//! judging and results (review saves and submissions, calibration runs, background
//! calibration jobs, publications), killed also while a job computes and while a run is
//! being computed for a request.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{
    Arc, Mutex,
    atomic::{AtomicBool, Ordering},
};
use std::time::{Duration, Instant};

use chrono::Utc;
use sea_orm::{ConnectionTrait, Database, Statement};
use serde_json::{Value, json};
use verdict::crypto::sha256_hex;
use verdict::crypto::signing::PublicKey;

use crate::harness::{App, op, rfc3339, str_at, unique};

mod writes;
use writes::*;
mod mixed;
use mixed::*;
mod checks;
use checks::*;
mod sequencing;
use sequencing::*;

e2e! {
    acknowledged_writes_survive_kill_9_under_load,
    reviews_calibration_and_publication_survive_kill_9,
}

e2e_postgres! {
    a_write_killed_before_its_entry_is_sequenced_gets_it_after_restart,
}

/// Writers of each kind per crash: editors retitle their own project, creators add a
/// project and submit it.
const WRITERS: usize = 3;
/// Crashes, each after more acknowledged writes than the last.
const CRASHES: [usize; 3] = [2, 10, 25];

/// What the writers were told had happened, and what they tried.
#[derive(Default)]
struct Log {
    /// Editor k: the versions acknowledged and the highest one sent.
    edit_acked: BTreeMap<usize, u64>,
    edit_sent: BTreeMap<usize, u64>,
    /// Titles of projects acknowledged as created, and every title sent.
    created: BTreeSet<String>,
    create_sent: BTreeSet<String>,
    /// Titles of projects acknowledged as submitted.
    submitted: BTreeSet<String>,
}

impl Log {
    fn acks(&self) -> usize {
        self.edit_acked.values().sum::<u64>() as usize + self.created.len() + self.submitted.len()
    }
}

/// How a request that may meet a dead server ended.
enum Answer {
    /// A success: the write is acknowledged.
    Done(Value),
    /// A refusal, with its code: nothing may have been written.
    Refused(String),
    /// No answer (the connection failed or the response was cut): the write may or may not
    /// have committed.
    Down,
}

/// One GraphQL request that may meet a dead server.
async fn attempt(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    query: &str,
    vars: Value,
) -> Answer {
    let Ok(resp) = http
        .post(format!("{base}/graphql"))
        .bearer_auth(token)
        .json(&json!({ "query": query, "variables": vars }))
        .send()
        .await
    else {
        return Answer::Down;
    };
    let Ok(body) = resp.json::<Value>().await else {
        return Answer::Down;
    };
    if body.get("errors").is_some() {
        let code = body
            .pointer("/errors/0/extensions/code")
            .and_then(Value::as_str)
            .unwrap_or("no code");
        return Answer::Refused(format!("{code}: {}", body["errors"][0]["message"]));
    }
    match body.get("data") {
        Some(data) => Answer::Done(data.clone()),
        None => Answer::Down,
    }
}

/// [`attempt`], for writers that only tell an acknowledgement from anything else: `None`
/// when the write was not acknowledged.
async fn send(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    query: &str,
    vars: Value,
) -> Option<Value> {
    match attempt(http, base, token, query, vars).await {
        Answer::Done(data) => Some(data),
        Answer::Refused(_) | Answer::Down => None,
    }
}
