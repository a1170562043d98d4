//! Chinese questions keep the sentence's order and put the question word where the answer stands: 多少,
//! 哪一年, 几, 谁, 什么, 为什么, 如何.

use super::Wh;

const ZH_DIGITS: &str = "零一二两三四五六七八九十百千万亿几";
const ZH_UNITS: &str = "个次小时分钟秒天日周月年岁米升克度伏安瓦巴倍份项台人元字行页位条种步";

/// Words that open a clause without being its topic.
const ZH_OPENERS: &[&str] = &[
    "而且",
    "而",
    "但是",
    "但",
    "因此",
    "所以",
    "另外",
    "此外",
    "同时",
    "然后",
    "并且",
    "例如",
    "比如",
    "其实",
    "当然",
    "总之",
    "首先",
    "其次",
    "最后",
    "目前",
    "现在",
    "通常",
    "一般来说",
    "不过",
    "那么",
];

pub(super) fn chinese(sentence: &str) -> Option<Wh> {
    let body = sentence
        .trim()
        .trim_end_matches(['。', '！', '；', '：', '.']);
    let chars: Vec<char> = body.chars().collect();
    let mut clauses: Vec<&str> = Vec::new();
    let mut from = 0;
    for (k, (at, c)) in body.char_indices().enumerate() {
        // "1，000元" is one figure, not two clauses.
        if matches!(c, '，' | ',' | '；') && !thousands_separator(&chars, k) {
            clauses.push(&body[from..at]);
            from = at + c.len_utf8();
        }
    }
    clauses.push(&body[from..]);
    let clauses: Vec<&str> = clauses
        .into_iter()
        .map(|c| {
            let c = c.trim();
            ZH_OPENERS
                .iter()
                .find_map(|o| c.strip_prefix(o))
                .unwrap_or(c)
                .trim()
        })
        .filter(|c| c.chars().count() >= 2)
        .collect();
    zh_cause(&clauses)
        .or_else(|| zh_procedure(&clauses))
        .or_else(|| zh_condition(&clauses))
        .or_else(|| zh_quantity(&clauses))
        .or_else(|| zh_definition(&clauses))
        .or_else(|| zh_agent(&clauses))
        .or_else(|| zh_object(&clauses))
}

/// "如果A，B" / "当A时，B" → "如果A，会怎样？"
fn zh_condition(clauses: &[&str]) -> Option<Wh> {
    let first = clauses.first()?;
    let condition = ["如果", "假如", "若", "当"]
        .iter()
        .any(|p| first.starts_with(p));
    let result = clauses.get(1..)?.join("，");
    (condition && first.chars().count() >= 4 && result.chars().count() >= 4).then(|| Wh {
        question: format!("{first}，会怎样？"),
        form: "condition",
        keywords: vec![result.chars().take(8).collect()],
    })
}

/// A clause's topic: a noun phrase, not a conjunction, a modal or a pronoun.
fn zh_topic(topic: &str) -> bool {
    let n = topic.chars().count();
    let bad_start = [
        "如果", "可以", "然后", "但", "因此", "所以", "而", "并", "也", "还", "就", "你", "我",
        "他", "只要", "当", "在", "对于", "如", "若", "可", "这", "那", "它", "其", "此", "会",
        "能", "要", "需要", "不", "没有", "以上", "以下", "有时", "通常", "特别", "另一", "假设",
        "否则", "例如", "比如", "一般", "可能", "上述", "下面", "前面", "后面", "该", "每", "某",
    ];
    // A clause in the topic ("许多人利用 TeX") makes it no noun phrase.
    let verb_inside = ["可以", "利用", "通过", "使用", "需要", "可能", "你", "我们"]
        .iter()
        .any(|v| topic.contains(v));
    (2..=20).contains(&n) && !bad_start.iter().any(|b| topic.starts_with(b)) && !verb_inside
}

/// "更换工作由设备管理员负责" → "更换工作由谁负责？"
fn zh_agent(clauses: &[&str]) -> Option<Wh> {
    for clause in clauses {
        let Some(at) = clause.find('由') else {
            continue;
        };
        let (topic, after) = (&clause[..at], &clause[at + '由'.len_utf8()..]);
        // A verb inside a noun (管理员, 开发者) is not the clause's verb.
        let verb = [
            "负责", "提供", "完成", "开发", "维护", "编写", "管理", "审批", "批准", "执行",
        ]
        .iter()
        .flat_map(|v| after.match_indices(v))
        .filter(|(i, v)| {
            !after[i + v.len()..].starts_with(['员', '者', '人', '部', '处', '局', '方'])
        })
        .min()?;
        let agent = &after[..verb.0];
        if topic.chars().count() >= 2 && (1..=12).contains(&agent.chars().count()) {
            return Some(Wh {
                question: format!("{topic}由谁{}？", &after[verb.0..]),
                form: "subject",
                keywords: vec![agent.trim().to_string()],
            });
        }
    }
    None
}

