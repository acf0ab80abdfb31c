//! The end-to-end harness: start the real `verdict` binary on port 0 against a fresh
//! database (SQLite in a temporary directory, or a new PostgreSQL database), talk to it
//! over HTTP and websocket, and run its subcommands against the same database.

use std::{
    future::Future,
    path::{Path, PathBuf},
    process::Stdio,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use chrono::{SecondsFormat, Utc};
use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_verdict");

/// The site administrator `App::site_admin` creates.
pub const ADMIN_EMAIL: &str = "root@example.org";

/// A password every test user gets; long enough for any sane policy.
pub const PASSWORD: &str = "correct-horse-battery-staple-42";

/// Which database the server runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// For each `async fn name(app: App)` listed, two tests: `name::sqlite` and
/// `name::postgres`, each against a fresh database. Optional extra server flags in
/// brackets, e.g. `e2e! { throttled ["--login-attempts", "3"] }` (a flag the harness
/// sets by default is replaced).
macro_rules! e2e {
    ($($name:ident $([$($flag:literal),* $(,)?])?),* $(,)?) => {$(
        mod $name {
            const FLAGS: &[&str] = &[$($($flag),*)?];

            #[tokio::test(flavor = "multi_thread")]
            async fn sqlite() {
                $crate::harness::run($crate::harness::Backend::Sqlite, FLAGS, super::$name).await
            }

            #[tokio::test(flavor = "multi_thread")]
            async fn postgres() {
                $crate::harness::run($crate::harness::Backend::Postgres, FLAGS, super::$name).await
            }
        }
    )*};
}

/// Provision a database, start the server, run the test body, clean up (also when the
/// body panics; the panic is then resumed so the test fails with its own message).
pub async fn run<F, Fut>(backend: Backend, flags: &'static [&'static str], body: F)
where
    F: FnOnce(App) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Some(db) = TestDb::create(backend).await else {
        return;
    };
    let db = Arc::new(db);
    let shared = db.clone();
    let outcome = tokio::spawn(async move { body(App::spawn_on(shared, flags).await).await }).await;
    // The body owned the app; it is gone (child killed) by now. Drop the database.
    db.destroy().await;
    if let Err(e) = outcome {
        if e.is_panic() {
            std::panic::resume_unwind(e.into_panic());
        }
        panic!("test task failed: {e}");
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A short unique suffix for names (databases, slugs, emails).
pub fn unique() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(
        "{:x}{:x}{:x}",
        std::process::id(),
        nanos & 0xff_ffff_ffff,
        n
    )
}

/// The database behind one test, and the directory for its key file.
pub struct TestDb {
    pub backend: Backend,
    pub url: String,
    pub dir: tempfile::TempDir,
    pg: Option<(String, String)>, // (base url, database name)
}

impl TestDb {
    /// `None` when PostgreSQL is unreachable and the run is not CI (the test is skipped).
    async fn create(backend: Backend) -> Option<TestDb> {
        let dir = tempfile::tempdir().expect("tempdir");
        match backend {
            Backend::Sqlite => {
                let url = format!("sqlite://{}/verdict.db?mode=rwc", dir.path().display());
                Some(TestDb {
                    backend,
                    url,
                    dir,
                    pg: None,
                })
            }
            Backend::Postgres => {
                let base = pg_base_url();
                let conn = match pg_connect(&base).await {
                    Ok(c) => c,
                    Err(e) => {
                        if std::env::var("CI").as_deref() == Ok("true") {
                            panic!("PostgreSQL unreachable at {base} (CI=true): {e}");
                        }
                        eprintln!("skipping: PostgreSQL unreachable ({base}: {e})");
                        return None;
                    }
                };
                let name = format!("verdict_e2e_{}", unique());
                conn.execute_unprepared(&format!("CREATE DATABASE {name}"))
                    .await
                    .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
                let _ = conn.close().await;
                let url = replace_db_name(&base, &name);
                Some(TestDb {
                    backend,
                    url,
                    dir,
                    pg: Some((base, name)),
                })
            }
        }
    }

    async fn destroy(&self) {
        if let Some((base, name)) = &self.pg
            && let Ok(conn) = pg_connect(base).await
        {
            let _ = conn
                .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .await;
            let _ = conn.close().await;
        }
    }

    pub fn key_file(&self) -> PathBuf {
        self.dir.path().join("signing.key")
    }
}

