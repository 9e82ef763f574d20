//! The scripted agent: a `command` agent (its prompt on stdin, plain text out) whose
//! answers follow a script of turns, for what a test needs a model to say on cue without
//! a real CLI or the fake model server.
//!
//! An [`AgentScript`] is a list of [`Turn`]s, tried in order on every prompt; the first
//! whose conditions hold answers (or pauses, and the next ones are tried), and when none
//! does the script's `otherwise` answer is given. [`AgentScript::to_shell`] writes it as a
//! POSIX shell script, so that codecrew runs it as it runs any CLI: a process with a pipe.
//!
//! Every prompt the agent is sent is kept as a file in `prompts/` beside it, named so that
//! they sort in the order they came ([`super::World::prompts`] reads them back). The
//! agent's task is the last `TASK-...` word of its prompt: a turn can be chosen by it,
//! counted per task, and an answer can say it back (`{task}` in its text).

use std::time::Duration;

use serde_json::Value;

/// What the agent says, or does, on a turn.
#[derive(Clone, Debug)]
pub struct Answer {
    wait: Duration,
    then: Then,
}

#[derive(Clone, Debug)]
enum Then {
    /// Prints the text (`{task}` replaced by the task), exits 0.
    Say(String),
    /// Prints `stderr` on stderr, exits `code`.
    Fail { code: i32, stderr: String },
    /// Writes its pid to `pid-<task>` beside the agent and sleeps two minutes.
    Hang,
    /// Only the wait: the next turns are tried after it.
    Pause,
}

impl Answer {
    /// Says `text` (`{task}` in it is the task), at once.
    pub fn text(text: impl Into<String>) -> Answer {
        Answer {
            wait: Duration::ZERO,
            then: Then::Say(text.into()),
        }
    }

    /// Says `preface`, then asks for codecrew's `tool` with `input` in one fenced envelope.
    pub fn call(preface: &str, tool: &str, input: Value) -> Answer {
        Answer::text(format!("{preface}{}", fenced_call(tool, &input)))
    }

    /// Fails as a CLI does: `stderr` on its stderr, exit `code`.
    pub fn fail(code: i32, stderr: impl Into<String>) -> Answer {
        Answer {
            wait: Duration::ZERO,
            then: Then::Fail {
                code,
                stderr: stderr.into(),
            },
        }
    }

    /// Never answers: its pid in `pid-<task>` beside the agent, it sleeps two minutes.
    pub fn hang() -> Answer {
        Answer {
            wait: Duration::ZERO,
            then: Then::Hang,
        }
    }

    /// Waits `wait` and goes on to the next turns (a slow start, whatever comes after).
    pub fn pause(wait: Duration) -> Answer {
        Answer {
            wait,
            then: Then::Pause,
        }
    }

    /// The same answer, given after `wait`.
    pub fn after(mut self, wait: Duration) -> Answer {
        self.wait = wait;
        self
    }
}

/// One fenced envelope asking for codecrew's `tool`, as a model writes it: its own line,
/// a `json` fence.
pub fn fenced_call(tool: &str, input: &Value) -> String {
    format!(
        "\n```json\n{{\"type\":\"tool_use\",\"name\":\"codecrew:{tool}\",\"input\":{input}}}\n```\n"
    )
}

/// A condition a turn is chosen by.
#[derive(Clone, Debug)]
enum When {
    /// The prompt holds this text.
    PromptHas(String),
    /// The prompt does not hold this text.
    PromptLacks(String),
    /// The task starts with this text.
    TaskStarts(String),
}

/// How often a turn may answer.
#[derive(Clone, Copy, Debug)]
enum Limit {
    /// This many times in all.
    Total(u32),
    /// This many times for each task.
    PerTask(u32),
}

/// One entry of an [`AgentScript`]: the conditions that choose it and its answer.
#[derive(Clone, Debug)]
pub struct Turn {
    when: Vec<When>,
    limit: Option<Limit>,
    answer: Answer,
}

impl Turn {
    /// Answers every prompt (within its limit).
    pub fn always(answer: Answer) -> Turn {
        Turn {
            when: Vec::new(),
            limit: None,
            answer,
        }
    }

    /// Answers a prompt that holds `needle`.
    pub fn on_prompt(needle: &str, answer: Answer) -> Turn {
        Turn::always(answer).and_prompt_has(needle)
    }

    /// Answers a prompt whose task starts with `prefix` (`TASK-HANG` for `TASK-HANG-KILL`).
    pub fn on_task(prefix: &str, answer: Answer) -> Turn {
        let mut turn = Turn::always(answer);
        turn.when.push(When::TaskStarts(prefix.to_owned()));
        turn
    }

