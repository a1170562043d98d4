//! `ragtester serve` through real HTTP on loopback: the four stages driven as the UI drives them (documents,
//! a suite, a matrix run with progress, judging, audit labelling), results browsed with server-side filters
//! and paging, and uploads that try to leave the workspace.

mod ui;

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use ui::serve;

async fn get(client: &reqwest::Client, url: String) -> (u16, Value) {
    let r = client.get(url).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn post(client: &reqwest::Client, url: String, body: Value) -> (u16, Value) {
    let r = client.post(url).json(&body).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Start a job and wait for it; returns its final state.
async fn job(client: &reqwest::Client, base: &str, path: &str, body: Value) -> Value {
    let (status, started) = post(client, format!("{base}{path}"), body).await;
    assert_eq!(status, 200, "{path}: {started}");
    let id = started["job"].as_u64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let (_, state) = get(client, format!("{base}/api/jobs/{id}")).await;
        if state["status"] != "running" {
            return state;
        }
        assert!(
            Instant::now() < deadline,
            "job {path} did not finish: {state}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ui_api_drives_all_four_stages_and_pages_results() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let server = serve(&ws, &[]);
    let base = server.base.clone();
    let client = server.client().await;

    let page = client.get(format!("{base}/")).send().await.unwrap();
    assert!(
        page.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("script-src 'self'")
    );
    assert!(page.text().await.unwrap().contains("/assets/app.js"));

    // Stage 1: documents — the bundled samples, an upload whose name tries to climb out, generated ones.
    let (_, r) = post(&client, format!("{base}/api/documents/samples"), json!({})).await;
    assert_eq!(r["written"], 8);
    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            reqwest::multipart::Part::bytes(b"# Escape\n\nThe gate code is 4411.".to_vec())
                .file_name("../../escape.md"),
        )
        .part(
            "file",
            reqwest::multipart::Part::bytes(b"x".to_vec()).file_name(".."),
        );
    let r: Value = client
        .post(format!("{base}/api/documents"))
        .multipart(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["saved"], json!(["escape.md"]));
    assert_eq!(r["refused"].as_array().unwrap().len(), 1);
    assert!(ws.join("docs/escape.md").is_file());
    assert!(!tmp.path().join("escape.md").exists());
    let done = job(
        &client,
        &base,
        "/api/jobs/docgen",
        json!({"count": 2, "language": "zh"}),
    )
    .await;
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(
        (done["done"].as_u64(), done["total"].as_u64()),
        (Some(2), Some(2))
    );
    let (_, w) = get(&client, format!("{base}/api/workspace")).await;
    let names: Vec<&str> = w["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 11, "{names:?}");
    assert!(!names.contains(&"docgen.json"));

    // Stage 2: a suite from every document, with the planted facts as well.
    let done = job(
        &client,
        &base,
        "/api/jobs/suite",
        json!({"name": "s1", "strategies": ["ragtester", "planted"], "n_test": 3}),
    )
    .await;
    assert_eq!(done["status"], "done", "{done}");
    // Bad requests are refused before any job starts, with the reason.
    let (status, r) = post(
        &client,
        format!("{base}/api/jobs/suite"),
        json!({"name": "../x", "strategies": ["ragtester"], "n_test": 3}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(r["error"].as_str().unwrap().contains("not a usable name"));

    // Stage 3: a matrix run with live progress, judged and reported.
    let done = job(
        &client,
        &base,
        "/api/jobs/run",
        json!({"name": "r1", "suite": "s1", "retrievers": ["bm25", "hybrid"], "top_k": [2],
               "llms": ["offline"], "judges": ["offline"]}),
    )
    .await;
    assert_eq!(done["status"], "done", "{done}");
    let log = done["log"].to_string();
    assert!(
        log.contains("run…") && log.contains("judge…") && log.contains("report…"),
        "{log}"
    );
    let (status, _) = post(
        &client,
        format!("{base}/api/jobs/run"),
        json!({"name": "r1", "suite": "s1", "retrievers": ["bm25"], "top_k": [2], "llms": ["offline"]}),
    )
    .await;
    assert_eq!(status, 400, "runs are never overwritten");

    // Stage 4: results, filtered and paged on the server.
    let (_, run) = get(&client, format!("{base}/api/runs/r1")).await;
    assert_eq!(run["configs"], 2);
    let cells = run["answers"].as_u64().unwrap();
    assert_eq!(cells, 2 * run["cases"].as_u64().unwrap());
    let outcomes = run["facets"]["outcomes"].as_object().unwrap();
    let sum: u64 = outcomes.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(sum, cells);
    let (_, all) = get(&client, format!("{base}/api/runs/r1/results?per_page=7")).await;
    assert_eq!(all["total"].as_u64(), Some(cells));
    assert_eq!(all["rows"].as_array().unwrap().len(), 7);
    let (_, last) = get(
        &client,
        format!(
            "{base}/api/runs/r1/results?per_page=7&page={}",
            (cells - 1) / 7
        ),
    )
    .await;
    assert_eq!(
        last["rows"].as_array().unwrap().len() as u64,
        cells - 7 * ((cells - 1) / 7)
    );
    let passed = outcomes.get("passed").and_then(Value::as_u64).unwrap_or(0);
    let (_, p) = get(
        &client,
        format!("{base}/api/runs/r1/results?outcome=passed&per_page=500"),
    )
    .await;
    assert_eq!(p["total"].as_u64(), Some(passed));
    assert!(
        p["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["outcome"] == "passed")
    );
    let (_, planted) = get(
        &client,
        format!("{base}/api/runs/r1/results?strategy=planted"),
    )
    .await;
    assert!(planted["total"].as_u64().unwrap() > 0);
    let first = &all["rows"][0];
    let word = first["query"]
        .as_str()
        .unwrap()
        .split(|c: char| !c.is_alphanumeric())
        .max_by_key(|w| w.chars().count())
        .unwrap()
        .to_uppercase();
    let (_, found) = get(
        &client,
        format!(
            "{base}/api/runs/r1/results?per_page=500&q={}",
            urlencode(&word)
        ),
    )
    .await;
    let hits = found["rows"].as_array().unwrap();
    assert!(
        hits.iter().any(|r| r["case_id"] == first["case_id"]),
        "case-insensitive search for {word} finds the case it came from"
    );
    assert!(found["total"].as_u64().unwrap() < cells);
    let (status, detail) = get(
        &client,
        format!(
            "{base}/api/runs/r1/cells/{}/{}",
            first["case_id"].as_str().unwrap(),
            first["config_id"].as_str().unwrap()
        ),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(detail["case"]["id"], first["case_id"]);
    assert!(!detail["verdicts"].as_array().unwrap().is_empty());
    let report = client
        .get(format!("{base}/api/runs/r1/report"))
        .send()
        .await
        .unwrap();
    assert_eq!(report.status().as_u16(), 200);
    assert!(report.text().await.unwrap().contains("<html"));

    // Judging again, then auditing: sample, label, score.
    let done = job(
        &client,
        &base,
        "/api/jobs/judge",
        json!({"run": "r1", "judges": ["offline"]}),
    )
    .await;
    assert_eq!(done["status"], "done", "{done}");
    let done = job(
        &client,
        &base,
        "/api/jobs/audit-sample",
        json!({"run": "r1"}),
    )
    .await;
    assert_eq!(done["status"], "done", "{done}");
    let (_, audit) = get(&client, format!("{base}/api/runs/r1/audit")).await;
    let rows = audit["sheet"]["rows"].as_array().unwrap().len();
    assert!(rows > 0);
    let r = client
        .put(format!("{base}/api/runs/r1/audit/0"))
        .json(&json!({"label": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let done = job(
        &client,
        &base,
        "/api/jobs/audit-score",
        json!({"run": "r1"}),
    )
    .await;
    assert_eq!(done["status"], "done", "{done}");
    let (_, audit) = get(&client, format!("{base}/api/runs/r1/audit")).await;
    assert_eq!(audit["summary"]["labelled"], 1);
    assert_eq!(audit["summary"]["false_failures"], 1);

    // A run compared with itself changes nothing.
    let (_, diff) = get(&client, format!("{base}/api/compare?before=r1&after=r1")).await;
    assert_eq!(diff["regressions"].as_array().unwrap().len(), 0);
    let (status, _) = get(&client, format!("{base}/api/runs/..%2Fws/results")).await;
    assert_eq!(status, 404);
    let (_, jobs) = get(&client, format!("{base}/api/jobs")).await;
    assert!(
        jobs.as_array()
            .unwrap()
            .iter()
            .all(|j| j["status"] == "done")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_job_reports_why_and_read_only_runs_stay_read_only() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    // A run directory from outside the workspace, named with --run.
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("suite.jsonl"), "").unwrap();
    let server = serve(&ws, &[&outside]);
    let base = server.base.clone();
    let client = server.client().await;
    let (status, r) = post(
        &client,
        format!("{base}/api/jobs/judge"),
        json!({"run": "outside", "judges": ["offline"]}),
    )
    .await;
    assert_eq!(status, 403, "{r}");
    // No documents yet: refused with the reason.
    let (status, r) = post(
        &client,
        format!("{base}/api/jobs/suite"),
        json!({"name": "s", "strategies": ["ragtester"], "n_test": 2}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(r["error"].as_str().unwrap().contains("no documents"), "{r}");
    // A document that cannot be read fails the suite job with a message naming what went wrong.
    std::fs::write(ws.join("docs/broken.pdf"), b"%PDF-1.7 not really").unwrap();
    let done = job(
        &client,
        &base,
        "/api/jobs/suite",
        json!({"name": "s", "strategies": ["ragtester"], "n_test": 2}),
    )
    .await;
    assert_eq!(done["status"], "failed", "{done}");
    assert!(!done["error"].as_str().unwrap().is_empty());
    // Beside a readable one, the job goes on, and its log says which file failed and why (the stage's
    // events, not the server's stderr).
    std::fs::write(
        ws.join("docs/good.md"),
        "# Pump\n\nThe pump runs at 4.5 bar. The filter is changed every 90 days.",
    )
    .unwrap();
    let done = job(
        &client,
        &base,
        "/api/jobs/suite",
        json!({"name": "s", "strategies": ["ragtester"], "n_test": 1}),
    )
    .await;
    assert_eq!(done["status"], "done", "{done}");
    let log: Vec<&str> = done["log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        log.iter()
            .any(|l| l.starts_with("error: ") && l.contains("broken.pdf")),
        "{log:?}"
    );
    // Kept apart from the log, so it stays in view.
    let problems = done["problems"].to_string();
    assert!(problems.contains("broken.pdf"), "{problems}");
    assert!(log.contains(&"ingested 1 documents (1 failed)"), "{log:?}");
    // The document changes: a new suite updates the earlier one, which stays as it was; the suite list
    // holds suites only, not their documents snapshots.
    std::fs::remove_file(ws.join("docs/broken.pdf")).unwrap();
    let earlier = std::fs::read(ws.join("suites/s.jsonl")).unwrap();
    std::fs::write(
        ws.join("docs/good.md"),
        "# Pump\n\nThe pump runs at 6.5 bar. The filter is changed every 90 days.",
    )
    .unwrap();
    let (status, r) = post(
        &client,
        format!("{base}/api/jobs/suite"),
        json!({"name": "s3", "strategies": ["ragtester"], "n_test": 1, "update": "missing"}),
    )
    .await;
    assert_eq!(status, 404, "{r}");
    let updated = job(
        &client,
        &base,
        "/api/jobs/suite",
        json!({"name": "s2", "strategies": ["ragtester"], "n_test": 1, "update": "s"}),
    )
    .await;
    assert_eq!(updated["status"], "done", "{updated}");
    assert!(
        updated["log"].to_string().contains("suite updated:"),
        "{updated}"
    );
    assert_eq!(std::fs::read(ws.join("suites/s.jsonl")).unwrap(), earlier);
    let report = std::fs::read_to_string(ws.join("suites/s2.report.json")).unwrap();
    assert!(report.contains("\"update\""), "{report}");
    let (_, workspace) = get(&client, format!("{base}/api/workspace")).await;
    let suites: Vec<&str> = workspace["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(suites, ["s", "s2"]);
    // Only a running job can be cancelled.
    let id = done["id"].as_u64().unwrap();
    let (status, r) = post(&client, format!("{base}/api/jobs/{id}/cancel"), json!({})).await;
    assert_eq!(status, 409, "{r}");
    let (status, _) = post(&client, format!("{base}/api/jobs/999/cancel"), json!({})).await;
    assert_eq!(status, 404);
    // An unknown model spec fails the docgen job, and the error says which.
    let done = job(
        &client,
        &base,
        "/api/jobs/docgen",
        json!({"count": 1, "llm": "nonsense:model"}),
    )
    .await;
    assert_eq!(done["status"], "failed");
    assert!(
        done["error"].as_str().unwrap().contains("nonsense"),
        "{done}"
    );
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
