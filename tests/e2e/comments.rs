//! Comments: a public thread under each submitted project, signed-in posting that is
//! checked and rate-limited per author (exactly, under concurrency), authors shown by
//! display name only, and organizers hiding a comment softly with a reason.

use serde_json::{Value, json};

use crate::audit::audit_log;
use crate::harness::{App, assert_bad_input, assert_code, error_code, str_at};

e2e! {
    anyone_reads_a_thread_by_display_name_and_posting_is_checked,
    posting_is_rate_limited_per_author_under_concurrency,
    organizers_hide_a_comment_softly_and_only_they,
    a_thread_pages_with_first_and_after,
}

const POST: &str = "mutation($p: ID!, $b: String!) { postComment(project: $p, body: $b) { id body hidden createdAt author { displayName } } }";
const HIDE: &str = "mutation($id: ID!, $r: String!) { hideComment(id: $id, reason: $r) { id body hidden hiddenAt hiddenReason } }";
const THREAD: &str = "query($p: ID!, $first: Int, $after: String) { project(id: $p) { comments(first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor }
    edges { cursor node { id body hidden hiddenAt hiddenReason createdAt author { displayName } } } } } }";

/// The thread of `project` as `token` reads it (first page of up to 100).
async fn thread(app: &App, token: Option<&str>, project: &str) -> Value {
    let d = app
        .ok(token, THREAD, json!({ "p": project, "first": 100 }))
        .await;
    d["project"]["comments"].clone()
}

fn nodes(conn: &Value) -> Vec<Value> {
    conn["edges"]
        .as_array()
        .unwrap_or_else(|| panic!("edges: {conn}"))
        .iter()
        .map(|e| e["node"].clone())
        .collect()
}

