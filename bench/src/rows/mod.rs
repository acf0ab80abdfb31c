//! The rows of issue 10's table, measured against one running server.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::fixtures::{self, BIG, CRITERIA, GALLERY};
use crate::load::{self, Api, Call, Delivery, MakeCall, Outcome, Subscribers, Timing};
use crate::report::{Report, count, dash, ratio};
use crate::server::{Server, Store};

mod live;
mod pages;

pub use pages::Tokens;

/// Judges writing reviews concurrently in rows 6 and 7 (one connection each).
pub const WRITERS: usize = 64;
/// The judge whose fresh reviews row 7 times through `judgingProgress`: not a writer.
pub const PROBE_JUDGE: usize = WRITERS;
/// Organizers following `judgingProgress` in row 7.
const PROGRESS_SUBSCRIBERS: usize = 1000;

const GALLERY_QUERY: &str = "query($slug: String!) { event(slug: $slug) { projects(first: 50) { edges { node { title tagline track { name } team { name } } } } } }";

/// The same page from PostGraphile 4: its names for Verdict's tables (`projects`, with
/// composite foreign keys to `tracks` and `teams`), and the gallery's filter (submitted,
/// neither hidden nor a duplicate) as a condition. It enforces no authorization.
const POSTGRAPHILE_QUERY: &str = "query($slug: String!) { eventBySlug(slug: $slug) { projectsByEventId(first: 50, condition: {status: \"submitted\", hiddenReason: null, duplicateOf: null}) { edges { node { title tagline trackByEventIdAndTrackId { name } teamByEventIdAndTeamId { name } } } } } }";

const SAVE_REVIEW: &str = "mutation($a: ID!, $s: [ScoreInput!]!) { saveReview(assignment: $a, scores: $s, submit: true) { version } }";

/// Everything the rows share for one backend.
pub struct Bench<'a> {
    pub backend: &'static str,
    pub verdict: &'a Path,
    pub store: &'a Store,
    pub server: &'a Server,
    pub api: Api,
    pub timing: Timing,
    pub subscribers: usize,
    pub admin: String,
    /// API tokens of the signed-in rows (organizers, a judge, a participant).
    pub tokens: Tokens,
    /// Tokens of judges `0..=PROBE_JUDGE` of the big event, when rows 6 or 7 run.
    pub judges: Vec<String>,
    pub big: &'a fixtures::Event,
    pub report: &'a mut Report,
    /// `{__typename}` per second at 1 and at 64 connections (row 1).
    pub ceiling: HashMap<usize, f64>,
    /// `{__typename}` per second signed in with an organizer's API token, 64 connections
    /// (row 1, or the first row that needs it).
    pub signed_ceiling: Option<f64>,
    /// Verdict's gallery per second at 64 connections (row 2), for row 3's ratio.
    pub gallery_64: Option<f64>,
    /// The same signed in with the organizer's API token (row 2), for row 3.
    pub gallery_signed_64: Option<f64>,
    /// The published calibration run of the big event (row 4, or row 5 when 4 is skipped).
    pub run: Option<String>,
    /// saveReview p99 in ms with nobody subscribed (row 6), for row 7.
    pub writes_p99: Option<f64>,
}

fn rate(o: &Outcome) -> String {
    format!(
        "{}/s (p50 {:.2} ms, p99 {:.2} ms)",
        count(o.per_second()),
        o.p50_ms(),
        o.p99_ms()
    )
}

fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

