//! What kind of text a section is, decided before it may feed a case. Real manuals and FAQs are not all
//! prose: a table of contents, an index, a reference list, running heads, a title page or a block of code
//! read as sentences to a question writer, and the questions they give ("What figure fills the blank in:
//! "____ 3.3.1 Lexical scoping"?") measure nothing. Each test is a density of signals that survive PDF
//! extraction, which joins a page's lines into paragraphs: dot leaders, entry numbering, page references,
//! citation marks, code symbols. The first class whose signal is strong enough wins, in the order below;
//! a section with at least one real sentence and none of them is prose.

use ragtester_core::SectionClass;
use ragtester_text::{contents_entries, count_leaders, is_askable_sentence, is_cjk, sentences};

/// A section's class and, for any class but prose, the evidence a reader of the suite report sees.
#[derive(Debug, Clone, PartialEq)]
pub struct Classified {
    pub class: SectionClass,
    pub reason: String,
}

/// Classify a section's text; `index` is its place in the document (a title page comes first).
pub fn classify(text: &str, index: usize) -> Classified {
    let s = Signals::of(text);
    let found = |class, reason: String| Classified { class, reason };
    let opening = first_line(text).to_lowercase();
    let opens_with = |names: &[&str]| names.iter().any(|n| opening.starts_with(n));
    let entries = contents_entries(text);
    if entries >= 2 && s.sentences <= entries {
        return found(
            SectionClass::TableOfContents,
            format!("{entries} numbered entries between page numbers"),
        );
    }
    // Extraction may give one contents entry per paragraph, so a single leader with no sentence counts.
    if s.leaders >= 3
        || s.leaders >= 1
            && (s.sentences == 0 || opens_with(&["contents", "table of contents", "目录", "目 录"]))
    {
        return found(
            SectionClass::TableOfContents,
            format!("{} entries with dot leaders to a page number", s.leaders),
        );
    }
    if s.page_lists >= 5 && s.page_lists * 6 >= s.words || opens_with(&["index", "索引"]) {
        return found(
            SectionClass::Index,
            format!("{} terms followed by page numbers", s.page_lists),
        );
    }
    if s.citations >= 4 && s.citations * 12 >= s.words
        || opens_with(&["references", "bibliography", "参考文献"]) && s.citations >= 1
    {
        return found(
            SectionClass::References,
            format!(
                "{} citation marks (years, et al., DOIs, volumes)",
                s.citations
            ),
        );
    }
    if s.is_code() {
        return found(
            SectionClass::Code,
            format!(
                "{:.0}% code symbols, {} commands, {} of {} lines shaped like code",
                s.symbol_share() * 100.0,
                s.commands,
                s.code_lines,
                s.lines
            ),
        );
    }
    if s.numbers >= 6 && s.numbers * 5 >= s.tokens() * 2 {
        return found(
            SectionClass::TableOfNumbers,
            format!("{} of {} tokens are numbers", s.numbers, s.tokens()),
        );
    }
    if s.front_marks >= 2 || s.front_marks >= 1 && index <= 2 {
        return found(
            SectionClass::FrontMatter,
            format!("{} copyright, licence or edition notices", s.front_marks),
        );
    }
    // A paragraph cut by the section's token cap may hold no closed sentence and still be prose; a title
    // block or a list of headings is short lines.
    if s.sentences == 0 && (s.words < 15 || s.longest_line_words < 12) {
        let (class, why) = if s.words <= 6 && s.numbers > 0 {
            (SectionClass::PageFurniture, "a page number or running head")
        } else if index == 0 {
            (SectionClass::FrontMatter, "a title block with no sentence")
        } else {
            (
                SectionClass::Headings,
                "headings or labels with no sentence",
            )
        };
        return found(class, why.to_string());
    }
    found(SectionClass::Prose, String::new())
}

/// Counts that separate the classes.
#[derive(Debug, Default)]
struct Signals {
    /// Words (letters) and CJK characters count as words.
    words: usize,
    numbers: usize,
    lines: usize,
    /// Runs of four or more dots, spaced or not, before a page number.
    leaders: usize,
    /// A term followed by a comma and page numbers (an index entry).
    page_lists: usize,
    citations: usize,
    /// `\command` (TeX) tokens.
    commands: usize,
    /// Characters typical of code among the visible ones.
    symbols: usize,
    visible: usize,
    code_lines: usize,
    front_marks: usize,
    /// Sentences a user could ask about: long enough, closed by sentence punctuation, not a question.
    sentences: usize,
    longest_line_words: usize,
}

