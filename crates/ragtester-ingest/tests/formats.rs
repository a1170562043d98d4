//! Every loader on real files written to disk, and every bad input the ingest stage must survive.

use ragtester_core::DocumentFormat;
use ragtester_ingest::{IngestOptions, ingest_paths, ingest_paths_with, load_file, load_file_with};
use ragtester_testkit::pdf::{Line, PageSpec, PdfFont, PdfSpec, layout, write_pdf};
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

const PARAS: [&str; 4] = [
    "Alpha paragraph opens the first column and talks about centrifugal pumps, impellers and the suction side of the casing in considerable detail.",
    "Bravo paragraph continues with seals, bearings and the lubrication schedule that keeps the shaft turning smoothly for years.",
    "Charlie paragraph moves to the electrical side: the motor, its starter, the thermal overload relay and the wiring diagram.",
    "Delta paragraph closes with troubleshooting, listing the symptoms of cavitation, air locks and a blocked strainer.",
];

/// Whether every word occurs in `text`, in the given order (a missing word fails with the text).
fn in_order(text: &str, words: &[&str]) -> bool {
    let at: Vec<usize> = words
        .iter()
        .map(|w| {
            text.find(w)
                .unwrap_or_else(|| panic!("{w} missing in {text}"))
        })
        .collect();
    at.windows(2).all(|w| w[0] < w[1])
}

#[test]
fn pdf_columns_read_in_order() {
    let dir = tempfile::tempdir().unwrap();
    for columns in [2, 3] {
        let pages = layout(&PARAS, columns, None, None);
        assert_eq!(pages.len(), 1, "fixture fits one page");
        let p = write(
            dir.path(),
            &format!("cols{columns}.pdf"),
            &write_pdf(&PdfSpec {
                pages,
                ..Default::default()
            }),
        );
        let doc = load_file(&p).unwrap();
        assert_eq!(doc.format, DocumentFormat::Pdf);
        assert!(
            in_order(&doc.text, &["Alpha", "Bravo", "Charlie", "Delta"]),
            "{columns} columns out of order: {}",
            doc.text
        );
        // Lines of one column are not interleaved with the next column's lines.
        assert!(
            doc.text.contains("centrifugal pumps, impellers"),
            "{}",
            doc.text
        );
    }
}

#[test]
fn pdf_running_lines_removed_and_pages_mapped() {
    let dir = tempfile::tempdir().unwrap();
    const WORDS: [&str; 8] = [
        "amber", "basalt", "cobalt", "dune", "ember", "fjord", "granite", "heath",
    ];
    let long: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "The {} {} part: {}",
                WORDS[i % 8],
                WORDS[i / 8],
                PARAS[i % 4]
            )
        })
        .collect();
    let refs: Vec<&str> = long.iter().map(String::as_str).collect();
    let pages = layout(
        &refs,
        1,
        Some("ACME P-200 Service Manual"),
        Some("Confidential"),
    );
    assert!(pages.len() >= 3, "{}", pages.len());
    let bytes = write_pdf(&PdfSpec {
        pages: pages.clone(),
        ..Default::default()
    });
    let p = write(dir.path(), "manual.pdf", &bytes);
    let doc = load_file(&p).unwrap();
    assert!(
        !doc.text.contains("ACME P-200"),
        "header kept: {}",
        &doc.text[..200]
    );
    assert!(!doc.text.contains("Confidential"));
    assert_eq!(doc.pages.len(), pages.len());
    // Every page's range holds text first placed on that page.
    let chars: Vec<char> = doc.text.chars().collect();
    for (i, page) in doc.pages.iter().enumerate() {
        let text: String = chars[page.start..page.end].iter().collect();
        let first_body = pages[i].lines[0]
            .text
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            text.contains(&first_body),
            "page {} lacks {first_body:?}: {text}",
            i + 1
        );
    }
    let kept = ingest_paths_with(
        &[p],
        &IngestOptions {
            strip_running_lines: false,
            ..IngestOptions::default()
        },
    );
    assert!(kept.documents[0].text.contains("ACME P-200"));
}

#[test]
fn pdf_hyphenated_line_ends_are_rejoined() {
    let dir = tempfile::tempdir().unwrap();
    let page = PageSpec {
        lines: vec![
            Line::new(72.0, 700.0, "The maintenance schedule is docu-"),
            Line::new(72.0, 686.0, "mented in the appendix of this manual."),
        ],
        drawing: None,
    };
    let p = write(
        dir.path(),
        "hy.pdf",
        &write_pdf(&PdfSpec {
            pages: vec![page],
            ..Default::default()
        }),
    );
    let doc = load_file(&p).unwrap();
    assert!(
        doc.text.contains("is documented in the appendix"),
        "{}",
        doc.text
    );
}

