//! Community voting (issue 12): quadratic ballots, identity accounting (accounts, email
//! links, the spellings of one mailbox), the window, who may not vote, and the tally that
//! nobody sees before an organizer publishes it after the close.

use chrono::{Duration, Utc};
use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::harness::{
    App, PASSWORD, Scenario, assert_bad_input, assert_code, data, error_code, op, rfc3339, str_at,
    unique,
};
use crate::invitations::operator_link;

e2e! {
    account_voters_cast_quadratic_ballots_and_the_tally_waits_for_publication,
    email_voters_confirm_a_single_use_link_and_a_mailbox_votes_once,
    concurrent_casts_and_registrations_neither_mix_nor_double,
    registering_tells_the_asker_nothing_about_who_registered,
    an_address_off_the_allowlist_is_answered_as_a_listed_one,
}

const CONFIGURE: &str = "mutation($e: String!, $mode: VotingMode!, $credits: Int!, $opens: DateTime!, \
     $closes: DateTime!, $allow: [String!]) { configureVoting(event: $e, mode: $mode, \
     credits: $credits, opens: $opens, closes: $closes, allowlist: $allow) \
     { mode credits opens closes isOpen tallyPublishedAt voters allowlistSize } }";
const BALLOT: &str = "query($e: String!, $k: String) { event(slug: $e) { myBallot(voterKey: $k) \
     { credits spent remaining address votes { project { id } votes } projects { id } } } }";
const CAST: &str = "mutation($e: String!, $v: [VoteInput!]!, $k: String) { castVotes(event: $e, \
     votes: $v, voterKey: $k) { credits spent remaining votes { project { id } votes } } }";
const TALLY: &str = "query($e: String!) { event(slug: $e) { voteTally { rank votes voters credits \
     project { id } } } }";
const PUBLISH: &str = "mutation($e: String!) { publishVoteTally(event: $e) { rank votes voters \
     credits project { id } } }";
pub(crate) const REGISTER: &str =
    "mutation($e: String!, $email: String!) { registerVoter(event: $e, email: $email) }";
pub(crate) const CONFIRM: &str =
    "mutation($t: String!) { confirmVoter(token: $t) { key event { slug } } }";

/// The standard scenario plus a second team (its own participant) with a submitted
/// project, so that a ballot has two projects of two teams.
pub(crate) struct Setup {
    pub s: Scenario,
    pub participant_b: String,
    pub submitted_b: String,
}

pub(crate) async fn setup(app: &App) -> Setup {
    let s = app.scenario().await;
    let email_b = format!("participant-b-{}@example.org", unique());
    let participant_b = app.sign_up(&email_b).await;
    app.register(&participant_b, &s.event_a).await;
    app.create_team(&participant_b, &s.event_a, "Team B").await;
    let submitted_b = app
        .create_project(&participant_b, &s.event_a, "Team B's project", &s.track_a)
        .await;
    app.submit_project(&participant_b, &submitted_b).await;
    Setup {
        s,
        participant_b,
        submitted_b,
    }
}

/// Configures `event`'s vote open from an hour ago to `closes_in` from now.
pub(crate) async fn configure(
    app: &App,
    organizer: &str,
    event: &str,
    mode: &str,
    credits: i64,
    closes_in: Duration,
    allowlist: Option<Vec<&str>>,
) -> Value {
    let now = Utc::now();
    app.gql_opt(
        Some(organizer),
        CONFIGURE,
        json!({ "e": event, "mode": mode, "credits": credits,
                "opens": rfc3339(now - Duration::hours(1)), "closes": rfc3339(now + closes_in),
                "allow": allowlist }),
    )
    .await
}

pub(crate) async fn ballot(
    app: &App,
    token: Option<&str>,
    event: &str,
    key: Option<&str>,
) -> Value {
    app.ok(token, BALLOT, json!({ "e": event, "k": key })).await["event"]["myBallot"].clone()
}

pub(crate) async fn cast(
    app: &App,
    token: Option<&str>,
    event: &str,
    votes: Value,
    key: Option<&str>,
) -> Value {
    app.gql_opt(token, CAST, json!({ "e": event, "v": votes, "k": key }))
        .await
}

