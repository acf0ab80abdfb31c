//! Rankings and live feeds: aliases cost what one read does, and a change costs its subscribers the same for one or fifty.

use super::*;
use verdict::graphql::subscription::{Leaderboards, Progress, Publications};

/// Rankings read through many aliases (the published ranking, a run's projects and judges)
/// cost what one does: the run's result is parsed once and the event's projects and judges
/// are loaded once, not once per field.
#[tokio::test]
async fn aliased_rankings_parse_the_run_once_and_load_the_roster_once() {
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        let event = verdict::domain::event_by_slug(&t.db.conn, spring_hack::SLUG)
            .await
            .expect("event");
        let s = services(&t.db);
        let run = verdict::domain::results::run_calibration(
            &t.db,
            &admin,
            &event,
            &s.signer,
            Some(1),
            Some(20),
        )
        .await
        .expect("run");
        let w = Write::begin(&t.db, Some(admin.clone()))
            .await
            .expect("begin");
        let org = w.organizer(&event).await.expect("organizer");
        verdict::domain::results::publish(&w, org, &s.signer, &run.public_id, false)
            .await
            .expect("publish");
        w.commit().await.expect("commit");

        let mut used = vec![];
        for n in [1, 10] {
            let fields: String = (0..n)
                .map(|i| {
                    format!(
                        "r{i}: results {{ ranking {{ rank project {{ title }} }} }} \
                         c{i}: calibrationRuns {{ projects {{ rank projectExternalId }} judges {{ flag judge {{ externalId }} }} }} "
                    )
                })
                .collect();
            let q = format!(
                r#"{{ event(slug: "{}") {{ {fields} }} }}"#,
                spring_hack::SLUG
            );
            let before = t.db.statement_count();
            let resp = execute_with(&s, Some(&admin), &q).await;
            used.push(t.db.statement_count() - before);
            assert!(resp.errors.is_empty(), "{}: {:?}", t.name, resp.errors);
            let data = resp.data.into_json().unwrap();
            assert_eq!(
                data["event"][format!("r{}", n - 1)]["ranking"]
                    .as_array()
                    .map(Vec::len),
                Some(55),
                "{}: every submitted project is in the published ranking",
                t.name
            );
        }
        println!(
            "{}: rankings: {} statements for 1 alias of each, {} for 10",
            t.name, used[0], used[1]
        );
        // Ten aliases of each add the statements of the aliased lists themselves (runs,
        // publications: one per alias, as any list), not the roster's two per field.
        assert!(
            used[1] <= used[0] + 2 * 9 + 4,
            "{}: statements per alias: {used:?}",
            t.name
        );
        assert_eq!(
            s.parsed_runs.parses(),
            1,
            "{}: the run's result is parsed once, for every field and request",
            t.name
        );
    }
}

