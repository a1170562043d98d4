//! `ragtester export` and `ragtester import`: suites and answered cells as RAGAS or DeepEval datasets.

use crate::events::Events;
use crate::ingest::ingest;
use crate::run_dir::RunDir;
use anyhow::{Context, Result, bail};
use ragtester_core::progress::counted;
use ragtester_core::{Answer, Document, TestCase};
use ragtester_testgen::interop::{self, Shape};
use std::path::{Path, PathBuf};

pub fn export(
    input: &Path,
    format: &str,
    out: &Path,
    docs: &[PathBuf],
    config: Option<&str>,
    cx: &crate::StageContext<'_>,
) -> Result<()> {
    let events = cx.events();
    let shape = Shape::parse(format)?;
    let (cases, documents, answers): (Vec<TestCase>, Vec<Document>, Option<Vec<Answer>>) =
        if input.is_dir() {
            let run = RunDir::new(input);
            let cases = run.cases()?;
            let documents = run.documents()?;
            let answers = run.answers()?;
            let configs = run.configs()?;
            let chosen = match (config, configs.as_slice()) {
                (Some(id), _) => configs
                    .iter()
                    .find(|c| c.id == id || c.id.starts_with(id))
                    .with_context(|| format!("{} has no configuration `{id}`", input.display()))?,
                (None, [only]) => only,
                (None, _) => bail!(
                    "{} has {} configurations: choose one with --config ({})",
                    input.display(),
                    configs.len(),
                    configs
                        .iter()
                        .map(|c| format!("{} = {}", c.id, c.label()))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            };
            let answers = answers
                .into_iter()
                .filter(|a| a.config_id == chosen.id)
                .collect();
            (cases, documents, Some(answers))
        } else {
            let cases = ragtester_core::record::read_jsonl_under(input, cx.limits())
                .with_context(|| format!("cannot read suite {}", input.display()))?;
            if docs.is_empty() {
                bail!("exporting a suite file needs --docs, for the text of its source spans");
            }
            (cases, ingest(docs, cx)?.0, None)
        };
    let format = interop::FileFormat::of(out);
    // A CSV cell cannot hold a conversation's messages: there a turn is a flat row whose `ragtester`
    // metadata still restores its case, conversation and all.
    let conversations = format != interop::FileFormat::Csv;
    let rows = interop::export_rows(shape, &cases, &documents, answers.as_deref(), conversations);
    let turn = |r: &serde_json::Map<String, serde_json::Value>| {
        conversations && interop::is_conversation_row(r)
    };
    let apart =
        !shape.mixes_conversations() && rows.iter().any(turn) && rows.iter().any(|r| !turn(r));
    let (main, second): (Vec<_>, Vec<_>) = if apart {
        rows.into_iter().partition(|r| !turn(r))
    } else {
        (rows, Vec::new())
    };
    let bytes = interop::write_rows(&main, format, shape)?;
    ragtester_core::record::write_atomic(out, &bytes)?;
    events.info(format!("wrote {} rows to {}", main.len(), out.display()));
    let path = interop::conversations_file(out);
    if !apart && path.exists() {
        // `import --answers` reads a conversations file beside its export: one left by an earlier export to
        // the same name would come back with this one.
        std::fs::remove_file(&path)
            .with_context(|| format!("cannot remove the earlier export's {}", path.display()))?;
        events.info(format!(
            "removed {}, an earlier export's conversations: this export holds none apart",
            path.display()
        ));
    }
    if apart {
        let bytes = interop::write_rows(&second, format, shape)?;
        ragtester_core::record::write_atomic(&path, &bytes)?;
        events.info(format!(
            "wrote {} conversation turns to {} ({format_name} loads single turns and conversations as \
             datasets of their own; `ragtester import --answers {}` reads both files back)",
            second.len(),
            path.display(),
            out.display(),
            format_name = shape.library(),
        ));
    }
    Ok(())
}

/// What an import kept.
pub struct Imported {
    pub rows: usize,
    pub cases: usize,
    /// Documents that could not be read.
    pub failed_documents: usize,
}

impl Imported {
    /// Whether rows or documents were left out.
    pub fn partial(&self) -> bool {
        self.failed_documents > 0 || self.cases < self.rows
    }
}

pub fn import(
    input: &Path,
    format: &str,
    docs: &[PathBuf],
    out: &Path,
    cx: &crate::StageContext<'_>,
) -> Result<Imported> {
    let events = cx.events();
    if docs.is_empty() {
        bail!("importing a suite needs --docs, to find its reference contexts");
    }
    let shape = Shape::parse(format)?;
    let rows = interop::read_rows(input, shape, cx.limits())?;
    interop::warn_unread_fields(input, &rows);
    let (documents, failed) = ingest(docs, cx)?;
    let imported = interop::import_rows(shape, &rows, &documents);
    tell_rows(&input.display().to_string(), &imported.rejected, events);
    if imported.cases.is_empty() {
        bail!(
            "no case could be imported from {} ({} rows)",
            input.display(),
            rows.len()
        );
    }
    ragtester_core::write_jsonl_atomic(out, &imported.cases)?;
    // The documents its reference contexts were found in, so `generate --update` can follow them.
    ragtester_core::write_jsonl_atomic(&crate::run_dir::suite_documents_path(out), &documents)?;
    events.info(format!(
        "imported {} of {} rows into {}",
        imported.cases.len(),
        rows.len(),
        out.display()
    ));
    Ok(Imported {
        rows: rows.len(),
        cases: imported.cases.len(),
        failed_documents: failed,
    })
}

/// What `import --answers` reads: answered-records files, one system each.
pub struct AnswersImport<'a> {
    pub files: &'a [PathBuf],
    /// The systems' names, in the files' order; a file without one is named by its stem.
    pub systems: &'a [String],
    /// The documents the answers' passages came from (none: passages keep their text, unplaced).
    pub docs: &'a [PathBuf],
    pub out: &'a Path,
}

