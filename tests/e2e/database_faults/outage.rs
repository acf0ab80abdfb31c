use super::*;

pub(super) async fn postgres_outage() {
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
pub(super) async fn refused_cleanly(app: &App, world: &World) {
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
