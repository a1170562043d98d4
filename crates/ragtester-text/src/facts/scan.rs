//! Quantities found in normalised text: dates and times of day first (their numbers are parts, not
//! figures of their own), then every number with what stands around it — a currency, a percent sign, a
//! scale word, a unit, an ordinal suffix — or alone.

use super::units::{Dimension, unit_at};
use super::{DateParts, Quantity};
use regex::{Captures, Regex};
use std::sync::OnceLock;

const MONTHS: &str = "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec";

struct Patterns {
    iso_date: Regex,
    numeric_date: Regex,
    chinese_date: Regex,
    chinese_month_day: Regex,
    chinese_year: Regex,
    day_month: Regex,
    month_day: Regex,
    month_year: Regex,
    decade: Regex,
    time_meridiem: Regex,
    time_clock: Regex,
    time_oclock: Regex,
    time_words: Regex,
    chinese_time: Regex,
    number: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = |s: &str| Regex::new(&s.replace("MONTHS", MONTHS)).expect("a valid pattern");
        Patterns {
            iso_date: re(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})"),
            numeric_date: re(r"(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})"),
            chinese_date: re(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?"),
            chinese_month_day: re(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"),
            chinese_year: re(r"(\d{4})\s*年(代)?"),
            day_month: re(
                r"(?i)(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(MONTHS)\b\.?(?:,?\s+(\d{4}))?",
            ),
            month_day: re(
                r"(?i)(MONTHS)\b\.?\s+(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?",
            ),
            month_year: re(r"(?i)(MONTHS)\b\.?,?\s+(?:of\s+)?(\d{4})"),
            decade: re(r"(?i)(?:the\s+)?(\d{3}0)'?s\b"),
            time_meridiem: re(r"(?i)(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?\s?m\b\.?"),
            time_clock: re(r"(\d{1,2}):(\d{2})(?::\d{2})?"),
            time_oclock: re(r"(?i)(\d{1,2})\s*o'clock"),
            time_words: re(r"(?i)\b(noon|midday|midnight)\b"),
            chinese_time: re(
                r"(上午|早上|早晨|凌晨|中午|下午|傍晚|晚上)?\s*(\d{1,2})\s*[点點时](?:\s*(\d{1,2})\s*分|(半))?",
            ),
            number: re(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?"),
        }
    })
}

/// Every quantity of a normalised text, in order of where it stands.
pub fn scan(text: &str) -> Vec<Quantity> {
    let mut found = Found::new(text);
    let p = patterns();
    found.each(&p.iso_date, |c| {
        date(num(c, 1)?, num(c, 2)?, Some(num(c, 3)?))
    });
    found.each(&p.chinese_date, |c| {
        date(num(c, 1)?, num(c, 2)?, c.get(3).and_then(|_| num(c, 3)))
    });
    found.each(&p.chinese_month_day, |c| {
        month_day(num(c, 1)?, num(c, 2)?, None)
    });
    found.each(&p.numeric_date, numeric_date);
    found.each(&p.day_month, |c| {
        month_day(month(c, 2)?, num(c, 1)?, c.get(3).and_then(|_| num(c, 3)))
    });
    found.each(&p.month_day, |c| {
        month_day(month(c, 1)?, num(c, 2)?, c.get(3).and_then(|_| num(c, 3)))
    });
    found.each(&p.month_year, |c| date(num(c, 2)?, month(c, 1)?, None));
    found.each(&p.chinese_year, |c| {
        let year = num(c, 1)?;
        if c.get(2).is_some() {
            return Some(Quantity::plain(Dimension::Decade, year, vec![year]));
        }
        (1000.0..=2200.0).contains(&year).then(|| {
            Quantity::date(
                vec![DateParts {
                    year: Some(year as i32),
                    month: None,
                    day: None,
                }],
                vec![year],
            )
        })
    });
    found.each(&p.decade, |c| {
        let year = num(c, 1)?;
        Some(Quantity::plain(Dimension::Decade, year, vec![year]))
    });
    found.each(&p.time_meridiem, |c| {
        let (h, m) = (num(c, 1)?, c.get(2).and_then(|_| num(c, 2)).unwrap_or(0.0));
        let pm = c[3].eq_ignore_ascii_case("p");
        time(h, m, Some(pm))
    });
    found.each(&p.time_oclock, |c| time(num(c, 1)?, 0.0, None));
    found.each(&p.time_clock, |c| time(num(c, 1)?, num(c, 2)?, None));
    found.each(&p.time_words, |c| {
        let minutes = if c[1].eq_ignore_ascii_case("midnight") {
            0.0
        } else {
            720.0
        };
        Some(Quantity::plain(Dimension::TimeOfDay, minutes, vec![]))
    });
    found.each(&p.chinese_time, chinese_time);
    found.numbers(&p.number);
    found.done()
}

