use super::*;

pub(super) async fn sqlite_disk_full() {
    let volume = Volume::tmpfs("32m");
    let url = format!("sqlite://{}/verdict.db?mode=rwc", volume.path().display());
    let db = Arc::new(TestDb::at(Backend::Sqlite, url));
    let mut app = App::spawn_on(db.clone(), &[]).await;
    let world = World::set_up(&app).await;
    // A script's API token, first used while the disk is full: its last use cannot be
    // noted then, and its reads must go on all the same.
    let token = app.mint_token(&world.writer_emails[1]).await;
    let mut watcher = Watcher::start(&app, &world.event).await;
    let load = Load::start(&app, &world);
    load.until("writes acknowledged", Duration::from_secs(60), |t| {
        t.submitted.len() >= 5
    })
    .await;

    let filler = volume.fill();
    // The file system is full; SQLite refuses once its write-ahead log must grow (it
    // reuses what it has first).
    load.until(
        "writes refused on a full disk",
        Duration::from_secs(120),
        |t| t.unavailable >= 2 * WRITERS,
    )
    .await;
    let reads = load.tally().reads;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mutation = send(
        &app.http,
        &app.base,
        Some(&world.writers[0]),
        op("CreateProject"),
        json!({ "event": world.event, "input": { "title": "refused", "track": world.track } }),
    )
    .await;
    assert!(matches!(mutation, Answer::Unavailable), "{mutation:?}");
    reads_go_on(&app, &world, &token, &load, reads).await;
    assert!(!app.has_exited(), "the server exited");

    std::fs::remove_file(&filler).expect("free the space");
    let acks = load.tally().acks;
    load.until("writes acknowledged again", Duration::from_secs(30), |t| {
        t.acks >= acks + 4 * WRITERS
    })
    .await;
    let submitted_now = load.tally().submitted.len();
    load.until(
        "a submission after the disk was freed",
        Duration::from_secs(30),
        |t| t.submitted.len() > submitted_now,
    )
    .await;
    let title = load.tally().submitted_order[submitted_now].clone();
    watcher
        .wait_for(&title, Duration::from_secs(15))
        .await
        .unwrap_or_else(|| panic!("the open subscription did not deliver {title}"));

    let tally = load.finish().await;
    let delivered = watcher.finish().await;
    tally.assert_clean();
    assert_eq!(tally.unavailable_reads, 0, "reads are never refused");
    assert_delivered(&tally, &delivered);
    assert_database_agrees(&db, &tally, &world.event).await;
    app.audit_head().await;
    assert_integrity(&db).await;
    assert_no_panic(&app);
    drop(app);
    drop(volume);
}

pub(super) async fn sqlite_read_only() {
    let volume = Volume::ext4(64);
    let url = format!("sqlite://{}/verdict.db?mode=rwc", volume.path().display());
    let db = Arc::new(TestDb::at(Backend::Sqlite, url));
    let mut app = App::spawn_on(db.clone(), &[]).await;
    let world = World::set_up(&app).await;
    let token = app.mint_token(&world.writer_emails[1]).await;
    let watcher = Watcher::start(&app, &world.event).await;
    let load = Load::start(&app, &world);
    load.until("writes acknowledged", Duration::from_secs(60), |t| {
        t.submitted.len() >= 5
    })
    .await;

    // What was acknowledged when the disk failed; a write whose commit was in flight at
    // that moment may be acknowledged and lost with the disk's unwritten pages.
    let mut durable = (BTreeSet::new(), BTreeSet::new(), 0);
    volume.turn_read_only(|| {
        let t = load.tally();
        durable = (t.created.clone(), t.submitted.clone(), t.acks);
    });
    load.until(
        "writes refused on a read-only volume",
        Duration::from_secs(30),
        |t| t.unavailable >= 2 * WRITERS,
    )
    .await;
    let reads = load.tally().reads;
    tokio::time::sleep(Duration::from_secs(2)).await;
    reads_go_on(&app, &world, &token, &load, reads).await;
    assert!(!app.has_exited(), "the server exited");

    // Only a repaired file system is writable again: stop the server (it must let go of
    // its files), `e2fsck`, mount, start it again.
    let tally = load.finish().await;
    let delivered = watcher.finish().await;
    app.terminate();
    assert_eq!(
        app.wait_exit(Duration::from_secs(30)).await,
        Some(0),
        "the server stops cleanly on a read-only volume"
    );
    assert_no_panic(&app);
    drop(app);
    let report = volume.repair();
    eprintln!("e2fsck:\n{report}");
    let app = App::spawn_on(db.clone(), &[]).await;
    tally.assert_clean();
    assert_eq!(tally.unavailable_reads, 0, "reads are never refused");
    assert_delivered(&tally, &delivered);
    // Only the writes in flight when the disk failed were acknowledged after it.
    let (created, submitted, acks) = durable;
    assert!(
        tally.acks <= acks + WRITERS,
        "{} writes acknowledged after the volume turned read-only",
        tally.acks - acks
    );
    // Everything acknowledged before the volume turned read-only is there.
    let before = Tally {
        created,
        submitted,
        create_sent: tally.create_sent.clone(),
        submit_sent: tally.submit_sent.clone(),
        ..Tally::default()
    };
    assert_database_agrees(&db, &before, &world.event).await;
    app.audit_head().await;
    assert_integrity(&db).await;
    // And the server writes again.
    let d = app
        .ok(
            Some(&world.writers[0]),
            op("CreateProject"),
            json!({ "event": world.event, "input": { "title": "after the repair", "track": world.track } }),
        )
        .await;
    assert_eq!(d["createProject"]["title"], "after the repair");
    app.audit_head().await;
    assert_no_panic(&app);
    drop(app);
    drop(volume);
}

/// While writes are refused: anonymous, signed-in and API-token reads are answered, and
/// `/readyz` says ready (a database that reads serves); the readers keep reading.
pub(super) async fn reads_go_on(
    app: &App,
    world: &World,
    token: &str,
    load: &Load,
    reads_before: usize,
) {
    let http = &app.http;
    for (who, query, vars) in [
        (None, GALLERY, json!({ "e": world.event })),
        (
            Some(world.writers[0].as_str()),
            op("MyTeamProjects"),
            json!({ "event": world.event }),
        ),
        (
            Some(token),
            op("MyTeamProjects"),
            json!({ "event": world.event }),
        ),
    ] {
        let answer = send(http, &app.base, who, query, vars).await;
        assert!(matches!(answer, Answer::Data(_)), "a read: {answer:?}");
    }
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status, 200, "ready while reads work: {}", ready.text);
    assert!(
        load.tally().reads > reads_before,
        "the readers read while writes were refused"
    );
}

// ---- The people and the event ---------------------------------------------------------