fn pg_base_url() -> String {
    std::env::var("VERDICT_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

async fn pg_connect(url: &str) -> Result<DatabaseConnection, sea_orm::DbErr> {
    let mut opt = ConnectOptions::new(url.to_string());
    opt.connect_timeout(Duration::from_secs(5))
        .acquire_timeout(Duration::from_secs(5))
        .max_connections(1)
        .sqlx_logging(false);
    Database::connect(opt).await
}

/// `postgres://u@h:p/db?x` with the database name replaced.
fn replace_db_name(base: &str, name: &str) -> String {
    let (head, query) = match base.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (base, None),
    };
    let scheme_end = head.find("://").map(|i| i + 3).unwrap_or(0);
    let authority_end = head[scheme_end..]
        .find('/')
        .map(|i| scheme_end + i)
        .unwrap_or(head.len());
    let mut url = format!("{}/{}", &head[..authority_end], name);
    if let Some(q) = query {
        url.push('?');
        url.push_str(q);
    }
    url
}

/// Flags every server gets; a test's `#[flags]` replaces a value or appends a flag.
const DEFAULT_FLAGS: &[(&str, &str)] = &[
    ("--addr", "127.0.0.1:0"),
    ("--rate-limit-per-second", "10000"),
    ("--rate-limit-burst", "10000"),
    ("--login-attempts", "1000"),
];

fn server_args(db: &TestDb, flags: &[&str]) -> Vec<String> {
    let mut pairs: Vec<(String, Option<String>)> = DEFAULT_FLAGS
        .iter()
        .map(|(f, v)| (f.to_string(), Some(v.to_string())))
        .collect();
    pairs.push(("--database-url".into(), Some(db.url.clone())));
    pairs.push((
        "--key-file".into(),
        Some(db.key_file().display().to_string()),
    ));
    let mut i = 0;
    while i < flags.len() {
        let flag = flags[i];
        let takes_value = i + 1 < flags.len() && !flags[i + 1].starts_with("--");
        let value = takes_value.then(|| flags[i + 1].to_string());
        if let Some(slot) = pairs.iter_mut().find(|(f, _)| f == flag) {
            slot.1 = value;
        } else {
            pairs.push((flag.to_string(), value));
        }
        i += if takes_value { 2 } else { 1 };
    }
    let mut args = vec!["serve".to_string()];
    for (f, v) in pairs {
        args.push(f);
        if let Some(v) = v {
            args.push(v);
        }
    }
    args
}

/// A running server plus everything needed to talk to it.
pub struct App {
    pub base: String,
    pub port: u16,
    pub http: reqwest::Client,
    pub db: Arc<TestDb>,
    child: Child,
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// An HTTP response, read whole.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| {
            panic!(
                "response is not JSON ({e}); status {}: {}",
                self.status, self.text
            )
        })
    }

    pub fn try_json(&self) -> Option<Value> {
        serde_json::from_str(&self.text).ok()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }

    pub fn headers_all(&self, name: &str) -> Vec<String> {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect()
    }
}

/// What a subcommand did.
#[derive(Debug)]
pub struct CliOutput {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl CliOutput {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl App {
    /// Another server process on the same database and key, with different flags.
    pub async fn sibling(&self, flags: &[&str]) -> App {
        App::spawn_on(self.db.clone(), flags).await
    }

    pub fn backend(&self) -> Backend {
        self.db.backend
    }

