use super::*;

pub(super) async fn concurrent_burst_keeps_the_chain_intact(app: App) {
    let s = app.scenario().await;
    let head_before = app.audit_head().await;
    let event_before = app.audit_count(&s.organizer_a, &s.event_a).await;

    const N: usize = 500;
    let done = std::sync::atomic::AtomicBool::new(false);
    let burst = async {
        let results: Vec<Value> = stream::iter(0..N)
            .map(|i| {
                let app = &app;
                let s = &s;
                async move {
                    if i % 2 == 0 {
                        app.gql_as(
                            &s.participant_a,
                            op("UpdateProject"),
                            json!({ "id": s.draft, "input": { "tagline": format!("revision {i}") } }),
                        )
                        .await
                    } else {
                        app.gql_as(
                            &s.organizer_a,
                            op("CreateTrack"),
                            json!({ "event": s.event_a, "name": format!("Track {i}") }),
                        )
                        .await
                    }
                }
            })
            .buffer_unordered(16)
            .collect()
            .await;
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        results
    };
    // `verdict audit verify` while the burst commits: it reads one snapshot, so it never
    // sees a head ahead of the rows it read (read statement by statement, it did).
    let verifier = async {
        let mut runs = 0;
        let mut broken = vec![];
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            let out = app.cli(&["audit", "verify"]).await;
            runs += 1;
            if !out.success() {
                broken.push(out.stdout.trim().to_string());
            }
        }
        (runs, broken)
    };
    let (results, (runs, broken)) = tokio::join!(burst, verifier);
    assert!(
        broken.is_empty(),
        "audit verify failed {} of {runs} times during the burst, first: {:?}",
        broken.len(),
        broken.first()
    );
    assert!(runs >= 3, "audit verify ran {runs} times during the burst");
    let failed: Vec<&Value> = results
        .iter()
        .filter(|r| error_code(r).is_some() || r.get("errors").is_some())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {N} concurrent mutations failed, e.g. {:?}",
        failed.len(),
        failed.iter().take(3).collect::<Vec<_>>()
    );

    // `audit verify` passes, and its head moved by exactly the number of mutations.
    let head_after = app.audit_head().await;
    assert_eq!(
        head_after,
        head_before + N as u64,
        "one audit event per mutation"
    );
    assert_eq!(
        app.audit_count(&s.organizer_a, &s.event_a).await,
        event_before + N as i64
    );

    // The burst is contiguous in the chain (nothing else wrote meanwhile) and linked.
    let log = audit_log(&app, &s.organizer_a, &s.event_a).await;
    let burst: Vec<&Value> = log.iter().filter(|n| seq_of(n) > head_before).collect();
    assert_eq!(burst.len(), N);
    for (i, w) in burst.windows(2).enumerate() {
        assert_eq!(seq_of(w[1]), seq_of(w[0]) + 1, "seqs are gapless at {i}");
        assert_eq!(
            w[1]["prevHash"],
            w[0]["rowHash"],
            "chain link at seq {}",
            seq_of(w[1])
        );
    }
    assert_eq!(seq_of(burst[N - 1]), head_after);
    let tracks = app
        .ok(
            None,
            "query($e: String!) { event(slug: $e) { tracks { id } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    assert_eq!(
        tracks["event"]["tracks"].as_array().map(Vec::len),
        Some(1 + N / 2)
    );
}

pub(super) async fn tampering_is_detected(app: App) {
    use sea_orm::{ConnectionTrait, Database, DbBackend, Statement};
    app.scenario().await;
    let head = app.audit_head().await;
    assert!(head >= 5, "the scenario wrote several audit events");
    let victim = head / 2;
    let db = Database::connect(app.db.url())
        .await
        .expect("connect to the test database");

    // The database itself refuses to rewrite or delete history.
    let tamper =
        format!("UPDATE audit_events SET payload = '{{\"tampered\":true}}' WHERE seq = {victim}");
    assert!(
        db.execute_unprepared(&tamper).await.is_err(),
        "an audit row cannot be updated"
    );
    let delete = format!("DELETE FROM audit_events WHERE seq = {victim}");
    assert!(
        db.execute_unprepared(&delete).await.is_err(),
        "an audit row cannot be deleted"
    );
    assert_eq!(app.audit_head().await, head);

    // Someone with DDL rights removes the guard and edits one row: verify names it.
    match app.backend() {
        crate::harness::Backend::Postgres => {
            db.execute_unprepared("ALTER TABLE audit_events DISABLE TRIGGER USER")
                .await
                .expect("disable triggers");
        }
        crate::harness::Backend::Sqlite => {
            let rows = db
                .query_all_raw(Statement::from_string(
                    DbBackend::Sqlite,
                    "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_events'",
                ))
                .await
                .expect("list triggers");
            for r in rows {
                let name: String = r.try_get_by_index(0).expect("trigger name");
                db.execute_unprepared(&format!("DROP TRIGGER {name}"))
                    .await
                    .expect("drop trigger");
            }
        }
    }
    let res = db
        .execute_unprepared(&tamper)
        .await
        .expect("tamper with the audit table");
    assert_eq!(res.rows_affected(), 1, "one audit row changed");
    let _ = db.close().await;

    let out = app.cli(&["audit", "verify"]).await;
    assert_eq!(
        out.code,
        Some(1),
        "audit verify fails on a tampered chain: {out:?}"
    );
    let text = format!("{}{}", out.stdout, out.stderr);
    let numbers: Vec<u64> = text
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        numbers.contains(&victim),
        "audit verify names seq {victim}: {text}"
    );
    assert!(
        !numbers
            .iter()
            .any(|n| *n > 0 && *n < victim && text.contains(&format!("seq {n}"))),
        "no earlier seq is blamed: {text}"
    );
}
