use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::session::{JobEvent, JobReport, StopReason};
use crate::usage::JobUsage;
use codecrew_intercept::ToolCall;
use codecrew_tools::{Mode, Status, ToolResult};

fn new_run(task: &str) -> NewRun {
    NewRun {
        id: None,
        workspace: "/w".to_owned(),
        command: "query".to_owned(),
        mode: "query".to_owned(),
        task: task.to_owned(),
        input: None,
        continues: None,
    }
}

fn job<'a>(agent: &'a str, task: &'a str) -> write::NewJob<'a> {
    write::NewJob {
        agent,
        cli: "command",
        model: None,
        task,
        thread: None,
        parent: None,
        depth: 0,
    }
}

fn report(agent: &str, answer: &str) -> JobReport {
    JobReport {
        agent: agent.to_owned(),
        provider: "command".to_owned(),
        model: Some("m1".to_owned()),
        mode: Mode::Query,
        success: true,
        response: answer.to_owned(),
        turns: 1,
        tool_calls: Vec::new(),
        session_id: Some("s-1".to_owned()),
        duration_ms: 12,
        error: None,
        error_code: None,
        stop_reason: StopReason::Answered,
        usage: JobUsage::default(),
        failure: None,
        data: None,
        schema_errors: Vec::new(),
    }
}

fn all(store: &Store) -> Vec<RunSummary> {
    store
        .list(&Filter {
            limit: 1000,
            ..Filter::default()
        })
        .unwrap()
}

#[test]
fn a_new_store_is_migrated_private_and_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/codecrew/runs.db");
    let store = Store::open(&path).unwrap();
    let version: i64 = store
        .conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, schema::VERSION);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert!(all(&store).is_empty());
    drop(store);
    // Opened again: nothing migrated twice.
    assert!(all(&Store::open(&path).unwrap()).is_empty());
}

#[test]
fn a_newer_schema_is_refused_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let store = Store::open(&path).unwrap();
    store
        .conn
        .pragma_update(None, "user_version", schema::VERSION + 1)
        .unwrap();
    drop(store);
    assert!(matches!(Store::open(&path), Err(StoreError::Newer { .. })));
}

#[test]
fn a_run_is_written_as_it_goes_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let log = RunLog::try_start(&path, &new_run("explain the parser")).unwrap();
    assert_eq!(log.job_started(&job("alice", "explain the parser")), 0);
    let call = ToolCall {
        name: "codecrew:read_file".to_owned(),
        tool: "read_file".to_owned(),
        input: serde_json::json!({"path": "src/lib.rs"}),
    };
    log.event(
        0,
        &JobEvent::ToolCall {
            id: "call_1".to_owned(),
            call,
        },
    );
    log.event(
        0,
        &JobEvent::ToolResult(ToolResult {
            tool_call_id: "call_1".to_owned(),
            tool: "read_file".to_owned(),
            status: Status::Ok,
            output: serde_json::Value::String("x".repeat(write::OUTPUT_CAP + 10)),
            error: None,
            duration_ms: 3,
            decided: None,
        }),
    );
    // Before the job ends, the run is there, not finished, with its call.
    assert!(log.flush());
    let store = Store::open(&path).unwrap();
    let shown = store.show(&log.id()[..8]).unwrap();
    assert_eq!(shown.run.status, RunStatus::NotFinished);
    assert_eq!(shown.jobs[0].answer, None);
    let call = &shown.jobs[0].tool_calls[0];
    assert_eq!(call.name, "read_file");
    assert_eq!(call.call_id.as_deref(), Some("call_1"));
    assert_eq!(call.input["path"], "src/lib.rs");
    assert!(call.output_cut);
    assert!(call.output.as_str().unwrap().len() <= write::OUTPUT_CAP);

    log.job_ended(0, &report("alice", "it reads tokens"));
    assert!(log.ended(0));
    let shown = store.show(log.id()).unwrap();
    assert_eq!(shown.run.status, RunStatus::Ok);
    assert_eq!(shown.run.agents, ["alice"]);
    let job = &shown.jobs[0];
    assert_eq!(job.answer.as_deref(), Some("it reads tokens"));
    assert_eq!(job.session_id.as_deref(), Some("s-1"));
    assert_eq!(job.model.as_deref(), Some("m1"));
    assert_eq!(job.success, Some(true));
    assert_eq!(job.stop_reason.as_deref(), Some("answered"));
    assert!(job.usage.is_some());

    let hits = store.search("tokens", 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].run.id, log.id());
    assert_eq!(hits[0].found_in, "job 0");
    assert_eq!(store.search("parser", 10).unwrap()[0].found_in, "task");
    assert!(store.search("\"unbalanced OR", 10).unwrap().is_empty());
}

