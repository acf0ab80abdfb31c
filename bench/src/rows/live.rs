//! Rows 6 and 7: judges writing reviews concurrently, and how soon a dashboard's live
//! progress sees them.

use super::*;

impl Bench<'_> {
    /// The imported (done) assignments of each writer judge.
    async fn writer_assignments(&self) -> Result<Arc<Vec<Vec<String>>>, String> {
        let mut all = Vec::with_capacity(WRITERS);
        for token in &self.judges[..WRITERS] {
            let d = self
                .api
                .gql(
                    Some(token),
                    "query($e: String!) { event(slug: $e) { myAssignments { id } } }",
                    json!({ "e": BIG }),
                )
                .await?;
            let ids: Vec<String> = d["event"]["myAssignments"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x["id"].as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            if ids.is_empty() {
                return Err("a writer judge has no assignments".into());
            }
            all.push(ids);
        }
        Ok(Arc::new(all))
    }

    /// 64 judges re-saving their submitted reviews with new scores, round robin.
    fn save_reviews(&self, assignments: Arc<Vec<Vec<String>>>) -> MakeCall {
        let tokens: Vec<Arc<str>> = self.judges[..WRITERS]
            .iter()
            .map(|t| Arc::from(t.as_str()))
            .collect();
        Arc::new(move |c, i| {
            let mine = &assignments[c];
            let a = &mine[i as usize % mine.len()];
            Call {
                body: Some(save_review_body(a, 1 + (i % 10) as i64)),
                token: Some(tokens[c].clone()),
            }
        })
    }

    /// Row 6: saveReview from 64 judges at once, against the cheapest audited write.
    pub async fn writes(&mut self) {
        const ROW: &str = "6 saveReview";
        let assignments = match self.writer_assignments().await {
            Ok(a) => a,
            Err(e) => return self.report.not_measured(ROW, self.backend, &e),
        };
        // The write ceiling: updateProfile reads and writes one user row and appends one
        // audit entry, the least an audited mutation does; each judge renames themself.
        let tokens: Vec<Arc<str>> = self.judges[..WRITERS]
            .iter()
            .map(|t| Arc::from(t.as_str()))
            .collect();
        let rename: MakeCall = Arc::new(move |c, i| Call {
            body: Some(
                json!({
                    "query": "mutation($n: String!) { updateProfile(displayName: $n) { id } }",
                    "variables": { "n": format!("Judge {c} ({i})") },
                })
                .to_string(),
            ),
            token: Some(tokens[c].clone()),
        });
        let o = self.run_load(WRITERS, rename).await;
        let ceiling = self.rate_line(
            ROW,
            "write ceiling: updateProfile (own row + audit append), 64 conn",
            &o,
            None,
        );
        let o = self.run_load(WRITERS, self.save_reviews(assignments)).await;
        if self
            .rate_line(ROW, "saveReview, 64 judges", &o, ceiling)
            .is_some()
        {
            self.writes_p99 = Some(o.p99_ms());
        }
    }

    /// Row 7: row 6's writes while 1,000 organizers follow `judgingProgress`. A probe judge
    /// submits a fresh review every 250 ms; each one raises `done` by one (the writers only
    /// re-save reviews already submitted), so a subscriber's first message with `done` at
    /// least base + k is the delivery of probe k.
    pub async fn progress(&mut self) {
        const ROW: &str = "7 judgingProgress under writes";
        let probes = (self.timing.window.as_millis() / 250) as usize + 1;
        let setup = async {
            let assignments = self.writer_assignments().await?;
            let mut probe_assignments = Vec::with_capacity(probes);
            for project in self
                .big
                .not_reviewed_by(PROBE_JUDGE)
                .into_iter()
                .take(probes)
            {
                let d = self
                    .api
                    .gql(
                        Some(&self.admin),
                        "mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }",
                        json!({ "e": BIG, "j": format!("jdg_{PROBE_JUDGE:04}"), "p": project }),
                    )
                    .await?;
                probe_assignments.push(
                    d["assignJudge"]["id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                );
            }
            let d = self
                .api
                .gql(
                    Some(&self.admin),
                    "query($e: String!) { event(slug: $e) { judgingProgress { done } } }",
                    json!({ "e": BIG }),
                )
                .await?;
            let base = d["event"]["judgingProgress"]["done"]
                .as_i64()
                .ok_or("no judgingProgress.done")?;
            Ok::<_, String>((assignments, probe_assignments, base))
        };
        let (assignments, probe_assignments, base) = match setup.await {
            Ok(s) => s,
            Err(e) => return self.report.not_measured(ROW, self.backend, &e),
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<Delivery>();
        let query = format!("subscription {{ judgingProgress(event: \"{BIG}\") {{ done }} }}");
        let subs = Subscribers::open(
            &ws_url(self.server),
            PROGRESS_SUBSCRIBERS,
            Some(&self.admin),
            &query,
            tx,
        )
        .await;
        if subs.connected < PROGRESS_SUBSCRIBERS {
            let why = format!(
                "{} of {PROGRESS_SUBSCRIBERS} subscribers connected: {}",
                subs.connected,
                subs.first_error.as_deref().unwrap_or("")
            );
            subs.close().await;
            return self.report.not_measured(ROW, self.backend, &why);
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        // Every subscriber's first sight of each `done` value.
        let collector = tokio::spawn(async move {
            let mut seen: Vec<Vec<(i64, Instant)>> = vec![Vec::new(); PROGRESS_SUBSCRIBERS];
            let mut other = None;
            while let Some((i, at, data)) = rx.recv().await {
                match data["judgingProgress"]["done"].as_i64() {
                    Some(done) => seen[i].push((done, at)),
                    None => {
                        other.get_or_insert(data);
                    }
                }
            }
            (seen, other)
        });
        let load = self.run_load(WRITERS, self.save_reviews(assignments));
        let probe = self.probe(probe_assignments);
        let (o, (answered, probe_error)) = tokio::join!(load, probe);
        // Give late deliveries up to 30 s, then close the subscribers (ending the collector).
        let settle = Instant::now() + Duration::from_secs(30);
        let last_probe = base + answered.len() as i64;
        while Instant::now() < settle && !answered.is_empty() {
            tokio::time::sleep(Duration::from_millis(500)).await;
            if self.progress_caught_up(last_probe).await {
                tokio::time::sleep(Duration::from_secs(1)).await;
                break;
            }
        }
        subs.close().await;
        let (seen, other) = collector.await.unwrap_or_else(|e| panic!("collector: {e}"));
        if let (Some(p99), true) = (self.writes_p99, o.served > 0) {
            self.report.add(
                ROW,
                self.backend,
                "saveReview p99 while 1,000 follow (vs row 6 alone)",
                format!("{:.2} ms ({}/s)", o.p99_ms(), count(o.per_second())),
                format!("{p99:.2} ms"),
                ratio(o.p99_ms(), p99),
            );
        } else {
            self.rate_line(ROW, "saveReview while 1,000 follow", &o, None);
        }
        if answered.is_empty() {
            let why = format!(
                "no probe review was saved: {}",
                probe_error.unwrap_or_default()
            );
            return self.report.not_measured(ROW, self.backend, &why);
        }
        let mut lag =
            Histogram::<u64>::new_with_bounds(1, 600_000_000, 3).unwrap_or_else(|_| unreachable!());
        let mut missing = 0;
        for (k, at) in answered.iter().enumerate() {
            let target = base + k as i64 + 1;
            for s in &seen {
                match s.iter().find(|(done, _)| *done >= target) {
                    Some((_, got)) => lag.saturating_record(
                        got.saturating_duration_since(*at).as_micros().max(1) as u64,
                    ),
                    None => missing += 1,
                }
            }
        }
        let expected = answered.len() * PROGRESS_SUBSCRIBERS;
        let other = other
            .map(|o| {
                format!(
                    "; other messages, e.g. {}",
                    o.to_string().chars().take(240).collect::<String>()
                )
            })
            .unwrap_or_default();
        let probe_error = probe_error.map(|e| format!("; {e}")).unwrap_or_default();
        self.report.value(
            ROW,
            self.backend,
            "delivery lag after a saveReview answered (p50 / p99 / max)",
            format!(
                "{:.0} / {:.0} / {:.0} ms ({} of {expected} deliveries within 30 s after the load{probe_error}{other})",
                lag.value_at_quantile(0.5) as f64 / 1000.0,
                lag.value_at_quantile(0.99) as f64 / 1000.0,
                lag.max() as f64 / 1000.0,
                expected - missing,
            ),
        );
    }

    /// Submits the probe judge's fresh reviews one every 250 ms through the measured window
    /// and returns when each successful one was answered, and how many failed and why.
    async fn probe(&self, assignments: Vec<String>) -> (Vec<Instant>, Option<String>) {
        tokio::time::sleep(self.timing.warmup).await;
        let token = &self.judges[PROBE_JUDGE];
        let mut answered = Vec::with_capacity(assignments.len());
        let (mut failed, mut first_error) = (0, None);
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        let until = Instant::now() + self.timing.window;
        for a in &assignments {
            tick.tick().await;
            // A slow answer may push probes past the window; row 6's load has ended then.
            if Instant::now() >= until {
                break;
            }
            let body: Value = serde_json::from_str(&save_review_body(a, 7)).unwrap_or_default();
            let vars = body["variables"].clone();
            match self.api.gql(Some(token), SAVE_REVIEW, vars).await {
                Ok(_) => answered.push(Instant::now()),
                // A refused write writes nothing, so `done` still counts the successes only.
                Err(e) => {
                    failed += 1;
                    first_error.get_or_insert(e);
                }
            }
        }
        let n = answered.len() + failed;
        (
            answered,
            first_error.map(|e| format!("{failed} of {n} probe reviews failed: {e}")),
        )
    }

    async fn progress_caught_up(&self, done: i64) -> bool {
        let q = "query($e: String!) { event(slug: $e) { judgingProgress { done } } }";
        matches!(
            self.api.gql(Some(&self.admin), q, json!({ "e": BIG })).await,
            Ok(d) if d["event"]["judgingProgress"]["done"].as_i64() >= Some(done)
        )
    }
}
