//! A PostgreSQL server of the test's own, for tests that stop and restart it: its own data
//! directory, port and socket directory under a temporary directory, never the machine's
//! shared server. [`Cluster`] stops it when dropped, also when the test fails.
//!
//! The server binaries are found in `VERDICT_TEST_PG_BIN`, else the newest
//! `/usr/lib/postgresql/*/bin` (Debian's layout). `initdb` refuses to run as root, so as
//! root (CI) the cluster belongs to the `postgres` user and every command runs as that user
//! through `runuser`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A running (or stopped) private PostgreSQL cluster.
pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    /// Commands run as `postgres` (we are root).
    as_postgres: bool,
}

/// How to stop the server (`pg_ctl stop -m`).
#[derive(Clone, Copy, Debug)]
pub enum Stop {
    /// Every backend is killed at once, no checkpoint: what a crash of the database
    /// server looks like to its clients (recovery runs at the next start).
    Immediate,
    /// Clients are disconnected (`57P01 admin_shutdown`), then a checkpoint: an
    /// administrator's shutdown.
    Fast,
}

impl Cluster {
    /// Creates the cluster (`initdb`) and starts it on a free port. `None` when the server
    /// binaries are not installed and the run is not CI (the test is then skipped, said on
    /// stderr); with `CI=true` their absence fails the test.
    pub async fn start() -> Option<Cluster> {
        let Some(bin) = server_binaries() else {
            let why = "PostgreSQL's server binaries (initdb, pg_ctl) were not found: set \
                       VERDICT_TEST_PG_BIN or install postgresql";
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("{why} (CI=true)");
            }
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "\n*** {why}; the private-cluster test passes WITHOUT RUNNING.\n"
            );
            return None;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let as_postgres = is_root();
        if as_postgres {
            run(
                Command::new("chown").args(["postgres:postgres", &path(dir.path())]),
                "chown the cluster's directory to postgres",
            );
        }
        let port = free_port();
        let cluster = Cluster {
            dir,
            bin,
            port,
            as_postgres,
        };
        let data = path(&cluster.data());
        let initdb = cluster.command("initdb", &["-D", &data, "-A", "trust", "-U", "postgres"]);
        run_blocking(initdb, "initdb").await;
        cluster.start_again().await;
        Some(cluster)
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication).
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts the stopped server again, on the same port, and waits until it accepts
    /// connections (after recovery, when it was stopped immediately).
    pub async fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            self.port,
            path(self.dir.path())
        );
        let log = path(&self.dir.path().join("postgres.log"));
        let data = path(&self.data());
        let start = self.command(
            "pg_ctl",
            &[
                "-D", &data, "-o", &options, "-l", &log, "-w", "-t", "60", "start",
            ],
        );
        if !run_blocking_status(start).await {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            panic!("pg_ctl start failed; the server's log:\n{text}");
        }
    }

    /// Stops the server and waits until it is down.
    pub async fn stop(&self, how: Stop) {
        let mode = match how {
            Stop::Immediate => "immediate",
            Stop::Fast => "fast",
        };
        let data = path(&self.data());
        let stop = self.command(
            "pg_ctl",
            &["-D", &data, "-m", mode, "-w", "-t", "60", "stop"],
        );
        run_blocking(stop, "pg_ctl stop").await;
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn command(&self, program: &str, args: &[&str]) -> Command {
        let program = path(&self.bin.join(program));
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", &program]).args(args);
            c
        } else {
            let mut c = Command::new(program);
            c.args(args);
            c
        }
    }
}

/// Stops the server (immediately: nothing of it is kept) whatever the test's outcome; the
/// directory goes with the `TempDir`.
impl Drop for Cluster {
    fn drop(&mut self) {
        let data = path(&self.data());
        let _ = self
            .command("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

fn server_binaries() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("VERDICT_TEST_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A port nobody listens on now (bound and let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn path(p: &Path) -> String {
    p.to_str().expect("a UTF-8 path").to_string()
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `cmd` off the runtime's threads (pg_ctl waits for the server) and panics with its
/// output when it fails.
async fn run_blocking(mut cmd: Command, what: &'static str) {
    tokio::time::timeout(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(move || run(&mut cmd, what)),
    )
    .await
    .unwrap_or_else(|_| panic!("{what} took more than 120 s"))
    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
}

/// Whether `cmd` succeeded (its output discarded).
async fn run_blocking_status(mut cmd: Command) -> bool {
    tokio::task::spawn_blocking(move || cmd.output().is_ok_and(|o| o.status.success()))
        .await
        .unwrap_or(false)
}
