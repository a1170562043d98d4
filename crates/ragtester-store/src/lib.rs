//! The run store: one SQLite database per run directory (`store.sqlite`) indexing the run's documents, cases,
//! configurations, answers and verdicts. The JSONL files beside it are the portable record; the store is what
//! lets a run commit each cell as it finishes, resume, and be queried by the report and UI.
//!
//! Only this crate knows SQL. Records go in and come out as the core types, stored as their JSON.

use anyhow::{Context, Result};
use ragtester_core::{Answer, Configuration, Document, TestCase, Verdict};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Serialize, de::DeserializeOwned};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

pub const STORE_FILE: &str = "store.sqlite";

pub struct RunStore {
    conn: Mutex<Connection>,
}

/// What the store keeps beside the records, one value per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meta {
    /// The run's manifest: what its answers depend on, checked on resume and by merge.
    Manifest,
    /// `K/N` of a sharded run.
    Shard,
    /// How each endpoint took structured output, learned by one judging and read by the next.
    StructuredOutput,
}

impl Meta {
    fn key(self) -> &'static str {
        match self {
            Meta::Manifest => "manifest",
            Meta::Shard => "shard",
            Meta::StructuredOutput => "structured_output",
        }
    }
}

/// The store's tables of records, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Documents,
    Cases,
    Configs,
    Answers,
    Verdicts,
    Judged,
    Runs,
}