async fn anyone_reads_a_thread_by_display_name_and_posting_is_checked(app: App) {
    let s = app.scenario().await;
    let p = Some(s.participant_a.as_str());
    let judge = Some(s.judge_a.as_str());

    // Trimmed, stored verbatim otherwise (markup included: it is text, not HTML).
    let markup = "  <img src=x onerror=alert(1)> **not bold**\nsecond line \t ";
    let d = app
        .ok(p, POST, json!({ "p": s.submitted, "b": markup }))
        .await;
    assert_eq!(
        d["postComment"]["body"],
        "<img src=x onerror=alert(1)> **not bold**\nsecond line"
    );
    assert_eq!(d["postComment"]["hidden"], false);
    app.ok(
        judge,
        POST,
        json!({ "p": s.submitted, "b": "Lovely demo." }),
    )
    .await;

    // Anonymous callers read the thread, oldest first, authors by display name only.
    let conn = thread(&app, None, &s.submitted).await;
    assert_eq!(conn["totalCount"], 2, "{conn}");
    let names: Vec<&str> = conn["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .filter_map(|e| e["node"]["author"]["displayName"].as_str())
        .collect();
    let local = |email: &str| email.split('@').next().unwrap_or_default().to_owned();
    assert_eq!(
        names,
        vec![local(&s.emails.participant_a), local(&s.emails.judge_a)]
    );
    assert!(
        !conn.to_string().contains("@example.org"),
        "no email anywhere in the thread: {conn}"
    );
    // There is no email to ask for: the author is a display name, not a User.
    let r = app
        .gql(
            "query($p: ID!) { project(id: $p) { comments { nodes { author { email } } } } }",
            json!({ "p": s.submitted }),
        )
        .await;
    assert!(
        error_code(&r).is_some() && r["data"].is_null(),
        "CommentAuthor has no email field: {r}"
    );

    // Refusals name the field and write nothing.
    let head = app.audit_head().await;
    let too_long = "x".repeat(2_001);
    for bad in ["", "   \n\t  ", too_long.as_str()] {
        let r = app
            .gql_opt(p, POST, json!({ "p": s.submitted, "b": bad }))
            .await;
        assert_bad_input(&r, &["body"]);
    }
    // Exactly 2,000 characters (multi-byte ones included) is allowed after trimming.
    let longest = format!(" {} ", "é".repeat(2_000));
    app.ok(p, POST, json!({ "p": s.submitted, "b": longest }))
        .await;
    assert_eq!(
        app.audit_head().await,
        head + 1,
        "only the valid post wrote"
    );

    // Anonymous callers do not post.
    let r = app
        .gql(POST, json!({ "p": s.submitted, "b": "hello" }))
        .await;
    assert_code(&r, "UNAUTHENTICATED");
    // A project the caller may not see is not there: a draft, an unknown id.
    for project in [s.draft.as_str(), "no-such-project"] {
        let r = app
            .gql_opt(judge, POST, json!({ "p": project, "b": "hello" }))
            .await;
        assert_code(&r, "NOT_FOUND");
    }
    // Its own team sees the draft, but a draft takes no comments yet.
    let r = app
        .gql_opt(p, POST, json!({ "p": s.draft, "b": "hello" }))
        .await;
    assert_bad_input(&r, &["project"]);
    assert_eq!(app.audit_head().await, head + 1, "refusals wrote nothing");
    assert_eq!(thread(&app, None, &s.submitted).await["totalCount"], 3);

    // A project hidden by moderation: the public neither reads its thread nor posts to it.
    app.ok(
        Some(&s.organizer_a),
        "mutation($id: ID!) { hideProject(id: $id, reason: \"off-topic\") { id } }",
        json!({ "id": s.submitted }),
    )
    .await;
    let r = app.gql(THREAD, json!({ "p": s.submitted })).await;
    assert!(r["data"]["project"].is_null(), "{r}");
    let r = app
        .gql_opt(judge, POST, json!({ "p": s.submitted, "b": "still here?" }))
        .await;
    assert_code(&r, "NOT_FOUND");
}

async fn posting_is_rate_limited_per_author_under_concurrency(app: App) {
    const LIMIT: usize = 10;
    let s = app.scenario().await;
    let head = app.audit_head().await;
    let posts = (0..LIMIT * 3).map(|i| {
        let app = &app;
        let s = &s;
        async move {
            app.gql_opt(
                Some(&s.judge_a),
                POST,
                json!({ "p": s.submitted, "b": format!("comment {i}") }),
            )
            .await
        }
    });
    let answers = futures_util::future::join_all(posts).await;
    let ok = answers.iter().filter(|r| error_code(r).is_none()).count();
    let limited: Vec<&Value> = answers
        .iter()
        .filter(|r| error_code(r).as_deref() == Some("RATE_LIMITED"))
        .collect();
    assert_eq!(
        (ok, limited.len()),
        (LIMIT, LIMIT * 2),
        "exactly the limit is posted, the rest refused, nothing else (no INTERNAL): {answers:?}"
    );
    for r in &limited {
        let retry = r
            .pointer("/errors/0/extensions/retryAfter")
            .and_then(Value::as_u64)
            .unwrap_or_else(|| panic!("RATE_LIMITED carries retryAfter: {r}"));
        assert!((1..=15 * 60).contains(&retry), "within the window: {r}");
    }
    assert_eq!(
        app.audit_head().await,
        head + LIMIT as u64,
        "one audit event per posted comment, none per refusal"
    );
    assert_eq!(
        thread(&app, None, &s.submitted).await["totalCount"],
        LIMIT,
        "the refused ones wrote nothing"
    );

    // The limit is the author's: someone else still posts.
    app.ok(
        Some(&s.participant_a),
        POST,
        json!({ "p": s.submitted, "b": "my turn" }),
    )
    .await;
    let r = app
        .gql_opt(
            Some(&s.judge_a),
            POST,
            json!({ "p": s.submitted, "b": "one more" }),
        )
        .await;
    assert_code(&r, "RATE_LIMITED");
}

async fn organizers_hide_a_comment_softly_and_only_they(app: App) {
    let s = app.scenario().await;
    let d = app
        .ok(
            Some(&s.judge_a),
            POST,
            json!({ "p": s.submitted, "b": "Buy cheap watches at spam.example" }),
        )
        .await;
    let id = str_at(&d, "/postComment/id");
    app.ok(
        Some(&s.participant_a),
        POST,
        json!({ "p": s.submitted, "b": "Thanks for looking!" }),
    )
    .await;

    // Neither the project's team, nor the organizer of another event, nor anonymous callers.
    let head = app.audit_head().await;
    for (token, code) in [
        (Some(s.participant_a.as_str()), "FORBIDDEN"),
        (Some(s.organizer_b.as_str()), "FORBIDDEN"),
        (None, "UNAUTHENTICATED"),
    ] {
        let r = app
            .gql_opt(token, HIDE, json!({ "id": id, "r": "spam" }))
            .await;
        assert_code(&r, code);
    }
    // A reason is required, one line of at most 500 characters.
    for bad in [" ".to_owned(), "r".repeat(501)] {
        let r = app
            .gql_opt(Some(&s.organizer_a), HIDE, json!({ "id": id, "r": bad }))
            .await;
        assert_bad_input(&r, &["reason"]);
    }
    assert_eq!(app.audit_head().await, head, "refusals wrote nothing");

    let d = app
        .ok(
            Some(&s.organizer_a),
            HIDE,
            json!({ "id": id, "r": " spam link " }),
        )
        .await;
    assert_eq!(d["hideComment"]["hidden"], true);
    assert_eq!(d["hideComment"]["hiddenReason"], "spam link");
    assert!(d["hideComment"]["hiddenAt"].is_string());
    assert_eq!(
        d["hideComment"]["body"],
        "Buy cheap watches at spam.example"
    );
    assert_eq!(app.audit_head().await, head + 1);

    // Again: CONFLICT, and nothing written.
    let r = app
        .gql_opt(
            Some(&s.organizer_a),
            HIDE,
            json!({ "id": id, "r": "twice" }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert_eq!(app.audit_head().await, head + 1);

    // The public sees a placeholder in its place: no body, no reason.
    let public = thread(&app, None, &s.submitted).await;
    assert_eq!(public["totalCount"], 2);
    let first = &nodes(&public)[0];
    assert_eq!(first["id"], id.as_str());
    assert_eq!(first["hidden"], true);
    assert_eq!(first["body"], Value::Null);
    assert_eq!(first["hiddenReason"], Value::Null);
    assert!(
        !public.to_string().contains("spam.example"),
        "the hidden body is not served to the public: {public}"
    );
    assert_eq!(nodes(&public)[1]["body"], "Thanks for looking!");
    // So does another signed-in reader who is not an organizer of this event.
    let other = thread(&app, Some(&s.organizer_b), &s.submitted).await;
    assert_eq!(nodes(&other)[0]["body"], Value::Null);
    // The organizers, and the author, read the body and the reason.
    for token in [&s.organizer_a, &s.admin, &s.judge_a] {
        let conn = thread(&app, Some(token), &s.submitted).await;
        let n = &nodes(&conn)[0];
        assert_eq!(n["body"], "Buy cheap watches at spam.example", "{conn}");
        assert_eq!(n["hiddenReason"], "spam link", "{conn}");
    }

    // The audit chain has both events, the hide with its reason.
    let log = audit_log(&app, &s.organizer_a, &s.event_a).await;
    let of_comment: Vec<&Value> = log
        .iter()
        .filter(|e| e["objectId"] == id.as_str())
        .collect();
    let actions: Vec<&str> = of_comment
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    assert_eq!(actions, ["comment.posted", "comment.hidden"], "{log:?}");
    let payload = &of_comment[1]["payload"];
    let payload: Value = match payload {
        Value::String(s) => serde_json::from_str(s).expect("payload JSON"),
        v => v.clone(),
    };
    assert_eq!(payload["reason"], "spam link", "{payload}");
    assert!(
        !of_comment[0]["payload"]
            .to_string()
            .contains("spam.example"),
        "the chain pins the body by hash, it does not copy it"
    );
    let out = app.cli(&["audit", "verify"]).await;
    assert!(out.success(), "the chain verifies: {out:?}");
}

async fn a_thread_pages_with_first_and_after(app: App) {
    let s = app.scenario().await;
    // Two authors, well within each one's limit.
    for i in 0..7 {
        let token = if i % 2 == 0 {
            &s.participant_a
        } else {
            &s.judge_a
        };
        app.ok(
            Some(token),
            POST,
            json!({ "p": s.submitted, "b": format!("comment {i}") }),
        )
        .await;
    }
    let mut seen = vec![];
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let d = app
            .ok(
                None,
                THREAD,
                json!({ "p": s.submitted, "first": 3, "after": after }),
            )
            .await;
        let conn = &d["project"]["comments"];
        assert_eq!(conn["totalCount"], 7);
        let page = nodes(conn);
        assert!(page.len() <= 3, "{conn}");
        seen.extend(
            page.iter()
                .map(|n| n["body"].as_str().expect("body").to_owned()),
        );
        pages += 1;
        if conn["pageInfo"]["hasNextPage"] != true {
            break;
        }
        after = Some(str_at(conn, "/pageInfo/endCursor"));
    }
    assert_eq!(pages, 3);
    let want: Vec<String> = (0..7).map(|i| format!("comment {i}")).collect();
    assert_eq!(seen, want, "every comment once, oldest first");

    // A page larger than the limit, or a cursor from elsewhere, is refused.
    let r = app
        .gql(THREAD, json!({ "p": s.submitted, "first": 101 }))
        .await;
    assert!(error_code(&r).is_some(), "first is capped: {r}");
    let r = app
        .gql(THREAD, json!({ "p": s.submitted, "after": "nonsense" }))
        .await;
    assert_bad_input(&r, &["after"]);
}
