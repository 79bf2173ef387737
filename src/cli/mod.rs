//! The command line of `lean-beam-mcp`: serve MCP on stdio (the default), print a client's
//! configuration (`config <client>`), or check the set-up on one file (`--self-check`).
//!
//! Contract: `args` declares every flag, its environment variable and its default; `serve`,
//! `config` and `self_check` each own one way to run. Server flags go before anything else when
//! serving or checking, and after `config <client> --`, where they are written into the
//! configuration: given before `config` they would be silently unused, so they are refused.

pub mod args;
pub mod config;
mod self_check;
mod serve;

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

use crate::mcp::transport::log_to_stderr;
use args::{Cli, Client, Command, Scope};

/// Runs the binary with `argv` (the program name first).
pub fn run(argv: impl IntoIterator<Item = OsString>) -> ExitCode {
    let matches = Cli::command().get_matches_from(argv);
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match cli.command {
        Some(Command::Config {
            client,
            write,
            scope,
            server_flags,
        }) => {
            let command = Cli::command();
            // `ids` also names the groups clap derives for flattened structs: only arguments.
            let misplaced: Vec<String> = matches
                .ids()
                .filter(|id| command.get_arguments().any(|a| a.get_id() == *id))
                .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
                .map(|id| format!("--{}", id.as_str().replace('_', "-")))
                .collect();
            if !misplaced.is_empty() {
                Cli::command()
                    .error(
                        clap::error::ErrorKind::ArgumentConflict,
                        format!(
                            "{} would not reach the configuration: put server flags after \
                             `config <client> --`",
                            misplaced.join(", ")
                        ),
                    )
                    .exit();
            }
            configure(client, scope, write, server_flags)
        }
        None => {
            log_to_stderr();
            match &cli.self_check {
                Some(file) => self_check::run(
                    file,
                    &cli.server,
                    Duration::from_millis(cli.self_check_timeout_ms),
                ),
                None => serve::serve(&cli.server),
            }
        }
    }
}

/// `config <client>`: prints the registration, or merges it into the client's file.
fn configure(client: Client, scope: Scope, write: bool, mut flags: Vec<String>) -> ExitCode {
    if client == Client::Codex {
        let from_env = config::flags_from_env(&flags, |name| std::env::var_os(name));
        if !from_env.is_empty() {
            eprintln!(
                "Codex does not pass LEAN_BEAM_* variables on to a server: written as flags: {}",
                from_env.join(" ")
            );
        }
        flags.extend(from_env);
    }
    let needed = config::client_flags(client, &flags);
    flags.extend(needed);
    let lean_timeout_ms = match config::check_flags(&flags) {
        Ok(ms) => ms,
        Err(e) => {
            eprintln!("lean-beam-mcp config: these server flags would not start the server:");
            e.exit()
        }
    };
    let binary = match std::env::current_exe().and_then(std::fs::canonicalize) {
        Ok(binary) => binary,
        Err(e) => {
            eprintln!("lean-beam-mcp config: cannot tell where this binary is: {e}");
            return ExitCode::FAILURE;
        }
    };
    let registration = config::Registration {
        client,
        scope,
        binary,
        flags,
        lean_timeout_ms,
    };
    if !write {
        let snippet = config::render(&registration);
        print!("{}", snippet.text);
        eprintln!("{}", snippet.guide);
        return ExitCode::SUCCESS;
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let written = config::locate(
        client,
        scope,
        |name| std::env::var_os(name).map(Into::into),
        &cwd,
    )
    .and_then(|path| config::replace(&path, |old| registration.merge(old)));
    match written {
        Ok((path, replaced)) => {
            let path = path.display();
            match replaced {
                config::Replaced::Unchanged => {
                    println!(
                        "{path}: the {} entry is already this one; nothing written",
                        config::SERVER_NAME
                    )
                }
                config::Replaced::Created => {
                    println!("{path}: created with the {} entry", config::SERVER_NAME)
                }
                config::Replaced::BackedUp(backup) => println!(
                    "{path}: the {} entry written (the old file is {})",
                    config::SERVER_NAME,
                    backup.display()
                ),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lean-beam-mcp config --write: {e}");
            ExitCode::FAILURE
        }
    }
}
