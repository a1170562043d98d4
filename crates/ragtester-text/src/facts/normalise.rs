//! Text rewritten so that one fact has one spelling before anything compares it: typographic apostrophes
//! and contractions ("doesn’t" → "does not"), full-width digits, English number words (text2num: "thirty-
//! five" → 35, "fifteenth" → 15th), Chinese numerals (chinese-number: 十四 → 14, 二〇二三 → 2023, 两 → 2)
//! and a few words text2num leaves alone ("a dozen", "half an hour").

use chinese_number::{ChineseCountMethod, ChineseToNumber};
use std::sync::OnceLock;
use text2num::{Language, replace_numbers_in_text};

/// `text` with apostrophes, contractions, number words and numerals in one spelling each.
pub fn normalise(text: &str) -> String {
    let text = contractions(&width(text));
    let text = english_numbers(&text);
    chinese_numbers(&text)
}

/// Full-width digits, letters and punctuation (１２３，％) as their ASCII forms; ideographic space as a space.
fn width(text: &str) -> String {
    text.chars()
        .map(|c| match c as u32 {
            0xFF10..=0xFF19 | 0xFF21..=0xFF3A | 0xFF41..=0xFF5A | 0xFF05 | 0xFF0E | 0xFF1A => {
                char::from_u32(c as u32 - 0xFEE0).unwrap_or(c)
            }
            0x3000 => ' ',
            _ => c,
        })
        .collect()
}

/// Typographic apostrophes as ASCII and English contractions spelt out, so that "doesn’t", "doesn't" and
/// "does not" read alike wherever a negation is compared. Chinese ways of saying "need not" (不用, 不必,
/// 无需, 无须, 不需) become one, 不需要.
pub fn contractions(text: &str) -> String {
    let mut t = text.replace(['\u{2019}', '\u{2018}', '\u{02BC}', '\u{FF07}'], "'");
    for (from, to) in [
        ("won't", "will not"),
        ("Won't", "Will not"),
        ("can't", "cannot"),
        ("Can't", "Cannot"),
        ("shan't", "shall not"),
        ("ain't", "is not"),
    ] {
        t = t.replace(from, to);
    }
    if t.contains("n't") {
        t = t.replace("n't", " not");
    }
    for (from, to) in [
        ("无需", "不需要"),
        ("无须", "不需要"),
        ("不必", "不需要"),
        ("不用", "不需要"),
    ] {
        t = t.replace(from, to);
    }
    t
}

fn english() -> &'static Language {
    static EN: OnceLock<Language> = OnceLock::new();
    EN.get_or_init(Language::english)
}

/// English number words as digits. A lone "one" or "first" stays a word (it is a pronoun or an adverb far
/// more often than a fact: "no one", "first, …"), as text2num's lone-number threshold does; "per second"
/// is a unit, not the ordinal text2num would make of it.
fn english_numbers(text: &str) -> String {
    if !text.chars().any(|c| c.is_ascii_alphabetic()) {
        return text.to_string();
    }
    let mut t = text.to_string();
    for (from, to) in [
        ("an hour and a half", "1.5 hours"),
        ("half an hour", "30 minutes"),
        ("half a day", "12 hours"),
        ("half a year", "6 months"),
        ("a dozen", "12"),
        ("A dozen", "12"),
        ("dozen", "12"),
        ("dozens of", "many"),
        ("per second", "per sec"),
        ("a second", "a sec"),
        ("the first ", "the 1st "),
        ("The first ", "The 1st "),
    ] {
        if t.contains(from) {
            t = t.replace(from, to);
        }
    }
    let t = replace_numbers_in_text(&digit_scales(&t), english(), 2.0);
    and_a_half(&t)
}

