//! The `lean-beam-mcp` binary: the command line (`lean_beam_mcp::cli`) runs everything.

fn main() -> std::process::ExitCode {
    lean_beam_mcp::cli::run(std::env::args_os())
}
