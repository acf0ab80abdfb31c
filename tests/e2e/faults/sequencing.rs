//! The window writes in parallel opened (PostgreSQL): a write's entry is committed into
//! `audit_pending` with the write and given its place on the chain by the sequencer right
//! after. A server killed in between leaves a committed write whose entry is not on the
//! chain yet; the restarted server gives it the next seq: no entry lost, no gap, no fork.

use super::*;

use sea_orm::DatabaseConnection;

/// Entries committed and not yet sequenced.
async fn pending(conn: &DatabaseConnection) -> i64 {
    let row = conn
        .query_one_raw(Statement::from_string(
            conn.get_database_backend(),
            "SELECT COUNT(*) FROM audit_pending",
        ))
        .await
        .expect("count pending")
        .expect("a row");
    row.try_get_by_index(0).expect("count")
}

pub(super) async fn a_write_killed_before_its_entry_is_sequenced_gets_it_after_restart(app: App) {
    let db = app.db.clone();
    let head = app.audit_head().await;
    let conn = Database::connect(db.url()).await.expect("connect");

    // The sequencer needs the head row; a transaction of the test holds the table, so the
    // write commits and then waits for its entry's place.
    let lock = Database::connect(db.url()).await.expect("connect");
    lock.execute_unprepared("BEGIN; LOCK TABLE audit_head IN EXCLUSIVE MODE")
        .await
        .expect("hold the head");
    let email = format!("window-{}@example.org", unique());
    let request = {
        let (http, url) = (app.http.clone(), app.url("/graphql"));
        let body = json!({
            "query": "mutation($e: String!, $p: String!) { signUp(email: $e, password: $p, displayName: \"W\") { token } }",
            "variables": { "e": email, "p": crate::harness::PASSWORD },
        });
        tokio::spawn(async move { http.post(url).json(&body).send().await })
    };
    tokio::time::timeout(Duration::from_secs(20), async {
        while pending(&conn).await < 1 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the write committed its entry into audit_pending");
    assert!(
        !request.is_finished(),
        "the answer waits for the entry's place"
    );

    // Killed in the window: the write is committed, its entry pending.
    app.kill9();
    let mut app = app;
    assert_eq!(app.wait_exit(Duration::from_secs(10)).await, None);
    assert!(request.await.expect("joined").is_err(), "never answered");
    drop(app);
    lock.execute_unprepared("ROLLBACK").await.expect("release");
    let users = |e: String| {
        let conn = conn.clone();
        async move {
            conn.query_one_raw(Statement::from_sql_and_values(
                conn.get_database_backend(),
                "SELECT COUNT(*) FROM users WHERE email = $1",
                [e.into()],
            ))
            .await
            .expect("users")
            .expect("a row")
            .try_get_by_index::<i64>(0)
            .expect("count")
        }
    };
    assert_eq!(users(email.clone()).await, 1, "the write was committed");
    assert_eq!(pending(&conn).await, 1);
    // `audit verify` reads the chain as it stands and says what waits.
    let out = verdict::audit::verify(&conn).await.expect("verify");
    assert!(
        matches!(out, verdict::audit::Verification::Intact { seq, pending: 1, .. } if seq as u64 == head),
        "{out:?}"
    );

    // The restarted server sequences it: the next seq, right after the old head.
    let app = App::spawn_on(db.clone(), &[]).await;
    tokio::time::timeout(Duration::from_secs(20), async {
        while pending(&conn).await > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the restarted server sequenced the entry");
    assert_eq!(app.audit_head().await, head + 1, "no gap, no fork");
    let last = conn
        .query_one_raw(Statement::from_sql_and_values(
            conn.get_database_backend(),
            "SELECT action FROM audit_events WHERE seq = $1",
            [(head as i64 + 1).into()],
        ))
        .await
        .expect("read")
        .expect("the entry");
    assert_eq!(
        last.try_get_by_index::<String>(0).expect("action"),
        "user.signed_up"
    );
    // And the chain goes on from it.
    let token = app
        .sign_up(&format!("after-{}@example.org", unique()))
        .await;
    assert!(!token.is_empty());
    assert_eq!(app.audit_head().await, head + 2);
}
