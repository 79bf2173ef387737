//! What `lake build` says, read line by line (reference `lean-stock-speculation.md` §C,
//! "Progress lines", from Lake's `Monitor.reportJob` and `reportResult`).
//!
//! Contract:
//! 1. A *job line* is `{icon} [{i}/{n}]{ (Optional)} {verb} {caption}`: the icon is `✔` for a
//!    clean job, else the icon of the worst level it logged (`⚠` warnings, `✖` errors, ...);
//!    the verb is `Ran`/`Fetched`/`Built`/`Revisited`/`Replayed`, or the `-ing` form for a
//!    failure. Its log follows on the next lines. [`job_line`] reads one; it is what a save
//!    forwards as progress.
//! 2. `Some required targets logged failures:` is followed by one `- {caption}` line per
//!    failed target; [`BuildLog`] collects those captions.
//! 3. `error: unknown module ...` is how Lake refuses a `+M` that no library of the workspace
//!    builds (`CliError.unknownModule`); [`BuildLog::unknown_module`] says whether it was seen.
//! 4. [`BuildLog`] keeps the last [`TAIL_LINES`] lines (each cut at [`TAIL_LINE_BYTES`]) for
//!    error reports. The exit status, not any line, says whether the build succeeded.
//! 5. A checkpoint's job lines are its progress ([`report_job`]; through a pipe Lake prints one
//!    only for a job that did work or logged something, `lean-stock-speculation.md` §C): the
//!    first, then one per ten jobs, the last, and every one that warned or failed (a first build
//!    of a Mathlib-sized project has thousands); the job logs between them are not (they reach
//!    the result of a failed build).

use crate::lean::progress::Caller;
use crate::lean::tail::Tail;

/// Lines of build output kept for an error report.
pub const TAIL_LINES: usize = 60;
/// The longest line kept in the tail (longer ones are cut).
pub const TAIL_LINE_BYTES: usize = 2048;

/// One job line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobLine<'a> {
    /// `✔`, `⚠`, `✖`, ...
    pub icon: char,
    /// The job's number.
    pub index: u64,
    /// Jobs in the build.
    pub total: u64,
    /// The verb and the caption (`Built Fixture.Basic`), after an `(Optional)` marker if any.
    pub text: &'a str,
}

/// Reads a job line (see the contract); `None` for any other line.
pub fn job_line(line: &str) -> Option<JobLine<'_>> {
    let mut chars = line.chars();
    let icon = chars.next()?;
    if icon.is_ascii() {
        return None;
    }
    let rest = chars.as_str().strip_prefix(" [")?;
    let (counter, rest) = rest.split_once(']')?;
    let (index, total) = counter.split_once('/')?;
    let (index, total) = (index.parse().ok()?, total.parse().ok()?);
    let rest = rest.strip_prefix(' ')?;
    let text = rest.strip_prefix("(Optional) ").unwrap_or(rest);
    Some(JobLine {
        icon,
        index,
        total,
        text,
    })
}

/// A build's job lines are reported for the first job, then every this many jobs, the last
/// job, and any job that warned or failed.
const BUILD_STEP: u64 = 10;

/// Reports one line of a checkpoint's `lake build` (see the contract); `last` is the index of
/// the last job line reported for this build (0 before any).
pub fn report_job(caller: &Caller<'_>, line: &str, last: &mut u64) {
    let Some(job) = job_line(line) else {
        return;
    };
    if job_due(job.icon, job.index, job.total, *last) {
        *last = job.index.max(1);
        caller.step(line);
    }
}

/// Whether job `index` of `total` is reported, after job `last` was (0: none yet).
fn job_due(icon: char, index: u64, total: u64, last: u64) -> bool {
    last == 0 || index >= last + BUILD_STEP || index == total || icon != '✔'
}

const FAILURES: &str = "Some required targets logged failures:";

/// What a build said, as far as a report needs it.
#[derive(Debug)]
pub struct BuildLog {
    tail: Tail,
    failed_targets: Vec<String>,
    in_failures: bool,
    unknown_module: bool,
    jobs: u64,
}

