//! Command-line flags with `WM_` environment twins, validated at start-up.

use std::net::SocketAddr;
use std::time::Duration;

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
    Serve(ServeArgs),
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
    /// Allow http:// and private/loopback webhook targets (development only).
    #[arg(long, env = "WM_ALLOW_INSECURE_WEBHOOKS", default_value_t = false)]
    pub allow_insecure_webhooks: bool,
    /// Messaging provider.
    #[arg(long, env = "WM_PROVIDER", default_value = "simulated", value_parser = ["simulated"])]
    pub provider: String,
    /// Messages per second per sender number.
    #[arg(long, env = "WM_PROVIDER_MPS", default_value_t = 80)]
    pub provider_mps: u32,
    /// Seed a demo organisation and print an all-scopes API key.
    #[arg(long, default_value_t = false)]
    pub demo: bool,
}

/// A parsed retry schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule(pub Vec<Duration>);

/// Parses `1m,5m,30m,2h,12h`.
pub fn parse_schedule(s: &str) -> Result<Schedule, String> {
    s.split(',')
        .map(|part| {
            let part = part.trim();
            let (num, unit) = part.split_at(
                part.find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(part.len()),
            );
            let n: u64 = num.parse().map_err(|_| format!("bad delay {part:?}"))?;
            let secs = match unit {
                "s" => n,
                "m" => n * 60,
                "h" => n * 3600,
                "d" => n * 86_400,
                _ => return Err(format!("bad unit in {part:?} (use s, m, h or d)")),
            };
            Ok(Duration::from_secs(secs))
        })
        .collect::<Result<Vec<_>, _>>()
        .and_then(|v| {
            if v.is_empty() {
                Err("empty schedule".into())
            } else {
                Ok(Schedule(v))
            }
        })
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
    }

    #[test]
    fn cli_defaults_match_the_design() {
        let cli = Cli::try_parse_from(["wm-server", "serve"]).unwrap();
        let Command::Serve(a) = cli.command else {
            panic!("serve")
        };
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
