use super::*;

/// The judged event of the second test: submitted projects, each scored by [`K`] of the
/// judges on a two-criterion rubric, with judging open.
pub(super) const PROJECTS: usize = 30;
pub(super) const JUDGES: usize = 8;
pub(super) const K: usize = 3;
/// Judges who score under load, each on this many projects assigned to them in the setup.
pub(super) const REVIEWERS: usize = 3;
pub(super) const ASSIGNED: usize = 10;
/// The first reviewer submits every this many saves, then moves on to its next assignment;
/// the saves between are drafts, and so are all the other reviewers' saves. A submitted
/// review changes the calibration's inputs (a draft does not), and a run whose inputs
/// changed while it computed computes again, three times at most: so after each save of
/// a submitted review that reviewer pauses, as a judge reads the next project, and most
/// runs get stored.
pub(super) const SUBMIT_EVERY: u64 = 4;
pub(super) const PAUSE_AFTER_SUBMITTED: Duration = Duration::from_millis(200);
/// Draws of the runs the organizer runs and publishes, and of its background jobs; a job
/// meant to be killed while it computes draws many more.
pub(super) const RUN_BOOTSTRAP: i64 = 40;
pub(super) const JOB_BOOTSTRAP: i64 = 40;
pub(super) const LONG_JOB_BOOTSTRAP: i64 = 2000;

/// When the server is killed.
#[derive(Clone, Copy, Debug)]
pub(super) enum Crash {
    /// Once this many more writes were acknowledged.
    Acks(usize),
    /// While a background calibration job computes.
    JobComputing,
    /// While a `runCalibration` request is waiting for its run, once this many more runs
    /// were acknowledged.
    RunInFlight(usize),
}

pub(super) const MIXED_CRASHES: [Crash; 4] = [
    Crash::Acks(20),
    Crash::JobComputing,
    Crash::RunInFlight(3),
    Crash::Acks(150),
];

pub(super) const START_JOB: &str = "mutation($e: String!, $s: Int, $b: Int, $k: String) { startCalibration(event: $e, seed: $s, bootstrap: $b, idempotencyKey: $k) { id state } }";
/// `RunCalibration` and `PublishResults` with an idempotency key.
pub(super) const RUN_KEYED: &str = "mutation($event: String!, $seed: Int, $bootstrap: Int, $key: String) { runCalibration(event: $event, seed: $seed, bootstrap: $bootstrap, idempotencyKey: $key) { id seed bootstrap lambda engineVersion inputsHash resultHash signature connected projects { rank rankLow rankHigh rawRank quality excluded project { externalId } } judges { flag offset judge { externalId } } } }";
pub(super) const PUBLISH_KEYED: &str = "mutation($event: String!, $run: ID!, $key: String) { publishResults(event: $event, run: $run, final: false, idempotencyKey: $key) { version final runId } }";
pub(super) const JOB_STATE: &str = "query($e: String!, $j: ID!) { event(slug: $e) { calibrationJob(id: $j) { id state stage error run { id } } } }";
/// A stored run with the selection `RunCalibration` answers with.
pub(super) const STORED_RUN: &str = "query($e: String!, $r: ID!) { event(slug: $e) { calibrationRun(id: $r) { id seed bootstrap lambda engineVersion inputsHash resultHash signature connected projects { rank rankLow rankHigh rawRank quality excluded project { externalId } } judges { flag offset judge { externalId } } } } }";
pub(super) const PUBLISHED: &str = "query($e: String!) { event(slug: $e) { publications { version runId final } results { version runId } } }";

/// One review save a judge sent (its comment is its label, unique across the test).
#[derive(Clone, Debug)]
pub(super) struct Save {
    pub(super) assignment: String,
    pub(super) impact: i64,
    pub(super) craft: i64,
    pub(super) submit: bool,
}

impl Save {
    pub(super) fn scores(&self) -> BTreeMap<String, i64> {
        BTreeMap::from([
            ("craft".to_owned(), self.craft),
            ("impact".to_owned(), self.impact),
        ])
    }
}

