//! The processes under test: a fresh database per backend, the `verdict` CLI, `verdict
//! serve`, PostGraphile, and what /proc says about a process (CPU time, resident set).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use sea_orm::{ConnectionTrait, Database};

/// Which database `verdict` runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// A fresh database and the directory beside it (signing key, fixtures, logs). A
/// PostgreSQL database is dropped by [`Store::drop_database`].
pub struct Store {
    pub backend: Backend,
    pub url: String,
    pub dir: tempfile::TempDir,
    postgres: Option<(String, String)>,
}

impl Store {
    /// SQLite: a file in a temporary directory. PostgreSQL: `verdict_bench_<pid>` on the
    /// server of `postgres_base` (a URL naming any database the role may connect to).
    pub async fn create(backend: Backend, postgres_base: &str) -> Result<Store, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        match backend {
            Backend::Sqlite => Ok(Store {
                backend,
                url: format!("sqlite://{}/verdict.db?mode=rwc", dir.path().display()),
                dir,
                postgres: None,
            }),
            Backend::Postgres => {
                let name = format!("verdict_bench_{}", std::process::id());
                let admin = Database::connect(postgres_base)
                    .await
                    .map_err(|e| format!("PostgreSQL at {postgres_base}: {e}"))?;
                admin
                    .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}"))
                    .await
                    .map_err(|e| e.to_string())?;
                admin
                    .execute_unprepared(&format!("CREATE DATABASE {name}"))
                    .await
                    .map_err(|e| e.to_string())?;
                let url = replace_database(postgres_base, &name)?;
                Ok(Store {
                    backend,
                    url,
                    dir,
                    postgres: Some((postgres_base.to_owned(), name)),
                })
            }
        }
    }

    /// Drops the PostgreSQL database (nothing to do for SQLite: the directory goes with
    /// the value). Every process using it must have stopped.
    pub async fn drop_database(&self) -> Result<(), String> {
        let Some((base, name)) = &self.postgres else {
            return Ok(());
        };
        let admin = Database::connect(base).await.map_err(|e| e.to_string())?;
        admin
            .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    pub fn key_file(&self) -> PathBuf {
        self.dir.path().join("verdict-signing.key")
    }
}

/// `postgres://u@h:p/db?x` with `db` replaced by `name`.
fn replace_database(url: &str, name: &str) -> Result<String, String> {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_end = base
        .find("://")
        .map(|i| i + 3)
        .ok_or_else(|| format!("not a URL: {url}"))?;
    let root = match base[authority_end..].find('/') {
        Some(i) => &base[..authority_end + i],
        None => base,
    };
    Ok(match query {
        Some(q) => format!("{root}/{name}?{q}"),
        None => format!("{root}/{name}"),
    })
}