#[test]
fn bad_pdfs_fail_alone_with_named_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_pdf(&PdfSpec {
        pages: layout(&PARAS[..1], 1, None, None),
        ..Default::default()
    });
    write(dir.path(), "good.pdf", &good);
    write(dir.path(), "zero.pdf", b"");
    write(
        dir.path(),
        "garbage.pdf",
        b"this is not a pdf at all, just text with the wrong name",
    );
    write(
        dir.path(),
        "encrypted.pdf",
        &write_pdf(&PdfSpec {
            pages: layout(&PARAS[..1], 1, None, None),
            encrypted: true,
            ..Default::default()
        }),
    );
    let scan = PageSpec {
        lines: Vec::new(),
        drawing: Some("0.5 g 72 72 400 600 re f".into()),
    };
    write(
        dir.path(),
        "scan.pdf",
        &write_pdf(&PdfSpec {
            pages: vec![scan.clone(), scan],
            ..Default::default()
        }),
    );
    write(
        dir.path(),
        "notzip.docx",
        b"plain text pretending to be a docx",
    );
    let truncated = &good[..good.len() / 3];
    write(dir.path(), "truncated.pdf", truncated);

    let report = ingest_paths(&[dir.path().to_path_buf()]);
    let error_of = |name: &str| {
        report
            .failures
            .iter()
            .find(|f| f.path.file_name().unwrap() == name)
            .map(|f| f.error.clone())
    };
    assert!(
        report
            .documents
            .iter()
            .any(|d| d.source.ends_with("good.pdf"))
    );
    assert_eq!(error_of("zero.pdf").unwrap(), "file is empty");
    assert!(error_of("garbage.pdf").unwrap().contains("not a PDF"));
    assert!(
        error_of("encrypted.pdf").unwrap().contains("encrypted"),
        "{:?}",
        error_of("encrypted.pdf")
    );
    assert!(
        error_of("scan.pdf").unwrap().contains("no text layer"),
        "{:?}",
        error_of("scan.pdf")
    );
    assert!(error_of("notzip.docx").unwrap().contains("not a DOCX"));
    // A truncated file either yields what text survives or fails with a message: never a panic or a hang.
    let truncated_read = report
        .documents
        .iter()
        .any(|d| d.source.ends_with("truncated.pdf"));
    assert!(truncated_read || error_of("truncated.pdf").is_some());
}

#[test]
fn oversized_files_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.pdf");
    // A sparse 300 MiB file: the size check must fire without reading it.
    std::fs::File::create(&p)
        .unwrap()
        .set_len(300 * 1024 * 1024)
        .unwrap();
    let report = ingest_paths(std::slice::from_ref(&p));
    let err = &report.failures[0].error;
    assert!(
        err.contains("limit file_mb = 256 exceeded: the file is 300 MiB"),
        "{err}"
    );
}

#[test]
fn docx_headings_become_sections() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("guide.docx");
    office_oxide::create::create_from_markdown(
        "# Pump Guide\n\nThe pump moves water.\n\n## Limits\n\nMaximum pressure is 4.5 bar.\n\n## 保修\n\n保修期为二十四个月。\n",
        office_oxide::DocumentFormat::Docx,
        &p,
    )
    .unwrap();
    let doc = load_file(&p).unwrap();
    assert_eq!(doc.format, DocumentFormat::Docx);
    assert_eq!(doc.title, "Pump Guide");
    assert!(
        doc.text
            .contains("\n\nLimits\n\nMaximum pressure is 4.5 bar."),
        "{}",
        doc.text
    );
    assert!(doc.text.contains("保修期为二十四个月。"));
}

#[test]
fn text_encodings_are_detected() {
    let dir = tempfile::tempdir().unwrap();
    let zh = "离心泵的最大工作压力为四点五巴。每次启动前必须检查密封圈是否完好，并确认进口阀门已经打开。";
    let (gbk, _, _) = encoding_rs::GB18030.encode(zh);
    write(dir.path(), "gbk.txt", &gbk);
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(
        "UTF-16 manual text: the relief valve opens at 4.5 bar."
            .encode_utf16()
            .flat_map(u16::to_le_bytes),
    );
    write(dir.path(), "utf16.txt", &utf16);
    let report = ingest_paths(&[dir.path().to_path_buf()]);
    assert_eq!(report.documents.len(), 2, "{:?}", report.failures);
    assert!(
        report
            .documents
            .iter()
            .any(|d| d.text == zh && d.language == "zh")
    );
    assert!(
        report
            .documents
            .iter()
            .any(|d| d.text.contains("relief valve opens at 4.5 bar"))
    );
    assert_eq!(report.warnings.len(), 1);
    assert!(report.warnings[0].path.ends_with("gbk.txt"));
    assert!(report.warnings[0].error.contains("GBK"));
}

