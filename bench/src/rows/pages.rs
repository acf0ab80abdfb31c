//! Rows 9 and 10: the pages people use while signed in, each sending the operation the web
//! client sends, and the cost of the server's per-request layers.
//!
//! The operations are read from `web/app`'s source at build time (`include_str!`): the
//! text between the backquotes of the `graphql(` document that names the operation. A
//! renamed or moved operation fails the unit tests (and its line says so), and a changed
//! one is measured as changed: the bench cannot drift from what the client asks.

use super::*;

use crate::fixtures::{GALLERY, organizer_email, participant_email};
use crate::server::{Store, cli};

const SESSION: &str = include_str!("../../../web/app/src/session.tsx");
const JUDGE: &str = include_str!("../../../web/app/src/pages/judge.tsx");
const OVERVIEW: &str = include_str!("../../../web/app/src/pages/organizer/overview.tsx");
const LEADERBOARD: &str = include_str!("../../../web/app/src/pages/organizer/results.tsx");
const PARTICIPANT: &str = include_str!("../../../web/app/src/pages/participant.tsx");
const GALLERY_PAGE: &str = include_str!("../../../web/app/src/pages/public/gallery.tsx");

/// The API tokens the signed-in rows use, minted with `verdict token mint`.
pub struct Tokens {
    /// The gallery event's organizer: the signed-in ceiling and the signed-in gallery.
    pub organizer: String,
    /// The big event's organizer: the overview and the leaderboard.
    pub big_organizer: String,
    /// Judge 0 of the big event: the judge's queue.
    pub judge: String,
    /// Participant 0 of the big event (team `tm_00000`, project `prj_00000`).
    pub participant: String,
}

impl Tokens {
    pub fn mint(verdict: &Path, store: &Store, big: &fixtures::Event) -> Result<Tokens, String> {
        let mint = |email: &str| {
            cli(
                verdict,
                store,
                &["token", "mint", "--email", email, "--name", "bench-pages"],
            )
        };
        Ok(Tokens {
            organizer: mint(&organizer_email(GALLERY))?,
            big_organizer: mint(&organizer_email(BIG))?,
            judge: mint(
                big.judge_emails
                    .first()
                    .ok_or("the big event has no judge")?,
            )?,
            participant: mint(&participant_email(BIG, 0))?,
        })
    }
}

/// Who sends a page's operation.
#[derive(Clone, Copy)]
enum Who {
    /// The gallery event's organizer.
    Organizer,
    /// The big event's organizer.
    BigOrganizer,
    Judge,
    Participant,
}

/// One operation of the web client, as one of its pages sends it.
struct Page {
    /// What the line calls it.
    what: &'static str,
    /// The web client's source file, and the operation's name in it.
    source: (&'static str, &'static str),
    operation: &'static str,
    who: Who,
    /// The variables the page sends, for the bench's events.
    vars: fn() -> Value,
    /// JSON pointers into `data` that must be non-empty, so that an answer without the
    /// page (no event, no access, nothing assigned) is not measured as one.
    must: &'static [&'static str],
}

const PAGES: &[Page] = &[
    Page {
        what: "every signed-in page: the viewer",
        source: ("web/app/src/session.tsx", SESSION),
        operation: "Viewer",
        who: Who::Organizer,
        vars: || json!({}),
        must: &["/viewer/user/id", "/viewer/memberships"],
    },
    Page {
        what: "judge's queue (34 assignments with their reviews)",
        source: ("web/app/src/pages/judge.tsx", JUDGE),
        operation: "JudgeQueue",
        who: Who::Judge,
        vars: || json!({ "slug": BIG }),
        must: &["/event/myAssignments", "/event/rubric"],
    },
    Page {
        what: "organizer overview",
        source: ("web/app/src/pages/organizer/overview.tsx", OVERVIEW),
        operation: "OrgOverview",
        who: Who::BigOrganizer,
        vars: || json!({ "slug": BIG }),
        must: &["/event/judgingProgress/assignments"],
    },
    Page {
        what: "organizer overview: coverage, first page of 100 projects",
        source: ("web/app/src/pages/organizer/overview.tsx", OVERVIEW),
        operation: "OrgCoverageProjects",
        who: Who::BigOrganizer,
        vars: || json!({ "slug": BIG, "after": null }),
        must: &["/event/projects/nodes/99"],
    },
    Page {
        what: "organizer overview: coverage, first page of 100 assignments",
        source: ("web/app/src/pages/organizer/overview.tsx", OVERVIEW),
        operation: "OrgCoverageAssignments",
        who: Who::BigOrganizer,
        vars: || json!({ "slug": BIG, "after": null }),
        must: &["/event/assignments/nodes/99"],
    },
    Page {
        what: "leaderboard (2,000 projects, 300 judges)",
        source: ("web/app/src/pages/organizer/results.tsx", LEADERBOARD),
        operation: "OrgLeaderboard",
        who: Who::BigOrganizer,
        vars: || json!({ "slug": BIG }),
        must: &["/event/leaderboard/projects", "/event/leaderboard/judges"],
    },
    Page {
        what: "participant's team page",
        source: ("web/app/src/pages/participant.tsx", PARTICIPANT),
        operation: "MyTeamPage",
        who: Who::Participant,
        vars: || json!({ "slug": BIG }),
        must: &["/event/myTeam/members", "/event/myTeam/projects"],
    },
    Page {
        what: "participant's project page",
        source: ("web/app/src/pages/participant.tsx", PARTICIPANT),
        operation: "MyProjectPage",
        who: Who::Participant,
        vars: || json!({ "slug": BIG }),
        must: &["/event/myTeam/projects/0/title", "/event/tracks"],
    },
    Page {
        what: "gallery, first page of 48 (organizer)",
        source: ("web/app/src/pages/public/gallery.tsx", GALLERY_PAGE),
        operation: "PublicGallery",
        who: Who::Organizer,
        vars: || json!({ "slug": GALLERY, "track": null, "first": 48, "after": null }),
        must: &["/event/projects/nodes/47", "/event/tracks"],
    },
];

