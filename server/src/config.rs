//! Configuration: parsed once by clap (every flag has a `VERDICT_*` environment twin) and
//! passed explicitly. There is no global configuration.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

/// Where the data lives; shared by every subcommand.
#[derive(Args, Clone, Debug)]
pub struct StoreConfig {
    /// Database URL: `sqlite://FILE?mode=rwc` (the embedded default) or `postgres://...`.
    #[arg(
        long,
        env = "VERDICT_DATABASE_URL",
        default_value = "sqlite://verdict.db?mode=rwc",
        global = true
    )]
    pub database_url: String,

    /// The deployment's Ed25519 signing key, created on first start (mode 0600).
    #[arg(
        long,
        env = "VERDICT_KEY_FILE",
        default_value = "verdict-signing.key",
        global = true
    )]
    pub key_file: PathBuf,

    /// Create a new signing key although the database holds results signed by another one
    /// (the key file was lost). Earlier bundles keep verifying against the old key's
    /// fingerprint; new runs are signed with the new key.
    #[arg(long, env = "VERDICT_NEW_KEY", global = true)]
    pub new_key: bool,
}

/// `verdict serve` settings.
#[derive(Args, Clone, Debug)]
pub struct ServeConfig {
    /// Address to listen on (port 0 picks a free port; the chosen address is printed).
    #[arg(long, env = "VERDICT_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,

    /// Import the bundled demo event on first start and print demo credentials.
    #[arg(long, env = "VERDICT_DEMO")]
    pub demo: bool,

    /// Turn GraphQL introspection off (it is on by default: the schema is public).
    #[arg(long, env = "VERDICT_NO_INTROSPECTION")]
    pub no_introspection: bool,

    /// Served over TLS (behind a proxy that terminates it): mark the session cookie
    /// `Secure` and send `Strict-Transport-Security`. Implied by an `https://` --public-url.
    #[arg(long, env = "VERDICT_TLS_COOKIES")]
    pub tls_cookies: bool,

    /// Serve the web client from this built folder (`web/app/dist`) instead of the copy
    /// compiled into the binary: for working on the client without rebuilding the server.
    #[arg(long, env = "VERDICT_WEB_DIR", hide = true)]
    pub web_dir: Option<std::path::PathBuf>,

    /// Serve `GET /metrics` (Prometheus text) only to requests carrying
    /// `Authorization: Bearer TOKEN`. Without it, metrics are served only to a scraper on
    /// this machine (a loopback peer whose request was not forwarded by a proxy).
    #[arg(long, env = "VERDICT_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,

    #[command(flatten)]
    pub mail: MailConfig,

    #[command(flatten)]
    pub webhooks: WebhookConfig,

    #[command(flatten)]
    pub limits: Limits,
}

impl ServeConfig {
    /// The metrics token, if one was given (an empty value counts as none).
    pub fn metrics_token(&self) -> Option<&str> {
        self.metrics_token.as_deref().filter(|t| !t.is_empty())
    }
}

/// How the process logs; shared by every subcommand.
#[derive(Args, Clone, Debug)]
pub struct LogConfig {
    /// Write logs to stderr as JSON lines (one object per line) instead of text. Either
    /// way, `RUST_LOG` filters them (default `info`).
    #[arg(long, env = "VERDICT_LOG_JSON", global = true)]
    pub log_json: bool,
}

/// Webhooks: what their receivers may be, and how deliveries are retried.
#[derive(Args, Clone, Debug)]
pub struct WebhookConfig {
    /// FOR TESTS ONLY: allow webhook receivers on loopback addresses (127.0.0.0/8, ::1),
    /// so a test can receive deliveries on its own machine. Every other private, link-local
    /// or reserved address stays refused. Never set this in production: it lets organizers
    /// make the server send requests to services on its own host.
    #[arg(long, env = "VERDICT_ALLOW_LOOPBACK_WEBHOOKS")]
    pub allow_loopback_webhooks: bool,

    /// Tests only: the wait before a delivery's second attempt, in milliseconds (each later
    /// wait doubles).
    #[arg(
        long,
        env = "VERDICT_WEBHOOK_BACKOFF_MS",
        default_value_t = 30_000,
        hide = true
    )]
    pub webhook_backoff_ms: u64,
}

