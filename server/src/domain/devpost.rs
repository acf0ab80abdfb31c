//! Importing a Devpost submissions export (CSV) into an existing event: its projects, one
//! team per project, the team members as participants (accounts without a password, whom
//! `inviteImported` then invites), and table numbers when the export has them.
//!
//! The columns read, matched by header name regardless of case, spacing and order (Devpost
//! writes a custom question's text as its header, and adds columns over time; every other
//! column is ignored):
//!
//! | header | becomes |
//! | --- | --- |
//! | `Project Title` (required) | the title |
//! | `Submission Url` (required) | the project's external id, `devpost-` and the URL's last path segment, which makes a re-import insert nothing twice |
//! | `Project Status` | `Draft` stays a draft; anything else is submitted |
//! | `Tagline` | the tagline (its first line, at most 200 characters) |
//! | `About The Project` | the description, and its first paragraph the summary |
//! | `"Try it out" Links` | the repository: the first link to a code host, else the first link |
//! | `Video Demo Link` | the demo link |
//! | `Built With` | tags (comma-separated, at most 10) |
//! | any header containing `Table Number` | the expo table |
//! | `Submitter First Name`, `Submitter Last Name`, `Submitter Email` | a team member |
//! | `Team Member N First Name`, `... Last Name`, `... Email` | team members |
//!
//! The headers are those of Devpost's "Export submissions" CSV as other judging tools read
//! them (Jury, Gavel importers); `Tagline` and `Team Member N ...` are read when present.
//!
//! A row that cannot be imported (no title, no submission link, a bad address, a person
//! already on another team, a table taken) is left out and named by its line in the file,
//! so an organizer fixes it in the preview (`dryRun`) and imports again; the other rows go
//! in. The import itself is the fixture importer's ([`super::import::import`]): one
//! transaction, one `event.imported` audit entry, nothing existing overwritten.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use entity::{event, membership, project, team, team_member, track, user};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::import::{self, Fixture, FxEvent, FxPerson, FxProject, FxTeam, FxTrack, ImportCounts};
use super::write::{Organizer, Write};
use super::{Role, tables, validate};
use crate::error::{AppError, AppResult};

/// The most rows one import reads.
pub const MAX_ROWS: usize = 2_000;

/// A person on a Devpost team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub email: String,
    pub name: String,
}

/// One submission read from the file.
#[derive(Debug, Clone)]
pub struct Row {
    /// Where the row starts in the file (the header is line 1).
    pub line: u64,
    pub external_id: String,
    pub title: String,
    pub tagline: String,
    pub summary: String,
    pub description: String,
    pub repo_url: String,
    pub demo_url: String,
    pub tags: Vec<String>,
    pub draft: bool,
    pub table: Option<String>,
    pub members: Vec<Member>,
}

/// A row left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: u64,
    pub message: String,
}

/// A file read: the rows to import and the rows left out.
#[derive(Debug, Default)]
pub struct Parsed {
    pub rows: Vec<Row>,
    pub problems: Vec<Problem>,
}

