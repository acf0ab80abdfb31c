//! The shared setups: a site administrator, an event with its windows open for
//! submissions, roles, tracks, teams and projects, and the standard two-event
//! [`Scenario`] with the six callers of the authorization matrix.

use chrono::Utc;
use serde_json::json;

use super::{ADMIN_EMAIL, App, PASSWORD, op, rfc3339, str_at, unique};

impl App {
    /// Create (or promote) a site administrator with the CLI and log in as them.
    pub async fn site_admin(&self) -> String {
        self.site_admin_as(ADMIN_EMAIL).await.0
    }

    /// A personal API token for `email` from the command line (`token mint`): how tests act
    /// as an imported person, who has no password.
    pub async fn mint_token(&self, email: &str) -> String {
        let out = self
            .cli(&["token", "mint", "--email", email, "--name", "e2e"])
            .await;
        assert!(out.success(), "token mint: {out:?}");
        out.stdout.trim().to_string()
    }

    /// `admin create` then log in; returns (session token, generated password).
    pub async fn site_admin_as(&self, email: &str) -> (String, String) {
        let out = self.cli(&["admin", "create", "--email", email]).await;
        assert!(out.success(), "admin create failed: {out:?}");
        let password = out
            .stdout
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .expect("admin create printed no password")
            .to_string();
        (self.log_in(email, &password).await, password)
    }

    /// Create an event as `admin` with submissions open now (opened a day ago, closing
    /// in a day), judging afterwards, and registration open to anyone signed in. Returns
    /// the event id.
    pub async fn create_event(&self, admin: &str, slug: &str, max_team_size: i64) -> String {
        let now = Utc::now();
        let d = self
            .ok(
                Some(admin),
                op("CreateEvent"),
                json!({ "input": {
                    "slug": slug,
                    "name": format!("Event {slug}"),
                    "externalId": format!("evt_{}", slug.replace('-', "_")),
                    "submissionsOpen": rfc3339(now - chrono::Duration::days(1)),
                    "submissionsClose": rfc3339(now + chrono::Duration::days(1)),
                    "judgingOpen": rfc3339(now + chrono::Duration::days(2)),
                    "judgingClose": rfc3339(now + chrono::Duration::days(3)),
                    "reviewsPerProject": 3,
                    "maxTeamSize": max_team_size,
                    "registration": "OPEN",
                }}),
            )
            .await;
        str_at(&d, "/createEvent/id")
    }

    /// As `organizer`, moves `event`'s submission window into the past: opened two days
    /// ago, closed an hour ago.
    pub async fn close_submissions(&self, organizer: &str, event: &str) {
        let now = Utc::now();
        self.ok(
            Some(organizer),
            op("UpdateEvent"),
            json!({ "event": event, "input": {
                "submissionsOpen": rfc3339(now - chrono::Duration::days(2)),
                "submissionsClose": rfc3339(now - chrono::Duration::hours(1)),
            }}),
        )
        .await;
    }

    /// Give `email` a role in `event`; returns the membership id.
    pub async fn grant(&self, by: &str, event: &str, email: &str, role: &str) -> String {
        let d = self
            .ok(
                Some(by),
                op("GrantRole"),
                json!({ "event": event, "email": email, "role": role }),
            )
            .await;
        str_at(&d, "/grantRole/id")
    }

    pub async fn create_track(&self, by: &str, event: &str, name: &str) -> String {
        let d = self
            .ok(
                Some(by),
                op("CreateTrack"),
                json!({ "event": event, "name": name }),
            )
            .await;
        str_at(&d, "/createTrack/id")
    }

    pub async fn register(&self, token: &str, event: &str) -> String {
        let d = self
            .ok(
                Some(token),
                op("RegisterForEvent"),
                json!({ "event": event }),
            )
            .await;
        str_at(&d, "/registerForEvent/id")
    }

    /// Returns (team id, invite code).
    pub async fn create_team(&self, token: &str, event: &str, name: &str) -> (String, String) {
        let d = self
            .ok(
                Some(token),
                op("CreateTeam"),
                json!({ "event": event, "name": name }),
            )
            .await;
        (
            str_at(&d, "/createTeam/id"),
            str_at(&d, "/createTeam/inviteCode"),
        )
    }

    pub async fn create_project(
        &self,
        token: &str,
        event: &str,
        title: &str,
        track: &str,
    ) -> String {
        let d = self
            .ok(
                Some(token),
                op("CreateProject"),
                json!({ "event": event, "input": { "title": title, "track": track } }),
            )
            .await;
        assert_eq!(
            d["createProject"]["status"], "DRAFT",
            "a new project is a draft"
        );
        str_at(&d, "/createProject/id")
    }

    pub async fn submit_project(&self, token: &str, id: &str) {
        let d = self
            .ok(Some(token), op("SubmitProject"), json!({ "id": id }))
            .await;
        assert_eq!(d["submitProject"]["status"], "SUBMITTED");
    }

