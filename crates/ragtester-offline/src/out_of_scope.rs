//! Out-of-scope questions, offline: a real subject of the document (what its title names: a product, an
//! organisation, else the document itself) asked for a property the document does not state, worded as
//! a whole question per property so both languages stay grammatical ("in which year was Lumen City
//! Transit founded?", "迅风牌电动自行车锂电池的零售价格是多少？") instead of one aspect glued to any word.

/// What a title names, which decides the properties that can be asked of it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Thing,
    Organisation,
    /// The title names neither: the document itself is asked about.
    Document,
}

/// A question about a property, `{s}` standing for the subject, and the words whose presence in the
/// document means it may state the property (lower-case, matched as substrings).
struct Property {
    en: &'static str,
    zh: &'static str,
    cues: &'static [&'static str],
}

const THING: &[Property] = &[
    Property {
        en: "what is the retail price of the {s}?",
        zh: "{s}的零售价格是多少？",
        cues: &["retail", "price", "零售", "价格", "售价"],
    },
    Property {
        en: "what is the maximum operating altitude of the {s}?",
        zh: "{s}的最大工作海拔是多少？",
        cues: &["altitude", "海拔"],
    },
    Property {
        en: "in which country is the {s} manufactured?",
        zh: "{s}是在哪个国家生产的？",
        cues: &["manufactur", "made in", "产地", "生产", "制造"],
    },
    Property {
        en: "how is the {s} recycled at the end of its life?",
        zh: "{s}报废后如何回收？",
        cues: &["recycl", "回收"],
    },
];

const ORGANISATION: &[Property] = &[
    Property {
        en: "in which year was {s} founded?",
        zh: "{s}是哪一年创立的？",
        cues: &["founded", "established", "创立", "成立", "创办"],
    },
    Property {
        en: "who is the chief executive of {s}?",
        zh: "{s}的首席执行官是谁？",
        cues: &["chief executive", "ceo", "首席执行官", "总经理"],
    },
    Property {
        en: "which company insures {s}?",
        zh: "{s}由哪家保险公司承保？",
        cues: &["insur", "保险"],
    },
    Property {
        en: "what is the head office address of {s}?",
        zh: "{s}的总部地址在哪里？",
        cues: &["head office", "headquarter", "总部"],
    },
];

const DOCUMENT: &[Property] = &[
    Property {
        en: "who wrote this document?",
        zh: "这份文件的作者是谁？",
        cues: &["author", "written by", "作者", "编写"],
    },
    Property {
        en: "which organisation published this document?",
        zh: "这份文件由哪个机构发布？",
        cues: &["publish", "发布", "出版"],
    },
    Property {
        en: "what is the ISBN of this document?",
        zh: "这份文件的ISBN编号是多少？",
        cues: &["isbn"],
    },
    Property {
        en: "how many copies of this document were printed?",
        zh: "这份文件印刷了多少份？",
        cues: &["copies were printed", "print run", "印数", "印刷了"],
    },
    Property {
        en: "what is the retail price of the printed edition of this document?",
        zh: "这份文件纸质版的定价是多少？",
        cues: &["retail", "定价", "零售"],
    },
];

const THING_WORDS: &[&str] = &[
    "pump",
    "sensor",
    "battery",
    "device",
    "charger",
    "motor",
    "valve",
    "machine",
    "printer",
    "camera",
    "meter",
    "scooter",
    "bike",
    "电池",
    "设备",
    "传感器",
    "泵",
    "机",
    "器",
    "车",
    "仪",
];
const ORGANISATION_WORDS: &[&str] = &[
    "transit",
    "terminal",
    "library",
    "observatory",
    "company",
    "authority",
    "council",
    "museum",
    "hospital",
    "school",
    "university",
    "bakery",
    "station",
    "airport",
    "harbour",
    "club",
    "天文台",
    "图书馆",
    "工坊",
    "公司",
    "站",
    "馆",
    "局",
    "中心",
    "医院",
    "学校",
    "协会",
];
/// Words a title adds to its subject to say what kind of document it is.
const DOCUMENT_WORDS_EN: &[&str] = &[
    "manual",
    "guide",
    "field",
    "rider",
    "report",
    "handbook",
    "operations",
    "instructions",
    "rules",
    "faq",
    "annual",
    "user",
    "owner's",
    "quick",
    "start",
    "notes",
    "overview",
    "datasheet",
    "specification",
    "specifications",
    "leaflet",
    "brochure",
];
const DOCUMENT_WORDS_ZH: &[&str] = &[
    "参观指南",
    "读者须知",
    "运行手册",
    "保修说明",
    "操作规范",
    "使用说明",
    "说明书",
    "手册",
    "指南",
    "须知",
    "规范",
    "说明",
];