/// Make a run directory of answers that already exist: one configuration per file, the cases of every
/// file (the same question and reference in two files is one case, so their systems compare side by side),
/// every answer committed to the run store and written as answers.jsonl — what `judge`, `report`, `diff`,
/// `serve` and `export` read of any run.
pub fn import_answers(args: &AnswersImport<'_>, cx: &crate::StageContext<'_>) -> Result<Imported> {
    let events = cx.events();
    if args.files.is_empty() {
        bail!("name at least one answered-records file with --answers");
    }
    if args.systems.len() > args.files.len() {
        bail!(
            "{} --system names for {} --answers files: one name per file, in the same order",
            args.systems.len(),
            args.files.len()
        );
    }
    let run = RunDir::new(args.out);
    if run.file(crate::run_dir::ANSWERS).exists() {
        bail!(
            "{} already holds a run's answers: choose another --out",
            args.out.display()
        );
    }
    let (documents, failed_documents) = if args.docs.is_empty() {
        (Vec::new(), 0)
    } else {
        ingest(args.docs, cx)?
    };
    let locator = ragtester_core::document::TextLocator::new(&documents);
    let mut cases: Vec<TestCase> = Vec::new();
    let mut configs: Vec<ragtester_core::Configuration> = Vec::new();
    let mut answers = Vec::new();
    let mut rows = 0usize;
    for (i, file) in args.files.iter().enumerate() {
        let name = args.systems.get(i).cloned().unwrap_or_else(|| {
            file.file_stem().map_or_else(
                || format!("system-{}", i + 1),
                |s| s.to_string_lossy().into_owned(),
            )
        });
        let config = ragtester_core::Configuration::for_target(
            ragtester_core::config::TargetSettings::imported(&name, &file.display().to_string()),
        );
        if configs.iter().any(|c| c.id == config.id) {
            bail!("two --answers files are both named `{name}`: name them apart with --system");
        }
        let (read, records) = import_system(
            file,
            &name,
            &config,
            (&documents, &locator),
            (cx.limits(), events),
        )?;
        rows += read;
        for case in records.cases {
            if !cases.iter().any(|c| c.id == case.id) {
                cases.push(case);
            }
        }
        answers.extend(records.answers);
        configs.push(config);
    }
    if answers.is_empty() {
        bail!("no answer could be imported from {} rows", rows);
    }
    // The poisoned copies safety cases carry are part of the corpus their answers came from.
    let corpus = crate::run::with_injected_documents(&documents, &cases);
    write_imported_run(&run, &corpus, &cases, &configs, &answers)?;
    let kept = answers.len();
    events.info(format!(
        "imported {} of {} and {} into {}; next: ragtester judge {}",
        counted(kept, "answer", "answers"),
        counted(cases.len(), "question", "questions"),
        counted(configs.len(), "system", "systems"),
        args.out.display(),
        args.out.display()
    ));
    Ok(Imported {
        rows,
        cases: kept,
        failed_documents,
    })
}