#[test]
fn a_run_never_ended_stays_not_finished() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let log = RunLog::try_start(&path, &new_run("killed")).unwrap();
    log.job_started(&job("alice", "killed"));
    // The process dies: nothing more is written.
    drop(log);
    let store = Store::open(&path).unwrap();
    let runs = all(&store);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::NotFinished);
    assert_eq!(runs[0].ended, None);
    let open = store
        .list(&Filter {
            limit: 10,
            status: Some(RunStatus::NotFinished),
            ..Filter::default()
        })
        .unwrap();
    assert_eq!(open.len(), 1);
    let failed = store
        .list(&Filter {
            limit: 10,
            status: Some(RunStatus::Failed),
            ..Filter::default()
        })
        .unwrap();
    assert!(failed.is_empty());
}

#[test]
fn twenty_writers_at_once_lose_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let writers: Vec<_> = (0..20)
        .map(|n| {
            let path = path.clone();
            std::thread::spawn(move || {
                // Each its own connection, as each codecrew process has.
                let log = RunLog::try_start(&path, &new_run(&format!("task {n}"))).unwrap();
                for _ in 0..3 {
                    let index = log.job_started(&job("alice", "t"));
                    log.job_ended(index, &report("alice", &format!("answer {n} {index}")));
                }
                assert!(log.ended(0), "a write was lost");
                log.id().to_owned()
            })
        })
        .collect();
    let ids: Vec<String> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    let store = Store::open(&path).unwrap();
    let runs = all(&store);
    assert_eq!(runs.len(), 20);
    for id in &ids {
        let shown = store.show(id).unwrap();
        assert_eq!(shown.run.status, RunStatus::Ok);
        assert_eq!(shown.jobs.len(), 3);
        assert!(shown.jobs.iter().all(|job| job.answer.is_some()));
    }
}

#[test]
fn an_unwritable_store_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "not a folder").unwrap();
    let path = blocked.join("runs.db");
    assert!(matches!(Store::open(&path), Err(StoreError::File(_))));
    assert!(RunLog::try_start(&path, &new_run("t")).is_err());
    // Said once on the writer's thread; the run goes on, and its end says it was not kept.
    assert!(
        !RunLog::start(&path, &new_run("t"), u64::MAX)
            .unwrap()
            .ended(0)
    );
    // Not a database at all.
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![7u8; 4096]).unwrap();
    std::fs::set_permissions(&garbage, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(matches!(
        Store::open(&garbage),
        Err(StoreError::Sqlite { .. })
    ));
}

/// The store holds the agents' answers: one that others may read, that is a link (to a
/// file another program would have codecrew write), or that is not a file is not used.
#[test]
fn a_store_that_is_not_the_users_alone_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared.db");
    std::fs::write(&shared, "").unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o644)).unwrap();
    let error = Store::open(&shared).err().unwrap();
    assert!(error.to_string().contains("mode must be 0600"), "{error}");
    assert!(
        !RunLog::start(&shared, &new_run("t"), u64::MAX)
            .unwrap()
            .ended(0)
    );
    assert_eq!(std::fs::read(&shared).unwrap(), b"");
    let target = dir.path().join("elsewhere");
    std::fs::write(&target, "theirs").unwrap();
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let error = Store::open(&link).err().unwrap();
    assert!(error.to_string().contains("symbolic link"), "{error}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
    let folder = dir.path().join("folder.db");
    std::fs::create_dir(&folder).unwrap();
    assert!(Store::open(&folder).is_err());
}