/// "2 and a half" (text2num's reading of "two and a half") as 2.5.
fn and_a_half(text: &str) -> String {
    static HALF: OnceLock<regex::Regex> = OnceLock::new();
    if !text.contains("and a half") {
        return text.to_string();
    }
    let re =
        HALF.get_or_init(|| regex::Regex::new(r"\b(\d+) and a half\b").expect("a valid pattern"));
    re.replace_all(text, "${1}.5").into_owned()
}

/// "1.2 million" as 1200000 before text2num reads "million" as a number of its own.
fn digit_scales(text: &str) -> String {
    static SCALED: OnceLock<regex::Regex> = OnceLock::new();
    let re = SCALED.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\b(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(thousand|million|billion)\b",
        )
        .expect("a valid pattern")
    });
    re.replace_all(text, |c: &regex::Captures| {
        let factor = match c[2].to_lowercase().as_str() {
            "thousand" => 1e3,
            "million" => 1e6,
            _ => 1e9,
        };
        match super::parse_number(&c[1]) {
            Some(v) => format!("{}", v * factor),
            None => c[0].to_string(),
        }
    })
    .into_owned()
}

const CHINESE_DIGITS: &str = "零〇一二两兩三四五六七八九";
const CHINESE_SCALES: &str = "十百千万亿萬億";
/// What may follow a lone Chinese numeral for it to be a figure: units and measure words.
const CHINESE_AFTER: &str = "年月日号天周个次名位人条本张台辆项种家层倍岁点时秒元块角米克斤吨升度楼期届章节册页所座间套件只首部篇句份颗棵双对组批场轮局艘架枚粒栋户集季";
/// Units of more than one character that may follow a Chinese numeral.
const CHINESE_UNITS_AFTER: &[&str] = &[
    "分钟",
    "公里",
    "公斤",
    "公顷",
    "千米",
    "千克",
    "千瓦",
    "千帕",
    "英里",
    "毫升",
    "毫米",
    "毫克",
    "厘米",
    "平方",
    "摄氏度",
    "小时",
    "个月",
    "世纪",
];
/// What must follow a lone 一 for it to be the figure one: a unit ("一个", "一点", "一度" are words).
const ONE_BEFORE: &[&str] = &[
    "年", "月", "日", "号", "天", "周", "元", "米", "克", "斤", "吨", "升", "个月", "小时", "分钟",
    "秒", "公里", "千米", "公斤", "千克",
];

/// Words before a numeral that make it a pointer, not a count: 这两个游戏 ("these two games", already
/// named), 这一天 ("this day"), 每一天 ("every day"), 有一天 ("one day").
const POINTS_BEFORE: &str = "这那哪";
const ONE_AFTER_WORD: &str = "这那哪每同某任唯统之其有上下";