/// "X提供了Y" / "X包括Y" / "X用于Y" → "X提供了什么？" …: the object asked for, the topic kept.
fn zh_object(clauses: &[&str]) -> Option<Wh> {
    const VERBS: &[(&str, &str)] = &[
        ("提供了", "什么"),
        ("提供", "什么"),
        ("包括", "哪些内容"),
        ("包含", "哪些内容"),
        ("用于", "什么"),
        ("支持", "什么"),
        ("需要", "什么"),
        ("使用", "什么"),
        ("采用", "什么"),
        ("称为", "什么"),
        ("叫做", "什么"),
        ("分为", "哪几类"),
        ("位于", "哪里"),
        ("允许", "什么"),
        ("负责", "什么"),
        ("带来了", "什么"),
        ("实现了", "什么"),
        ("解决了", "什么"),
        ("定义了", "什么"),
        ("推出了", "什么"),
        ("发布了", "什么"),
        ("表示", "什么"),
        ("代表", "什么"),
        ("规定", "什么"),
        ("产生", "什么"),
        ("生成", "什么"),
        ("影响", "什么"),
        ("设置", "什么"),
        ("修改", "什么"),
        ("调用", "什么"),
    ];
    clauses.iter().take(3).find_map(|clause| {
        let (at, verb, asked) = VERBS
            .iter()
            .filter_map(|(v, a)| clause.find(v).map(|i| (i, *v, *a)))
            .min_by_key(|(i, v, _)| (*i, std::cmp::Reverse(v.len())))?;
        let topic = clause[..at].trim();
        let object = clause[at + verb.len()..].trim();
        (zh_topic(topic) && object.chars().count() >= 2).then(|| Wh {
            question: format!("{topic}{verb}{asked}？"),
            form: "detail",
            keywords: vec![object.chars().take(8).collect()],
        })
    })
}

/// "因为A，所以B" / "由于A，B" → "为什么B？"
fn zh_cause(clauses: &[&str]) -> Option<Wh> {
    let first = clauses.first()?;
    let reason = first
        .strip_prefix("因为")
        .or_else(|| first.strip_prefix("由于"))?;
    let result = clauses.get(1..)?.join("，");
    let result = result.strip_prefix("所以").unwrap_or(&result).trim();
    (result.chars().count() >= 4).then(|| Wh {
        question: format!("为什么{result}？"),
        form: "cause",
        keywords: vec![reason.chars().take(8).collect()],
    })
}

/// "要A，请B" / "如需A，B" / "为了A，B" → "如何A？"
fn zh_procedure(clauses: &[&str]) -> Option<Wh> {
    let first = clauses.first()?;
    if ["要求", "要点", "要素", "要是", "要么"]
        .iter()
        .any(|w| first.starts_with(w))
    {
        return None;
    }
    let goal = ["如果要", "如需", "要想", "为了", "要"]
        .iter()
        .find_map(|p| first.strip_prefix(p))?;
    let steps = clauses.get(1..)?.join("，");
    (goal.chars().count() >= 2 && steps.chars().count() >= 4).then(|| Wh {
        question: format!("如何{goal}？"),
        form: "procedure",
        keywords: vec![steps.chars().take(8).collect()],
    })
}

/// The first figure of a clause replaced by 多少 (or a year by 哪一年), the clause kept as it stands.
fn zh_quantity(clauses: &[&str]) -> Option<Wh> {
    for (i, clause) in clauses.iter().enumerate() {
        let Some((start, end, figure)) = zh_figure(clause) else {
            continue;
        };
        let chars: Vec<char> = clause.chars().collect();
        let year = chars.get(end) == Some(&'年') && figure.chars().count() == 4;
        // An ordinal (第二个) is asked with 几, a year with 哪一年, any other figure with 多少.
        let ordinal = start > 0 && chars[start - 1] == '第';
        let (asked, rest_from) = match (year, ordinal) {
            (true, _) => ("哪一年", end + 1),
            (false, true) => ("几", end),
            (false, false) => ("多少", end),
        };
        let mut question: String = chars[..start].iter().collect();
        question.push_str(asked);
        question.extend(&chars[rest_from..]);
        // A later clause often has no subject of its own ("每次持续3小时"): the clauses before it say what
        // it is about.
        if i > 0 {
            question = format!("{}，{question}", clauses[..i].join("，"));
        }
        return Some(Wh {
            question: format!("{question}？"),
            form: if year { "time" } else { "quantity" },
            keywords: vec![figure],
        });
    }
    None
}