/// The text of the operation `name` in a web client source file: the body of the
/// `graphql(` template literal whose operation (`query Name`, `mutation Name`, ...) it is.
/// Refused when the document interpolates (`${`) or spreads a fragment, which the client
/// would send with more text than the literal.
fn operation(source: &'static str, name: &str) -> Result<&'static str, String> {
    for chunk in source.split("graphql(`").skip(1) {
        let Some((doc, _)) = chunk.split_once('`') else {
            continue;
        };
        let mut words = doc
            .split(|c: char| c.is_whitespace() || c == '(' || c == '{')
            .filter(|w| !w.is_empty());
        let (Some(_kind), Some(found)) = (words.next(), words.next()) else {
            continue;
        };
        if found != name {
            continue;
        }
        if doc.contains("${") || doc.contains("...") {
            return Err(format!(
                "{name} interpolates or spreads a fragment; the bench sends the literal only"
            ));
        }
        return Ok(doc.trim());
    }
    Err(format!("no graphql(`...`) document names {name}"))
}

/// Whether an answer's value is there and not empty (a non-empty list, a non-zero number).
fn present(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// How many times row 10's two servers take turns.
const EDGE_ROUNDS: usize = 2;

impl Bench<'_> {
    fn token(&self, who: Who) -> &str {
        match who {
            Who::Organizer => &self.tokens.organizer,
            Who::BigOrganizer => &self.tokens.big_organizer,
            Who::Judge => &self.tokens.judge,
            Who::Participant => &self.tokens.participant,
        }
    }

    /// Row 9: each page's operation at 64 connections, signed in as the person who uses
    /// the page, against the signed-in `{__typename}` of the same run.
    pub async fn pages(&mut self) {
        const ROW: &str = "9 signed-in pages";
        let ceiling = self.signed_ceiling().await;
        for page in PAGES {
            let (file, text) = page.source;
            let metric = format!("{} ({})", page.what, page.operation);
            let query = match operation(text, page.operation) {
                Ok(q) => q,
                Err(e) => {
                    let why = format!("{metric}: {e} in {file}");
                    self.report.not_measured(ROW, self.backend, &why);
                    continue;
                }
            };
            let token = self.token(page.who).to_owned();
            let vars = (page.vars)();
            let sent = Instant::now();
            let checked = self.api.gql(Some(&token), query, vars.clone()).await;
            let alone = sent.elapsed().as_secs_f64() * 1000.0;
            match checked {
                Ok(d) => {
                    if let Some(missing) = page.must.iter().find(|p| !present(d.pointer(p))) {
                        let answer: String = d.to_string().chars().take(300).collect();
                        let why = format!("{metric}: the answer has no {missing}: {answer}");
                        self.report.not_measured(ROW, self.backend, &why);
                        continue;
                    }
                }
                Err(e) => {
                    self.report
                        .not_measured(ROW, self.backend, &format!("{metric}: {e}"));
                    continue;
                }
            }
            let o64 = self
                .run_load(64, load::fixed(query, vars.clone(), Some(&token)))
                .await;
            if o64.served > 0 {
                self.rate_cpu_line(ROW, &format!("{metric}, 64 conn"), &o64, ceiling);
                continue;
            }
            // None of 64 at once came back within the window: a page this slow is measured
            // one request at a time instead, and the line says why.
            let o = self
                .run_load(1, load::fixed(query, vars, Some(&token)))
                .await;
            let failed = match &o64.first_error {
                Some(e) => format!(", {} failed: {e}", o64.failed),
                None => String::new(),
            };
            let metric = format!(
                "{metric}, 1 conn (one request alone took {alone:.0} ms; of 64 at once none was answered within the {:.0} s window{failed})",
                self.timing.window.as_secs_f64()
            );
            self.rate_cpu_line(ROW, &metric, &o, None);
        }
    }

    /// Row 10: what the per-request layers (request id, trace span and log line, labelled
    /// metrics) cost. `verdict serve` has no switch for the request id or the metrics;
    /// `RUST_LOG=warn` turns off the span and the log line. So two fresh servers, one at
    /// `RUST_LOG=info` (the default) and one at `warn`, each answer `GET /healthz` (the
    /// layers, hyper and axum: no GraphQL, no database) and `{__typename}` at one
    /// connection, with the server's CPU per request; the difference is the log's share.
    pub async fn edge(&mut self) {
        const ROW: &str = "10 edge";
        let mut servers = Vec::new();
        for level in ["info", "warn"] {
            match Server::verdict(self.verdict, self.store, &[("RUST_LOG", level)]).await {
                Ok(s) => servers.push((level, s)),
                Err(e) => return self.report.not_measured(ROW, self.backend, &e),
            }
        }
        // The two servers take turns, twice, and each keeps its cheaper round: a burst of
        // other work on a shared machine lands on one round, not on one server.
        let mut best: HashMap<(&str, usize), Outcome> = HashMap::new();
        for _ in 0..EDGE_ROUNDS {
            for (level, server) in &servers {
                let healthz = format!("{}/healthz", server.base);
                for c in [1, 64] {
                    let o = load::run(&healthz, &server.proc, c, self.timing, load::get()).await;
                    let better = match best.get(&(*level, c)) {
                        None => true,
                        Some(b) => {
                            o.served > 0
                                && (b.served == 0
                                    || o.cpu_ms_per_request() < b.cpu_ms_per_request())
                        }
                    };
                    if better {
                        best.insert((*level, c), o);
                    }
                }
            }
        }
        let mut healthz_cpu = HashMap::new();
        for (level, server) in &servers {
            for c in [1, 64] {
                let Some(o) = best.remove(&(*level, c)) else {
                    continue;
                };
                let metric = format!(
                    "GET /healthz (layers only), RUST_LOG={level}, {c} conn, cheaper of {EDGE_ROUNDS} rounds"
                );
                if self.rate_cpu_line(ROW, &metric, &o, None).is_some() {
                    healthz_cpu.insert((*level, c), o.cpu_ms_per_request());
                }
            }
            let graphql = format!("{}/graphql", server.base);
            let typename = load::fixed("{__typename}", json!({}), None);
            let o = load::run(&graphql, &server.proc, 1, self.timing, typename).await;
            let metric = format!("{{__typename}} anonymous, RUST_LOG={level}, 1 conn");
            self.rate_cpu_line(ROW, &metric, &o, None);
        }
        for c in [1, 64] {
            let metric =
                format!("trace span + request log line (info − warn), GET /healthz, {c} conn");
            match (healthz_cpu.get(&("info", c)), healthz_cpu.get(&("warn", c))) {
                (Some(info), Some(warn)) => self.report.value(
                    ROW,
                    self.backend,
                    &metric,
                    format!("{:.3} ms of server CPU per request", info - warn),
                ),
                _ => {
                    self.report
                        .not_measured(ROW, self.backend, &format!("{metric}: a load failed"))
                }
            }
        }
        self.report.value(
            ROW,
            self.backend,
            "request id + labelled metrics",
            "not measured apart: verdict serve has no switch that turns them off".into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_operation_is_read_from_the_web_client_as_it_is_written_there() {
        for page in PAGES {
            let (file, text) = page.source;
            let op = operation(text, page.operation).unwrap_or_else(|e| panic!("{file}: {e}"));
            let kind = if op.starts_with("subscription") {
                "subscription"
            } else {
                "query"
            };
            assert!(
                op.starts_with(&format!("{kind} {}", page.operation)),
                "{file}: {op}"
            );
            assert!(text.contains(op), "{file}: the literal text is sent");
            assert!(op.ends_with('}'), "{file}: the whole document: {op}");
        }
        assert_eq!(
            operation(SESSION, "Viewer").unwrap().lines().next(),
            Some("query Viewer {")
        );
    }

    #[test]
    fn a_missing_or_composed_operation_is_refused_not_guessed() {
        assert!(operation(SESSION, "NoSuchOperation").is_err());
        // A prefix of a name is not the name.
        assert!(operation(OVERVIEW, "OrgCoverage").is_err());
        let composed = "const A = graphql(`\n  query A { ...F }\n`, [F]);";
        assert!(operation(composed, "A").is_err());
    }

    #[test]
    fn an_answer_without_the_page_is_not_present() {
        let d = json!({ "event": { "myAssignments": [], "progress": { "done": 0 }, "name": "x" } });
        assert!(!present(d.pointer("/event/myAssignments")));
        assert!(!present(d.pointer("/event/progress/done")));
        assert!(!present(d.pointer("/event/missing")));
        assert!(present(d.pointer("/event/name")));
        assert!(!present(json!({ "event": null }).pointer("/event/myTeam")));
    }
}