/// What the second test's writers sent and were told.
pub(super) struct Mixed {
    /// Review saves by label (the comment sent), those acknowledged with the review and
    /// version answered, and each reviewer's next save number.
    pub(super) saves_sent: BTreeMap<String, Save>,
    pub(super) saves_acked: BTreeMap<String, (String, i64)>,
    pub(super) next_save: BTreeMap<usize, u64>,
    /// `runCalibration` by seed: sent, and the run as answered; refusals (CONFLICT: the
    /// inputs kept changing) counted.
    pub(super) runs_sent: BTreeSet<i64>,
    pub(super) runs_acked: BTreeMap<i64, Value>,
    pub(super) run_conflicts: usize,
    pub(super) next_run_seed: i64,
    /// When the `runCalibration` request waiting now was sent.
    pub(super) run_in_flight: Option<Instant>,
    /// `publishResults`: the runs sent, and the versions acknowledged with their run.
    pub(super) pubs_sent: BTreeSet<String>,
    pub(super) pubs_acked: BTreeMap<i64, String>,
    /// The keyed requests a crash left unanswered, to send again after the restart, and
    /// how many were.
    pub(super) run_pending: Option<i64>,
    pub(super) pub_pending: Option<String>,
    /// A job's seed and draws (a retry sends the same input: the key would refuse another).
    pub(super) job_pending: Option<(i64, i64)>,
    pub(super) retried: usize,
    /// `startCalibration` by seed: sent; acknowledged job ids with their seed; the last
    /// reading of each job that ended (DONE or FAILED) while the load watched it.
    pub(super) jobs_sent: BTreeSet<i64>,
    pub(super) jobs_acked: BTreeMap<String, i64>,
    pub(super) jobs_ended: BTreeMap<String, Value>,
    pub(super) next_job_seed: i64,
    /// A job read as computing (a stage set) that has not been seen to end.
    pub(super) job_computing: Option<String>,
    /// Answers no request should have had (a refused review or publication, a job that
    /// could not start, an answer that is not what was sent).
    pub(super) wrong: Vec<String>,
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
    pub(super) fn acks(&self) -> usize {
        self.saves_acked.len()
            + self.runs_acked.len()
            + self.pubs_acked.len()
            + self.jobs_acked.len()
    }

    pub(super) fn job_seed(&mut self) -> i64 {
        let seed = self.next_job_seed;
        self.next_job_seed += 1;
        self.jobs_sent.insert(seed);
        seed
    }
}

/// What every writer of the second test shares.
#[derive(Clone)]
pub(super) struct Load {
    pub(super) http: reqwest::Client,
    pub(super) base: String,
    pub(super) slug: String,
    pub(super) log: Arc<Mutex<Mixed>>,
    pub(super) stop: Arc<AtomicBool>,
}

impl Load {
    pub(super) fn log(&self) -> std::sync::MutexGuard<'_, Mixed> {
        self.log.lock().expect("log")
    }

    pub(super) async fn attempt(&self, token: &str, query: &str, vars: Value) -> Answer {
        attempt(&self.http, &self.base, token, query, vars).await
    }
}

/// The event: [`PROJECTS`] submitted projects, [`JUDGES`] judges, [`K`] submitted reviews
/// per project on the rubric impact (1-10, weight 2) and craft (1-5); judging is open.
pub(super) fn judged_event(tag: &str) -> Value {
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
pub(super) async fn review_load(load: Load, k: usize, token: String, assignments: Vec<String>) {
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
pub(super) async fn run_and_publish_load(load: Load, token: String) {
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
pub(super) async fn publish(load: &Load, token: &str, id: String) -> bool {
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
pub(super) async fn job_load(load: Load, token: String, bootstrap: i64) {
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
pub(super) async fn ended_job(
    app: &App,
    slug: &str,
    organizer: &str,
    job: &str,
    within: Duration,
) -> Value {
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

pub(super) async fn reviews_calibration_and_publication_survive_kill_9(app: App) {
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