/// Chinese numerals as digits: a run that starts with a digit or 十 and is a figure by its form (two or
/// more numerals with a scale: 十四, 九十二; or 〇: 二〇二三) or by what stands around it (a unit after it,
/// 第 or 百分之 before it). 一般, 一起, 万一 and 千万 are words, not figures, and stay.
fn chinese_numbers(text: &str) -> String {
    if !text
        .chars()
        .any(|c| CHINESE_DIGITS.contains(c) || c == '十')
    {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let numeral = |c: char| CHINESE_DIGITS.contains(c) || CHINESE_SCALES.contains(c);
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let starts = CHINESE_DIGITS.contains(chars[i]) || chars[i] == '十';
        if !starts {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let mut end = i;
        // 千 that opens a unit (千瓦, 千米, 千克) ends the numeral before it: 四千二百千瓦时 is 4200 kWh.
        let opens_unit = |at: usize| {
            chars[at] == '千' && chars.get(at + 1).is_some_and(|c| "瓦米克帕伏".contains(*c))
        };
        while end < chars.len() && numeral(chars[end]) && !opens_unit(end) {
            end += 1;
        }
        let run: String = chars[i..end].iter().collect();
        let before = |s: &str| {
            let n = s.chars().count();
            i >= n && chars[i - n..i].iter().copied().eq(s.chars())
        };
        let after = chars.get(end).copied();
        let by_form = (end - i >= 2
            && run.chars().any(|c| c == '〇' || CHINESE_SCALES.contains(c)))
            || (end - i >= 2
                && run.chars().all(|c| CHINESE_DIGITS.contains(c))
                && after == Some('年'));
        let rest: String = chars[end..chars.len().min(end + 3)].iter().collect();
        let unit_after = if run == "一" {
            ONE_BEFORE.iter().any(|u| rest.starts_with(u))
        } else {
            after.is_some_and(|c| CHINESE_AFTER.contains(c))
                || CHINESE_UNITS_AFTER.iter().any(|u| rest.starts_with(u))
        };
        let by_place = unit_after || before("第") || before("百分之");
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let points = previous.is_some_and(|c| {
            POINTS_BEFORE.contains(c) || (run == "一" && ONE_AFTER_WORD.contains(c))
        });
        match (!points && (by_form || by_place))
            .then(|| chinese_value(&run))
            .flatten()
        {
            Some(v) => out.push_str(&v.to_string()),
            None => out.push_str(&run),
        }
        i = end;
    }
    out
}

/// The value of a run of Chinese numerals: counted (一百二十 = 120) or read digit by digit (二〇二三 = 2023).
fn chinese_value(run: &str) -> Option<u64> {
    // Traditional forms read as their simplified ones (一萬三千五百 = 一万三千五百).
    let run: String = run
        .chars()
        .map(|c| match c {
            '萬' => '万',
            '億' => '亿',
            '兩' => '两',
            c => c,
        })
        .collect();
    let run = run.as_str();
    let counted: Result<u64, _> = run.to_number(ChineseCountMethod::TenThousand);
    counted.ok().or_else(|| run.to_number_naive().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contractions_and_apostrophes_read_alike() {
        assert_eq!(contractions("It doesn’t open."), "It does not open.");
        assert_eq!(contractions("It can't."), "It cannot.");
        assert_eq!(contractions("It won’t."), "It will not.");
        assert_eq!(contractions("无需预约"), contractions("不用预约"));
    }

    #[test]
    fn english_number_words_become_digits() {
        assert_eq!(normalise("It takes two years."), "It takes 2 years.");
        assert_eq!(normalise("thirty-five technicians"), "35 technicians");
        assert_eq!(normalise("a dozen valves"), "12 valves");
        assert_eq!(normalise("the fifteenth of March"), "the 15th of March");
        assert_eq!(normalise("no one came"), "no one came");
        assert_eq!(normalise("5 metres per second"), "5 metres per sec");
    }

    #[test]
    fn chinese_numerals_become_digits_where_they_are_figures() {
        assert_eq!(normalise("三年"), "3年");
        assert_eq!(normalise("两个人"), "2个人");
        assert_eq!(normalise("百分之九十二"), "百分之92");
        assert_eq!(normalise("二〇二三年"), "2023年");
        assert_eq!(normalise("共十四名"), "共14名");
        assert_eq!(normalise("第三章"), "第3章");
        assert_eq!(normalise("一般来说，大家一起"), "一般来说，大家一起");
        assert_eq!(normalise("千万不要"), "千万不要");
        assert_eq!(normalise("１２３％"), "123%");
        assert_eq!(normalise("两首不同的诗"), "2首不同的诗");
    }

    #[test]
    fn chinese_numerals_that_point_are_words() {
        assert_eq!(normalise("这两个游戏都很难"), "这两个游戏都很难");
        assert_eq!(normalise("元宵节这一天"), "元宵节这一天");
        assert_eq!(normalise("每一天"), "每一天");
        assert_eq!(normalise("每三年一次"), "每3年一次");
        assert_eq!(normalise("第一天"), "第1天");
        assert_eq!(normalise("下一年"), "下一年");
        assert_eq!(normalise("重一萬三千五百斤"), "重13500斤");
    }
}