    async fn spawn_on(db: Arc<TestDb>, flags: &[&str]) -> App {
        let args = server_args(&db, flags);
        let mut child = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"));

        let stderr = child.stderr.take().expect("stderr");
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[verdict] {line}");
            }
        });

        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let port = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) => {
                        eprintln!("[verdict:out] {line}");
                        if let Some(rest) = line.split("verdict listening on http://").nth(1) {
                            let port = rest
                                .rsplit(':')
                                .next()
                                .map(|p| p.trim().trim_end_matches('/'))
                                .and_then(|p| p.parse::<u16>().ok());
                            if let Some(port) = port {
                                return Some(port);
                            }
                        }
                    }
                    _ => return None,
                }
            }
        })
        .await;
        let port = match port {
            Ok(Some(port)) => port,
            Ok(None) => {
                let status = child.wait().await;
                panic!("verdict {args:?} exited before listening: {status:?}");
            }
            Err(_) => panic!("verdict {args:?} did not print its listening line within 60 s"),
        };
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[verdict:out] {line}");
            }
        });

        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .expect("http client");
        App {
            base: format!("http://127.0.0.1:{port}"),
            port,
            http,
            db,
            child,
        }
    }

    // ---- subcommands -------------------------------------------------------------

    /// Run `verdict ARGS` against this app's database and key file.
    pub async fn cli(&self, args: &[&str]) -> CliOutput {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env("VERDICT_DATABASE_URL", &self.db.url)
            .env("VERDICT_KEY_FILE", self.db.key_file())
            .stdin(Stdio::null())
            .kill_on_drop(true);
        let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
            .await
            .unwrap_or_else(|_| panic!("verdict {args:?} took more than 120 s"))
            .unwrap_or_else(|e| panic!("cannot run verdict {args:?}: {e}"));
        let res = CliOutput {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        eprintln!(
            "[verdict {args:?}] exit {:?}\n{}{}",
            res.code, res.stdout, res.stderr
        );
        res
    }

    /// `verdict audit verify` must pass; returns the head seq it prints.
    pub async fn audit_head(&self) -> u64 {
        self.try_audit_head()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    pub async fn try_audit_head(&self) -> Result<u64, String> {
        let out = self.cli(&["audit", "verify"]).await;
        if !out.success() {
            return Err(format!("audit verify failed: {out:?}"));
        }
        parse_head_seq(&out.stdout)
            .ok_or_else(|| format!("no head seq in audit verify output: {:?}", out.stdout))
    }

    // ---- HTTP --------------------------------------------------------------------

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.get_with(path, &[]).await
    }

    pub async fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Resp {
        let mut req = self.http.get(self.url(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        read(req.send().await.expect("GET")).await
    }

    /// POST /graphql with any body, content type and headers.
    pub async fn post_raw(
        &self,
        body: impl Into<reqwest::Body>,
        content_type: &str,
        headers: &[(&str, &str)],
    ) -> Resp {
        let mut req = self
            .http
            .post(self.url("/graphql"))
            .header("content-type", content_type)
            .body(body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        read(req.send().await.expect("POST /graphql")).await
    }

    /// POST a GraphQL request as JSON; the whole response.
    pub async fn gql_resp(&self, token: Option<&str>, query: &str, vars: Value) -> Resp {
        let body = json!({ "query": query, "variables": vars }).to_string();
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers: Vec<(&str, &str)> = vec![];
        if let Some(a) = &auth {
            headers.push(("authorization", a.as_str()));
        }
        self.post_raw(body, "application/json", &headers).await
    }

    /// An anonymous GraphQL request; the whole response body.
    pub async fn gql(&self, query: &str, vars: Value) -> Value {
        self.gql_opt(None, query, vars).await
    }

    /// A GraphQL request with `Authorization: Bearer TOKEN`; the whole response body.
    pub async fn gql_as(&self, token: &str, query: &str, vars: Value) -> Value {
        self.gql_opt(Some(token), query, vars).await
    }

    pub async fn gql_opt(&self, token: Option<&str>, query: &str, vars: Value) -> Value {
        let resp = self.gql_resp(token, query, vars).await;
        assert!(
            resp.status < 500,
            "HTTP {} for {query}: {}",
            resp.status,
            resp.text
        );
        resp.json()
    }

    /// A GraphQL request that must succeed; returns `data`.
    pub async fn ok(&self, token: Option<&str>, query: &str, vars: Value) -> Value {
        let resp = self.gql_opt(token, query, vars.clone()).await;
        data(&resp).clone()
    }

    // ---- scenario helpers --------------------------------------------------------

    /// Create (or promote) a site administrator with the CLI and log in as them.
    pub async fn site_admin(&self) -> String {
        self.site_admin_as(ADMIN_EMAIL).await.0
    }

    /// `admin create` then log in; returns (session token, generated password).
    pub async fn site_admin_as(&self, email: &str) -> (String, String) {
        let out = self.cli(&["admin", "create", "--email", email]).await;
        assert!(out.success(), "admin create failed: {out:?}");
        let password = out
            .stdout
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .expect("admin create printed no password")
            .to_string();
        (self.log_in(email, &password).await, password)
    }

    pub async fn log_in(&self, email: &str, password: &str) -> String {
        self.session(
            "mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { token user { id } } }",
            json!({ "e": email, "p": password }),
            "logIn",
        )
        .await
        .0
    }

    /// Sign up a new user (password [`PASSWORD`]); returns the session token.
    pub async fn sign_up(&self, email: &str) -> String {
        self.sign_up_full(email).await.0
    }

    /// Sign up; returns (token, user id).
    pub async fn sign_up_full(&self, email: &str) -> (String, String) {
        let name = email.split('@').next().unwrap_or(email);
        self.session(
            "mutation($e: String!, $p: String!, $n: String!) { signUp(email: $e, password: $p, displayName: $n) { token user { id } } }",
            json!({ "e": email, "p": PASSWORD, "n": name }),
            "signUp",
        )
        .await
    }

    /// Run signUp or logIn; (token, user id) from the returned Session.
    async fn session(&self, query: &str, vars: Value, field: &str) -> (String, String) {
        let resp = self.gql_opt(None, query, vars).await;
        let d = data(&resp);
        (
            str_at(d, &format!("/{field}/token")),
            str_at(d, &format!("/{field}/user/id")),
        )
    }

    /// Create an event as `admin` with submissions open now (opened a day ago, closing
    /// in a day), judging afterwards. Returns the event id.
    pub async fn create_event(&self, admin: &str, slug: &str, max_team_size: i64) -> String {
        let now = Utc::now();
        let d = self
            .ok(
                Some(admin),
                "mutation($i: CreateEventInput!) { createEvent(input: $i) { id slug } }",
                json!({ "i": {
                    "slug": slug,
                    "name": format!("Event {slug}"),
                    "externalId": format!("evt_{}", slug.replace('-', "_")),
                    "submissionsOpen": rfc3339(now - chrono::Duration::days(1)),
                    "submissionsClose": rfc3339(now + chrono::Duration::days(1)),
                    "judgingOpen": rfc3339(now + chrono::Duration::days(2)),
                    "judgingClose": rfc3339(now + chrono::Duration::days(3)),
                    "reviewsPerProject": 3,
                    "maxTeamSize": max_team_size,
                }}),
            )
            .await;
        str_at(&d, "/createEvent/id")
    }

    pub async fn grant(&self, by: &str, event: &str, email: &str, role: &str) -> String {
        let d = self
            .ok(
                Some(by),
                "mutation($ev: String!, $e: String!, $r: Role!) { grantRole(event: $ev, email: $e, role: $r) { id } }",
                json!({ "ev": event, "e": email, "r": role }),
            )
            .await;
        str_at(&d, "/grantRole/id")
    }

    pub async fn create_track(&self, by: &str, event: &str, name: &str) -> String {
        let d = self
            .ok(
                Some(by),
                "mutation($ev: String!, $n: String!) { createTrack(event: $ev, name: $n) { id } }",
                json!({ "ev": event, "n": name }),
            )
            .await;
        str_at(&d, "/createTrack/id")
    }

    pub async fn register(&self, token: &str, event: &str) -> String {
        let d = self
            .ok(
                Some(token),
                "mutation($ev: String!) { registerForEvent(event: $ev) { id } }",
                json!({ "ev": event }),
            )
            .await;
        str_at(&d, "/registerForEvent/id")
    }

    /// Returns (team id, invite code).
    pub async fn create_team(&self, token: &str, event: &str, name: &str) -> (String, String) {
        let d = self
            .ok(
                Some(token),
                "mutation($ev: String!, $n: String!) { createTeam(event: $ev, name: $n) { id inviteCode } }",
                json!({ "ev": event, "n": name }),
            )
            .await;
        (
            str_at(&d, "/createTeam/id"),
            str_at(&d, "/createTeam/inviteCode"),
        )
    }

    pub async fn create_project(
        &self,
        token: &str,
        event: &str,
        title: &str,
        track: &str,
    ) -> String {
        let d = self
            .ok(
                Some(token),
                "mutation($ev: String!, $i: ProjectInput!) { createProject(event: $ev, input: $i) { id status } }",
                json!({ "ev": event, "i": { "title": title, "track": track } }),
            )
            .await;
        assert_eq!(
            d["createProject"]["status"], "DRAFT",
            "a new project is a draft"
        );
        str_at(&d, "/createProject/id")
    }

    pub async fn submit_project(&self, token: &str, id: &str) {
        let d = self
            .ok(
                Some(token),
                "mutation($id: ID!) { submitProject(id: $id) { id status } }",
                json!({ "id": id }),
            )
            .await;
        assert_eq!(d["submitProject"]["status"], "SUBMITTED");
    }

    /// The number of audit events of an event, as its organizer sees it.
    pub async fn audit_count(&self, organizer: &str, event: &str) -> i64 {
        let d = self
            .ok(
                Some(organizer),
                "query($s: String!) { event(slug: $s) { auditLog(first: 1) { totalCount } } }",
                json!({ "s": event }),
            )
            .await;
        d["event"]["auditLog"]["totalCount"]
            .as_i64()
            .unwrap_or_else(|| panic!("no auditLog.totalCount: {d}"))
    }

    /// Build the standard two-event scenario used by the authorization tests.
    pub async fn scenario(&self) -> Scenario {
        let (admin, admin_password) = self.site_admin_as(ADMIN_EMAIL).await;
        let tag = unique();
        let event_a = format!("event-a-{tag}");
        let event_b = format!("event-b-{tag}");
        let (event_a_id, event_b_id) = tokio::join!(
            self.create_event(&admin, &event_a, 4),
            self.create_event(&admin, &event_b, 4)
        );

        let emails = Emails {
            organizer_a: format!("org-a-{tag}@example.org"),
            organizer_b: format!("org-b-{tag}@example.org"),
            judge_a: format!("judge-a-{tag}@example.org"),
            participant_a: format!("participant-a-{tag}@example.org"),
        };
        let (oa, ob, ja, pa) = tokio::join!(
            self.sign_up_full(&emails.organizer_a),
            self.sign_up_full(&emails.organizer_b),
            self.sign_up_full(&emails.judge_a),
            self.sign_up_full(&emails.participant_a),
        );
        self.grant(&admin, &event_a, &emails.organizer_a, "ORGANIZER")
            .await;
        self.grant(&admin, &event_b, &emails.organizer_b, "ORGANIZER")
            .await;
        self.grant(&oa.0, &event_a, &emails.judge_a, "JUDGE").await;
        let track_a = self.create_track(&oa.0, &event_a, "Track A1").await;
        let track_b = self.create_track(&ob.0, &event_b, "Track B1").await;
        self.register(&pa.0, &event_a).await;
        let (team_a, invite_code) = self.create_team(&pa.0, &event_a, "Team A").await;
        let draft = self
            .create_project(&pa.0, &event_a, "Draft project", &track_a)
            .await;
        let submitted = self
            .create_project(&pa.0, &event_a, "Submitted project", &track_a)
            .await;
        self.submit_project(&pa.0, &submitted).await;

        Scenario {
            admin,
            admin_password,
            organizer_a: oa.0,
            organizer_b: ob.0,
            judge_a: ja.0,
            participant_a: pa.0,
            organizer_a_id: oa.1,
            organizer_b_id: ob.1,
            judge_a_id: ja.1,
            participant_a_id: pa.1,
            emails,
            event_a,
            event_b,
            event_a_id,
            event_b_id,
            track_a,
            track_b,
            team_a,
            invite_code,
            draft,
            submitted,
        }
    }

    /// Open a graphql-transport-ws connection to /graphql/ws and complete the handshake.
    pub async fn ws(&self, init_payload: Value) -> Ws {
        use futures_util::SinkExt;
        use tokio_tungstenite::tungstenite::{client::IntoClientRequest, http::HeaderValue};
        let mut req = format!("ws://127.0.0.1:{}/graphql/ws", self.port)
            .into_client_request()
            .expect("ws request");
        req.headers_mut().insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static("graphql-transport-ws"),
        );
        let (mut stream, resp) = tokio_tungstenite::connect_async(req)
            .await
            .unwrap_or_else(|e| panic!("websocket connect to /graphql/ws: {e}"));
        assert_eq!(
            resp.headers()
                .get("sec-websocket-protocol")
                .and_then(|v| v.to_str().ok()),
            Some("graphql-transport-ws"),
            "the server accepts the graphql-transport-ws subprotocol"
        );
        stream
            .send(ws_text(
                json!({ "type": "connection_init", "payload": init_payload }),
            ))
            .await
            .expect("send connection_init");
        let mut ws = Ws { stream };
        let ack = ws
            .next_json(Duration::from_secs(10))
            .await
            .expect("connection_ack");
        assert_eq!(ack["type"], "connection_ack", "handshake: {ack}");
        ws
    }
}

fn ws_text(v: Value) -> tokio_tungstenite::tungstenite::Message {
    tokio_tungstenite::tungstenite::Message::Text(v.to_string().into())
}

/// A graphql-transport-ws client connection.
pub struct Ws {
    pub stream: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
}

impl Ws {
    pub async fn send(&mut self, v: Value) {
        use futures_util::SinkExt;
        self.stream.send(ws_text(v)).await.expect("websocket send");
    }

    pub async fn subscribe(&mut self, id: &str, query: &str, vars: Value) {
        self.send(json!({ "id": id, "type": "subscribe", "payload": { "query": query, "variables": vars } }))
            .await;
    }

    /// The next JSON message that is not a ping (pings are answered), or `None` on
    /// timeout or close.
    pub async fn next_json(&mut self, within: Duration) -> Option<Value> {
        use futures_util::StreamExt;
        use tokio_tungstenite::tungstenite::Message;
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let msg = tokio::time::timeout_at(deadline, self.stream.next())
                .await
                .ok()??;
            let msg = msg.ok()?;
            match msg {
                Message::Text(t) => {
                    let v: Value = serde_json::from_str(t.as_str()).ok()?;
                    if v["type"] == "ping" {
                        self.send(json!({ "type": "pong" })).await;
                        continue;
                    }
                    return Some(v);
                }
                Message::Close(_) => return None,
                _ => continue,
            }
        }
    }
}

async fn read(resp: reqwest::Response) -> Resp {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap_or_default();
    Resp {
        status,
        headers,
        text,
    }
}

/// Tokens and ids of the standard scenario: event A and B; an organizer of each, a judge
/// of A, a participant of A with a team, a draft and a submitted project.
pub struct Scenario {
    pub admin: String,
    pub admin_password: String,
    pub organizer_a: String,
    pub organizer_b: String,
    pub judge_a: String,
    pub participant_a: String,
    pub organizer_a_id: String,
    pub organizer_b_id: String,
    pub judge_a_id: String,
    pub participant_a_id: String,
    pub emails: Emails,
    pub event_a: String,
    pub event_b: String,
    pub event_a_id: String,
    pub event_b_id: String,
    pub track_a: String,
    pub track_b: String,
    pub team_a: String,
    pub invite_code: String,
    pub draft: String,
    pub submitted: String,
}

pub struct Emails {
    pub organizer_a: String,
    pub organizer_b: String,
    pub judge_a: String,
    pub participant_a: String,
}

/// The six callers of the authorization matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    Anonymous,
    Participant,
    Judge,
    OrganizerA,
    OrganizerB,
    SiteAdmin,
}

