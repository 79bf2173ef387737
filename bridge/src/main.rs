//! `lean-beam-mcp-bridge`: the command-line wrapper around [`lean_beam_mcp_bridge::cli::run`]
//! (usage: `--mode legacy|modern [--port N] [--ready-file PATH] -- <server> [args...]`).

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(lean_beam_mcp_bridge::cli::run(std::env::args_os()))
}