    /// The number of audit events of an event, as its organizer sees it.
    pub async fn audit_count(&self, organizer: &str, event: &str) -> i64 {
        let d = self
            .ok(
                Some(organizer),
                op("EventAuditCount"),
                json!({ "event": event }),
            )
            .await;
        d["event"]["auditLog"]["totalCount"]
            .as_i64()
            .unwrap_or_else(|| panic!("no auditLog.totalCount: {d}"))
    }

    /// Build the standard two-event scenario used by the authorization tests.
    pub async fn scenario(&self) -> Scenario {
        let (admin, admin_password) = self.site_admin_as(ADMIN_EMAIL).await;
        let tag = unique();
        let event_a = format!("event-a-{tag}");
        let event_b = format!("event-b-{tag}");
        let (event_a_id, event_b_id) = tokio::join!(
            self.create_event(&admin, &event_a, 4),
            self.create_event(&admin, &event_b, 4)
        );

        let emails = Emails {
            organizer_a: format!("org-a-{tag}@example.org"),
            organizer_b: format!("org-b-{tag}@example.org"),
            judge_a: format!("judge-a-{tag}@example.org"),
            participant_a: format!("participant-a-{tag}@example.org"),
        };
        let (oa, ob, ja, pa) = tokio::join!(
            self.sign_up_full(&emails.organizer_a),
            self.sign_up_full(&emails.organizer_b),
            self.sign_up_full(&emails.judge_a),
            self.sign_up_full(&emails.participant_a),
        );
        self.grant(&admin, &event_a, &emails.organizer_a, "ORGANIZER")
            .await;
        self.grant(&admin, &event_b, &emails.organizer_b, "ORGANIZER")
            .await;
        self.grant(&oa.0, &event_a, &emails.judge_a, "JUDGE").await;
        let track_a = self.create_track(&oa.0, &event_a, "Track A1").await;
        let track_b = self.create_track(&ob.0, &event_b, "Track B1").await;
        self.register(&pa.0, &event_a).await;
        let (team_a, invite_code) = self.create_team(&pa.0, &event_a, "Team A").await;
        let draft = self
            .create_project(&pa.0, &event_a, "Draft project", &track_a)
            .await;
        let submitted = self
            .create_project(&pa.0, &event_a, "Submitted project", &track_a)
            .await;
        self.submit_project(&pa.0, &submitted).await;

        Scenario {
            admin,
            admin_password,
            organizer_a: oa.0,
            organizer_b: ob.0,
            judge_a: ja.0,
            participant_a: pa.0,
            organizer_a_id: oa.1,
            organizer_b_id: ob.1,
            judge_a_id: ja.1,
            participant_a_id: pa.1,
            emails,
            event_a,
            event_b,
            event_a_id,
            event_b_id,
            track_a,
            track_b,
            team_a,
            invite_code,
            draft,
            submitted,
        }
    }
}

/// Tokens and ids of the standard scenario: event A and B; an organizer of each, a judge
/// of A, a participant of A with a team, a draft and a submitted project.
pub struct Scenario {
    pub admin: String,
    pub admin_password: String,
    pub organizer_a: String,
    pub organizer_b: String,
    pub judge_a: String,
    pub participant_a: String,
    pub organizer_a_id: String,
    pub organizer_b_id: String,
    pub judge_a_id: String,
    pub participant_a_id: String,
    pub emails: Emails,
    pub event_a: String,
    pub event_b: String,
    pub event_a_id: String,
    pub event_b_id: String,
    pub track_a: String,
    pub track_b: String,
    pub team_a: String,
    pub invite_code: String,
    pub draft: String,
    pub submitted: String,
}

pub struct Emails {
    pub organizer_a: String,
    pub organizer_b: String,
    pub judge_a: String,
    pub participant_a: String,
}

/// The six callers of the authorization matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    Anonymous,
    Participant,
    Judge,
    OrganizerA,
    OrganizerB,
    SiteAdmin,
}

pub const CALLERS: [Caller; 6] = [
    Caller::Anonymous,
    Caller::Participant,
    Caller::Judge,
    Caller::OrganizerA,
    Caller::OrganizerB,
    Caller::SiteAdmin,
];

impl Scenario {
    pub fn token(&self, c: Caller) -> Option<&str> {
        match c {
            Caller::Anonymous => None,
            Caller::Participant => Some(&self.participant_a),
            Caller::Judge => Some(&self.judge_a),
            Caller::OrganizerA => Some(&self.organizer_a),
            Caller::OrganizerB => Some(&self.organizer_b),
            Caller::SiteAdmin => Some(&self.admin),
        }
    }

    /// The caller's email and password (to open another session).
    pub fn credentials(&self, c: Caller) -> Option<(&str, &str)> {
        match c {
            Caller::Anonymous => None,
            Caller::Participant => Some((&self.emails.participant_a, PASSWORD)),
            Caller::Judge => Some((&self.emails.judge_a, PASSWORD)),
            Caller::OrganizerA => Some((&self.emails.organizer_a, PASSWORD)),
            Caller::OrganizerB => Some((&self.emails.organizer_b, PASSWORD)),
            Caller::SiteAdmin => Some((ADMIN_EMAIL, &self.admin_password)),
        }
    }
}
