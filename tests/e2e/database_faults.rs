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

mod postgres_outage_is_refused_cleanly_and_recovered_from {
    #[tokio::test(flavor = "multi_thread")]
    async fn postgres() {
        super::postgres_outage().await
    }
}

mod sqlite_disk_full_refuses_writes_and_keeps_reads {
    #[tokio::test(flavor = "multi_thread")]
    async fn sqlite() {
        super::sqlite_disk_full().await
    }
}

mod sqlite_read_only_volume_refuses_writes_and_keeps_reads {
    #[tokio::test(flavor = "multi_thread")]
    async fn sqlite() {
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

async fn postgres_outage() {
    let Some(cluster) = Cluster::start().await else {
        return;
    };
    let db = Arc::new(TestDb::at(Backend::Postgres, cluster.url()));
    let mut app = App::spawn_on(db.clone(), &[]).await;
    let world = World::set_up(&app).await;
    let mut watcher = Watcher::start(&app, &world.event).await;
    // Another server process on the database, whose subscribers hear the first one's
    // commits through the audit relay (LISTEN/NOTIFY), which must listen again after each
    // restart.
    let mut sibling = app.sibling(&[]).await;
    let mut far = Watcher::start(&sibling, &world.event).await;
    // A second connection, to subscribe on while the database is away and again after.
    let mut late = app.ws(json!({})).await;
    let load = Load::start(&app, &world);
    load.until("writes acknowledged", Duration::from_secs(60), |t| {
        t.submitted.len() >= 5
    })
    .await;

    for how in [Stop::Immediate, Stop::Fast] {
        cluster.stop(how).await;
        let stopped = Instant::now();

        // Noticed within seconds, then refused at once and cleanly.
        wait_ready(&app, 503, Duration::from_secs(15)).await;
        eprintln!("[{how:?}] /readyz said 503 after {:?}", stopped.elapsed());
        refused_cleanly(&app, &world).await;
        let before = load.tally().unavailable;
        load.until("writers refused while down", Duration::from_secs(30), |t| {
            t.unavailable >= before + 2 * WRITERS
        })
        .await;
        // A new websocket whose credential cannot be checked: "try again later", not a
        // bad token. An operation on an open connection: refused, the connection kept.
        let mut fresh = app
            .ws_unacknowledged(
                json!({ "authorization": format!("Bearer {}", world.writers[0]) }),
                &[],
            )
            .await;
        let (_, code) = fresh.until_closed(Duration::from_secs(10)).await;
        assert_eq!(code, Some(1013), "[{how:?}] connection_init while down");
        late.subscribe("late", SUBMITTED, json!({ "e": world.event }))
            .await;
        let refusal = late
            .next_json(Duration::from_secs(10))
            .await
            .expect("an answer to a subscription while down");
        assert_eq!(refusal["type"], "error", "{refusal}");
        assert_eq!(refusal["id"], "late", "{refusal}");
        assert_eq!(ws_code(&refusal), "UNAVAILABLE", "{refusal}");
        assert_eq!(
            refusal["payload"][0]["extensions"]["retryAfter"], 5,
            "{refusal}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(!app.has_exited(), "[{how:?}] the server exited");
        assert!(!sibling.has_exited(), "[{how:?}] the other server exited");
        let ready = sibling.get("/readyz").await;
        assert_eq!(
            ready.status, 503,
            "[{how:?}] the other server: {}",
            ready.text
        );

        cluster.start_again().await;
        let started = Instant::now();
        wait_ready(&app, 200, Duration::from_secs(30)).await;
        let acks = load.tally().acks;
        load.until("writes acknowledged again", Duration::from_secs(30), |t| {
            t.acks >= acks + 2 * WRITERS
        })
        .await;
        eprintln!(
            "[{how:?}] down for {:?}; serving writes again {:?} after PostgreSQL was",
            started - stopped,
            started.elapsed()
        );

        // The subscription opened before the outage delivers what is submitted now.
        let submitted_now = load.tally().submitted.len();
        load.until(
            "a submission after the restart",
            Duration::from_secs(30),
            |t| t.submitted.len() > submitted_now,
        )
        .await;
        let title = load.tally().submitted_order[submitted_now].clone();
        watcher
            .wait_for(&title, Duration::from_secs(15))
            .await
            .unwrap_or_else(|| panic!("[{how:?}] the open subscription did not deliver {title}"));
        far.wait_for(&title, Duration::from_secs(15))
            .await
            .unwrap_or_else(|| {
                panic!("[{how:?}] the other process's subscription did not deliver {title}")
            });
        // ... and the connection whose subscription was refused may subscribe again.
        late.subscribe("late", SUBMITTED, json!({ "e": world.event }))
            .await;
        let next = late
            .next_json(Duration::from_secs(30))
            .await
            .expect("the resubscribed subscription delivers");
        assert_eq!(next["type"], "next", "{next}");
        assert_eq!(next["id"], "late", "{next}");
        late.send(json!({ "id": "late", "type": "complete" })).await;
        // (What was in flight when it completed may still arrive.)
        while late.next_json(Duration::from_millis(300)).await.is_some() {}
    }

    let tally = load.finish().await;
    let delivered = watcher.finish().await;
    let relayed = far.finish().await;
    tally.assert_clean();
    assert!(tally.reads > 0, "the readers read");
    assert_delivered(&tally, &delivered);
    assert_delivered(&tally, &relayed);
    assert_database_agrees(&db, &tally, &world.event).await;
    app.audit_head().await;
    assert_no_panic(&app);
    assert_no_panic(&sibling);
    let logs = app.log_lines().join("\n");
    assert!(
        logs.contains("the database does not answer")
            && logs.contains("the database answers again"),
        "the outage and the recovery are in the log:\n{logs}"
    );
    drop(sibling);
    drop(app);
    drop(cluster);
}

/// A signed-in read, an anonymous read, a mutation: each refused at once with a clean
/// UNAVAILABLE (the database is known to be away, so nobody waits for the pool).
async fn refused_cleanly(app: &App, world: &World) {
    let http = &app.http;
    let writer = world.writers[0].as_str();
    let cases: [(Option<&str>, &str, Value); 3] = [
        (None, GALLERY, json!({ "e": world.event })),
        (
            Some(writer),
            op("MyTeamProjects"),
            json!({ "event": world.event }),
        ),
        (
            Some(writer),
            op("CreateProject"),
            json!({ "event": world.event, "input": { "title": "refused", "track": world.track } }),
        ),
    ];
    for (token, query, vars) in cases {
        let asked = Instant::now();
        let answer = send(http, &app.base, token, query, vars).await;
        assert!(matches!(answer, Answer::Unavailable), "{query}: {answer:?}");
        assert!(
            asked.elapsed() < Duration::from_secs(2),
            "refused at once, not after {:?}",
            asked.elapsed()
        );
    }
}

// ---- SQLite -----------------------------------------------------------------------------

async fn sqlite_disk_full() {
    let volume = Volume::tmpfs("32m");
    let url = format!("sqlite://{}/verdict.db?mode=rwc", volume.path().display());
    let db = Arc::new(TestDb::at(Backend::Sqlite, url));
    let mut app = App::spawn_on(db.clone(), &[]).await;
    let world = World::set_up(&app).await;
    // A script's API token, first used while the disk is full: its last use cannot be
    // noted then, and its reads must go on all the same.
    let token = app.mint_token(&world.writer_emails[1]).await;
    let mut watcher = Watcher::start(&app, &world.event).await;
    let load = Load::start(&app, &world);
    load.until("writes acknowledged", Duration::from_secs(60), |t| {
        t.submitted.len() >= 5
    })
    .await;

    let filler = volume.fill();
    // The file system is full; SQLite refuses once its write-ahead log must grow (it
    // reuses what it has first).
    load.until(
        "writes refused on a full disk",
        Duration::from_secs(120),
        |t| t.unavailable >= 2 * WRITERS,
    )
    .await;
    let reads = load.tally().reads;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mutation = send(
        &app.http,
        &app.base,
        Some(&world.writers[0]),
        op("CreateProject"),
        json!({ "event": world.event, "input": { "title": "refused", "track": world.track } }),
    )
    .await;
    assert!(matches!(mutation, Answer::Unavailable), "{mutation:?}");
    reads_go_on(&app, &world, &token, &load, reads).await;
    assert!(!app.has_exited(), "the server exited");

    std::fs::remove_file(&filler).expect("free the space");
    let acks = load.tally().acks;
    load.until("writes acknowledged again", Duration::from_secs(30), |t| {
        t.acks >= acks + 4 * WRITERS
    })
    .await;
    let submitted_now = load.tally().submitted.len();
    load.until(
        "a submission after the disk was freed",
        Duration::from_secs(30),
        |t| t.submitted.len() > submitted_now,
    )
    .await;
    let title = load.tally().submitted_order[submitted_now].clone();
    watcher
        .wait_for(&title, Duration::from_secs(15))
        .await
        .unwrap_or_else(|| panic!("the open subscription did not deliver {title}"));

    let tally = load.finish().await;
    let delivered = watcher.finish().await;
    tally.assert_clean();
    assert_eq!(tally.unavailable_reads, 0, "reads are never refused");
    assert_delivered(&tally, &delivered);
    assert_database_agrees(&db, &tally, &world.event).await;
    app.audit_head().await;
    assert_integrity(&db).await;
    assert_no_panic(&app);
    drop(app);
    drop(volume);
}

async fn sqlite_read_only() {
    let volume = Volume::ext4(64);
    let url = format!("sqlite://{}/verdict.db?mode=rwc", volume.path().display());
    let db = Arc::new(TestDb::at(Backend::Sqlite, url));
    let mut app = App::spawn_on(db.clone(), &[]).await;
    let world = World::set_up(&app).await;
    let token = app.mint_token(&world.writer_emails[1]).await;
    let watcher = Watcher::start(&app, &world.event).await;
    let load = Load::start(&app, &world);
    load.until("writes acknowledged", Duration::from_secs(60), |t| {
        t.submitted.len() >= 5
    })
    .await;

    // What was acknowledged when the disk failed; a write whose commit was in flight at
    // that moment may be acknowledged and lost with the disk's unwritten pages.
    let mut durable = (BTreeSet::new(), BTreeSet::new(), 0);
    volume.turn_read_only(|| {
        let t = load.tally();
        durable = (t.created.clone(), t.submitted.clone(), t.acks);
    });
    load.until(
        "writes refused on a read-only volume",
        Duration::from_secs(30),
        |t| t.unavailable >= 2 * WRITERS,
    )
    .await;
    let reads = load.tally().reads;
    tokio::time::sleep(Duration::from_secs(2)).await;
    reads_go_on(&app, &world, &token, &load, reads).await;
    assert!(!app.has_exited(), "the server exited");

    // Only a repaired file system is writable again: stop the server (it must let go of
    // its files), `e2fsck`, mount, start it again.
    let tally = load.finish().await;
    let delivered = watcher.finish().await;
    app.terminate();
    assert_eq!(
        app.wait_exit(Duration::from_secs(30)).await,
        Some(0),
        "the server stops cleanly on a read-only volume"
    );
    assert_no_panic(&app);
    drop(app);
    let report = volume.repair();
    eprintln!("e2fsck:\n{report}");
    let app = App::spawn_on(db.clone(), &[]).await;
    tally.assert_clean();
    assert_eq!(tally.unavailable_reads, 0, "reads are never refused");
    assert_delivered(&tally, &delivered);
    // Only the writes in flight when the disk failed were acknowledged after it.
    let (created, submitted, acks) = durable;
    assert!(
        tally.acks <= acks + WRITERS,
        "{} writes acknowledged after the volume turned read-only",
        tally.acks - acks
    );
    // Everything acknowledged before the volume turned read-only is there.
    let before = Tally {
        created,
        submitted,
        create_sent: tally.create_sent.clone(),
        submit_sent: tally.submit_sent.clone(),
        ..Tally::default()
    };
    assert_database_agrees(&db, &before, &world.event).await;
    app.audit_head().await;
    assert_integrity(&db).await;
    // And the server writes again.
    let d = app
        .ok(
            Some(&world.writers[0]),
            op("CreateProject"),
            json!({ "event": world.event, "input": { "title": "after the repair", "track": world.track } }),
        )
        .await;
    assert_eq!(d["createProject"]["title"], "after the repair");
    app.audit_head().await;
    assert_no_panic(&app);
    drop(app);
    drop(volume);
}

/// While writes are refused: anonymous, signed-in and API-token reads are answered, and
/// `/readyz` says ready (a database that reads serves); the readers keep reading.
async fn reads_go_on(app: &App, world: &World, token: &str, load: &Load, reads_before: usize) {
    let http = &app.http;
    for (who, query, vars) in [
        (None, GALLERY, json!({ "e": world.event })),
        (
            Some(world.writers[0].as_str()),
            op("MyTeamProjects"),
            json!({ "event": world.event }),
        ),
        (
            Some(token),
            op("MyTeamProjects"),
            json!({ "event": world.event }),
        ),
    ] {
        let answer = send(http, &app.base, who, query, vars).await;
        assert!(matches!(answer, Answer::Data(_)), "a read: {answer:?}");
    }
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status, 200, "ready while reads work: {}", ready.text);
    assert!(
        load.tally().reads > reads_before,
        "the readers read while writes were refused"
    );
}

// ---- The people and the event ---------------------------------------------------------

struct World {
    event: String,
    track: String,
    /// The writers' session tokens (each has a team of their own).
    writers: Vec<String>,
    writer_emails: Vec<String>,
}

impl World {
    async fn set_up(app: &App) -> World {
        let admin = app.site_admin().await;
        let tag = unique();
        let event = format!("fault-{tag}");
        app.create_event(&admin, &event, 4).await;
        let track = app.create_track(&admin, &event, "Main").await;
        let mut writers = vec![];
        let mut writer_emails = vec![];
        for k in 0..WRITERS {
            let email = format!("w{k}-{tag}@example.org");
            let token = app.sign_up(&email).await;
            app.register(&token, &event).await;
            app.create_team(&token, &event, &format!("Team {k}")).await;
            writers.push(token);
            writer_emails.push(email);
        }
        World {
            event,
            track,
            writers,
            writer_emails,
        }
    }
}

// ---- The load -------------------------------------------------------------------------

/// What the writers were told and tried, what the readers got, and every answer that was
/// neither a success nor a clean UNAVAILABLE.
#[derive(Default)]
struct Tally {
    /// Titles of projects acknowledged as created, and every title sent.
    created: BTreeSet<String>,
    create_sent: BTreeSet<String>,
    /// Titles acknowledged as submitted (in order), and every submission sent.
    submitted: BTreeSet<String>,
    submitted_order: Vec<String>,
    submit_sent: BTreeSet<String>,
    /// Acknowledged writes.
    acks: usize,
    /// Writes and reads refused with a clean UNAVAILABLE (reads: also those answered in
    /// part, [`Answer::Partial`]).
    unavailable: usize,
    unavailable_reads: usize,
    /// Answers in part: some fields answered, the others failed with a clean UNAVAILABLE.
    partial: usize,
    /// Reads answered.
    reads: usize,
    /// Anything else, for the failure message.
    unexpected: Vec<String>,
}

impl Tally {
    fn assert_clean(&self) {
        assert!(
            self.unexpected.is_empty(),
            "answers that were neither a success nor a clean UNAVAILABLE ({}):\n{}",
            self.unexpected.len(),
            self.unexpected
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// Writers and readers running until [`Load::finish`].
struct Load {
    tally: Arc<Mutex<Tally>>,
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    fn start(app: &App, world: &World) -> Load {
        let tally = Arc::new(Mutex::new(Tally::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = vec![];
        for (k, token) in world.writers.iter().enumerate() {
            let (http, base, token, event, track, tally, stop) = (
                app.http.clone(),
                app.base.clone(),
                token.clone(),
                world.event.clone(),
                world.track.clone(),
                tally.clone(),
                stop.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let title = format!("w{k} #{n}");
                    lock(&tally).create_sent.insert(title.clone());
                    let vars =
                        json!({ "event": event, "input": { "title": title, "track": track } });
                    let id = match send(&http, &base, Some(&token), op("CreateProject"), vars).await
                    {
                        Answer::Data(d) => {
                            let mut t = lock(&tally);
                            t.created.insert(title.clone());
                            t.acks += 1;
                            d["createProject"]["id"].clone()
                        }
                        other => {
                            lock(&tally).note(other, "createProject");
                            tokio::time::sleep(BACK_OFF).await;
                            continue;
                        }
                    };
                    lock(&tally).submit_sent.insert(title.clone());
                    let vars = json!({ "id": id });
                    match send(&http, &base, Some(&token), op("SubmitProject"), vars).await {
                        Answer::Data(_) => {
                            let mut t = lock(&tally);
                            t.submitted.insert(title.clone());
                            t.submitted_order.push(title);
                            t.acks += 1;
                        }
                        other => {
                            lock(&tally).note(other, "submitProject");
                            tokio::time::sleep(BACK_OFF).await;
                        }
                    }
                }
            }));
        }
        // Readers: the anonymous gallery and a writer's own team.
        let reads = [
            (None, GALLERY, json!({ "e": world.event })),
            (
                Some(world.writers[WRITERS - 1].clone()),
                op("MyTeamProjects"),
                json!({ "event": world.event }),
            ),
        ];
        for (token, query, vars) in reads {
            let (http, base, tally, stop) = (
                app.http.clone(),
                app.base.clone(),
                tally.clone(),
                stop.clone(),
            );
            tasks.push(tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let answer = send(&http, &base, token.as_deref(), query, vars.clone()).await;
                    match answer {
                        Answer::Data(_) => lock(&tally).reads += 1,
                        Answer::Unavailable | Answer::Partial => {
                            {
                                let mut t = lock(&tally);
                                t.unavailable_reads += 1;
                                t.partial += usize::from(matches!(answer, Answer::Partial));
                            }
                            tokio::time::sleep(BACK_OFF).await;
                        }
                        other => lock(&tally).note(other, "read"),
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }));
        }
        Load { tally, stop, tasks }
    }

    fn tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        lock(&self.tally)
    }

    /// Waits until `done` holds of the tally; panics after `within`, saying `what`.
    async fn until(&self, what: &str, within: Duration, done: impl Fn(&Tally) -> bool) {
        let deadline = Instant::now() + within;
        loop {
            {
                let t = self.tally();
                if done(&t) {
                    return;
                }
                if Instant::now() > deadline {
                    panic!(
                        "{what}: not within {within:?} (acks {}, unavailable {}, reads {}, \
                         unexpected {:?})",
                        t.acks,
                        t.unavailable,
                        t.reads,
                        t.unexpected.iter().take(5).collect::<Vec<_>>()
                    );
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the writers and readers (each finishes its request) and returns the tally.
    async fn finish(self) -> Tally {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.tasks {
            t.await.expect("a writer or reader");
        }
        Arc::try_unwrap(self.tally)
            .ok()
            .expect("no task holds the tally")
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
    }
}

impl Tally {
    fn note(&mut self, answer: Answer, what: &str) {
        match answer {
            Answer::Data(_) => {}
            Answer::Unavailable => self.unavailable += 1,
            Answer::Partial => self.partial += 1,
            Answer::Other(text) => self.unexpected.push(format!("{what}: {text}")),
        }
    }
}

fn lock(t: &Mutex<Tally>) -> std::sync::MutexGuard<'_, Tally> {
    t.lock().unwrap_or_else(|p| p.into_inner())
}

/// How a request was answered.
#[derive(Debug)]
enum Answer {
    /// `data`, without errors.
    Data(Value),
    /// A clean UNAVAILABLE (see [`clean_unavailable`]).
    Unavailable,
    /// Data answered before the database went away, with a clean UNAVAILABLE error for
    /// each field it could not answer (HTTP 200: the answer holds data).
    Partial,
    /// Anything else: another error, a malformed UNAVAILABLE, no answer at all.
    Other(String),
}

async fn send(
    http: &reqwest::Client,
    base: &str,
    token: Option<&str>,
    query: &str,
    vars: Value,
) -> Answer {
    let mut req = http
        .post(format!("{base}/graphql"))
        .json(&json!({ "query": query, "variables": vars }));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return Answer::Other(format!("no answer: {e}")),
    };
    let status = resp.status().as_u16();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let (retry_after, request_id) = (header("retry-after"), header("x-request-id"));
    let body: Value = match resp.json().await {
        Ok(b) => b,
        Err(e) => return Answer::Other(format!("{status}, not JSON: {e}")),
    };
    if body["errors"].as_array().is_none_or(|e| e.is_empty()) {
        return match body.get("data") {
            Some(d) if !d.is_null() => Answer::Data(d.clone()),
            _ => Answer::Other(format!("{status} without data: {body}")),
        };
    }
    let partial = !no_data(&body["data"]);
    match clean_unavailable(
        status,
        retry_after.as_deref(),
        request_id.as_deref(),
        &body,
        partial,
    ) {
        Ok(()) if partial => Answer::Partial,
        Ok(()) => Answer::Unavailable,
        Err(why) => Answer::Other(format!("{why}: {status} {body}")),
    }
}

/// A clean UNAVAILABLE: every error UNAVAILABLE with `retryAfter` 5 and the request's id
/// (the `x-request-id` header); the message exactly the contract's sentence, so no driver
/// detail (an address, "connection refused", "disk full", a SQLite code) reaches the
/// client; and either no data, with HTTP 503 and `Retry-After: 5`, or (`partial`) the data
/// answered before the database went away, with HTTP 200.
fn clean_unavailable(
    status: u16,
    retry_after: Option<&str>,
    request_id: Option<&str>,
    body: &Value,
    partial: bool,
) -> Result<(), String> {
    if partial {
        if status != 200 {
            return Err(format!("HTTP {status} with data, not 200"));
        }
    } else {
        if status != 503 {
            return Err(format!("HTTP {status}, not 503"));
        }
        if retry_after != Some("5") {
            return Err(format!("Retry-After {retry_after:?}"));
        }
    }
    let id = request_id.ok_or("no x-request-id")?;
    let errors = body["errors"].as_array().ok_or("no errors")?;
    for e in errors {
        if e["extensions"]["code"] != "UNAVAILABLE" {
            return Err("an error that is not UNAVAILABLE".into());
        }
        if e["extensions"]["retryAfter"] != 5 || e["extensions"]["requestId"] != id {
            return Err("retryAfter or requestId missing".into());
        }
        let said = format!(
            "the database cannot serve this request right now; retry in 5 seconds (request id {id})"
        );
        if e["message"] != said.as_str() {
            return Err(format!(
                "the message is not the contract's: {}",
                e["message"]
            ));
        }
    }
    Ok(())
}

/// Whether `data` holds nothing: null, or only null fields.
fn no_data(data: &Value) -> bool {
    match data {
        Value::Null => true,
        Value::Object(fields) => fields.values().all(Value::is_null),
        _ => false,
    }
}

// ---- The subscription -----------------------------------------------------------------

/// An anonymous `projectSubmitted` subscription held open for the whole test: every
/// message it receives, and whether the server ever ended it.
struct Watcher {
    received: Arc<Mutex<Vec<Value>>>,
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Option<String>>,
}

impl Watcher {
    async fn start(app: &App, event: &str) -> Watcher {
        let mut ws: Ws = app.ws(json!({})).await;
        ws.subscribe("all", SUBMITTED, json!({ "e": event })).await;
        // Let the server register it before anything is submitted.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let received = Arc::new(Mutex::new(vec![]));
        let stop = Arc::new(AtomicBool::new(false));
        let (keep, halt) = (received.clone(), stop.clone());
        let task = tokio::spawn(async move {
            while !halt.load(Ordering::SeqCst) {
                let Ok(msg) =
                    tokio::time::timeout(Duration::from_millis(200), ws.stream.next()).await
                else {
                    continue;
                };
                match msg {
                    Some(Ok(Message::Text(t))) => {
                        let v: Value = serde_json::from_str(t.as_str()).unwrap_or(Value::Null);
                        if v["type"] == "ping" {
                            let pong = json!({ "type": "pong" }).to_string();
                            let _ = ws.stream.send(Message::Text(pong.into())).await;
                            continue;
                        }
                        keep.lock().unwrap_or_else(|p| p.into_inner()).push(v);
                    }
                    Some(Ok(Message::Close(frame))) => {
                        return Some(format!(
                            "the server closed the subscription's connection: {frame:?}"
                        ));
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        return Some(format!("the subscription's connection failed: {e}"));
                    }
                    None => return Some("the subscription's connection ended".into()),
                }
            }
            None
        });
        Watcher {
            received,
            stop,
            task,
        }
    }

    /// Waits until a `next` for the project titled `title` has arrived.
    async fn wait_for(&mut self, title: &str, within: Duration) -> Option<()> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            let found = self
                .received
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .any(|m| m["payload"]["data"]["projectSubmitted"]["title"] == title);
            if found {
                return Some(());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        None
    }

    /// Every message received; panics when the server ended the subscription or its
    /// connection, or sent anything but data.
    async fn finish(self) -> Vec<Value> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(ended) = self.task.await.expect("the watcher") {
            panic!("{ended}");
        }
        let received = self
            .received
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for m in &received {
            assert!(
                m["type"] == "next" && m["id"] == "all" && m["payload"]["errors"].is_null(),
                "the open subscription carried only data: {m}"
            );
        }
        received
    }
}

/// Every acknowledged submission reached the open subscription (a project may arrive
/// twice: the relay reads what it missed while PostgreSQL was away from the audit log), and
/// nothing arrived that was never submitted.
fn assert_delivered(tally: &Tally, delivered: &[Value]) {
    let titles: BTreeSet<String> = delivered
        .iter()
        .filter_map(|m| m["payload"]["data"]["projectSubmitted"]["title"].as_str())
        .map(str::to_string)
        .collect();
    let missed: Vec<&String> = tally.submitted.difference(&titles).collect();
    assert!(
        missed.is_empty(),
        "acknowledged submissions not delivered: {missed:?}"
    );
    let unsent: Vec<&String> = titles.difference(&tally.submit_sent).collect();
    assert!(unsent.is_empty(), "delivered, never submitted: {unsent:?}");
}

// ---- What the database holds ------------------------------------------------------------

/// The event's projects are what was acknowledged plus at most what was in flight when the
/// database went away, each once; a submission acknowledged is submitted; and every project
/// has exactly its `project.created` entry (and each submitted one its `project.submitted`)
/// and no entry is without its project: nothing half-written.
async fn assert_database_agrees(db: &TestDb, tally: &Tally, event: &str) {
    let conn = Database::connect(db.url()).await.expect("connect");
    let backend = conn.get_database_backend();
    let rows = |sql: String| {
        let conn = &conn;
        async move {
            conn.query_all_raw(Statement::from_string(backend, sql))
                .await
                .expect("query")
        }
    };
    let projects: Vec<(String, String, String)> = rows(format!(
        "SELECT p.public_id, p.title, p.status FROM projects p JOIN events e ON e.id = p.event_id \
         WHERE e.slug = '{event}'"
    ))
    .await
    .iter()
    .map(|r| {
        (
            r.try_get_by_index(0).expect("public_id"),
            r.try_get_by_index(1).expect("title"),
            r.try_get_by_index(2).expect("status"),
        )
    })
    .collect();
    let entries = |action: &'static str| {
        let rows = &rows;
        async move {
            let mut ids: Vec<String> = rows(format!(
                "SELECT object_id FROM audit_events WHERE action = '{action}'"
            ))
            .await
            .iter()
            .map(|r| r.try_get_by_index(0).expect("object_id"))
            .collect();
            ids.sort();
            ids
        }
    };
    let created_entries = entries("project.created").await;
    let submitted_entries = entries("project.submitted").await;
    let _ = conn.close().await;

    let mut by_title: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (_, title, status) in &projects {
        by_title.entry(title).or_default().push(status);
    }
    for title in &tally.created {
        assert!(
            by_title.contains_key(title.as_str()),
            "acknowledged {title} is lost"
        );
    }
    for title in &tally.submitted {
        assert_eq!(
            by_title.get(title.as_str()).map(|s| s.as_slice()),
            Some(&["submitted"][..]),
            "acknowledged submission of {title} is lost"
        );
    }
    for (title, statuses) in &by_title {
        assert!(tally.create_sent.contains(*title), "never sent: {title}");
        assert_eq!(statuses.len(), 1, "created once: {title}");
        if statuses[0] == "submitted" {
            assert!(
                tally.submit_sent.contains(*title),
                "never submitted: {title}"
            );
        }
    }
    let mut ids: Vec<String> = projects.iter().map(|(id, _, _)| id.clone()).collect();
    ids.sort();
    assert_eq!(
        created_entries, ids,
        "one project.created entry per project, none without its project"
    );
    let mut submitted: Vec<String> = projects
        .iter()
        .filter(|(_, _, s)| s == "submitted")
        .map(|(id, _, _)| id.clone())
        .collect();
    submitted.sort();
    assert_eq!(
        submitted_entries, submitted,
        "one project.submitted entry per submitted project, none without its submission"
    );
    eprintln!(
        "{} projects ({} submitted); {} acknowledged writes, {} refused with UNAVAILABLE, {} reads, \
         {} answers in part",
        projects.len(),
        submitted.len(),
        tally.acks,
        tally.unavailable,
        tally.reads,
        tally.partial
    );
}

/// `PRAGMA integrity_check` on the SQLite file says ok.
async fn assert_integrity(db: &TestDb) {
    let conn = Database::connect(db.url()).await.expect("connect");
    let rows = conn
        .query_all_raw(Statement::from_string(
            sea_orm::DbBackend::Sqlite,
            "PRAGMA integrity_check",
        ))
        .await
        .expect("integrity_check");
    let said: Vec<String> = rows
        .iter()
        .map(|r| r.try_get_by_index::<String>(0).unwrap_or_default())
        .collect();
    let _ = conn.close().await;
    assert_eq!(said, ["ok"], "PRAGMA integrity_check");
}

/// `/readyz` answers `status` within `within` (503s carry `Retry-After`).
async fn wait_ready(app: &App, status: u16, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let r = app.get("/readyz").await;
        if r.status == status {
            if status == 503 {
                assert_eq!(r.header("retry-after").as_deref(), Some("5"), "{r:?}");
            }
            return;
        }
        assert!(
            Instant::now() < deadline,
            "/readyz did not answer {status} within {within:?}: {} {}",
            r.status,
            r.text
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn assert_no_panic(app: &App) {
    let logs = app.log_lines();
    let panics: Vec<&String> = logs.iter().filter(|l| l.contains("panicked")).collect();
    assert!(panics.is_empty(), "the server panicked: {panics:?}");
}