/// The matches taken so far (byte ranges) and the quantities they gave.
struct Found<'a> {
    text: &'a str,
    taken: Vec<(usize, usize)>,
    out: Vec<(usize, Quantity)>,
}

impl<'a> Found<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            taken: Vec::new(),
            out: Vec::new(),
        }
    }

    fn free(&self, from: usize, to: usize) -> bool {
        self.taken.iter().all(|&(a, b)| to <= a || from >= b)
    }

    /// A match stands alone: no letter or digit runs into it from either side (CJK text may).
    fn apart(&self, from: usize, to: usize) -> bool {
        let before = self.text[..from].chars().next_back();
        let after = self.text[to..].chars().next();
        let joins = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !joins(before)
            && !joins(after)
            && before != Some('.')
            && after.is_none_or(|c| {
                c != '.' || !self.text[to + 1..].starts_with(|d: char| d.is_ascii_digit())
            })
    }

    fn take(&mut self, from: usize, to: usize, mut q: Quantity) {
        q.text = self.text[from..to].trim().to_string();
        self.taken.push((from, to));
        self.out.push((from, q));
    }

    fn each(&mut self, re: &Regex, read: impl Fn(&Captures) -> Option<Quantity>) {
        for c in re.captures_iter(self.text) {
            let m = c.get(0).expect("the whole match");
            if !self.free(m.start(), m.end()) || !self.apart(m.start(), m.end()) {
                continue;
            }
            if may_is_a_verb(&c, m.as_str()) {
                continue;
            }
            if let Some(q) = read(&c) {
                self.take(m.start(), m.end(), q);
            }
        }
    }

    /// Numbers not yet read as part of a date or time, each with its currency, percent, scale, unit or
    /// ordinal suffix.
    fn numbers(&mut self, re: &Regex) {
        let text = self.text;
        for m in re.find_iter(text) {
            let (mut from, mut to) = (m.start(), m.end());
            if !self.free(from, to) {
                continue;
            }
            let before = text[..from].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_') {
                continue;
            }
            let Some(mut value) = parse_number(m.as_str()) else {
                continue;
            };
            let written = value;
            let (scale, scale_len) = scale_at(&text[to..]);
            value *= scale;
            to += scale_len;
            let prefix = currency_before(&text[..from]);
            if let Some((code, len)) = prefix {
                from -= len;
                let (extra, extra_len) = scale_at(&text[to..]);
                self.take(
                    from,
                    to + extra_len,
                    Quantity::plain(Dimension::Money(code), value * extra, vec![written]),
                );
                continue;
            }
            if text[..from].trim_end().ends_with("百分之") {
                let start = text[..from].trim_end().len() - "百分之".len();
                self.take(
                    start,
                    to,
                    Quantity::plain(Dimension::Percent, value, vec![written]),
                );
                continue;
            }
            let rest = &text[to..];
            if let Some(len) = [
                "世纪",
                "th century",
                "st century",
                "nd century",
                "rd century",
            ]
            .iter()
            .find(|c| rest.to_lowercase().starts_with(*c))
            .map(|c| c.len())
            .filter(|_| (1.0..=30.0).contains(&value))
            {
                let first = (value - 1.0) * 100.0;
                self.take(
                    from,
                    to + len,
                    Quantity::plain(Dimension::Century, first, vec![value]),
                );
                continue;
            }
            if rest.starts_with("年代") && value < 100.0 {
                // 70年代: the 1970s.
                let year = 1900.0 + value;
                self.take(
                    from,
                    to + "年代".len(),
                    Quantity::plain(Dimension::Decade, year, vec![year]),
                );
                continue;
            }
            let gap = rest.len() - rest.trim_start_matches([' ', '-', '\u{a0}']).len();
            let after = &rest[gap..];
            if let Some((dimension, len)) = suffix_at(after, gap) {
                let q = match dimension {
                    Suffix::Percent => Quantity::plain(Dimension::Percent, value, vec![written]),
                    Suffix::Money(code) => {
                        Quantity::plain(Dimension::Money(code), value, vec![written])
                    }
                    // 每小时30公里: a distance per hour is a speed.
                    Suffix::Unit(Dimension::Length, factor) if text[..from].ends_with("每小时") => {
                        Quantity::plain(Dimension::Speed, value * factor / 3600.0, vec![written])
                    }
                    Suffix::Unit(d, factor) => Quantity::plain(d, value * factor, vec![written]),
                    Suffix::Ordinal => Quantity::plain(Dimension::Count, value, vec![written]),
                };
                self.take(from, to + gap + len, q);
                continue;
            }
            let glued = rest.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
            if glued {
                // "5G", "3D", "A4x": a model name or code, not a figure.
                continue;
            }
            self.take(
                from,
                to,
                Quantity::plain(Dimension::Count, value, vec![written]),
            );
        }
    }

    fn done(mut self) -> Vec<Quantity> {
        self.out.sort_by_key(|(at, _)| *at);
        self.out.into_iter().map(|(_, q)| q).collect()
    }
}

