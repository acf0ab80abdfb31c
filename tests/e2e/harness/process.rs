//! The server under test as a process: `verdict serve` on port 0 against a [`TestDb`],
//! killed when its [`App`] is dropped, and the CLI subcommands run against the same
//! database and key file.

use std::{
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

use super::{Backend, TestDb};

/// The binary under test.
const BIN: &str = env!("CARGO_BIN_EXE_verdict");

/// Flags every server gets; a test's `#[flags]` replaces a value or appends a flag.
const DEFAULT_FLAGS: &[(&str, &str)] = &[
    ("--addr", "127.0.0.1:0"),
    ("--rate-limit-per-second", "10000"),
    ("--rate-limit-burst", "10000"),
    ("--login-attempts", "1000"),
];

fn server_args(db: &TestDb, flags: &[&str]) -> Vec<String> {
    let mut pairs: Vec<(String, Option<String>)> = DEFAULT_FLAGS
        .iter()
        .map(|(f, v)| (f.to_string(), Some(v.to_string())))
        .collect();
    pairs.push(("--database-url".into(), Some(db.url().to_string())));
    pairs.push((
        "--key-file".into(),
        Some(db.key_file().display().to_string()),
    ));
    let mut i = 0;
    while i < flags.len() {
        let flag = flags[i];
        let takes_value = i + 1 < flags.len() && !flags[i + 1].starts_with("--");
        let value = takes_value.then(|| flags[i + 1].to_string());
        if let Some(slot) = pairs.iter_mut().find(|(f, _)| f == flag) {
            slot.1 = value;
        } else {
            pairs.push((flag.to_string(), value));
        }
        i += if takes_value { 2 } else { 1 };
    }
    let mut args = vec!["serve".to_string()];
    for (f, v) in pairs {
        args.push(f);
        if let Some(v) = v {
            args.push(v);
        }
    }
    args
}

/// A running server plus everything needed to talk to it.
pub struct App {
    pub base: String,
    pub port: u16,
    pub http: reqwest::Client,
    pub db: Arc<TestDb>,
    child: Child,
    /// Every line the server wrote to stderr (its log), in order.
    stderr: Arc<Mutex<Vec<String>>>,
    /// Every line the server printed on stdout (what an operator reads), in order.
    stdout: Arc<Mutex<Vec<String>>>,
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// What a subcommand did.
#[derive(Debug)]
pub struct CliOutput {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl CliOutput {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl App {
    /// Another server process on the same database and key, with different flags.
    pub async fn sibling(&self, flags: &[&str]) -> App {
        App::spawn_on(self.db.clone(), flags).await
    }

    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    /// A server on `db` (e.g. a database a test restored into), with `flags`.
    pub async fn spawn_on(db: Arc<TestDb>, flags: &[&str]) -> App {
        let args = server_args(&db, flags);
        let mut child = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"));

        let stderr = child.stderr.take().expect("stderr");
        let logged: Arc<Mutex<Vec<String>>> = Arc::default();
        let keep = logged.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[verdict] {line}");
                keep.lock().unwrap_or_else(|p| p.into_inner()).push(line);
            }
        });

        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let printed: Arc<Mutex<Vec<String>>> = Arc::default();
        let keep = printed.clone();
        let port = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) => {
                        eprintln!("[verdict:out] {line}");
                        keep.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(line.clone());
                        if let Some(rest) = line.split("verdict listening on http://").nth(1) {
                            let port = rest
                                .rsplit(':')
                                .next()
                                .map(|p| p.trim().trim_end_matches('/'))
                                .and_then(|p| p.parse::<u16>().ok());
                            if let Some(port) = port {
                                return Some(port);
                            }
                        }
                    }
                    _ => return None,
                }
            }
        })
        .await;
        let port = match port {
            Ok(Some(port)) => port,
            Ok(None) => {
                let status = child.wait().await;
                panic!("verdict {args:?} exited before listening: {status:?}");
            }
            Err(_) => panic!("verdict {args:?} did not print its listening line within 60 s"),
        };
        let keep = printed.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[verdict:out] {line}");
                keep.lock().unwrap_or_else(|p| p.into_inner()).push(line);
            }
        });

        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .expect("http client");
        App {
            base: format!("http://127.0.0.1:{port}"),
            port,
            http,
            db,
            child,
            stderr: logged,
            stdout: printed,
        }
    }

    /// The lines the server has printed on stdout so far (everything up to its listening
    /// line is there once [`App::spawn_on`] returns).
    pub fn printed_lines(&self) -> Vec<String> {
        self.stdout
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The lines the server has written to stderr so far.
    pub fn log_lines(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Waits until the server has written a line to stderr that `found` accepts, and
    /// returns it. Panics after `within`, showing the lines written.
    pub async fn wait_for_log(&self, within: Duration, found: impl Fn(&str) -> bool) -> String {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(line) = self.log_lines().into_iter().find(|l| found(l)) {
                return line;
            }
            if tokio::time::Instant::now() > deadline {
                panic!(
                    "no such log line within {within:?}; the server wrote:\n{}",
                    self.log_lines().join("\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Run `verdict ARGS` against this app's database and key file.
    pub async fn cli(&self, args: &[&str]) -> CliOutput {
        let key_file = self.db.key_file();
        let env = [
            ("VERDICT_DATABASE_URL", self.db.url()),
            ("VERDICT_KEY_FILE", key_file.to_str().expect("utf-8 path")),
        ];
        verdict(args, &env, Duration::from_secs(120)).await
    }

    /// Sends SIGTERM to the server process, as `docker stop` and systemd do.
    pub fn terminate(&self) {
        let pid = self.child.id().expect("the server is still running");
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM {pid}: {status}");
    }

    /// Sends SIGKILL to the server process: a crash, with no chance to finish anything.
    pub fn kill9(&self) {
        let pid = self.child.id().expect("the server is still running");
        let status = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -KILL {pid}: {status}");
    }

    /// The server process's resident memory (`VmRSS` of `/proc/PID/status`), in bytes;
    /// `None` where there is no `/proc` (not Linux).
    pub fn rss_bytes(&self) -> Option<u64> {
        let pid = self.child.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
    }

    /// Whether the server process has exited (without waiting).
    pub fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Waits for the server process to exit; its exit code (`None` when a signal ended
    /// it). Panics if it is still running after `within`.
    pub async fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        tokio::time::timeout(within, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("the server is still running after {within:?}"))
            .expect("wait for the server")
            .code()
    }

    /// The audit chain must verify; returns its head seq. Recomputed as `verdict audit
    /// verify` does it, with the same function, in this process (see
    /// [`TestDb::verify_audit_chain`]); the CLI itself is run by the tests of its output.
    pub async fn audit_head(&self) -> u64 {
        self.try_audit_head()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    pub async fn try_audit_head(&self) -> Result<u64, String> {
        self.db.verify_audit_chain().await
    }
}

/// Run `verdict ARGS` with extra environment variables; panics if it takes longer than
/// `within` (e.g. a server that should have refused to start).
pub async fn verdict(args: &[&str], env: &[(&str, &str)], within: Duration) -> CliOutput {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(within, cmd.output())
        .await
        .unwrap_or_else(|_| panic!("verdict {args:?} took more than {within:?}"))
        .unwrap_or_else(|e| panic!("cannot run verdict {args:?}: {e}"));
    let res = CliOutput {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    eprintln!(
        "[verdict {args:?}] exit {:?}\n{}{}",
        res.code, res.stdout, res.stderr
    );
    res
}
