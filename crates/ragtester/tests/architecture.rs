//! The invariants of ARCHITECTURE.md that a reading of the sources can check, checked: a library that
//! starts printing, an engine that reaches for the run store, or a forgotten `dbg!` fails here.

use std::path::{Path, PathBuf};

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, recursively.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// Lines outside `#[cfg(test)]` modules (a module that opens with that attribute runs to the file's end in
/// this codebase's layout).
fn library_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
}

/// `file:line: text` of each library line under `krate/src` holding one of `markers`.
fn library_lines_holding(krate: &Path, markers: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in sources(&krate.join("src")) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in library_lines(&text) {
            if markers.iter().any(|m| line.contains(m)) {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn library_crates_never_print() {
    // The binary prints what a person reads, and so does the Python module's console script (its `main`);
    // test support may say why a tool is missing.
    let printing = ["ragtester", "ragtester-python", "ragtester-testkit"];
    let mut found = Vec::new();
    for entry in std::fs::read_dir(crates_dir()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if printing.contains(&name.as_str()) {
            continue;
        }
        found.extend(library_lines_holding(
            &entry.path(),
            &["println!(", "eprintln!(", "print!(", "eprint!(", "dbg!("],
        ));
    }
    assert!(
        found.is_empty(),
        "library code prints:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_code_is_left_with_dbg() {
    let mut found = Vec::new();
    for file in sources(&crates_dir()) {
        let text = std::fs::read_to_string(&file).unwrap();
        if text.contains("dbg!(") && !file.ends_with("architecture.rs") {
            found.push(file.display().to_string());
        }
    }
    assert!(found.is_empty(), "dbg! left in: {found:?}");
}

#[test]
fn the_engines_do_not_depend_on_the_run_store() {
    for engine in ["ragtester-exec", "ragtester-judge"] {
        let manifest =
            std::fs::read_to_string(crates_dir().join(engine).join("Cargo.toml")).unwrap();
        assert!(
            !manifest.contains("ragtester-store"),
            "{engine} depends on ragtester-store: engines write through sinks they own"
        );
    }
}

/// The run directory has one door: only `ragtester-run` opens the run store or writes the files no record
/// type covers (the audit sheet, the suite's generation report); the run store's crate serves it alone.
#[test]
fn only_the_run_crate_reaches_the_run_store_and_its_sheets() {
    let door = ["ragtester-run", "ragtester-store"];
    let mut found = Vec::new();
    for entry in std::fs::read_dir(crates_dir()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if door.contains(&name.as_str()) {
            continue;
        }
        found.extend(library_lines_holding(
            &entry.path(),
            &[
                "RunStore",
                "ragtester_store::Meta",
                "ragtester_store::Table",
                "with_extension(\"report.json\")",
                "AUDIT_SHEET), ",
            ],
        ));
        let manifest = std::fs::read_to_string(entry.path().join("Cargo.toml")).unwrap();
        let dependencies = manifest.split("[dev-dependencies]").next().unwrap();
        if name != "ragtester-models" && dependencies.contains("ragtester-store") {
            found.push(format!("{name}/Cargo.toml depends on ragtester-store"));
        }
    }
    assert!(
        found.is_empty(),
        "past the run directory's door:\n{}",
        found.join("\n")
    );
}

/// The stages know no wire: what they ask of a server (init's probes, a target, a vector store) goes
/// through the provider crate, which alone speaks HTTP to models.
#[test]
fn the_stages_know_no_http() {
    let stages = crates_dir().join("ragtester-stages");
    let manifest = std::fs::read_to_string(stages.join("Cargo.toml")).unwrap();
    let dependencies = manifest.split("[dev-dependencies]").next().unwrap();
    let mut found: Vec<String> = ["ragtester-http", "reqwest", "axum", "hyper"]
        .iter()
        .filter(|d| dependencies.contains(&format!("\n{d}")))
        .map(|d| format!("ragtester-stages depends on {d}"))
        .collect();
    found.extend(library_lines_holding(
        &stages,
        &["ragtester_http::", "reqwest::", "axum::"],
    ));
    assert!(found.is_empty(), "stages speak HTTP:\n{}", found.join("\n"));
}

/// The command line reaches the engines through `stages` alone (its `front` re-exports what a front end
/// fills in and shows): no engine crate is a dependency of the binary, nor named in its sources.
#[test]
fn the_binary_uses_no_engine_crate_directly() {
    let engines = [
        "ragtester-ingest",
        "ragtester-exec",
        "ragtester-judge",
        "ragtester-report",
        "ragtester-docgen",
        "ragtester-testgen",
        "ragtester-models",
        "ragtester-store",
    ];
    let manifest = std::fs::read_to_string(crates_dir().join("ragtester/Cargo.toml")).unwrap();
    let dependencies = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap();
    let mut found: Vec<String> = engines
        .iter()
        .filter(|e| {
            dependencies.contains(&format!("{e}.workspace"))
                || dependencies.contains(&format!("{e} ="))
        })
        .map(|e| format!("Cargo.toml depends on {e}"))
        .collect();
    for file in sources(&crates_dir().join("ragtester/src")) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in library_lines(&text) {
            for e in engines {
                if line.contains(&format!("{}::", e.replace('-', "_"))) {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the binary reaches past stages:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_library_crate_reads_the_process_settings() {
    // The binary reads the environment once and builds the limits from `--limit`, and hands both down
    // (`StageContext`, the registry's `ProviderEnv`, the answer sink, ingest options, a reader's argument):
    // a web job or a test runs with its own. There are no process-wide limits or environment to install
    // (core's settings layer reads when asked; test support reads for its tests).
    let front_ends_and_core = ["ragtester", "ragtester-core", "ragtester-testkit"];
    let mut crates: Vec<_> = std::fs::read_dir(crates_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").exists())
        .filter(|p| !front_ends_and_core.iter().any(|f| p.ends_with(f)))
        .collect();
    crates.sort();
    assert!(crates.len() > 15, "{crates:?}");
    let found: Vec<String> = crates
        .iter()
        .flat_map(|krate| library_lines_holding(krate, &["Environment::read()", "std::env::var"]))
        .collect();
    assert!(
        found.is_empty(),
        "process-wide settings read:\n{}",
        found.join("\n")
    );
}

/// Cargo's built-in profiles cannot share package tables, so the release table's lowering of dependencies
/// is written again in the dev table. Kept in step here: every dependency the release build lowers is
/// lowered at least as far in the tests' build (which may lower more: it runs less of them).
#[test]
fn the_dev_profile_lowers_every_dependency_the_release_profile_lowers() {
    let root = std::fs::read_to_string(crates_dir().join("../Cargo.toml")).unwrap();
    let manifest: toml::Table = root.parse().unwrap();
    let profile = |name: &str| {
        manifest["profile"][name]["package"]
            .as_table()
            .unwrap()
            .clone()
    };
    let (release, dev) = (profile("release"), profile("dev"));
    let level = |entry: &toml::Value| entry.get("opt-level").and_then(|l| l.as_integer());
    assert!(release.len() > 50, "the release table is read");
    let mut found = Vec::new();
    for (name, entry) in &release {
        if name.starts_with("ragtester") {
            continue; // our crates are unoptimised in the dev profile anyway
        }
        // An entry without an opt-level (codegen units only) keeps the release profile's 3.
        match (level(entry).or(Some(3)), dev.get(name).and_then(level)) {
            (Some(r), Some(d)) if d <= r => {}
            (r, d) => found.push(format!("{name}: release {r:?}, dev {d:?}")),
        }
    }
    assert!(
        found.is_empty(),
        "the dev table lowers less than the release table:\n{}",
        found.join("\n")
    );
}

/// The layering ARCHITECTURE.md's invariants describe, as the crates' own manifests must keep it: each
/// library crate and the crates of ours it may depend on. A new edge is a design change: make it here and
/// in ARCHITECTURE.md, or move the code.
#[test]
fn each_crate_depends_only_on_the_crates_its_layer_allows() {
    let allowed: &[(&str, &[&str])] = &[
        ("ragtester-text", &[]),
        ("ragtester-core", &["text"]),
        ("ragtester-offline", &["core", "text"]),
        ("ragtester-retrieve", &["core", "text"]),
        ("ragtester-gguf", &["core"]),
        ("ragtester-bert", &["core"]),
        ("ragtester-http", &["core"]),
        ("ragtester-store", &["core"]),
        ("ragtester-trace", &["core"]),
        ("ragtester-ingest", &["core", "text"]),
        ("ragtester-llm", &["core", "text", "http"]),
        ("ragtester-chroma", &["core", "http", "retrieve"]),
        ("ragtester-run", &["core", "store"]),
        ("ragtester-testgen", &["core", "text", "ingest"]),
        ("ragtester-docgen", &["core", "text"]),
        ("ragtester-judge", &["core", "offline", "text"]),
        ("ragtester-report", &["core", "judge", "text"]),
        (
            "ragtester-exec",
            &[
                "core", "text", "ingest", "retrieve", "trace", "llm", "chroma",
            ],
        ),
        (
            "ragtester-models",
            &[
                "core", "llm", "gguf", "offline", "bert", "retrieve", "store",
            ],
        ),
        ("ragtester-web", &["core", "stages", "report"]),
        ("ragtester", &["core", "stages", "web"]),
        // The Python module: the command line's library (the `ragtester` crate, not prefixed, so not
        // listed), the function target's trait and registry, the sample corpus, and error types to
        // sort failures into exceptions.
        ("ragtester-python", &["core", "http", "llm", "stages"]),
    ];
    let mut found = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(crates_dir()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((_, layer)) = allowed.iter().find(|(c, _)| *c == name) else {
            continue; // the stages may use every engine; test support any crate
        };
        checked += 1;
        let manifest = std::fs::read_to_string(entry.path().join("Cargo.toml")).unwrap();
        let manifest: toml::Table = manifest.parse().unwrap();
        let dependencies = manifest.get("dependencies").and_then(|d| d.as_table());
        for dependency in dependencies.into_iter().flat_map(|d| d.keys()) {
            let Some(ours) = dependency.strip_prefix("ragtester-") else {
                continue;
            };
            if !layer.contains(&ours) {
                found.push(format!("{name} depends on {dependency}"));
            }
        }
    }
    assert_eq!(checked, allowed.len(), "every crate named is read");
    assert!(
        found.is_empty(),
        "dependencies outside the layering:\n{}",
        found.join("\n")
    );
}