fn norm(h: &str) -> String {
    h.trim_start_matches('\u{feff}')
        .trim()
        .trim_matches('"')
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Column positions by what they hold.
struct Columns {
    title: usize,
    url: usize,
    status: Option<usize>,
    tagline: Option<usize>,
    about: Option<usize>,
    try_it: Option<usize>,
    video: Option<usize>,
    built_with: Option<usize>,
    table: Option<usize>,
    /// (label for messages, first name, last name, email) per person column group.
    people: Vec<(String, Option<usize>, Option<usize>, usize)>,
}

impl Columns {
    fn of(headers: &[String]) -> AppResult<Columns> {
        let h: Vec<String> = headers.iter().map(|h| norm(h)).collect();
        let find = |name: &str| h.iter().position(|x| x == name);
        let need = |name: &str, shown: &str| {
            find(name).ok_or_else(|| {
                AppError::bad_input(
                    "csv",
                    format!(
                        "line 1: the header has no {shown:?} column (is this a Devpost submissions export?)"
                    ),
                )
            })
        };
        let mut people = vec![];
        if let Some(email) = find("submitter email") {
            people.push((
                "Submitter".to_owned(),
                find("submitter first name"),
                find("submitter last name"),
                email,
            ));
        }
        for n in 1..=20 {
            if let Some(email) = find(&format!("team member {n} email")) {
                people.push((
                    format!("Team Member {n}"),
                    find(&format!("team member {n} first name")),
                    find(&format!("team member {n} last name")),
                    email,
                ));
            }
        }
        Ok(Columns {
            title: need("project title", "Project Title")?,
            url: need("submission url", "Submission Url")?,
            status: find("project status"),
            tagline: find("tagline"),
            about: find("about the project"),
            try_it: h.iter().position(|x| x.contains("try it out")),
            video: find("video demo link"),
            built_with: find("built with"),
            table: h.iter().position(|x| x.contains("table number")),
            people,
        })
    }
}

/// The project's external id from its submission URL: `devpost-` and the last path
/// segment, reduced to the characters external ids allow.
fn external_id(url: &str) -> Option<String> {
    let u = url::Url::parse(url.trim()).ok()?;
    if !matches!(u.scheme(), "http" | "https") {
        return None;
    }
    let seg = u.path_segments()?.rev().find(|s| !s.is_empty())?;
    let slug: String = seg
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .take(56)
        .collect();
    (!slug.is_empty()).then(|| format!("devpost-{slug}"))
}

fn first_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// Reads a Devpost export. Refuses the whole file (BAD_USER_INPUT on `csv`) only when it is
/// not such a file: unreadable CSV, no `Project Title` or `Submission Url` column, or more
/// than [`MAX_ROWS`] rows. Every other fault leaves its row out as a [`Problem`].
pub fn parse(text: &str) -> AppResult<Parsed> {
    let text = text.trim_start_matches('\u{feff}');
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(text.as_bytes());
    let bad = |e: csv::Error| {
        let line = e.position().map(|p| p.line()).unwrap_or(1);
        AppError::bad_input("csv", format!("line {line}: not readable as CSV ({e})"))
    };
    let headers: Vec<String> = rdr
        .headers()
        .map_err(bad)?
        .iter()
        .map(str::to_owned)
        .collect();
    let cols = Columns::of(&headers)?;
    let mut out = Parsed::default();
    let mut ids: HashMap<String, u64> = HashMap::new();
    let mut people: HashMap<String, u64> = HashMap::new();
    let mut tables_seen: HashMap<String, u64> = HashMap::new();
    for (n, rec) in rdr.records().enumerate() {
        let rec = rec.map_err(bad)?;
        if n >= MAX_ROWS {
            return Err(AppError::bad_input(
                "csv",
                format!("more than {MAX_ROWS} rows: import the file in parts"),
            ));
        }
        let line = rec.position().map(|p| p.line()).unwrap_or(n as u64 + 2);
        let cell = |i: Option<usize>| i.and_then(|i| rec.get(i)).unwrap_or("").trim().to_owned();
        if rec.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        let problem = |message: String| Problem { line, message };
        let title = cell(Some(cols.title));
        let title = match validate::name("Project Title", &title, validate::TITLE_MAX) {
            Ok(t) => t,
            Err(e) => {
                out.problems
                    .push(problem(format!("Project Title {title:?}: {}", message(&e))));
                continue;
            }
        };
        let url = cell(Some(cols.url));
        let Some(external_id) = external_id(&url) else {
            out.problems.push(problem(format!(
                "Submission Url {url:?} is not a link to a submission"
            )));
            continue;
        };
        if let Some(first) = ids.get(&external_id) {
            out.problems.push(problem(format!(
                "Submission Url {url:?} is the submission of line {first} again"
            )));
            continue;
        }
        let table = match tables::parse("Table Number", &cell(cols.table)) {
            Ok(t) => t,
            Err(e) => {
                out.problems
                    .push(problem(format!("Table Number: {}", message(&e))));
                continue;
            }
        };
        if let Some(t) = &table
            && let Some(first) = tables_seen.get(&t.to_lowercase())
        {
            out.problems.push(problem(format!(
                "Table Number {t:?} is the table of line {first} too"
            )));
            continue;
        }
        let mut members: Vec<Member> = vec![];
        let mut fault = None;
        for (label, first, last, email) in &cols.people {
            let (first, last, raw) = (cell(*first), cell(*last), cell(Some(*email)));
            if raw.is_empty() {
                if !(first.is_empty() && last.is_empty()) {
                    fault = Some(format!("{label} {first} {last} has no email address"));
                    break;
                }
                continue;
            }
            let Ok(email) = validate::email("email", &raw) else {
                fault = Some(format!(
                    "{label} Email {raw:?} is not a valid email address"
                ));
                break;
            };
            if members.iter().any(|m| m.email == email) {
                continue;
            }
            if let Some(other) = people.get(&email) {
                fault = Some(format!("{email} is already on the team of line {other}"));
                break;
            }
            let name = format!("{first} {last}").trim().to_owned();
            let name = if name.is_empty() {
                email.split('@').next().unwrap_or("").to_owned()
            } else {
                first_chars(&name, 100)
            };
            members.push(Member { email, name });
        }
        if let Some(f) = fault {
            out.problems.push(problem(f));
            continue;
        }
        let about = cell(cols.about);
        let summary = about.split("\n\n").next().unwrap_or("").trim();
        let links: Vec<String> = cell(cols.try_it)
            .split([',', ' ', '\n'])
            .map(str::trim)
            .filter(|l| validate::url("repoUrl", l).is_ok_and(|u| !u.is_empty()))
            .map(str::to_owned)
            .collect();
        let code_hosts = ["github.com", "gitlab.com", "bitbucket.org", "codeberg.org"];
        let repo = links
            .iter()
            .find(|l| code_hosts.iter().any(|h| l.contains(h)))
            .or(links.first())
            .cloned()
            .unwrap_or_default();
        let demo = validate::url("demoUrl", &cell(cols.video)).unwrap_or_default();
        let mut tags: Vec<String> = vec![];
        for t in cell(cols.built_with).split(',') {
            let t = first_chars(&t.trim().to_lowercase(), validate::TAG_MAX);
            if !t.is_empty() && !tags.contains(&t) && tags.len() < validate::TAGS_MAX {
                tags.push(t);
            }
        }
        let tagline = cell(cols.tagline);
        let tagline = first_chars(tagline.lines().next().unwrap_or(""), validate::TAGLINE_MAX);
        let tagline =
            validate::line("tagline", &tagline, validate::TAGLINE_MAX).unwrap_or_default();
        let row = Row {
            line,
            external_id: external_id.clone(),
            title,
            tagline,
            summary: first_chars(summary, validate::SUMMARY_MAX),
            description: first_chars(&about, validate::DESCRIPTION_MAX),
            repo_url: repo,
            demo_url: demo,
            tags,
            draft: cell(cols.status).eq_ignore_ascii_case("draft"),
            table,
            members,
        };
        ids.insert(external_id, line);
        if let Some(t) = &row.table {
            tables_seen.insert(t.to_lowercase(), line);
        }
        for m in &row.members {
            people.insert(m.email.clone(), line);
        }
        out.rows.push(row);
    }
    Ok(out)
}

/// The sentence of an error, without its code.
fn message(e: &AppError) -> String {
    match e {
        AppError::BadInput { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// One row of a preview or an import.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub line: u64,
    pub title: String,
    pub table: Option<String>,
    pub members: Vec<String>,
    /// False when the project was imported before (it is left as it is).
    pub new: bool,
}

/// What an import did (or, as a dry run, would do).
#[derive(Debug, Default)]
pub struct Report {
    pub counts: ImportCounts,
    pub rows: Vec<Outcome>,
    pub problems: Vec<Problem>,
}

impl Report {
    /// What the command line prints: one line of counts, then each row left out.
    pub fn summary(&self, dry_run: bool) -> String {
        let new = self.rows.iter().filter(|r| r.new).count();
        let mut out = format!(
            "{} {} projects, {} teams, {} people ({} rows read, {} imported before, {} left out)\n",
            if dry_run { "would import" } else { "imported" },
            self.counts.projects,
            self.counts.teams,
            self.counts.people,
            self.rows.len() + self.problems.len(),
            self.rows.len() - new,
            self.problems.len()
        );
        for p in &self.problems {
            out.push_str(&format!("line {}: {}\n", p.line, p.message));
        }
        out
    }
}

/// Imports the Devpost export `text` into `e` (its organizers), inside `txn`, through the
/// fixture importer: one `event.imported` audit entry. The caller commits it, or rolls it
/// back for a preview. Rows that clash with what the event holds (a person on another team
/// or judging here, a table another project has) are left out as problems, like the rows
/// [`parse`] leaves out.
pub async fn import_devpost(
    w: &Write,
    _: Organizer<'_>,
    e: &event::Model,
    text: &str,
) -> AppResult<Report> {
    import_as(w, e, text).await
}

/// [`import_devpost`] without the organizer check, audited as the write's actor (none
/// from the command line, as for `verdict import`).
pub async fn import_as(w: &Write, e: &event::Model, text: &str) -> AppResult<Report> {
    let (txn, now) = (w.txn(), w.now());
    let parsed = parse(text)?;
    let mut problems = parsed.problems;

    let projects = project::Entity::find()
        .filter(project::Column::EventId.eq(e.id))
        .all(txn)
        .await?;
    let existing: HashSet<&str> = projects.iter().map(|p| p.external_id.as_str()).collect();
    let tables_taken: HashMap<String, &project::Model> = projects
        .iter()
        .filter_map(|p| Some((p.expo_table.as_deref()?.to_lowercase(), p)))
        .collect();
    let emails: Vec<String> = parsed
        .rows
        .iter()
        .flat_map(|r| r.members.iter().map(|m| m.email.clone()))
        .collect();
    let users: HashMap<i64, String> = user::Entity::find()
        .filter(user::Column::Email.is_in(emails))
        .all(txn)
        .await?
        .into_iter()
        .map(|u| (u.id, u.email))
        .collect();
    let teams: HashMap<i64, String> = team::Entity::find()
        .filter(team::Column::EventId.eq(e.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|t| (t.id, t.external_id))
        .collect();
    // Each known person's team here (by its external id), and who judges here.
    let on_team: HashMap<&str, &str> = team_member::Entity::find()
        .filter(team_member::Column::EventId.eq(e.id))
        .all(txn)
        .await?
        .iter()
        .filter_map(|m| {
            Some((
                users.get(&m.user_id)?.as_str(),
                teams.get(&m.team_id)?.as_str(),
            ))
        })
        .collect();
    let judges: HashSet<&str> = membership::Entity::find()
        .filter(membership::Column::EventId.eq(e.id))
        .filter(membership::Column::Role.eq(Role::Judge))
        .all(txn)
        .await?
        .iter()
        .filter_map(|m| users.get(&m.user_id).map(String::as_str))
        .collect();

    let mut rows = vec![];
    let mut report_rows = vec![];
    for r in parsed.rows {
        let team_id = format!("team-{}", r.external_id);
        let new = !existing.contains(r.external_id.as_str());
        let clash = r.members.iter().find_map(|m| {
            if judges.contains(m.email.as_str()) {
                return Some(format!(
                    "{} judges this event and cannot be on a team",
                    m.email
                ));
            }
            match on_team.get(m.email.as_str()) {
                Some(t) if *t != team_id => Some(format!(
                    "{} is already on another team in this event",
                    m.email
                )),
                _ => None,
            }
        });
        let table_clash = r.table.as_ref().and_then(|t| {
            let holder = tables_taken.get(&t.to_lowercase())?;
            (holder.external_id != r.external_id).then(|| {
                format!(
                    "Table Number {t:?} is already taken by the project {:?}",
                    holder.title
                )
            })
        });
        let too_many = (r.members.len() > e.max_team_size.max(0) as usize).then(|| {
            format!(
                "{} team members, more than this event's teams may have ({})",
                r.members.len(),
                e.max_team_size
            )
        });
        if new && let Some(message) = too_many.or(clash).or(table_clash) {
            problems.push(Problem {
                line: r.line,
                message,
            });
            continue;
        }
        report_rows.push(Outcome {
            line: r.line,
            title: r.title.clone(),
            table: r.table.clone(),
            members: r.members.iter().map(|m| m.email.clone()).collect(),
            new,
        });
        if new {
            rows.push(r);
        }
    }
    problems.sort_by_key(|p| p.line);

    // Always through the importer, new rows or not: the import is audited either way.
    let track = track::Entity::find()
        .filter(track::Column::EventId.eq(e.id))
        .order_by_asc(track::Column::Id)
        .one(txn)
        .await?;
    let mut fixture = fixture(e, track, &rows, now);
    if rows.is_empty() {
        // Nothing new: no track to make either.
        fixture.tracks.clear();
    }
    import::check(&fixture)?;
    let counts = import::import(w, &fixture).await?.1;
    Ok(Report {
        counts,
        rows: report_rows,
        problems,
    })
}

/// The rows as a `verdict.event.v1` fixture of the existing event `e`, entered in its first
/// track (or a new `General` track when it has none).
fn fixture(
    e: &event::Model,
    track: Option<track::Model>,
    rows: &[Row],
    now: DateTime<Utc>,
) -> Fixture {
    let track = track.map_or_else(
        || FxTrack {
            external_id: "general".to_owned(),
            name: "General".to_owned(),
        },
        |t| FxTrack {
            external_id: t.external_id,
            name: t.name,
        },
    );
    let mut people = vec![];
    let mut teams = vec![];
    let mut projects = vec![];
    for r in rows {
        let team_id = format!("team-{}", r.external_id);
        for m in &r.members {
            people.push(FxPerson {
                external_id: m.email.clone(),
                email: m.email.clone(),
                display_name: m.name.clone(),
            });
        }
        teams.push(FxTeam {
            external_id: team_id.clone(),
            name: r.title.clone(),
            members: r.members.iter().map(|m| m.email.clone()).collect(),
        });
        projects.push(FxProject {
            external_id: r.external_id.clone(),
            team: team_id,
            track: track.external_id.clone(),
            title: r.title.clone(),
            tagline: r.tagline.clone(),
            summary: r.summary.clone(),
            description: r.description.clone(),
            repo_url: r.repo_url.clone(),
            demo_url: r.demo_url.clone(),
            tags: r.tags.clone(),
            status: if r.draft { "draft" } else { "submitted" }.to_owned(),
            submitted_at: (!r.draft).then_some(now),
            table: r.table.clone(),
        });
    }
    Fixture {
        format: import::FORMAT.to_owned(),
        event: FxEvent {
            external_id: e.external_id.clone(),
            slug: e.slug.clone(),
            name: e.name.clone(),
            submissions_open: e.submissions_open,
            submissions_close: e.submissions_close,
            judging_open: e.judging_open,
            judging_close: e.judging_close,
            voting_open: e.voting_open,
            voting_close: e.voting_close,
            reviews_per_project: e.reviews_per_project,
            max_team_size: e.max_team_size,
            time_zone: Some(e.time_zone.clone()),
        },
        tracks: vec![track],
        people,
        organizers: vec![],
        judges: vec![],
        teams,
        projects,
        criteria: vec![],
        reviews: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "Project Title,Submission Url,Project Status,Judging Status,Highest Step Completed,Project Created At,About The Project,\"\"\"Try it out\"\" Links\",Video Demo Link,Opt-In Prizes,Built With,Table Number,Submitter First Name,Submitter Last Name,Submitter Email,Team Member 1 First Name,Team Member 1 Last Name,Team Member 1 Email";

    #[test]
    fn reads_quoted_fields_a_bom_and_ignores_unknown_columns() {
        let csv = format!(
            "\u{feff}{HEADER}\n\
             \"Rover, the robot\",https://devpost.com/software/rover,Submitted,,Submit,2026-01-01,\"Drives.\n\nIt \"\"really\"\" drives.\",\"https://rover.example.org https://github.com/a/rover\",https://youtu.be/x,Best Hack,\"Rust, WebGL\",12,Ada,Lovelace,ADA@example.org,Bob,,bob@example.org\n"
        );
        let p = parse(&csv).expect("parses");
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        let r = &p.rows[0];
        assert_eq!(r.line, 2);
        assert_eq!(r.title, "Rover, the robot");
        assert_eq!(r.external_id, "devpost-rover");
        assert_eq!(r.summary, "Drives.");
        assert!(r.description.contains("\"really\""));
        assert_eq!(r.repo_url, "https://github.com/a/rover");
        assert_eq!(r.demo_url, "https://youtu.be/x");
        assert_eq!(r.tags, vec!["rust", "webgl"]);
        assert_eq!(r.table.as_deref(), Some("12"));
        assert!(!r.draft);
        assert_eq!(
            r.members,
            vec![
                Member {
                    email: "ada@example.org".into(),
                    name: "Ada Lovelace".into()
                },
                Member {
                    email: "bob@example.org".into(),
                    name: "Bob".into()
                },
            ]
        );
    }

    #[test]
    fn a_missing_required_column_refuses_the_file_naming_it() {
        let e = parse("Title,Submission Url\nx,https://devpost.com/software/x\n").unwrap_err();
        assert!(e.to_string().contains("Project Title"), "{e}");
        let e = parse("Project Title\nx\n").unwrap_err();
        assert!(e.to_string().contains("Submission Url"), "{e}");
    }

    #[test]
    fn a_bad_row_is_named_by_its_line_and_the_others_stay() {
        let csv = "Project Title,Submission Url,Team Member 1 First Name,Team Member 1 Last Name,Team Member 1 Email,Table Number\n\
                   Good,https://devpost.com/software/good,Ann,A,ann@example.org,1\n\
                   \"Two\nlines\",https://devpost.com/software/bad,Bo,B,bo@,2\n\
                   ,https://devpost.com/software/untitled,,,,\n\
                   Again,https://devpost.com/software/good,,,,\n\
                   Same table,https://devpost.com/software/other,,,,1\n\
                   Not a link,devpost,,,,\n\
                   Ann again,https://devpost.com/software/ann2,Ann,A,ANN@example.org,\n";
        let p = parse(csv).expect("parses");
        assert_eq!(p.rows.len(), 1);
        assert_eq!(p.rows[0].title, "Good");
        let lines: Vec<u64> = p.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![3, 5, 6, 7, 8, 9], "{:?}", p.problems);
        // The bad address is named, with its column, on the line its row starts.
        assert!(
            p.problems[0].message.contains("\"bo@\""),
            "{:?}",
            p.problems[0]
        );
        assert!(p.problems[0].message.contains("Team Member 1 Email"));
        assert!(
            p.problems[2].message.contains("line 2"),
            "{:?}",
            p.problems[2]
        );
        assert!(
            p.problems[3].message.contains("line 2"),
            "{:?}",
            p.problems[3]
        );
        assert!(
            p.problems[5].message.contains("line 2"),
            "{:?}",
            p.problems[5]
        );
    }

    #[test]
    fn drafts_stay_drafts_and_short_rows_read_as_empty() {
        let csv = "Project Title,Submission Url,Project Status,Built With\n\
                   Draft one,https://devpost.com/software/d1/,Draft\n";
        let p = parse(csv).expect("parses");
        assert!(p.problems.is_empty(), "{:?}", p.problems);
        assert!(p.rows[0].draft);
        assert_eq!(p.rows[0].external_id, "devpost-d1");
        assert!(p.rows[0].tags.is_empty());
    }
}