#[test]
fn ids_are_shown_by_their_shortest_unique_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("runs.db")).unwrap();
    for id in ["abcdef0011112222", "abcdef0099998888", "123456aaaaaaaaaa"] {
        store
            .conn
            .execute(
                "INSERT INTO runs (id, started, pid, workspace, command, mode, task)
                 VALUES (?1, 0, 1, '/w', 'query', 'query', 't')",
                [id],
            )
            .unwrap();
    }
    assert_eq!(store.short_id("123456aaaaaaaaaa").unwrap(), "123456");
    assert_eq!(store.short_id("abcdef0011112222").unwrap(), "abcdef001");
    assert_eq!(store.resolve("123456").unwrap(), "123456aaaaaaaaaa");
    assert_eq!(store.resolve("ABCDEF009").unwrap(), "abcdef0099998888");
    assert!(matches!(
        store.resolve("abcdef"),
        Err(StoreError::Ambiguous { ids, .. }) if ids.len() == 2
    ));
    assert!(matches!(
        store.resolve("ffff"),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(store.resolve("x%"), Err(StoreError::BadId(_))));
    assert_eq!(store.remove("1234").unwrap(), "123456aaaaaaaaaa");
    assert_eq!(store.prune(1).unwrap(), 2);
    assert!(all(&store).is_empty());
}

fn result(tool: &str, output: &str, decided: Option<codecrew_tools::Decided>) -> JobEvent {
    JobEvent::ToolResult(ToolResult {
        tool_call_id: "1".to_owned(),
        tool: tool.to_owned(),
        status: Status::Ok,
        output: serde_json::Value::String(output.to_owned()),
        error: None,
        duration_ms: 1,
        decided,
    })
}

/// Two calls of one tool whose results come back in the other order: each input is
/// recorded with its own result, paired by the call's id, not by the tool's name.
#[test]
fn a_call_is_paired_with_its_result_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let log = RunLog::try_start(&path, &new_run("read two files")).unwrap();
    let job = log.job_started(&job("alice", "read two files"));
    for (id, file) in [("call_a", "a.rs"), ("call_b", "b.rs")] {
        let call = ToolCall {
            name: "codecrew:read_file".to_owned(),
            tool: "read_file".to_owned(),
            input: serde_json::json!({ "path": file }),
        };
        log.event(
            job,
            &JobEvent::ToolCall {
                id: id.to_owned(),
                call,
            },
        );
    }
    for (id, output) in [("call_b", "what b.rs holds"), ("call_a", "what a.rs holds")] {
        let mut answered = result("read_file", output, None);
        if let JobEvent::ToolResult(result) = &mut answered {
            result.tool_call_id = id.to_owned();
        }
        log.event(job, &answered);
    }
    assert!(log.ended(0));
    let store = Store::open(&path).unwrap();
    let calls = &store.show(log.id()).unwrap().jobs[0].tool_calls;
    let seen: Vec<(Option<&str>, &serde_json::Value, &serde_json::Value)> = calls
        .iter()
        .map(|call| (call.call_id.as_deref(), &call.input["path"], &call.output))
        .collect();
    assert_eq!(
        seen,
        [
            (
                Some("call_b"),
                &serde_json::json!("b.rs"),
                &serde_json::json!("what b.rs holds")
            ),
            (
                Some("call_a"),
                &serde_json::json!("a.rs"),
                &serde_json::json!("what a.rs holds")
            ),
        ]
    );
}