/// The live leaderboard is computed once per burst of changes and event, however many
/// organizers follow it, and every one of them receives that computation.
#[tokio::test]
async fn leaderboard_is_computed_once_per_burst_for_every_subscriber() {
    use verdict::graphql::bus::BusEvent;

    let t = sqlite().await;
    import_fixture(&t.db).await;
    let caller = signed_in_admin(&t.db).await;
    let event = verdict::domain::event_by_slug(&t.db.conn, spring_hack::SLUG)
        .await
        .expect("event");
    let s = services(&t.db);

    const SUBSCRIBERS: usize = 3;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let query = format!(
        r#"subscription {{ leaderboardUpdated(event: "{}") {{ computedAt projects {{ rank }} }} }}"#,
        spring_hack::SLUG
    );
    let tasks = subscribers(&s, Some(caller), &query, SUBSCRIBERS, &tx);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.feeds.of::<Leaderboards>().followers(event.id) < SUBSCRIBERS {
        assert!(
            tokio::time::Instant::now() < deadline,
            "subscribers register"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    for burst in 1..=2u64 {
        // A burst of changes, as fifty saved reviews publish them (and noise from another
        // event, which must not count).
        for _ in 0..50 {
            s.bus
                .publish(BusEvent::JudgingChanged { event_id: event.id });
            s.bus.publish(BusEvent::JudgingChanged {
                event_id: event.id + 1000,
            });
        }
        let mut got = vec![];
        while got.len() < SUBSCRIBERS {
            let msg = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
                .await
                .expect("every subscriber receives the leaderboard")
                .expect("open");
            got.push(msg);
        }
        // Nothing more follows the burst.
        tokio::time::sleep(<Leaderboards as verdict::graphql::feed::Kind>::QUIET * 3).await;
        assert!(
            rx.try_recv().is_err(),
            "one message per subscriber and burst"
        );
        let mut who: Vec<usize> = got.iter().map(|(i, _)| *i).collect();
        who.sort();
        assert_eq!(who, (0..SUBSCRIBERS).collect::<Vec<_>>());
        let at = |data: &serde_json::Value| data["leaderboardUpdated"]["computedAt"].clone();
        assert!(
            got.iter().all(|(_, data)| at(data) == at(&got[0].1)),
            "all receive the same computation: {got:?}"
        );
        assert_eq!(
            s.feeds.of::<Leaderboards>().computations(),
            burst,
            "one computation per burst, not per subscriber or change"
        );
    }

    // The feed ends with its last subscriber; changes then compute nothing.
    for task in tasks {
        task.abort();
    }
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.feeds.of::<Leaderboards>().running() > 0 {
        assert!(tokio::time::Instant::now() < deadline, "the feed ends");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    s.bus
        .publish(BusEvent::JudgingChanged { event_id: event.id });
    tokio::time::sleep(<Leaderboards as verdict::graphql::feed::Kind>::QUIET * 3).await;
    assert_eq!(s.feeds.of::<Leaderboards>().computations(), 2);
}

/// A `projectSubmitted` subscriber that reads nothing while far more is published than the
/// bus holds costs the server no more than the bus's fixed ring: the bus never holds more
/// than its capacity, and when the subscriber reads again it is told how many messages it
/// missed (an error, not silence) and then gets the newest ones, after which the ring is
/// empty.
#[tokio::test]
async fn a_lagging_subscriber_is_told_what_it_missed_and_the_bus_stays_bounded() {
    use futures_util::StreamExt;
    use sea_orm::{ColumnTrait, QueryFilter};
    use std::time::Duration;
    use verdict::graphql::bus::{BusEvent, CAPACITY};

    let t = sqlite().await;
    import_fixture(&t.db).await;
    let event = verdict::domain::event_by_slug(&t.db.conn, spring_hack::SLUG)
        .await
        .expect("event");
    let project = Arc::new(
        entity::project::Entity::find()
            .filter(entity::project::Column::EventId.eq(event.id))
            .one(&t.db.conn)
            .await
            .expect("read")
            .expect("the fixture has projects"),
    );
    let submitted = || BusEvent::ProjectSubmitted {
        event_id: event.id,
        project: project.clone(),
    };
    let s = services(&t.db);
    let schema = graphql::schema(s.clone(), true);
    let rc = Arc::new(RequestCtx::new("test".into(), "127.0.0.1".into(), None).long_lived());
    let mut req = async_graphql::Request::new(format!(
        r#"subscription {{ projectSubmitted(event: "{}") {{ id }} }}"#,
        spring_hack::SLUG
    ));
    req.data = graphql::request_data(&s, rc);
    let mut stream = schema.execute_stream(req);

    // Live once a submission published now reaches it; then nothing is left to read.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        s.bus.publish(submitted());
        if let Ok(first) = tokio::time::timeout(Duration::from_millis(100), stream.next()).await {
            assert!(first.is_some_and(|r| r.errors.is_empty()));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the subscription starts"
        );
    }
    while tokio::time::timeout(Duration::from_millis(200), stream.next())
        .await
        .is_ok()
    {}
    assert_eq!(s.bus.held(), 0);

    let published = 3 * CAPACITY;
    for _ in 0..published {
        s.bus.publish(submitted());
        assert!(s.bus.held() <= CAPACITY, "{} held", s.bus.held());
    }
    assert_eq!(
        s.bus.held(),
        CAPACITY,
        "the newest events wait for the subscriber"
    );

    let wait = Duration::from_secs(10);
    let told = tokio::time::timeout(wait, stream.next())
        .await
        .expect("a message")
        .expect("the stream goes on");
    let missed = format!("missed {} messages", published - CAPACITY);
    assert!(
        told.errors
            .first()
            .is_some_and(|e| e.message.contains(&missed)),
        "the subscriber is told it {missed}: {:?}",
        told.errors
    );
    for i in 0..CAPACITY {
        let r = tokio::time::timeout(wait, stream.next())
            .await
            .expect("a message")
            .expect("the stream goes on");
        assert!(
            r.errors.is_empty(),
            "message {i} after the gap: {:?}",
            r.errors
        );
    }
    assert_eq!(s.bus.held(), 0, "read, the ring lets everything go");
    assert!(
        tokio::time::timeout(Duration::from_millis(200), stream.next())
            .await
            .is_err(),
        "nothing more than the newest {CAPACITY}"
    );
}

/// A site admin signed in with a real session, as a websocket caller is.
async fn signed_in_admin(db: &Db) -> (entity::user::Model, accounts::Credential) {
    let email = "root@example.org";
    let w = verdict::domain::Write::begin(db, None)
        .await
        .expect("begin");
    let password = accounts::admin_create(&w, email).await.expect("admin");
    w.commit().await.expect("commit");
    let (_, token) = accounts::log_in(db, email, &password, "test", 100)
        .await
        .expect("log in");
    accounts::authenticate(&db.conn, &token)
        .await
        .expect("authenticate")
        .expect("a live session")
}

/// Subscribes `n` callers to `query` and returns their tasks and what they receive: the
/// subscriber's number and the message's data.
fn subscribers(
    s: &Services,
    caller: Option<(entity::user::Model, accounts::Credential)>,
    query: &str,
    n: usize,
    tx: &tokio::sync::mpsc::UnboundedSender<(usize, serde_json::Value)>,
) -> Vec<tokio::task::JoinHandle<()>> {
    use futures_util::StreamExt;
    let schema = graphql::schema(s.clone(), true);
    (0..n)
        .map(|i| {
            let rc = Arc::new(
                RequestCtx::new("test".into(), "127.0.0.1".into(), caller.clone()).long_lived(),
            );
            let mut req = async_graphql::Request::new(query);
            req.data = graphql::request_data(s, rc);
            let mut stream = schema.execute_stream(req);
            let tx = tx.clone();
            tokio::spawn(async move {
                while let Some(resp) = stream.next().await {
                    assert!(resp.errors.is_empty(), "{:?}", resp.errors);
                    let _ = tx.send((i, resp.data.into_json().unwrap()));
                }
            })
        })
        .collect()
}

/// Waits (at most 10 s) until no feed of a kind runs: `running` counts them.
async fn feed_retired(running: impl Fn() -> usize) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while running() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the feed ends when its last follower leaves"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Statements one change costs its subscribers: `n` of them follow `query`, `change` is
/// published once, and every subscriber must receive one message (checked by `check`).
#[allow(clippy::too_many_arguments)]
async fn statements_per_change(
    t: &InProcess,
    s: &Services,
    caller: Option<(entity::user::Model, accounts::Credential)>,
    query: &str,
    n: usize,
    followers: impl Fn() -> usize,
    change: verdict::graphql::bus::BusEvent,
    check: impl Fn(&serde_json::Value),
) -> u64 {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let tasks = subscribers(s, caller, query, n, &tx);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while followers() < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "subscribers register"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let before = t.db.statement_count();
    s.bus.publish(change);
    let mut who = vec![];
    while who.len() < n {
        let (i, data) = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
            .await
            .expect("every subscriber receives the change")
            .expect("open");
        check(&data);
        who.push(i);
    }
    let used = t.db.statement_count() - before;
    who.sort();
    assert_eq!(who, (0..n).collect::<Vec<_>>(), "{}", t.name);
    for task in tasks {
        task.abort();
    }
    used
}

/// Judging progress and published results are computed once per change and event, and
/// every follower's credential and role are checked in a few statements for all of them:
/// what a change costs does not grow with the number of subscribers.
#[tokio::test]
async fn progress_and_publications_cost_the_same_for_one_subscriber_or_fifty() {
    use verdict::graphql::bus::BusEvent;
    for t in backends().await {
        import_fixture(&t.db).await;
        let caller = signed_in_admin(&t.db).await;
        let admin = Actor {
            user: caller.0.clone(),
        };
        let event = verdict::domain::event_by_slug(&t.db.conn, spring_hack::SLUG)
            .await
            .expect("event");
        let mut s = services(&t.db);

        let progress = format!(
            r#"subscription {{ judgingProgress(event: "{}") {{ assignments done }} }}"#,
            spring_hack::SLUG
        );
        let mut used = vec![];
        for n in [1, 50] {
            // The progress is kept per head of the audit chain, and these changes are
            // announced without a write: each round starts from an empty memo, so each
            // computes. A feed's task keeps the services it was started with (their memo
            // too) until it sees its last follower leave: wait for the last round's to
            // end, or this round may find it still running and hit its filled memo (1 run
            // in 5 measured 7 statements for 1 subscriber against 4 for 50 that way).
            feed_retired(|| s.feeds.of::<Progress>().running()).await;
            s.progress = Default::default();
            used.push(
                statements_per_change(
                    &t,
                    &s,
                    Some(caller.clone()),
                    &progress,
                    n,
                    || s.feeds.of::<Progress>().followers(event.id),
                    BusEvent::JudgingChanged { event_id: event.id },
                    |d| assert!(d["judgingProgress"]["assignments"].as_i64() > Some(0)),
                )
                .await,
            );
        }
        println!(
            "{}: judgingProgress: {} statements per change for 1 subscriber, {} for 50",
            t.name, used[0], used[1]
        );
        assert_eq!(used[0], used[1], "{}: {used:?}", t.name);
        assert_eq!(s.feeds.of::<Progress>().computations(), 2, "{}", t.name);

        let run = verdict::domain::results::run_calibration(
            &t.db,
            &admin,
            &event,
            &s.signer,
            Some(1),
            Some(20),
        )
        .await
        .expect("run");
        let w = Write::begin(&t.db, Some(admin.clone()))
            .await
            .expect("begin");
        let org = w.organizer(&event).await.expect("organizer");
        let (publication, _) =
            verdict::domain::results::publish(&w, org, &s.signer, &run.public_id, false)
                .await
                .expect("publish");
        w.commit().await.expect("commit");
        let published = format!(
            r#"subscription {{ resultsPublished(event: "{}") {{ version results {{ rankingPage(first: 5) {{ totalCount }} }} }} }}"#,
            spring_hack::SLUG
        );
        let mut used = vec![];
        for n in [1, 50] {
            used.push(
                statements_per_change(
                    &t,
                    &s,
                    None,
                    &published,
                    n,
                    || s.feeds.of::<Publications>().followers(event.id),
                    BusEvent::ResultsPublished {
                        event_id: event.id,
                        publication_id: publication.id,
                    },
                    |d| assert_eq!(d["resultsPublished"]["version"], 1),
                )
                .await,
            );
        }
        println!(
            "{}: resultsPublished: {} statements per publication for 1 subscriber, {} for 50",
            t.name, used[0], used[1]
        );
        // The first reads the run once; later ones find it in memory.
        assert!(used[1] <= used[0], "{}: {used:?}", t.name);
    }
}
