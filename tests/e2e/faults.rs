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
use verdict::crypto::signing::{PUBLICATION_TAG, PublicKey};

use crate::harness::{App, op, rfc3339, str_at, unique};

e2e! {
    acknowledged_writes_survive_kill_9_under_load,
    reviews_calibration_and_publication_survive_kill_9,
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

async fn acknowledged_writes_survive_kill_9_under_load(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = format!("crash-{tag}");
    app.create_event(&admin, &event, 4).await;
    let track = app.create_track(&admin, &event, "Main").await;
    let mut editors = vec![];
    let mut creators = vec![];
    for k in 0..2 * WRITERS {
        let token = app.sign_up(&format!("c{k}-{tag}@example.org")).await;
        app.register(&token, &event).await;
        app.create_team(&token, &event, &format!("Team {k}")).await;
        let project = app
            .create_project(&token, &event, &format!("edit {k} v0"), &track)
            .await;
        if k < WRITERS {
            editors.push((token, project));
        } else {
            creators.push(token);
        }
    }
    let db = app.db.clone();
    let log = Arc::new(Mutex::new(Log::default()));
    let mut app = app;
    for (cycle, after) in CRASHES.iter().enumerate() {
        let stop = Arc::new(AtomicBool::new(false));
        let before = log.lock().expect("log").acks();
        let mut tasks = vec![];
        for (k, (token, project)) in editors.iter().enumerate() {
            let (http, base, token, project, log, stop) = (
                app.http.clone(),
                app.base.clone(),
                token.clone(),
                project.clone(),
                log.clone(),
                stop.clone(),
            );
            tasks.push(tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let v = {
                        let mut l = log.lock().expect("log");
                        let v = l.edit_sent.get(&k).copied().unwrap_or(0) + 1;
                        l.edit_sent.insert(k, v);
                        v
                    };
                    let title = format!("edit {k} v{v}");
                    let vars = json!({ "id": project, "input": { "title": title } });
                    match send(&http, &base, &token, op("UpdateProject"), vars).await {
                        Some(_) => {
                            log.lock().expect("log").edit_acked.insert(k, v);
                        }
                        None => break,
                    }
                }
            }));
        }
        for (k, token) in creators.iter().enumerate() {
            let (http, base, token, event, track, log, stop) = (
                app.http.clone(),
                app.base.clone(),
                token.clone(),
                event.clone(),
                track.clone(),
                log.clone(),
                stop.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let title = format!("new {cycle}-{k}-{n}");
                    log.lock().expect("log").create_sent.insert(title.clone());
                    let vars =
                        json!({ "event": event, "input": { "title": title, "track": track } });
                    let Some(d) = send(&http, &base, &token, op("CreateProject"), vars).await
                    else {
                        break;
                    };
                    log.lock().expect("log").created.insert(title.clone());
                    let id = d["createProject"]["id"].clone();
                    if send(
                        &http,
                        &base,
                        &token,
                        op("SubmitProject"),
                        json!({ "id": id }),
                    )
                    .await
                    .is_none()
                    {
                        break;
                    }
                    log.lock().expect("log").submitted.insert(title);
                }
            }));
        }
        // Crash once the load has acknowledged `after` more writes.
        tokio::time::timeout(Duration::from_secs(60), async {
            while log.lock().expect("log").acks() < before + after {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the writers got going");
        app.kill9();
        assert_eq!(
            app.wait_exit(Duration::from_secs(10)).await,
            None,
            "killed by a signal"
        );
        stop.store(true, Ordering::SeqCst);
        for t in tasks {
            t.await.expect("a writer");
        }
        drop(app);

        app = App::spawn_on(db.clone(), &[]).await;
        // The chain verifies, and what the database holds is what was acknowledged, plus
        // at most the writes in flight at the crash.
        app.audit_head().await;
        let conn = Database::connect(db.url()).await.expect("connect");
        let backend = conn.get_database_backend();
        let rows = conn
            .query_all_raw(Statement::from_string(
                backend,
                format!(
                    "SELECT p.title, p.status FROM projects p JOIN events e ON e.id = p.event_id \
                     WHERE e.slug = '{event}'"
                ),
            ))
            .await
            .expect("read projects");
        let projects: Vec<(String, String)> = rows
            .iter()
            .map(|r| {
                (
                    r.try_get_by_index::<String>(0).expect("title"),
                    r.try_get_by_index::<String>(1).expect("status"),
                )
            })
            .collect();
        let created_entries = conn
            .query_all_raw(Statement::from_string(
                backend,
                "SELECT COUNT(*) FROM audit_events WHERE action = 'project.created'".to_owned(),
            ))
            .await
            .expect("count audit entries")[0]
            .try_get_by_index::<i64>(0)
            .expect("a count");
        let _ = conn.close().await;
        let l = log.lock().expect("log");
        for (k, acked) in &l.edit_acked {
            let title = projects
                .iter()
                .find(|(t, _)| t.starts_with(&format!("edit {k} v")))
                .map(|(t, _)| t.clone())
                .unwrap_or_else(|| panic!("editor {k}'s project is gone: {projects:?}"));
            let v: u64 = title
                .rsplit('v')
                .next()
                .and_then(|v| v.parse().ok())
                .expect("v");
            assert!(
                *acked <= v && v <= l.edit_sent[k],
                "crash {cycle}: editor {k} was told v{acked}, sent up to v{}, the database holds v{v}",
                l.edit_sent[k]
            );
        }
        let titles: BTreeSet<&str> = projects.iter().map(|(t, _)| t.as_str()).collect();
        for title in &l.created {
            assert!(
                titles.contains(title.as_str()),
                "crash {cycle}: acknowledged {title} is lost"
            );
        }
        for (title, status) in &projects {
            if title.starts_with("new ") {
                assert!(l.create_sent.contains(title), "never sent: {title}");
                assert_eq!(
                    projects.iter().filter(|(t, _)| t == title).count(),
                    1,
                    "created once: {title}"
                );
                if l.submitted.contains(title) {
                    assert_eq!(
                        status, "submitted",
                        "crash {cycle}: acknowledged submission of {title} is lost"
                    );
                }
            }
        }
        assert_eq!(
            created_entries as usize,
            projects.len(),
            "crash {cycle}: one project.created entry per project, none without its row"
        );
    }
}

// ---- reviews, calibration and publication ----------------------------------------------

/// The judged event of the second test: submitted projects, each scored by [`K`] of the
/// judges on a two-criterion rubric, with judging open.
const PROJECTS: usize = 30;
const JUDGES: usize = 8;
const K: usize = 3;
/// Judges who score under load, each on this many projects assigned to them in the setup.
const REVIEWERS: usize = 3;
const ASSIGNED: usize = 10;
/// The first reviewer submits every this many saves, then moves on to its next assignment;
/// the saves between are drafts, and so are all the other reviewers' saves. A submitted
/// review changes the calibration's inputs (a draft does not), and a run whose inputs
/// changed while it computed computes again, three times at most: so after each save of
/// a submitted review that reviewer pauses, as a judge reads the next project, and most
/// runs get stored.
const SUBMIT_EVERY: u64 = 4;
const PAUSE_AFTER_SUBMITTED: Duration = Duration::from_millis(200);
/// Draws of the runs the organizer runs and publishes, and of its background jobs; a job
/// meant to be killed while it computes draws many more.
const RUN_BOOTSTRAP: i64 = 40;
const JOB_BOOTSTRAP: i64 = 40;
const LONG_JOB_BOOTSTRAP: i64 = 2000;

/// When the server is killed.
#[derive(Clone, Copy, Debug)]
enum Crash {
    /// Once this many more writes were acknowledged.
    Acks(usize),
    /// While a background calibration job computes.
    JobComputing,
    /// While a `runCalibration` request is waiting for its run, once this many more runs
    /// were acknowledged.
    RunInFlight(usize),
}

const MIXED_CRASHES: [Crash; 4] = [
    Crash::Acks(20),
    Crash::JobComputing,
    Crash::RunInFlight(3),
    Crash::Acks(150),
];

const START_JOB: &str = "mutation($e: String!, $s: Int, $b: Int, $k: String) { startCalibration(event: $e, seed: $s, bootstrap: $b, idempotencyKey: $k) { id state } }";
/// `RunCalibration` and `PublishResults` with an idempotency key.
const RUN_KEYED: &str = "mutation($event: String!, $seed: Int, $bootstrap: Int, $key: String) { runCalibration(event: $event, seed: $seed, bootstrap: $bootstrap, idempotencyKey: $key) { id seed bootstrap lambda engineVersion inputsHash resultHash signature connected projects { rank rankLow rankHigh rawRank quality excluded project { externalId } } judges { flag offset judge { externalId } } } }";
const PUBLISH_KEYED: &str = "mutation($event: String!, $run: ID!, $key: String) { publishResults(event: $event, run: $run, final: false, idempotencyKey: $key) { version final runId } }";
const JOB_STATE: &str = "query($e: String!, $j: ID!) { event(slug: $e) { calibrationJob(id: $j) { id state stage error run { id } } } }";
/// A stored run with the selection `RunCalibration` answers with.
const STORED_RUN: &str = "query($e: String!, $r: ID!) { event(slug: $e) { calibrationRun(id: $r) { id seed bootstrap lambda engineVersion inputsHash resultHash signature connected projects { rank rankLow rankHigh rawRank quality excluded project { externalId } } judges { flag offset judge { externalId } } } } }";
const PUBLISHED: &str = "query($e: String!) { event(slug: $e) { publications { version runId final } results { version runId } } }";

/// One review save a judge sent (its comment is its label, unique across the test).
#[derive(Clone, Debug)]
struct Save {
    assignment: String,
    impact: i64,
    craft: i64,
    submit: bool,
}

impl Save {
    fn scores(&self) -> BTreeMap<String, i64> {
        BTreeMap::from([
            ("craft".to_owned(), self.craft),
            ("impact".to_owned(), self.impact),
        ])
    }
}

/// What the second test's writers sent and were told.
struct Mixed {
    /// Review saves by label (the comment sent), those acknowledged with the review and
    /// version answered, and each reviewer's next save number.
    saves_sent: BTreeMap<String, Save>,
    saves_acked: BTreeMap<String, (String, i64)>,
    next_save: BTreeMap<usize, u64>,
    /// `runCalibration` by seed: sent, and the run as answered; refusals (CONFLICT: the
    /// inputs kept changing) counted.
    runs_sent: BTreeSet<i64>,
    runs_acked: BTreeMap<i64, Value>,
    run_conflicts: usize,
    next_run_seed: i64,
    /// When the `runCalibration` request waiting now was sent.
    run_in_flight: Option<Instant>,
    /// `publishResults`: the runs sent, and the versions acknowledged with their run.
    pubs_sent: BTreeSet<String>,
    pubs_acked: BTreeMap<i64, String>,
    /// The keyed requests a crash left unanswered, to send again after the restart, and
    /// how many were.
    run_pending: Option<i64>,
    pub_pending: Option<String>,
    /// A job's seed and draws (a retry sends the same input: the key would refuse another).
    job_pending: Option<(i64, i64)>,
    retried: usize,
    /// `startCalibration` by seed: sent; acknowledged job ids with their seed; the last
    /// reading of each job that ended (DONE or FAILED) while the load watched it.
    jobs_sent: BTreeSet<i64>,
    jobs_acked: BTreeMap<String, i64>,
    jobs_ended: BTreeMap<String, Value>,
    next_job_seed: i64,
    /// A job read as computing (a stage set) that has not been seen to end.
    job_computing: Option<String>,
    /// Answers no request should have had (a refused review or publication, a job that
    /// could not start, an answer that is not what was sent).
    wrong: Vec<String>,
}

impl Default for Mixed {
    fn default() -> Self {
        Mixed {
            saves_sent: BTreeMap::new(),
            saves_acked: BTreeMap::new(),
            next_save: BTreeMap::new(),
            runs_sent: BTreeSet::new(),
            runs_acked: BTreeMap::new(),
            run_conflicts: 0,
            next_run_seed: 1_000,
            run_in_flight: None,
            pubs_sent: BTreeSet::new(),
            pubs_acked: BTreeMap::new(),
            run_pending: None,
            pub_pending: None,
            job_pending: None,
            retried: 0,
            jobs_sent: BTreeSet::new(),
            jobs_acked: BTreeMap::new(),
            jobs_ended: BTreeMap::new(),
            next_job_seed: 500_000,
            job_computing: None,
            wrong: vec![],
        }
    }
}

impl Mixed {
    fn acks(&self) -> usize {
        self.saves_acked.len()
            + self.runs_acked.len()
            + self.pubs_acked.len()
            + self.jobs_acked.len()
    }

    fn job_seed(&mut self) -> i64 {
        let seed = self.next_job_seed;
        self.next_job_seed += 1;
        self.jobs_sent.insert(seed);
        seed
    }
}

/// What every writer of the second test shares.
#[derive(Clone)]
struct Load {
    http: reqwest::Client,
    base: String,
    slug: String,
    log: Arc<Mutex<Mixed>>,
    stop: Arc<AtomicBool>,
}

impl Load {
    fn log(&self) -> std::sync::MutexGuard<'_, Mixed> {
        self.log.lock().expect("log")
    }

    async fn attempt(&self, token: &str, query: &str, vars: Value) -> Answer {
        attempt(&self.http, &self.base, token, query, vars).await
    }
}