#[test]
fn who_decided_is_kept_and_what_a_guarded_call_read_is_not() {
    use codecrew_tools::{Decided, DecidedBy};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let log = RunLog::try_start(&path, &new_run("read the env")).unwrap();
    let job = log.job_started(&job("alice", "read the env"));
    let asked = Decided {
        by: DecidedBy::User,
        guarded: true,
    };
    let unattended = Decided {
        by: DecidedBy::Policy,
        guarded: false,
    };
    log.event(job, &result("read_file", "API_KEY=hunter2", Some(asked)));
    log.event(job, &result("read_file", "fn main() {}", Some(unattended)));
    log.event(job, &result("read_file", "bad input", None));
    assert!(log.ended(0));
    let store = Store::open(&path).unwrap();
    let calls = &store.show(log.id()).unwrap().jobs[0].tool_calls;
    assert_eq!(calls[0].decided_by.as_deref(), Some("user"));
    assert!(calls[0].output_withheld);
    assert_eq!(calls[0].output, write::WITHHELD);
    assert_eq!(calls[1].decided_by.as_deref(), Some("policy"));
    assert!(!calls[1].output_withheld);
    assert_eq!(calls[1].output, "fn main() {}");
    assert_eq!(calls[2].decided_by, None);
    // Nowhere in the file: not in a table, not in the search index.
    drop(store);
    let bytes = std::fs::read(&path).unwrap();
    let wal = std::fs::read(path.with_extension("db-wal")).unwrap_or_default();
    let needle = b"hunter2";
    assert!(!bytes.windows(needle.len()).any(|w| w == needle));
    assert!(!wal.windows(needle.len()).any(|w| w == needle));
}

#[test]
fn a_sub_agents_job_is_kept_under_its_caller() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let log = RunLog::try_start(&path, &new_run("ask bob")).unwrap();
    let caller = log.job_started(&job("alice", "ask bob"));
    let sub = log.job_started(&write::NewJob {
        parent: Some(caller),
        depth: 1,
        ..job("bob", "what is X?")
    });
    log.job_ended(sub, &report("bob", "X is Y"));
    log.job_ended(caller, &report("alice", "bob says X is Y"));
    assert!(log.ended(0));
    let store = Store::open(&path).unwrap();
    let jobs = store.show(log.id()).unwrap().jobs;
    assert_eq!(
        (jobs[0].agent.as_str(), jobs[0].parent, jobs[0].depth),
        ("alice", None, 0)
    );
    assert_eq!(
        (jobs[1].agent.as_str(), jobs[1].parent, jobs[1].depth),
        ("bob", Some(0), 1)
    );
    // A sub-agent's answer is not one `-c` goes on from.
    let earlier = store.earlier(log.id()).unwrap();
    assert_eq!(earlier.agents().collect::<Vec<_>>(), ["alice"]);
}

fn answered_run(path: &std::path::Path, run: NewRun, answers: &[(&str, &str, &str)]) -> String {
    let log = RunLog::try_start(path, &run).unwrap();
    for (agent, task, answer) in answers {
        let index = log.job_started(&job(agent, task));
        let mut report = report(agent, answer);
        report.session_id = Some(format!("{agent}-session"));
        log.job_ended(index, &report);
    }
    assert!(log.ended(0));
    log.id().to_owned()
}