enum Suffix {
    Percent,
    Money(&'static str),
    Unit(Dimension, f64),
    Ordinal,
}

/// What follows a number (after `gap` bytes of space or hyphen), and its length in bytes.
fn suffix_at(after: &str, gap: usize) -> Option<(Suffix, usize)> {
    let lower = after[..after.floor_char_boundary(24)].to_lowercase();
    for (name, suffix) in [
        ("%", Suffix::Percent),
        ("percent", Suffix::Percent),
        ("per cent", Suffix::Percent),
        ("pct", Suffix::Percent),
    ] {
        if lower.starts_with(name) && word_ends(after, name.len()) {
            return Some((suffix, name.len()));
        }
    }
    for (name, code) in CURRENCY_AFTER {
        if lower.starts_with(name) && word_ends(after, name.len()) {
            return Some((Suffix::Money(code), name.len()));
        }
    }
    if gap == 0 {
        for name in ["st", "nd", "rd", "th"] {
            if lower.starts_with(name) && word_ends(after, 2) {
                return Some((Suffix::Ordinal, 2));
            }
        }
    }
    let (unit, len) = unit_at(after)?;
    Some((Suffix::Unit(unit.dimension, unit.factor), len))
}

fn word_ends(text: &str, len: usize) -> bool {
    let last = text[..len].chars().next_back();
    if last.is_some_and(crate::is_cjk) || last == Some('%') {
        return true;
    }
    text[len..]
        .chars()
        .next()
        .is_none_or(|c| !c.is_ascii_alphanumeric())
}

const CURRENCY_AFTER: &[(&str, &str)] = &[
    ("us dollars", "USD"),
    ("dollars", "USD"),
    ("dollar", "USD"),
    ("usd", "USD"),
    ("euros", "EUR"),
    ("euro", "EUR"),
    ("eur", "EUR"),
    ("pounds sterling", "GBP"),
    ("gbp", "GBP"),
    ("yuan", "CNY"),
    ("rmb", "CNY"),
    ("cny", "CNY"),
    ("美元", "USD"),
    ("欧元", "EUR"),
    ("英镑", "GBP"),
    ("元", "CNY"),
    ("块钱", "CNY"),
    ("块", "CNY"),
];

/// Whether a (lower-cased) word names a currency.
pub fn is_currency_word(word: &str) -> bool {
    CURRENCY_AFTER
        .iter()
        .chain(CURRENCY_BEFORE)
        .any(|(name, _)| *name == word)
}

const CURRENCY_BEFORE: &[(&str, &str)] = &[
    ("us$", "USD"),
    ("$", "USD"),
    ("€", "EUR"),
    ("£", "GBP"),
    ("¥", "CNY"),
    ("￥", "CNY"),
    ("usd", "USD"),
    ("eur", "EUR"),
    ("gbp", "GBP"),
    ("rmb", "CNY"),
    ("cny", "CNY"),
    ("人民币", "CNY"),
];

/// A currency written before a number ("$50", "USD 50", "人民币50"), and its length in bytes with the space.
fn currency_before(text: &str) -> Option<(&'static str, usize)> {
    let trimmed = text.trim_end();
    let space = text.len() - trimmed.len();
    let lower =
        trimmed[trimmed.ceil_char_boundary(trimmed.len().saturating_sub(12))..].to_lowercase();
    CURRENCY_BEFORE.iter().find_map(|(name, code)| {
        if !lower.ends_with(name) {
            return None;
        }
        let start = trimmed.len() - name.len();
        let joined = trimmed[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric());
        (!joined && (space == 0 || name.chars().count() > 1)).then_some((*code, name.len() + space))
    })
}

/// A scale word after a number ("5 million", "3万", "2.5bn") as its factor, and its length in bytes.
fn scale_at(text: &str) -> (f64, usize) {
    let trimmed = text.trim_start_matches(' ');
    let space = text.len() - trimmed.len();
    let lower = trimmed[..trimmed.floor_char_boundary(12)].to_lowercase();
    for (name, factor) in [
        ("thousand", 1e3),
        ("million", 1e6),
        ("billion", 1e9),
        ("bn", 1e9),
        ("万", 1e4),
        ("亿", 1e8),
    ] {
        if lower.starts_with(name) && word_ends(trimmed, name.len()) {
            return (factor, space + name.len());
        }
    }
    (1.0, 0)
}

/// A number as written: thousands separators dropped, a decimal comma read as a point ("4,5").
pub fn parse_number(s: &str) -> Option<f64> {
    let decimal_comma = s.matches(',').count() == 1
        && !s.contains('.')
        && s.rsplit(',').next().is_some_and(|tail| tail.len() != 3);
    let cleaned = if decimal_comma {
        s.replace(',', ".")
    } else {
        s.replace(',', "")
    };
    cleaned.parse().ok()
}

fn num(c: &Captures, i: usize) -> Option<f64> {
    parse_number(c.get(i)?.as_str())
}

fn month(c: &Captures, i: usize) -> Option<f64> {
    let name = c.get(i)?.as_str().to_lowercase();
    let at = MONTHS.split('|').position(|m| m == name)?;
    // The list names the twelve months, then their short forms (sept beside sep).
    Some(match at {
        0..=11 => at + 1,
        12..=15 => at - 11,
        16..=18 => at - 10,
        19 | 20 => 9,
        _ => at - 11,
    } as f64)
}

/// "may" is a month only as "May": "it may 5 times" is a verb.
fn may_is_a_verb(c: &Captures, whole: &str) -> bool {
    (1..c.len()).any(|i| c.get(i).is_some_and(|m| m.as_str() == "may")) && !whole.contains("May")
}

fn valid(year: Option<f64>, month: f64, day: Option<f64>) -> bool {
    let year = year.map_or(2000, |y| y as i32);
    let day = day.unwrap_or(1.0);
    chrono::NaiveDate::from_ymd_opt(year, month as u32, day as u32).is_some()
}

fn date(year: f64, month: f64, day: Option<f64>) -> Option<Quantity> {
    valid(Some(year), month, day).then(|| {
        let parts = DateParts {
            year: Some(year as i32),
            month: Some(month as u32),
            day: day.map(|d| d as u32),
        };
        let mut numbers = vec![year, month];
        numbers.extend(day);
        Quantity::date(vec![parts], numbers)
    })
}

fn month_day(month: f64, day: f64, year: Option<f64>) -> Option<Quantity> {
    let year = year.map(|y| if y < 100.0 { 2000.0 + y } else { y });
    valid(year, month, Some(day)).then(|| {
        let parts = DateParts {
            year: year.map(|y| y as i32),
            month: Some(month as u32),
            day: Some(day as u32),
        };
        let mut numbers = vec![day];
        numbers.extend(year);
        Quantity::date(vec![parts], numbers)
    })
}

/// 03/04/2024: the 3rd of April where days come first, March the 4th where months do; both readings kept
/// where both are dates, so either agrees.
fn numeric_date(c: &Captures) -> Option<Quantity> {
    let (a, b, y) = (num(c, 1)?, num(c, 2)?, num(c, 3)?);
    let year = if y < 100.0 { 2000.0 + y } else { y };
    let mut readings = Vec::new();
    for (day, month) in [(a, b), (b, a)] {
        if valid(Some(year), month, Some(day)) {
            readings.push(DateParts {
                year: Some(year as i32),
                month: Some(month as u32),
                day: Some(day as u32),
            });
        }
    }
    (!readings.is_empty()).then(|| Quantity::date(readings, vec![a, b, y]))
}

/// A time of day as minutes after midnight; without a.m. or p.m. an hour up to 12 may be either.
fn time(hour: f64, minute: f64, pm: Option<bool>) -> Option<Quantity> {
    if hour > 24.0 || minute >= 60.0 {
        return None;
    }
    // 晚上18点: an hour past 12 is already the afternoon's.
    let pm = pm.filter(|_| hour <= 12.0);
    let base = (hour % 12.0) * 60.0 + minute;
    let readings = match pm {
        Some(true) => vec![base + 720.0],
        Some(false) => vec![base],
        None if hour < 12.0 && hour > 0.0 => {
            vec![hour * 60.0 + minute, hour * 60.0 + minute + 720.0]
        }
        None => vec![(hour % 24.0) * 60.0 + minute],
    };
    let mut q = Quantity::plain(Dimension::TimeOfDay, readings[0], vec![hour, minute]);
    q.values = readings;
    Some(q)
}

/// 下午3点, 10点半, 9点15分: a time where a period of the day or minutes say so; "3点建议" is a count.
fn chinese_time(c: &Captures) -> Option<Quantity> {
    let period = c.get(1).map(|m| m.as_str());
    let minutes = if c.get(4).is_some() {
        Some(30.0)
    } else {
        c.get(3).and_then(|_| num(c, 3))
    };
    let hour = num(c, 2)?;
    if period.is_none() && minutes.is_none() {
        // 6点 alone may be a time or a count ("3点建议"): both readings, and its number for a count.
        let mut q = time(hour, 0.0, None)?;
        q.numbers = vec![hour];
        return Some(q);
    }
    let pm = period.map(|p| matches!(p, "下午" | "傍晚" | "晚上") || (p == "中午" && hour < 3.0));
    time(hour, minutes.unwrap_or(0.0), pm)
}
