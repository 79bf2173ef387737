//! Where Lake says a module's artifacts are: `lake query`, Lake's own record of the build
//! (`lean-language-server.md` Part 3, "Lake's artifact cache"; Lake's `lake query` in
//! `CLI/Main.lean` and its help in `CLI/Help.lean`).
//!
//! Contract:
//! 1. [`args`]: `lake query --no-build +M:olean +M:ilean +M:c`. Lake builds the targets before
//!    printing them; `--no-build` makes that a check, so a module that is no longer up to date
//!    fails instead of being built again from another text (a fetch from Lake's cache is no
//!    build, and passes).
//! 2. Lake prints each target's result on stdout, one line per target in the order given (the
//!    facets' results are the artifacts' paths: in Lake's artifact cache after a fetch), and its
//!    progress on stderr. [`read`] takes an exit status of 0 with exactly one non-empty stdout
//!    line per target as the three paths ([`Named`]); a relative path is taken from the
//!    workspace root, where `lake` ran.
//! 3. A Lake that answers `unknown command 'query'` (Lake's `CliError.unknownCommand`) has no
//!    query, and no artifact cache either: [`Answer::NoQuery`]. Exit 3 is Lake's `noBuildCode`
//!    (`Build/Run.lean`): a target needs a build, so the module or an import changed since the
//!    build: [`Answer::OutOfDate`].
//! 4. Anything else is [`Answer::Unreadable`], saying what Lake did instead.

use std::path::Path;
use std::process::ExitStatus;

use super::artifacts::Named;
use super::run::Stream;

/// The facets asked for, in the order [`Named`] holds them.
const FACETS: [&str; 3] = ["olean", "ilean", "c"];

/// Lake's exit code when `--no-build` is set and a build is required (`noBuildCode`).
const NO_BUILD_CODE: i32 = 3;

/// The most lines of an answer kept: it is one per target.
pub const ANSWER_LINES: usize = 16;

/// Lake's refusal of a command it does not have (`CliError.unknownCommand`), both quotings.
const NO_QUERY: [&str; 2] = [
    "error: unknown command 'query'",
    "error: unknown command `query`",
];

/// Whether a line of the query's output is part of its answer (see the contract): stdout, or
/// the refusal of a Lake without the command.
pub fn is_answer(stream: Stream, line: &str) -> bool {
    stream == Stream::Stdout || is_refusal(line)
}

/// Whether `line` is Lake's refusal of a command it does not have.
fn is_refusal(line: &str) -> bool {
    NO_QUERY.iter().any(|refusal| line.starts_with(refusal))
}

/// The arguments of the query for `module` (see the contract).
pub fn args(module: &str) -> Vec<String> {
    let mut args = vec!["query".to_owned(), "--no-build".to_owned()];
    args.extend(FACETS.iter().map(|facet| format!("+{module}:{facet}")));
    args
}

/// What a query said.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The paths Lake named.
    Named(Named),
    /// This Lake has no `lake query`.
    NoQuery,
    /// Lake says a target is no longer up to date (`--no-build`'s exit code).
    OutOfDate,
    /// Lake failed, or printed something else than one path per target: what it did.
    Unreadable(String),
}

/// What the query's output says (see the contract); `lines` are its answer's lines
/// ([`is_answer`]) with their streams.
pub fn read(root: &Path, status: ExitStatus, lines: &[(Stream, String)]) -> Answer {
    let no_command = lines.iter().any(|(_, line)| is_refusal(line));
    if !status.success() {
        return if no_command {
            Answer::NoQuery
        } else if status.code() == Some(NO_BUILD_CODE) {
            Answer::OutOfDate
        } else {
            Answer::Unreadable(format!("`lake query` failed ({status})"))
        };
    }
    let printed: Vec<&str> = lines
        .iter()
        .filter(|(stream, line)| *stream == Stream::Stdout && !line.trim().is_empty())
        .map(|(_, line)| line.as_str())
        .collect();
    let [olean, ilean, c] = printed.as_slice() else {
        return Answer::Unreadable(format!(
            "`lake query` printed {} lines for {} targets",
            printed.len(),
            FACETS.len()
        ));
    };
    let path = |line: &str| root.join(line);
    Answer::Named(Named {
        olean: path(olean),
        ilean: path(ilean),
        c: path(c),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn exit(code: i32) -> ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        ExitStatus::from_raw(code << 8)
    }

    fn out(line: &str) -> (Stream, String) {
        (Stream::Stdout, line.to_owned())
    }

    fn err(line: &str) -> (Stream, String) {
        (Stream::Stderr, line.to_owned())
    }

    #[cfg(unix)]
    #[test]
    fn one_path_per_target_on_stdout_whatever_the_progress_says() {
        assert_eq!(
            args("A.B"),
            ["query", "--no-build", "+A.B:olean", "+A.B:ilean", "+A.B:c"]
        );
        let root = Path::new("/w");
        let lines = [
            err("⚠ [1/1] Replayed A.B"),
            err("warning: A/B.lean:1:4: declaration uses `sorry`"),
            out("/cache/artifacts/0123456789abcdef.olean"),
            out(".lake/build/lib/lean/A/B.ilean"),
            out("/cache/artifacts/fedcba9876543210.c"),
        ];
        assert_eq!(
            read(root, exit(0), &lines),
            Answer::Named(Named {
                olean: "/cache/artifacts/0123456789abcdef.olean".into(),
                ilean: "/w/.lake/build/lib/lean/A/B.ilean".into(),
                c: "/cache/artifacts/fedcba9876543210.c".into(),
            })
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_lake_without_the_command_and_other_answers_are_told_apart() {
        let root = Path::new("/w");
        assert_eq!(
            read(root, exit(1), &[err("error: unknown command 'query'")]),
            Answer::NoQuery
        );
        assert_eq!(read(root, exit(3), &[]), Answer::OutOfDate);
        assert_eq!(
            read(root, exit(1), &[err("error: unknown module `A.B`")]),
            Answer::Unreadable("`lake query` failed (exit status: 1)".into())
        );
        assert_eq!(
            read(root, exit(0), &[out("/a.olean"), out("")]),
            Answer::Unreadable("`lake query` printed 1 lines for 3 targets".into())
        );
        // The refusal's words on a Lake that did run the query are no refusal.
        let named = [
            err("error: unknown command 'query'"),
            out("/a.olean"),
            out("/a.ilean"),
            out("/a.c"),
        ];
        assert!(matches!(read(root, exit(0), &named), Answer::Named(_)));
    }
}