impl WebhookConfig {
    pub fn settings(&self) -> WebhookSettings {
        WebhookSettings {
            allow_loopback: self.allow_loopback_webhooks,
            backoff_base: std::time::Duration::from_millis(self.webhook_backoff_ms.max(1)),
        }
    }
}

/// The webhook settings of `verdict serve`, shared by the registration check and the
/// worker (`crate::webhooks::Settings`).
#[derive(Clone, Debug)]
pub struct WebhookSettings {
    /// Tests only: loopback receivers (127.0.0.0/8, ::1) are allowed.
    pub allow_loopback: bool,
    /// The wait before the second attempt; each later wait doubles.
    pub backoff_base: Duration,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            allow_loopback: false,
            backoff_base: Duration::from_secs(30),
        }
    }
}

/// Mail: where links point and how messages leave (`serve`, `invite`).
#[derive(Args, Clone, Debug, Default)]
pub struct MailConfig {
    /// The address people reach Verdict at, for the links in messages
    /// (`{public-url}/invite/{token}`, `{public-url}/reset/{token}`). Defaults to the
    /// listening address.
    #[arg(long, env = "VERDICT_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// SMTP server that delivers the outbox: `smtp://host:port` (plain, for a relay on the
    /// same machine), `smtp://host?tls=required` (STARTTLS), `smtps://host` (TLS), with
    /// credentials as `smtp://user:password@host`. Without it nothing is mailed: organizers
    /// copy invitation links from `Event.outbox`, the operator reads `verdict mail list`.
    #[arg(long, env = "VERDICT_SMTP_URL")]
    pub smtp_url: Option<String>,

    /// The sender of every message.
    #[arg(
        long,
        env = "VERDICT_MAIL_FROM",
        default_value = "Verdict <verdict@localhost>"
    )]
    pub mail_from: String,
}