impl Bench<'_> {
    fn run_load(
        &self,
        connections: usize,
        make: MakeCall,
    ) -> impl Future<Output = Outcome> + use<> {
        let (url, proc, timing) = (self.api.url.clone(), self.server.proc, self.timing);
        async move { load::run(&url, &proc, connections, timing, make).await }
    }

    /// Reports a load's rate against the ceiling at the same connection count; `None`
    /// (and a "not measured" line) when every request failed.
    fn rate_line(
        &mut self,
        row: &str,
        metric: &str,
        o: &Outcome,
        ceiling: Option<f64>,
    ) -> Option<f64> {
        self.rate_line_with(row, metric, o, ceiling, "")
    }

    /// [`Bench::rate_line`] with the server's CPU per request in the same line (3 decimals).
    fn rate_cpu_line(
        &mut self,
        row: &str,
        metric: &str,
        o: &Outcome,
        ceiling: Option<f64>,
    ) -> Option<f64> {
        let cpu = format!(", server CPU {:.3} ms/request", o.cpu_ms_per_request());
        self.rate_line_with(row, metric, o, ceiling, &cpu)
    }

    /// [`Bench::rate_line`] with `extra` after the rate and latencies; failed requests are
    /// always said, after it.
    fn rate_line_with(
        &mut self,
        row: &str,
        metric: &str,
        o: &Outcome,
        ceiling: Option<f64>,
        extra: &str,
    ) -> Option<f64> {
        if o.served == 0 {
            let why = match &o.first_error {
                Some(e) => format!("all {} requests failed, e.g. {e}", o.failed),
                None => "no request was answered".into(),
            };
            self.report
                .not_measured(row, self.backend, &format!("{metric}: {why}"));
            return None;
        }
        let failed = if o.failed > 0 {
            format!(
                ", {} failed: {}",
                o.failed,
                o.first_error.as_deref().unwrap_or("")
            )
        } else {
            String::new()
        };
        let (c, r) = match ceiling {
            Some(c) => (format!("{}/s", count(c)), ratio(o.per_second(), c)),
            None => (dash(), dash()),
        };
        self.report.add(
            row,
            self.backend,
            metric,
            format!("{}{extra}{failed}", rate(o)),
            c,
            r,
        );
        Some(o.per_second())
    }

    /// Row 1: `{__typename}` over POST, the ceiling every read row is compared with.
    pub async fn ceiling(&mut self) {
        for c in [1, 64] {
            let o = self
                .run_load(c, load::fixed("{__typename}", json!({}), None))
                .await;
            if let Some(r) =
                self.rate_line("1 ceiling", &format!("{{__typename}}, {c} conn"), &o, None)
            {
                self.ceiling.insert(c, r);
            }
        }
        self.signed_ceiling().await;
    }

    /// `{__typename}` signed in with the gallery organizer's API token at 64 connections:
    /// every signed-in row's ceiling. Measured once, in row 1 or in the first row needing it.
    async fn signed_ceiling(&mut self) -> Option<f64> {
        if self.signed_ceiling.is_none() {
            let token = self.tokens.organizer.clone();
            let o = self
                .run_load(64, load::fixed("{__typename}", json!({}), Some(&token)))
                .await;
            self.signed_ceiling = self.rate_cpu_line(
                "1 ceiling",
                "{__typename}, signed in (an organizer's API token), 64 conn",
                &o,
                None,
            );
        }
        self.signed_ceiling
    }

    /// Row 2: the anonymous gallery page of 50 projects with track and team, and the server
    /// CPU it costs.
    pub async fn gallery(&mut self) {
        const ROW: &str = "2 gallery";
        let vars = json!({ "slug": GALLERY });
        match self.api.gql(None, GALLERY_QUERY, vars.clone()).await {
            Ok(d) if d["event"]["projects"]["edges"].as_array().map(Vec::len) == Some(50) => {}
            Ok(d) => {
                return self.report.not_measured(
                    ROW,
                    self.backend,
                    &format!("expected 50 projects, got {d}"),
                );
            }
            Err(e) => return self.report.not_measured(ROW, self.backend, &e),
        }
        for c in [1, 64] {
            let o = self
                .run_load(c, load::fixed(GALLERY_QUERY, vars.clone(), None))
                .await;
            let ceiling = self.ceiling.get(&c).copied();
            let r = self.rate_line(
                ROW,
                &format!("50 projects + track + team, {c} conn"),
                &o,
                ceiling,
            );
            if r.is_some() {
                self.report.value(
                    ROW,
                    self.backend,
                    &format!("server CPU per page, {c} conn"),
                    format!("{:.2} ms", o.cpu_ms_per_request()),
                );
            }
            if c == 64 {
                self.gallery_64 = r;
            }
        }
        // Anonymous answers are shared while nothing is committed; a signed-in request
        // executes every time: the cost of the page itself, against the signed-in ceiling.
        let ceiling = self.signed_ceiling().await;
        let token = self.tokens.organizer.clone();
        let o = self
            .run_load(64, load::fixed(GALLERY_QUERY, vars.clone(), Some(&token)))
            .await;
        self.gallery_signed_64 = self.rate_line(
            ROW,
            "the same, signed in with the organizer's API token (executes every request; ceiling: signed-in {__typename}), 64 conn",
            &o,
            ceiling,
        );
        if self.gallery_signed_64.is_some() {
            self.report.value(
                ROW,
                self.backend,
                "server CPU per page, signed in, 64 conn",
                format!("{:.2} ms", o.cpu_ms_per_request()),
            );
        }
    }

    /// Row 3: the same page from PostGraphile 4 on this database's tables.
    pub async fn postgraphile(&mut self, folder: &Path) {
        const ROW: &str = "3 PostGraphile";
        if self.store.backend != crate::server::Backend::Postgres {
            return self.report.not_measured(
                ROW,
                self.backend,
                "PostGraphile runs on PostgreSQL only",
            );
        }
        let pg = match Server::postgraphile(folder, self.store).await {
            Ok(pg) => pg,
            Err(e) => return self.report.not_measured(ROW, self.backend, &e),
        };
        let api = Api::new(format!("{}/graphql", pg.base));
        let vars = json!({ "slug": GALLERY });
        match api.gql(None, POSTGRAPHILE_QUERY, vars.clone()).await {
            Ok(d)
                if d["eventBySlug"]["projectsByEventId"]["edges"]
                    .as_array()
                    .map(Vec::len)
                    == Some(50) => {}
            Ok(d) => {
                return self.report.not_measured(
                    ROW,
                    self.backend,
                    &format!("expected 50 projects, got {d}"),
                );
            }
            Err(e) => return self.report.not_measured(ROW, self.backend, &e),
        }
        let o = load::run(
            &api.url,
            &pg.proc,
            64,
            self.timing,
            load::fixed(POSTGRAPHILE_QUERY, vars, None),
        )
        .await;
        let ceiling = self.ceiling.get(&64).copied();
        let Some(theirs) = self.rate_line(ROW, "the same gallery page, 64 conn", &o, ceiling)
        else {
            return;
        };
        self.report.value(
            ROW,
            self.backend,
            "PostGraphile server CPU per page, 64 conn",
            format!(
                "{:.2} ms (node only; PostgreSQL's own CPU not counted)",
                o.cpu_ms_per_request()
            ),
        );
        match self.gallery_64 {
            Some(ours) => self.report.add(
                ROW,
                self.backend,
                "Verdict / PostGraphile, 64 conn",
                format!("{}/s vs {}/s", count(ours), count(theirs)),
                dash(),
                format!("{:.2}×", ours / theirs),
            ),
            None => self.report.value(
                ROW,
                self.backend,
                "Verdict / PostGraphile",
                "— (row 2 not measured)".into(),
            ),
        }
        let metric = "Verdict signed in (organizer's API token, every field guarded) / PostGraphile (no authorization here), 64 conn";
        match self.gallery_signed_64 {
            Some(ours) => self.report.add(
                ROW,
                self.backend,
                metric,
                format!("{}/s vs {}/s", count(ours), count(theirs)),
                dash(),
                format!("{:.2}×", ours / theirs),
            ),
            None => self
                .report
                .value(ROW, self.backend, metric, "— (row 2 not measured)".into()),
        }
    }

    /// Runs a calibration of the big event and publishes it (provisional), once.
    async fn publish(&mut self, api: &Api) -> Result<String, String> {
        let run = match &self.run {
            Some(run) => run.clone(),
            None => {
                let d = api
                    .gql(
                        Some(&self.admin),
                        "mutation($e: String!) { runCalibration(event: $e, seed: 1, bootstrap: 200) { id } }",
                        json!({ "e": BIG }),
                    )
                    .await?;
                let id = d["runCalibration"]["id"]
                    .as_str()
                    .ok_or("runCalibration returned no id")?
                    .to_owned();
                self.run = Some(id.clone());
                id
            }
        };
        let d = api
            .gql(
                Some(&self.admin),
                "mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r, final: false) { version } }",
                json!({ "e": BIG, "r": run }),
            )
            .await?;
        Ok(d["publishResults"]["version"].to_string())
    }

    /// The public ranking query and what it asks for: a page of 50 with titles when
    /// `PublishedResults` has a paginated ranking field (`ranking` or `rankingPage` taking
    /// `first`, a connection or a list), otherwise the whole `ranking` list without titles
    /// (which keeps 2,000 projects within the anonymous complexity limit).
    async fn ranking_query(&self) -> Result<(String, String), String> {
        let d = self
            .api
            .gql(
                None,
                "{ __type(name: \"PublishedResults\") { fields { name args { name } type { name ofType { name ofType { name ofType { name } } } } } } }",
                json!({}),
            )
            .await?;
        let fields = d["__type"]["fields"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let paginated = fields.iter().find(|f| {
            f["name"].as_str().is_some_and(|n| n.starts_with("ranking"))
                && f["args"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x["name"] == "first"))
        });
        let columns = "rank rankLow rankHigh quality rawMean projectExternalId";
        let selection = match paginated {
            Some(f) => {
                let name = f["name"].as_str().unwrap_or("ranking");
                let mut t = &f["type"];
                while t["name"].is_null() && !t["ofType"].is_null() {
                    t = &t["ofType"];
                }
                let page = if t["name"]
                    .as_str()
                    .is_some_and(|n| n.ends_with("Connection"))
                {
                    format!("{{ totalCount edges {{ node {{ {columns} project {{ title }} }} }} }}")
                } else {
                    format!("{{ {columns} project {{ title }} }}")
                };
                (
                    format!("{name}(first: 50) {page}"),
                    format!("{name}(first: 50) with titles"),
                )
            }
            None => (
                format!("ranking {{ {columns} }}"),
                "whole ranking list (not paginated), no titles".to_owned(),
            ),
        };
        Ok((
            format!(
                "query($slug: String!) {{ event(slug: $slug) {{ results {{ version {} }} }} }}",
                selection.0
            ),
            selection.1,
        ))
    }

    /// Row 4: the public results of the big event after a calibration run and its
    /// publication, and the server's resident set around the load.
    pub async fn results(&mut self) {
        const ROW: &str = "4 public results";
        if let Err(e) = self.publish(&self.api.clone()).await {
            return self.report.not_measured(
                ROW,
                self.backend,
                &format!("calibrate and publish: {e}"),
            );
        }
        let (query, shape) = match self.ranking_query().await {
            Ok(q) => q,
            Err(e) => return self.report.not_measured(ROW, self.backend, &e),
        };
        let vars = json!({ "slug": BIG });
        if let Err(e) = self.api.gql(None, &query, vars.clone()).await {
            return self.report.not_measured(ROW, self.backend, &e);
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let idle = self.server.proc.rss_kib();
        let mut peak = idle;
        for c in [1, 64] {
            let o = self
                .run_load(c, load::fixed(&query, vars.clone(), None))
                .await;
            peak = peak.max(o.peak_rss_kib);
            let ceiling = self.ceiling.get(&c).copied();
            self.rate_line(
                ROW,
                &format!("2,000-project ranking, {shape}, {c} conn"),
                &o,
                ceiling,
            );
        }
        // Anonymous answers are shared while nothing is committed; signed in, each request
        // executes.
        let admin = self.admin.clone();
        let o = self
            .run_load(64, load::fixed(&query, vars.clone(), Some(&admin)))
            .await;
        peak = peak.max(o.peak_rss_kib);
        let ceiling = self.ceiling.get(&64).copied();
        self.rate_line(
            ROW,
            "the same, signed in (executes every request), 64 conn",
            &o,
            ceiling,
        );
        tokio::time::sleep(Duration::from_secs(10)).await;
        let after = self.server.proc.rss_kib();
        self.report.value(
            ROW,
            self.backend,
            "server RSS: idle before / peak / 10 s after",
            format!("{} / {} / {}", mib(idle), mib(peak), mib(after)),
        );
    }

    /// Row 5: `resultsPublished` to many idle subscribers: memory per subscriber, and how
    /// long after the publishing mutation's answer the last one hears of it.
    pub async fn fanout(&mut self) {
        const ROW: &str = "5 resultsPublished fan-out";
        // A fresh process: one that served row 4's load keeps its freed heap resident and
        // fills it again first, which would hide what the subscribers cost.
        let server = match Server::verdict(self.verdict, self.store, &[]).await {
            Ok(s) => s,
            Err(e) => return self.report.not_measured(ROW, self.backend, &e),
        };
        let api = Api::new(format!("{}/graphql", server.base));
        // Without row 4, the first calibration and publication go through the first
        // server: computed in the fresh one, their freed heap would hold the subscribers
        // (row 5 alone read 0.0 KiB per subscriber).
        if self.run.is_none()
            && let Err(e) = self.publish(&self.api.clone()).await
        {
            return self.report.not_measured(
                ROW,
                self.backend,
                &format!("calibrate and publish: {e}"),
            );
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let before = server.proc.rss_kib();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let query = format!("subscription {{ resultsPublished(event: \"{BIG}\") {{ version }} }}");
        let subs = Subscribers::open(&ws_url(&server), self.subscribers, None, &query, tx).await;
        if subs.connected < self.subscribers {
            let why = format!(
                "{} of {} subscribers connected: {}",
                subs.connected,
                self.subscribers,
                subs.first_error.as_deref().unwrap_or("")
            );
            subs.close().await;
            return self.report.not_measured(ROW, self.backend, &why);
        }
        // Subscribing completes after the handshake; give the server time to set it up.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let idle = server.proc.rss_kib();
        self.report.value(
            ROW,
            self.backend,
            &format!(
                "server RSS per idle subscriber ({} subscribers)",
                subs.connected
            ),
            format!(
                "{:.1} KiB ({} → {})",
                idle.saturating_sub(before) as f64 / subs.connected as f64,
                mib(before),
                mib(idle)
            ),
        );
        let sent = Instant::now();
        let published = self.publish(&api).await;
        let answered = Instant::now();
        if let Err(e) = published {
            subs.close().await;
            return self
                .report
                .not_measured(ROW, self.backend, &format!("publishResults: {e}"));
        }
        let mut last = None;
        let mut delivered = 0;
        let mut unexpected = None;
        let deadline = answered + Duration::from_secs(60);
        while delivered < subs.connected {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some((_, at, data))) => {
                    if data.get("resultsPublished").is_some() {
                        delivered += 1;
                        last = Some(at);
                    } else {
                        unexpected.get_or_insert(data);
                    }
                }
                _ => break,
            }
        }
        let connected = subs.connected;
        subs.close().await;
        let Some(last) = last else {
            let why = format!(
                "no subscriber heard of the publication within 60 s; first other message: {unexpected:?}"
            );
            return self.report.not_measured(ROW, self.backend, &why);
        };
        self.report.value(
            ROW,
            self.backend,
            "last delivery after publishResults answered",
            format!(
                "{:.0} ms (delivered to {delivered} of {connected}; mutation took {:.0} ms)",
                last.saturating_duration_since(answered).as_secs_f64() * 1000.0,
                (answered - sent).as_secs_f64() * 1000.0
            ),
        );
    }
}