pub const CALLERS: [Caller; 6] = [
    Caller::Anonymous,
    Caller::Participant,
    Caller::Judge,
    Caller::OrganizerA,
    Caller::OrganizerB,
    Caller::SiteAdmin,
];

impl Scenario {
    pub fn token(&self, c: Caller) -> Option<&str> {
        match c {
            Caller::Anonymous => None,
            Caller::Participant => Some(&self.participant_a),
            Caller::Judge => Some(&self.judge_a),
            Caller::OrganizerA => Some(&self.organizer_a),
            Caller::OrganizerB => Some(&self.organizer_b),
            Caller::SiteAdmin => Some(&self.admin),
        }
    }

    /// The caller's email and password (to open another session).
    pub fn credentials(&self, c: Caller) -> Option<(&str, &str)> {
        match c {
            Caller::Anonymous => None,
            Caller::Participant => Some((&self.emails.participant_a, PASSWORD)),
            Caller::Judge => Some((&self.emails.judge_a, PASSWORD)),
            Caller::OrganizerA => Some((&self.emails.organizer_a, PASSWORD)),
            Caller::OrganizerB => Some((&self.emails.organizer_b, PASSWORD)),
            Caller::SiteAdmin => Some((ADMIN_EMAIL, &self.admin_password)),
        }
    }
}

