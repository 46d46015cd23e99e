//! Command-line flags with `WM_` environment twins, validated at start-up.

use std::net::SocketAddr;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::{Args, Parser, Subcommand};

/// `wm-server`: the wm reference server.
#[derive(Debug, Parser)]
#[command(name = "wm-server", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Log line format: `text` or `json` (one object per line).
    #[arg(long, env = "WM_LOG_FORMAT", default_value = "text", global = true)]
    pub log_format: crate::observe::LogFormat,
}

/// Sub-commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server (migrates the database first).
    Serve(Box<ServeArgs>),
    /// Apply pending migrations and exit.
    Migrate(DbArgs),
}

/// Where the database is.
#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    /// `sqlite://path?mode=rwc` (embedded default) or `postgres://user@host/db`.
    #[arg(
        long,
        env = "WM_DATABASE_URL",
        default_value = "sqlite://wm.db?mode=rwc"
    )]
    pub database_url: String,
}

/// Flags of `serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Database.
    #[command(flatten)]
    pub db: DbArgs,
    /// Address to listen on.
    #[arg(long, env = "WM_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Address of the Prometheus `GET /metrics` listener; empty turns metrics off.
    #[arg(long, env = "WM_METRICS_LISTEN", default_value = "127.0.0.1:9464", value_parser = crate::observe::exporter::parse_listen)]
    pub metrics_listen: crate::observe::exporter::MetricsListen,
    /// Operator token for `/api/v1/admin`; a random one is generated and printed when unset.
    #[arg(long, env = "WM_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// Requests per API key in any 60 s.
    #[arg(long, env = "WM_RATE_LIMIT_PER_MINUTE", default_value_t = 600)]
    pub rate_limit_per_minute: u32,
    /// Webhook retry delays, comma-separated (`30s`, `1m`, `2h`).
    #[arg(long, env = "WM_WEBHOOK_RETRY_SCHEDULE", default_value = "1m,5m,30m,2h,12h", value_parser = parse_schedule)]
    pub webhook_retry_schedule: Schedule,
    /// Allow http:// and private/loopback webhook targets (development only). Takes
    /// 1/0, true/false, yes/no, on/off.
    #[arg(long, env = "WM_ALLOW_INSECURE_WEBHOOKS", default_value_t = false,
          num_args = 0..=1, default_missing_value = "true", value_parser = BoolishValueParser::new())]
    pub allow_insecure_webhooks: bool,
    /// A client must send a request's whole header within this time.
    #[arg(long, env = "WM_HEADER_READ_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub header_read_timeout: Duration,
    /// A keep-alive connection with no request for this long is closed.
    #[arg(long, env = "WM_IDLE_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    pub idle_timeout: Duration,
    /// A request body must arrive whole within this time (408 otherwise).
    #[arg(long, env = "WM_REQUEST_BODY_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub request_body_timeout: Duration,
    /// Connections held at once; at the cap the longest-idle one is closed (kept below the
    /// file-descriptor limit).
    #[arg(long, env = "WM_MAX_CONNECTIONS", default_value_t = 4096)]
    pub max_connections: usize,
    /// Requests handled at once; beyond it 503 (`/health` is exempt).
    #[arg(long, env = "WM_MAX_IN_FLIGHT", default_value_t = 1024)]
    pub max_in_flight: usize,
    /// At SIGTERM, how long to keep serving with readiness at 503 before closing the
    /// listener (a second SIGTERM or Ctrl-C stops at once).
    #[arg(long, env = "WM_SHUTDOWN_DELAY", default_value = "5s", value_parser = parse_duration)]
    pub shutdown_delay: Duration,
    /// Messaging provider: `simulated` (demos, tests) or `whatsapp` (the Cloud API).
    #[arg(long, env = "WM_PROVIDER", default_value = "simulated", value_parser = ["simulated", "whatsapp"])]
    pub provider: String,
    /// The Graph API base URL (tests point it at a fake).
    #[arg(
        long,
        env = "WM_WHATSAPP_GRAPH_URL",
        default_value = "https://graph.facebook.com"
    )]
    pub whatsapp_graph_url: String,
    /// The Graph API version.
    #[arg(long, env = "WM_WHATSAPP_API_VERSION", default_value = "v24.0")]
    pub whatsapp_api_version: String,
    /// The Meta app secret: platform webhooks are signed with it (`X-Hub-Signature-256`).
    #[arg(long, env = "WM_WHATSAPP_APP_SECRET", hide_env_values = true)]
    pub whatsapp_app_secret: Option<String>,
    /// The token Meta echoes in the webhook verification handshake.
    #[arg(long, env = "WM_WHATSAPP_VERIFY_TOKEN", hide_env_values = true)]
    pub whatsapp_verify_token: Option<String>,
    /// Messenger's and Instagram's Graph API base URL (default: WhatsApp's).
    #[arg(long, env = "WM_MESSENGER_GRAPH_URL")]
    pub messenger_graph_url: Option<String>,
    /// Messenger's and Instagram's Graph API version (default: WhatsApp's).
    #[arg(long, env = "WM_MESSENGER_API_VERSION")]
    pub messenger_api_version: Option<String>,
    /// The app secret signing Messenger's and Instagram's webhooks (default: WhatsApp's,
    /// the same Meta app).
    #[arg(long, env = "WM_MESSENGER_APP_SECRET", hide_env_values = true)]
    pub messenger_app_secret: Option<String>,
    /// The verify token of Messenger's and Instagram's webhook handshake (default:
    /// WhatsApp's).
    #[arg(long, env = "WM_MESSENGER_VERIFY_TOKEN", hide_env_values = true)]
    pub messenger_verify_token: Option<String>,
    /// How long an attempt whose outcome is unknown waits for a status before it fails as
    /// "outcome unknown" and is refunded.
    #[arg(long, env = "WM_WHATSAPP_RECONCILE_AFTER", default_value = "15m", value_parser = parse_duration)]
    pub whatsapp_reconcile_after: Duration,
    /// 32 bytes in base64: encrypts platform access tokens at rest.
    #[arg(long, env = "WM_SECRET_KEY", hide_env_values = true)]
    pub secret_key: Option<String>,
    /// Messages per second per sender number.
    #[arg(long, env = "WM_PROVIDER_MPS", default_value_t = 80)]
    pub provider_mps: u32,
    /// The directory inbound media files are kept in (created if missing), unless a
    /// bucket is set.
    #[arg(long, env = "WM_MEDIA_DIR", default_value = "wm-media")]
    pub media_dir: std::path::PathBuf,
    /// An S3-compatible bucket for inbound media (replicas need one they all reach); its
    /// endpoint, region and credentials come from `AWS_ENDPOINT`, `AWS_REGION`,
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (and `AWS_ALLOW_HTTP=true` for plain HTTP).
    #[arg(long, env = "WM_MEDIA_S3_BUCKET")]
    pub media_s3_bucket: Option<String>,
    /// A test aid for crash tests: each request with an `Idempotency-Key` waits this long
    /// after its handler finished (its transaction committed) before it answers, so a test
    /// can kill the process in that gap. Never set it in production.
    #[arg(long, env = "WM_TEST_HOLD_KEYED_ANSWERS", value_parser = parse_duration, hide = true)]
    pub test_hold_keyed_answers: Option<Duration>,
    /// Messages one website chat visitor may send in any minute (429 beyond).
    #[arg(long, env = "WM_WEBCHAT_MESSAGES_PER_MINUTE", default_value_t = 20)]
    pub webchat_messages_per_minute: u32,
    /// Writes one address may make to website chats in any minute (429 beyond).
    #[arg(
        long,
        env = "WM_WEBCHAT_WRITES_PER_ADDRESS_PER_MINUTE",
        default_value_t = 120
    )]
    pub webchat_writes_per_address_per_minute: u32,
    /// Seed a demo organisation and print an all-scopes API key.
    #[arg(long, default_value_t = false)]
    pub demo: bool,
}

