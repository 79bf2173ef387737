//! `fake-lake`: the test stand-in for the `lake` executable. `serve [-- args]` runs the fake
//! Lean language server on stdin/stdout in the current directory (the Lake project root);
//! `build [targets]`, `query [targets]`, `setup-file <path> [-]` and `env [cmd args…]` imitate
//! those Lake commands; `worker <uri>` is the per-document worker process the server starts. See the
//! crate README.

use fake_lean::{faults, lake_build, lake_env, lake_jobs, server, worker};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest: Vec<String> = args.iter().skip(1).cloned().collect();
    let code = match args.first().map(String::as_str) {
        Some("serve") => {
            faults::once();
            match faults::startup() {
                Some(code) => code,
                None => {
                    let after_dashes = match rest.iter().position(|a| a == "--") {
                        Some(i) => rest[i + 1..].to_vec(),
                        None => rest,
                    };
                    server::run(after_dashes)
                }
            }
        }
        Some("worker") => worker::worker_main(),
        Some("build") => lake_jobs::build_main(&rest),
        Some("query") => lake_jobs::query_main(&rest),
        Some("setup-file") => lake_build::setup_file_main(&rest),
        Some("env") => lake_env::env_main(&rest),
        Some("--version") | Some("version") => {
            println!("Lake version 5.0.0-fake (Lean version 4.24.0)");
            0
        }
        other => {
            eprintln!("error: unknown command '{}'", other.unwrap_or(""));
            1
        }
    };
    std::process::exit(code)
}