/// The sample corpus's PDFs, rendered by Chromium: a two-column English report and a Chinese guide, both with
/// running headers and "page N of M" footers.
#[test]
fn sample_corpus_pdfs_read_cleanly() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/corpus");
    let en = load_file(&corpus.join("cedar-valley-water-report.pdf")).unwrap();
    assert_eq!((en.language.as_str(), en.pages.len()), ("en", 2));
    assert!(!en.text.contains("page 1 of 2"), "footer kept");
    assert!(!en.text.contains("Utility · Annual"), "header kept");
    // Left column before right column on page 1.
    assert!(in_order(
        &en.text,
        &[
            "Where your water comes from",
            "How the water is treated",
            "Lead pipes",
        ],
    ));
    assert!(en.text.contains(
        "Cedar Valley Water Utility serves 48,300 residents through 412 kilometres of mains."
    ));
    let zh = load_file(&corpus.join("xinghai-cold-chain-guide.pdf")).unwrap();
    assert_eq!((zh.language.as_str(), zh.pages.len()), ("zh", 2));
    assert!(
        !zh.text.contains("共 2 页") && !zh.text.contains("共2页"),
        "footer kept"
    );
    assert!(!zh.text.contains("有限公司 · 冷藏"), "header kept");
    assert!(
        zh.text
            .contains("冷冻品须保持在零下18摄氏度或更低；冷藏品保持在0至4摄氏度"),
        "{}",
        zh.text
    );
    // Table rows keep their own lines.
    assert!(
        zh.text
            .lines()
            .any(|l| l.starts_with("冷藏") && l.contains("鲜奶")),
        "{}",
        zh.text
    );
    // Every page range lies inside the text and they do not overlap.
    for doc in [&en, &zh] {
        assert!(doc.pages.windows(2).all(|w| w[0].end <= w[1].start));
        assert_eq!(doc.pages.last().unwrap().end, doc.text.chars().count());
    }
}

/// Glyphs TeX sets off the baseline come back inside their words, in x-order: the lowered E of the TeX logo,
/// the raised A of LaTeX, a CTeX-style Chinese title, a superscript, a subscript and a footnote mark, where
/// pdf_oxide alone gives "CT X FAQ E" and "LAT X E". `fixtures/tex-logos-shifted.tex` is the source.
#[test]
fn baseline_shifted_glyphs_stay_in_their_words() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tex-logos-shifted.pdf");
    let doc = load_file(&fixture).unwrap();
    for expected in [
        "CTEX 常见问题集",
        "本文的大部分内容都来自于 CTEX 论坛上的讨论，CTEX 网站提供最新版本。",
        "Typesetting with LATEX",
        "Documents written in LATEX are compiled by TEX into PDF files.",
        "the square is x2 square metres, water is H2O, and the tank holds 103 litres.1",
    ] {
        assert!(
            doc.text.contains(expected),
            "{expected:?} missing from {:?}",
            doc.text
        );
    }
    for broken in ["CT X", "T X", " E ", "H O", "10 3"] {
        assert!(!doc.text.contains(broken), "{broken:?} in {:?}", doc.text);
    }
}

/// A Chinese pdfLaTeX document (CJK package, Arphic Type 1 fonts) without ToUnicode maps, the kind pypdf
/// returns as mojibake: the characters come back through the fonts' built-in glyph names, and the overstruck
/// bold headings are printed once. `fixtures/tex-cjk-no-tounicode.tex` is its source.
#[test]
fn tex_cjk_pdf_without_tounicode_is_read() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tex-cjk-no-tounicode.pdf");
    let (doc, warning) = load_file_with(&fixture, &IngestOptions::default()).unwrap();
    assert_eq!(warning, None, "read as glyph codes");
    assert_eq!((doc.language.as_str(), doc.pages.len()), ("zh", 1));
    // Extractors may put a space where the font changes between Latin and CJK.
    let compact: String = doc.text.chars().filter(|c| !c.is_whitespace()).collect();
    for sentence in [
        "设备维护手册",
        "本手册说明了实验室离心机的日常维护流程。",
        "离心机每运行五百小时必须更换一次密封圈，更换工作由设备管理员负责。",
        "如果转子出现裂纹，应立即停止使用并联系供应商。",
        "传感器校准",
        "温度传感器PT100的校准周期为六个月，校准记录保存在设备档案中。",
    ] {
        assert!(
            compact.contains(sentence),
            "{sentence} missing from {}",
            doc.text
        );
    }
    assert!(
        !doc.text.contains("设设"),
        "overstruck heading kept: {}",
        doc.text
    );
    // The engine double-spaces this page; a paragraph's wrapped lines are joined again.
    assert!(
        doc.text.contains("必须更换一次密封圈"),
        "wrapped line left as a paragraph break: {}",
        doc.text
    );
}

