//! The self-check's phases, each one or two tool calls of the session, in the order an agent
//! makes them: start Lean and open the file (`lean_update`), wait for Lean's verdict
//! (`lean_sync`), hover and goals at the file's first tactic (`lean_hover`, `lean_goals`), a
//! speculative `skip` there (`lean_run_at`, in a hidden twin), then close the file and end the
//! session (`lean_close`, then the end of input, which shuts Lean down).
//!
//! Contract: after a phase fails, the phases that need it are skipped; the closing phase always
//! runs, so no Lean process outlives the check. A file with no `by` proof skips the three
//! position phases, saying so. A file Lean reports errors in passes the sync phase (Lean checked
//! it: the set-up works) unless the error is Lake failing to set the file up.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::advice::{self, Advice};
use super::report::{Phase, Status};
use super::session::{Outcome, Session};
use crate::mcp::Exit;

/// How much longer than the Lean timeout a phase waits for its answer: the server's own
/// structured error for a wait on Lean that timed out says more than the phase's cancellation.
const GRACE: Duration = Duration::from_secs(2);

/// What the check runs on.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The workspace root, canonical.
    pub root: PathBuf,
    /// The file, relative to the root.
    pub path: String,
    /// The file's text when the check began (to find its first tactic).
    pub text: String,
    /// The `lake` the server runs.
    pub lake: PathBuf,
    /// How long each phase may take.
    pub timeout: Duration,
    /// How long the server may take to shut down at the end.
    pub shutdown: Duration,
}

/// Runs every phase; their results in order.
pub async fn run(session: Session, plan: &Plan) -> Vec<Phase> {
    let mut runner = Runner {
        session,
        plan,
        phases: Vec::new(),
        blocked: None,
    };
    let base = json!({"workspace": {"root": plan.root}, "path": plan.path});
    let started = runner
        .step(
            "start Lean (lake serve) and open the file",
            "lean_update",
            base.clone(),
        )
        .await;
    let version = started.map(|opened| {
        let version = opened["version"].clone();
        runner.passed(format!("the file is open at version {version}"));
        version
    });
    let mut sync = base.clone();
    sync["diagnostics_in_result"] = json!(true);
    if let Some(synced) = runner
        .step("lean_sync: Lean checks the file", "lean_sync", sync)
        .await
    {
        runner.judge_sync(&synced);
    }
    let tactic = crate::lean::first_tactic(&plan.text);
    let at = |position: crate::lean::Position| {
        let mut args = base.clone();
        args["version"] = version.clone().unwrap_or_default();
        args["line"] = json!(position.line);
        args["character"] = json!(position.character);
        args
    };
    match tactic {
        None => {
            let why = "the file has no `by` proof: check a file with one to try these";
            for title in [
                "hover at the first tactic",
                "goals at the first tactic",
                "lean_run_at at the first tactic",
            ] {
                runner.skip(title, why);
            }
        }
        Some(position) => {
            // line:character as the tools take them (and as Lean writes positions), so a
            // reader can pass them on as they are.
            let place = format!("({}:{}, 0-based)", position.line, position.character);
            if let Some(hover) = runner
                .step(
                    &format!("hover at the first tactic {place}"),
                    "lean_hover",
                    at(position),
                )
                .await
            {
                runner.passed(hover_text(&hover));
            }
            let mut goals = at(position);
            goals["mode"] = json!("before");
            if let Some(goals) = runner
                .step(
                    &format!("goals at the first tactic {place}"),
                    "lean_goals",
                    goals,
                )
                .await
            {
                runner.passed(goals_text(&goals["goals"]));
            }
            let mut probe = at(position);
            probe["text"] = json!("skip");
            if let Some(ran) = runner
                .step(
                    "lean_run_at: `skip` there, in a hidden twin",
                    "lean_run_at",
                    probe,
                )
                .await
            {
                runner.judge_probe(&ran);
            }
        }
    }
    runner.close(base, version.is_some()).await
}

struct Runner<'a> {
    session: Session,
    plan: &'a Plan,
    phases: Vec<Phase>,
    /// Why the remaining phases cannot run, once one they need has failed.
    blocked: Option<&'static str>,
}