/// The event: [`PROJECTS`] submitted projects, [`JUDGES`] judges, [`K`] submitted reviews
/// per project on the rubric impact (1-10, weight 2) and craft (1-5); judging is open.
fn judged_event(tag: &str) -> Value {
    let now = Utc::now();
    let at = |days: i64| rfc3339(now + chrono::Duration::days(days));
    let mut reviews = vec![];
    for p in 0..PROJECTS {
        for r in 0..K {
            let j = (p * K + r) % JUDGES;
            reviews.push(json!({
                "judge": format!("j{j}_{tag}"),
                "project": format!("p{p}_{tag}"),
                "scores": { "impact": 1 + (p * 3 + j) % 10, "craft": 1 + (p + j) % 5 },
                "comment": "",
                "submitted_at": at(0),
            }));
        }
    }
    json!({
        "format": "verdict.event.v1",
        "event": {
            "external_id": format!("evt_{tag}"), "slug": format!("crashmix-{tag}"), "name": "Crash",
            "submissions_open": at(-3), "submissions_close": at(-2),
            "judging_open": at(-1), "judging_close": at(1),
            "voting_open": null, "voting_close": null, "reviews_per_project": K, "max_team_size": 3
        },
        "tracks": [ { "external_id": format!("trk_{tag}"), "name": "Only track" } ],
        "people": (0..JUDGES).map(|j| json!({
            "external_id": format!("u{j}_{tag}"), "email": format!("crash-{j}-{tag}@example.org"),
            "display_name": format!("Judge {j}")
        })).chain([json!({
            "external_id": format!("o_{tag}"), "email": format!("crash-o-{tag}@example.org"),
            "display_name": "Organizer"
        })]).collect::<Vec<_>>(),
        "organizers": [ format!("o_{tag}") ],
        "judges": (0..JUDGES).map(|j| json!({
            "external_id": format!("j{j}_{tag}"), "person": format!("u{j}_{tag}"), "tracks": []
        })).collect::<Vec<_>>(),
        "teams": (0..PROJECTS).map(|p| json!({
            "external_id": format!("t{p}_{tag}"), "name": format!("Team {p}"), "members": []
        })).collect::<Vec<_>>(),
        "projects": (0..PROJECTS).map(|p| json!({
            "external_id": format!("p{p}_{tag}"), "team": format!("t{p}_{tag}"),
            "track": format!("trk_{tag}"), "title": format!("Project {p}"), "tagline": "",
            "summary": "", "repo_url": "", "demo_url": "", "tags": [], "status": "submitted",
            "submitted_at": at(-2)
        })).collect::<Vec<_>>(),
        "criteria": [
            { "key": "impact", "name": "Impact", "weight": 2.0, "min": 1, "max": 10, "position": 1 },
            { "key": "craft", "name": "Craft", "weight": 1.0, "min": 1, "max": 5, "position": 2 }
        ],
        "reviews": reviews
    })
}