// ---- response helpers ----------------------------------------------------------------

/// `data` of a response that must have no errors.
pub fn data(resp: &Value) -> &Value {
    if resp["errors"].as_array().is_some_and(|a| !a.is_empty()) {
        panic!("unexpected errors: {resp}");
    }
    resp.get("data")
        .unwrap_or_else(|| panic!("no data: {resp}"))
}

/// `errors[0].extensions.code`.
pub fn error_code(resp: &Value) -> Option<String> {
    resp.pointer("/errors/0/extensions/code")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// `errors[0].message`.
pub fn error_message(resp: &Value) -> String {
    resp.pointer("/errors/0/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Assert the first error's code.
#[track_caller]
pub fn assert_code(resp: &Value, code: &str) {
    assert_eq!(
        error_code(resp).as_deref(),
        Some(code),
        "expected {code}: {resp}"
    );
}

/// Assert BAD_USER_INPUT whose `extensions.field` names one of `fields` (a trailing
/// path segment match, so `input.title` names `title`).
#[track_caller]
pub fn assert_bad_input(resp: &Value, fields: &[&str]) {
    assert_code(resp, "BAD_USER_INPUT");
    let field = resp
        .pointer("/errors/0/extensions/field")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("BAD_USER_INPUT without extensions.field: {resp}"));
    let last = field.rsplit(['.', '/']).next().unwrap_or(field);
    assert!(
        fields.iter().any(|f| *f == field || *f == last),
        "extensions.field {field:?} should name one of {fields:?}: {resp}"
    );
}

#[track_caller]
pub fn str_at(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {v}"))
        .to_string()
}

pub fn rfc3339(t: chrono::DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The head seq in `audit verify` output: JSON with a `seq`, or text like
/// `ok head seq=42 hash=...`, or the first bare integer.
pub fn parse_head_seq(stdout: &str) -> Option<u64> {
    let text = stdout.trim();
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        for p in ["/seq", "/head/seq", "/head_seq", "/headSeq", "/head"] {
            if let Some(n) = v.pointer(p).and_then(Value::as_u64) {
                return Some(n);
            }
        }
    }
    let lower = text.to_lowercase();
    if let Some(i) = lower.find("seq") {
        let digits: String = lower[i + 3..]
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if let Ok(n) = digits.parse() {
            return Some(n);
        }
    }
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()))
        .and_then(|w| w.parse().ok())
}

