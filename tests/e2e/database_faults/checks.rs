use super::*;

/// Every acknowledged submission reached the open subscription (a project may arrive
/// twice: the relay reads what it missed while PostgreSQL was away from the audit log), and
/// nothing arrived that was never submitted.
pub(super) fn assert_delivered(tally: &Tally, delivered: &[Value]) {
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
pub(super) async fn assert_database_agrees(db: &TestDb, tally: &Tally, event: &str) {
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
pub(super) async fn assert_integrity(db: &TestDb) {
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
pub(super) async fn wait_ready(app: &App, status: u16, within: Duration) {
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

pub(super) fn assert_no_panic(app: &App) {
    let logs = app.log_lines();
    let panics: Vec<&String> = logs.iter().filter(|l| l.contains("panicked")).collect();
    assert!(panics.is_empty(), "the server panicked: {panics:?}");
}
