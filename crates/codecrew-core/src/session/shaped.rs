//! A final answer held to the run's `--schema`: its JSON document checked, and on a
//! mismatch the same session asked again with the checker's errors, as often as
//! `--schema-retries` allows. Every answer is checked here, whether or not the CLI was
//! also given the schema by a mechanism of its own.

use super::turn::TurnState;
use super::{Failure, JobEvent, JobReport, JobRun, JobStream, StopReason};
use crate::prompt;
use crate::schema::{AnswerShape, Mismatch, json_document};
use codecrew_agents::strict_schema;

/// What the loop does with an answer (a turn without calls).
pub(super) enum Shaped {
    /// The job ends: the answer is final (with its data, or a failure).
    Final,
    /// The answer did not fit: this prompt goes to the same session.
    AskAgain(String),
}

impl JobRun {
    /// The turn's answer as the job's final one (`rewritten`: given on a turn where the
    /// CLI held its model to a rewritten, strict form of the schema): without a schema, as it is; with one, its document in `report.data` if it fits, else asked for again (counted in
    /// `asked_again`) or, past the retries, a failure that says what was wrong.
    pub(super) fn shaped(
        &self,
        turn: &TurnState,
        shape: Option<&AnswerShape>,
        rewritten: bool,
        report: &mut JobReport,
        asked_again: &mut u32,
        stream: &JobStream,
    ) -> Shaped {
        report.stop_reason = StopReason::Answered;
        let Some(shape) = shape else {
            report.success = true;
            return Shaped::Final;
        };
        let checked = match json_document(&turn.text) {
            Ok(mut document) => {
                if rewritten {
                    // A strict form says "left out" as null: back to what the user's
                    // schema says before it judges.
                    strict_schema::without_added_nulls(shape.schema.json(), &mut document);
                }
                shape.schema.check(&document).map(|()| document)
            }
            Err(reason) => Err(Mismatch {
                errors: vec![reason],
            }),
        };
        match checked {
            Ok(data) => {
                report.success = true;
                report.data = Some(data);
                report.schema_errors.clear();
                Shaped::Final
            }
            Err(mismatch) if *asked_again < shape.retries => {
                *asked_again += 1;
                tracing::info!(
                    agent = %self.job.agent,
                    "the answer does not fit the schema ({mismatch}); asking again \
                     ({asked_again} of {})",
                    shape.retries
                );
                stream.send(JobEvent::Retry(format!(
                    "the answer does not fit the schema; asking again ({asked_again} of {}): \
                     {mismatch}",
                    shape.retries
                )));
                Shaped::AskAgain(prompt::render_schema_retry(&mismatch.errors))
            }
            Err(mismatch) => {
                let asks = *asked_again + 1;
                report.error = Some(format!(
                    "the answer does not fit the schema (asked {asks} time{s}): {mismatch}",
                    s = if asks == 1 { "" } else { "s" }
                ));
                report.failure = Some(Failure::SchemaMismatch);
                report.schema_errors = mismatch.errors;
                Shaped::Final
            }
        }
    }
}