impl Signals {
    fn of(text: &str) -> Self {
        let mut s = Signals::default();
        for token in text.split_whitespace() {
            let bare = token.trim_matches(|c: char| !c.is_alphanumeric());
            if bare.is_empty() {
                continue;
            }
            if bare
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
            {
                s.numbers += 1;
            } else {
                let cjk = bare.chars().filter(|c| is_cjk(*c)).count();
                s.words += if cjk > 0 { cjk } else { 1 };
            }
            if token.starts_with('\\') && token[1..].starts_with(|c: char| c.is_ascii_alphabetic())
            {
                s.commands += 1;
            }
        }
        s.leaders = count_leaders(text);
        s.page_lists = count_page_lists(text);
        s.citations = count_citations(text);
        s.front_marks = count_front_marks(text);
        for c in text.chars().filter(|c| !c.is_whitespace()) {
            s.visible += 1;
            if "{}[]();=<>\\$#%&|^~_@".contains(c) {
                s.symbols += 1;
            }
        }
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            s.lines += 1;
            s.longest_line_words = s.longest_line_words.max(
                line.split_whitespace().count() + line.chars().filter(|c| is_cjk(*c)).count() / 2,
            );
            if looks_like_code(line) {
                s.code_lines += 1;
            }
        }
        s.sentences = sentences(text)
            .into_iter()
            .map(|(a, b)| text.chars().skip(a).take(b - a).collect::<String>())
            .filter(|sentence| is_askable_sentence(sentence))
            .count();
        s
    }

    fn tokens(&self) -> usize {
        self.words + self.numbers
    }

    fn symbol_share(&self) -> f64 {
        self.symbols as f64 / self.visible.max(1) as f64
    }

    fn is_code(&self) -> bool {
        let shaped = self.code_lines >= 2 && self.code_lines * 5 >= self.lines * 2;
        let tex = self.commands >= 3 && self.commands * 6 >= self.words;
        self.symbol_share() >= 0.15
            || (self.symbol_share() >= 0.06 && (shaped || tex))
            || (tex && self.sentences == 0)
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// `scoping, 12, 45` or `scoping 12–14`: a term, then page numbers, then the next term.
fn count_page_lists(text: &str) -> usize {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let is_page = |t: &str| {
        let t = t.trim_end_matches([',', ';']);
        !t.is_empty()
            && t.len() <= 7
            && t.chars()
                .all(|c| c.is_ascii_digit() || c == '-' || c == '–')
            && t.starts_with(|c: char| c.is_ascii_digit())
    };
    tokens
        .windows(2)
        .filter(|w| w[0].ends_with(',') && !is_page(w[0]) && is_page(w[1]))
        .count()
}

fn count_citations(text: &str) -> usize {
    let lower = text.to_lowercase();
    let marks = [
        "et al.",
        "doi:",
        "doi.org",
        "pp.",
        "vol.",
        "proceedings",
        "journal of",
        "isbn",
    ];
    let mut n: usize = marks.iter().map(|m| lower.matches(m).count()).sum();
    // `(1997)`, `(2019a)` and `[12]`.
    let chars: Vec<char> = text.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c == '(' {
            let inner: String = chars[i + 1..]
                .iter()
                .take_while(|c| **c != ')')
                .take(6)
                .collect();
            let year = inner.trim_end_matches(|c: char| c.is_ascii_lowercase());
            if year.len() == 4
                && year.chars().all(|c| c.is_ascii_digit())
                && (year.starts_with("19") || year.starts_with("20"))
            {
                n += 1;
            }
        } else if *c == '[' {
            let inner: String = chars[i + 1..]
                .iter()
                .take_while(|c| **c != ']')
                .take(4)
                .collect();
            if !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit()) {
                n += 1;
            }
        }
    }
    n
}

fn count_front_marks(text: &str) -> usize {
    let lower = text.to_lowercase();
    [
        "copyright",
        "©",
        "all rights reserved",
        "permission is granted",
        "isbn",
        "printed in",
        "licensed under",
        "this manual is for",
        "permission is hereby granted",
        "without warranty",
        "merchantability",
        "the above copyright notice",
        "版权所有",
        "保留所有权利",
    ]
    .iter()
    .map(|m| lower.matches(m).count())
    .sum()
}