impl Table {
    fn name(self) -> &'static str {
        match self {
            Table::Documents => "documents",
            Table::Cases => "cases",
            Table::Configs => "configs",
            Table::Answers => "answers",
            Table::Verdicts => "verdicts",
            Table::Judged => "judged",
            Table::Runs => "runs",
        }
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    stage TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (id TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cases (id TEXT PRIMARY KEY, position INTEGER NOT NULL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS configs (id TEXT PRIMARY KEY, position INTEGER NOT NULL, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    case_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (case_id, config_id)
);
CREATE TABLE IF NOT EXISTS verdicts (
    case_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    status TEXT NOT NULL,
    passed INTEGER,
    json TEXT NOT NULL,
    PRIMARY KEY (case_id, config_id, judge)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS judged (
    session TEXT NOT NULL,
    case_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    sample INTEGER NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (session, case_id, config_id, judge, sample)
);
";

impl RunStore {
    /// Open or create the store of a run directory.
    pub fn open(run_dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(run_dir)
            .with_context(|| format!("cannot create run directory {}", run_dir.display()))?;
        let path = run_dir.join(STORE_FILE);
        let conn =
            Connection::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
        // WAL: readers (report, UI) never block the writer, and a killed writer loses at most the open cell.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(SCHEMA)
            .context("cannot create the run store schema")?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn log_stage(&self, stage: &str, detail: &str) -> Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        self.conn().execute(
            "INSERT INTO runs (stage, started_at, detail) VALUES (?1, ?2, ?3)",
            params![stage, now, detail],
        )?;
        Ok(())
    }

    pub fn set_meta(&self, key: Meta, value: &str) -> Result<()> {
        self.conn().execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key.key(), value],
        )?;
        Ok(())
    }

    pub fn delete_meta(&self, key: Meta) -> Result<()> {
        self.conn()
            .execute("DELETE FROM meta WHERE key = ?1", params![key.key()])?;
        Ok(())
    }

    pub fn meta(&self, key: Meta) -> Result<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                params![key.key()],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub fn put_documents(&self, docs: &[Document]) -> Result<()> {
        self.put_all(
            "INSERT OR REPLACE INTO documents (id, json) VALUES (?1, ?2)",
            docs.iter().map(|d| (d.id.as_str(), d)),
        )
    }

    pub fn put_cases(&self, cases: &[TestCase]) -> Result<()> {
        self.put_ordered("cases", cases.iter().map(|c| (c.id.as_str(), c)))
    }

    pub fn put_configs(&self, configs: &[Configuration]) -> Result<()> {
        self.put_ordered("configs", configs.iter().map(|c| (c.id.as_str(), c)))
    }

    /// Rows of a table that keeps its records' order (`cases`, `configs`), in one transaction.
    fn put_ordered<'a, T: Serialize + 'a>(
        &self,
        table: &'static str,
        rows: impl Iterator<Item = (&'a str, &'a T)>,
    ) -> Result<()> {
        let sql =
            format!("INSERT OR REPLACE INTO {table} (id, position, json) VALUES (?1, ?2, ?3)");
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        for (position, (id, value)) in rows.enumerate() {
            tx.execute(
                &sql,
                params![id, position as i64, serde_json::to_string(value)?],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    fn put_all<'a, T: Serialize + 'a>(
        &self,
        sql: &str,
        rows: impl Iterator<Item = (&'a str, &'a T)>,
    ) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        for (id, value) in rows {
            tx.execute(sql, params![id, serde_json::to_string(value)?])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Commit one answer the moment it exists.
    pub fn put_answer(&self, answer: &Answer) -> Result<()> {
        self.conn().execute(
            "INSERT OR REPLACE INTO answers (case_id, config_id, json) VALUES (?1, ?2, ?3)",
            params![
                answer.case_id,
                answer.config_id,
                serde_json::to_string(answer)?
            ],
        )?;
        Ok(())
    }

    /// The (case, configuration) cells already answered, for resuming.
    pub fn answered(&self) -> Result<HashSet<(String, String)>> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT case_id, config_id FROM answers")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One cell's answer, if it has one.
    pub fn answer(&self, case_id: &str, config_id: &str) -> Result<Option<Answer>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT json FROM answers WHERE case_id = ?1 AND config_id = ?2")?;
        let mut rows = stmt.query(params![case_id, config_id])?;
        Ok(match rows.next()? {
            Some(row) => Some(serde_json::from_str(&row.get::<_, String>(0)?)?),
            None => None,
        })
    }

    pub fn answers(&self) -> Result<Vec<Answer>> {
        self.all("SELECT json FROM answers ORDER BY config_id, case_id")
    }

    /// The answers of these configurations and cases, one at a time, in configuration order then case
    /// order (the order of the slices); answers of other cells are left out. SQLite walks both orders
    /// and looks each cell up by its key, so nothing is sorted or held: a run of any size is written out
    /// in constant memory.
    pub fn for_each_answer_in_order(
        &self,
        configs: &[&str],
        cases: &[&str],
        mut each: impl FnMut(Answer) -> Result<()>,
    ) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS order_configs (position INTEGER PRIMARY KEY, id TEXT NOT NULL);
             CREATE TEMP TABLE IF NOT EXISTS order_cases (position INTEGER PRIMARY KEY, id TEXT NOT NULL);
             DELETE FROM order_configs; DELETE FROM order_cases;",
        )?;
        for (table, ids) in [("order_configs", configs), ("order_cases", cases)] {
            let mut insert = tx.prepare(&format!(
                "INSERT INTO {table} (position, id) VALUES (?1, ?2)"
            ))?;
            for (position, id) in ids.iter().enumerate() {
                insert.execute(params![position as i64, id])?;
            }
        }
        {
            let mut stmt = tx.prepare(
                "SELECT a.json FROM order_configs g CROSS JOIN order_cases c
                 JOIN answers a ON a.case_id = c.id AND a.config_id = g.id
                 ORDER BY g.position, c.position",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                each(serde_json::from_str(&row.get::<_, String>(0)?)?)?;
            }
        }
        // Nothing of the store changed: the temporary tables go with the transaction.
        tx.rollback()?;
        Ok(())
    }

    pub fn put_verdicts(&self, verdicts: &[Verdict]) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        for v in verdicts {
            tx.execute(
                "INSERT OR REPLACE INTO verdicts (case_id, config_id, judge, status, passed, json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    v.case_id,
                    v.config_id,
                    v.judge,
                    serde_json::to_value(v.status)?.as_str().unwrap_or_default(),
                    v.passed,
                    serde_json::to_string(v)?
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Commit one verdict of a judging session the moment it is made, so a killed `judge` resumes.
    /// A session names everything its verdicts depend on (answers, judges, samples, prompt).
    pub fn put_judged(&self, session: &str, verdict: &Verdict) -> Result<()> {
        // Serialised before the lock is taken, so judges on several threads only queue for the insert.
        let json = serde_json::to_string(verdict)?;
        let conn = self.conn();
        let mut insert = conn.prepare_cached(
            "INSERT OR REPLACE INTO judged (session, case_id, config_id, judge, sample, json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        insert.execute(params![
            session,
            verdict.case_id,
            verdict.config_id,
            verdict.judge,
            verdict.sample,
            json
        ])?;
        Ok(())
    }

    /// The verdicts a session already made; verdicts of every other session are dropped, since they
    /// judged other answers, with other judges or another prompt.
    pub fn judged(&self, session: &str) -> Result<Vec<Verdict>> {
        self.conn()
            .execute("DELETE FROM judged WHERE session != ?1", params![session])?;
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT json FROM judged WHERE session = ?1")?;
        let rows = stmt.query_map(params![session], |r| r.get::<_, String>(0))?;
        rows.map(|json| Ok(serde_json::from_str(&json?)?)).collect()
    }

    /// Drop the judged verdicts of every other session and count this one's: what a resumed judge finds.
    pub fn keep_judging_session(&self, session: &str) -> Result<u64> {
        let conn = self.conn();
        conn.execute("DELETE FROM judged WHERE session != ?1", params![session])?;
        Ok(conn.query_row(
            "SELECT COUNT(*) FROM judged WHERE session = ?1",
            params![session],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    /// The verdicts a session already made on these (case, configuration) cells, looked up cell by cell,
    /// so a judge resumes a batch at a time.
    pub fn judged_cells(&self, session: &str, cells: &[(&str, &str)]) -> Result<Vec<Verdict>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT json FROM judged WHERE session = ?1 AND case_id = ?2 AND config_id = ?3",
        )?;
        let mut out = Vec::new();
        for (case, config) in cells {
            let rows = stmt.query_map(params![session, case, config], |r| r.get::<_, String>(0))?;
            for json in rows {
                out.push(serde_json::from_str(&json?)?);
            }
        }
        Ok(out)
    }

    pub fn verdicts(&self) -> Result<Vec<Verdict>> {
        self.all("SELECT json FROM verdicts ORDER BY config_id, case_id, judge")
    }

    pub fn count(&self, table: Table) -> Result<u64> {
        let sql = format!("SELECT COUNT(*) FROM {}", table.name());
        Ok(self.conn().query_row(&sql, [], |r| r.get::<_, i64>(0))? as u64)
    }

    fn all<T: DeserializeOwned>(&self, sql: &str) -> Result<Vec<T>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(sql)?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        rows.map(|json| Ok(serde_json::from_str(&json?)?)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::{Latency, Usage};

    fn answer(case: &str, config: &str) -> Answer {
        Answer {
            schema_version: 1,
            case_id: case.into(),
            config_id: config.into(),
            contexts: vec![],
            answer: "a".into(),
            latency: Latency::default(),
            usage: Usage::default(),
            cached: false,
            cached_at: None,
            truncated_from: None,
            context_cut_from: None,
            tool_calls: None,
            simulation: None,
            citations: Vec::new(),
            error: None,
            rewritten_query: None,
            trace: None,
        }
    }

    #[test]
    fn answers_persist_across_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = RunStore::open(dir.path()).unwrap();
            store.put_answer(&answer("c1", "k1")).unwrap();
            store.put_answer(&answer("c2", "k1")).unwrap();
            store.put_answer(&answer("c1", "k1")).unwrap();
            store.set_meta(Meta::Manifest, "abc").unwrap();
        }
        let store = RunStore::open(dir.path()).unwrap();
        assert_eq!(store.count(Table::Answers).unwrap(), 2);
        assert!(
            store
                .answered()
                .unwrap()
                .contains(&("c2".to_string(), "k1".to_string()))
        );
        assert_eq!(store.answers().unwrap()[0], answer("c1", "k1"));
        assert_eq!(store.meta(Meta::Manifest).unwrap().as_deref(), Some("abc"));
    }

    #[test]
    fn answers_stream_in_the_order_given_and_only_those_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunStore::open(dir.path()).unwrap();
        for (case, config) in [("b", "y"), ("a", "y"), ("b", "x"), ("a", "x"), ("z", "x")] {
            store.put_answer(&answer(case, config)).unwrap();
        }
        let mut seen = Vec::new();
        store
            .for_each_answer_in_order(&["y", "x", "w"], &["b", "a", "c"], |a| {
                seen.push((a.config_id, a.case_id));
                Ok(())
            })
            .unwrap();
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            seen,
            pairs(&[("y", "b"), ("y", "a"), ("x", "b"), ("x", "a")]),
            "configurations then cases, as given; unknown case z and missing cells left out"
        );
        // A second stream in another order: the temporary order tables are refilled, not appended to.
        seen.clear();
        store
            .for_each_answer_in_order(&["x"], &["a"], |a| {
                seen.push((a.config_id, a.case_id));
                Ok(())
            })
            .unwrap();
        assert_eq!(seen, pairs(&[("x", "a")]));
        assert_eq!(store.count(Table::Answers).unwrap(), 5, "nothing written");
    }
}

/// The response cache on disk: one SQLite file shared by all runs (by default under the user's cache
/// folder), so a reply paid for once is never paid for again.
pub struct ResponseStore {
    conn: Mutex<Connection>,
}

impl ResponseStore {
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create cache folder {}", dir.display()))?;
        }
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open response cache {}", path.display()))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS responses (
                key TEXT PRIMARY KEY,
                content TEXT NOT NULL,
                prompt_tokens INTEGER NOT NULL,
                completion_tokens INTEGER NOT NULL,
                created_at INTEGER
            );",
        )?;
        // Caches written before replies were dated gain the column; their replies stay undated.
        let dated: bool = conn
            .prepare("SELECT 1 FROM pragma_table_info('responses') WHERE name = 'created_at'")?
            .exists([])?;
        if !dated {
            conn.execute_batch("ALTER TABLE responses ADD COLUMN created_at INTEGER")?;
        }
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }
}

