use super::*;

pub(super) async fn acknowledged_writes_survive_kill_9_under_load(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = format!("crash-{tag}");
    app.create_event(&admin, &event, 4).await;
    let track = app.create_track(&admin, &event, "Main").await;
    let mut editors = vec![];
    let mut creators = vec![];
    for k in 0..2 * WRITERS {
        let token = app.sign_up(&format!("c{k}-{tag}@example.org")).await;
        app.register(&token, &event).await;
        app.create_team(&token, &event, &format!("Team {k}")).await;
        let project = app
            .create_project(&token, &event, &format!("edit {k} v0"), &track)
            .await;
        if k < WRITERS {
            editors.push((token, project));
        } else {
            creators.push(token);
        }
    }
    let db = app.db.clone();
    let log = Arc::new(Mutex::new(Log::default()));
    let mut app = app;
    for (cycle, after) in CRASHES.iter().enumerate() {
        let stop = Arc::new(AtomicBool::new(false));
        let before = log.lock().expect("log").acks();
        let mut tasks = vec![];
        for (k, (token, project)) in editors.iter().enumerate() {
            let (http, base, token, project, log, stop) = (
                app.http.clone(),
                app.base.clone(),
                token.clone(),
                project.clone(),
                log.clone(),
                stop.clone(),
            );
            tasks.push(tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let v = {
                        let mut l = log.lock().expect("log");
                        let v = l.edit_sent.get(&k).copied().unwrap_or(0) + 1;
                        l.edit_sent.insert(k, v);
                        v
                    };
                    let title = format!("edit {k} v{v}");
                    let vars = json!({ "id": project, "input": { "title": title } });
                    match send(&http, &base, &token, op("UpdateProject"), vars).await {
                        Some(_) => {
                            log.lock().expect("log").edit_acked.insert(k, v);
                        }
                        None => break,
                    }
                }
            }));
        }
        for (k, token) in creators.iter().enumerate() {
            let (http, base, token, event, track, log, stop) = (
                app.http.clone(),
                app.base.clone(),
                token.clone(),
                event.clone(),
                track.clone(),
                log.clone(),
                stop.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let title = format!("new {cycle}-{k}-{n}");
                    log.lock().expect("log").create_sent.insert(title.clone());
                    let vars =
                        json!({ "event": event, "input": { "title": title, "track": track } });
                    let Some(d) = send(&http, &base, &token, op("CreateProject"), vars).await
                    else {
                        break;
                    };
                    log.lock().expect("log").created.insert(title.clone());
                    let id = d["createProject"]["id"].clone();
                    if send(
                        &http,
                        &base,
                        &token,
                        op("SubmitProject"),
                        json!({ "id": id }),
                    )
                    .await
                    .is_none()
                    {
                        break;
                    }
                    log.lock().expect("log").submitted.insert(title);
                }
            }));
        }
        // Crash once the load has acknowledged `after` more writes.
        tokio::time::timeout(Duration::from_secs(60), async {
            while log.lock().expect("log").acks() < before + after {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the writers got going");
        app.kill9();
        assert_eq!(
            app.wait_exit(Duration::from_secs(10)).await,
            None,
            "killed by a signal"
        );
        stop.store(true, Ordering::SeqCst);
        for t in tasks {
            t.await.expect("a writer");
        }
        drop(app);

        app = App::spawn_on(db.clone(), &[]).await;
        // The chain verifies, and what the database holds is what was acknowledged, plus
        // at most the writes in flight at the crash.
        app.audit_head().await;
        let conn = Database::connect(db.url()).await.expect("connect");
        let backend = conn.get_database_backend();
        let rows = conn
            .query_all_raw(Statement::from_string(
                backend,
                format!(
                    "SELECT p.title, p.status FROM projects p JOIN events e ON e.id = p.event_id \
                     WHERE e.slug = '{event}'"
                ),
            ))
            .await
            .expect("read projects");
        let projects: Vec<(String, String)> = rows
            .iter()
            .map(|r| {
                (
                    r.try_get_by_index::<String>(0).expect("title"),
                    r.try_get_by_index::<String>(1).expect("status"),
                )
            })
            .collect();
        let created_entries = conn
            .query_all_raw(Statement::from_string(
                backend,
                "SELECT COUNT(*) FROM audit_events WHERE action = 'project.created'".to_owned(),
            ))
            .await
            .expect("count audit entries")[0]
            .try_get_by_index::<i64>(0)
            .expect("a count");
        let _ = conn.close().await;
        let l = log.lock().expect("log");
        for (k, acked) in &l.edit_acked {
            let title = projects
                .iter()
                .find(|(t, _)| t.starts_with(&format!("edit {k} v")))
                .map(|(t, _)| t.clone())
                .unwrap_or_else(|| panic!("editor {k}'s project is gone: {projects:?}"));
            let v: u64 = title
                .rsplit('v')
                .next()
                .and_then(|v| v.parse().ok())
                .expect("v");
            assert!(
                *acked <= v && v <= l.edit_sent[k],
                "crash {cycle}: editor {k} was told v{acked}, sent up to v{}, the database holds v{v}",
                l.edit_sent[k]
            );
        }
        let titles: BTreeSet<&str> = projects.iter().map(|(t, _)| t.as_str()).collect();
        for title in &l.created {
            assert!(
                titles.contains(title.as_str()),
                "crash {cycle}: acknowledged {title} is lost"
            );
        }
        for (title, status) in &projects {
            if title.starts_with("new ") {
                assert!(l.create_sent.contains(title), "never sent: {title}");
                assert_eq!(
                    projects.iter().filter(|(t, _)| t == title).count(),
                    1,
                    "created once: {title}"
                );
                if l.submitted.contains(title) {
                    assert_eq!(
                        status, "submitted",
                        "crash {cycle}: acknowledged submission of {title} is lost"
                    );
                }
            }
        }
        assert_eq!(
            created_entries as usize,
            projects.len(),
            "crash {cycle}: one project.created entry per project, none without its row"
        );
    }
}

// ---- reviews, calibration and publication ----------------------------------------------
