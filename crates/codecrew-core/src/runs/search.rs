//! `codecrew logs search`: the search index filled with what runs recorded since it
//! last was, then searched.

use rusqlite::params;
use serde::Serialize;

use super::read::SUMMARY;
use super::{Result, RunSummary, Store};

/// A run whose task or answers hold what was searched.
#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    #[serde(flatten)]
    pub run: RunSummary,
    /// Where it was found: `task`, or the answer of job N.
    pub found_in: String,
    /// The words around it.
    pub snippet: String,
}

impl Store {
    /// Puts into the search index the tasks and answers recorded since it was last
    /// filled: runs leave it to the search, which is rare, rather than pay for its pages
    /// on the way to each answer (issue 52).
    fn index_pending(&self) -> Result<()> {
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(|e| self.sqlite(e))?;
        tx.execute_batch(
            "INSERT INTO texts (run, job, text)
                 SELECT id, NULL, task FROM runs WHERE task_indexed = 0;
             UPDATE runs SET task_indexed = 1 WHERE task_indexed = 0;
             INSERT INTO texts (run, job, text)
                 SELECT run, idx, answer FROM jobs WHERE answer_indexed = 0 AND answer <> '';
             UPDATE jobs SET answer_indexed = 1 WHERE answer_indexed = 0;",
        )
        .map_err(|e| self.sqlite(e))?;
        tx.commit().map_err(|e| self.sqlite(e))
    }

    /// The runs whose task or answers hold `text` (every word of it, as SQLite's FTS5
    /// reads words), newest first.
    pub fn search(&self, text: &str, limit: usize) -> Result<Vec<SearchHit>> {
        self.index_pending()?;
        // Each word quoted: the user's text is words, never FTS5's query syntax.
        let query: Vec<String> = text
            .split_whitespace()
            .map(|word| format!("\"{}\"", word.replace('"', "\"\"")))
            .collect();
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let found: Vec<(String, Option<i64>, String)> = (|| {
            let mut statement = self.conn.prepare(
                "SELECT t.run, t.job, snippet(texts, 2, '', '', '…', 12)
                 FROM texts t JOIN runs r ON r.id = t.run
                 WHERE texts MATCH ?1 ORDER BY r.started DESC, t.job LIMIT ?2",
            )?;
            let rows = statement.query_map(params![query.join(" "), limit], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })()
        .map_err(|e| self.sqlite(e))?;
        let mut hits = Vec::new();
        let sql = format!("{SUMMARY} WHERE id = ?1");
        for (run, job, snippet) in found {
            let Some(summary) = self
                .query_runs(&sql, params![run])
                .map_err(|e| self.sqlite(e))?
                .pop()
            else {
                continue;
            };
            hits.push(SearchHit {
                run: summary,
                found_in: job.map_or_else(|| "task".to_owned(), |job| format!("job {job}")),
                snippet: snippet.split_whitespace().collect::<Vec<_>>().join(" "),
            });
        }
        Ok(hits)
    }
}