impl ServeArgs {
    /// The listener's limits.
    pub fn limits(&self) -> crate::listener::Limits {
        crate::listener::Limits {
            header_read_timeout: self.header_read_timeout,
            idle_timeout: self.idle_timeout,
            request_body_timeout: self.request_body_timeout,
            max_connections: self.max_connections,
            max_in_flight: self.max_in_flight,
            shutdown_delay: self.shutdown_delay,
        }
    }
}

/// Parses a duration: a number with a unit, `ms`, `s`, `m`, `h` or `d` (`500ms`, `10s`,
/// `15m`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let part = s.trim();
    let split = part
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(part.len());
    let (num, unit) = part.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("bad duration {part:?}"))?;
    let ms = match unit {
        "ms" => Some(n),
        "s" => n.checked_mul(1_000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        "d" => n.checked_mul(86_400_000),
        _ => return Err(format!("bad unit in {part:?} (use ms, s, m, h or d)")),
    };
    ms.map(Duration::from_millis)
        .ok_or_else(|| format!("duration {part:?} is too long"))
}

/// A parsed retry schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule(pub Vec<Duration>);

/// Parses `1m,5m,30m,2h,12h`.
pub fn parse_schedule(s: &str) -> Result<Schedule, String> {
    let v = s
        .split(',')
        .map(parse_duration)
        .collect::<Result<Vec<_>, _>>()?;
    if v.is_empty() {
        Err("empty schedule".into())
    } else {
        Ok(Schedule(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_parses_units() {
        let s = parse_schedule("1m,5m,30m,2h,12h").unwrap();
        assert_eq!(s.0[0], Duration::from_secs(60));
        assert_eq!(s.0[4], Duration::from_secs(43_200));
        assert!(parse_schedule("1x").is_err());
        assert!(parse_schedule("").is_err());
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_duration("99999999999999999d").is_err());
    }

    #[test]
    fn boolean_settings_take_the_usual_spellings() {
        for (v, want) in [
            ("1", true),
            ("yes", true),
            ("on", true),
            ("true", true),
            ("0", false),
            ("no", false),
            ("off", false),
            ("false", false),
        ] {
            let cli = Cli::try_parse_from([
                "wm-server",
                "serve",
                &format!("--allow-insecure-webhooks={v}"),
            ])
            .unwrap();
            let Command::Serve(a) = cli.command else {
                panic!("serve")
            };
            assert_eq!(a.allow_insecure_webhooks, want, "{v}");
        }
        let cli = Cli::try_parse_from(["wm-server", "serve", "--allow-insecure-webhooks"]).unwrap();
        let Command::Serve(a) = cli.command else {
            panic!("serve")
        };
        let a = *a;
        assert!(a.allow_insecure_webhooks);
    }

    #[test]
    fn cli_defaults_match_the_design() {
        let cli = Cli::try_parse_from(["wm-server", "serve"]).unwrap();
        let Command::Serve(a) = cli.command else {
            panic!("serve")
        };
        let a = *a;
        assert_eq!(a.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(a.rate_limit_per_minute, 600);
        assert_eq!(a.provider_mps, 80);
        assert!(!a.allow_insecure_webhooks);
        assert_eq!(
            a.metrics_listen.0.map(|a| a.to_string()).as_deref(),
            Some("127.0.0.1:9464")
        );
        assert_eq!(cli.log_format, crate::observe::LogFormat::Text);
    }

    #[test]
    fn metrics_and_log_format_flags() {
        let cli = Cli::try_parse_from([
            "wm-server",
            "--log-format",
            "json",
            "serve",
            "--metrics-listen",
            "",
        ])
        .unwrap();
        assert_eq!(cli.log_format, crate::observe::LogFormat::Json);
        let Command::Serve(a) = cli.command else {
            panic!("serve")
        };
        assert_eq!(a.metrics_listen.0, None);
        assert!(Cli::try_parse_from(["wm-server", "serve", "--metrics-listen", "nope"]).is_err());
    }
}