    /// Also requires the prompt to hold `needle`.
    pub fn and_prompt_has(mut self, needle: &str) -> Turn {
        self.when.push(When::PromptHas(needle.to_owned()));
        self
    }

    /// Also requires the prompt not to hold `needle`.
    pub fn and_prompt_lacks(mut self, needle: &str) -> Turn {
        self.when.push(When::PromptLacks(needle.to_owned()));
        self
    }

    /// Answers only the first `n` prompts it is chosen for.
    pub fn times(mut self, n: u32) -> Turn {
        self.limit = Some(Limit::Total(n));
        self
    }

    /// Answers only the first `n` prompts of each task it is chosen for.
    pub fn times_per_task(mut self, n: u32) -> Turn {
        self.limit = Some(Limit::PerTask(n));
        self
    }
}

/// The script of a scripted agent: its turns, and what it says when none answers.
#[derive(Clone, Debug)]
pub struct AgentScript {
    turns: Vec<Turn>,
    otherwise: Answer,
}

impl Default for AgentScript {
    fn default() -> AgentScript {
        AgentScript::new()
    }
}

/// What the agent says when no turn of its script answers, unless told otherwise.
pub const OTHERWISE: &str = "ANSWER-{task}\n";

impl AgentScript {
    /// No turns; every prompt is answered `ANSWER-<task>`.
    pub fn new() -> AgentScript {
        AgentScript {
            turns: Vec::new(),
            otherwise: Answer::text(OTHERWISE),
        }
    }

    pub fn turn(mut self, turn: Turn) -> AgentScript {
        self.turns.push(turn);
        self
    }

    /// The answer when no turn answers.
    pub fn otherwise(mut self, answer: Answer) -> AgentScript {
        self.otherwise = answer;
        self
    }

    /// The script as a POSIX shell script, run as `sh <file>` with its files (`prompts/`,
    /// its counters, `pid-<task>`) in its own folder.
    pub fn to_shell(&self) -> String {
        let mut shell = String::from(PRELUDE);
        for (index, turn) in self.turns.iter().enumerate() {
            let mut conditions: Vec<String> = turn.when.iter().map(condition).collect();
            match turn.limit {
                Some(Limit::Total(n)) => conditions.push(format!("below turn-{index} {n}")),
                Some(Limit::PerTask(n)) => {
                    conditions.push(format!("below \"turn-{index}-$task\" {n}"));
                }
                None => {}
            }
            let test = if conditions.is_empty() {
                "true".to_owned()
            } else {
                conditions.join(" && ")
            };
            shell.push_str(&format!("if {test}; then\n{}fi\n", answer(&turn.answer)));
        }
        shell.push_str(&answer(&self.otherwise));
        shell
    }
}

/// Keeps the prompt, finds the task, and defines `below NAME N` (true, and counted, the
/// first N times it is asked for NAME).
const PRELUDE: &str = r#"#!/bin/sh
dir=$(dirname "$0")
mkdir -p "$dir/prompts"
file=$(mktemp "$dir/prompts/$(date +%s%N).XXXXXX")
cat > "$file"
task=$(grep -o 'TASK-[A-Za-z0-9-]*' "$file" | tail -n 1)
below() {
    n=$(cat "$dir/$1" 2>/dev/null || echo 0)
    [ "$n" -lt "$2" ] || return 1
    echo $((n + 1)) > "$dir/$1"
}
"#;

fn condition(when: &When) -> String {
    match when {
        When::PromptHas(needle) => format!("grep -qF -- {} \"$file\"", quoted(needle)),
        When::PromptLacks(needle) => format!("! grep -qF -- {} \"$file\"", quoted(needle)),
        When::TaskStarts(prefix) => {
            format!(
                "case \"$task\" in {}*) true ;; *) false ;; esac",
                quoted(prefix)
            )
        }
    }
}

/// The shell lines that give `answer`.
fn answer(answer: &Answer) -> String {
    let mut lines = String::new();
    if !answer.wait.is_zero() {
        lines.push_str(&format!("    sleep {}\n", answer.wait.as_secs_f64()));
    }
    match &answer.then {
        Then::Say(text) => {
            let words: Vec<String> = text.split("{task}").map(quoted).collect();
            let format = "%s".repeat(2 * words.len() - 1);
            lines.push_str(&format!(
                "    printf '{format}' {}\n    exit 0\n",
                words.join(" \"$task\" ")
            ));
        }
        Then::Fail { code, stderr } => {
            lines.push_str(&format!(
                "    printf '%s' {} >&2\n    exit {code}\n",
                quoted(stderr)
            ));
        }
        Then::Hang => {
            lines.push_str("    printf '%s' \"$$\" > \"$dir/pid-$task\"\n    exec sleep 120\n");
        }
        Then::Pause => {}
    }
    lines
}

/// `text` as one single-quoted shell word.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}
