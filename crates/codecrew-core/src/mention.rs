//! `@agent` and `@agent:model` mentions in a task.
//!
//! A mention starts at the beginning of the text or after whitespace (so `me@example.com`
//! and `foo@bar` are not mentions), names an agent (`[A-Za-z0-9_-]+`) and optionally a
//! model after a colon (`[A-Za-z0-9._:/-]+`, trailing `.` `:` `/` dropped as punctuation).
//! All mentions in one argument share that argument's task; each argument is its own task.

/// One `@agent[:model]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    pub agent: String,
    pub model: Option<String>,
}

/// One argument of `query`/`execute`: its mentions and its text without them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub mentions: Vec<Mention>,
    pub text: String,
}

/// One agent running one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub agent: String,
    pub model: Option<String>,
    pub task: String,
}

fn is_agent_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn is_model_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '/' | '-')
}

/// Splits one argument into its mentions and its text.
pub fn parse_task(argument: &str) -> Task {
    let mut mentions: Vec<Mention> = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    for word in argument.split_whitespace() {
        match parse_mention(word) {
            Some((mention, rest)) => {
                if !mentions.contains(&mention) {
                    mentions.push(mention);
                }
                if !rest.is_empty() {
                    words.push(rest);
                }
            }
            None => words.push(word),
        }
    }
    Task {
        mentions,
        text: words.join(" "),
    }
}

/// As [`parse_task`], keeping the text's layout (its lines and indentation, a code block
/// in it): each mention is taken out where it stands, nothing else changes. For a prompt
/// written elsewhere than a command line (an editor's).
pub fn parse_prompt(prompt: &str) -> Task {
    let mut mentions: Vec<Mention> = Vec::new();
    let mut text = String::with_capacity(prompt.len());
    let mut kept = 0;
    let mut at = 0;
    for word in prompt.split_whitespace() {
        // `split_whitespace` gives slices of `prompt`: each word's offset follows the last.
        let Some(start) = prompt
            .get(at..)
            .and_then(|rest| rest.find(word))
            .map(|i| i + at)
        else {
            break;
        };
        at = start + word.len();
        let Some((mention, rest)) = parse_mention(word) else {
            continue;
        };
        if !mentions.contains(&mention) {
            mentions.push(mention);
        }
        text.push_str(prompt.get(kept..start).unwrap_or_default());
        text.push_str(rest);
        kept = at;
        // The space after a mention goes with it.
        if rest.is_empty()
            && prompt
                .get(kept..)
                .is_some_and(|after| after.starts_with(' '))
        {
            kept += 1;
        }
    }
    text.push_str(prompt.get(kept..).unwrap_or_default());
    Task {
        mentions,
        text: text.trim().to_owned(),
    }
}

/// `@agent[:model]` at the start of a word, and what follows it in the word (punctuation
/// such as the comma in `@claude,`).
fn parse_mention(word: &str) -> Option<(Mention, &str)> {
    let body = word.strip_prefix('@')?;
    let agent_len = body.find(|c| !is_agent_char(c)).unwrap_or(body.len());
    if agent_len == 0 {
        return None;
    }
    let (agent, mut rest) = body.split_at(agent_len);
    let mut model = None;
    if let Some(after) = rest.strip_prefix(':') {
        let len = after.find(|c| !is_model_char(c)).unwrap_or(after.len());
        let candidate = after[..len].trim_end_matches(['.', ':', '/']);
        let consumed = candidate.len();
        if !candidate.is_empty() {
            model = Some(candidate.to_owned());
            rest = &after[consumed..];
        }
    }
    // `@claude's` or `@user@host` are words, not mentions.
    if rest.starts_with(|c: char| c == '@' || c == '\'' || c.is_alphanumeric()) {
        return None;
    }
    Some((
        Mention {
            agent: agent.to_owned(),
            model,
        },
        rest,
    ))
}