impl Runner<'_> {
    /// Runs one phase's call; its answer, or `None` when the phase was skipped or failed (and
    /// recorded as such). An answer is recorded by the caller ([`Self::passed`] or a judge).
    async fn step(&mut self, title: &str, tool: &str, arguments: Value) -> Option<Value> {
        if let Some(why) = self.blocked {
            self.skip(title, why);
            return None;
        }
        let started = Instant::now();
        let outcome = self
            .session
            .call(tool, arguments, self.plan.timeout + GRACE, |message| {
                eprintln!("  … {message}");
            })
            .await;
        let elapsed = Some(started.elapsed());
        let mut phase = Phase {
            title: title.to_owned(),
            status: Status::Failed,
            elapsed,
            detail: String::new(),
            advice: None,
        };
        let advice = match outcome {
            Outcome::Answered(answer) => {
                phase.status = Status::Passed;
                self.phases.push(phase);
                return Some(answer);
            }
            Outcome::Failed(error) => {
                phase.detail = error_text(&error);
                advice::for_error(&error)
            }
            Outcome::TimedOut => {
                phase.detail = format!(
                    "no answer within {}: the call was cancelled",
                    advice::seconds(self.plan.timeout)
                );
                Advice::Timeout
            }
            Outcome::Broken(why) => {
                phase.detail = why;
                Advice::Unexpected
            }
        };
        phase.advice = Some(self.advice(advice));
        self.phases.push(phase);
        self.blocked = Some("an earlier phase failed");
        None
    }

    fn advice(&self, advice: Advice) -> String {
        advice::text(advice, &self.plan.root, &self.plan.lake, self.plan.timeout)
    }

    fn skip(&mut self, title: &str, why: &str) {
        self.phases.push(Phase {
            title: title.to_owned(),
            status: Status::Skipped,
            elapsed: None,
            detail: why.to_owned(),
            advice: None,
        });
    }

    /// Records what the last (passed) phase found.
    fn passed(&mut self, detail: String) {
        if let Some(phase) = self.phases.last_mut() {
            phase.detail = detail;
        }
    }

    /// Fails the last phase after all.
    fn fail_last(&mut self, detail: String, advice: Advice) {
        let advice = self.advice(advice);
        if let Some(phase) = self.phases.last_mut() {
            phase.status = Status::Failed;
            phase.detail = detail;
            phase.advice = Some(advice);
        }
        self.blocked = Some("an earlier phase failed");
    }

    fn judge_sync(&mut self, synced: &Value) {
        let counts = &synced["diagnostics"]["counts"];
        let errors = counts["error"].as_u64().unwrap_or(0);
        let warnings = counts["warning"].as_u64().unwrap_or(0);
        // Told by shape (the sync's readiness), never by Lake's words, which differ by era.
        let readiness = &synced["readiness"];
        let setup = (readiness["reason"] == "headerFailed")
            .then(|| readiness["blocking_diagnostics"][0]["message"].as_str())
            .flatten();
        if let Some(message) = setup {
            return self.fail_last(
                format!("Lean could not start on the file:\n{}", message.trim_end()),
                Advice::LakeSetup,
            );
        }
        let mut detail = format!(
            "{errors} {}, {warnings} {} (version {})",
            plural(errors, "error"),
            plural(warnings, "warning"),
            synced["version"]
        );
        if errors > 0 {
            detail.push_str("; Lean checked the file, so the set-up works: fix the errors or check another file");
        }
        self.passed(detail);
    }

    fn judge_probe(&mut self, ran: &Value) {
        if ran["success"] == true {
            let goals = ran["proof_state"]["goals"].as_array().map_or(0, Vec::len);
            self.passed(format!(
                "it ran; {goals} {} after it, the file untouched",
                plural(goals as u64, "goal")
            ));
        } else {
            let messages: Vec<&str> = ran["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["message"].as_str().or(m["text"].as_str()))
                .collect();
            self.fail_last(
                format!("Lean refused `skip` there: {}", messages.join("; ")),
                Advice::Unexpected,
            );
        }
    }

    /// Closes the file (when Lean started) and ends the session; every phase's result.
    async fn close(mut self, base: Value, lean_started: bool) -> Vec<Phase> {
        let plan = self.plan;
        let title = "close the file and stop Lean";
        let started = Instant::now();
        let closed = if lean_started {
            self.session
                .call("lean_close", base, self.plan.timeout + GRACE, |_| {})
                .await
        } else {
            Outcome::Answered(json!({}))
        };
        let exit = self.session.close(self.plan.shutdown).await;
        let elapsed = Some(started.elapsed());
        let (status, detail, advice) = match (closed, exit) {
            (Outcome::Answered(_), Some(Exit::Completed)) => (
                Status::Passed,
                if lean_started {
                    "Lean was shut down".to_owned()
                } else {
                    "nothing was left running".to_owned()
                },
                None,
            ),
            (Outcome::Answered(_), exit) => (
                Status::Failed,
                format!(
                    "the server did not shut down cleanly within {} ({exit:?}); Lean was killed",
                    advice::seconds(self.plan.shutdown)
                ),
                Some(Advice::Unexpected),
            ),
            (Outcome::Failed(error), _) => {
                (Status::Failed, error_text(&error), Some(Advice::Unexpected))
            }
            (Outcome::TimedOut, _) => (
                Status::Failed,
                "lean_close did not answer".to_owned(),
                Some(Advice::Timeout),
            ),
            (Outcome::Broken(why), _) => (Status::Failed, why, Some(Advice::Unexpected)),
        };
        let advice = advice.map(|a| advice::text(a, &plan.root, &plan.lake, plan.timeout));
        self.phases.push(Phase {
            title: title.to_owned(),
            status,
            elapsed,
            detail,
            advice,
        });
        self.phases
    }
}

/// A failed call's error, as the report shows it: its code and message, then Lean's last
/// stderr lines when it has them.
fn error_text(error: &Value) -> String {
    let mut text = format!(
        "{}: {}",
        error["code"].as_str().unwrap_or("error"),
        error["message"].as_str().unwrap_or_default()
    );
    let tail: Vec<&str> = error["data"]["stderrTail"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|line| !line.trim().is_empty())
        .collect();
    if !tail.is_empty() {
        let last = &tail[tail.len().saturating_sub(8)..];
        text.push_str("\nLean's last stderr lines:");
        for line in last {
            text.push_str("\n  ");
            text.push_str(line);
        }
    }
    text
}

/// The first line of a hover's text, or what its absence means.
fn hover_text(hover: &Value) -> String {
    let text = hover["contents"]["value"].as_str().unwrap_or_default();
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with("```"));
    match line {
        Some(line) => format!("Lean says: {line}"),
        None => "Lean answered: no hover text there".to_owned(),
    }
}

/// How many goals, and the first one's target.
fn goals_text(goals: &Value) -> String {
    let goals = goals.as_array().map(Vec::as_slice).unwrap_or_default();
    match goals.first() {
        None => "no goals there".to_owned(),
        Some(first) => format!(
            "{} {}, the first ⊢ {}",
            goals.len(),
            plural(goals.len() as u64, "goal"),
            first["target"].as_str().unwrap_or_default()
        ),
    }
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}