/// Judge `k` saves scores on its assignments, one request at a time: drafts, and for the
/// first judge every [`SUBMIT_EVERY`]th save a submission.
async fn review_load(load: Load, k: usize, token: String, assignments: Vec<String>) {
    let submits = k == 0;
    while !load.stop.load(Ordering::SeqCst) {
        let (label, save, submitted) = {
            let mut l = load.log();
            let next = l.next_save.entry(k).or_insert(0);
            let n = *next;
            *next += 1;
            let save = Save {
                assignment: assignments[(n / SUBMIT_EVERY) as usize % assignments.len()].clone(),
                impact: 1 + ((n * 7 + k as u64 * 3) % 10) as i64,
                craft: 1 + ((n * 3 + k as u64) % 5) as i64,
                submit: submits && n % SUBMIT_EVERY == SUBMIT_EVERY - 1,
            };
            let label = format!("w{k}-{n}");
            l.saves_sent.insert(label.clone(), save.clone());
            // Once every assignment was submitted, each save is of a submitted review.
            let submitted = submits && (save.submit || n / SUBMIT_EVERY >= ASSIGNED as u64);
            (label, save, submitted)
        };
        let vars = json!({
            "assignment": save.assignment,
            "scores": [
                { "criterion": "impact", "value": save.impact },
                { "criterion": "craft", "value": save.craft },
            ],
            "comment": label,
            "submit": save.submit,
        });
        match load.attempt(&token, op("SaveReview"), vars).await {
            Answer::Done(d) => {
                let review = &d["saveReview"];
                let answered: BTreeMap<String, i64> = review["scores"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| {
                        Some((s["criterion"].as_str()?.to_owned(), s["value"].as_i64()?))
                    })
                    .collect();
                let mut l = load.log();
                if answered != save.scores() {
                    l.wrong.push(format!(
                        "save {label} answered with {review}, sent {save:?}"
                    ));
                }
                let id = review["id"].as_str().unwrap_or_default().to_owned();
                let version = review["version"].as_i64().unwrap_or_default();
                l.saves_acked.insert(label, (id, version));
            }
            Answer::Refused(why) => load
                .log()
                .wrong
                .push(format!("save {label} refused: {why}")),
            Answer::Down => break,
        }
        if submitted {
            tokio::time::sleep(PAUSE_AFTER_SUBMITTED).await;
        }
    }
}