#[test]
fn going_on_gives_each_agent_its_session_and_the_chain_of_its_exchanges() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let first = answered_run(
        &path,
        new_run("one"),
        &[("alice", "one", "1"), ("bob", "one", "b1")],
    );
    let second = answered_run(
        &path,
        NewRun {
            continues: Some(first.clone()),
            ..new_run("two")
        },
        &[("alice", "two", "2")],
    );
    let mut elsewhere = new_run("other");
    elsewhere.workspace = "/elsewhere".to_owned();
    answered_run(&path, elsewhere, &[("carol", "other", "c")]);
    // A run no agent answered is not gone on from.
    let failed = RunLog::try_start(&path, &new_run("failed")).unwrap();
    let index = failed.job_started(&job("alice", "failed"));
    let mut report_failed = report("alice", "");
    report_failed.success = false;
    failed.job_ended(index, &report_failed);
    assert!(failed.ended(1));

    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.last_answered_in("/w", None).unwrap(),
        Some(second.clone())
    );
    assert_eq!(
        store.last_answered_in("/w", Some(&second)).unwrap(),
        Some(first.clone())
    );
    assert_eq!(store.last_answered_in("/nowhere", None).unwrap(), None);
    let earlier = store.earlier(&second[..8]).unwrap();
    assert_eq!(earlier.run, second);
    assert_eq!(earlier.agents().collect::<Vec<_>>(), ["alice", "bob"]);
    let alice = earlier.continuation("alice", "command");
    assert_eq!(alice.session_id.as_deref(), Some("alice-session"));
    assert_eq!(
        alice.earlier,
        [
            ("one".to_owned(), "1".to_owned()),
            ("two".to_owned(), "2".to_owned())
        ]
    );
    // Another CLI cannot resume the session; it gets the exchanges.
    let moved = earlier.continuation("alice", "claude");
    assert_eq!(moved.session_id, None);
    assert_eq!(moved.earlier.len(), 2);
    assert_eq!(earlier.model_for("alice", "command").as_deref(), Some("m1"));
    assert!(earlier.continuation("dave", "command").earlier.is_empty());
    assert!(matches!(
        store.earlier(failed.id()),
        Err(StoreError::NothingToResume(_))
    ));
}

#[test]
fn a_store_of_the_first_schema_is_migrated_with_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(schema::MIGRATIONS[0]).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (id, started, pid, workspace, command, mode, task)
                 VALUES ('00112233aabbccdd', 1, 1, '/w', 'query', 'query', 'old');
             INSERT INTO jobs (run, idx, agent, cli, task, started, success, answer)
                 VALUES ('00112233aabbccdd', 0, 'alice', 'command', 'old', 1, 1, 'kept');
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let store = Store::open(&path).unwrap();
    let shown = store.show("00112233").unwrap();
    assert_eq!(shown.run.continues, None);
    assert_eq!((shown.jobs[0].parent, shown.jobs[0].depth), (None, 0));
    assert_eq!(store.earlier("00112233").unwrap().agents().count(), 1);
    let version: i64 = store
        .conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, schema::VERSION);
}

#[test]
fn the_store_is_kept_under_its_bound_by_removing_the_oldest_finished_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    // 60 runs of ~40 KB answers: ~2.4 MB, over the smallest bound (1 MiB).
    let mut ids = Vec::new();
    for n in 0..60 {
        let answer = format!("{n} ").repeat(20_000);
        ids.push(answered_run(
            &path,
            new_run(&format!("run {n}")),
            &[("alice", "t", &answer)],
        ));
    }
    // One not finished, the oldest of all: never removed.
    let open = RunLog::try_start(&path, &new_run("still going")).unwrap();
    assert!(open.flush());
    let store = Store::open(&path).unwrap();
    store
        .conn
        .execute("UPDATE runs SET started = 0 WHERE id = ?1", [open.id()])
        .unwrap();
    let removed = store.keep_under(0).unwrap();
    assert!(removed > 20 && removed < 60, "{removed}");
    assert!(store.used_bytes().unwrap() <= read::MIN_BOUND);
    let left: Vec<String> = all(&store).into_iter().map(|run| run.id).collect();
    assert!(left.contains(&open.id().to_owned()));
    // The newest are kept, the oldest gone.
    assert!(left.contains(ids.last().unwrap()));
    assert!(!left.contains(&ids[0]));
    // Under the bound: nothing more is removed.
    assert_eq!(store.keep_under(u64::MAX).unwrap(), 0);
}

