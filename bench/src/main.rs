//! `verdict-bench`: issue 10's table measured in one command against a release `verdict`,
//! on SQLite and PostgreSQL, with the same run's ceilings beside every row.
//!
//! Per backend: a fresh database, two generated events imported with `verdict import`, a
//! site admin (`verdict admin create`, then `logIn`), judge tokens (`verdict token mint`),
//! then `verdict serve` with the per-address rate limit raised, since every request comes
//! from 127.0.0.1. The rows run in the order; one that cannot run says why. Load
//! generator, server and database share the machine, as they did for the numbers.

mod fixtures;
mod load;
mod report;
mod rows;
mod server;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use serde_json::json;

use load::{Api, Timing};
use report::Report;
use server::{Backend, Server, Store};

/// The rows, numbered as in the table; they run in this order, except that calibration,
/// which needs no database, runs once after every backend's rows.
const ROWS: [&str; 10] = [
    "ceiling",
    "gallery",
    "postgraphile",
    "results",
    "fanout",
    "writes",
    "progress",
    "calibration",
    "pages",
    "edge",
];

#[derive(Parser)]
#[command(
    name = "verdict-bench",
    about = "Measure issue 10's table against a release verdict binary"
)]
struct Args {
    /// Which database(s) to measure.
    #[arg(long, value_enum, default_value_t = Which::Both)]
    backend: Which,
    /// Only these rows, by number (1-10) or name (ceiling, gallery, postgraphile, results,
    /// fanout, writes, progress, calibration, pages, edge), comma-separated.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Short windows (1 s warm-up, 3 s measured), 1,000 fan-out subscribers, and only the
    /// smaller calibration.
    #[arg(long)]
    quick: bool,
    /// The verdict binary; defaults to `verdict` beside this one (target/release).
    #[arg(long)]
    verdict: Option<PathBuf>,
    /// Idle `resultsPublished` subscribers in row 5 (default 10,000; 1,000 with --quick).
    #[arg(long)]
    subscribers: Option<usize>,
    /// Keep each backend's working directory (fixtures, signing key, SQLite file, server
    /// logs) and print where it is, to look into a row that was not measured.
    #[arg(long)]
    keep: bool,
    /// A PostgreSQL URL the role may create databases from.
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    postgres: String,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Which {
    Sqlite,
    Postgres,
    Both,
}

impl Args {
    fn backends(&self) -> Vec<Backend> {
        match self.backend {
            Which::Sqlite => vec![Backend::Sqlite],
            Which::Postgres => vec![Backend::Postgres],
            Which::Both => vec![Backend::Sqlite, Backend::Postgres],
        }
    }

    fn timing(&self) -> Timing {
        if self.quick {
            Timing {
                warmup: Duration::from_secs(1),
                window: Duration::from_secs(3),
            }
        } else {
            Timing {
                warmup: Duration::from_secs(2),
                window: Duration::from_secs(10),
            }
        }
    }
}

/// The selected row names; every row when `--only` is empty.
fn selected(only: &[String]) -> Result<Vec<&'static str>, String> {
    if only.is_empty() {
        return Ok(ROWS.to_vec());
    }
    let mut rows = Vec::new();
    for o in only {
        let o = o.trim().to_lowercase();
        let row = match o.parse::<usize>() {
            Ok(n) if (1..=ROWS.len()).contains(&n) => ROWS[n - 1],
            _ => *ROWS
                .iter()
                .find(|r| **r == o)
                .ok_or_else(|| format!("unknown row {o}; rows: 1-10 or {}", ROWS.join(", ")))?,
        };
        rows.push(row);
    }
    Ok(ROWS.iter().copied().filter(|r| rows.contains(r)).collect())
}