impl ragtester_core::ResponseCache for ResponseStore {
    fn get(&self, key: &str) -> Result<Option<ragtester_core::ChatResponse>> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        Ok(conn
            .query_row(
                "SELECT content, prompt_tokens, completion_tokens, created_at FROM responses WHERE key = ?1",
                params![key],
                |r| {
                    Ok(ragtester_core::ChatResponse {
                        content: r.get(0)?,
                        usage: ragtester_core::Usage {
                            prompt_tokens: r.get::<_, i64>(1)? as u64,
                            completion_tokens: r.get::<_, i64>(2)? as u64,
                        },
                        cached: true,
                        cached_at: r.get::<_, Option<i64>>(3)?.map(|t| t as u64),
                    notes: Vec::new(), })
                },
            )
            .optional()?)
    }

    fn put(&self, key: &str, response: &ragtester_core::ChatResponse) -> Result<()> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.execute(
            "INSERT OR REPLACE INTO responses (key, content, prompt_tokens, completion_tokens, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                key,
                response.content,
                response.usage.prompt_tokens as i64,
                response.usage.completion_tokens as i64,
                unix_now()
            ],
        )?;
        Ok(())
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod cache_tests {
    use super::*;
    use ragtester_core::ResponseCache;

    #[test]
    fn responses_round_trip_and_persist() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c/responses.sqlite");
        let response = ragtester_core::ChatResponse {
            content: "hi".into(),
            usage: ragtester_core::Usage {
                prompt_tokens: 3,
                completion_tokens: 1,
            },
            cached: false,
            cached_at: None,
            notes: Vec::new(),
        };
        ResponseStore::open(&path)
            .unwrap()
            .put("k", &response)
            .unwrap();
        let store = ResponseStore::open(&path).unwrap();
        let hit = store.get("k").unwrap().unwrap();
        assert_eq!(
            (hit.content.as_str(), hit.usage.prompt_tokens, hit.cached),
            ("hi", 3, true)
        );
        let dated = hit.cached_at.expect("a stored reply is dated");
        assert!(dated.abs_diff(unix_now() as u64) < 60);
        assert!(store.get("other").unwrap().is_none());
    }
}
