//! The self-check's report: one line per phase (result, time, what Lean said), what to do
//! under a phase that failed, and a closing verdict.

use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

use super::advice::seconds;

/// How a phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// It did what it should.
    Passed,
    /// It did not: the phase says why and what to do.
    Failed,
    /// It did not run (an earlier phase failed, or the file gives it nothing to do).
    Skipped,
}

/// One phase's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// What the phase does.
    pub title: String,
    /// How it ended.
    pub status: Status,
    /// How long it took (none when skipped).
    pub elapsed: Option<Duration>,
    /// What Lean said, or why it failed or was skipped, in a line or a few.
    pub detail: String,
    /// What to do, for a failed phase.
    pub advice: Option<String>,
}

/// The report for `file` in `root`, checked with `lake`.
pub fn render(file: &Path, root: &Path, lake: &Path, phases: &[Phase], total: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "lean-beam-mcp {} self-check of {}",
        env!("CARGO_PKG_VERSION"),
        file.display()
    );
    let _ = writeln!(
        out,
        "  workspace {}, lake `{}`",
        root.display(),
        lake.display()
    );
    let width = phases
        .iter()
        .map(|p| p.title.chars().count())
        .max()
        .unwrap_or(0);
    for phase in phases {
        let mark = match phase.status {
            Status::Passed => "ok  ",
            Status::Failed => "FAIL",
            Status::Skipped => "skip",
        };
        let time = phase.elapsed.map(seconds).unwrap_or_default();
        let mut lines = phase.detail.lines();
        let first = lines.next().unwrap_or_default();
        let _ = writeln!(out, "  {mark}  {:<width$}  {time:>8}  {first}", phase.title);
        for line in lines.filter(|line| !line.trim().is_empty()) {
            let _ = writeln!(out, "        {line}");
        }
        if let Some(advice) = &phase.advice {
            let _ = writeln!(out, "        What to do: {advice}");
        }
    }
    let failed = phases.iter().filter(|p| p.status == Status::Failed).count();
    if failed == 0 {
        let _ = writeln!(
            out,
            "All {} phases passed in {}. Register the server with your client: lean-beam-mcp \
             config <claude|codex|vscode|cursor|json>.",
            phases.iter().filter(|p| p.status == Status::Passed).count(),
            seconds(total)
        );
    } else {
        let _ = writeln!(
            out,
            "{failed} of {} phases failed (after {}): see what to do above.",
            phases.len(),
            seconds(total)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_line_up_and_advice_sits_under_its_failure() {
        let phases = [
            Phase {
                title: "short".into(),
                status: Status::Passed,
                elapsed: Some(Duration::from_millis(5)),
                detail: "fine".into(),
                advice: None,
            },
            Phase {
                title: "a longer title".into(),
                status: Status::Failed,
                elapsed: Some(Duration::from_millis(1500)),
                detail: "broken\nsecond line".into(),
                advice: Some("fix it".into()),
            },
            Phase {
                title: "last".into(),
                status: Status::Skipped,
                elapsed: None,
                detail: "an earlier phase failed".into(),
                advice: None,
            },
        ];
        let text = render(
            Path::new("/p/A.lean"),
            Path::new("/p"),
            Path::new("lake"),
            &phases,
            Duration::from_secs(2),
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[2], "  ok    short               5 ms  fine");
        assert_eq!(lines[3], "  FAIL  a longer title     1.5 s  broken");
        assert_eq!(lines[4], "        second line");
        assert_eq!(lines[5], "        What to do: fix it");
        assert_eq!(
            lines[6],
            "  skip  last                      an earlier phase failed"
        );
        assert_eq!(
            lines[7],
            "1 of 3 phases failed (after 2.0 s): see what to do above."
        );
    }
}