/// The organizer runs the calibration and publishes each run it gets, provisionally, each
/// request with an idempotency key. A request the crash left unanswered is sent again with
/// its key once the server is back, as a client retries: it must then be stored once.
async fn run_and_publish_load(load: Load, token: String) {
    while !load.stop.load(Ordering::SeqCst) {
        let pending = load.log().pub_pending.take();
        if let Some(run) = pending {
            load.log().retried += 1;
            if !publish(&load, &token, run).await {
                break;
            }
            continue;
        }
        let seed = {
            let mut l = load.log();
            let seed = match l.run_pending.take() {
                Some(seed) => {
                    l.retried += 1;
                    seed
                }
                None => {
                    let seed = l.next_run_seed;
                    l.next_run_seed += 1;
                    l.runs_sent.insert(seed);
                    seed
                }
            };
            l.run_in_flight = Some(Instant::now());
            seed
        };
        let vars = json!({
            "event": load.slug, "seed": seed, "bootstrap": RUN_BOOTSTRAP, "key": format!("run-{seed}")
        });
        let answer = load.attempt(&token, RUN_KEYED, vars).await;
        load.log().run_in_flight = None;
        let run = match answer {
            Answer::Done(d) => d["runCalibration"].clone(),
            Answer::Refused(why) if why.starts_with("CONFLICT") => {
                load.log().run_conflicts += 1;
                continue;
            }
            Answer::Refused(why) => {
                load.log().wrong.push(format!("run {seed} refused: {why}"));
                continue;
            }
            Answer::Down => {
                load.log().run_pending = Some(seed);
                break;
            }
        };
        let id = run["id"].as_str().unwrap_or_default().to_owned();
        {
            let mut l = load.log();
            l.runs_acked.insert(seed, run);
            l.pubs_sent.insert(id.clone());
        }
        if !publish(&load, &token, id).await {
            break;
        }
    }
}

/// Publishes run `id` provisionally, keyed by the run; false when the server is gone (the
/// publication is then sent again after the restart).
async fn publish(load: &Load, token: &str, id: String) -> bool {
    let vars = json!({ "event": load.slug, "run": id, "key": format!("pub-{id}") });
    match load.attempt(token, PUBLISH_KEYED, vars).await {
        Answer::Done(d) => {
            let p = &d["publishResults"];
            let mut l = load.log();
            if p["runId"] != id.as_str() || p["final"] != false {
                l.wrong.push(format!("publishing {id} answered {p}"));
            }
            l.pubs_acked
                .insert(p["version"].as_i64().unwrap_or_default(), id);
            true
        }
        Answer::Refused(why) => {
            load.log()
                .wrong
                .push(format!("publishing {id} refused: {why}"));
            true
        }
        Answer::Down => {
            load.log().pub_pending = Some(id);
            false
        }
    }
}

/// The organizer starts calibration jobs one after another (keyed like the runs, and sent
/// again after a restart when unanswered), watching each until it ends.
async fn job_load(load: Load, token: String, bootstrap: i64) {
    'jobs: while !load.stop.load(Ordering::SeqCst) {
        let (seed, bootstrap) = {
            let mut l = load.log();
            match l.job_pending.take() {
                Some(pending) => {
                    l.retried += 1;
                    pending
                }
                None => (l.job_seed(), bootstrap),
            }
        };
        let vars = json!({ "e": load.slug, "s": seed, "b": bootstrap, "k": format!("job-{seed}") });
        let job = match load.attempt(&token, START_JOB, vars).await {
            Answer::Done(d) => str_at(&d, "/startCalibration/id"),
            Answer::Refused(why) => {
                load.log()
                    .wrong
                    .push(format!("job {seed} could not start: {why}"));
                break;
            }
            Answer::Down => {
                load.log().job_pending = Some((seed, bootstrap));
                break;
            }
        };
        load.log().jobs_acked.insert(job.clone(), seed);
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let vars = json!({ "e": load.slug, "j": job });
            match load.attempt(&token, JOB_STATE, vars).await {
                Answer::Done(d) => {
                    let read = d["event"]["calibrationJob"].clone();
                    let mut l = load.log();
                    if read["state"] != "RUNNING" {
                        l.job_computing = None;
                        l.jobs_ended.insert(job.clone(), read);
                        break;
                    }
                    if !read["stage"].is_null() {
                        l.job_computing = Some(job.clone());
                    }
                }
                Answer::Refused(why) => {
                    load.log()
                        .wrong
                        .push(format!("job {job} unreadable: {why}"));
                    break 'jobs;
                }
                Answer::Down => break 'jobs,
            }
        }
    }
}

