use super::*;

pub(super) struct World {
    pub(super) event: String,
    pub(super) track: String,
    /// The writers' session tokens (each has a team of their own).
    pub(super) writers: Vec<String>,
    pub(super) writer_emails: Vec<String>,
}

impl World {
    pub(super) async fn set_up(app: &App) -> World {
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
pub(super) struct Tally {
    /// Titles of projects acknowledged as created, and every title sent.
    pub(super) created: BTreeSet<String>,
    pub(super) create_sent: BTreeSet<String>,
    /// Titles acknowledged as submitted (in order), and every submission sent.
    pub(super) submitted: BTreeSet<String>,
    pub(super) submitted_order: Vec<String>,
    pub(super) submit_sent: BTreeSet<String>,
    /// Acknowledged writes.
    pub(super) acks: usize,
    /// Writes and reads refused with a clean UNAVAILABLE (reads: also those answered in
    /// part, [`Answer::Partial`]).
    pub(super) unavailable: usize,
    pub(super) unavailable_reads: usize,
    /// Answers in part: some fields answered, the others failed with a clean UNAVAILABLE.
    pub(super) partial: usize,
    /// Reads answered.
    pub(super) reads: usize,
    /// Anything else, for the failure message.
    pub(super) unexpected: Vec<String>,
}

impl Tally {
    pub(super) fn assert_clean(&self) {
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
pub(super) struct Load {
    pub(super) tally: Arc<Mutex<Tally>>,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    pub(super) fn start(app: &App, world: &World) -> Load {
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

    pub(super) fn tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        lock(&self.tally)
    }

    /// Waits until `done` holds of the tally; panics after `within`, saying `what`.
    pub(super) async fn until(&self, what: &str, within: Duration, done: impl Fn(&Tally) -> bool) {
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
    pub(super) async fn finish(self) -> Tally {
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
    pub(super) fn note(&mut self, answer: Answer, what: &str) {
        match answer {
            Answer::Data(_) => {}
            Answer::Unavailable => self.unavailable += 1,
            Answer::Partial => self.partial += 1,
            Answer::Other(text) => self.unexpected.push(format!("{what}: {text}")),
        }
    }
}

pub(super) fn lock(t: &Mutex<Tally>) -> std::sync::MutexGuard<'_, Tally> {
    t.lock().unwrap_or_else(|p| p.into_inner())
}

/// How a request was answered.
#[derive(Debug)]
pub(super) enum Answer {
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

pub(super) async fn send(
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
pub(super) fn clean_unavailable(
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
pub(super) fn no_data(data: &Value) -> bool {
    match data {
        Value::Null => true,
        Value::Object(fields) => fields.values().all(Value::is_null),
        _ => false,
    }
}

// ---- The subscription -----------------------------------------------------------------

/// An anonymous `projectSubmitted` subscription held open for the whole test: every
/// message it receives, and whether the server ever ended it.
pub(super) struct Watcher {
    pub(super) received: Arc<Mutex<Vec<Value>>>,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) task: tokio::task::JoinHandle<Option<String>>,
}

impl Watcher {
    pub(super) async fn start(app: &App, event: &str) -> Watcher {
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
    pub(super) async fn wait_for(&mut self, title: &str, within: Duration) -> Option<()> {
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
    pub(super) async fn finish(self) -> Vec<Value> {
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