/// Chinese set in a non-embedded STSong-Light over the predefined GBK-EUC-H CMap, with no ToUnicode map (older
/// Chinese producers): the characters come back through the predefined CMap and the Adobe-GB1 collection.
#[test]
fn chinese_pdf_in_a_predefined_cmap_without_tounicode_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let sentences = [
        "冷库温度必须保持在零下十八摄氏度以下。",
        "每批货物入库前由质检员抽样检查，记录保存三年。",
    ];
    let lines = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| Line::new(72.0, 700.0 - 20.0 * i as f32, *s))
        .collect();
    let path = write(
        dir.path(),
        "gbk.pdf",
        &write_pdf(&PdfSpec {
            pages: vec![PageSpec {
                lines,
                drawing: None,
            }],
            font: PdfFont::SongGbk,
            ..Default::default()
        }),
    );
    let (doc, warning) = load_file_with(&path, &IngestOptions::default()).unwrap();
    assert_eq!(warning, None);
    assert_eq!(doc.language, "zh");
    let compact: String = doc.text.chars().filter(|c| !c.is_whitespace()).collect();
    for sentence in sentences {
        assert!(
            compact.contains(sentence),
            "{sentence} missing from {}",
            doc.text
        );
    }
}

/// A real page (Debian Reference, page 32; provenance in `fixtures/README.md`): a package table whose last rows
/// the producer wrote column by column, and paragraphs the engine joins into one line each. Every table row
/// reads left to right on its own line, and paragraphs stay apart.
#[test]
fn real_table_page_keeps_rows_and_paragraphs() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/debian-reference-tables.pdf");
    let doc = load_file(&fixture).unwrap();
    for row in [
        [
            "mc",
            "V:54, I:226",
            "1482",
            "A text-mode full-screen file manager",
        ],
        ["emacs-nox", "V:3, I:18", "33819", "GNU project Emacs"],
        ["w3m", "V:14, I:190", "2828", "Text-mode WWW browsers"],
        ["gpm", "V:11, I:14", "521", "The Unix style cut-and-paste"],
    ] {
        let line = doc
            .text
            .lines()
            .find(|l| l.starts_with(row[0]) && l.contains(row[3]))
            .unwrap_or_else(|| panic!("no line holds the row {row:?}: {}", doc.text));
        assert!(in_order(line, &row), "row {row:?} out of order: {line}");
    }
    let paragraphs: Vec<&str> = doc.text.split("\n\n").collect();
    for opening in [
        "Just like any other modern OS",
        "You can shutdown the system under the normal multiuser mode",
        "It may be a good idea to read",
    ] {
        assert!(
            paragraphs.iter().any(|p| p.starts_with(opening)),
            "no paragraph opens with {opening:?}: {}",
            doc.text
        );
    }
}

#[test]
fn records_are_read_when_the_caller_says_so_never_guessed_inside_a_folder() {
    use ragtester_ingest::{Input, ingest_inputs};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pump.md"),
        "# Pump\n\nThe pump runs at 4.5 bar.",
    )
    .unwrap();
    let first = ingest_paths(&[dir.path().to_path_buf()]);
    assert_eq!(first.documents.len(), 1);
    let records = dir.path().join("kept.jsonl");
    ragtester_core::write_jsonl_atomic(&records, &first.documents).unwrap();
    // In the folder the records file is not a document: the corpus is still the one Markdown file.
    let walked = ingest_paths(&[dir.path().to_path_buf()]);
    assert_eq!(walked.documents.len(), 1);
    assert!(walked.failures.is_empty(), "{:?}", walked.failures);
    // Named on its own, a `.jsonl` file is records, whatever its name, and reads back the same documents.
    assert_eq!(Input::of_path(&records), Input::Records(records.clone()));
    let back = ingest_paths(std::slice::from_ref(&records));
    assert_eq!(back.documents, first.documents);
    // Said to be sources, the same file is not a document format and fails naming it.
    let as_sources = ingest_inputs(
        &[Input::Sources(records.clone())],
        &IngestOptions::default(),
    );
    assert!(as_sources.documents.is_empty());
    assert!(as_sources.failures[0].path.ends_with("kept.jsonl"));
}