/// A run whose id was chosen before it started (one in the background: its parent
/// printed the id) is recorded under it; `progress` follows it to its end.
#[test]
fn a_run_recorded_under_a_chosen_id_is_followed_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let id = new_id();
    assert_eq!(id.len(), 16);
    assert!(id.bytes().all(|byte| byte.is_ascii_hexdigit()));
    let store = Store::open(&path).unwrap();
    assert_eq!(store.progress(&id).unwrap(), None);
    let log = RunLog::try_start(
        &path,
        &NewRun {
            id: Some(id.clone()),
            ..new_run("in the background")
        },
    )
    .unwrap();
    assert_eq!(log.id(), id);
    let index = log.job_started(&job("alice", "in the background"));
    assert!(log.flush());
    let progress = store.progress(&id).unwrap().unwrap();
    assert_eq!(progress.pid, i64::from(std::process::id()));
    assert_eq!(progress.ended_ms, None);
    assert_eq!(progress.exit_code, None);
    // This process records it, and runs.
    assert!(progress.running());
    let unfinished = store.unfinished().unwrap();
    assert_eq!(unfinished.len(), 1);
    assert_eq!(unfinished[0].id, id);
    assert!(unfinished[0].running());

    log.job_ended(index, &report("alice", "done"));
    assert!(log.ended(130));
    let progress = store.progress(&id).unwrap().unwrap();
    assert!(progress.ended_ms.is_some());
    assert_eq!(progress.exit_code, Some(130));
    assert!(!progress.running());
    assert!(store.unfinished().unwrap().is_empty());
    // Only the whole id: a prefix is `resolve`'s.
    assert_eq!(store.progress(&id[..8]).unwrap(), None);
}

/// A run whose process is gone without ending it (`kill -9`, a restart) is not running,
/// though its pid may be another process's now.
#[test]
fn a_run_whose_process_is_gone_is_unfinished_and_not_running() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("runs.db")).unwrap();
    let me = std::process::id();
    // Recorded by this pid a day ago: by a process that had it before this one.
    let day_ago = now_ms() - 86_400_000;
    for (id, pid, started) in [
        ("aaaaaaaaaaaaaaaa", i64::from(me), day_ago),
        ("bbbbbbbbbbbbbbbb", i64::from(i32::MAX), now_ms()),
        ("cccccccccccccccc", i64::from(me), now_ms()),
    ] {
        store
            .conn
            .execute(
                "INSERT INTO runs (id, started, pid, workspace, command, mode, task)
                 VALUES (?1, ?2, ?3, '/w', 'query', 'query', 't')",
                rusqlite::params![id, started, pid],
            )
            .unwrap();
    }
    let unfinished = store.unfinished().unwrap();
    let running: Vec<(&str, bool)> = unfinished
        .iter()
        .map(|run| (run.id.as_str(), run.running()))
        .collect();
    // Newest first; the third is this process's own.
    assert_eq!(running.len(), 3);
    assert!(running.contains(&("aaaaaaaaaaaaaaaa", false)));
    assert!(running.contains(&("bbbbbbbbbbbbbbbb", false)));
    assert!(running.contains(&("cccccccccccccccc", true)));
    assert_eq!(unfinished.last().unwrap().id, "aaaaaaaaaaaaaaaa");
    assert!(
        !store
            .progress("aaaaaaaaaaaaaaaa")
            .unwrap()
            .unwrap()
            .running()
    );
}

/// A run's later commits (its end, which codecrew's exit waits for) run no checkpoint;
/// each run's first folds the WAL in, which never grows past its bound by more than one
/// run's pages.
#[test]
fn the_wal_stays_short_though_a_runs_end_never_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let answer = "an answer that takes some pages ".repeat(400);
    for n in 0..40 {
        let log = RunLog::start(&path, &new_run(&format!("task {n}")), u64::MAX).unwrap();
        let index = log.job_started(&job("alice", "task"));
        log.job_ended(index, &report("alice", &answer));
        assert!(log.ended(0));
    }
    let wal = std::fs::metadata(path.with_extension("db-wal"))
        .unwrap()
        .len();
    // 64 pages of 4 KiB (and each frame's header), plus one run's.
    assert!(wal < 2 * 64 * 4_120, "the WAL is {wal} bytes");
    let store = Store::open(&path).unwrap();
    assert_eq!(all(&store).len(), 40);
}