fn default_verdict() -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    Ok(me.with_file_name("verdict"))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let rows = match selected(&args.only) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let verdict = match args.verdict.clone().map_or_else(default_verdict, Ok) {
        Ok(v) if v.exists() => v,
        Ok(v) => {
            eprintln!(
                "no verdict binary at {}: build it with `cargo build --release -p verdict` (or pass --verdict PATH)",
                v.display()
            );
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let open_files = server::raise_open_files();
    let timing = args.timing();
    let subscribers = args
        .subscribers
        .unwrap_or(if args.quick { 1000 } else { 10_000 });
    println!(
        "verdict-bench: {} on {} cores; open files {open_files}; warm-up {:?}, window {:?}; rows: {}",
        verdict.display(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        timing.warmup,
        timing.window,
        rows.join(", ")
    );
    let mut report = Report::default();
    let now = chrono::Utc::now();
    let gallery = fixtures::gallery(now);
    let big = fixtures::big(now, 2000, 300, 5);
    let postgraphile = Path::new(env!("CARGO_MANIFEST_DIR")).join("postgraphile");
    for backend in args.backends() {
        let per_backend: Vec<&str> = rows
            .iter()
            .copied()
            .filter(|r| *r != "calibration")
            .collect();
        if per_backend.is_empty() {
            break;
        }
        println!("\n== {} ==", backend.name());
        let store = match Store::create(backend, &args.postgres).await {
            Ok(s) => s,
            Err(e) => {
                for row in &per_backend {
                    report.not_measured(row, backend.name(), &format!("no database: {e}"));
                }
                continue;
            }
        };
        let ctx = Setup {
            verdict: &verdict,
            store: &store,
            gallery: &gallery,
            big: &big,
        };
        if let Err(e) = measure(
            ctx,
            &per_backend,
            timing,
            subscribers,
            &postgraphile,
            &mut report,
        )
        .await
        {
            for row in &per_backend {
                report.not_measured(row, backend.name(), &format!("setup: {e}"));
            }
        }
        if let Err(e) = store.drop_database().await {
            eprintln!("dropping the PostgreSQL database: {e}");
        }
        if args.keep {
            println!("  kept {}", store.dir.keep().display());
        }
    }
    if rows.contains(&"calibration") {
        println!("\n== calibration ==");
        rows::calibration(&verdict, args.quick, &mut report);
    }
    println!("\n{}", report.markdown());
    ExitCode::SUCCESS
}

struct Setup<'a> {
    verdict: &'a Path,
    store: &'a Store,
    gallery: &'a fixtures::Event,
    big: &'a fixtures::Event,
}

/// Imports, creates the credentials, starts the server and runs the backend's rows.
async fn measure(
    s: Setup<'_>,
    rows: &[&str],
    timing: Timing,
    subscribers: usize,
    postgraphile: &Path,
    report: &mut Report,
) -> Result<(), String> {
    let started = std::time::Instant::now();
    for (name, event) in [("gallery", s.gallery), ("big", s.big)] {
        let file = s.store.dir.path().join(format!("{name}.json"));
        std::fs::write(&file, event.fixture.to_string()).map_err(|e| e.to_string())?;
        server::cli(s.verdict, s.store, &["import", &file.to_string_lossy()])?;
    }
    let email = "admin@bench.local";
    let password = server::cli(s.verdict, s.store, &["admin", "create", "--email", email])?;
    let judges = if rows.contains(&"writes") || rows.contains(&"progress") {
        s.big.judge_emails[..=rows::PROBE_JUDGE]
            .iter()
            .map(|e| {
                server::cli(
                    s.verdict,
                    s.store,
                    &["token", "mint", "--email", e, "--name", "bench"],
                )
            })
            .collect::<Result<Vec<_>, _>>()?
    } else {
        vec![]
    };
    let tokens = rows::Tokens::mint(s.verdict, s.store, s.big)?;
    println!(
        "  imported and signed up in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let srv = Server::verdict(s.verdict, s.store, &[]).await?;
    let api = Api::new(format!("{}/graphql", srv.base));
    let d = api
        .gql(
            None,
            "mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { token } }",
            json!({ "e": email, "p": password }),
        )
        .await?;
    let admin = d["logIn"]["token"]
        .as_str()
        .ok_or("logIn returned no token")?
        .to_owned();
    let mut bench = rows::Bench {
        backend: s.store.backend.name(),
        verdict: s.verdict,
        store: s.store,
        server: &srv,
        api,
        timing,
        subscribers,
        admin,
        tokens,
        judges,
        big: s.big,
        report,
        ceiling: Default::default(),
        signed_ceiling: None,
        gallery_64: None,
        gallery_signed_64: None,
        run: None,
        writes_p99: None,
    };
    for row in rows {
        match *row {
            "ceiling" => bench.ceiling().await,
            "gallery" => bench.gallery().await,
            "postgraphile" => bench.postgraphile(postgraphile).await,
            "results" => bench.results().await,
            "fanout" => bench.fanout().await,
            "writes" => bench.writes().await,
            "progress" => bench.progress().await,
            "pages" => bench.pages().await,
            "edge" => bench.edge().await,
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_chosen_by_number_or_name_and_run_in_table_order() {
        let only = |s: &[&str]| selected(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(only(&[]).unwrap().len(), 10);
        assert_eq!(only(&["writes", "1"]).unwrap(), vec!["ceiling", "writes"]);
        assert_eq!(only(&["10", "pages"]).unwrap(), vec!["pages", "edge"]);
        assert!(only(&["11"]).is_err());
        assert!(only(&["nonsense"]).is_err());
    }
}