/// Every request limit, in one place. Each one has an end-to-end test that trips it.
#[derive(Args, Clone, Debug)]
pub struct Limits {
    /// Maximum selection depth of a GraphQL operation.
    #[arg(long, env = "VERDICT_MAX_DEPTH", default_value_t = Limits::default().max_depth)]
    pub max_depth: usize,
    /// Maximum cost of an operation for a signed-in caller. Every field costs 1 plus what
    /// it selects; a field that runs its own query costs 10 more; a connection multiplies
    /// what it selects by its `first` (20 if omitted); a list without `first` by an assumed
    /// length (20 for a team's, project's or person's lists, 100 for a ranking or an
    /// event's judges); a calibration or planner run costs 1000, a password check 500 (see
    /// `graphql::cost`). A public ranking with a small selection costs about 320.
    #[arg(long, env = "VERDICT_MAX_COMPLEXITY", default_value_t = Limits::default().max_complexity)]
    pub max_complexity: usize,
    /// Maximum cost of an operation for an anonymous caller (costs as for
    /// `--max-complexity`, which is meant to be the larger).
    #[arg(
        long,
        env = "VERDICT_MAX_COMPLEXITY_ANONYMOUS",
        default_value_t = Limits::default().max_complexity_anonymous
    )]
    pub max_complexity_anonymous: usize,
    /// Maximum fields (aliases included) in one request document, counting a fragment's
    /// fields at every spread, in every operation and fragment definition. Checked before
    /// validation, which would otherwise walk every expanded field.
    #[arg(long, env = "VERDICT_MAX_FIELDS", default_value_t = Limits::default().max_fields)]
    pub max_fields: usize,
    /// Maximum page size (`first`) of a connection.
    #[arg(long, env = "VERDICT_MAX_PAGE", default_value_t = Limits::default().max_page)]
    pub max_page: usize,
    /// Maximum number of operations in one batched request.
    #[arg(long, env = "VERDICT_MAX_BATCH", default_value_t = Limits::default().max_batch)]
    pub max_batch: usize,
    /// Maximum request body, in bytes.
    #[arg(long, env = "VERDICT_MAX_BODY", default_value_t = Limits::default().max_body)]
    pub max_body: usize,
    /// Maximum directives on one field.
    #[arg(long, env = "VERDICT_MAX_DIRECTIVES", default_value_t = Limits::default().max_directives)]
    pub max_directives: usize,
    /// Per-request timeout, in seconds.
    #[arg(
        long = "request-timeout",
        env = "VERDICT_REQUEST_TIMEOUT",
        default_value_t = Limits::default().request_timeout_secs
    )]
    pub request_timeout_secs: u64,
    /// Requests per second allowed per client address on /graphql (token bucket refill).
    #[arg(
        long,
        env = "VERDICT_RATE_LIMIT_PER_SECOND",
        default_value_t = Limits::default().rate_limit_per_second
    )]
    pub rate_limit_per_second: u64,
    /// Burst size of the per-address request limit.
    #[arg(
        long,
        env = "VERDICT_RATE_LIMIT_BURST",
        default_value_t = Limits::default().rate_limit_burst
    )]
    pub rate_limit_burst: u32,
    /// Operations in flight on one websocket connection (subscriptions, and queries or
    /// mutations until they are answered); more are refused.
    #[arg(
        long,
        env = "VERDICT_MAX_SUBSCRIPTIONS",
        default_value_t = Limits::default().max_subscriptions
    )]
    pub max_subscriptions: usize,
    /// Seconds one message to a websocket client may wait for the client to take it; a
    /// client that takes longer (one that stopped reading) is closed with 1013 ("try again
    /// later"), so it holds at most one message, for at most this long.
    #[arg(
        long = "ws-send-timeout",
        env = "VERDICT_WS_SEND_TIMEOUT",
        default_value_t = Limits::default().ws_send_timeout_secs,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub ws_send_timeout_secs: u64,
    /// Failed log-ins allowed per email and per address within 15 minutes.
    #[arg(long, env = "VERDICT_LOGIN_ATTEMPTS", default_value_t = Limits::default().login_attempts)]
    pub login_attempts: i32,
    /// How long DataLoaders wait for sibling fields to join a batch, in milliseconds.
    #[arg(
        long,
        env = "VERDICT_LOADER_BATCH_MS",
        default_value_t = Limits::default().loader_batch_ms
    )]
    pub loader_batch_ms: u64,
    /// Reverse proxies whose `X-Forwarded-For` is believed, as comma-separated addresses or
    /// CIDRs (`127.0.0.1,10.0.0.0/8`). The client address (for the per-address limits) is
    /// then the rightmost hop that is not one of them; without this flag it is the socket's
    /// peer, and the header is ignored.
    #[arg(
        long,
        env = "VERDICT_TRUSTED_PROXIES",
        value_delimiter = ',',
        value_parser = parse_proxy
    )]
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

impl Limits {
    pub fn request_timeout(&self) -> Duration {
        Duration::from_secs(self.request_timeout_secs)
    }

    pub fn ws_send_timeout(&self) -> Duration {
        Duration::from_secs(self.ws_send_timeout_secs)
    }

    pub fn loader_batch(&self) -> Duration {
        Duration::from_millis(self.loader_batch_ms)
    }
}

/// The defaults, written once: the flags' `default_value_t` read them from here.
impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 10,
            max_complexity: 5000,
            max_complexity_anonymous: 2000,
            max_fields: 1000,
            max_page: 100,
            max_batch: 10,
            max_body: 64 * 1024,
            max_directives: 5,
            request_timeout_secs: 30,
            rate_limit_per_second: 20,
            rate_limit_burst: 100,
            max_subscriptions: 20,
            ws_send_timeout_secs: 30,
            login_attempts: 10,
            loader_batch_ms: 1,
            trusted_proxies: vec![],
        }
    }
}

/// `--trusted-proxies` takes CIDRs (`10.0.0.0/8`) or single addresses (`127.0.0.1`).
pub fn parse_proxy(s: &str) -> Result<ipnet::IpNet, String> {
    s.trim()
        .parse::<ipnet::IpNet>()
        .or_else(|_| s.trim().parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{s:?} is not an address or a CIDR such as 10.0.0.0/8"))
}