/// Runs a `verdict` subcommand on the store and returns its standard output.
pub fn cli(verdict: &Path, store: &Store, args: &[&str]) -> Result<String, String> {
    let out = Command::new(verdict)
        .args(args)
        .env("VERDICT_DATABASE_URL", &store.url)
        .env("VERDICT_KEY_FILE", store.key_file())
        .env("RUST_LOG", "warn")
        .output()
        .map_err(|e| format!("{}: {e}", verdict.display()))?;
    if !out.status.success() {
        return Err(format!(
            "verdict {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// A running server process; killed when dropped.
pub struct Server {
    child: Child,
    pub proc: Proc,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// `verdict serve` on a free port with the per-address rate limit out of the way (all
    /// the load comes from 127.0.0.1), its log in the store's directory, with `env` added
    /// to what it inherits (`RUST_LOG` among them).
    pub async fn verdict(
        verdict: &Path,
        store: &Store,
        env: &[(&str, &str)],
    ) -> Result<Server, String> {
        let log_path = store.dir.path().join("serve.log");
        // Appended: a second server on the same store (rows 5 and 10) keeps the first's log.
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| e.to_string())?;
        let mut child = Command::new(verdict)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args([
                "--rate-limit-per-second",
                "1000000000",
                "--rate-limit-burst",
                "1000000000",
            ])
            .env("VERDICT_DATABASE_URL", &store.url)
            .env("VERDICT_KEY_FILE", store.key_file())
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("{}: {e}", verdict.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        // A thread reads stdout for the chosen address, then keeps draining it so that the
        // server never blocks on a full pipe.
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in
                std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok)
            {
                if let Some(addr) = line.split("verdict listening on ").nth(1)
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(addr.trim().to_owned());
                }
            }
        });
        let mut server = Server {
            proc: Proc(child.id()),
            child,
            base: String::new(),
        };
        match tokio::time::timeout(Duration::from_secs(120), rx).await {
            Ok(Ok(base)) => {
                server.base = base;
                Ok(server)
            }
            _ => Err(format!(
                "verdict serve did not start; see {}",
                log_path.display()
            )),
        }
    }

    /// PostGraphile 4 (`bench/postgraphile`, installed with `npm ci` on first use) on the
    /// store's PostgreSQL database.
    pub async fn postgraphile(folder: &Path, store: &Store) -> Result<Server, String> {
        let bin = folder.join("node_modules/.bin/postgraphile");
        if !bin.exists() {
            let status = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(folder)
                .stdout(Stdio::null())
                .status()
                .map_err(|e| format!("npm: {e}"))?;
            if !status.success() {
                return Err(format!("npm ci in {} failed", folder.display()));
            }
        }
        let port = free_port()?;
        let log = std::fs::File::create(store.dir.path().join("postgraphile.log"))
            .map_err(|e| e.to_string())?;
        let child = Command::new(&bin)
            .args([
                "-c",
                &store.url,
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .arg("--disable-graphiql")
            .current_dir(folder)
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let server = Server {
            proc: Proc(child.id()),
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        let api = crate::load::Api::new(format!("{}/graphql", server.base));
        for _ in 0..120 {
            if api
                .gql(None, "{__typename}", serde_json::json!({}))
                .await
                .is_ok()
            {
                return Ok(server);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Err(format!(
            "PostGraphile did not answer within 60 s; see {}",
            store.dir.path().join("postgraphile.log").display()
        ))
    }
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// A process as /proc shows it.
#[derive(Clone, Copy)]
pub struct Proc(pub u32);

impl Proc {
    /// User + system CPU time so far, in milliseconds (0 once the process is gone).
    pub fn cpu_ms(self) -> f64 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", self.0)) else {
            return 0.0;
        };
        // The command name (field 2) may hold spaces; the fields after it are plain.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
        let ticks: u64 = [11, 12]
            .iter()
            .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
            .sum();
        ticks as f64 * 1000.0 / rustix::param::clock_ticks_per_second() as f64
    }

    /// Resident set size (`VmRSS`), in KiB (0 once the process is gone).
    pub fn rss_kib(self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.0))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmRSS:"))
                    .and_then(|v| v.split_whitespace().next()?.parse().ok())
            })
            .unwrap_or(0)
    }
}

/// Raises this process's open-file limit to its hard limit; the servers it starts
/// inherit it. Thousands of sockets need it.
pub fn raise_open_files() -> u64 {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let raised = rustix::process::Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    let _ = rustix::process::setrlimit(rustix::process::Resource::Nofile, raised);
    rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_is_replaced_and_the_options_kept() {
        assert_eq!(
            replace_database("postgres://postgres@127.0.0.1:5432/postgres", "x").unwrap(),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            replace_database("postgres://u:p@h/db?sslmode=disable", "x").unwrap(),
            "postgres://u:p@h/x?sslmode=disable"
        );
        assert_eq!(
            replace_database("postgres://h", "x").unwrap(),
            "postgres://h/x"
        );
    }

    #[test]
    fn this_process_reports_its_cpu_time_and_resident_set() {
        let me = Proc(std::process::id());
        assert!(me.rss_kib() > 0);
        assert!(me.cpu_ms() >= 0.0);
    }
}