/// A figure (Arabic or Chinese numerals) followed by a unit: (start, end, figure) in chars.
fn zh_figure(clause: &str) -> Option<(usize, usize, String)> {
    // Numerals inside words that are not figures: 十分 (very), 一些 (some), 二次 (secondary) …
    const IDIOMS: &[&str] = &[
        "十分",
        "一些",
        "一下",
        "一起",
        "一般",
        "一直",
        "一定",
        "一旦",
        "一样",
        "一致",
        "万一",
        "二次",
        "一方面",
        "一切",
        "千万",
        "万分",
        "一再",
        "一律",
        "一共",
        "一点",
    ];
    let chars: Vec<char> = clause.chars().collect();
    let mut found: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < chars.len() {
        let arabic = chars[i].is_ascii_digit();
        let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
        if !arabic && IDIOMS.iter().any(|w| rest.starts_with(w)) {
            i += 2;
            continue;
        }
        if arabic || ZH_DIGITS.contains(chars[i]) {
            let mut j = i;
            while j < chars.len()
                && (if arabic {
                    chars[j].is_ascii_digit()
                        || (chars[j] == '.' && chars.get(j + 1).is_some_and(char::is_ascii_digit))
                        || thousands_separator(&chars, j)
                } else {
                    ZH_DIGITS.contains(chars[j])
                })
            {
                j += 1;
            }
            // "5.8千克", "3万元": after Arabic digits a multiplier belongs to the unit, which the question
            // keeps ("多少千克"), rather than being a figure of its own.
            let unit_follows = chars.get(j).is_some_and(|c| {
                ZH_UNITS.contains(*c)
                    || c.is_ascii_alphabetic()
                    || *c == '%'
                    || (arabic && "十百千万亿".contains(*c))
            });
            // "一次" and "一个" usually mean "once" or "a": a figure only when no other is found.
            let lone_one = !arabic && j == i + 1 && matches!(chars[i], '一' | '两' | '几');
            if unit_follows && !lone_one {
                return Some((i, j, chars[i..j].iter().collect()));
            }
            if unit_follows && found.is_none() {
                found = Some((i, j));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    let _ = found;
    None
}

/// A comma between digit groups ("1,000", "1，000"): three digits follow it and no fourth.
fn thousands_separator(chars: &[char], at: usize) -> bool {
    matches!(chars[at], ',' | '，')
        && at > 0
        && chars[at - 1].is_ascii_digit()
        && (1..=3).all(|k| chars.get(at + k).is_some_and(char::is_ascii_digit))
        && !chars.get(at + 4).is_some_and(char::is_ascii_digit)
}

/// "X是Y" with a short X → "X是什么？"; "X指Y" → "X指的是什么？"
fn zh_definition(clauses: &[&str]) -> Option<Wh> {
    let first = clauses.first()?;
    for (marker, asked) in [
        ("是指", "是指什么"),
        ("指的是", "指的是什么"),
        ("是", "是什么"),
    ] {
        if let Some(at) = first.find(marker) {
            let term = first[..at].trim();
            let definition = first[at + marker.len()..].trim();
            let n = term.chars().count();
            let vague = [
                "这", "那", "它", "他", "她", "我", "你", "其", "此", "但", "就", "也", "都", "还",
                "不",
            ]
            .iter()
            .any(|v| term.starts_with(v) || term.ends_with(v));
            if (2..=12).contains(&n) && definition.chars().count() >= 4 && !vague && zh_topic(term)
            {
                return Some(Wh {
                    question: format!("{term}{asked}？"),
                    form: "definition",
                    keywords: vec![definition.chars().take(8).collect()],
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::testing::{asked, q};

    #[test]
    fn chinese_questions_put_the_question_word_in_place() {
        assert_eq!(
            q("离心机每运行五百小时必须更换一次密封圈。"),
            Some((
                "离心机每运行多少小时必须更换一次密封圈？".into(),
                "quantity"
            ))
        );
        assert_eq!(asked("水泵每分钟输送40升水。"), "水泵每分钟输送多少升水？");
        assert_eq!(
            q("温度传感器PT100的校准周期为六个月，校准记录保存在设备档案中。"),
            Some(("温度传感器PT100的校准周期为多少个月？".into(), "quantity"))
        );
        assert_eq!(asked("电池组净重5.8千克。"), "电池组净重多少千克？");
        assert_eq!(
            asked("全年无温度事故的司机可获得1，000元安全奖励。"),
            "全年无温度事故的司机可获得多少元安全奖励？"
        );
        assert_eq!(
            q("该标准于2019年正式发布。"),
            Some(("该标准于哪一年正式发布？".into(), "time"))
        );
        assert_eq!(
            q("CTAN是全球TeX资源的综合存档网络。"),
            Some(("CTAN是什么？".into(), "definition"))
        );
        assert_eq!(
            q("由于转子出现裂纹，离心机必须立即停止使用。"),
            Some(("为什么离心机必须立即停止使用？".into(), "cause"))
        );
        assert_eq!(
            q("如需升级宏包，请运行包管理器并选择更新。"),
            Some(("如何升级宏包？".into(), "procedure"))
        );
        assert_eq!(q("它是一个很好的工具。"), None);
        assert_eq!(
            q("更换工作由设备管理员负责。"),
            Some(("更换工作由谁负责？".into(), "subject"))
        );
        assert_eq!(
            asked("balance 宏包提供了双栏底部对齐的功能。"),
            "balance 宏包提供了什么？"
        );
    }
}