/// One system's file read into its cases and answers, every row left out or kept with a caveat told.
/// Returns how many rows the file held.
fn import_system(
    file: &Path,
    name: &str,
    config: &ragtester_core::Configuration,
    (documents, locator): (
        &[ragtester_core::Document],
        &ragtester_core::document::TextLocator,
    ),
    (limits, events): (&ragtester_core::Limits, &dyn Events),
) -> Result<(usize, ragtester_testgen::answered::AnsweredRecords)> {
    use ragtester_testgen::answered;
    let mut read = answered::read_answered(file, limits)?;
    // An export that wrote conversations apart (`export --format ragas|deepeval`) is one system's answers in
    // two files: the second comes back with the first.
    let companion = ragtester_testgen::interop::conversations_file(file);
    if !ragtester_testgen::interop::is_conversations_file(file) && companion.exists() {
        let more = answered::read_answered(&companion, limits)?;
        events.info(format!(
            "{}: read with its conversations file {} ({} rows)",
            file.display(),
            companion.display(),
            more.rows.len() + more.rejected.len()
        ));
        read.rows.extend(more.rows);
        read.rejected.extend(more.rejected);
    }
    let records = answered::answered_records(&read.rows, &config.id, documents, locator);
    let told: Vec<String> = read
        .rejected
        .iter()
        .chain(&records.notes)
        .cloned()
        .collect();
    tell_rows(&file.display().to_string(), &told, events);
    if records.ungrounded > 0 && !documents.is_empty() {
        events.note(format!(
            "{}: {} no reference context found in the documents: retrieval metrics do not apply to \
             {}",
            file.display(),
            counted(records.ungrounded, "question has", "questions have"),
            if records.ungrounded == 1 {
                "it"
            } else {
                "them"
            }
        ));
    }
    let rows = read.rows.len() + read.rejected.len();
    events.info(format!(
        "{}: {} of {} as system `{name}`",
        file.display(),
        counted(records.answers.len(), "answer", "answers"),
        counted(rows, "row", "rows"),
    ));
    Ok((rows, records))
}

/// The run directory of imported answers, written as the run stage writes one: the store first, then the
/// records every reader reads.
fn write_imported_run(
    run: &RunDir,
    documents: &[Document],
    cases: &[TestCase],
    configs: &[ragtester_core::Configuration],
    answers: &[Answer],
) -> Result<()> {
    std::fs::create_dir_all(run.path())
        .with_context(|| format!("cannot create {}", run.path().display()))?;
    let db = run.db()?;
    run.commit_inputs(&db, documents, cases, configs)?;
    run.commit_answers(&db, answers, configs, cases)?;
    db.log_stage(
        "import",
        &format!(
            "{} of {}",
            counted(answers.len(), "answer", "answers"),
            counted(configs.len(), "system", "systems")
        ),
    )
}

/// Rows that could not be used, or were used with a note: the first few by their line, the rest counted
/// per reason (a file of a thousand rows missing one field would otherwise print a thousand notes).
fn tell_rows(file: &str, notes: &[String], events: &dyn Events) {
    let problems: Vec<crate::listed::Problem<'_>> = notes
        .iter()
        .map(|n| crate::listed::row_problem(file, n))
        .collect();
    let lines = crate::listed::listed(&problems, ("row", "rows"), "likewise");
    for (i, line) in lines.into_iter().enumerate() {
        // The counted lines name the file; the first ones carry it already.
        if i < crate::listed::LISTED {
            events.note(line);
        } else {
            events.note(format!("{file}: {line}"));
        }
    }
}