/// The WAL's frames and those already folded into the database, from the wal-index
/// (`-shm`): `mxFrame` of its header, `nBackfill` of its checkpoint record.
fn wal_frames(path: &std::path::Path) -> (u32, u32) {
    let shm = std::fs::read(path.with_extension("db-shm")).unwrap();
    let word = |at: usize| u32::from_ne_bytes(shm[at..at + 4].try_into().unwrap());
    (word(16), word(96))
}

#[test]
fn a_runs_later_commits_leave_the_checkpoint_to_the_next_runs_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let answer = |pages: usize| "word ".repeat(pages * 800);
    // A run whose end is past the WAL's bound (64 pages) but under 256: not folded in.
    let log = RunLog::try_start(&path, &new_run("first")).unwrap();
    let index = log.job_started(&job("alice", "first"));
    log.job_ended(index, &report("alice", &answer(40)));
    assert!(log.ended(0));
    let (frames, folded) = wal_frames(&path);
    assert!(frames > 64, "{frames} frames");
    assert!(
        folded < frames,
        "checkpointed at the run's end: {folded} of {frames}"
    );
    // The next run's first commit folds it in.
    let next = RunLog::try_start(&path, &new_run("second")).unwrap();
    let (frames, folded) = wal_frames(&path);
    assert!(folded > 0, "not checkpointed: {folded} of {frames}");
    // Within a run, past four times the bound, a commit folds it in all the same.
    let index = next.job_started(&job("alice", "second"));
    next.job_ended(index, &report("alice", &answer(400)));
    assert!(next.flush());
    let (frames, folded) = wal_frames(&path);
    assert_eq!(folded, frames, "a long run's WAL was never folded in");
    assert!(next.ended(0));
}

fn indexed_texts(store: &Store) -> i64 {
    store
        .conn
        .query_row("SELECT count(*) FROM texts", [], |row| row.get(0))
        .unwrap()
}

/// A run writes nothing to the search index: `logs search` puts what is new in it
/// first, once (a second search adds nothing), and finds it.
#[test]
fn the_search_index_is_filled_by_the_search_not_by_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    answered_run(
        &path,
        new_run("explain the lexer"),
        &[("alice", "explain the lexer", "it splits tokens")],
    );
    let store = Store::open(&path).unwrap();
    assert_eq!(indexed_texts(&store), 0, "a run wrote to the index");
    assert_eq!(store.search("tokens", 10).unwrap().len(), 1);
    assert_eq!(indexed_texts(&store), 2, "its task and its answer");
    assert_eq!(store.search("lexer", 10).unwrap()[0].found_in, "task");
    assert_eq!(indexed_texts(&store), 2, "indexed twice");
    // A run recorded after the search is found by the next.
    answered_run(
        &path,
        new_run("explain the parser"),
        &[("bob", "explain the parser", "it builds trees")],
    );
    assert_eq!(store.search("trees", 10).unwrap()[0].found_in, "job 0");
}

/// A store whose runs were indexed as they were recorded (schema 5) keeps its index as
/// it is: nothing is indexed twice.
#[test]
fn a_store_indexed_by_its_runs_is_not_indexed_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        for migration in &schema::MIGRATIONS[..5] {
            conn.execute_batch(migration).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO runs (id, started, pid, workspace, command, mode, task, ended, exit_code)
                 VALUES ('00112233aabbccdd', 1, 1, '/w', 'query', 'query', 'old task', 2, 0);
             INSERT INTO jobs (run, idx, agent, cli, task, started, success, answer)
                 VALUES ('00112233aabbccdd', 0, 'alice', 'command', 'old task', 1, 1, 'kept words');
             INSERT INTO texts (run, job, text) VALUES ('00112233aabbccdd', NULL, 'old task');
             INSERT INTO texts (run, job, text) VALUES ('00112233aabbccdd', 0, 'kept words');
             PRAGMA user_version = 5;",
        )
        .unwrap();
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.search("kept", 10).unwrap().len(), 1);
    assert_eq!(store.search("old", 10).unwrap().len(), 1);
    assert_eq!(indexed_texts(&store), 2);
}