/// The event fixture shipped beside the repository.
pub fn fixture_path() -> PathBuf {
    if let Ok(p) = std::env::var("VERDICT_FIXTURE") {
        return PathBuf::from(p);
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let candidates = [
        repo.join("fixtures/spring-hack-2026.json"),
        repo.join("../shared/fixtures/spring-hack-2026.json"),
    ];
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| panic!("fixture not found (set VERDICT_FIXTURE); tried {candidates:?}"))
}

pub fn load_fixture() -> Value {
    let p = fixture_path();
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// A minimal valid `verdict.event.v1` fixture: one track, one organizer, one team with a
/// submitted project. `tag` makes every external id, slug and email unique.
pub fn tiny_fixture(tag: &str) -> Value {
    json!({
        "format": "verdict.event.v1",
        "event": {
            "external_id": format!("evt_{tag}"),
            "slug": format!("tiny-{tag}"),
            "name": format!("Tiny {tag}"),
            "submissions_open": "2026-01-10T09:00:00Z",
            "submissions_close": "2026-01-11T09:00:00Z",
            "judging_open": "2026-01-12T09:00:00Z",
            "judging_close": "2026-01-13T09:00:00Z",
            "voting_open": null,
            "voting_close": null,
            "reviews_per_project": 1,
            "max_team_size": 3
        },
        "tracks": [ { "external_id": format!("trk_{tag}"), "name": "Only track" } ],
        "people": [
            { "external_id": format!("usr_o_{tag}"), "email": format!("tiny-org-{tag}@example.org"), "display_name": "Tiny Organizer" },
            { "external_id": format!("usr_p_{tag}"), "email": format!("tiny-part-{tag}@example.org"), "display_name": "Tiny Participant" }
        ],
        "organizers": [ format!("usr_o_{tag}") ],
        "judges": [],
        "teams": [ { "external_id": format!("tm_{tag}"), "name": "Tiny team", "members": [ format!("usr_p_{tag}") ] } ],
        "projects": [ {
            "external_id": format!("prj_{tag}"),
            "team": format!("tm_{tag}"),
            "track": format!("trk_{tag}"),
            "title": "Tiny project",
            "tagline": "Small",
            "summary": "A tiny imported project.",
            "repo_url": "https://git.example.org/tiny",
            "demo_url": "",
            "tags": ["tiny"],
            "status": "submitted",
            "submitted_at": "2026-01-11T08:00:00Z"
        } ],
        "criteria": [ { "key": "impact", "name": "Impact", "weight": 1.0, "min": 1, "max": 5, "position": 1 } ],
        "reviews": []
    })
}