impl Default for BuildLog {
    fn default() -> Self {
        BuildLog {
            tail: Tail::new(TAIL_LINES, TAIL_LINE_BYTES),
            failed_targets: Vec::new(),
            in_failures: false,
            unknown_module: false,
            jobs: 0,
        }
    }
}

impl BuildLog {
    /// Takes in one line.
    pub fn push(&mut self, line: &str) {
        if job_line(line).is_some() {
            self.jobs += 1;
        }
        if line == FAILURES {
            self.in_failures = true;
        } else if self.in_failures {
            match line.strip_prefix("- ") {
                Some(target) => self.failed_targets.push(target.to_owned()),
                None => self.in_failures = false,
            }
        }
        // Lake's CLI error, not an elaboration error such as `unknown module prefix` in a log.
        if line.starts_with("error: unknown module `")
            || line.starts_with("error: unknown module '")
        {
            self.unknown_module = true;
        }
        self.tail.push(line);
    }

    /// The last lines, oldest first.
    pub fn tail(&self) -> Vec<String> {
        self.tail.lines()
    }

    /// The captions Lake listed as failed.
    pub fn failed_targets(&self) -> &[String] {
        &self.failed_targets
    }

    /// Whether Lake said the module is unknown to it.
    pub fn unknown_module(&self) -> bool {
        self.unknown_module
    }

    /// How many job lines there were.
    pub fn jobs(&self) -> u64 {
        self.jobs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_build_reports_its_first_every_tenth_its_last_and_its_troubles() {
        let mut last = 0;
        let mut reported = Vec::new();
        for index in 1..=35u64 {
            let icon = if index == 17 { '⚠' } else { '✔' };
            if job_due(icon, index, 35, last) {
                last = index;
                reported.push(index);
            }
        }
        assert_eq!(reported, [1, 11, 17, 27, 35]);
    }

    #[test]
    fn job_lines_of_every_kind_are_read() {
        let built = job_line("✔ [2/7] Built Fixture.Basic").unwrap();
        assert_eq!(
            (built.icon, built.index, built.total, built.text),
            ('✔', 2, 7, "Built Fixture.Basic")
        );
        let failed = job_line("✖ [3/7] Building Fixture.TypeError").unwrap();
        assert_eq!(
            (failed.icon, failed.text),
            ('✖', "Building Fixture.TypeError")
        );
        let optional = job_line("⚠ [1/2] (Optional) Ran Fixture:extraDep").unwrap();
        assert_eq!(optional.text, "Ran Fixture:extraDep");
        for other in [
            "error: Fixture/TypeError.lean:10:17: Type mismatch",
            "Build completed successfully (3 jobs).",
            "- Fixture.TypeError",
            "✔ [x/7] Built A",
            "",
        ] {
            assert_eq!(job_line(other), None, "{other:?}");
        }
    }

    #[test]
    fn failures_unknown_modules_and_the_tail_are_kept() {
        let mut log = BuildLog::default();
        for line in [
            "✔ [1/2] Built Fixture.Basic",
            "✖ [2/2] Building Fixture.Uses",
            "error: Fixture/Uses.lean:3:0: bad",
            FAILURES,
            "- Fixture.Uses",
            "- Fixture",
        ] {
            log.push(line);
        }
        assert_eq!(log.failed_targets(), ["Fixture.Uses", "Fixture"]);
        assert_eq!(log.jobs(), 2);
        assert!(!log.unknown_module());
        let mut unknown = BuildLog::default();
        unknown.push("error: unknown module `Scratch`");
        assert!(unknown.unknown_module());
        let mut elaboration = BuildLog::default();
        elaboration.push("error: A.lean:1:0: unknown module prefix 'Missing'");
        assert!(!elaboration.unknown_module());
        let mut long = BuildLog::default();
        for n in 0..(TAIL_LINES + 3) {
            long.push(&format!("line {n}"));
        }
        long.push(&"é".repeat(TAIL_LINE_BYTES));
        let tail = long.tail();
        assert_eq!(tail.len(), TAIL_LINES);
        assert_eq!(tail[0], "line 4");
        assert!(tail.last().unwrap().ends_with(" …"));
    }
}