fn ws_url(server: &Server) -> String {
    format!("{}/graphql/ws", server.base.replacen("http://", "ws://", 1))
}

fn save_review_body(assignment: &str, value: i64) -> String {
    let scores: Vec<Value> = CRITERIA
        .iter()
        .map(|c| json!({ "criterion": c, "value": value }))
        .collect();
    json!({ "query": SAVE_REVIEW, "variables": { "a": assignment, "s": scores } }).to_string()
}

/// Row 8: `verdict bench calibrate` at the two sizes of the issue (the larger only in a
/// full run); independent of the database.
pub fn calibration(verdict: &Path, quick: bool, report: &mut Report) {
    const ROW: &str = "8 calibration";
    let sizes: &[(u32, u32)] = if quick {
        &[(300, 2000)]
    } else {
        &[(300, 2000), (3000, 20000)]
    };
    for &(judges, projects) in sizes {
        let metric = format!("{judges} judges / {projects} projects / k 5 / bootstrap 200");
        println!("  calibrating {metric} (the larger panel may take minutes)");
        let out = std::process::Command::new(verdict)
            .args(["bench", "calibrate", "--k", "5", "--bootstrap", "200"])
            .args([
                "--judges",
                &judges.to_string(),
                "--projects",
                &projects.to_string(),
            ])
            .output();
        let text = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
            Ok(o) => {
                return report.not_measured(ROW, "—", String::from_utf8_lossy(&o.stderr).trim());
            }
            Err(e) => return report.not_measured(ROW, "—", &e.to_string()),
        };
        match text
            .lines()
            .find_map(|l| l.split("time (CV + fit + bootstrap):").nth(1))
        {
            Some(t) => report.value(ROW, "—", &metric, t.trim().to_owned()),
            None => report.not_measured(ROW, "—", &format!("unexpected output: {text}")),
        }
    }
}