/// The job `job` as `organizer` reads it, once it is no longer RUNNING: a job whose server
/// was killed must read as ended at once (PostgreSQL: once the killed process's connections
/// are gone, which takes the server a moment at most), never stay running.
async fn ended_job(app: &App, slug: &str, organizer: &str, job: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let d = app
            .ok(Some(organizer), JOB_STATE, json!({ "e": slug, "j": job }))
            .await;
        let read = d["event"]["calibrationJob"].clone();
        if read["state"] != "RUNNING" {
            return read;
        }
        assert!(
            Instant::now() < deadline,
            "job {job} still reads RUNNING {within:?} after the restart: {read}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn reviews_calibration_and_publication_survive_kill_9(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let slug = format!("crashmix-{tag}");
    app.ok(
        Some(&admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_event(&tag) }),
    )
    .await;
    let organizer = app.mint_token(&format!("crash-o-{tag}@example.org")).await;
    // Each reviewer gets projects it has not scored yet.
    let mut reviewers = vec![];
    for k in 0..REVIEWERS {
        let token = app
            .mint_token(&format!("crash-{k}-{tag}@example.org"))
            .await;
        let mut assignments = vec![];
        for p in (0..PROJECTS)
            .filter(|p| !(0..K).any(|r| (p * K + r) % JUDGES == k))
            .take(ASSIGNED)
        {
            let d = app
                .ok(
                    Some(&organizer),
                    op("AssignJudge"),
                    json!({ "event": slug, "judge": format!("j{k}_{tag}"), "project": format!("p{p}_{tag}") }),
                )
                .await;
            assignments.push(str_at(&d, "/assignJudge/id"));
        }
        assert_eq!(assignments.len(), ASSIGNED);
        reviewers.push((token, assignments));
    }
    let assigned: Vec<String> = reviewers
        .iter()
        .flat_map(|(_, a)| a.iter().cloned())
        .collect();
    let pem = app.get("/.well-known/verdict-signing-key").await.text;
    let key = PublicKey::from_pem(&pem).expect("the signing key");

    let db = app.db.clone();
    let log = Arc::new(Mutex::new(Mixed::default()));
    let mut compared = BTreeSet::new();
    let mut app = app;
    for (cycle, crash) in MIXED_CRASHES.iter().enumerate() {
        let load = Load {
            http: app.http.clone(),
            base: app.base.clone(),
            slug: slug.clone(),
            log: log.clone(),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (before, runs_before) = {
            let mut l = load.log();
            // What the last crash cut short is no trigger for this one.
            l.job_computing = None;
            l.run_in_flight = None;
            (l.acks(), l.runs_acked.len())
        };
        let mut tasks = vec![];
        for (k, (token, assignments)) in reviewers.iter().enumerate() {
            tasks.push(tokio::spawn(review_load(
                load.clone(),
                k,
                token.clone(),
                assignments.clone(),
            )));
        }
        tasks.push(tokio::spawn(run_and_publish_load(
            load.clone(),
            organizer.clone(),
        )));
        let bootstrap = match crash {
            Crash::JobComputing => LONG_JOB_BOOTSTRAP,
            _ => JOB_BOOTSTRAP,
        };
        tasks.push(tokio::spawn(job_load(
            load.clone(),
            organizer.clone(),
            bootstrap,
        )));
        let computing = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                {
                    let l = load.log();
                    assert!(l.wrong.is_empty(), "crash {cycle}: {:#?}", l.wrong);
                    match crash {
                        Crash::Acks(n) if l.acks() >= before + n => return None,
                        Crash::JobComputing if l.job_computing.is_some() => {
                            return l.job_computing.clone();
                        }
                        Crash::RunInFlight(n)
                            if l.runs_acked.len() >= runs_before + n
                                && l.run_in_flight
                                    .is_some_and(|t| t.elapsed() >= Duration::from_millis(5)) =>
                        {
                            return None;
                        }
                        _ => {}
                    }
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("crash {cycle} ({crash:?}) never came: the load is stuck"));
        app.kill9();
        assert_eq!(
            app.wait_exit(Duration::from_secs(10)).await,
            None,
            "killed by a signal"
        );
        load.stop.store(true, Ordering::SeqCst);
        for t in tasks {
            t.await.expect("a writer");
        }
        drop(app);
        {
            let l = load.log();
            eprintln!(
                "crash {cycle} ({crash:?}): so far {} saves, {} runs, {} publications, {} jobs acknowledged; job computing: {computing:?}",
                l.saves_acked.len(),
                l.runs_acked.len(),
                l.pubs_acked.len(),
                l.jobs_acked.len()
            );
        }

        app = App::spawn_on(db.clone(), &[]).await;
        check_mixed(
            &app,
            &slug,
            &organizer,
            &key,
            &assigned,
            &log,
            &mut compared,
            &format!("crash {cycle} ({crash:?})"),
        )
        .await;
        if let Some(job) = computing {
            // The job computing at the crash ended, and the calibration can be run again.
            let read = ended_job(&app, &slug, &organizer, &job, Duration::from_secs(15)).await;
            assert!(
                read["state"] == "DONE"
                    || (read["state"] == "FAILED"
                        && read["error"].as_str().unwrap_or("").contains("stopped")),
                "crash {cycle}: the job computing at the crash {read}"
            );
            let seed = log.lock().expect("log").job_seed();
            let again = app
                .ok(
                    Some(&organizer),
                    START_JOB,
                    json!({ "e": slug, "s": seed, "b": JOB_BOOTSTRAP, "k": format!("job-{seed}") }),
                )
                .await;
            let again = str_at(&again, "/startCalibration/id");
            log.lock()
                .expect("log")
                .jobs_acked
                .insert(again.clone(), seed);
            let read = ended_job(&app, &slug, &organizer, &again, Duration::from_secs(60)).await;
            assert_eq!(
                read["state"], "DONE",
                "crash {cycle}: the job started again {read}"
            );
            log.lock().expect("log").jobs_ended.insert(again, read);
        }
    }
    check_mixed(
        &app,
        &slug,
        &organizer,
        &key,
        &assigned,
        &log,
        &mut compared,
        "the end",
    )
    .await;
    let l = log.lock().expect("log");
    let done = l
        .jobs_ended
        .values()
        .filter(|j| j["state"] == "DONE")
        .count();
    eprintln!(
        "acknowledged: {} review saves, {} runs ({} refused: inputs kept changing), {} publications, {} jobs ({done} seen done); {} unanswered keyed requests sent again",
        l.saves_acked.len(),
        l.runs_acked.len(),
        l.run_conflicts,
        l.pubs_acked.len(),
        l.jobs_acked.len(),
        l.retried
    );
    assert!(
        l.saves_acked.len() >= 10
            && !l.runs_acked.is_empty()
            && !l.pubs_acked.is_empty()
            && done > 0,
        "the load wrote a little of everything"
    );
}

/// After a restart: `audit verify` passes, and the database holds every acknowledged
/// review save, run, publication and job exactly as answered, nothing that was never sent
/// or was refused, and one audit entry for each; every run is whole (signed, its hashes
/// those of its stored inputs and result, every project and judge in it) and the latest
/// publication's bundle verifies offline.
#[allow(clippy::too_many_arguments)]
async fn check_mixed(
    app: &App,
    slug: &str,
    organizer: &str,
    key: &PublicKey,
    assignments: &[String],
    log: &Arc<Mutex<Mixed>>,
    compared: &mut BTreeSet<String>,
    when: &str,
) {
    use entity::{
        assignment, audit_event, calibration_job, calibration_run, event, result_publication,
        review, review_revision,
    };
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
    use verdict::domain::results::{
        parse_result, publication_fields, published_at_text, run_signature_ok,
    };

    app.audit_head().await;
    let conn = Database::connect(app.db.url()).await.expect("connect");
    let e = event::Entity::find()
        .filter(event::Column::Slug.eq(slug))
        .one(&conn)
        .await
        .expect("read")
        .expect("the event");
    let assigned: BTreeMap<i64, String> = assignment::Entity::find()
        .filter(assignment::Column::PublicId.is_in(assignments.iter().cloned()))
        .all(&conn)
        .await
        .expect("read")
        .into_iter()
        .map(|a| (a.id, a.public_id))
        .collect();
    let reviews = review::Entity::find()
        .filter(review::Column::AssignmentId.is_in(assigned.keys().copied()))
        .all(&conn)
        .await
        .expect("read");
    let revisions = review_revision::Entity::find()
        .filter(review_revision::Column::ReviewId.is_in(reviews.iter().map(|r| r.id)))
        .order_by_asc(review_revision::Column::ReviewId)
        .order_by_asc(review_revision::Column::Version)
        .all(&conn)
        .await
        .expect("read");
    let runs = calibration_run::Entity::find()
        .filter(calibration_run::Column::EventId.eq(e.id))
        .all(&conn)
        .await
        .expect("read");
    let publications = result_publication::Entity::find()
        .filter(result_publication::Column::EventId.eq(e.id))
        .order_by_asc(result_publication::Column::Version)
        .all(&conn)
        .await
        .expect("read");
    let jobs = calibration_job::Entity::find()
        .filter(calibration_job::Column::EventId.eq(e.id))
        .all(&conn)
        .await
        .expect("read");
    let entries = audit_event::Entity::find()
        .filter(audit_event::Column::Event.eq(e.external_id.as_str()))
        .all(&conn)
        .await
        .expect("read");
    let _ = conn.close().await;
    let payload = |a: &audit_event::Model| -> Value {
        serde_json::from_str(&a.payload).expect("an audit payload")
    };
    // The entries of `action` by object id.
    fn by_object<'a>(
        entries: &'a [audit_event::Model],
        action: &str,
    ) -> BTreeMap<String, Vec<&'a audit_event::Model>> {
        let mut by = BTreeMap::<String, Vec<_>>::new();
        for a in entries.iter().filter(|a| a.action == action) {
            by.entry(a.object_id.clone()).or_default().push(a);
        }
        by
    }
    let entries_of = |action: &str| by_object(&entries, action);

    let runs_acked = {
        let l = log.lock().expect("log");
        assert!(l.wrong.is_empty(), "{when}: {:#?}", l.wrong);

        // Reviews: every revision is a save that was sent, with exactly its scores; every
        // acknowledged save is there at the version it was told; one audit entry each.
        let review_of: BTreeMap<i64, &review::Model> = reviews.iter().map(|r| (r.id, r)).collect();
        let mut labels = BTreeSet::new();
        let mut versions = BTreeMap::<String, Vec<i32>>::new();
        let mut kept = BTreeMap::<(String, i64), bool>::new();
        for rev in &revisions {
            let r = review_of[&rev.review_id];
            let sent = l.saves_sent.get(&rev.comment).unwrap_or_else(|| {
                panic!(
                    "{when}: review {} v{} holds a save never sent: {rev:?}",
                    r.public_id, rev.version
                )
            });
            assert_eq!(
                sent.assignment, assigned[&r.assignment_id],
                "{when}: save {} landed on another assignment",
                rev.comment
            );
            let scores: BTreeMap<String, i64> =
                serde_json::from_str(&rev.scores).expect("stored scores");
            assert_eq!(
                scores,
                sent.scores(),
                "{when}: save {} holds scores that were never sent",
                rev.comment
            );
            assert!(
                rev.submitted || !sent.submit,
                "{when}: submission {} is stored as a draft",
                rev.comment
            );
            assert!(
                labels.insert(rev.comment.clone()),
                "{when}: save {} is stored twice",
                rev.comment
            );
            versions
                .entry(r.public_id.clone())
                .or_default()
                .push(rev.version);
            kept.insert((r.public_id.clone(), rev.version.into()), rev.submitted);
        }
        for r in &reviews {
            let v = &versions[&r.public_id];
            assert_eq!(
                *v,
                (1..=r.version).collect::<Vec<_>>(),
                "{when}: review {} has a gap in its revisions",
                r.public_id
            );
            let last = revisions
                .iter()
                .find(|rev| rev.review_id == r.id && rev.version == r.version)
                .expect("the last revision");
            assert_eq!(
                (&r.scores, &r.comment, r.submitted),
                (&last.scores, &last.comment, last.submitted),
                "{when}: review {} is not its last revision",
                r.public_id
            );
        }
        for (label, (id, version)) in &l.saves_acked {
            let rev = revisions.iter().find(|rev| rev.comment == *label);
            let stored = rev.map(|rev| {
                (
                    review_of[&rev.review_id].public_id.clone(),
                    i64::from(rev.version),
                )
            });
            assert_eq!(
                stored.as_ref(),
                Some(&(id.clone(), *version)),
                "{when}: acknowledged save {label} is lost or moved"
            );
        }
        let mut audited = BTreeMap::<(String, i64), Vec<&str>>::new();
        for a in entries
            .iter()
            .filter(|a| a.action == "review.saved" || a.action == "review.submitted")
            .filter(|a| versions.contains_key(&a.object_id))
        {
            let v = payload(a)["version"].as_i64().expect("a version");
            audited
                .entry((a.object_id.clone(), v))
                .or_default()
                .push(&a.action);
        }
        assert_eq!(
            audited.keys().collect::<Vec<_>>(),
            kept.keys().collect::<Vec<_>>(),
            "{when}: one audit entry per stored review save, none for a save not stored"
        );
        for (k, actions) in &audited {
            let want = if kept[k] {
                "review.submitted"
            } else {
                "review.saved"
            };
            assert_eq!(*actions, vec![want], "{when}: audit entries of save {k:?}");
        }

        // Runs: sent, each request stored at most once, whole and signed; one
        // calibration.ran entry each, the one the run points at.
        let ran = entries_of("calibration.ran");
        let mut seeds = BTreeSet::new();
        for run in &runs {
            assert!(
                l.runs_sent.contains(&run.seed) || l.jobs_sent.contains(&run.seed),
                "{when}: run {} (seed {}) was never asked for",
                run.public_id,
                run.seed
            );
            assert!(
                seeds.insert(run.seed),
                "{when}: seed {} stored twice (one keyed request)",
                run.seed
            );
            assert!(
                run_signature_ok(key, &e.external_id, run),
                "{when}: run {} is not signed by the deployment's key",
                run.public_id
            );
            assert_eq!(
                sha256_hex(run.result.as_bytes()),
                run.result_hash,
                "{when}: run {}'s result is not the one hashed",
                run.public_id
            );
            assert_eq!(
                sha256_hex(run.inputs.as_bytes()),
                run.inputs_hash,
                "{when}: run {}'s inputs are not the ones hashed",
                run.public_id
            );
            let result = parse_result(run).expect("a stored result");
            assert_eq!(
                (result.projects.len(), result.judges.len()),
                (PROJECTS, JUDGES),
                "{when}: run {} is missing projects or judges",
                run.public_id
            );
            let entry = ran
                .get(&run.public_id)
                .map(Vec::as_slice)
                .unwrap_or_default();
            assert!(
                entry.len() == 1
                    && entry[0].seq == run.audit_seq
                    && payload(entry[0])["result_hash"] == run.result_hash.as_str(),
                "{when}: run {} has {} calibration.ran entries",
                run.public_id,
                entry.len()
            );
        }
        assert_eq!(
            ran.values().map(Vec::len).sum::<usize>(),
            runs.len(),
            "{when}: a calibration.ran entry without its run"
        );
        for (seed, acked) in &l.runs_acked {
            let run = runs
                .iter()
                .find(|r| acked["id"] == r.public_id.as_str())
                .unwrap_or_else(|| {
                    panic!("{when}: acknowledged run {acked} (seed {seed}) is lost")
                });
            assert_eq!(
                (
                    run.seed,
                    run.inputs_hash.as_str(),
                    run.result_hash.as_str(),
                    run.signature.as_str()
                ),
                (
                    *seed,
                    acked["inputsHash"].as_str().unwrap_or_default(),
                    acked["resultHash"].as_str().unwrap_or_default(),
                    acked["signature"].as_str().unwrap_or_default()
                ),
                "{when}: run {} is not the one acknowledged",
                run.public_id
            );
        }

        // Publications: numbered 1, 2, ... without a gap, each of a run sent for
        // publication, signed, one results.published entry each; every acknowledged one
        // is there with its run.
        let published = entries_of("results.published");
        let run_of: BTreeMap<i64, &calibration_run::Model> =
            runs.iter().map(|r| (r.id, r)).collect();
        let mut published_runs = BTreeSet::new();
        for (i, p) in publications.iter().enumerate() {
            assert_eq!(
                p.version as usize,
                i + 1,
                "{when}: publication versions have a gap"
            );
            let run = run_of[&p.run_id];
            assert!(
                published_runs.insert(run.id),
                "{when}: run {} is published twice (one keyed request)",
                run.public_id
            );
            assert!(
                l.pubs_sent.contains(&run.public_id) && !p.is_final,
                "{when}: publication {} of run {} was never asked for",
                p.version,
                run.public_id
            );
            let version = p.version.to_string();
            let at = published_at_text(p.published_at);
            assert!(
                key.verify(
                    PUBLICATION_TAG,
                    &publication_fields(
                        &e.external_id,
                        &version,
                        p.is_final,
                        &run.public_id,
                        &run.result_hash,
                        &at
                    ),
                    &p.signature
                ),
                "{when}: publication {} is not signed",
                p.version
            );
            let entry = published
                .get(&p.public_id)
                .map(Vec::as_slice)
                .unwrap_or_default();
            assert!(
                entry.len() == 1
                    && entry[0].seq == p.audit_seq
                    && payload(entry[0])["run"] == run.public_id.as_str(),
                "{when}: publication {} has {} results.published entries",
                p.version,
                entry.len()
            );
        }
        assert_eq!(
            published.values().map(Vec::len).sum::<usize>(),
            publications.len(),
            "{when}: a results.published entry without its publication"
        );
        for (version, run) in &l.pubs_acked {
            let stored = publications
                .get(*version as usize - 1)
                .map(|p| run_of[&p.run_id].public_id.as_str());
            assert_eq!(
                stored,
                Some(run.as_str()),
                "{when}: acknowledged publication {version} is lost or of another run"
            );
        }

        // Jobs: each was sent; one calibration.started entry each; a done job's run is a
        // run of its seed, a failed one has its reason and at most one calibration.failed.
        let started = entries_of("calibration.started");
        let failed = entries_of("calibration.failed");
        let mut job_seeds = BTreeSet::new();
        for job in &jobs {
            assert!(
                l.jobs_sent.contains(&job.seed),
                "{when}: job {} was never asked for",
                job.public_id
            );
            assert!(
                job_seeds.insert(job.seed),
                "{when}: job seed {} started twice (one keyed request)",
                job.seed
            );
            assert_eq!(
                started.get(&job.public_id).map(Vec::len),
                Some(1),
                "{when}: calibration.started entries of job {}",
                job.public_id
            );
            let failures = failed.get(&job.public_id).map(Vec::len).unwrap_or(0);
            match (job.finished_at, job.run_id, &job.error) {
                (Some(_), Some(run), None) => {
                    assert_eq!(
                        run_of.get(&run).map(|r| r.seed),
                        Some(job.seed),
                        "{when}: job {}'s run",
                        job.public_id
                    );
                    assert_eq!(
                        failures, 0,
                        "{when}: done job {} has a failure entry",
                        job.public_id
                    );
                }
                (Some(_), None, Some(_)) => {
                    assert!(failures <= 1, "{when}: job {} failed twice", job.public_id)
                }
                (None, None, None) => assert_eq!(failures, 0, "{when}: job {}", job.public_id),
                _ => panic!("{when}: job {} is half closed: {job:?}", job.public_id),
            }
        }
        assert_eq!(
            started.values().map(Vec::len).sum::<usize>(),
            jobs.len(),
            "{when}: a calibration.started entry without its job"
        );
        for (job, seed) in &l.jobs_acked {
            assert!(
                jobs.iter().any(|j| j.public_id == *job && j.seed == *seed),
                "{when}: acknowledged job {job} is lost"
            );
        }
        for (job, read) in &l.jobs_ended {
            let row = jobs.iter().find(|j| j.public_id == *job).expect("the job");
            if read["state"] == "DONE" {
                let run = row.run_id.and_then(|r| run_of.get(&r));
                assert_eq!(
                    run.map(|r| r.public_id.as_str()),
                    read["run"]["id"].as_str(),
                    "{when}: job {job} was seen done with another run"
                );
            }
        }
        l.runs_acked.clone()
    };

    // What the server shows: each acknowledged run as it was answered, whole (compared
    // once, the first restart after it was acknowledged: a run never changes); every job
    // ended, none running with no process left to compute it; the publications, the
    // latest public.
    for (seed, acked) in &runs_acked {
        let id = acked["id"].as_str().expect("a run id");
        if !compared.insert(id.to_owned()) {
            continue;
        }
        let d = app
            .ok(Some(organizer), STORED_RUN, json!({ "e": slug, "r": id }))
            .await;
        let shown = &d["event"]["calibrationRun"];
        assert_eq!(
            shown, acked,
            "{when}: run {id} (seed {seed}) is not as acknowledged"
        );
        assert_eq!(
            (
                shown["projects"].as_array().map(Vec::len),
                shown["judges"].as_array().map(Vec::len)
            ),
            (Some(PROJECTS), Some(JUDGES)),
            "{when}: run {id}"
        );
    }
    for job in jobs.iter().filter(|j| j.finished_at.is_none()) {
        let read = ended_job(
            app,
            slug,
            organizer,
            &job.public_id,
            Duration::from_secs(15),
        )
        .await;
        assert!(
            read["state"] == "FAILED" && read["error"].as_str().unwrap_or("").contains("stopped"),
            "{when}: job {} left running by the crash reads {read}",
            job.public_id
        );
    }
    let shown = app
        .ok(Some(organizer), PUBLISHED, json!({ "e": slug }))
        .await;
    let listed: Vec<(i64, String)> = shown["event"]["publications"]
        .as_array()
        .expect("publications")
        .iter()
        .map(|p| {
            (
                p["version"].as_i64().expect("a version"),
                str_at(p, "/runId"),
            )
        })
        .collect();
    let stored: Vec<(i64, String)> = publications
        .iter()
        .map(|p| {
            let run = runs.iter().find(|r| r.id == p.run_id).expect("its run");
            (i64::from(p.version), run.public_id.clone())
        })
        .collect();
    assert_eq!(listed, stored, "{when}: the publications shown");
    let Some(latest) = publications.last() else {
        return;
    };
    assert_eq!(
        shown["event"]["results"]["version"], latest.version,
        "{when}: the public results are the latest publication"
    );
    let dir = app.db.dir().join(format!("bundle-{}", unique()));
    let dir = dir.to_str().expect("utf-8 path");
    let out = app.cli(&["results", "export", "--event", slug, dir]).await;
    assert!(out.success(), "{when}: export: {out:?}");
    let out = app.cli(&["results", "verify", dir]).await;
    assert!(
        out.success(),
        "{when}: the latest publication's bundle: {out:?}"
    );
}