/// A fresh account with a confirmed address (the harness's sign-up confirms it).
async fn confirmed_account(app: &App, email: &str) -> String {
    app.sign_up(email).await
}

async fn account_voters_cast_quadratic_ballots_and_the_tally_waits_for_publication(app: App) {
    let Setup {
        s,
        participant_b,
        submitted_b,
    } = setup(&app).await;
    let (org, event, a, b) = (&s.organizer_a, &s.event_a, &s.submitted, &submitted_b);
    let anonymous = |q: &'static str| app.gql_opt(None, q, json!({ "e": event }));
    let r = anonymous("query($e: String!) { event(slug: $e) { voting { mode } } }").await;
    assert_eq!(data(&r)["event"]["voting"], Value::Null, "no vote yet");

    // Only organizers configure, and bad settings name their field.
    let r = configure(
        &app,
        &participant_b,
        event,
        "ACCOUNT",
        10,
        Duration::hours(1),
        None,
    )
    .await;
    assert_code(&r, "FORBIDDEN");
    let r = configure(&app, org, event, "ACCOUNT", 0, Duration::hours(1), None).await;
    assert_bad_input(&r, &["credits"]);
    let r = configure(&app, org, event, "ACCOUNT", 10, Duration::hours(-2), None).await;
    assert_bad_input(&r, &["closes"]);
    let r = configure(
        &app,
        org,
        event,
        "ACCOUNT",
        10,
        Duration::hours(1),
        Some(vec!["a@b.org"]),
    )
    .await;
    assert_bad_input(&r, &["allowlist"]);
    let audit_before = app.audit_count(org, event).await;
    let r = configure(&app, org, event, "ACCOUNT", 10, Duration::hours(1), None).await;
    let c = &data(&r)["configureVoting"];
    assert_eq!(
        (c["mode"].as_str(), c["credits"].as_i64()),
        (Some("ACCOUNT"), Some(10))
    );
    assert_eq!(c["isOpen"], true);
    assert_eq!(app.audit_count(org, event).await, audit_before + 1);
    let r = anonymous("query($e: String!) { event(slug: $e) { voting { mode credits isOpen } } }")
        .await;
    assert_eq!(
        data(&r)["event"]["voting"]["credits"],
        10,
        "the vote is public"
    );
    let r = anonymous("query($e: String!) { event(slug: $e) { voting { voters } } }").await;
    assert_code(&r, "UNAUTHENTICATED");
    let r = app
        .gql_opt(
            Some(&participant_b),
            "query($e: String!) { event(slug: $e) { voting { voters } } }",
            json!({ "e": event }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");

    // Nobody sees the tally while voting runs: not the public, not the organizers.
    assert_code(&anonymous(TALLY).await, "NOT_FOUND");
    assert_code(
        &app.gql_opt(Some(org), TALLY, json!({ "e": event })).await,
        "NOT_FOUND",
    );

    // A voter sees the two projects in their own order, the same on every read.
    let voter_email = format!("voter-{}@example.org", unique());
    let voter = confirmed_account(&app, &voter_email).await;
    let first = ballot(&app, Some(&voter), event, None).await;
    assert_eq!(
        (first["credits"].as_i64(), first["spent"].as_i64()),
        (Some(10), Some(0))
    );
    let order = first["projects"].clone();
    assert_eq!(order.as_array().map(Vec::len), Some(2), "{first}");
    assert_eq!(
        ballot(&app, Some(&voter), event, None).await["projects"],
        order
    );

    // Quadratic: 3 votes cost 9; 3 + 1 cost 10; 3 + 2 (13) is over budget, refused whole.
    let r = cast(
        &app,
        Some(&voter),
        event,
        json!([{ "project": a, "votes": 3 }]),
        None,
    )
    .await;
    assert_eq!(data(&r)["castVotes"]["remaining"], 1);
    let r = cast(
        &app,
        Some(&voter),
        event,
        json!([{ "project": a, "votes": 3 }, { "project": b, "votes": 1 }]),
        None,
    )
    .await;
    assert_eq!(data(&r)["castVotes"]["spent"], 10);
    let audit_before = app.audit_count(org, event).await;
    let r = cast(
        &app,
        Some(&voter),
        event,
        json!([{ "project": a, "votes": 3 }, { "project": b, "votes": 2 }]),
        None,
    )
    .await;
    assert_bad_input(&r, &["votes"]);
    let r = cast(
        &app,
        Some(&voter),
        event,
        json!([{ "project": s.draft, "votes": 1 }]),
        None,
    )
    .await;
    assert_bad_input(&r, &["votes[0].project"]);
    let r = cast(
        &app,
        Some(&voter),
        event,
        json!([{ "project": a, "votes": -1 }]),
        None,
    )
    .await;
    assert_bad_input(&r, &["votes[0].votes"]);
    let r = cast(
        &app,
        Some(&voter),
        event,
        json!([{ "project": a, "votes": 1 }, { "project": a, "votes": 1 }]),
        None,
    )
    .await;
    assert_bad_input(&r, &["votes[1].project"]);
    let kept = ballot(&app, Some(&voter), event, None).await;
    assert_eq!(kept["spent"], 10, "a refused cast changes nothing: {kept}");
    assert_eq!(kept["votes"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        app.audit_count(org, event).await,
        audit_before,
        "refusals write nothing"
    );

    // Who may not vote: the anonymous, the unconfirmed, judges, a team for its own project,
    // and another account of the same mailbox.
    assert_code(
        &cast(&app, None, event, json!([]), None).await,
        "UNAUTHENTICATED",
    );
    let r = app
        .gql_opt(
            None,
            op("SignUp"),
            json!({ "email": format!("unconfirmed-{}@example.org", unique()),
            "password": PASSWORD, "displayName": "Not yet confirmed" }),
        )
        .await;
    let unconfirmed = str_at(data(&r), "/signUp/token");
    let r = cast(
        &app,
        Some(&unconfirmed),
        event,
        json!([{ "project": a, "votes": 1 }]),
        None,
    )
    .await;
    assert_code(&r, "FORBIDDEN");
    let r = cast(
        &app,
        Some(&s.judge_a),
        event,
        json!([{ "project": a, "votes": 1 }]),
        None,
    )
    .await;
    assert_code(&r, "FORBIDDEN");
    let r = cast(
        &app,
        Some(&participant_b),
        event,
        json!([{ "project": b, "votes": 1 }]),
        None,
    )
    .await;
    assert_code(&r, "FORBIDDEN");
    let r = cast(
        &app,
        Some(&participant_b),
        event,
        json!([{ "project": a, "votes": 2 }]),
        None,
    )
    .await;
    assert_eq!(
        data(&r)["castVotes"]["spent"],
        4,
        "a participant votes for other teams"
    );
    let alias = confirmed_account(&app, &voter_email.replace('@', "+again@")).await;
    let r = cast(
        &app,
        Some(&alias),
        event,
        json!([{ "project": a, "votes": 1 }]),
        None,
    )
    .await;
    assert_code(&r, "CONFLICT");

    // The mode and the credits are fixed once people voted; the window may move.
    let r = configure(&app, org, event, "ACCOUNT", 20, Duration::hours(1), None).await;
    assert_code(&r, "CONFLICT");
    assert_code(
        &app.gql_opt(Some(org), PUBLISH, json!({ "e": event })).await,
        "CONFLICT",
    );
    let r = configure(&app, org, event, "ACCOUNT", 10, Duration::seconds(-1), None).await;
    assert_eq!(data(&r)["configureVoting"]["isOpen"], false);
    let r = cast(&app, Some(&voter), event, json!([]), None).await;
    assert_code(&r, "WINDOW_CLOSED");
    assert_code(&anonymous(TALLY).await, "NOT_FOUND");

    // Publication: organizers only, once; then the tally is public and frozen.
    assert_code(
        &app.gql_opt(Some(&voter), PUBLISH, json!({ "e": event }))
            .await,
        "FORBIDDEN",
    );
    let r = app.gql_opt(Some(org), PUBLISH, json!({ "e": event })).await;
    let rows = data(&r)["publishVoteTally"].clone();
    assert_eq!(rows[0]["project"]["id"], a.as_str(), "{rows}");
    assert_eq!(
        (rows[0]["rank"].as_i64(), rows[0]["votes"].as_i64()),
        (Some(1), Some(5))
    );
    assert_eq!(
        (rows[0]["voters"].as_i64(), rows[0]["credits"].as_i64()),
        (Some(2), Some(13))
    );
    assert_eq!(
        (rows[1]["rank"].as_i64(), rows[1]["votes"].as_i64()),
        (Some(2), Some(1))
    );
    let public = anonymous(TALLY).await;
    assert_eq!(
        data(&public)["event"]["voteTally"],
        rows,
        "the public reads what was published"
    );
    assert_code(
        &app.gql_opt(Some(org), PUBLISH, json!({ "e": event })).await,
        "CONFLICT",
    );
    let r = configure(&app, org, event, "ACCOUNT", 10, Duration::hours(1), None).await;
    assert_code(&r, "CONFLICT");
}

async fn email_voters_confirm_a_single_use_link_and_a_mailbox_votes_once(app: App) {
    let Setup { s, submitted_b, .. } = setup(&app).await;
    let (org, event, a, b) = (&s.organizer_a, &s.event_a, &s.submitted, &submitted_b);
    let listed = format!("ada.lovelace+hack{}@gmail.com", unique());
    let mailbox_spelling = listed
        .replace("ada.lovelace", "adalovelace")
        .replace("gmail", "googlemail");
    let list = vec![
        listed.as_str(),
        s.emails.judge_a.as_str(),
        s.emails.participant_a.as_str(),
    ];
    let r = configure(
        &app,
        org,
        event,
        "EMAIL_ALLOWLIST",
        9,
        Duration::hours(1),
        Some(list),
    )
    .await;
    assert_eq!(data(&r)["configureVoting"]["allowlistSize"], 3);

    // An address off the list gets no link: the asker's answer is the same as for a
    // listed one (see an_address_off_the_allowlist_is_answered_as_a_listed_one), and the
    // mailbox alone is told it is not on the list.
    let stranger = format!("stranger-{}@example.org", unique());
    let r = app
        .gql_opt(None, REGISTER, json!({ "e": event, "email": stranger }))
        .await;
    assert_eq!(r, json!({ "data": { "registerVoter": true } }));
    let to_stranger = mail_to(&app, &stranger).await;
    assert_eq!(to_stranger.len(), 1, "{to_stranger:?}");
    assert!(
        !to_stranger[0].contains("/vote?link="),
        "{}",
        to_stranger[0]
    );

    // Another spelling of a listed mailbox registers; the answer never holds the link.
    let r = app
        .gql_opt(
            None,
            REGISTER,
            json!({ "e": event, "email": mailbox_spelling }),
        )
        .await;
    assert_eq!(r, json!({ "data": { "registerVoter": true } }));
    let token = operator_link(&app, &mailbox_spelling, "/vote?link=").await;
    assert!(token.starts_with("vv_"), "{token}");
    // Yet another spelling of the same mailbox registers nobody: one mailbox, one voter
    // (the mailbox is told so; the answer is the same as for a new voter).
    let r = app
        .gql_opt(None, REGISTER, json!({ "e": event, "email": listed }))
        .await;
    assert_eq!(r, json!({ "data": { "registerVoter": true } }));
    // Organizers cannot read voters' links in the event's outbox.
    let r = app
        .ok(Some(org), "query($e: String!) { event(slug: $e) { outbox(first: 100) { edges { node { body } } } } }", json!({ "e": event }))
        .await;
    assert!(
        !r.to_string().contains(&token),
        "a voting link in the event outbox: {r}"
    );

    // The link works once and gives a key; the key votes.
    let r = app.gql_opt(None, CONFIRM, json!({ "t": token })).await;
    let key = str_at(data(&r), "/confirmVoter/key");
    assert!(key.starts_with("vk_"));
    assert_code(
        &app.gql_opt(None, CONFIRM, json!({ "t": token })).await,
        "NOT_FOUND",
    );
    let mine = ballot(&app, None, event, Some(&key)).await;
    assert_eq!(mine["address"], mailbox_spelling.as_str());
    assert_eq!(mine["credits"], 9);
    let r = cast(
        &app,
        None,
        event,
        json!([{ "project": a, "votes": 2 }, { "project": b, "votes": 3 }]),
        Some(&key),
    )
    .await;
    assert_bad_input(&r, &["votes"]);
    let r = cast(
        &app,
        None,
        event,
        json!([{ "project": a, "votes": 3 }]),
        Some(&key),
    )
    .await;
    assert_eq!(data(&r)["castVotes"]["spent"], 9);

    // A wrong key, no key, or an account (in an email vote) do not vote.
    let r = cast(&app, None, event, json!([]), Some("vk_not-a-key")).await;
    assert_code(&r, "UNAUTHENTICATED");
    assert_code(
        &cast(&app, None, event, json!([]), None).await,
        "UNAUTHENTICATED",
    );
    let r = cast(&app, Some(&s.participant_a), event, json!([]), None).await;
    assert_code(&r, "FORBIDDEN");
    // A judge's address, and a participant's for their own team, are known by the address.
    for (email, project) in [(&s.emails.judge_a, a), (&s.emails.participant_a, a)] {
        let r = app
            .gql_opt(None, REGISTER, json!({ "e": event, "email": email }))
            .await;
        data(&r);
        let t = operator_link(&app, email, "/vote?link=").await;
        let k = str_at(
            data(&app.gql_opt(None, CONFIRM, json!({ "t": t })).await),
            "/confirmVoter/key",
        );
        let r = cast(
            &app,
            None,
            event,
            json!([{ "project": project, "votes": 1 }]),
            Some(&k),
        )
        .await;
        assert_code(&r, "FORBIDDEN");
    }

    // Links are throttled per mailbox: three per window, the request about another
    // spelling above counted (it did the same work as one that mailed a link).
    data(
        &app.gql_opt(
            None,
            REGISTER,
            json!({ "e": event, "email": mailbox_spelling }),
        )
        .await,
    );
    let r = app
        .gql_opt(
            None,
            REGISTER,
            json!({ "e": event, "email": mailbox_spelling }),
        )
        .await;
    assert_code(&r, "RATE_LIMITED");
    assert!(
        r.pointer("/errors/0/extensions/retryAfter").is_some(),
        "{r}"
    );
    // The earlier key stopped working only when a new link is followed; it still works.
    assert_eq!(ballot(&app, None, event, Some(&key)).await["spent"], 9);
}

async fn concurrent_casts_and_registrations_neither_mix_nor_double(app: App) {
    let Setup { s, submitted_b, .. } = setup(&app).await;
    let (org, event, a, b) = (&s.organizer_a, &s.event_a, &s.submitted, &submitted_b);
    configure(&app, org, event, "ACCOUNT", 200, Duration::hours(1), None).await;
    let voter = confirmed_account(&app, &format!("racer-{}@example.org", unique())).await;

    // One voter's twelve allocations at once, the first cast among them: each is taken
    // whole, in some order; the last is what stays.
    let allocations: Vec<(i64, i64)> = (0..12).map(|i| (1 + i % 7, 9 - i % 5)).collect();
    let results = join_all(allocations.iter().map(|(x, y)| {
        cast(
            &app,
            Some(&voter),
            event,
            json!([{ "project": a, "votes": x }, { "project": b, "votes": y }]),
            None,
        )
    }))
    .await;
    for r in &results {
        assert_eq!(error_code(r), None, "{r}");
    }
    let kept = ballot(&app, Some(&voter), event, None).await;
    let votes: Vec<(String, i64)> = kept["votes"]
        .as_array()
        .expect("votes")
        .iter()
        .map(|v| {
            (
                str_at(v, "/project/id"),
                v["votes"].as_i64().expect("votes"),
            )
        })
        .collect();
    let x = votes
        .iter()
        .find(|v| v.0 == *a)
        .map(|v| v.1)
        .expect("votes on a");
    let y = votes
        .iter()
        .find(|v| v.0 == *b)
        .map(|v| v.1)
        .expect("votes on b");
    assert!(allocations.contains(&(x, y)), "a mixed allocation: {kept}");
    assert_eq!(kept["spent"].as_i64(), Some(x * x + y * y), "{kept}");

    // Eight spellings of one mailbox register at once: one voter; the others are told
    // by mail, or throttled (three links per mailbox per window).
    let slug = &s.event_b;
    let now = Utc::now();
    app.ok(
        Some(&s.organizer_b),
        CONFIGURE,
        json!({ "e": slug, "mode": "EMAIL", "credits": 4, "opens": rfc3339(now - Duration::hours(1)),
                "closes": rfc3339(now + Duration::hours(1)), "allow": null }),
    )
    .await;
    let tag = unique();
    let spellings: Vec<String> = (0..8)
        .map(|i| match i {
            0 => format!("grace{tag}@gmail.com"),
            i => format!(
                "g.race{tag}+{i}@{}",
                if i % 2 == 0 {
                    "gmail.com"
                } else {
                    "googlemail.com"
                }
            ),
        })
        .collect();
    let results = join_all(
        spellings
            .iter()
            .map(|e| app.gql_opt(None, REGISTER, json!({ "e": slug, "email": e }))),
    )
    .await;
    let codes: Vec<Option<String>> = results.iter().map(error_code).collect();
    assert_eq!(codes.iter().filter(|c| c.is_none()).count(), 3, "{codes:?}");
    assert!(
        codes.iter().flatten().all(|c| c == "RATE_LIMITED"),
        "only the mailbox's throttle refuses a spelling: {codes:?}"
    );
    let r = app
        .ok(
            Some(&s.organizer_b),
            "query($e: String!) { event(slug: $e) { voting { voters } } }",
            json!({ "e": slug }),
        )
        .await;
    assert_eq!(r["event"]["voting"]["voters"], 1);
}

/// The messages of `verdict mail list --all` to exactly `email`.
async fn mail_to(app: &App, email: &str) -> Vec<String> {
    let out = app.cli(&["mail", "list", "--all"]).await;
    assert!(out.success(), "mail list: {out:?}");
    out.stdout
        .split("--- ")
        .filter(|m| m.contains(&format!(" to {email} ")))
        .map(str::to_owned)
        .collect()
}

async fn registering_tells_the_asker_nothing_about_who_registered(app: App) {
    let s = app.scenario().await;
    let (org, event) = (&s.organizer_a, &s.event_a);
    let r = configure(&app, org, event, "EMAIL", 9, Duration::hours(1), None).await;
    assert_eq!(data(&r)["configureVoting"]["mode"], "EMAIL");
    let tag = unique();
    let registered = format!("grace.hopper{tag}@gmail.com");
    let r = app
        .gql_opt(None, REGISTER, json!({ "e": event, "email": registered }))
        .await;
    assert_eq!(r, json!({ "data": { "registerVoter": true } }));

    // Someone asks about another spelling of that mailbox, and about a mailbox nobody
    // registered: the two answers are the same, to the byte (no error, no extensions).
    let probe = format!("gracehopper{tag}+probe@gmail.com");
    let unseen = format!("ada{tag}@example.org");
    let about_registered = app
        .gql_resp(None, REGISTER, json!({ "e": event, "email": probe }))
        .await;
    let about_unseen = app
        .gql_resp(None, REGISTER, json!({ "e": event, "email": unseen }))
        .await;
    assert_eq!(
        (about_registered.status, &about_registered.text),
        (about_unseen.status, &about_unseen.text),
        "the answer tells whether the mailbox registered"
    );
    assert_eq!(
        about_unseen.try_json(),
        Some(json!({ "data": { "registerVoter": true } }))
    );

    // The same work was done for both: one message each. The new mailbox gets a link; the
    // registered one is told, in its own inbox, that it already is, and gets no link.
    let to_probe = mail_to(&app, &probe).await;
    let to_unseen = mail_to(&app, &unseen).await;
    assert_eq!(
        (to_probe.len(), to_unseen.len()),
        (1, 1),
        "{to_probe:?} {to_unseen:?}"
    );
    assert!(to_unseen[0].contains("/vote?link=vv_"), "{}", to_unseen[0]);
    assert!(!to_probe[0].contains("/vote?link="), "{}", to_probe[0]);
    assert!(
        to_probe[0].contains("already registered"),
        "{}",
        to_probe[0]
    );
    assert!(!to_probe[0].contains(&registered), "{}", to_probe[0]);

    // Still one voter for the mailbox, and its own link still works.
    let r = app
        .ok(
            Some(org),
            "query($e: String!) { event(slug: $e) { voting { voters } } }",
            json!({ "e": event }),
        )
        .await;
    assert_eq!(r["event"]["voting"]["voters"], 2, "{r}");
    let token = operator_link(&app, &registered, "/vote?link=").await;
    let r = app.gql_opt(None, CONFIRM, json!({ "t": token })).await;
    assert!(str_at(data(&r), "/confirmVoter/key").starts_with("vk_"));
}

/// On an EMAIL_ALLOWLIST vote, asking for a link for an address off the list is answered
/// exactly as for a listed one, to the byte, and throttled alike: the answer (and when it
/// starts to be RATE_LIMITED) would otherwise tell anyone whether an address is on the
/// organizers' list. The listed mailbox gets its link; the other gets a message saying it
/// is not on the list, no link, and no voter row; the organizers' audit log records the
/// refusal, under the mailbox's hash.
async fn an_address_off_the_allowlist_is_answered_as_a_listed_one(app: App) {
    let s = app.scenario().await;
    let (org, event) = (&s.organizer_a, &s.event_a);
    let tag = unique();
    let listed = format!("listed{tag}@example.org");
    let unlisted = format!("unlisted{tag}@example.org");
    let r = configure(
        &app,
        org,
        event,
        "EMAIL_ALLOWLIST",
        9,
        Duration::hours(1),
        Some(vec![listed.as_str()]),
    )
    .await;
    assert_eq!(data(&r)["configureVoting"]["allowlistSize"], 1, "{r}");

    // Three asks per mailbox and window (`LINKS_PER_ADDRESS`), then RATE_LIMITED: for
    // both addresses, at the same count.
    for ask in 1..=4 {
        let about_listed = app
            .gql_resp(None, REGISTER, json!({ "e": event, "email": listed }))
            .await;
        let about_unlisted = app
            .gql_resp(None, REGISTER, json!({ "e": event, "email": unlisted }))
            .await;
        let (l, u) = (
            about_listed.try_json().expect("JSON"),
            about_unlisted.try_json().expect("JSON"),
        );
        if ask <= 3 {
            assert_eq!(
                (about_listed.status, &about_listed.text),
                (about_unlisted.status, &about_unlisted.text),
                "ask {ask}: the answer tells whether the address is on the list"
            );
            assert_eq!(u, json!({ "data": { "registerVoter": true } }), "ask {ask}");
        } else {
            assert_eq!(about_listed.status, about_unlisted.status, "ask {ask}");
            assert_eq!(error_code(&l).as_deref(), Some("RATE_LIMITED"), "{l}");
            assert_eq!(error_code(&u).as_deref(), Some("RATE_LIMITED"), "{u}");
        }
    }

    // Only the mailboxes learn which they are.
    let to_listed = mail_to(&app, &listed).await;
    let to_unlisted = mail_to(&app, &unlisted).await;
    assert_eq!(
        (to_listed.len(), to_unlisted.len()),
        (3, 3),
        "{to_listed:?} {to_unlisted:?}"
    );
    assert!(to_listed.iter().all(|m| m.contains("/vote?link=vv_")));
    for m in &to_unlisted {
        assert!(!m.contains("/vote?link="), "{m}");
        assert!(m.contains("not among them"), "{m}");
    }

    // One voter (the listed one); the organizers see each refusal, with no address in it.
    let r = app
        .ok(
            Some(org),
            "query($e: String!) { event(slug: $e) { voting { voters } } }",
            json!({ "e": event }),
        )
        .await;
    assert_eq!(r["event"]["voting"]["voters"], 1, "{r}");
    let refused: Vec<Value> = crate::audit::audit_log(&app, org, event)
        .await
        .into_iter()
        .filter(|n| n["action"] == "voter.registration_refused")
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    for n in &refused {
        assert_eq!(n["objectType"], "email", "{n}");
        assert!(!n.to_string().contains(&unlisted), "{n}");
    }
}