/// The jobs of a command line: one per mention per argument; an argument with no mention
/// goes to the default agent.
pub fn jobs(arguments: &[String], default_agent: &str) -> Vec<Job> {
    jobs_for(arguments, &[default_agent])
}

/// As [`jobs`], an argument with no mention going to each of `agents` (those of the run
/// `-c` goes on from).
pub fn jobs_for(arguments: &[String], agents: &[&str]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for argument in arguments {
        let task = parse_task(argument);
        if task.mentions.is_empty() {
            for agent in agents {
                jobs.push(Job {
                    agent: (*agent).to_owned(),
                    model: None,
                    task: task.text.clone(),
                });
            }
        } else {
            for mention in task.mentions {
                jobs.push(Job {
                    agent: mention.agent,
                    model: mention.model,
                    task: task.text.clone(),
                });
            }
        }
    }
    jobs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(agent: &str, model: Option<&str>) -> Mention {
        Mention {
            agent: agent.to_owned(),
            model: model.map(str::to_owned),
        }
    }

    #[test]
    fn a_prompt_keeps_its_layout_without_its_mentions() {
        let task = parse_prompt(
            "@claude @gemini:pro compare\n\n```rust\n    fn a() {}\n```\nthanks @claude, bye",
        );
        assert_eq!(task.mentions, [m("claude", None), m("gemini", Some("pro"))]);
        assert_eq!(
            task.text,
            "compare\n\n```rust\n    fn a() {}\n```\nthanks , bye"
        );
        let plain = parse_prompt("  no mention\n  here  ");
        assert!(plain.mentions.is_empty());
        assert_eq!(plain.text, "no mention\n  here");
        assert_eq!(parse_prompt("mail a@b.c or @claude's").mentions, []);
        assert_eq!(parse_prompt("").text, "");
    }

    #[test]
    fn mentions_and_text() {
        let task = parse_task("@claude:haiku How do I use codecrew?");
        assert_eq!(task.mentions, [m("claude", Some("haiku"))]);
        assert_eq!(task.text, "How do I use codecrew?");
        let task = parse_task("@claude @gemini:gemini-2.5-flash compare these");
        assert_eq!(
            task.mentions,
            [m("claude", None), m("gemini", Some("gemini-2.5-flash"))]
        );
        assert_eq!(task.text, "compare these");
    }

    #[test]
    fn models_with_dots_slashes_and_colons() {
        let task = parse_task("ask @codex:gpt-5.5 and @my_llm:openrouter/meta:llama-3.1.");
        assert_eq!(
            task.mentions,
            [
                m("codex", Some("gpt-5.5")),
                m("my_llm", Some("openrouter/meta:llama-3.1"))
            ]
        );
        assert_eq!(task.text, "ask and .");
    }

    #[test]
    fn not_mentions() {
        for text in [
            "mail me@example.com please",
            "foo@bar",
            "@ alone",
            "@@double",
            "@claude's idea",
            "@user@host",
        ] {
            assert!(parse_task(text).mentions.is_empty(), "{text}");
            assert_eq!(
                parse_task(text).text,
                text.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
    }

    #[test]
    fn punctuation_after_a_mention_stays_in_the_text() {
        let task = parse_task("@claude, @gemini: review this");
        assert_eq!(task.mentions, [m("claude", None), m("gemini", None)]);
        assert_eq!(task.text, ", : review this");
    }

    #[test]
    fn jobs_per_argument() {
        let args = vec![
            "@claude @gemini compare".to_owned(),
            "no mention here".to_owned(),
            "@claude @claude twice".to_owned(),
        ];
        let jobs = jobs(&args, "claude");
        let summary: Vec<(&str, &str)> = jobs
            .iter()
            .map(|j| (j.agent.as_str(), j.task.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("claude", "compare"),
                ("gemini", "compare"),
                ("claude", "no mention here"),
                ("claude", "twice"),
            ]
        );
    }
}