/// A line shaped like code: a prompt, a comment, an assignment, or one closed by a brace or semicolon.
fn looks_like_code(line: &str) -> bool {
    let opens = ["$ ", "> ", "# ", "//", "#include", "def ", "import ", "\\"];
    let closes = [";", "{", "}", ")", "\\\\"];
    let has = ["<-", "==", "!=", ":=", "=>", "->", "::", "()", "%>%"];
    opens.iter().any(|o| line.starts_with(o))
        || closes.iter().any(|c| line.ends_with(c))
        || has.iter().any(|h| line.contains(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> SectionClass {
        classify(text, 5).class
    }

    // Each text below is as ingestion gives it from a real PDF: the R FAQ (R 4.2.2 documentation,
    // `r-doc-pdf`), the CTeX FAQ (`texlive-lang-chinese`) and the Debian Reference.
    #[test]
    fn a_contents_page_is_not_prose() {
        let toc = "2 R Basics. . . . . . . . . . . . . . . . 3 2.1 What is R?. . . . . . . . . . . . . 3 2.2 \
                   What machines does R run on? . . . . . . . . . 3 2.3 What is the current version of R? . . \
                   . . . . . . . 4";
        assert_eq!(class(toc), SectionClass::TableOfContents);
        let zh = "1 CT E X 是干什么的？ . . . . . . . . . . . . . . . 5 2 CT E X 网站包括几个部分？ . . . . . \
                  . . . . . . . . 5 3 这个 FAQ 的目的是什么？ . . . . . . . . . . . . 5";
        assert_eq!(class(zh), SectionClass::TableOfContents);
    }

    #[test]
    fn prose_with_a_numbered_heading_is_prose() {
        let text = "2.1 What is R?\n\nR is a system for statistical computation and graphics. It consists \
                    of a language plus a run-time environment with graphics, a debugger, access to certain \
                    system functions, and the ability to run programs stored in script files.";
        assert_eq!(class(text), SectionClass::Prose);
        let zh = "CTeX 是中国 TeX 用户组织的简称，它的网站提供了大量的中文排版资料和软件下载服务。";
        assert_eq!(class(zh), SectionClass::Prose);
    }

    #[test]
    fn code_tex_and_r_are_code() {
        let tex = "\\makeatletter \\def\\ExtendSymbol#1#2#3#4#5{\\ext@arrow 0099{\\arrowfill@#1#2#3}{#4}{#5}} \
                   \\makeatother";
        assert_eq!(class(tex), SectionClass::Code);
        let r = "> x <- c(1, 2, 3)\n> mean(x)\n[1] 2\n> lm(y ~ x, data = d)";
        assert_eq!(class(r), SectionClass::Code);
        let shell = "$ sudo apt-get install r-base\n$ R --version\nif (x > 0) { y <- log(x); }";
        assert_eq!(class(shell), SectionClass::Code);
    }

    #[test]
    fn index_references_tables_and_front_matter() {
        let index = "lexical scoping, 12, 45 lists, 7, 19 loops, 33 matrices, 8, 21 methods, 40 \
                     namespaces, 51, 52 options, 9";
        assert_eq!(class(index), SectionClass::Index);
        let refs = "[1] R. A. Becker, J. M. Chambers and A. R. Wilks (1988). The New S Language. Chapman & \
                    Hall. [2] J. M. Chambers (1998). Programming with Data. Springer, New York. [3] R. Ihaka \
                    and R. Gentleman (1996). R: A language for data analysis and graphics. Journal of \
                    Computational and Graphical Statistics, vol. 5, pp. 299–314.";
        assert_eq!(class(refs), SectionClass::References);
        let table =
            "Version 2.1 2.2 2.3 3.0\nSize 120 340 560 780\nTime 1.5 2.5 3.5 4.5\nRuns 10 20 30 40";
        assert_eq!(class(table), SectionClass::TableOfNumbers);
        let copyright =
            "Copyright © 2003-2009 CTEX and all the Contributors to CTEX FAQ. All rights reserved.";
        assert_eq!(class(copyright), SectionClass::FrontMatter);
        assert_eq!(
            classify("R FAQ\n\nKurt Hornik and the R Core Team", 0).class,
            SectionClass::FrontMatter
        );
        assert_eq!(class("CONTENTS 2"), SectionClass::PageFurniture);
        assert_eq!(class("Installation\n\nUpgrading"), SectionClass::Headings);
    }

    #[test]
    fn contents_without_leaders_and_licences_are_not_prose() {
        // debmake-doc's contents pages (Debian `debmake-doc`, GPL): entries with no dot leaders.
        let toc = "1 Overview 1 2 Prerequisites 3 2.1 People around Debian 3 2.2 How to contribute 3 2.3 \
                   Social dynamics of Debian 4";
        assert_eq!(class(toc), SectionClass::TableOfContents);
        let mit = "Permission is hereby granted, free of charge, to any person obtaining a copy of this \
                   software. THE SOFTWARE IS PROVIDED AS IS, WITHOUT WARRANTY OF ANY KIND.";
        assert_eq!(class(mit), SectionClass::FrontMatter);
        assert!(!is_askable_sentence(
            "THE SOFTWARE IS PROVIDED AS IS, WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED."
        ));
        assert!(!is_askable_sentence(
            "4 Voraussetzungen 3 2.1 Leute bei Debian sind hier."
        ));
    }

    #[test]
    fn sentences_that_are_headings_or_entries_are_not_askable() {
        assert!(is_askable_sentence(
            "The relief valve opens at 4.5 bar during operation."
        ));
        assert!(!is_askable_sentence(
            "3 2.3 What is the current version of R?"
        ));
        assert!(!is_askable_sentence("6 2.2 What machines does R run on."));
        assert!(!is_askable_sentence(
            "3.3.1 Lexical scoping is described in the manual."
        ));
        assert!(!is_askable_sentence("What machines does R run on?"));
        assert!(is_askable_sentence(
            "离心机每运行五百小时必须更换一次密封圈。"
        ));
    }
}