/// An out-of-scope question about the document titled `title`; `seed` picks among the properties its
/// text gives no cue of (among all of them when it has a cue of each).
pub fn question(title: &str, document: &str, language: &str, seed: u64) -> Option<String> {
    let zh = language == "zh";
    let (subject, kind) = subject_of_title(title);
    let lower = document.to_lowercase();
    let absent = |p: &&Property| !p.cues.iter().any(|c| lower.contains(c));
    let properties = match kind {
        Kind::Thing => THING,
        Kind::Organisation => ORGANISATION,
        Kind::Document => DOCUMENT,
    };
    let fitting: Vec<&Property> = properties.iter().filter(absent).collect();
    let fitting = if fitting.is_empty() {
        DOCUMENT.iter().filter(absent).collect()
    } else {
        fitting
    };
    // A document with a cue of every property (a FAQ that names its authors, publisher and ISBN) is
    // still asked about its subject: whether the corpus answers is the unanswered check's to say.
    let fitting = if fitting.is_empty() {
        properties.iter().collect()
    } else {
        fitting
    };
    let property = fitting.get(seed as usize % fitting.len().max(1))?;
    let asked = if zh { property.zh } else { property.en };
    let asked = asked.replace("{s}", &subject);
    Some(if zh {
        format!("根据《{}》，{asked}", title.trim_matches(['《', '》']))
    } else {
        format!("According to \"{title}\", {asked}")
    })
}

/// The subject a title names and what kind it is: "Harbor HX-40 Bilge Pump Manual" → ("Harbor HX-40
/// Bilge Pump", thing); "清河市图书馆读者须知" → ("清河市图书馆", organisation).
fn subject_of_title(title: &str) -> (String, Kind) {
    let title = title.trim().trim_matches(['《', '》']);
    // "Lumen City Transit: Rider Guide 2026": the part before a colon names the subject.
    let head = title.split([':', '：']).next().unwrap_or(title);
    let subject = if head.chars().any(ragtester_text::is_cjk) {
        let mut s: String = head
            .split(['（', '('])
            .next()
            .unwrap_or(head)
            .trim()
            .to_string();
        while let Some(rest) = DOCUMENT_WORDS_ZH.iter().find_map(|w| s.strip_suffix(w)) {
            s = rest.to_string();
        }
        s
    } else {
        head.split_whitespace()
            .filter(|w| {
                let l = w.to_lowercase();
                !DOCUMENT_WORDS_EN.contains(&l.as_str()) && !l.chars().all(|c| c.is_ascii_digit())
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let lower = subject.to_lowercase();
    let has = |words: &[&str]| {
        words.iter().any(|w| {
            if w.is_ascii() {
                lower.split_whitespace().any(|t| t.starts_with(w))
            } else {
                lower.ends_with(w) || (w.chars().count() > 1 && lower.contains(w))
            }
        })
    };
    // A model code ("HX-40", "GS-7") names a product.
    let coded = subject.split_whitespace().any(|t| {
        t.chars().any(|c| c.is_ascii_digit()) && t.chars().any(|c| c.is_ascii_uppercase())
    });
    let kind = if subject.chars().count() < 2 {
        Kind::Document
    } else if coded || has(THING_WORDS) {
        Kind::Thing
    } else if has(ORGANISATION_WORDS) {
        Kind::Organisation
    } else {
        Kind::Document
    };
    (subject, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_name_their_subject_and_its_kind() {
        for (title, subject, kind) in [
            (
                "Harbor HX-40 Bilge Pump Manual",
                "Harbor HX-40 Bilge Pump",
                Kind::Thing,
            ),
            (
                "Lumen City Transit: Rider Guide 2026",
                "Lumen City Transit",
                Kind::Organisation,
            ),
            (
                "Norka Ferry Terminal operations handbook",
                "Norka Ferry Terminal",
                Kind::Organisation,
            ),
            (
                "Annual Water Quality Report 2025",
                "Water Quality",
                Kind::Document,
            ),
            ("清河市图书馆读者须知", "清河市图书馆", Kind::Organisation),
            (
                "迅风牌电动自行车锂电池保修说明",
                "迅风牌电动自行车锂电池",
                Kind::Thing,
            ),
            ("冷藏运输操作规范（2025版）", "冷藏运输", Kind::Document),
        ] {
            assert_eq!(
                subject_of_title(title),
                (subject.to_string(), kind),
                "{title}"
            );
        }
    }

    #[test]
    fn a_property_the_document_states_is_never_asked() {
        let q = question(
            "Harbor HX-40 Bilge Pump Manual",
            "The pump costs 120 euros at retail. It runs at 12 V.",
            "en",
            0,
        )
        .unwrap();
        assert_eq!(
            q,
            "According to \"Harbor HX-40 Bilge Pump Manual\", what is the maximum operating altitude \
             of the Harbor HX-40 Bilge Pump?"
        );
        let q = question("清河市图书馆读者须知", "图书馆每天九点开馆。", "zh", 1).unwrap();
        assert_eq!(
            q,
            "根据《清河市图书馆读者须知》，清河市图书馆的首席执行官是谁？"
        );
        let q = question(
            "冷藏运输操作规范（2025版）",
            "冷冻品须保持在零下18摄氏度。",
            "zh",
            0,
        )
        .unwrap();
        assert_eq!(
            q,
            "根据《冷藏运输操作规范（2025版）》，这份文件的作者是谁？"
        );
    }
}
